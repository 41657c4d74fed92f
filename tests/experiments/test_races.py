"""The states a kill or a signal leaves when it lands between two steps that the sweep
runner takes one after the other, made deterministically (the registry edited as the kill
left it, or the step replaced by one that stops there), and what the next sweep makes of
them. The random-moment SIGKILL test (test_sweep.py) meets these states only by luck.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sweep_kinds

from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore


def _config(tmp_path: Path, kind: str = "theory_mc_logs") -> Path:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(sweep_kinds.THEORY_CONFIG.format(kind=kind, samples=2_000))
    return path


def _killed_before_its_status(out: Path, run_id: str) -> None:
    """The registry as a sweep SIGKILLed after it stored ``run_id``'s tables (manifest
    written) and before it wrote the run's final status leaves it: the row 'running', the
    attempt's last event 'started'."""
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("UPDATE runs SET status='running', finished=NULL WHERE run_id=?", (run_id,))
        last = db.execute(
            "SELECT MAX(id) FROM events WHERE run_id=? AND event='started'", (run_id,)
        ).fetchone()[0]
        db.execute("DELETE FROM events WHERE run_id=? AND id>?", (run_id, last))
    db.close()


def test_a_kept_folder_of_a_run_a_keep_work_sweep_settled_stays_through_a_later_sweep(
    tmp_path, theory_kinds
):
    """A --keep-work sweep killed between storing a run and its status; the next sweep,
    with --keep-work too, takes the run as done from its tables. The run was finished by
    --keep-work sweeps only, so its folder is a kept one, as it is without the kill: a
    later sweep without --keep-work must leave it. Before, the settled run carried no
    'work kept' mark and that sweep removed its folder (checkpoint, logs) as one a kill
    had left behind."""
    path = _config(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=1, progress=False, keep_work=True).done == 8
    with ResultsStore(out) as store:
        victim = store.records()[0].run_id
    _killed_before_its_status(out, victim)
    again = run_sweep(path, out, workers=1, progress=False, keep_work=True)
    assert (again.skipped, again.done) == (8, 0)
    with ResultsStore(out) as store:
        assert store.get(victim).status == "done"
    assert run_sweep(path, out, workers=1, progress=False).skipped == 8
    kept = out / "work" / victim / "tensorboard" / "events.out"
    assert kept.is_file(), sorted(p.name for p in (out / "work").iterdir())
    assert len(list((out / "work").iterdir())) == 8
