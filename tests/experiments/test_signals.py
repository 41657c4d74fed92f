"""Stop signals to the long commands and their workers. SIGTERM, how batch schedulers
(SLURM, Kubernetes, ``timeout``) stop a job, and SIGHUP (a closed terminal) are handled as
Ctrl-C is: ``maxminq train``, ``sweep``, ``experiment`` and ``reproduce`` end with exit
status 128 + the signal's number and the one line ``maxminq NAME: terminated`` (plus the
command's resume hint), keep what the next run needs, leave no worker process running, and
the same command then finishes to what an uninterrupted run gives. Each test starts the real
command as a subprocess at a tiny scale and signals it alone once it has started work."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from collections import Counter
from typing import Any

import pandas as pd
import pytest
import sweep_kinds as helpers
import torch
from helpers import TESTS, hang_up_when, rerun_while_late, terminate_or_finished
from sweep_configs import TOY

from maxminq import cli
from maxminq.cli import main
from maxminq.commands import experiment
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import read_tables, run_training
from maxminq.experiments import workers
from maxminq.experiments.config import config_from_document, load_config
from maxminq.experiments.store import ResultsStore, load_results

CLI = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"


HUNG = """
name: hung
kind: deep
fixed: {env_id: CartPole-v1, agent: maxmin-dqn, n: 2, lr: 0.001, steps: 4000, seeds: [0],
        learning_starts: 40, buffer_size: 200, target_update: 30, eval_episodes: 2,
        checkpoint_every: 4000}
scales: {quick: {}}
"""


HUNG_UP_TERMINAL = """
import os, pty, sys
from maxminq.cli import _output_to_devnull_if_hung_up
master, slave = pty.openpty()
os.dup2(slave, 1); os.dup2(slave, 2)
os.close(master)  # the terminal is gone: its writes fail with EIO
try:
    os.write(2, b"x")
except OSError:
    pass
else:
    sys.exit(3)
_output_to_devnull_if_hung_up()
print("the stop's message", flush=True)
sys.stderr.write("and the bar\\n"); sys.stderr.flush()
"""


RAY_DEEP = HUNG.replace("name: hung", "name: on_ray")


HERE = TESTS


def _stopping_command(signum: int) -> types.ModuleType:
    """A command module whose run is stopped by ``signum`` (as a closed terminal or a
    scheduler stops a long command), with a resume hint as sweep's."""
    module = types.ModuleType("maxminq_test_stopped")
    module.RESUME_HINT = "the same command resumes"  # type: ignore[attr-defined]
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]

    def run(args: object) -> int:
        signal.raise_signal(signum)  # its handler runs before this returns
        return 0

    module.run = run  # type: ignore[attr-defined]
    return module


SPAWN_SCRIPT = """
import multiprocessing, os, signal, time
from maxminq.experiments.workers import ignore_terminal_signals_in_worker, workers_ignore_sigint

def worker(go):
    go.recv()  # the driver sent it SIGHUP meanwhile, before this initializer
    ignore_terminal_signals_in_worker()
    time.sleep(0.05)  # a SIGHUP still pending would be delivered now

def pending(pid):  # whether SIGHUP waits in process pid (ShdPnd or SigPnd)
    lines = [l for l in open(f"/proc/{pid}/status") if l.startswith(("ShdPnd:", "SigPnd:"))]
    return any(int(l.split()[1], 16) & (1 << (signal.SIGHUP - 1)) for l in lines)

if __name__ == "__main__":
    got = []
    signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))  # as the CLI's
    ctx = multiprocessing.get_context("spawn")
    go, tell = ctx.Pipe(duplex=False)
    with workers_ignore_sigint():
        proc = ctx.Process(target=worker, args=(go,))
        proc.start()
        os.kill(os.getpid(), signal.SIGHUP)  # the driver's own: handled, not lost
    os.kill(proc.pid, signal.SIGHUP)  # the terminal closed while the worker starts up
    deadline = time.monotonic() + 20
    while proc.exitcode is None and not pending(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.005)
    tell.send("go")
    proc.join(20)
    print(f"worker exit {proc.exitcode}")
    print(f"driver handled {len(got)} SIGHUP")
"""


