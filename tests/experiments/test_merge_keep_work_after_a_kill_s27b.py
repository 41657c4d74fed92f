"""``maxminq merge`` of a folder whose sweep, run with ``--keep-work``, was killed after it
stored a run's tables and before it marked the run finished: the run is taken finished
(its tables verify), and the scratch folder that sweep kept (a deep run's model.pt, for
maxminq evaluate) comes with it and stays kept, as the next sweep in that folder keeps it
(c48b006: the 'started' event records --keep-work). Before, merge asked only whether the
run's last event was 'work kept', which a killed sweep never logged: the folder was left
behind and the merged run marked not kept.

The killed sweep's writes are the store's own calls in the runner's order (register, mark
running with keep_work, scratch written, tables saved), cut where the kill cuts them, as
tests/experiments/test_keep_work_after_a_kill_s27.py builds them; a second folder whose
killed sweep had no --keep-work checks that only that attempt's choice is followed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from maxminq.cli import main
from maxminq.experiments.config import config_from_document
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

FIXED = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}


def test_merge_keeps_the_folder_a_killed_keep_work_sweep_kept(tmp_path: Path) -> None:
    doc = {"name": "a", "kind": "toy_mdp", "fixed": FIXED, "grid": {"mu": [0.1, 0.2]}}
    config = config_from_document({**doc, "scales": {"quick": {}}}, tmp_path / "a.yaml")
    kept_run, other_run = config.runs
    folder = tmp_path / "killed"
    with ResultsStore(folder, lock=True) as store:  # a sweep killed twice, once with it
        store.register(config.runs)
        for run, keep in ((kept_run, True), (other_run, False)):
            store.mark_running(run.run_id, keep_work=keep)
            work = store.work_dir(run.run_id)
            work.mkdir(parents=True)
            (work / "model.pt").write_bytes(b"weights " + run.run_id.encode())
            table = pd.DataFrame({"episode": [1, 2], "distance": [0.5, 0.25]})
            store.save_tables(run, {"toy_mdp": table})
        # killed here: neither marked finished

    out = tmp_path / "merged"
    assert main(["merge", str(folder), "--out", str(out)]) == 0
    kept = out / "work" / kept_run.run_id / "model.pt"
    assert kept.read_bytes() == b"weights " + kept_run.run_id.encode()  # was not copied
    assert not (out / "work" / other_run.run_id).exists()  # that sweep did not keep it
    with ResultsStore(out, create=False) as store:
        assert [store.get(r.run_id).status for r in config.runs] == ["done", "done"]
        assert store.work_kept(kept_run.run_id)
        assert not store.work_kept(other_run.run_id)

    summary = run_sweep(config, out, progress=False)  # no --keep-work: leaves it
    assert (summary.skipped, summary.done, summary.failed) == (2, 0, 0)
    assert kept.read_bytes() == b"weights " + kept_run.run_id.encode()
