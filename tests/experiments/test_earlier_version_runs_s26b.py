"""The runs a status or report counts as "of an earlier version of their config" are only
those of a config that a recorded plan covers.

A folder swept with an older maxminq (which recorded no plans) and then, after an upgrade,
used for another config has plans of that other config only: the runs of the first config
were in no plan, so a sweep stopped early left its pending runs counted as of an earlier
version ("a sweep of it as last swept here does not run them"), though rerunning that very
sweep runs them. Built by hand: the runs' ids and which are pending are set here.
"""

from __future__ import annotations

from pathlib import Path

from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.shard import planned_runs, record_sweep
from maxminq.experiments.store import ResultsStore


def _spec(i: int, episodes: int, config: str) -> RunSpec:
    return RunSpec(f"toy_mdp-00000000000{i}", "toy_mdp", {"mu": 0.1, "episodes": episodes}, config)


def _folder(out: Path) -> None:
    """Config ``old`` (2 runs, no plan: an older maxminq's sweep, stopped early: pending);
    config ``c`` swept since (plan of runs 4, 5) with one run of its earlier version (3,
    failed) that the plan no longer has."""
    older = [_spec(1, 300, "old"), _spec(2, 300, "old")]
    earlier = [_spec(3, 40, "c")]
    now = [_spec(4, 50, "c"), _spec(5, 50, "c")]
    with ResultsStore(out) as store:
        store.register([*older, *earlier, *now])
        record_sweep(store, "c", "quick", earlier, None)
        store.mark_running(earlier[0].run_id)
        store.mark_finished(earlier[0].run_id, "failed", error="boom")
        record_sweep(store, "c", "quick", now, None)  # the edited config's sweep


def test_runs_of_a_config_no_plan_covers_are_not_of_an_earlier_version(tmp_path: Path) -> None:
    _folder(tmp_path)
    with ResultsStore(tmp_path, create=False) as store:
        current = planned_runs(store)
    assert current is not None
    every = {f"toy_mdp-00000000000{i}" for i in range(1, 6)}
    assert every - current == {"toy_mdp-000000000003"}  # c's earlier run only


def test_status_says_so_of_the_planned_config_only(tmp_path: Path, capsys) -> None:
    _folder(tmp_path)
    main(["status", str(tmp_path)])
    said = [line for line in capsys.readouterr().out.splitlines() if "earlier version" in line]
    assert len(said) == 1, said
    assert said[0].startswith("c: 1 of its pending or failed run(s) are of an earlier version")
    main(["status", str(tmp_path), "--config", "old"])
    assert "earlier version" not in capsys.readouterr().out
