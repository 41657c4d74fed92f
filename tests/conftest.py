"""Test-wide settings: headless SDL/matplotlib, Ray without an auth token; shared fixtures."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

# A test run started in the background (nohup, `cmd &` in a script) inherits SIGINT
# ignored, and so would every process the tests start: the Ctrl-C tests would fail for
# want of a Ctrl-C. A handler set here is not inherited as "ignored" by those processes.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


@pytest.fixture
def theory_kinds():
    """The test-only ``theory_mc`` run kinds of ``test_sweep_helpers``, registered while a
    test runs."""
    import test_sweep_helpers as helpers

    helpers.register()
    yield
    helpers.unregister()


@pytest.fixture
def torch_one_thread():
    """Tiny nets: one torch thread is as fast, and avoids OpenMP spinning on a shared machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def sighup_default():
    """SIGHUP at its default in this process for the test (as in a terminal session; the
    suite may run under ``nohup``, which ignores it), put back afterwards."""
    import signal

    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, previous)


# Files whose tests start processes, train or sweep (tens of seconds each under `-n 2`), run
# first, heaviest first: with `-n 2 --dist worksteal` (Makefile) the short tests of the other
# files then fill the gaps, and the run does not end on one worker finishing a long test
# while the other idles. Only the order changes; tests within a file keep theirs.
RUN_FIRST = (
    "test_sweep.py",
    "test_interrupt_checkpoint.py",
    "test_report.py",
    "test_examples.py",
    "test_signals.py",
    "test_own_study.py",
    "test_mountain_car.py",
    "test_train_robustness.py",
    "test_experiment_robustness.py",
    "test_leftovers17.py",
    "test_toy_mdp.py",
    "test_published_runs.py",
    "test_report_review17.py",
    "test_theory_cli.py",
    "test_sweep_guard.py",
    "test_wheel.py",
    "test_library_api.py",
    "test_deep_train.py",
    "test_python_api.py",
    "test_sweep_review17.py",
    "test_jit_cache.py",
    "test_report_published.py",
    "test_theory_leftovers.py",
    "test_fidelity_classic.py",
    "test_claims_review.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the tests of ``RUN_FIRST``'s files first, in that order (a stable sort)."""
    rank = {name: i for i, name in enumerate(RUN_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(RUN_FIRST)))


# numba compiles maxminq's kernels on first use and caches them on disk (maxminq._jit): in a
# fresh clone each process that meets a kernel before the cache is written compiles it
# again (both pytest workers, and every sweep or experiment worker they start), some 25 s
# of CPU each time for all of them. For the whole suite under xdist, the controller starts
# one process that compiles them all while the workers collect; each worker waits for it
# before its first test. Nothing else changes: a kernel it missed is compiled where used.
WARM_DONE_VAR = "MAXMINQ_TESTS_KERNELS_WARM"
WARM_CODE = """
import sys
from pathlib import Path
try:
    import numpy as np
    from maxminq.tabular.toy_mdp import run_toy_mdp
    from maxminq.linear.mountain_car import run_mountain_car_grid
    from maxminq.envs.catcher import CatcherEnv, CatcherVectorEnv
    from maxminq.envs.pixelcopter import PixelcopterEnv, PixelcopterVectorEnv
    run_toy_mdp(mu=0.1, algorithm="maxmin", n=2, runs=1, episodes=1, seed=0)
    run_mountain_car_grid(algorithm="maxmin", n=2, sigma2=[10.0], step_sizes=[0.02], runs=1,
                          episodes=1, seed=0, max_steps=10)
    for env in (CatcherEnv(), PixelcopterEnv()):
        env.reset(seed=0)
        env.step(0)
    for vector in (CatcherVectorEnv(num_envs=2), PixelcopterVectorEnv(num_envs=2)):
        vector.reset(seed=0)
        vector.step(np.zeros(2, dtype=np.int64))
finally:
    Path(sys.argv[1]).touch()
"""


def pytest_sessionstart(session: pytest.Session) -> None:
    """The xdist controller of a whole-suite run: compile the kernels in the background."""
    config = session.config
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not workers or not whole_suite:
        return
    done = Path(tempfile.mkdtemp(prefix="maxminq-kernels-")) / "done"
    proc = subprocess.Popen(
        [sys.executable, "-c", WARM_CODE, str(done)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.environ[WARM_DONE_VAR] = f"{proc.pid}:{done}"  # the workers, started next, inherit it
    config._kernels_warming = proc  # type: ignore[attr-defined]


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """An xdist worker waits for the controller's kernel compilation (at most 5 min)."""
    pid, _, done = os.environ.get(WARM_DONE_VAR, "").partition(":")
    if not hasattr(session.config, "workerinput") or not done:
        return
    deadline = time.monotonic() + 300
    while not Path(done).exists() and time.monotonic() < deadline:
        try:  # ended without its mark (killed): a zombie until the controller reaps it
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break
        except (OSError, IndexError):
            break
        time.sleep(0.1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller reaps its compiling process (long done by then)."""
    proc = getattr(session.config, "_kernels_warming", None)
    if proc is not None:
        proc.kill()
        proc.wait()
        done = Path(os.environ[WARM_DONE_VAR].partition(":")[2])
        done.unlink(missing_ok=True)
        done.parent.rmdir()
