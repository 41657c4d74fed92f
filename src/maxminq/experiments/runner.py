"""Execute a sweep: resumable, on a local process pool (default) or as Ray tasks.

The runner is experiment-agnostic. It loads and validates a config (every error surfaces
before any run starts), registers the runs in the folder's :class:`ResultsStore`, works out
what is left (pending, failed, interrupted, or finished with files that no longer verify),
and hands each remaining run to a worker, which calls the run kind's ``execute`` function
and returns the tables. Only this driver process writes to the output folder: tables
first (atomically, manifest last), then the run's status, then the run's scratch folder is
removed. A kill at any moment therefore loses at most the runs in flight, which the next
``run_sweep`` on the same folder runs again (deep runs continue from their checkpoints in
``OUT/work/<run_id>``). Interrupted (Ctrl-C, SIGTERM), the local backend stops its workers
with SIGTERM and waits up to ``STOP_GRACE`` s before it kills them: a deep run first ends
its training step and writes a checkpoint of it, so its next attempt loses no step. The Ray
backend cancels its tasks instead (``ray.cancel``: a KeyboardInterrupt in the task, which
a deep run defers in the same way) and waits as long before it shuts Ray down.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import std as tqdm_std

from maxminq._progress import progress_bar
from maxminq.errors import UsageError
from maxminq.experiments.config import (
    RunSpec,
    SweepConfig,
    config_from_document,
    load_config,
    run_id_for,
)
from maxminq.experiments.registry import KINDS, RunOutput, options_to_keys
from maxminq.experiments.shard import (
    check_folder_shard,
    parse_shard,
    record_sweep,
    shard_runs,
)
from maxminq.experiments.software import record_software
from maxminq.experiments.store import (
    FINISHED,
    INTERRUPTED,
    WORKER_FILE,
    ResultsStore,
    RunRecord,
    StoreError,
    clear_worker,
    last_line,
    read_progress,
    write_worker,
)
from maxminq.experiments.workers import (
    UNGUARDED_EXIT,
    Warned,
    die_with_parent,
    exit_codes,
    ignore_terminal_signals_in_worker,
    named_spawn_context,
    refuse_unguarded_startup,
    session_function_error,
    show_once,
    warnings_for_driver,
    workers_ignore_sigint,
    workers_see_main,
)

BACKENDS = ("local", "ray")
# Seconds a local worker gets to end after SIGTERM before it is killed: a deep run first
# ends its step and writes a checkpoint of it (run_training defers the signal), which the
# next sweep continues from; other runs end at once. SLURM's default grace is 30 s too.
STOP_GRACE = 30.0
# Seconds a dead local worker may go unnoticed by its pool before the runner breaks the pool
# itself (_LocalBackend._unstick): the pool notices a death within milliseconds, unless the
# worker was killed halfway through sending its answer, which left the pool waiting for ever.
STUCK_AFTER = 10.0
RAY_CURRENT_CLUSTER = "/tmp/ray/ray_current_cluster"  # Ray's record of the last `ray start`
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# The local backend's workers are spawned: each imports the script that called run_sweep
# again (as __mp_main__), and a script without the __main__ guard calls run_sweep once more
# there. Such a worker (named WORKER_NAME-N, which its start-up already knows) exits at once
# with UNGUARDED_EXIT, and the driver, seeing that status, stops with UNGUARDED.
WORKER_NAME = "maxminq-sweep-worker"
UNGUARDED = (
    "run_sweep: the local backend's worker processes import the calling script again, and "
    "it called run_sweep again in each of them; put the call under "
    '`if __name__ == "__main__":` (nothing was run; run it again once it is there)'
)
UNGUARDED_REQUEUE = "not run: the calling script lacked the __main__ guard (run_sweep)"


@dataclass
class SweepSummary:
    """What a :func:`run_sweep` call did."""

    config: str
    scale: str
    out_dir: Path
    total: int
    skipped: int = 0
    done: int = 0
    diverged: int = 0
    failed: int = 0
    seconds: float = 0.0
    failures: dict[str, str] = field(default_factory=dict)
    shard: str | None = None  # "K/M" of a sharded sweep (--shard)
    of_total: int = 0  # with a shard: the config's runs in all shards
    # Runs done whose note says some of their runs went non-finite (toy MDP): run id -> note.
    nonfinite: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """``True`` when every run of the config finished (done or diverged)."""
        return self.failed == 0 and self.skipped + self.done + self.diverged == self.total

    def _nonfinite_text(self) -> str:
        """`` (1 with runs gone non-finite)`` after the done count, when some were."""
        k = len(self.nonfinite)
        return f" ({k} with runs gone non-finite)" if k else ""

    def line(self) -> str:
        """A one-line human summary."""
        shard = f" shard {self.shard}" if self.shard else ""
        of = f" (of {self.of_total})" if self.shard else ""
        return (
            f"{self.config} [{self.scale}]{shard}: {self.total} run{'s' if self.total != 1 else ''}"
            f"{of}, {self.skipped} already done, "
            f"{self.done} done{self._nonfinite_text()}, {self.diverged} diverged, "
            f"{self.failed} failed "
            f"in {self.seconds:.1f} s -> {self.out_dir}"
        )

    def run_lines(self) -> list[str]:
        """The lines under :meth:`line` naming runs: each done run some of whose runs went
        non-finite (its note), then each failed run (its error's last line)."""
        lines = [f"  non-finite {run_id}: {note}" for run_id, note in self.nonfinite.items()]
        return lines + [f"  failed {run_id}: {error}" for run_id, error in self.failures.items()]


@dataclass
class _Result:
    """A worker's answer: the run's output, or the error text, plus where it ran."""

    output: RunOutput | None
    error: str | None
    host: str
    pid: int
    seconds: float
    broken: bool = False  # the local pool broke: this run's worker, or another, died
    lost: str = ""  # on Ray, what ended the task without its answer (ray_loss)
    # The run's MaxminqWarnings (category, text), which the driver shows (each text once)
    warned: list[Warned] = field(default_factory=list)


def execute_run(
    execute: Callable[[dict[str, Any], Path, bool], RunOutput],
    settings: dict[str, Any],
    work_dir: str,
) -> _Result:
    """Run one run in a worker; never raises (errors come back as text, and the run's
    :class:`~maxminq.errors.MaxminqWarning` warnings go back to the driver instead of the
    worker's stderr: :func:`~maxminq.experiments.workers.warnings_for_driver`)."""
    start = time.perf_counter()
    host, pid = socket.gethostname(), os.getpid()
    write_worker(Path(work_dir))  # for maxminq status: which process runs it
    with warnings_for_driver() as warned:
        try:
            output = execute(dict(settings), Path(work_dir), False)
            if not isinstance(output, RunOutput):
                raise TypeError(f"run kind returned {type(output).__name__}, expected RunOutput")
            result = _Result(output, None, host, pid, time.perf_counter() - start)
        except BaseException as err:  # noqa: BLE001 - reported as the run's error text
            text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
            result = _Result(None, text.strip(), host, pid, time.perf_counter() - start)
        finally:  # here, where it was written: a Ray node's own disk too
            clear_worker(Path(work_dir), pid)
    result.warned = warned
    return result


def execute_ray_run(
    execute: Callable[[dict[str, Any], Path, bool], RunOutput],
    settings: dict[str, Any],
    work_dir: str,
) -> _Result:
    """:func:`execute_run` as a Ray task: with SIGINT unblocked in the worker's main thread
    while the run runs. Ray blocks it there, and cancels a running task (``ray.cancel``,
    not forced) by calling the SIGINT handler directly; a deep run's training defers that
    to the end of its step, checkpoints the step and then raises the signal again to stop,
    which stayed pending in the blocked thread: the run trained on to its end, or until
    Ray was shut down. The worker's mask is put back for its next task."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        return execute_run(execute, settings, work_dir)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        return execute_run(execute, settings, work_dir)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _show_warnings(result: _Result, shown: set[Warned]) -> None:
    """Warn in the driver, once per sweep, of what a run warned of in its worker (e.g. an
    environment without a time limit, which every run on it would repeat): the command
    shows it as one line, and a caller of :func:`run_sweep` can filter or catch it
    (:func:`~maxminq.experiments.workers.show_once`, pointing at the caller's line outside
    maxminq). In a config's words, as its errors are ('max_episode_steps 100 with gamma
    0.99', not the command line's '--max-episode-steps 100 with --gamma 0.99')."""
    show_once(result.warned, shown, words=options_to_keys)


def _worker_init() -> None:
    """Pool worker setup: one thread per worker, and die with the driver (Linux)."""
    for var in _THREAD_VARS:
        os.environ.setdefault(var, "1")
    # Ctrl-C and SIGHUP go to the whole process group: the driver handles them (requeues
    # the runs in flight and stops the workers); a worker must not turn them into a
    # "failed" run.
    ignore_terminal_signals_in_worker()
    # tqdm's default lock is a multiprocessing RLock: a named semaphore registered with the
    # resource tracker, which a worker killed on Ctrl-C never unregisters (the tracker then
    # warns of "leaked semaphore objects"). Workers draw no bars; a thread lock suffices.
    tqdm_std.tqdm.set_lock(threading.RLock())  # the base class: every tqdm subclass uses it
    die_with_parent()  # a SIGKILLed driver must not leave workers computing


class _UnguardedScript(Exception):
    """A worker exited with :data:`UNGUARDED_EXIT`: the script that called ``run_sweep`` ran
    it again while the worker imported it."""


def _refuse_worker_startup() -> None:
    """Stop a spawned process that is importing the script which called ``run_sweep`` (its
    ``__main__`` guard is missing), before it opens the store or starts processes."""
    refuse_unguarded_startup(WORKER_NAME, UNGUARDED)


def _refuse_session_functions(runs: Sequence[RunSpec]) -> None:
    """A run naming a G written in a notebook or an interactive session
    (``'__main__:median_q'``) that the workers cannot see (:func:`workers_see_main`): one
    line before anything is registered; each run was recorded failed ("module '__main__'
    has no 'median_q'"), the function being defined only in this process."""
    if workers_see_main():
        return
    for run in runs:
        for key, value in run.settings.items():
            if isinstance(value, str) and value.startswith("__main__:"):
                processes = "the sweep's worker processes"
                raise session_function_error(key, value, processes, where=" in the config")


def _stop_workers(procs: list[Any], grace: float = STOP_GRACE, notice: bool = False) -> None:
    """SIGTERM each process of ``procs`` still alive, wait up to ``grace`` s for them to
    end, then SIGKILL those left (at once on a KeyboardInterrupt meanwhile: a second
    Ctrl-C). SIGTERM ends a worker at once, unless it is in a deep run's training steps:
    that ends its step and writes a checkpoint of it first. With ``notice``, workers still
    busy after a second get one line on stderr, so the wait is not mistaken for a hang."""
    alive = [proc for proc in procs if proc.exitcode is None]
    try:
        for proc in alive:
            proc.terminate()
        start = time.monotonic()
        deadline = start + grace
        waiting = [proc.sentinel for proc in alive]
        told = not notice
        while waiting and (left := deadline - time.monotonic()) > 0:
            ended = multiprocessing.connection.wait(waiting, timeout=min(left, 1.0))
            waiting = [sentinel for sentinel in waiting if sentinel not in ended]
            if waiting and not told and time.monotonic() - start >= 1.0:
                told, left = True, deadline - time.monotonic()
                print(
                    f"maxminq: waiting up to {left:.0f} s for {len(waiting)} worker(s) to stop "
                    "(a deep run checkpoints its step first; Ctrl-C again to stop at once)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for proc in alive:
            proc.kill()  # one that ended: nothing happens


# --------------------------------------------------------------------------- backends
class _LocalBackend:
    """A pool of worker processes (spawned, so no state leaks in from the driver)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = self._new_pool()
        self._pool_of: dict[cf.Future, cf.ProcessPoolExecutor] = {}  # run -> its pool
        self._dead_since: float | None = None  # a dead worker the pool has not noticed

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        """Spawned workers: no torch/numba state is inherited from the driver."""
        return cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=named_spawn_context(WORKER_NAME),
            initializer=_worker_init,
        )

    def _workers(self) -> list[Any]:
        """The pool's worker processes now (a private attribute of the executor: none if a
        future Python renames it)."""
        return list((getattr(self._pool, "_processes", None) or {}).values())

    def submit(self, run: RunSpec, work_dir: Path) -> cf.Future:
        """Start one run; returns its future."""
        args = (execute_run, KINDS[run.kind].execute, run.settings, str(work_dir))
        try:
            future = self._submit(*args)
        except BrokenProcessPool:
            # A worker died since the last wait() (e.g. while this driver stored another
            # run's tables): the pool refuses new runs, which stopped the whole sweep with a
            # traceback. Its runs in flight fail as broken, and wait() handles them as
            # usual; this run goes to a new pool.
            self._renew(self._workers())
            future = self._submit(*args)
        self._pool_of[future] = self._pool
        return future

    def _submit(self, *args: Any) -> cf.Future:
        """``self._pool.submit(*args)``, spawning a worker with SIGINT ignored."""
        if len(self._workers()) >= self.workers:  # a full pool spawns none
            return self._pool.submit(*args)
        with workers_ignore_sigint():  # this submit may spawn a worker
            return self._pool.submit(*args)

    def _renew(self, procs: list[Any]) -> None:
        """Replace a broken pool: stop its workers ``procs`` (a deep run checkpoints its
        step first, and must be gone, its folder unlocked, before it runs again), then
        start a new pool; :class:`_UnguardedScript` when a worker exited for lack of the
        ``__main__`` guard."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        _stop_workers(procs)
        self._pool = self._new_pool()
        self._dead_since = None
        if UNGUARDED_EXIT in exit_codes(procs):  # not a run's fault: stop the sweep
            raise _UnguardedScript(UNGUARDED)

    def _unstick(self, procs: list[Any]) -> None:
        """Break the pool when one of its workers ``procs`` died ``STUCK_AFTER`` s ago and
        the pool has still not noticed: its result thread is stuck reading the answer
        that worker was killed halfway through sending (and the worker held the result
        pipe's lock, so no other worker can send its answer either); the sweep waited
        for ever. Stopping the workers and closing this process's copy of the pipe's
        write end gives that thread end-of-file: the pool breaks, its runs fail as broken
        and run again (each alone, as after any worker's death)."""
        if getattr(self._pool, "_broken", False) or all(p.exitcode is None for p in procs):
            self._dead_since = None
            return
        if self._dead_since is None:
            self._dead_since = time.monotonic()
        elif time.monotonic() - self._dead_since >= STUCK_AFTER:
            writer = getattr(getattr(self._pool, "_result_queue", None), "_writer", None)
            _stop_workers(procs)
            if writer is not None:
                writer.close()
            self._dead_since = None

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, _Result]]:
        """The runs that ended within ``timeout`` s, with their answers."""
        # The pool's manager thread watches the workers it knew when it last woke up; a
        # worker spawned after that which dies went unnoticed, its run shown running, until
        # another run ended (hours, for deep runs). A dead worker wakes the manager now.
        # The pool drops the workers it reaps: those seen now keep their exit status.
        before = self._workers()
        self._unstick(before)
        if any(proc.exitcode is not None for proc in before):
            wakeup = getattr(self._pool, "_executor_manager_thread_wakeup", None)
            if wakeup is not None:
                with contextlib.suppress(Exception):  # closed: the pool is shutting down
                    wakeup.wakeup()
        done, _ = cf.wait(handles, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        out = []
        broken = False
        for fut in done:
            pool = self._pool_of.pop(fut, None)
            try:
                out.append((fut, fut.result()))
            except BrokenProcessPool as err:  # a worker died (OOM, segfault)
                # Only this pool's own: a run of a pool already replaced (by submit, or
                # failed a moment after its pool's other runs) must not stop the new one.
                broken = broken or pool is None or pool is self._pool
                msg = f"worker process died: {type(err).__name__}: {err}"
                out.append((fut, _Result(None, msg, socket.gethostname(), 0, 0.0, True)))
            except Exception as err:  # e.g. a result its (living) worker could not pickle
                msg = f"the run's result could not be returned: {type(err).__name__}: {err}"
                out.append((fut, _Result(None, msg, socket.gethostname(), 0, 0.0)))
        if broken:
            # The pool sent SIGTERM to its other workers (stopped by _renew).
            self._renew(list({id(proc): proc for proc in before + self._workers()}.values()))
        return out

    def close(self) -> None:
        """Release the backend's resources after a complete sweep."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """Stop (interrupt): queued runs dropped, workers stopped (``_stop_workers``: at
        once, or, for a deep run, after a checkpoint of its step, within ``STOP_GRACE`` s)."""
        # A worker killed while sending its tables leaves the pool's result thread waiting
        # for the rest of the message, and the interpreter joins that thread at exit: the
        # sweep hung after "interrupted". Once the workers are dead, closing the driver's
        # copy of the result pipe's write end gives that thread EOF and lets the pool wind
        # down. (Taken before shutdown(), which drops the queue.)
        writer = getattr(getattr(self._pool, "_result_queue", None), "_writer", None)
        try:
            _stop_workers(self._workers(), notice=sys.stderr.isatty())  # for a watcher
        finally:  # also after a second Ctrl-C during the grace (the workers are dead then)
            self._pool.shutdown(wait=False, cancel_futures=True)
            if writer is not None:
                writer.close()
            # Let the pool's manager thread wind down (bounded): on Python 3.11 the
            # interpreter's exit wakes it through a pipe that thread may be closing at that
            # moment, and the race printed an "OSError: Bad file descriptor" traceback after
            # "interrupted" (once in four clean-clone CI runs).
            manager = getattr(self._pool, "_executor_manager_thread", None)
            if manager is not None:
                manager.join(timeout=STOP_GRACE)


@contextlib.contextmanager
def _hangup_ignored_by_ray() -> Iterator[None]:
    """Within (around starting a Ray of our own), SIGHUP is ignored, so the processes Ray
    starts ignore it too (an ignored signal stays ignored across fork and exec). They are in
    the sweep's process group, which a closed terminal signals: they died at once and the
    deep run in flight kept no step, while the driver takes SIGHUP as SIGTERM and cancels its
    tasks gently. The handler set before is put back; main thread only."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        yield
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_DFL if previous is None else previous)


