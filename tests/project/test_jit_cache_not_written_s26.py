"""A kernel cache that cannot be written (a full disk, a quota, a file-size limit) must not
end the work: numba raised the OSError of its cache save through the kernel's first call, so
a run died on an optional speed-up after its kernel had compiled (found with a file-size
limit: 'maxminq experiment: error: File too large', naming no output)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import REPO

CODE = """
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
import maxminq._jit as jit
jit.CACHE_DIR = Path(sys.argv[1])  # a fresh cache: nothing of it is on disk yet
resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))  # no cache file fits

@jit.njit
def plus_one(x):
    return x + 1

@jit.njit
def times_two(x):
    return 2 * x

print(plus_one(41), times_two(21), plus_one(1.5))
"""


def test_kernels_run_and_warn_once_when_their_cache_cannot_be_written(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    script = tmp_path / "kernels.py"  # numba caches kernels of a file only
    script.write_text(textwrap.dedent(CODE))
    proc = subprocess.run(
        # every warning shown, as the command line shows each maxminq warning: Python's
        # default filter alone would show the same text from the same line once anyway
        [sys.executable, "-W", "always", str(script), str(cache)],
        capture_output=True, text=True, timeout=240,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["42", "42", "2.5"]
    # three compilations failed to save; the user is told once, naming the cache and why
    assert proc.stderr.count("CacheNotWrittenWarning") == 1, proc.stderr
    assert "File too large" in proc.stderr and str(cache) in proc.stderr, proc.stderr
    # at the script's line that ran the first kernel, not inside numba or maxminq
    where = rf"^{re.escape(str(script))}:\d+: CacheNotWrittenWarning"
    assert re.search(where, proc.stderr, re.M), proc.stderr
    # numba's temporaries of the failed saves are gone: no cache file looks written
    left = [p.name for p in cache.rglob("*") if p.is_file() and p.stat().st_size > 0]
    assert left == [], left
