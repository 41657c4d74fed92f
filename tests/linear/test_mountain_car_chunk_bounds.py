"""``maxminq experiment mountain-car --runs 100000000000``: the command split the runs into
chunks of 200 before its memory check, building 5 * 10**8 chunk bounds, and ended in a
MemoryError traceback (or the OOM killer) instead of the one line naming --runs that the
toy MDP gives. Run in a subprocess whose address space is capped (RLIMIT_AS, 6 GB), so
that a regression fails here as a MemoryError, never by exhausting the machine."""

from __future__ import annotations

import subprocess
import sys

import pytest

LIMIT = 6 * 2**30


@pytest.mark.parametrize("experiment", ["mountain-car", "toy-mdp"])
def test_runs_beyond_memory_are_one_line_before_any_chunking(tmp_path, experiment) -> None:
    argv = ["experiment", experiment, "--runs", "100000000000", "--episodes", "1",
            "--no-progress", "--out", str(tmp_path / "out")]  # fmt: skip
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, {LIMIT}))\n"
        "from maxminq.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    (line,) = proc.stderr.splitlines()
    assert line.startswith("maxminq experiment: error: --runs: these settings need at least ")
    assert line.endswith("make --runs smaller"), line
    assert not (tmp_path / "out" / "mountain_car.csv").exists()
    assert not (tmp_path / "out" / "toy_mdp.csv").exists()
