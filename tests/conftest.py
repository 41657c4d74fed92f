"""Test-wide settings: headless SDL/matplotlib, Ray without an auth token; shared fixtures."""

import os

import pytest

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
