"""Warnings that a sweep's runs give in their workers (e.g. an environment without a time
limit, now an EnvWarning from run_training) reach the sweep's caller once, as warnings of
the driver: the command prints one line, not Python's two lines from every worker."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from maxminq.deep.config import EnvWarning
from maxminq.experiments.config import config_from_document
from maxminq.experiments.registry import KINDS, RunKind, RunOutput
from maxminq.experiments.runner import run_sweep

HERE = Path(__file__).resolve().parent
MESSAGE = "Line-v0 has no time limit: a test episode the policy never ends never finishes"


def validate_warn(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of a warning run: its number ``k``."""
    return {"k": int(settings["k"])}


def execute_warn(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Warn as a deep run on an uncapped environment does (twice), and of something else
    once, then return one row."""
    warnings.warn(MESSAGE, EnvWarning, stacklevel=2)
    warnings.warn(MESSAGE, EnvWarning, stacklevel=2)
    warnings.warn("not a maxminq warning", RuntimeWarning, stacklevel=2)
    return RunOutput({"t": pd.DataFrame({"k": [settings["k"]]})})


def register() -> None:
    """The kind of this file (also for a script that runs a sweep of it)."""
    KINDS["warn17"] = RunKind("warn17", validate_warn, execute_warn)


DOC = {"name": "warns", "kind": "warn17", "grid": {"k": [1, 2, 3, 4]}, "scales": {"quick": {}}}

CLI = """
import sys
sys.path.insert(0, {tests!r})
import test_sweep_warnings as kinds
from maxminq.cli import main

if __name__ == "__main__":
    kinds.register()
    raise SystemExit(main(sys.argv[1:]))
"""


@pytest.fixture
def warn_kind():
    """The kind of this file, registered while a test runs."""
    register()
    yield
    KINDS.pop("warn17", None)


def test_a_warning_of_every_run_reaches_the_caller_once(tmp_path, warn_kind):
    """Four runs in two workers, each warning twice: the caller of run_sweep gets the
    EnvWarning once (it was printed by the workers, and never reached the caller)."""
    config = config_from_document(DOC, tmp_path / "warns.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run_sweep(config, tmp_path / "out", workers=2, progress=False)
    assert summary.done == 4
    ours = [w for w in caught if issubclass(w.category, EnvWarning)]
    assert [str(w.message) for w in ours] == [MESSAGE]


def test_the_command_prints_a_run_warning_as_one_line(tmp_path):
    """`maxminq sweep`: the runs' EnvWarning is one line, `maxminq sweep: warning: ...`,
    once; warnings of other kinds stay where they arose (the workers' stderr)."""
    config = tmp_path / "warns.yaml"
    config.write_text("name: warns\nkind: warn17\ngrid: {k: [1, 2, 3, 4]}\nscales: {quick: {}}\n")
    script = tmp_path / "cli17w.py"
    script.write_text(CLI.format(tests=str(HERE)))
    cmd = [sys.executable, str(script), "sweep", str(config), "--out", str(tmp_path / "out")]
    proc = subprocess.run(cmd + ["--workers", "2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines.count(f"maxminq sweep: warning: {MESSAGE}") == 1, proc.stderr
    assert not any("EnvWarning" in line or "warnings.warn(" in line for line in lines)
    assert sum("RuntimeWarning: not a maxminq warning" in line for line in lines) == 4
