"""Session 18, a second reading of the SIGHUP, lock-probe and cut-episode commits (h9).

1. ``maxminq experiment`` holds a SIGHUP back while it stops its workers, as it holds back
   Ctrl-C and SIGTERM: since SIGHUP stops the command as SIGTERM does (bbc5f65), a terminal
   closed during the clean-up cut it short (workers left to die with the parent, the pool's
   queues not released).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import pytest

from maxminq import cli
from maxminq.commands import experiment

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no SIGHUP")


# ------------------------------------------------------- 1. SIGHUP during experiment's stop
def test_a_hangup_while_experiment_stops_its_pool_waits_for_the_clean_up() -> None:
    """The terminal closes while the pool shuts down (after a Ctrl-C, a SIGTERM): the
    shutdown runs to its end, then the command stops with ``Terminated``. Before, the
    ``Terminated`` was raised inside the shutdown."""
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # so that the handler is set
    steps: list[str] = []

    class Pool:  # the part of a ProcessPoolExecutor that _stop_pool uses
        _processes: dict[int, Any] = {}

        def shutdown(self, wait: bool, cancel_futures: bool) -> None:
            os.kill(os.getpid(), signal.SIGHUP)
            steps.append("shut down")

    try:
        with cli.hangup_as_terminate(workers=False), pytest.raises(cli.Terminated):
            experiment._stop_pool(Pool(), [])  # type: ignore[arg-type]
    finally:
        cli._sigterm_received.clear()
    assert steps == ["shut down"]
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    assert signal.SIGHUP not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
