"""Test-wide settings: headless SDL/matplotlib, Ray without an auth token; shared fixtures."""

import os
import signal
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


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread_per_test_process():
    """torch on one thread in each process that runs tests (as ``run_training`` and
    ``maxminq train`` default to): its default, one thread per core, put the two xdist
    workers' four OpenMP threads on two cores, where each spun waiting for the others
    (Catcher trainings of a few seconds took 25-40 times longer, and a loaded machine made
    it worse). Tests of what a thread count changes set theirs (``threads=2``,
    ``torch.set_num_threads``); the processes the tests start keep torch's default."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture
def theory_kinds():
    """The test-only ``theory_mc`` run kinds of ``sweep_kinds``, registered while a
    test runs."""
    import sweep_kinds as helpers

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
    "test_resume.py",
    "test_report.py",
    "test_examples.py",
    "test_signals.py",
    "test_benchmarks.py",
    "test_own_study.py",
    "test_mountain_car.py",
    "test_train_failures.py",
    "test_experiment_command.py",
    "test_evaluate.py",
    "test_toy_mdp.py",
    "test_published_runs.py",
    "test_report_text.py",
    "test_theory_cli.py",
    "test_worker_startup.py",
    "test_wheel.py",
    "test_library_api.py",
    "test_training.py",
    "test_python_api.py",
    "test_worker_deaths.py",
    "test_jit_cache.py",
    "test_published_section.py",
    "test_fidelity_classic.py",
    "test_claims.py",
    # heavy in a full run after torch went to one thread (S27): sweeps, sessions, processes
    "test_nonfinite_sweeps.py",
    "test_interactive_sessions.py",
    "test_examples_own_operator.py",
    "test_ray_worker_deaths.py",
    "test_sweep_failures.py",
    "test_env_errors.py",
    "test_eval_during_training.py",
    "test_examples_options.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the tests of ``RUN_FIRST``'s files first, in that order (a stable sort)."""
    rank = {name: i for i, name in enumerate(RUN_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(RUN_FIRST)))


@pytest.fixture
def unrendered_figures(monkeypatch):
    """Figures are built (every plotting call runs, and its errors are raised) but not
    rendered: ``Figure.savefig`` writes a small placeholder file instead of the PNG/SVG
    pixels, which cost most of a report's time (bbox_inches="tight" draws each figure twice).
    For tests that check a report's text, tables, claims or files, never its pictures; an
    error only rendering would raise goes unseen here, so tests of figures keep drawing."""
    from matplotlib.figure import Figure

    def placeholder(self, fname, *args, format=None, **kwargs):
        fmt = format or Path(fname).suffix.lstrip(".")
        data = b"\x89PNG\r\n\x1a\n(placeholder)" if fmt == "png" else b"<svg/>"
        if hasattr(fname, "write"):
            fname.write(data)
        else:
            Path(fname).write_bytes(data)

    monkeypatch.setattr(Figure, "savefig", placeholder)
