"""Test-wide settings: headless SDL/matplotlib, Ray without an auth token; shared fixtures."""

import os
import signal

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