@contextlib.contextmanager
def _sigterm_kept() -> Iterator[None]:
    """Within, whatever ``ray.init`` does to SIGTERM is undone on leaving: it installs a
    handler of its own (``sys.exit``), and its core worker then a C-level one that aborts the
    process (exit 134, a stack dump), so a sweep on Ray ignored ``maxminq``'s SIGTERM
    handling (``cli.Terminated``: runs in flight requeued, Ray shut down, exit 143). The
    handler set before (maxminq's, or the default: die) is put back, in the main thread
    only (where Python sets handlers); one not set from Python (None) is left to Ray."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def ray_loss(err: BaseException) -> str:
    """What ended a Ray task without its answer, not the run's own error (``execute_run``
    returns those), in a few words for the run's pending note; "" for anything else.

    Its worker process, raylet or node died (a kill, the OOM killer, Ray's memory
    monitor): the task never answered. Or the task answered and Ray lost the answer
    (``ObjectLostError`` and its kinds: the node holding it died, its owner died, it could
    not be fetched in time; the tasks have no retries, so Ray does not rebuild it): the
    run was fine, and only its rows are gone. Either way the run runs once more
    (``_drive``), and is failed if that happens again."""
    from ray import exceptions as rx

    deaths = (rx.WorkerCrashedError, rx.NodeDiedError, rx.LocalRayletDiedError, rx.OutOfMemoryError)
    if isinstance(err, deaths):
        return "its Ray worker died"
    if isinstance(err, rx.ObjectLostError):
        return "Ray lost its answer"
    return ""


class _RayBackend:
    """Ray tasks (one CPU each); starts a local Ray unless ``address`` names a cluster."""

    def __init__(self, workers: int | None, address: str | None) -> None:
        import ray

        self.ray = ray
        self.started = False
        with _sigterm_kept():
            self._init(ray, workers, address)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, min(workers or cpus, cpus))
        self._task = ray.remote(num_cpus=1, max_retries=0)(execute_ray_run)
        self._running: set[Any] = set()  # refs of the tasks submitted and not yet answered

    def _init(self, ray: Any, workers: int | None, address: str | None) -> None:
        """Start or join Ray unless this process has it already (then ``started`` stays
        False, and ``close`` leaves it running)."""
        if not ray.is_initialized():
            if address:
                try:
                    # WARNING: Ray's INFO lines (e.g. a failed connection's own advice, about
                    # `ray stop`) would precede our one-line error.
                    ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
                except ConnectionError as err:  # e.g. auto with no cluster on this machine
                    why = last_line(str(err)) or type(err).__name__
                    # The port answered (checked before): a token-authenticated cluster
                    # refuses a driver without a token in just these words.
                    hint = (
                        "; if the cluster uses token authentication, set RAY_AUTH_MODE here as "
                        "on its nodes (docs/sweeps.md: Backends)"
                        if address != "auto"
                        else ""
                    )
                    raise UsageError(f"--address: {why}{hint}") from None
            else:
                # "local": a new Ray of our own, even when a `ray start` cluster (or
                # RAY_ADDRESS) exists on this machine, which plain ray.init() would join and
                # then refuse num_cpus with a ValueError.
                with _hangup_ignored_by_ray():
                    ray.init(
                        address="local",
                        num_cpus=workers or os.cpu_count() or 1,
                        include_dashboard=False,
                        log_to_driver=False,
                        # as with --address: no "INFO ... Started a local Ray instance." line
                        # in the sweep's output (Ray's warnings still show)
                        logging_level=logging.WARNING,
                    )
            self.started = True

    def submit(self, run: RunSpec, work_dir: Path) -> Any:
        """Start one run as a Ray task; returns its object ref."""
        ref = self._task.remote(KINDS[run.kind].execute, run.settings, str(work_dir))
        self._running.add(ref)
        return ref

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, _Result]]:
        """The runs that ended within ``timeout`` s, with their answers."""
        ready, _ = self.ray.wait(handles, num_returns=1, timeout=timeout)
        out = []
        for ref in ready:
            self._running.discard(ref)
            try:
                out.append((ref, self.ray.get(ref)))
            except Exception as err:  # the task's worker died (node lost, OOM kill)
                why = last_line(str(err)) or "unknown error"
                msg = f"ray task failed: {type(err).__name__}: {why}"
                # Its worker process or node died, or Ray lost its answer: not the run's
                # own error (execute_run returns those); run again once (_drive), as the
                # local pool does.
                lost = ray_loss(err)
                out.append((ref, _Result(None, msg, "?", 0, 0.0, broken=bool(lost), lost=lost)))
        return out

    def close(self) -> None:
        """Release the backend's resources after a complete sweep."""
        if self.started:
            self.ray.shutdown()

    def abort(self) -> None:
        """Stop (interrupt): each task still running is cancelled as Ray cancels gently, by
        a KeyboardInterrupt raised through the SIGINT handler of its worker's main thread,
        which a deep run's training defers to the end of its step and a checkpoint of it
        (as a local worker does on SIGTERM); waited for up to ``STOP_GRACE`` s (a second
        Ctrl-C: at once), then Ray is shut down (if this backend started it) and whatever
        is left killed. Before, Ray was shut down at once: the run lost every step since
        its last periodic checkpoint. On a Ray the caller started, the tasks are cancelled
        rather than left running."""
        refs = list(self._running)
        try:
            if refs:
                for ref in refs:
                    with contextlib.suppress(Exception):  # ended meanwhile, Ray gone
                        self.ray.cancel(ref, force=False)
                if sys.stderr.isatty():
                    print(
                        f"maxminq: waiting up to {STOP_GRACE:.0f} s for {len(refs)} Ray "
                        "task(s) to stop (a deep run checkpoints its step first; Ctrl-C again "
                        "to stop at once)",
                        file=sys.stderr,
                        flush=True,
                    )
                with contextlib.suppress(Exception):  # not KeyboardInterrupt: a second Ctrl-C
                    self.ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE)
        finally:
            self._running.clear()
            self.close()


