"""A second reading of the sweep's and the merge's handling of scratch folders.

A folder ``--keep-work`` kept under a maxminq from before the registry logged 'work kept'
(a deep run's ``model.pt``, for ``maxminq evaluate``) has no such mark: the start-of-sweep
removal of scratch a kill left (``runner._drop_finished_scratch``) took it for a leftover
and deleted it, and ``maxminq merge`` left it out of the merged folder.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import sweep_kinds
from sweep_configs import CKPT_FOUR_RUNS

from maxminq.cli import main
from maxminq.experiments import merge as merge_module
from maxminq.experiments.merge import merge_folders
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import WORK_KEPT, ResultsStore


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "theory_mc_logs.yaml"
    path.write_text(sweep_kinds.THEORY_CONFIG.format(kind="theory_mc_logs", samples=2_000))
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
    assert run_sweep(path, out, workers=1, progress=False, keep_work=True).done == 8
    kept = _kept(out)
    assert len(kept) == 8
    _as_an_older_maxminq_left_it(out)

    again = run_sweep(path, out, workers=1, progress=False)
    assert (again.skipped, again.done) == (8, 0)
    assert _kept(out) == kept
    # and the next one too: the first sweep of this maxminq did not make them leftovers
    assert run_sweep(path, out, workers=1, progress=False).skipped == 8
    assert _kept(out) == kept


def test_a_merge_keeps_a_folder_an_older_maxminq_kept(tmp_path, theory_kinds):
    path = _config(tmp_path)
    out, merged = tmp_path / "out", tmp_path / "merged"
    assert run_sweep(path, out, workers=1, progress=False, keep_work=True).done == 8
    kept = _kept(out)
    _as_an_older_maxminq_left_it(out)

    summary = merge_folders([out], merged)
    assert summary.finished == 8
    assert _kept(merged) == kept
    with ResultsStore(merged, create=False) as store:
        assert all(store.work_kept(run_id) for run_id in kept)
    assert run_sweep(path, merged, workers=1, progress=False).skipped == 8
    assert _kept(merged) == kept


def test_a_scratch_folder_gone_before_it_is_copied_is_one_line_and_nothing_is_written(
    tmp_path, theory_kinds, monkeypatch, capsys
):
    """A DIR whose sweep started again during the merge finished the run and removed its
    whole scratch folder (shutil.rmtree) before the merge copied it. Before, the walk of
    a folder that is not there found nothing: the merge went on, saying the run would
    continue from a checkpoint in OUT/work that was not there. Now it is the same one
    line as for a file gone while copied (exit 2, no OUT, no hidden folder)."""
    config = tmp_path / "config.yaml"
    config.write_text(CKPT_FOUR_RUNS)
    b, out = tmp_path / "b", tmp_path / "merged"
    assert run_sweep(config, b, workers=1, progress=False, shard="9/9").total == 0
    with ResultsStore(b, create=False) as store:
        run_id = sorted(r.run_id for r in store.records())[0]
    work = b / "work" / run_id
    work.mkdir(parents=True)
    (work / "checkpoint.json").write_text("B's")
    decide = merge_module._decide

    def then_gone(*args, **kwargs):
        decided = decide(*args, **kwargs)
        shutil.rmtree(work)  # the sweep there finished the run meanwhile
        return decided

    monkeypatch.setattr(merge_module, "_decide", then_gone)
    capsys.readouterr()
    assert main(["merge", str(b), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"maxminq merge: error: DIR: {b}: the scratch folder of run {run_id} changed while it "
        "was copied (a sweep started there meanwhile?); run the merge again"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "config.yaml"]
