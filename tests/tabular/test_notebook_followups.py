"""Second reading of the classic run functions driven from a notebook or an interactive
session (session 23): a G defined in ``__main__`` (code fed on stdin, ``python -``, as a
notebook's cells are) with ``maxminq experiment``'s worker processes, in a class, bound in a
functools.partial, as a callable object, or deleted since it was taken."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _session(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run as a notebook cell runs: fed on stdin to a new Python, in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-"],
        input=textwrap.dedent(code),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_experiment_with_workers_refuses_a_session_g_before_any_work(tmp_path):
    """``maxminq.cli.main(["experiment", ..., "--algorithms", "__main__:median_q", "--workers",
    "2"])`` from a notebook: each spawned worker failed with "module '__main__' has no
    'median_q'" (the user had just defined it). Now one line before any work, naming the
    option and what to do; nothing is written (--workers 1 runs it: the run functions take
    it in this process, test_interactive_sessions_classic.py)."""
    code = """
    import numpy as np
    from maxminq.cli import main

    def median_q(q):
        return np.median(q, axis=-2).max(axis=-1)

    base = ["--algorithms", "__main__:median_q:3", "q_learning", "--runs", "2",
            "--episodes", "3", "--no-progress"]
    print("rc", main(["experiment", "toy-mdp", *base, "--mu", "-0.1", "--workers", "2",
                      "--out", "toy"]))
    print("rc", main(["experiment", "mountain-car", *base, "--sigma2", "1",
                      "--step-sizes", "0.1", "--max-steps", "20", "--workers", "2",
                      "--out", "mc"]))
    """
    proc = _session(code, tmp_path)
    assert [line for line in proc.stdout.splitlines() if line.startswith("rc")] == [
        "rc 2",
        "rc 2",
    ], proc.stdout
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 2, proc.stderr
    for line in errors:
        assert line == (
            "maxminq experiment: error: --algorithms: __main__:median_q is defined in this "
            "session (a notebook, an interactive Python, python -), which the --workers 2 "
            "worker processes cannot import; use --workers 1, or define median_q in a module "
            "of yours (e.g. my_ops.py on PYTHONPATH) and name it 'my_ops:median_q'"
        )
    assert not (tmp_path / "toy").exists() and not (tmp_path / "mc").exists()