def _make_backend(
    backend: str, workers: int | None, address: str | None
) -> _LocalBackend | _RayBackend:
    """The chosen backend (UsageError when Ray is requested but not installed)."""
    if backend == "local":
        return _LocalBackend(workers or os.cpu_count() or 1)
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(
            "--backend: ray is not installed; pip install 'maxminq[ray]' or use --backend local"
        ) from None
    return _RayBackend(workers, address)


# --------------------------------------------------------------------------- the sweep
def _settle(store: ResultsStore, rec: RunRecord | None, keep_work: bool) -> bool:
    """Whether a run is finished (:meth:`ResultsStore.finished`), with its row brought in
    line: a ``running`` or ``pending`` row whose tables verify gets the final status its
    manifest records (done, or diverged with its note), a row whose tables do not is
    requeued (tables discarded). A sweep with ``keep_work`` marks the runs it finishes so
    as kept (their scratch folders stay), as it marks those it runs; so does any sweep
    for a run whose attempt a ``keep_work`` sweep started
    (:meth:`ResultsStore.attempt_keeps_work`)."""
    finished, requeue = store.finished(rec)
    if rec is None:  # not registered: nothing to bring in line
        return False
    if finished and rec.status in ("running", "pending"):
        status, note = store.stored_status(rec.run_id)
        # kept also when the killed sweep that stored its tables kept work: a sweep of
        # another config sharing the folder settles it too, and without --keep-work it
        # marked the folder not kept (a later sweep then removed its model.pt, and merge
        # left it behind)
        kept = keep_work or store.attempt_keeps_work(rec.run_id)
        store.mark_finished(rec.run_id, status, note, work_kept=kept)
    elif requeue:
        store.discard_tables(rec.run_id)
        store.mark_pending(rec.run_id, requeue)
    return finished


