"""``maxminq status --verify`` on a folder whose config was edited after one of its runs
finished: that run is of an earlier version of the config, and a sweep of the config as
it is never settles it again, so bad files of it are not "re-run by the next sweep" (a
real sweep of the edited config is run here to show it). Such a run is listed as of an
earlier version and does not set exit 1, as e500c23 has it for such a failed run (a script
checking ``status --verify`` then never passed after an edit); bad files of a run of the
config as it is still do, and are still said re-run. Before: 'verified: 1 finished run(s)
with bad files (re-run by the next sweep)' and exit 1, also after the sweep.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from maxminq.cli import main
from maxminq.experiments.config import config_from_document
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.shard import record_sweep
from maxminq.experiments.store import ResultsStore

FIXED = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}


def _config(tmp_path: Path, mus: list[float]):
    doc = {"name": "a", "kind": "toy_mdp", "fixed": FIXED, "grid": {"mu": mus}}
    return config_from_document({**doc, "scales": {"quick": {}}}, tmp_path / "a.yaml")


def _damage(store: ResultsStore, run_id: str) -> None:
    (table,) = store.run_tables_dir(run_id).glob("*.csv")
    table.write_text("episode,x\n1,0.75\n")  # not what the manifest records


def test_bad_files_of_an_earlier_version_are_listed_without_exit_1(tmp_path: Path, capsys):
    before, after = _config(tmp_path, [0.1]), _config(tmp_path, [0.2])  # edited: 0.1 -> 0.2
    (old,), (new,) = before.runs, after.runs
    out = tmp_path / "out"
    with ResultsStore(out, lock=True) as store:
        for config, run in ((before, old), (after, new)):  # a sweep of each version
            store.register(config.runs)
            record_sweep(store, "a", "quick", config.runs, None)
            store.mark_running(run.run_id)
            store.save_tables(run, {"toy_mdp": pd.DataFrame({"episode": [1], "x": [0.5]})})
            store.mark_finished(run.run_id)
        _damage(store, old.run_id)

    summary = run_sweep(after, out, progress=False)  # settles nothing of the earlier version
    assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0)
    capsys.readouterr()
    assert main(["status", str(out), "--verify"]) == 0  # was 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines if line.startswith("corrupt")] == [
        f"corrupt  {old.run_id} (not in the configs as last swept here)"
    ]
    assert lines[-1] == (
        "verified: 1 finished run(s) with bad files (1 of an earlier version of their "
        "config, which no sweep runs again: left out of the report)"
    )

    with ResultsStore(out, create=False) as store:  # bad files of the config as it is
        _damage(store, new.run_id)
    assert main(["status", str(out), "--verify"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"corrupt  {new.run_id}: " in "\n".join(lines)
    assert lines[-1] == (
        "verified: 2 finished run(s) with bad files (1 re-run by the next sweep; 1 of an "
        "earlier version of their config, which no sweep runs again: left out of the report)"
    )
