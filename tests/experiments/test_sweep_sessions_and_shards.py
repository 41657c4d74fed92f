"""Sweeps from a session without a script file, the sweep's progress bar, and a second
reading of one sweep on several machines (``--shard K/M``, ``maxminq merge``).

The session sweep is real (the tiny toy-MDP sweep of the sweep tests, 4 runs, 2 workers),
fed to ``python -`` on stdin as a notebook's or a heredoc's code is, once for the module.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

TOY_TEXT = TOY.format(runs=5, episodes=20)

# Code read from stdin: __main__.__file__ is '<stdin>', a file that does not exist. No
# `if __name__ == "__main__":` guard, as in a notebook's cell.
STDIN_SWEEP = """
import json, threading
import __main__
import maxminq._progress
from maxminq.experiments.runner import run_sweep

# A bar into a pipe redraws at most every LOG_INTERVAL s: here never between its start and
# its end, however long the sweep takes on a busy machine.
maxminq._progress.LOG_INTERVAL = 1e9

summary = run_sweep("toy.yaml", "out", workers=2, progress=True)
print(json.dumps({
    "ok": summary.ok, "done": summary.done, "failed": summary.failed,
    "failures": summary.failures,
    "threads": sorted(t.name for t in threading.enumerate()),
    "main_file": getattr(__main__, "__file__", None),
}))
"""


@pytest.fixture(scope="module")
def stdin_sweep(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``python -`` running the tiny sweep with 2 workers and its bar on, stderr a pipe (as
    in a log or a captured notebook command): its summary (stdout) and stderr."""
    root = tmp_path_factory.mktemp("stdin_sweep")
    (root / "toy.yaml").write_text(TOY_TEXT)
    proc = subprocess.run(
        [sys.executable, "-"],
        input=STDIN_SWEEP,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {"root": root, "err": proc.stderr, **json.loads(proc.stdout.strip().splitlines()[-1])}


def test_a_sweep_from_stdin_runs_on_its_workers(stdin_sweep):
    """Spawned workers ran the main module's file again, '<cwd>/<stdin>', which does not
    exist: each printed a FileNotFoundError traceback, the pool broke and every run ended
    'failed: worker process died: BrokenProcessPool'."""
    assert stdin_sweep["failures"] == {}
    assert (stdin_sweep["ok"], stdin_sweep["done"], stdin_sweep["failed"]) == (True, 4, 0)
    assert "Traceback" not in stdin_sweep["err"]
    assert "<stdin>" not in stdin_sweep["err"]
    assert stdin_sweep["main_file"] == "<stdin>"  # hidden while spawning only, put back


def test_the_sweep_leaves_no_tqdm_monitor_thread(stdin_sweep):
    """The runner's bar was tqdm.auto's own, which starts tqdm's monitor thread and leaves
    it running after run_sweep returns (a notebook's kernel collected one)."""
    assert "tqdm_monitor" not in stdin_sweep["threads"]


def test_the_sweep_bar_in_a_pipe_is_drawn_at_its_start_and_end(stdin_sweep):
    """Written to a pipe or a file, the bar was redrawn at every pass of the runner's loop
    (twice a second, its counts refreshed each time): 14 to 79 lines for this 4-run sweep,
    7,200 an hour. Now as every bar of the library there: at most every LOG_INTERVAL s
    (a minute; here made longer than the sweep), and at its end, with the last counts."""
    draws = [line for line in stdin_sweep["err"].replace("\r", "\n").splitlines() if line]
    assert all(line.startswith("tiny_toy [quick]:") for line in draws), draws
    assert len(draws) == 2, draws  # the start, the end
    assert "0/4" in draws[0]
    assert "4/4" in draws[-1] and "done 4, running 0, failed 0" in draws[-1]