def stored_aliases(records: list[RunRecord]) -> dict[str, str]:
    """Run id now -> the id a stored run has, for runs stored under another id: a deep run
    swept with ``checkpoint_every`` or ``tensorboard`` off their defaults had an id of its
    own before those settings left run ids (:func:`maxminq.experiments.config.run_id_for`).
    Where two stored runs are the same run now, a finished one is taken."""
    out: dict[str, str] = {}
    finished: set[str] = set()
    for rec in records:
        spec = KINDS.get(rec.kind)
        if spec is None or spec.identity is None:
            continue
        now_id = run_id_for(rec.kind, rec.settings)
        if now_id != rec.run_id and (now_id not in out or now_id not in finished):
            out[now_id] = rec.run_id
            if rec.status in FINISHED:
                finished.add(now_id)
    return out


def adopt_stored_ids(store: ResultsStore, runs: list[RunSpec]) -> list[RunSpec]:
    """``runs``, each under the id of the same run stored in ``store`` under an older id
    (:func:`stored_aliases`), unless its own id is finished there: such a store resumes as
    before (its runs are neither trained again nor left as strangers). The settings stay
    the config's: the run continues from its checkpoint under the new ones."""
    aliases = stored_aliases(store.records())
    if not aliases:
        return runs
    out = []
    for run in runs:
        old = aliases.get(run.run_id)
        if old is not None and not store.finished(store.get(run.run_id))[0]:
            run = dataclasses.replace(run, run_id=old)
        out.append(run)
    return out


