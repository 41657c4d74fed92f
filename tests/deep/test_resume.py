"""Stopping and resuming a training run. A run stopped by Ctrl-C (SIGINT), SIGTERM or
SIGHUP writes a checkpoint of the step it stopped at, not only the last periodic one, and
``--resume`` from it gives the tables of an uninterrupted run, bitwise; ``--resume`` with
other options is refused naming them.

The signal must not cut a step in two: each test here raises a real signal in this process
from inside the environment's ``step()`` of seed 0, after the physics moved and before the
other seed stepped and the replay was written (the worst place for it). The run must
finish that step, write its checkpoint (step 137 here, between the periodic ones of steps
120 and 160), then stop with the exit status and message of before. Each test runs
``maxminq train`` (or ``run_training``) as a subprocess at a tiny CartPole scale."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys

import gymnasium as gym
import pytest
import sweep_kinds as helpers
import torch
from deep_runs import TINY
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from helpers import TESTS, hang_up_when, rerun_while_late, terminate_or_finished

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.errors import UsageError

HERE = pathlib.Path(__file__).resolve().parent


ENV_ID = "SignalledCartPole-v0"


# 'SIGTERM:137:1': raise SIGTERM in the 137th step() call of an environment, in the first
# environment of the process to get there (the second and later: TIMES of them).
SIGNAL_VAR = "MAXMINQ_TEST_SIGNAL_AT"


# With the signal, limit the size of files the process may write to this many bytes (as a
# full disk would stop the checkpoint's write; SIGXFSZ ignored, so a write fails with EFBIG).
FULL_DISK_VAR = "MAXMINQ_TEST_FILE_LIMIT_AT_SIGNAL"


STOP = 137  # not a multiple of the checkpoint interval (40)


class SignalledCartPole(CartPoleEnv):
    """CartPole-v1 that raises a signal to its own process mid-step when ``SIGNAL_VAR`` asks
    for it (and is CartPole-v1 otherwise: the reference run uses it without the variable)."""

    sent = 0  # signals raised in this process, by every instance

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.calls = 0

    def step(self, action):  # type: ignore[no-untyped-def]
        """CartPole's step, then the signal if this is the call asked for."""
        out = super().step(action)
        self.calls += 1
        plan = os.environ.get(SIGNAL_VAR)
        if plan:
            name, at, times = plan.split(":")
            if self.calls == int(at) and SignalledCartPole.sent < int(times):
                SignalledCartPole.sent += 1
                limit = os.environ.get(FULL_DISK_VAR)
                if limit:
                    import resource

                    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
                    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), hard))
                signal.raise_signal(getattr(signal, name))  # delivered before it returns
        return out


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=SignalledCartPole, max_episode_steps=500)


from maxminq.deep.train import read_tables  # noqa: E402
from maxminq.experiments.config import load_config  # noqa: E402
from maxminq.experiments.registry import execute_deep  # noqa: E402

MODULE_ENV = f"{pathlib.Path(__file__).stem}:{ENV_ID}"


_ARGV, _KW = helpers.tiny_train(200, bias_every=50)  # a checkpoint every 40 steps


TRAIN = [MODULE_ENV if a == "CartPole-v1" else a for a in _ARGV]


KW = {**_KW, "env_id": MODULE_ENV}


CLI = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The tables of the run uninterrupted (no signal asked for in this process)."""
    out = tmp_path_factory.mktemp("whole") / "run"
    with torch.random.fork_rng():
        run_training(TrainConfig(**KW), out, resume=False, progress=False)
    return read_tables(out)


def _run(
    code: list[str], plan: str, *argv: str, file_limit: int | None = None
) -> subprocess.CompletedProcess:
    """``python code... argv`` with the test environment importable and ``plan`` as the
    signal to raise (see ``SIGNAL_VAR``; ``file_limit``: ``FULL_DISK_VAR``)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", SIGNAL_VAR: plan}
    if file_limit is not None:
        env[FULL_DISK_VAR] = str(file_limit)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(TESTS), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, *code, *argv], capture_output=True, text=True, timeout=120, env=env
    )


