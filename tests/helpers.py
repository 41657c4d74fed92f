"""Helpers shared by test files (``from helpers import ...``: pytest's ``pythonpath`` puts
tests/ on the path, as for run_folders and line_env): the repository's and tests/' paths,
signalling a real process at a chosen moment, the one stderr line of a command refused
with exit status 2, and code run as a notebook's cell runs (:func:`stdin_session`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[1]  # the repository
TESTS = REPO / "tests"

T = TypeVar("T")


def rerun_while_late(
    run: Callable[[], T], late: Callable[[T], bool], undo: Callable[[], None], runs: int = 3
) -> T:
    """The result of ``run()``, a scenario that signals a process at a chosen moment (a
    step reached, a first file in place), run again while ``late(result)`` proves the
    signal came after that moment: the process had finished, or had made the write the
    signal was to precede. On a loaded machine the test's process may not run for a second
    or more between seeing the moment and sending the signal; such a run says nothing about
    the moment, so ``undo()`` removes what it left and the scenario runs again, at most
    ``runs`` times in all; that many late runs fail (AssertionError with the last result).

    ``late`` must hold only of runs that are late beyond doubt, never of a wrong outcome:
    every other run is returned as it is, for the test to check all of it."""
    for attempt in range(1, runs + 1):
        result = run()
        if not late(result):
            return result
        if attempt < runs:
            undo()
    raise AssertionError(f"the signal came late in all {runs} runs; the last gave {result!r}")


def terminate_or_finished(proc: subprocess.Popen, ready: Callable[[], bool]) -> tuple[int, str]:
    """``sweep_kinds.terminate_when(proc, ready)`` (SIGTERM to ``proc`` once
    ``ready()``; its exit status and stderr), except that a process that ended with status
    0 before ``ready()`` held gives ``(0, "")`` instead of failing: a run that finished
    before the signal (late, for :func:`rerun_while_late`). Any other early end fails as
    there."""
    from sweep_kinds import terminate_when

    try:
        return terminate_when(proc, ready)
    except AssertionError:  # "it ended first" or "it never started work" (then killed: -9)
        if proc.returncode != 0:
            raise
        return 0, ""


def hang_up_when(proc: subprocess.Popen, ready: Callable[[], bool]) -> tuple[int, str]:
    """SIGHUP to ``proc``'s process group (started with ``start_new_session``, as a
    terminal's foreground job; a closed terminal signals the whole group) once ``ready()``
    holds; its exit status and stderr."""
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, f"it ended first: {proc.communicate()}"
        assert ready(), "it never started work"
        os.killpg(proc.pid, signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours: started by this test
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def error_line(capsys, argv: list[str]) -> str:
    """The one stderr line of a command that must fail with exit status 2."""
    from maxminq.cli import main

    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def stdin_session(
    code: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``code`` (dedented) run as a notebook's cell or a ``python - <<EOF`` script runs: fed
    on stdin to a new Python, so its definitions live in a ``__main__`` without a file;
    stdout and stderr pipes (not a terminal), matplotlib headless, ``src/`` and ``tests/``
    importable. Its exit status must be 0 (else its stderr's end is the failure)."""
    proc = subprocess.run(
        [sys.executable, "-"],
        input=textwrap.dedent(code),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(TESTS)]),
            "MPLBACKEND": "Agg",
        },
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


#: The user id (and group id) of nobody, as whom the tests run what a user who may not
#: write root's files runs, when they run as root.
NOBODY = 65534


def as_nobody(argv: list[str]) -> list[str]:
    """``argv`` run as nobody when the tests run as root (who may write anything, and
    hard-link anything); else as it is."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


def nobodys_folder(path: Path) -> Path:
    """``path`` made as a new folder, nobody's when the tests run as root (the folder a
    command run by :func:`as_nobody` writes into)."""
    path.mkdir()
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    return path


def store_finished_toy_runs(folder: Path, mus: list[float], which: slice = slice(None)) -> list:
    """A sweep folder (``folder``) of config ``a`` (toy MDP, Q-learning, one run per mu of
    ``mus``, swept at scale quick) holding the runs ``config.runs[which]`` finished, with a
    one-row table each; returns the config's runs."""
    import pandas as pd

    from maxminq.experiments.config import config_from_document
    from maxminq.experiments.shard import record_sweep
    from maxminq.experiments.store import ResultsStore

    fixed = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}
    doc = {"name": "a", "kind": "toy_mdp", "fixed": fixed, "grid": {"mu": mus}}
    config = config_from_document({**doc, "scales": {"quick": {}}}, folder.parent / "a.yaml")
    with ResultsStore(folder, lock=True) as store:
        store.register(config.runs)
        record_sweep(store, "a", "quick", config.runs, None)
        for run in config.runs[which]:
            store.mark_running(run.run_id)
            store.save_tables(run, {"toy_mdp": pd.DataFrame({"episode": [1], "x": [0.5]})})
            store.mark_finished(run.run_id)
    return config.runs


def merge_as_nobody(folders: list[Path], out: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``maxminq merge FOLDERS --out OUT`` in a process of its own, as nobody when the tests
    run as root (:func:`as_nobody`), its output captured."""
    argv = [sys.executable, "-m", "maxminq.cli", "merge", *map(str, folders), "--out", str(out)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        as_nobody(argv), capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )
