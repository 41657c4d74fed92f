"""Session 19, a second reading of the day's sweep/CLI and clean-up commits (h7).

1. The signal blocks while workers are spawned (``workers.workers_ignore_sigint``) are
   undone also when a signal handler raises at the block itself: ``pthread_sigmask`` runs
   the Python handlers of signals that arrived just before once it has changed the mask
   (CPython's ``PyErr_CheckSignals`` in it), and ``signal.signal`` runs them before it
   changes a handler. Before, a Ctrl-C or SIGTERM at that moment left SIGHUP blocked in the
   driver's main thread for good, or SIGINT ignored (so a Ctrl-C no longer cut the wait
   for the workers short). The tests stand in for the arriving signal by a wrapper that
   does what CPython does then: the mask change, then the handler's exception; or the
   handler's exception before the handler is set.
2. ``maxminq status`` on a folder a sweep holds: a queued-again run whose scratch folder
   the sweep removes while status lists it (the run ended meanwhile) is shown without
   'kept'; before, status ended with 'error: ...: No such file or directory' (exit 1).
3. ``maxminq status`` with a worker file whose pid is beyond any (a damaged or edited
   file) names the sweep; before, a traceback (OverflowError from ``os.kill``): tested in
   test_leftovers19_sweeps (``test_status_does_not_name_a_worker_whose_process_is_gone``).
4. The exit status of a command that two stop signals reach (pinned, unchanged): Ctrl-C,
   then SIGHUP during its clean-up (the terminal closed while the workers stop) ends as
   SIGHUP, 129; SIGHUP, then SIGTERM keeps the first, 129.
5. The failed-sweep hint quotes a folder that the shell would split ('results/my runs').
"""

from __future__ import annotations

import pathlib
import shutil
import signal
import sys
import types

import pytest

from maxminq import cli
from maxminq.cli import main
from maxminq.experiments import workers
from maxminq.experiments.config import RunSpec
from maxminq.experiments.store import ResultsStore


def _blocked_now() -> set[int]:
    """The signals blocked in this thread now."""
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, ()))


# ------------------------------------------------------ 1. the blocks of workers_ignore_sigint
def test_a_handler_raising_at_the_hangup_block_leaves_sighup_unblocked(monkeypatch) -> None:
    """Before: KeyboardInterrupt came out of the block with SIGHUP blocked in this thread
    and nothing left to lift it."""
    assert signal.SIGHUP not in _blocked_now()
    real = signal.pthread_sigmask
    raised: list[bool] = []

    def sigmask(how: int, mask: object) -> set[int]:
        old = real(how, mask)  # type: ignore[arg-type]
        if how == signal.SIG_BLOCK and signal.SIGHUP in set(mask) and not raised:  # type: ignore[call-overload]
            raised.append(True)
            raise KeyboardInterrupt  # a Ctrl-C that arrived just before: its handler's
        return old

    monkeypatch.setattr(signal, "pthread_sigmask", sigmask)
    try:
        with pytest.raises(KeyboardInterrupt), workers.workers_ignore_sigint():
            pytest.fail("the block raised: not reached")
        assert raised
        assert signal.SIGHUP not in _blocked_now()
        assert signal.SIGINT not in _blocked_now()
    finally:
        real(signal.SIG_UNBLOCK, {signal.SIGHUP, signal.SIGINT})


def test_a_handler_raising_as_sigint_is_put_back_leaves_it_not_ignored(monkeypatch) -> None:
    """Before: the SIGTERM (or SIGHUP) handler's exception came out of ``signal.signal``
    before it put Ctrl-C's handler back: SIGINT stayed ignored in the driver."""
    previous = signal.getsignal(signal.SIGINT)
    assert callable(previous)  # Python's (pytest's) Ctrl-C handler, which the block swaps
    real = signal.signal
    raised: list[bool] = []

    def set_handler(signum: int, handler: object) -> object:
        if signum == signal.SIGINT and handler is previous and not raised:
            raised.append(True)
            raise cli.Terminated()  # the pending handlers run before the change
        return real(signum, handler)  # type: ignore[arg-type]

    monkeypatch.setattr(signal, "signal", set_handler)
    try:
        with pytest.raises(cli.Terminated), workers.workers_ignore_sigint():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # while spawning
        assert raised
        assert signal.getsignal(signal.SIGINT) is previous
        assert signal.SIGINT not in _blocked_now()
    finally:
        real(signal.SIGINT, previous)


# ------------------------------------------------------------------- 2. status, busy folder
def _queued_again(out: pathlib.Path) -> pathlib.Path:
    """A store with run t-1 queued again after an interrupt, its checkpoint in its scratch
    folder, which is returned."""
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    with ResultsStore(out) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.mark_pending(run.run_id, "interrupted (the sweep stopped)")
        work = store.work_dir(run.run_id)
    (work / "checkpoint").mkdir(parents=True)
    return work


def test_status_while_the_sweep_removes_a_queued_runs_scratch(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    work = _queued_again(out)
    listdir = pathlib.Path.iterdir

    def iterdir(self: pathlib.Path):  # the run ended: its scratch goes as status looks
        if self == work:
            shutil.rmtree(work)
        return listdir(self)

    monkeypatch.setattr(pathlib.Path, "iterdir", iterdir)
    assert main(["status", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[3:] == [
        "pending  t-1 (attempts 1): interrupted (the sweep stopped)"
    ]


# ------------------------------------------------------------------ 4. two stop signals
def _stopped_twice(first: int, second: int) -> types.ModuleType:
    """A command stopped by ``first`` that ``second`` reaches during its clean-up."""
    module = types.ModuleType("maxminq_test_stopped_twice")
    module.RESUME_HINT = "the same command resumes"  # type: ignore[attr-defined]
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]

    def run(args: object) -> int:
        try:
            signal.raise_signal(first)  # its handler raises before this returns
        finally:  # e.g. a sweep waiting for its workers to stop
            signal.raise_signal(second)
        return 0

    module.run = run  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    ("first", "second", "status", "word"),
    [
        (signal.SIGINT, signal.SIGHUP, 129, "terminated by SIGHUP"),
        (signal.SIGHUP, signal.SIGTERM, 129, "terminated by SIGHUP"),
        (signal.SIGTERM, signal.SIGHUP, 143, "terminated"),
    ],
    ids=["int-hup", "hup-term", "term-hup"],
)
def test_two_stop_signals(first, second, status, word, monkeypatch, capsys, sighup_default):
    module = _stopped_twice(first, second)
    monkeypatch.setitem(sys.modules, "maxminq_test_stopped_twice", module)
    monkeypatch.setitem(cli.COMMANDS, "stopped", ("maxminq_test_stopped_twice", "a test"))
    monkeypatch.setitem(cli.HANGUP_COMMANDS, "stopped", False)
    assert main(["stopped"]) == status
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq stopped: {word}; the same command resumes"
    ]


# ------------------------------------------------------------- 5. the failed-sweep hint
def test_the_failed_sweep_hint_quotes_a_folder_with_a_space() -> None:
    """Before: 'maxminq status results/my runs --errors', which a shell reads as two
    folders."""
    from maxminq.commands.status import failures_hint

    hint = failures_hint(pathlib.Path("results/my runs"))
    assert "'maxminq status 'results/my runs' --errors' shows" in hint
    assert "'maxminq status results/quick --errors' shows" in failures_hint(
        pathlib.Path("results/quick")
    )