def _checkpoint_step(out: pathlib.Path) -> int:
    """The step of the checkpoint in ``out``."""
    return int(torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"])


# run_training from a Python program (a notebook, a script): the KeyboardInterrupt says the
# checkpoint's step, and the caller's handlers are back afterwards.
API = f"""
import signal, sys
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import run_training
handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
try:
    run_training(TrainConfig(**{KW!r}), sys.argv[1], resume=False, progress=False)
except KeyboardInterrupt as err:
    back = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    print(err.checkpoint_step, back)
    sys.exit(7)
"""


RETURNING_HANDLER = f"""
import signal, sys
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import run_training
seen = []
def note(signum, frame):  # a handler that returns: e.g. one that sets a flag to stop later
    seen.append(signum)
signal.signal(signal.SIGTERM, note)
out = run_training(
    TrainConfig(**{KW!r}), sys.argv[1], resume=False, progress=False, stop_after={STOP}
)
back = signal.getsignal(signal.SIGTERM) is note
signal.raise_signal(signal.SIGTERM)  # after the run: the caller's handler must get it
print(out == {{}}, back, len(seen))
"""


SWEEP = """
name: interrupted
kind: deep
fixed: {env_id: CartPole-v1, agent: maxmin-dqn, n: 2, lr: 0.001, steps: 400, seeds: [0],
        learning_starts: 40, buffer_size: 200, target_update: 30, eval_episodes: 2,
        checkpoint_every: 400}
scales: {quick: {}, paper: {}}
"""


SECOND_CTRL_C_WHILE_A_RESULT_IS_HALF_SENT = """
import os, pathlib, signal, struct, sys, threading, time
from maxminq.experiments.runner import _LocalBackend

def stubborn(flag):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a run that does not end on SIGTERM
    pathlib.Path(flag).touch()
    time.sleep(120)

if __name__ == "__main__":
    flag = sys.argv[1]
    backend = _LocalBackend(1)
    backend._pool.submit(os.getpid).result(timeout=60)  # workers and result thread running
    backend._pool.submit(stubborn, flag)
    while not os.path.exists(flag):
        time.sleep(0.01)
    # A message header promising 1,000 bytes, then 10 of them: what a worker killed while
    # sending its tables leaves in the result pipe.
    os.write(backend._pool._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
    time.sleep(0.5)
    manager = backend._pool._executor_manager_thread
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()  # the second Ctrl-C
    start = time.monotonic()
    try:
        backend.abort()  # the first Ctrl-C's: waits up to STOP_GRACE for the worker
    except KeyboardInterrupt:
        print(f"cut short after {time.monotonic() - start:.1f} s", flush=True)
    manager.join(timeout=20)
    print("ended" if not manager.is_alive() else "alive", flush=True)
    os._exit(0)  # not the interpreter's exit, which joins that thread: it hung there
"""


STUBBORN_WORKER = """
import multiprocessing, signal, sys, time
from maxminq.experiments.runner import _stop_workers

def stubborn(ready):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a worker that does not end on SIGTERM
    ready.set()
    time.sleep(120)

if __name__ == "__main__":
    spawn = multiprocessing.get_context("spawn")
    ready = spawn.Event()
    worker = spawn.Process(target=stubborn, args=(ready,))
    worker.start()
    ready.wait(60)
    start = time.monotonic()
    _stop_workers([worker], grace=3.0, notice=True)
    worker.join(10)
    print(worker.exitcode, round(time.monotonic() - start))
"""


def test_resume_names_differing_keyword_options_as_json(tmp_path) -> None:
    """``--resume`` with other ``--env-kwargs`` named them as Python's ``{'x': True}``,
    which ``--env-kwargs`` (JSON) does not take back."""
    config = TrainConfig(**{**TINY, "checkpoint_every": 100}, agent="dqn")
    run_training(config, tmp_path / "run", progress=False, stop_after=100)
    other = TrainConfig(
        **{**TINY, "checkpoint_every": 100},
        agent="dqn",
        env_kwargs={"sutton_barto_reward": True},
        optimizer_kwargs={"alpha": 0.9},
    )
    with pytest.raises(UsageError) as info:
        run_training(other, tmp_path / "run", progress=False)
    text = str(info.value)
    assert '--env-kwargs default (now {"sutton_barto_reward": true})' in text
    # CartPole: torch's options, shown in full (as given back they are the same run)
    assert (
        '--optimizer-kwargs {"alpha": 0.99, "eps": 1e-08} (now {"alpha": 0.9, "eps": 1e-08})'
        in text
    )


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(("name", "status", "how"), [
    ("SIGTERM", 143, "terminated"), ("SIGINT", 130, "interrupted"),
])  # fmt: skip
def test_a_signal_mid_step_checkpoints_that_step_and_resume_gives_the_whole_run(
    whole, tmp_path, capsys, name: str, status: int, how: str
) -> None:
    """The signal lands inside step 137 (periodic checkpoints at 120 and 160): the
    checkpoint is then that of step 137, the exit status and last line are those of before
    (143 'terminated' / 130 'interrupted'), the message names the step, no temporary is
    left, and --resume finishes to the uninterrupted run's tables, bitwise. (Before, the
    checkpoint was that of step 120: 17 steps lost.)"""
    out = tmp_path / "run"
    done = _run(["-c", CLI], f"{name}:{STOP}:1", *TRAIN, "--out", str(out))
    assert done.returncode == status, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step {STOP} (of 200); the "
        "same command with --resume continues from it",
        f"maxminq train: {how}",
    ], done.stderr
    assert _checkpoint_step(out) == STOP
    assert not (out / "runs.csv").exists() and not list(out.rglob("*.tmp"))
    assert main([*TRAIN, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    helpers.same_tables(read_tables(out), whole)


@pytest.mark.usefixtures("torch_one_thread")
def test_a_stop_whose_checkpoint_cannot_be_written_says_so(whole, tmp_path, capsys) -> None:
    """SIGTERM in step 137 on a disk that just filled up: the stop's own checkpoint fails.
    The run still stops (exit 143), says in one line why that checkpoint is missing (it
    said nothing: the write error was dropped for the signal), and names the periodic
    checkpoint of step 120 it keeps, whole, from which --resume gives the uninterrupted
    run."""
    out = tmp_path / "run"
    done = _run(["-c", CLI], f"SIGTERM:{STOP}:1", *TRAIN, "--out", str(out), file_limit=4096)
    assert done.returncode == 143, done.stderr
    first, *rest = done.stderr.strip().splitlines()
    assert first.startswith(
        "maxminq train: the checkpoint of the step it stopped at could not be written ("
    ), done.stderr
    assert first.endswith("File too large)"), done.stderr
    assert rest == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step 120 (of 200); the "
        "same command with --resume continues from it",
        "maxminq train: terminated",
    ], done.stderr
    assert _checkpoint_step(out) == 120
    assert main([*TRAIN, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    helpers.same_tables(read_tables(out), whole)


@pytest.mark.usefixtures("torch_one_thread")
def test_no_checkpoint_at_the_signal_with_checkpoint_every_0(tmp_path) -> None:
    """--checkpoint-every 0 turns checkpoints off: a signal writes none either, and the
    message says --resume would start again, as before."""
    out = tmp_path / "run"
    argv = [*TRAIN, "--out", str(out), "--checkpoint-every", "0"]
    done = _run(["-c", CLI], f"SIGTERM:{STOP}:1", *argv)
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines() == [
        "maxminq train: no checkpoint was written yet (--checkpoint-every 0): --resume would "
        "start again",
        "maxminq train: terminated",
    ], done.stderr
    assert not (out / "checkpoint").exists() and not list(out.rglob("*.tmp"))


@pytest.mark.usefixtures("torch_one_thread")
def test_a_second_signal_before_the_step_ends_stops_at_once(whole, tmp_path, capsys) -> None:
    """A second Ctrl-C while the first waits for the end of the step (here: seed 1's
    environment, in the same step) stops at once, mid-step, without a checkpoint of that
    half-done step: the periodic one of step 120 stays, and --resume from it still gives
    the uninterrupted run."""
    out = tmp_path / "run"
    done = _run(["-c", CLI], f"SIGINT:{STOP}:2", *TRAIN, "--out", str(out))
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step 120 (of 200); the "
        "same command with --resume continues from it",
        "maxminq train: interrupted",
    ], done.stderr
    assert _checkpoint_step(out) == 120
    assert main([*TRAIN, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    helpers.same_tables(read_tables(out), whole)


@pytest.mark.usefixtures("torch_one_thread")
def test_a_second_sigterm_changes_nothing(tmp_path) -> None:
    """SIGTERM sent again before the step ends (schedulers and the sweep's process pool do)
    means the same: the step still ends with its checkpoint (137), exit 143."""
    out = tmp_path / "run"
    done = _run(["-c", CLI], f"SIGTERM:{STOP}:2", *TRAIN, "--out", str(out))
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "maxminq train: terminated", done.stderr
    assert _checkpoint_step(out) == STOP


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_run_training_from_python_checkpoints_the_step_of_the_signal(tmp_path, name: str) -> None:
    """From Python, Ctrl-C raises a KeyboardInterrupt whose checkpoint_step is the step of
    the signal, with the caller's handlers back; SIGTERM, whose handler is the default
    (die), still ends the process by SIGTERM (status -15), after the checkpoint of that
    step."""
    out = tmp_path / "run"
    done = _run(["-c", API], f"{name}:{STOP}:1", str(out))
    if name == "SIGINT":
        assert (done.returncode, done.stdout.split()) == (7, [str(STOP), "True"]), done.stderr
    else:
        assert done.returncode == -signal.SIGTERM, done.stderr
    assert _checkpoint_step(out) == STOP


@pytest.mark.usefixtures("torch_one_thread")
def test_a_caller_handler_that_returns_is_back_after_a_signal_at_the_run_s_end(tmp_path) -> None:
    """A signal whose handler returns (the caller's own, e.g. one that sets a flag) that
    comes at the run's end (its last checkpoint's write; here the step ``stop_after``
    stops at) is handed to that handler when run_training leaves; the handler must then
    be the caller's again. The deferring handler was put back after it, so every later
    SIGTERM of the process was swallowed (noted for a run long gone, never delivered)."""
    done = _run(["-c", RETURNING_HANDLER], f"SIGTERM:{STOP}:1", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "2"], done.stdout + done.stderr
    assert _checkpoint_step(tmp_path / "run") == STOP


@pytest.mark.usefixtures("torch_one_thread")
def test_a_terminated_sweep_lets_its_deep_run_checkpoint_its_step(tmp_path) -> None:
    """SIGTERM to a sweep's driver alone (Kubernetes, timeout) while a deep run trains
    (step 100 reported; its only periodic checkpoint would be that of step 400): the
    driver asks its worker to stop with SIGTERM and waits, so the run writes the checkpoint
    of the step it is at (>= 100) before its worker ends; exit 143 and the sweep's line as
    before, no worker left. Resumed as the next sweep does, the run gives the tables of a
    direct uninterrupted run_training, bitwise. (Before, the worker was killed at once,
    and the run started again from step 0.)"""
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    workers: list[int] = []

    # Step 100 to the sweep's end takes a second or two here: a loaded machine that does not
    # run this process for that long lets the sweep finish (exit 0) before SIGTERM. Such a
    # run tests nothing here: it is removed and run again (at most 3 runs).

    def terminate_at_step_100() -> tuple[int, str]:
        workers.clear()  # this run's only
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )

        def training() -> bool:
            workers[:] = helpers.workers(proc.pid) or workers
            return any(helpers.progress_step(w) >= 100 for w in out.glob("work/*"))

        return terminate_or_finished(proc, training)  # once the run is at step 100

    status, err = rerun_while_late(
        terminate_at_step_100, lambda run: run[0] == 0, lambda: shutil.rmtree(out)
    )
    assert status == 143, err
    assert err.strip().splitlines() == [
        "maxminq sweep: terminated; finished runs are kept: the same command resumes"
    ], err
    # workers non-empty: the check that none is left means something only if one was seen
    assert workers and helpers.gone(workers), "the worker outlived the terminated sweep"
    (work,) = out.glob("work/*")
    assert 100 <= _checkpoint_step(work) < 400
    # What the next sweep's worker does with the run (here, not in a new worker process:
    # its start alone takes seconds), and the run uninterrupted.
    settings = load_config(config, "quick").runs[0].settings
    with torch.random.fork_rng():
        resumed = execute_deep(settings, work, False).tables
        direct = run_training(TrainConfig(**settings), tmp_path / "direct", progress=False)
    helpers.same_tables(dict(resumed), direct)


@pytest.mark.usefixtures("torch_one_thread")
def test_a_second_ctrl_c_during_the_workers_grace_does_not_hang_the_exit(tmp_path) -> None:
    """A second Ctrl-C while an interrupted sweep waits for a worker that does not end on
    SIGTERM (a run in a long step, a kind that ignores it) kills the workers at once; it
    must still release the pool: its result thread, stuck on a result half sent when the
    worker died, is joined at interpreter exit, and 'maxminq sweep' hung after
    'interrupted' (the KeyboardInterrupt left abort() before it closed the result pipe)."""
    script = tmp_path / "abort.py"
    script.write_text(SECOND_CTRL_C_WHILE_A_RESULT_IS_HALF_SENT)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "ignoring")],
        capture_output=True,
        text=True,
        timeout=90,
    )
    lines = proc.stdout.split("\n")
    assert proc.returncode == 0 and lines[0].startswith("cut short after 1."), proc.stderr
    assert lines[1] == "ended", proc.stdout + proc.stderr


