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
import threading
import time
from typing import Any

import pytest

from maxminq import cli
from maxminq.commands import experiment

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no SIGHUP")


# ------------------------------------------------------- 1. SIGHUP during experiment's stop
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


# ------------------------------------------- 2. reproduce --help: the names --only takes
def test_reproduce_help_lists_the_names_of_the_folder_only_reads(
    tmp_path, monkeypatch, capsys
) -> None:
    """In a folder with a ``configs`` folder of its own (which reproduce reads without
    --configs), ``--help`` lists its names under --only, not the installed configs, which
    ``--only`` then refuses. Before (185a74a), the installed ones, whatever the folder."""
    from maxminq.cli import main

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "my_sweep.yaml").write_text("name: my_sweep\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    only = text[text.index("--only NAMES ") : text.index("--configs DIR ")]
    assert only.endswith("those of the default --configs (configs): my_sweep "), only
    assert "catcher" not in only
