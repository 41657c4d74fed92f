"""Spawned worker processes, as the sweep runner and ``maxminq experiment`` start them.

Both run settings in a pool of spawned processes, and both meet the same two problems:
Ctrl-C reaches every process of the terminal's group (the driver, not a worker, must handle
it), and a spawned worker imports the calling script again, so a script without the
``if __name__ == "__main__":`` guard starts the whole job once more in every worker. This
module holds the answers to both. It imports nothing beyond the standard library,
:mod:`maxminq.errors` and :mod:`maxminq.operators` (which ``import maxminq`` loads anyway,
NumPy with it): a worker runs :func:`refuse_unguarded_startup` while it imports the
script, and an import that took a quarter of a second there let the pool's SIGTERM become
the command's "terminated".
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from maxminq.errors import MaxminqWarning, UsageError, outside_stacklevel
from maxminq.operators import define_in_module

# A worker importing an unguarded script exits with this status; its driver, seeing it,
# stops with the caller's one-line error instead of reporting a dead worker.
UNGUARDED_EXIT = 87


def refuse_unguarded_startup(worker_name: str, message: str) -> None:
    """Stop a spawned process that is importing a script which lacks the ``__main__`` guard.

    Called first by the job's entry point (``run_sweep``, the experiment command). In a
    worker of the pool named ``worker_name`` (:func:`named_spawn_context`) it exits quietly
    with :data:`UNGUARDED_EXIT` (its driver reports it, once); in any other spawned
    process's start-up it raises :class:`UsageError` with ``message``; elsewhere nothing.
    """
    proc = multiprocessing.current_process()
    # ``_inheriting`` is set while a spawned process unpickles its start-up data and imports
    # the parent's main module; multiprocessing's own check of this mistake reads it too.
    if not getattr(proc, "_inheriting", False):
        return
    if proc.name.startswith(worker_name + "-"):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(UNGUARDED_EXIT)  # not SystemExit: a script's `except` could swallow that
    raise UsageError(message)


def workers_see_main() -> bool:
    """Whether a spawned worker has the top-level definitions of ``__main__`` (a G written
    there, named ``'__main__:median_q'``): it runs a script's file again, or imports a
    ``python -m`` module by name; a notebook's, an interactive session's or a ``python -``
    script's definitions exist only in this process."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):  # python -m
        return True
    return not _missing_main_file() and isinstance(getattr(main, "__file__", None), str)


def session_function_error(
    option: str, reference: str, processes: str, instead: str = "", where: str = ""
) -> UsageError:
    """The one-line refusal of ``reference`` (``'__main__:median_q'``), a function of this
    session that ``processes`` cannot import (:func:`workers_see_main` is False): what to
    do ``instead`` first, if anything, then to define it in a module (named so ``where``)."""
    short = reference.partition(":")[2]
    return UsageError(
        f"{option}: {reference} is defined in this session (a notebook, an interactive "
        f"Python, python -), which {processes} cannot import; {instead}"
        f"{define_in_module(short)}{where}"
    )


# Held while a process is started with the main module's file hidden (:func:`_main_hidden`).
_MAIN_LOCK = threading.Lock()


def _missing_main_file() -> bool:
    """Whether ``__main__`` names a file that a spawned process could not run again: code
    fed on stdin (``python - <<EOF``, ``__file__ == '<stdin>'``), or a script deleted since.
    A main module run by name (``python -m``) is imported by name, not from its file."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not isinstance(path, str) or getattr(getattr(main, "__spec__", None), "name", None):
        return False
    from multiprocessing import process

    origin = getattr(process, "ORIGINAL_DIR", None)  # where spawn resolves a relative path
    if not os.path.isabs(path) and origin is not None:
        path = os.path.join(origin, path)
    return not os.path.isfile(path)


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Within, a ``__main__`` whose file does not exist (:func:`_missing_main_file`) has no
    ``__file__``, as in an interactive session, so that the processes spawned meanwhile do
    not run it again: spawn's start-up data names the main module's file, and each worker
    of a ``python - <<EOF`` script failed on '<cwd>/<stdin>' (FileNotFoundError), its pool
    broke and every run of the sweep failed. Put back on leaving."""
    with _MAIN_LOCK:
        if not _missing_main_file():
            yield
            return
        main = sys.modules["__main__"]
        path = main.__file__
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path