def signal_from_another_thread(signum: int) -> None:
    """Send ``signum`` to the process as the kernel may deliver it: to a thread other than
    the main one (numba's, the executor's), whose signal mask is its own."""
    waiting = threading.Event()
    helper = threading.Thread(target=waiting.wait)
    helper.start()
    try:
        signal.pthread_kill(helper.ident, signum)  # type: ignore[arg-type]
    finally:
        waiting.set()
        helper.join()


def _blocked_now() -> set[int]:
    """The signals blocked in this thread now."""
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, ()))


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


# A tiny CartPole run: 200 steps, a checkpoint every 40 (the run of test_train_robustness,
# shorter).
TRAIN, TRAIN_KW = helpers.tiny_train(200, bias_every=50)


def test_ctrl_c_before_a_worker_wrote_anything_leaves_no_empty_folders(tmp_path, monkeypatch):
    """Ctrl-C in a deep sweep's first seconds (its workers still importing torch) left
    OUT/work/<run_id>/ empty for every run in flight, and so OUT/work: nothing to continue
    from. A stand-in backend plays the workers that made their folders, then the Ctrl-C."""
    from maxminq.experiments import runner
    from maxminq.experiments.store import load_results

    class Started:
        workers = 2

        def submit(self, run, work_dir):
            work_dir.mkdir(parents=True, exist_ok=True)  # as a worker does first
            return run.run_id

        def wait(self, handles, timeout):
            raise KeyboardInterrupt

        def abort(self):
            pass

    monkeypatch.setattr(runner, "_make_backend", lambda *a: Started())
    out = tmp_path / "out"
    config = config_from_document(TOY, "toy.yaml", "tiny")
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(config, out, workers=2, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [".sweep.lock", "results.sqlite"]
    with ResultsStore(out) as store:
        assert {r.status for r in store.records()} == {"pending"}
    assert load_results(out) == {}
    # A folder holding something (here a stand-in checkpoint) stays for the next attempt.
    kept = out / "work" / config.runs[0].run_id
    kept.mkdir(parents=True)
    (kept / "checkpoint").mkdir()
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(config, out, workers=2, progress=False)
    assert sorted(p.name for p in (out / "work").iterdir()) == [kept.name]


def test_a_tracker_that_cannot_start_leaves_sighup_at_its_default(
    monkeypatch, sighup_default
) -> None:
    """hangup_as_terminate puts SIGHUP's default back when starting multiprocessing's
    resource tracker fails (e.g. no process can be started): the handler it had set for
    the command stayed installed after the error."""
    import signal

    import pytest

    from maxminq import cli
    from maxminq.experiments import workers

    def cannot_start() -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(workers, "start_resource_tracker", cannot_start)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    with pytest.raises(OSError, match="no more processes"), cli.hangup_as_terminate():
        pass
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL


def test_a_hangup_stops_a_sweep_like_sigterm_and_its_deep_run_checkpoints(tmp_path) -> None:
    """SIGHUP to the sweep's process group (a closed terminal signals it all) while its
    deep run trains (step 100 reported; the only periodic checkpoint would be step 4,000):
    the worker is asked to stop and checkpoints the step it is at; the sweep ends as on
    SIGTERM (exit 129, the resume line), no worker left, the run queued again. Before, the
    driver and its worker died at once (exit -1): no checkpoint, the run left 'running'."""
    config = tmp_path / "hung.yaml"
    config.write_text(HUNG)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,  # its own group, as a terminal's foreground job
        preexec_fn=helpers.default_sighup,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while (
            proc.poll() is None
            and time.monotonic() < deadline
            and not any(helpers.progress_step(w) >= 100 for w in out.glob("work/*"))
        ):
            workers[:] = helpers.workers(proc.pid) or workers
            time.sleep(0.01)
        assert proc.poll() is None, proc.communicate()
        assert any(helpers.progress_step(w) >= 100 for w in out.glob("work/*")), "no training"
        os.killpg(proc.pid, signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours
            proc.kill()
            proc.communicate()
    assert proc.returncode == 129, err
    assert err.strip().splitlines() == [
        "maxminq sweep: terminated by SIGHUP; finished runs are kept: the same command resumes"
    ], err
    assert workers and helpers.gone(workers), "the worker outlived the sweep"
    (work,) = out.glob("work/*")
    step = int(torch.load(work / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000
    with ResultsStore(out, create=False) as store:
        assert [r.status for r in store.records()] == ["pending"]


def test_under_nohup_a_hangup_does_not_stop_the_sweep(tmp_path) -> None:
    """With SIGHUP ignored, as ``nohup`` starts a command, the sweep does not take it over:
    SIGHUP to its group once its runs are under way changes nothing, every run finishes."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=5_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    script = [sys.executable, str(TESTS / "sweep_kinds.py")]

    def nohup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = subprocess.Popen([*script, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=nohup)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and helpers.started_runs(out) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None and helpers.started_runs(out) >= 1, proc.communicate()
        os.killpg(proc.pid, signal.SIGHUP)
        stdout, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # ours
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "8 runs, 0 already done, 8 done" in stdout


def test_after_a_hangup_the_stop_writes_to_devnull_not_to_the_dead_terminal() -> None:
    """Once the terminal hung up, every write to it fails (EIO), which would end the stop
    with an OSError before the workers had their grace: stdout and stderr then go to
    /dev/null (output that still works is kept: the test above reads the sweep's line)."""
    done = subprocess.run([sys.executable, "-c", HUNG_UP_TERMINAL], capture_output=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("hangup", [False, True], ids=["sigterm", "sighup-to-group"])
def test_a_terminated_ray_sweep_lets_its_deep_run_checkpoint_its_step(
    tmp_path, hangup: bool
) -> None:
    """SIGTERM to a Ray sweep while its deep run trains (step 100 reported; its only
    periodic checkpoint would be that of step 4,000): the task is cancelled gently (Ray
    raises a KeyboardInterrupt through its SIGINT handler, which the training defers to the
    end of its step) and waited for, so the run's folder holds a checkpoint of a step >= 100;
    exit 143 (SIGHUP: 129) and the one line, the run queued again. Before, Ray was shut down at
    once and the run kept no step. The same for SIGHUP to the sweep's process group (a
    closed terminal), which Ray's own processes in the group died of at once before the
    Ray of a sweep was started with SIGHUP ignored."""
    config = tmp_path / "ray.yaml"
    config.write_text(RAY_DEEP)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    argv += ["--backend", "ray"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=hangup,  # its own group, as a terminal's foreground job
        preexec_fn=helpers.default_sighup,
    )
    ready = lambda: any(helpers.progress_step(w) >= 100 for w in out.glob("work/*"))  # noqa: E731
    sig = signal.SIGHUP if hangup else signal.SIGTERM
    status, err = helpers.terminate_when(proc, ready, timeout=180, group=hangup, sig=sig)
    lines = [line for line in err.strip().splitlines() if "INFO worker.py" not in line]
    assert status == (129 if hangup else 143), err
    assert lines[-1:] == [
        f"maxminq sweep: terminated{' by SIGHUP' if hangup else ''}; finished runs are kept: "
        "the same command resumes"
    ], err
    (work,) = out.glob("work/*")
    step = int(torch.load(work / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000
    with ResultsStore(out, create=False) as store:
        assert [r.status for r in store.records()] == ["pending"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_hangup_stops_reproduce_like_sigterm_and_its_workers(tmp_path) -> None:
    """SIGHUP to reproduce's group while two runs are in flight: exit 129 and the sweep's
    resume line (no traceback of a worker or of the resource tracker), the workers gone, no
    report written. Before, every process of the group died at once (exit -1)."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_theory.yaml").write_text(
        helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000)
    )
    out = tmp_path / "out"
    argv = ["reproduce", "--configs", str(configs), "--only", "tiny_theory", "--out", str(out)]
    argv += ["--workers", "2", "--no-progress"]
    script = [sys.executable, str(TESTS / "sweep_kinds.py")]  # the test kinds known
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=helpers.default_sighup)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = hang_up_when(proc, working)
    assert status == 129, err
    assert err.strip().splitlines() == [
        "maxminq reproduce: terminated by SIGHUP; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the command"
    assert not (out / "report.html").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_hangup_stops_experiment_and_its_workers(tmp_path) -> None:
    """SIGHUP to ``maxminq experiment mountain-car``'s group while its two workers run long
    tasks: exit 129 and 'maxminq experiment: terminated by SIGHUP' (not 'a worker process died': the
    workers ignore it, the command stops them), both workers gone, nothing written. Before,
    the whole group died at once (exit -1)."""
    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "20", "--episodes", "100000",
            "--sigma2", "50", "--algorithms", "q_learning", "--step-sizes", "0.02", "0.04",
            "--workers", "2", "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=helpers.default_sighup)  # fmt: skip
    workers: list[int] = []
    seen: dict[str, float] = {}

    def working() -> bool:  # both workers up, then 1 s into their tasks
        workers[:] = helpers.workers(proc.pid) or workers
        if len(workers) == 2:
            seen.setdefault("at", time.monotonic())
        return "at" in seen and time.monotonic() - seen["at"] > 1.0

    status, err = hang_up_when(proc, working)
    assert status == 129, err
    assert err.strip().splitlines() == ["maxminq experiment: terminated by SIGHUP"], err
    assert helpers.gone(workers), "workers outlived the command"
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    ("signum", "status", "word"),
    [(signal.SIGHUP, 129, "terminated by SIGHUP"), (signal.SIGTERM, 143, "terminated")],
    ids=["sighup", "sigterm"],
)
def test_a_stop_signal_gives_128_plus_its_number(
    signum, status, word, monkeypatch, capsys, sighup_default
) -> None:
    """SIGHUP: exit 129 (was 143, SIGTERM's) and a last line that names it."""
    monkeypatch.setitem(sys.modules, "maxminq_test_stopped", _stopping_command(signum))
    monkeypatch.setitem(cli.COMMANDS, "stopped", ("maxminq_test_stopped", "a test command"))
    monkeypatch.setitem(cli.HANGUP_COMMANDS, "stopped", False)
    assert main(["stopped"]) == status
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq stopped: {word}; the same command resumes"
    ]
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_survives_a_hangup_before_its_initializer(tmp_path) -> None:
    """Before: the worker died of it (exit -1), which broke a sweep's pool and failed the
    run in flight, though the driver stops its workers itself."""
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False,
        preexec_fn=helpers.default_sighup,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["worker exit 0", "driver handled 1 SIGHUP"], proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGHUP")
@pytest.mark.parametrize("via", ["process", "thread"])
def test_a_hangup_while_experiment_stops_its_pool_waits_for_the_clean_up(
    via: str, sighup_default
) -> None:
    """The terminal closes while the pool shuts down (after a Ctrl-C, a SIGTERM), and a
    Ctrl-C follows: the shutdown runs to its end, then the command stops with one
    ``Terminated`` (the first signal's), every handler as it was. Before, SIGHUP was not
    held back at all, and Ctrl-C and SIGTERM only by the main thread's signal mask, which a
    signal handed to another thread passes: raised inside the shutdown."""
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # so that the handler is set
    steps: list[str] = []

    class Pool:  # the part of a ProcessPoolExecutor that _stop_pool uses
        _processes: dict[int, Any] = {}

        def shutdown(self, wait: bool, cancel_futures: bool) -> None:
            for signum in (signal.SIGHUP, signal.SIGINT):
                if via == "process":
                    os.kill(os.getpid(), signum)
                else:
                    signal_from_another_thread(signum)
                time.sleep(0.05)  # a handler due runs meanwhile
            steps.append("shut down")

    sigint = signal.getsignal(signal.SIGINT)
    try:
        with cli.hangup_as_terminate(workers=False), pytest.raises(cli.Terminated):
            experiment._stop_pool(Pool(), [])  # type: ignore[arg-type]
    finally:
        cli._sigterm_received.clear()
    assert steps == ["shut down"]
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is sigint


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_train_like_ctrl_c_and_resume_gives_the_uninterrupted_run(
    tmp_path, capsys, torch_one_thread
) -> None:
    """SIGTERM once step 100 is reported (the last periodic checkpoint: step 80): exit 143,
    a checkpoint of the step it stopped at (100 or later: not the periodic one of step 80),
    what --resume will find, then 'maxminq train: terminated'; no temporary file left;
    --resume gives the tables of an uninterrupted run, bitwise (all but the wall-clock
    steps_per_s)."""
    out = tmp_path / "terminated"
    # Step 100 to the end takes under a second here: a loaded machine that does not run this
    # process for that long lets the run finish (runs.csv written, exit 0) before SIGTERM.
    # Such a run tests nothing here: it is removed and run again (at most 3 runs).

    def terminate_at_step_100() -> tuple[int, str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, *TRAIN, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        return terminate_or_finished(proc, lambda: helpers.progress_step(out) >= 100)

    status, err = rerun_while_late(
        terminate_at_step_100,
        lambda run: run[0] == 0 or (out / "runs.csv").exists(),
        lambda: shutil.rmtree(out),
    )
    assert status == 143, err
    step = int(torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step <= 200, err
    assert err.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step {step} (of 200); the "
        "same command with --resume continues from it",
        "maxminq train: terminated",
    ], err
    assert not (out / "runs.csv").exists() and not list(out.rglob("*.tmp"))
    assert main([*TRAIN, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    whole = tmp_path / "whole"
    with torch.random.fork_rng():
        run_training(TrainConfig(**TRAIN_KW), whole, resume=False, progress=False)
    helpers.same_tables(read_tables(out), read_tables(whole))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("target", ["driver", "group"])
def test_sigterm_stops_a_sweep_like_ctrl_c_and_the_same_command_finishes_it(
    tmp_path, theory_kinds, capsys, target: str
) -> None:
    """SIGTERM to the driver alone (Kubernetes, timeout) or to it and its workers (SLURM)
    while runs are in flight: exit 143, 'maxminq sweep: terminated; ...', the workers gone,
    no run left 'running' or failed; the same command then stores every run exactly once,
    with the numbers of the direct calls."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
    script = [sys.executable, str(TESTS / "sweep_kinds.py")]  # the test kinds known
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = helpers.terminate_when(proc, working, group=target == "group")
    assert status == 143, err
    assert err.strip().splitlines() == [
        "maxminq sweep: terminated; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the terminated sweep"
    with ResultsStore(out) as store:
        statuses = Counter(rec.status for rec in store.records())
    assert set(statuses) <= {"pending", "done"} and statuses["pending"] >= 1, statuses
    # The same command again, in this process (the test kinds are registered here too): the
    # process that is stopped is the one above; a second one would only start Python again.
    assert main(argv) == 0, capsys.readouterr().err
    with ResultsStore(out) as store:
        done = Counter(e["run_id"] for e in store.events() if e["event"] == "done")
        records = store.records()
    runs = load_config(config, "quick").runs
    assert {r.run_id for r in records} == {r.run_id for r in runs}
    assert {r.status for r in records} == {"done"}
    assert sorted(done.values()) == [1] * len(runs)  # each run stored once
    stored = load_results(out)["bias"]
    for run in runs:
        direct = helpers.execute_theory_mc(run.settings, tmp_path, False).tables["bias"]
        mine = stored[stored["run_id"] == run.run_id].sort_values("chunk")[list(direct.columns)]
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), direct, check_dtype=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("target", ["driver", "group"])
def test_sigterm_stops_experiment_and_its_workers_and_writes_nothing(tmp_path, target: str) -> None:
    """SIGTERM to ``maxminq experiment mountain-car`` alone, or to it and its workers, while
    its two workers run tasks of about 10^9 steps: exit 143, 'maxminq experiment:
    terminated' (not 'a worker process died'), both workers gone within seconds, no CSV,
    figure or temporary file in --out (it writes only at the end; the same command starts
    again)."""
    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "20", "--episodes", "100000",
            "--sigma2", "50", "--algorithms", "q_learning", "--step-sizes", "0.02", "0.04",
            "0.08", "--workers", "2", "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    workers: list[int] = []
    seen: dict[str, float] = {}

    def working() -> bool:  # both workers up, then 2 s into their tasks
        workers[:] = helpers.workers(proc.pid) or workers
        if len(workers) == 2:
            seen.setdefault("at", time.monotonic())
        return "at" in seen and time.monotonic() - seen["at"] > 2.0

    status, err = helpers.terminate_when(proc, working, group=target == "group")
    assert status == 143, err
    assert err.strip().splitlines() == ["maxminq experiment: terminated"], err
    assert helpers.gone(workers), "workers outlived the terminated command"
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_a_ray_sweep_like_ctrl_c(tmp_path, theory_kinds) -> None:
    """With --backend ray, ray.init put its own SIGTERM handlers in place (its core
    worker's aborts: exit 134 and a stack dump, runs in flight left 'running'), and Ray turns
    the exception a handler raises inside ray.wait into a plain KeyboardInterrupt. Now the
    same as the local backend: exit 143, the one line, the runs in flight requeued."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
    argv += ["--backend", "ray"]
    script = [sys.executable, str(TESTS / "sweep_kinds.py")]
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    status, err = helpers.terminate_when(proc, lambda: helpers.started_runs(out) >= 1, timeout=120)
    lines = [line for line in err.strip().splitlines() if "INFO worker.py" not in line]
    assert status == 143, err
    assert lines == [
        "maxminq sweep: terminated; finished runs are kept: the same command resumes"
    ], err
    with ResultsStore(out) as store:
        statuses = Counter(rec.status for rec in store.records())
    assert set(statuses) <= {"pending", "done"} and statuses["pending"] >= 1, statuses


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_main_puts_the_sigterm_handler_it_replaced_back(tmp_path, capsys) -> None:
    """main() handles SIGTERM only while its command runs: a program (or test session)
    calling it keeps its own handler afterwards, also when the command failed."""

    def mine(signum: int, frame: object) -> None:
        """A caller's own handler."""

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        assert main(["envs"]) == 0
        assert signal.getsignal(signal.SIGTERM) is mine
        argv = ["train", "--env", "CartPole-v1", "--out", str(tmp_path / "run")]
        assert main([*argv, "--threads", "0"]) == 2  # a UsageError in the command
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    capsys.readouterr()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_reproduce_like_ctrl_c_and_the_same_command_finishes_it(
    tmp_path, theory_kinds, capsys
) -> None:
    """'maxminq reproduce' runs its sweeps through the same path: SIGTERM while runs are in
    flight ends it with exit 143 and the sweep's resume hint, its workers gone and no
    report written; the same command then stores every run once and writes the report."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_theory.yaml").write_text(
        helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000)
    )
    out = tmp_path / "out"
    argv = ["reproduce", "--configs", str(configs), "--only", "tiny_theory", "--out", str(out)]
    argv += ["--workers", "2", "--no-progress"]
    script = [sys.executable, str(TESTS / "sweep_kinds.py")]  # the test kinds known
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = helpers.terminate_when(proc, working)
    assert status == 143, err
    assert err.strip().splitlines() == [
        "maxminq reproduce: terminated; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the terminated command"
    assert not (out / "report.html").exists()
    assert main(argv) == 0, capsys.readouterr().err  # the same command, in this process
    with ResultsStore(out) as store:
        done = Counter(e["run_id"] for e in store.events() if e["event"] == "done")
    assert sorted(done.values()) == [1] * 8
    assert (out / "report.html").exists()
