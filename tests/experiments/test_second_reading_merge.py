"""A second reading of the sweep's and the merge's handling of scratch folders.

A folder ``--keep-work`` kept under a maxminq from before the registry logged 'work kept'
(a deep run's ``model.pt``, for ``maxminq evaluate``) has no such mark: the start-of-sweep
removal of scratch a kill left (``runner._drop_finished_scratch``) took it for a leftover
and deleted it, and ``maxminq merge`` left it out of the merged folder.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sweep_kinds

from maxminq.experiments.merge import merge_folders
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import WORK_KEPT, ResultsStore


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "theory_mc_logs.yaml"
    path.write_text(sweep_kinds.THEORY_CONFIG.format(kind="theory_mc_logs", samples=20_000))
    return path


def _as_an_older_maxminq_left_it(out: Path) -> None:
    """The database a 'sweep --keep-work' of a maxminq before 'work kept' wrote: the
    same rows and events, but neither the 'work kept' events nor anything saying since
    when they are logged (a meta entry of this maxminq's)."""
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("DELETE FROM events WHERE event=?", (WORK_KEPT,))
        db.execute("DELETE FROM meta WHERE key NOT LIKE 'plan:%' AND key NOT LIKE "
                   "'software:%' AND key <> 'schema_version'")  # fmt: skip
    db.close()


def _kept(out: Path) -> dict[str, str]:
    """Run id -> the TensorBoard log its scratch folder holds (OUT/work/<run_id>)."""
    if not (out / "work").is_dir():
        return {}
    return {
        p.name: (p / "tensorboard" / "events.out").read_text()
        for p in sorted((out / "work").iterdir())
    }


def test_a_folder_an_older_maxminq_kept_stays_through_a_sweep_without_keep_work(
    tmp_path, theory_kinds
):
    path = _config(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False, keep_work=True).done == 8
    kept = _kept(out)
    assert len(kept) == 8
    _as_an_older_maxminq_left_it(out)

    again = run_sweep(path, out, workers=2, progress=False)
    assert (again.skipped, again.done) == (8, 0)
    assert _kept(out) == kept
    # and the next one too: the first sweep of this maxminq did not make them leftovers
    assert run_sweep(path, out, workers=2, progress=False).skipped == 8
    assert _kept(out) == kept


def test_a_merge_keeps_a_folder_an_older_maxminq_kept(tmp_path, theory_kinds):
    path = _config(tmp_path)
    out, merged = tmp_path / "out", tmp_path / "merged"
    assert run_sweep(path, out, workers=2, progress=False, keep_work=True).done == 8
    kept = _kept(out)
    _as_an_older_maxminq_left_it(out)

    summary = merge_folders([out], merged)
    assert summary.finished == 8
    assert _kept(merged) == kept
    with ResultsStore(merged, create=False) as store:
        assert all(store.work_kept(run_id) for run_id in kept)
    assert run_sweep(path, merged, workers=2, progress=False).skipped == 8
    assert _kept(merged) == kept
