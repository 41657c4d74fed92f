"""Two configs share one results folder and a run; a sweep of the first with
``--keep-work`` is killed (kill -9) after it stored the shared run's tables and before it
marked the run finished. The next sweep into the folder, of the second config and without
``--keep-work``, settles the run (its tables verify: done) and must keep the mark the killed
sweep would have given it: its scratch folder (a deep run's model.pt for maxminq evaluate)
stays. Before, the settling sweep used its own choice: the run was marked not kept and its
folder removed at once.

The killed sweep's writes are the store's own calls in the runner's order (register, mark
running, scratch written, tables saved), cut where the kill cuts them; the second sweep is
a real ``run_sweep`` (it executes nothing: its one run is stored).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from maxminq.experiments.config import config_from_document
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

FIXED = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}


def _config(tmp_path: Path, name: str, mus: list[float]):
    doc = {"name": name, "kind": "toy_mdp", "fixed": FIXED, "grid": {"mu": mus}}
    return config_from_document({**doc, "scales": {"quick": {}}}, tmp_path / f"{name}.yaml")


def test_a_run_a_killed_keep_work_sweep_stored_keeps_its_folder_when_another_settles_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    a, b = _config(tmp_path, "a", [0.1, 0.2]), _config(tmp_path, "b", [0.1])
    (shared,) = b.runs
    assert shared.run_id in {r.run_id for r in a.runs}
    with ResultsStore(out, lock=True) as store:  # sweep a --keep-work, killed
        store.register(a.runs)
        store.mark_running(shared.run_id, keep_work=True)
        work = store.work_dir(shared.run_id)
        work.mkdir(parents=True)
        (work / "model.pt").write_bytes(b"weights")
        table = pd.DataFrame({"episode": [1, 2], "distance": [0.5, 0.25]})
        store.save_tables(shared, {"toy_mdp": table})
        # killed here: no mark_finished

    summary = run_sweep(b, out, progress=False)  # no --keep-work
    assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0)
    assert (work / "model.pt").read_bytes() == b"weights"  # was removed
    with ResultsStore(out, create=False) as store:
        assert store.get(shared.run_id).status == "done"
        assert store.work_kept(shared.run_id)  # a later sweep without it leaves it too
