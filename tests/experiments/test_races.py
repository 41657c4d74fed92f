"""The states a kill or a signal leaves when it lands between two steps that the sweep
runner takes one after the other, made deterministically (the registry edited as the kill
left it, or the step replaced by one that stops there), and what the next sweep makes of
them. The random-moment SIGKILL test (test_sweep.py) meets these states only by luck.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sweep_kinds

from maxminq.experiments import runner
from maxminq.experiments.config import RunSpec
from maxminq.experiments.runner import _Result, run_sweep
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


class _BrokenBesideAFinishedRun:
    """A stand-in local backend: in its first answer the pool broke (a worker died) while
    one of the two runs in flight had just sent its tables, which come first in the same
    answer; every later run ends normally."""

    workers = 2

    def __init__(self) -> None:
        self.runs: dict[int, RunSpec] = {}
        self.answered = False

    def submit(self, run: RunSpec, work_dir: Path) -> int:
        self.runs[len(self.runs)] = run
        return len(self.runs) - 1

    def _done(self, handle: int) -> _Result:
        settings = self.runs[handle].settings
        return _Result(sweep_kinds.execute_theory_mc(settings, Path("."), False), None, "h", 1, 0.1)

    def wait(self, handles: list[int], timeout: float) -> list[tuple[int, _Result]]:
        if not self.answered:
            self.answered = True
            finished, broken = handles
            died = _Result(None, "worker process died: BrokenProcessPool", "h", 0, 0.0, True)
            return [(finished, self._done(finished)), (broken, died)]
        return [(handle, self._done(handle)) for handle in handles]

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


def test_a_run_broken_beside_another_is_run_again_alone_whichever_answer_comes_first(
    tmp_path, theory_kinds, monkeypatch
):
    """A worker died while two runs were in flight, and the other run's tables arrived in
    the same answer of the pool, listed first (the order of a set of futures). Which run
    killed the worker is not known, so the broken run must run again alone, as when its
    answer comes first. Before, the finished run was stored first, the broken one was
    then the only run in flight and was recorded failed ('worker process died')."""
    backend = _BrokenBesideAFinishedRun()
    monkeypatch.setattr(runner, "_make_backend", lambda *args: backend)
    out = tmp_path / "out"
    summary = runner.run_sweep(_config(tmp_path, "theory_mc"), out, workers=2, progress=False)
    assert (summary.done, summary.failed) == (8, 0), summary.failures
    broken = backend.runs[1].run_id
    with ResultsStore(out) as store:
        events = [(e["event"], e["detail"]) for e in store.events() if e["run_id"] == broken]
    assert [e for e, _ in events] == ["registered", "started", "requeued", "started", "done"]
    assert "run again alone" in events[2][1]


class _SignalledAfterBegin:
    """A stand-in for the store's connection whose ``BEGIN IMMEDIATE`` is followed at once
    by a Ctrl-C: Python runs a signal's handler right after the C call during which the
    signal arrived, so a Ctrl-C (or the command's SIGTERM) that lands while SQLite begins
    the transaction is raised there, after the transaction began."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def cursor(self) -> _SignalledAfterBegin:
        self.cur = self.conn.cursor()
        return self

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        done = self.cur.execute(sql, *args)
        if sql == "BEGIN IMMEDIATE":
            raise KeyboardInterrupt
        return done


def test_an_interrupt_as_a_transaction_begins_leaves_none_open(tmp_path):
    """A Ctrl-C or SIGTERM that arrives while the store begins a transaction (marking a
    run running or finished, as a sweep does twice per run) was raised before the
    transaction's rollback was set up: it stayed open, and the sweep's clean-up, which
    puts the runs in flight back in the queue, failed with 'cannot write the results
    database: cannot start a transaction within a transaction' instead of ending as
    interrupted, the runs left 'running'."""
    out = tmp_path / "out"
    runs = [RunSpec(f"r-{k}", "theory_mc", {"k": k}, "c") for k in (1, 2)]
    with ResultsStore(out, lock=True) as store:
        store.register(runs)
        store.mark_running("r-1")
        real = store._conn
        store._conn = _SignalledAfterBegin(real)  # type: ignore[assignment]
        try:
            with pytest.raises(KeyboardInterrupt):
                store.mark_running("r-2")
        finally:
            store._conn = real
        assert not real.in_transaction
        store.mark_pending("r-1", "interrupted")  # what the sweep's clean-up writes
        assert {r.run_id: r.status for r in store.records()} == {"r-1": "pending", "r-2": "pending"}