class _NamedProcess(multiprocessing.context.SpawnProcess):
    """A spawned process named ``worker_name-N`` (module level: the pool pickles it)."""

    def __init__(self, *args: Any, worker_name: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{worker_name}-{self.name.rpartition('-')[2]}"

    def start(self) -> None:
        """Start the process; a main module without its file is not run in it again
        (:func:`_main_hidden`)."""
        with _main_hidden():
            super().start()


class _NamedSpawnContext(multiprocessing.context.SpawnContext):
    """The spawn start method, making named processes (:class:`_NamedProcess`)."""

    def __init__(self, worker_name: str) -> None:
        super().__init__()
        self.worker_name = worker_name

    def Process(self, *args: Any, **kwargs: Any) -> _NamedProcess:  # type: ignore[override]
        """A new process named ``worker_name-N`` (the pool calls this as it spawns)."""
        return _NamedProcess(*args, worker_name=self.worker_name, **kwargs)


def named_spawn_context(worker_name: str) -> multiprocessing.context.SpawnContext:
    """The spawn start method, with processes named ``worker_name-N``: the name reaches a
    worker before it imports the main module, so :func:`refuse_unguarded_startup` knows
    whose worker it is."""
    return _NamedSpawnContext(worker_name)


def exit_codes(procs: list[Any], within: float = 5.0) -> list[int | None]:
    """The exit statuses of ``procs`` (``None`` for one still running after ``within`` s).

    The pool's own thread reaps its dead workers too; a status read while it does may come
    back ``None`` for a moment, so a dead worker is asked again until it answers."""
    deadline = time.monotonic() + within
    codes = [proc.exitcode for proc in procs]
    while None in codes and time.monotonic() < deadline:
        time.sleep(0.01)
        codes = [proc.exitcode for proc in procs]
    return codes


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker now if it is not running (POSIX).

    The first spawned process starts it, and starting it unblocks SIGINT and SIGTERM in the
    calling thread (``SIG_UNBLOCK`` after its own spawn): a block meant to hold a Ctrl-C
    back while workers are spawned (and a SIGINT held meanwhile) was lifted by it."""
    if sys.platform == "win32":
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


@contextlib.contextmanager
def workers_ignore_sigint() -> Iterator[None]:
    """Within, processes this thread spawns ignore SIGINT from their first instruction.

    Ctrl-C reaches every process of the terminal's group. A spawned worker ignores it once
    its initializer runs, but before that (the interpreter's start-up, the imports of numpy,
    pandas, numba: seconds on a busy machine) Python turned it into a KeyboardInterrupt
    whose traceback the worker printed beside the driver's one-line "interrupted". A process
    started while SIGINT is ignored ignores it too (exec keeps SIG_IGN, and Python then does
    not install its KeyboardInterrupt handler), so the driver ignores it while it spawns:
    with SIGINT blocked in this thread, so that a Ctrl-C meanwhile stays pending (Linux
    keeps a blocked signal even while it is ignored) and is raised on leaving, in the driver
    only. (A Ctrl-C that the kernel hands to another thread of the driver, e.g. one of
    OpenBLAS's, within these milliseconds is lost: press it again.) The driver stops its
    workers itself (SIGTERM). Only in the main thread, where Python sets handlers;
    elsewhere, or when the handler was not set from Python, SIGINT is left as it is.
    SIGHUP (a closed terminal) is blocked within, in any thread, so that the workers start
    with it blocked (:func:`_hangup_blocked`).
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    start_resource_tracker()  # before the blocks: starting it unblocks SIGINT, and it
    # must not inherit a blocked SIGHUP
    with _hangup_blocked():
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        with _sigint_ignored():
            yield


@contextlib.contextmanager
def _hangup_blocked() -> Iterator[None]:
    """Within, SIGHUP is blocked in this thread, so the processes it spawns start with it
    blocked (a mask survives fork and exec) until their initializer ignores it and lifts
    the block (:func:`ignore_terminal_signals_in_worker`): a SIGHUP sent to the group in
    between (a terminal closed while a worker imports numpy, pandas, numba) stays pending
    in the worker and is discarded when it is ignored; before, the worker died of it (the
    handler the driver set is reset by exec), its pool broke, and the run failed. The
    driver's own handler is left as it is: a SIGHUP handed to another of its threads
    meanwhile is handled at once, one left pending on leaving."""
    if not hasattr(signal, "SIGHUP"):
        yield
        return
    with _blocked(signal.SIGHUP):
        yield


@contextlib.contextmanager
def _blocked(signum: int) -> Iterator[None]:
    """Within, ``signum`` is blocked in this thread; on leaving, the thread's mask is as it
    was. Also when the block itself raises: ``pthread_sigmask`` runs the Python handlers of
    signals that arrived just before once it has changed the mask, and one that raises (a
    Ctrl-C, SIGTERM's ``cli.Terminated``) came out of it with the block made but no
    ``finally`` yet to lift it; before, the driver's main thread then kept SIGHUP blocked
    for good (and every process it started later inherited it)."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # the mask, unchanged
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signum})
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored and blocked while workers are spawned (:func:`workers_ignore_sigint`);
    main thread only."""
    # The workers inherit the block too (their initializers lift it): SIGINT and SIGHUP
    # only, never SIGTERM, with which the driver stops them.
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or previous == signal.SIG_IGN:  # not ours to change, or already so
        yield
        return
    with _blocked(signal.SIGINT):
        # Setting SIG_IGN discards a SIGINT already pending (blocked before we came in, or
        # since): raised again below, before the block is lifted.
        pending = signal.SIGINT in signal.sigpending()
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            yield
        finally:
            _set_handler(signal.SIGINT, previous)
            if pending:
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)


def _set_handler(signum: int, handler: Any) -> None:
    """``signal.signal(signum, handler)``, made even when a handler raises first: Python
    runs the handlers of signals that arrived meanwhile before it changes one, and one that
    raised (SIGTERM's or SIGHUP's ``cli.Terminated`` as the workers were spawned) left
    SIGINT ignored in the driver, so that Ctrl-C no longer stopped its wait for the workers.
    The handler's exception is raised once the handler is set."""
    try:
        signal.signal(signum, handler)
    except BaseException:
        signal.signal(signum, handler)  # the handlers that raised have run
        raise


#: The signals that stop a command: Ctrl-C, SIGTERM and (where there is one) SIGHUP, a
#: closed terminal, which ``maxminq`` takes as SIGTERM (``cli.hangup_as_terminate``).
STOP_SIGNALS: tuple[signal.Signals, ...] = (
    signal.SIGINT,
    signal.SIGTERM,
    *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []),
)