@pytest.mark.usefixtures("torch_one_thread")
def test_a_sweep_waiting_for_its_workers_says_so(tmp_path) -> None:
    """After Ctrl-C a sweep gives its workers up to STOP_GRACE s to checkpoint their step;
    it printed nothing meanwhile, which read as a hang. A worker still busy after a second
    gets one line saying how long the wait can last and how to cut it short (when stderr is
    a terminal: the sweep's ``abort``); one that outlasts the grace is killed."""
    script = tmp_path / "stop.py"
    script.write_text(STUBBORN_WORKER)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(-signal.SIGKILL), "3"], proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "maxminq: waiting up to 2 s for 1 worker(s) to stop (a deep run checkpoints its step "
        "first; Ctrl-C again to stop at once)"
    ], proc.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_hangup_stops_train_like_sigterm_with_a_checkpoint_of_its_step(tmp_path) -> None:
    """SIGHUP once step 100 of 4,000 is reported (periodic checkpoints every 40: step 80 the
    last one before; 4,000 so that a loaded machine cannot finish the run before it stops):
    exit 129, the checkpoint of the step it stopped at (100 or later),
    the --resume line, then 'maxminq train: terminated by SIGHUP'. Before, it died at once (exit -1,
    no message, the checkpoint of step 80 at best)."""
    argv, _ = helpers.tiny_train(4000, bias_every=100)
    out = tmp_path / "hung"
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,
        preexec_fn=helpers.default_sighup,
    )
    status, err = hang_up_when(proc, lambda: helpers.progress_step(out) >= 100)
    assert status == 129, err
    step = int(torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000, err
    assert err.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step {step:,} (of 4,000); the "
        "same command with --resume continues from it",
        "maxminq train: terminated by SIGHUP",
    ], err