def _todo(store: ResultsStore, runs: list[RunSpec], keep_work: bool) -> tuple[list[RunSpec], int]:
    """With the lock held: the runs still to execute, and how many are finished.

    ``running`` rows are left over from a killed sweep; those of every config in the folder
    are settled first (:func:`_settle`, with ``keep_work``).
    """
    for rec in store.records():
        if rec.status == "running":
            _settle(store, rec, keep_work)
    todo = [run for run in runs if not _settle(store, store.get(run.run_id), keep_work)]
    return todo, len(runs) - len(todo)


def check_options(backend: str, workers: int | None, address: str | None) -> None:
    """Raise :class:`UsageError` for a bad backend, worker count or address."""
    if backend not in BACKENDS:
        raise UsageError(f"--backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise UsageError(f"--workers: expected an integer >= 1, got {workers!r}")
    if address and backend != "ray":
        raise UsageError("--address: only used with --backend ray")
    if address:
        check_ray_address(address)


def check_ray_address(address: str, timeout: float = 5.0) -> None:
    """Raise :class:`UsageError` when ``HOST:PORT`` (or ``ray://HOST:PORT``) does not answer.

    Ray itself retries an unreachable address for minutes without giving up, ignoring
    Ctrl-C; a TCP connection attempt tells at once. ``auto`` is checked where Ray would
    resolve it to an address: ``RAY_ADDRESS``, else the last ``ray start`` on this machine
    (``/tmp/ray/ray_current_cluster``, left behind when that cluster died without
    ``ray stop``); without either, Ray's own search decides.
    """
    said = address
    if address == "auto":
        address, said = os.environ.get("RAY_ADDRESS", ""), "auto (RAY_ADDRESS)"
        if not address:
            try:
                recorded = Path(RAY_CURRENT_CLUSTER).read_text().split()
            except OSError:
                recorded = []
            if not recorded:  # no `ray start` here: Ray's own search decides
                return
            address, said = recorded[0], f"auto ({RAY_CURRENT_CLUSTER})"
    text = address.removeprefix("ray://")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        if address in ("auto", "local"):
            return
        got = repr(address) if said == address else f"{address!r}, from {said}"
        raise UsageError(f"--address: expected auto or HOST:PORT (e.g. 10.0.0.1:6379), got {got}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as err:
        why = err.strerror or type(err).__name__
        at = address if said == address else f"{address}, from {said}"
        raise UsageError(
            f"--address: no Ray cluster answers at {at} ({why}); start one with "
            "'ray start --head --port PORT' or use --address auto on the head node"
        ) from None


# What a config given to run_sweep as a parsed document is called in its error messages.
DOCUMENT = "<config document>"


def run_sweep(
    config_or_path: SweepConfig | Mapping[str, Any] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    scale: str = "quick",
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    keep_work: bool = False,
    shard: str | tuple[int, int] | None = None,
) -> SweepSummary:
    """Run (or resume) every run of a config into ``out_dir``; returns a summary.

    The config is a :class:`SweepConfig`, a config file's path (read at ``scale``) or a
    parsed document (a dict, checked as a file is, at ``scale``; its errors name it
    ``<config document>``).

    Finished runs whose files verify are skipped; failed, interrupted and corrupt ones are
    run again. ``workers`` defaults to the number of cores (local) or the Ray cluster's
    CPUs. ``keep_work`` keeps each finished run's scratch/checkpoint folder.

    ``shard`` (``"K/M"`` or ``(K, M)``) runs only shard K of M of the config's runs
    (:func:`maxminq.experiments.shard.shard_runs`: the same split on every machine), for
    one sweep on M machines whose folders ``maxminq merge`` brings together; all the
    config's runs are registered (the other shards' stay pending here). A folder whose
    sweeps of this config ran another shard is refused (:class:`UsageError`).

    The local backend's workers import the calling script again: a script must call this
    under ``if __name__ == "__main__":``, else :class:`UsageError` says so (nothing is run,
    no run is recorded failed).
    """
    _refuse_worker_startup()  # first: this process may be a worker importing the script
    check_options(backend, workers, address)
    part = parse_shard(shard)
    if part is not None and part.m == 1:  # shard 1 of 1: all runs, as without --shard
        part = None
    if isinstance(config_or_path, SweepConfig):
        config = config_or_path
    elif isinstance(config_or_path, Mapping):  # a parsed document, checked as a file is
        config = config_from_document(config_or_path, DOCUMENT, scale)
    elif isinstance(config_or_path, (str, os.PathLike)):
        config = load_config(config_or_path, scale)
    else:  # before: "expected str, bytes or os.PathLike object", from deep in pathlib
        raise TypeError(
            "run_sweep: expected a config file's path, a parsed document (dict) or a "
            f"SweepConfig, got {type(config_or_path).__name__}"
        )
    every = list(config.runs)
    _refuse_session_functions(every)
    mine = {run.run_id for run in shard_runs(every, part)}
    start = time.perf_counter()
    summary = SweepSummary(config.name, config.scale, Path(out_dir), len(mine))
    if part is not None:
        summary.shard, summary.of_total = part.text, len(every)

    store = ResultsStore(out_dir, lock=True)
    try:
        check_folder_shard(store, config.name, part, every)
        adopted = adopt_stored_ids(store, every)
        store.register(adopted)
        record_sweep(store, config.name, config.scale, every, part)
        # the shard's runs, under the ids the folder holds them by (adopted keeps the order)
        runs = [a for a, run in zip(adopted, every, strict=True) if run.run_id in mine]
        todo, summary.skipped = _todo(store, runs, keep_work)
        if not keep_work:
            queued = {run.run_id for run in todo}
            _drop_finished_scratch(store, [run for run in runs if run.run_id not in queued])
        if todo:
            # the versions that compute these runs (maxminq merge compares the machines')
            record_software(store, config.name)
            backend_obj = _make_backend(backend, workers, address)
            try:
                _drive(store, backend_obj, todo, summary, progress, keep_work)
            except _UnguardedScript:
                backend_obj.abort()
                # Raised here, without the chain: the user's traceback ends at their call.
                raise UsageError(UNGUARDED) from None
            except BaseException:
                backend_obj.abort()
                # A run stopped (Ctrl-C) before its worker wrote anything into its folder
                # left it empty: nothing to continue from (its workers are stopped now).
                # Only here: --keep-work keeps a finished run's folder, empty or not.
                for run in todo:
                    with contextlib.suppress(OSError):  # not empty, or none
                        store.work_dir(run.run_id).rmdir()
                raise
            backend_obj.close()
    finally:
        if not keep_work:  # OUT/work left empty (each finished run's folder removed)
            with contextlib.suppress(OSError):  # not empty: checkpoints to resume from
                store.work_root.rmdir()
        store.close()
    summary.seconds = time.perf_counter() - start
    return summary


def _inflight_progress(store: ResultsStore, runs: Any) -> str:
    """' (37%, 5%)': how far the in-flight runs that report progress are (deep runs write
    it to their scratch folder; a run on another Ray node is not seen)."""
    done = [read_progress(store.work_dir(run.run_id)) for run in runs]
    shown = [f"{f:.0%}" for f in done if f is not None]
    return f" ({', '.join(shown)})" if shown else ""


def _drive(
    store: ResultsStore,
    backend: _LocalBackend | _RayBackend,
    todo: list[RunSpec],
    summary: SweepSummary,
    progress: bool,
    keep_work: bool,
) -> None:
    """Keep ``backend.workers`` runs in flight; store each result as it arrives."""
    queue = list(reversed(todo))
    inflight: dict[Any, RunSpec] = {}
    shown: set[Warned] = set()  # warnings of the runs, shown once
    # A worker that dies breaks the local pool and ends every run in flight, and which run
    # killed it is not known: those runs are queued again and each then runs alone, so
    # that only the run that kills its worker by itself fails.
    suspects: set[str] = set()
    ran_alone: set[str] = set()
    # maxminq._progress's bar (tqdm.auto, no monitor thread; into a file or a pipe, redrawn
    # at most once a minute), closed on every way out
    bar = progress_bar(
        total=summary.total,
        initial=summary.skipped,
        desc=f"{summary.config} [{summary.scale}]",
        unit="run",
        enabled=progress,
        dynamic_ncols=True,
    )
    drawn = [0.0]  # when redraw() last redrew the bar (time.time, tqdm's clock)

    def counts() -> None:
        """The counts after the bar, shown at its next redraw."""
        if not bar.disable:  # (a disabled bar reads no run's progress)
            bar.set_postfix_str(
                f"done {summary.skipped + summary.done + summary.diverged}, "
                f"running {len(inflight)}{_inflight_progress(store, inflight.values())}, "
                f"failed {summary.failed}",
                refresh=False,
            )

    def redraw() -> None:
        """Redraw the bar if its ``mininterval`` has passed since it was last drawn (by
        this or an update): redrawn at every pass of the loop (twice a second), a sweep's
        bar written to a log file left a line every half second, 7,200 an hour."""
        if (
            not bar.disable
            and (now := time.time()) - max(drawn[0], bar.last_print_t) >= bar.mininterval
        ):
            bar.refresh()
            drawn[0] = now

    try:
        while queue or inflight:
            while queue and len(inflight) < backend.workers:
                if any(r.run_id in suspects for r in inflight.values()):
                    break  # a suspect runs alone
                if queue[-1].run_id in suspects:
                    if inflight:
                        break
                    ran_alone.add(queue[-1].run_id)
                run = queue.pop()
                # In `inflight` before it is marked running, and until its result is stored,
                # so that an interrupt at any point puts it back in the queue (below).
                # Absolute: a worker's working directory may not be this one's (a `ray start`
                # cluster's workers have the one it ran in), and a relative --out then put
                # the run's checkpoints there, where no sweep finds or removes them.
                work_dir = store.work_dir(run.run_id).absolute()
                # That of an earlier attempt must not name a process as this one's.
                (work_dir / WORKER_FILE).unlink(missing_ok=True)
                inflight[backend.submit(run, work_dir)] = run
                store.mark_running(run.run_id, keep_work=keep_work)
            counts()
            redraw()
            answers = backend.wait(list(inflight), timeout=0.5)
            # Whether the runs of these answers ran beside others, taken before any is
            # stored: a run broken beside another that finished in the same answer (listed
            # first: a set's order) was the only one left in flight, and was failed.
            beside = len(inflight) > 1
            for handle, result in answers:
                run = inflight[handle]
                if result.broken and isinstance(backend, _RayBackend):
                    # A Ray task's worker or node died, or Ray lost its answer (ray_loss):
                    # that ends this task alone (no pool breaks), so no run beside it is
                    # suspect; it runs once more, and is failed if that happens again. It
                    # was failed at once: a worker killed or OOM-killed beside the run
                    # failed a run that was fine.
                    if run.run_id not in ran_alone:
                        ran_alone.add(run.run_id)
                        why = last_line(result.error) or "?"
                        store.mark_pending(run.run_id, f"{result.lost} ({why}); run again")
                        queue.append(run)  # next
                        del inflight[handle]
                        continue
                elif (
                    result.broken
                    and run.run_id not in ran_alone
                    and (run.run_id in suspects or beside)
                ):
                    suspects.update(r.run_id for r in inflight.values())
                    store.mark_pending(run.run_id, "a worker process died while it ran "
                                       "beside others; run again alone")  # fmt: skip
                    queue.append(run)  # next
                    del inflight[handle]
                    clear_worker(store.work_dir(run.run_id), drop_empty=True)  # worker died
                    continue
                _show_warnings(result, shown)
                failed = summary.failed
                _store_result(store, run, result, summary, keep_work)
                if summary.failed > failed:  # its worker removed worker.json (execute_run):
                    # the folder goes if that was all (no checkpoint to continue from)
                    clear_worker(store.work_dir(run.run_id), drop_empty=True)
                del inflight[handle]
                counts()
                bar.update(1)  # redrawn if due
    except BaseException as err:
        why = UNGUARDED_REQUEUE if isinstance(err, _UnguardedScript) else INTERRUPTED
        for run in inflight.values():
            rec = store.get(run.run_id)
            if rec is None or rec.status in ("pending", "running"):  # not stored yet
                store.mark_pending(run.run_id, why)
            clear_worker(store.work_dir(run.run_id))  # its worker is being stopped
        raise
    finally:
        try:
            with contextlib.suppress(Exception):  # not in place of the error that ends it
                counts()  # the last counts on the bar's last line
        finally:
            bar.close()


def _store_result(
    store: ResultsStore, run: RunSpec, result: _Result, summary: SweepSummary, keep_work: bool
) -> None:
    """Write one worker answer to the store: tables, then status, then drop the scratch."""
    if result.output is None:
        summary.failed += 1
        summary.failures[run.run_id] = last_line(result.error) or "unknown error"
        store.mark_finished(run.run_id, "failed", result.error, host=result.host, pid=result.pid)
        return
    try:
        store.save_tables(run, result.output.tables, result.output.status, result.output.note)
    except OSError as err:
        # Not the run's fault (a full disk or quota, a folder made read-only): recorded as
        # failed, every run after it was trained in vain, its results thrown away too.
        # The sweep stops (the run goes back in the queue with those in flight).
        store.discard_tables(run.run_id)
        where = err.filename or store.run_tables_dir(run.run_id)
        raise StoreError(
            f"{where}: cannot store the tables of run {run.run_id} ({err.strerror or err}); "
            "the run stays queued: make room, then run the same command to resume"
        ) from None
    except Exception as err:  # e.g. a table that cannot be written as CSV
        text = f"could not store the tables: {type(err).__name__}: {err}"
        summary.failed += 1
        summary.failures[run.run_id] = text
        store.discard_tables(run.run_id)
        store.mark_finished(run.run_id, "failed", text, host=result.host, pid=result.pid)
        return
    status = result.output.status
    if not keep_work:  # before the status: a kill between the two left them in OUT/work
        _keep_logs(store, run.run_id)
    store.mark_finished(
        run.run_id, status, result.output.note, host=result.host, pid=result.pid,
        work_kept=keep_work,
    )  # fmt: skip
    if status == "diverged":
        summary.diverged += 1
    else:
        summary.done += 1
        if result.output.note:  # a classic run, some of whose runs went non-finite
            summary.nonfinite[run.run_id] = result.output.note
    if not keep_work:
        store.discard_work(run.run_id)


def _drop_finished_scratch(store: ResultsStore, finished: list[RunSpec]) -> None:
    """Remove the scratch folders that finished runs left in ``OUT/work``: a sweep killed
    after it stored a run's tables and before it removed its folder (which no later sweep
    would run again, so none removed it). TensorBoard logs move out first, as when the run
    finished; a folder ``--keep-work`` kept stays."""
    for run in finished:
        if store.work_dir(run.run_id).is_dir() and not store.work_kept(run.run_id):
            _keep_logs(store, run.run_id)
            store.discard_work(run.run_id)


LOGS = "tensorboard"  # a deep run's TensorBoard folder (``tensorboard: true``) in its scratch


def _keep_logs(store: ResultsStore, run_id: str) -> None:
    """Move a finished run's TensorBoard logs out of its scratch folder before that goes:
    ``OUT/work/<run_id>/tensorboard`` -> ``OUT/tensorboard/<run_id>`` (one ``--logdir``)."""
    logs = store.work_dir(run_id) / LOGS
    if not logs.is_dir():
        return
    dest = store.out_dir / LOGS / run_id
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():  # from an earlier attempt whose files failed verification
        shutil.rmtree(dest, ignore_errors=True)
    os.replace(logs, dest)