def die_with_parent() -> None:
    """A pool worker's setup on Linux: have the kernel kill it when the process that
    spawned it dies (kill -9, the OOM killer), else it runs the tasks queued to it, minutes
    of a run, on a core for nothing, and writes into their folders after a resumed sweep
    stored them. A parent that died before ``prctl`` took effect handed the worker to
    another process (init, or a container's subreaper): it exits at once then."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = multiprocessing.parent_process()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: the worker ends with its task
        return
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)


def ignore_terminal_signals_in_worker() -> None:
    """A pool worker's first step (its initializer): ignore Ctrl-C and SIGHUP, which a
    terminal sends the whole process group and the driver handles for it (it stops the
    workers, so that a deep run checkpoints its step), then lift the SIGINT and SIGHUP
    blocks it was spawned with (:func:`workers_ignore_sigint`), which a task's own
    subprocesses would inherit. One of them sent meanwhile, pending, is discarded by the
    SIG_IGN (POSIX), not delivered by the unblocking."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    unblock = {signal.SIGINT}
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        unblock.add(signal.SIGHUP)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, unblock)


#: A warning a worker gave, as it goes back to the driver: its class and its text.
Warned = tuple[type[Warning], str]


@contextlib.contextmanager
def warnings_for_driver() -> Iterator[list[Warned]]:
    """Within, in a worker: the :class:`~maxminq.errors.MaxminqWarning` warnings given are
    kept (the list yielded, filled on leaving, even when the body raised) for the driver
    to show with :func:`show_once`; a worker's own stderr showed Python's two lines, once
    per worker. Other warnings are shown where they arose, as they would have been. Of a
    class whose ``last_of_run_only`` is set (a running count, then the whole run's) only
    the last is kept. The sweep runner's runs and ``maxminq experiment``'s tasks both
    use it."""
    kept: list[Warned] = []
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as log:
            caught = log
            warnings.simplefilter("always", MaxminqWarning)
            yield kept
    finally:  # after catch_warnings: within, showwarning only records
        for w in caught:
            if issubclass(w.category, MaxminqWarning):
                if w.category.last_of_run_only:  # an earlier one of its class is out of date
                    kept[:] = [(c, s) for c, s in kept if c is not w.category]
                kept.append((w.category, str(w.message)))
            else:  # shown where it arose, as it would have been
                warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def show_once(warned: list[Warned], shown: set[Warned], words: Callable[[str], str] = str) -> None:
    """Warn in the driver of what a worker warned of (:func:`warnings_for_driver`), each
    (class, text) once per job (``shown``, the job's): the command shows it as one line,
    and a caller can filter or catch it. ``words`` rewrites the text first (a sweep's, in
    a config's words). It points at the caller's line outside maxminq
    (:func:`~maxminq.errors.outside_stacklevel`)."""
    for category, said in warned:
        text = words(said)
        if (category, text) not in shown:
            shown.add((category, text))
            warnings.warn(text, category, stacklevel=outside_stacklevel())
