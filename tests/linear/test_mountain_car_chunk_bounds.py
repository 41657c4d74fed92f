"""``maxminq experiment mountain-car --runs 100000000000``: the command split the runs into
chunks of 200 before its memory check, building 5 * 10**8 chunk bounds, and ended in a
MemoryError traceback (or the OOM killer) instead of the one line naming --runs that the
toy MDP gives.

Run in a subprocess whose address space (RLIMIT_AS) is capped at what it has mapped once the
command's modules are imported plus 1 GiB, so that a regression fails here as a MemoryError
within seconds, never by exhausting the machine. (A fixed cap of 6 GB let the old code fill
5.8 GB of real memory over 26 s, more than a small CI machine has beside pytest's other
worker; and the imports' own mapping grows with the cores, OpenBLAS's threads about 40 MB
each, so a cap near it would fail on a large machine.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADROOM = 2**30  # the fixed command needs a few MB beyond its imports

CAPPED = """\
import resource, sys
from maxminq.cli import main
# The modules the command imports on its way to the memory check, imported before the cap:
import maxminq.commands.experiment, maxminq.linear.mountain_car, maxminq.tabular.toy_mdp
with open("/proc/self/status") as f:
    mapped = next(int(t.split()[1]) * 1024 for t in f if t.startswith("VmSize:"))
cap = mapped + {headroom}
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("experiment", ["mountain-car", "toy-mdp"])
def test_runs_beyond_memory_are_one_line_before_any_chunking(tmp_path, experiment) -> None:
    argv = ["experiment", experiment, "--runs", "100000000000", "--episodes", "1",
            "--no-progress", "--out", str(tmp_path / "out")]  # fmt: skip
    code = CAPPED.format(headroom=HEADROOM, argv=argv)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    (line,) = proc.stderr.splitlines()
    assert line.startswith("maxminq experiment: error: --runs: these settings need at least ")
    assert line.endswith("make --runs smaller"), line
    assert not (tmp_path / "out").exists()
