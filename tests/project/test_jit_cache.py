"""numba's on-disk cache must follow every kernel source, not only the kernel's own file."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import maxminq
from maxminq import _jit

PACKAGE = Path(maxminq.__file__).resolve().parent


# Twenty Catcher fruit spawns: catcher._spawn compiles in randint / next_u64 of envs/_rng.py.
SPAWNS = """
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from maxminq.envs import catcher
assert catcher.__file__.startswith(sys.argv[1]), catcher.__file__
fx, fy = np.zeros(1, np.int64), np.zeros(1, np.int64)
rng = np.array([12345], np.uint64)
out = []
for _ in range(20):
    catcher._spawn(0, fx, fy, rng)
    out.append((int(fx[0]), int(fy[0])))
print(out)
"""


def _spawns(root: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SPAWNS, str(root)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_editing_an_inlined_helper_in_another_file_recompiles_the_kernel(tmp_path) -> None:
    copy = tmp_path / "maxminq"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    first = _spawns(tmp_path)
    assert _spawns(tmp_path) == first  # the cached kernel gives the same draws
    # A different stream constant in envs/_rng.py only (catcher.py untouched): numba's own
    # cache, keyed on catcher.py, would load the old kernel and repeat ``first``.
    rng_py = copy / "envs" / "_rng.py"
    text = rng_py.read_text()
    assert "0x9E3779B97F4A7C15" in text
    rng_py.write_text(text.replace("0x9E3779B97F4A7C15", "0x9E3779B97F4A7C17"))
    assert _spawns(tmp_path) != first


def test_cache_folder_is_named_after_every_kernel_source(tmp_path) -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in _jit.kernel_sources()}
    # the kernels' files and the files they inline from
    assert {"envs/_rng.py", "envs/catcher.py", "operators_jit.py", "tabular/agent.py"} <= names
    assert {"tabular/toy_mdp.py", "linear/mountain_car.py", "linear/tiles.py"} <= names
    assert "deep/train.py" not in names  # no numba there
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    before = _jit.sources_hash([a, b], tmp_path)
    assert _jit.sources_hash([a, b], tmp_path) == before
    b.write_text("y = 3\n")
    assert _jit.sources_hash([a, b], tmp_path) != before


def test_cache_folders_of_other_sources_go_once_a_week_old(tmp_path) -> None:
    import os
    import time

    names = ("cur", "new", "old", "in_use")
    current, fresh, stale, in_use = (tmp_path / f"numba-{name}" for name in names)
    other = tmp_path / "elsewhere"  # not a kernel cache: never touched
    eight_days_ago = time.time() - 8 * 86400
    for folder in (current, fresh, stale, in_use, other):
        (folder / "tabular").mkdir(parents=True)  # numba caches per module subfolder
        (folder / "tabular" / "agent.nbi").write_bytes(b"x")
        if folder is not fresh:
            for path in (folder / "tabular" / "agent.nbi", folder / "tabular", folder):
                os.utime(path, (eight_days_ago, eight_days_ago))
    (in_use / "tabular" / "agent.nbi").write_bytes(b"y")  # written today: still in use
    assert _jit.prune_stale_caches(current, days=7) == [stale]
    assert not stale.exists()
    assert current.exists() and fresh.exists() and in_use.exists() and other.exists()
    assert _jit.prune_stale_caches(current, days=7) == []
