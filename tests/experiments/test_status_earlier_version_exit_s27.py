"""``maxminq status`` on a folder whose config was edited after some of its runs failed or
were interrupted: those runs are of an earlier version of the config, and no sweep of the
config as it is runs them again.

Before, status exited 1 for such a failed run forever (a sweep of the edited config, all
its runs done, exits 0; a script checking ``status`` then never passed), and said of an
interrupted one that its scratch folder "is kept for its next attempt", an attempt no
sweep of the configs as last swept here makes. Now such a failed run is listed as of an
earlier version and does not set exit 1 (a failed run of the config as it is still does),
and the folder is said kept "should a config make this run again". Built by hand as
test_earlier_version_runs_s26b.py does: the runs' ids and statuses are set here.
"""

from __future__ import annotations

from pathlib import Path

from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.shard import record_sweep
from maxminq.experiments.store import ResultsStore

EARLIER_FAILED = "toy_mdp-000000000001"
EARLIER_PENDING = "toy_mdp-000000000002"
NOW = "toy_mdp-000000000003"
STILL = "toy_mdp-000000000004"


def _spec(run_id: str, episodes: int) -> RunSpec:
    return RunSpec(run_id, "toy_mdp", {"mu": 0.1, "episodes": episodes}, "c")


def test_earlier_versions_failures_are_listed_without_exit_1_and_no_next_attempt(
    tmp_path: Path, capsys
) -> None:
    earlier = [_spec(EARLIER_FAILED, 40), _spec(EARLIER_PENDING, 40)]
    now = [_spec(NOW, 50), _spec(STILL, 50)]
    with ResultsStore(tmp_path) as store:
        store.register([*earlier, *now])
        record_sweep(store, "c", "quick", earlier, None)  # the config before its edit
        store.mark_running(EARLIER_FAILED)
        store.mark_finished(EARLIER_FAILED, "failed", error="Traceback\nValueError: boom")
        store.mark_running(EARLIER_PENDING)
        store.mark_pending(EARLIER_PENDING, "interrupted (the sweep stopped during this run)")
        work = store.work_dir(EARLIER_PENDING)
        work.mkdir(parents=True)
        (work / "checkpoint.pt").write_bytes(b"step 100")  # progress of that attempt
        record_sweep(store, "c", "quick", now, None)  # the edited config's sweep
        store.mark_running(STILL)
        store.mark_pending(STILL, "interrupted (the sweep stopped during this run)")
        (store.work_dir(STILL)).mkdir(parents=True)
        (store.work_dir(STILL) / "checkpoint.pt").write_bytes(b"step 7")

    assert main(["status", str(tmp_path)]) == 0  # was 1: nothing a sweep runs failed
    out = capsys.readouterr().out
    assert (
        f"failed   {EARLIER_FAILED} (attempts 1; not in the configs as last swept here): "
        "ValueError: boom"
    ) in out
    assert (
        f"pending  {EARLIER_PENDING} (attempts 1; not in the configs as last swept here): "
        f"interrupted (the sweep stopped during this run); {work} is kept, should a config "
        "make this run again"
    ) in out
    assert "kept for its next attempt" in out  # the run of the config as it is: STILL
    assert out.count("kept for its next attempt") == 1
    assert "c: 2 of its pending or failed run(s) are of an earlier version" in out

    with ResultsStore(tmp_path, create=False) as store:  # a run of the config as it is fails
        store.mark_running(NOW)
        store.mark_finished(NOW, "failed", error="ValueError: bad")
    assert main(["status", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"failed   {NOW} (attempts 1): ValueError: bad" in out
