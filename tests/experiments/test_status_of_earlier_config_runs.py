"""``maxminq status`` says which pending or failed runs belong to an earlier version of their
config (edited between two sweeps, or swept at another scale): its counts show them as
still to run, though no sweep of the config as last swept runs them. Each sweep records
the runs its config makes (its plan); the runs of the config in no plan are these."""

from __future__ import annotations

from pathlib import Path

from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.shard import record_sweep
from maxminq.experiments.store import ResultsStore


def _spec(i: int, episodes: int, config: str = "c") -> RunSpec:
    return RunSpec(f"toy_mdp-00000000000{i}", "toy_mdp", {"mu": 0.1, "episodes": episodes}, config)


def test_status_names_the_runs_of_an_earlier_version(tmp_path: Path, capsys) -> None:
    earlier = [_spec(1, 300), _spec(2, 300), _spec(3, 300)]
    now = [_spec(4, 50), _spec(5, 50)]
    other = [_spec(6, 20, "d")]  # another config, as last swept: none of its runs is old
    with ResultsStore(tmp_path) as store:
        store.register([*earlier, *now, *other])
        record_sweep(store, "c", "quick", earlier, None)  # the first version's sweep
        store.mark_running(earlier[2].run_id)
        store.mark_finished(earlier[2].run_id, "failed", error="boom")
        record_sweep(store, "c", "quick", now, None)  # the edited config's
        record_sweep(store, "d", "quick", other, None)
        store.mark_pending(now[0].run_id, "interrupted")  # still to run: not said
    main(["status", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    said = [line for line in lines if "earlier version" in line]
    assert said == [
        "c: 3 of its pending or failed run(s) are of an earlier version of the config "
        "(edited, at another scale, or resolved otherwise by an older maxminq): a sweep of "
        "it as last swept here does not run them"
    ]
    main(["status", str(tmp_path), "--config", "d"])
    assert "earlier version" not in capsys.readouterr().out


def test_a_folder_without_plans_says_nothing_of_versions(tmp_path: Path, capsys) -> None:
    """An older maxminq's folder records no plans: every run is taken as the config's."""
    with ResultsStore(tmp_path) as store:
        store.register([_spec(1, 300), _spec(2, 50)])
    main(["status", str(tmp_path)])
    assert "earlier version" not in capsys.readouterr().out
