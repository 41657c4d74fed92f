"""maxminq experiment's workers (--workers > 1, spawned processes) hand their maxminq
warnings to the command, which shows each once as its one line: a worker whose kernel cache
could not be written (a full disk) printed Python's two lines (numba's dispatcher.py and its
source) on its own stderr, once per worker, where the command with --workers 1 shows
'maxminq experiment: warning: ...' once."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from maxminq.cli import one_line_warnings
from maxminq.commands import experiment


def _plus_one(x: float) -> float:
    return x + 1


def _compile_on_a_full_disk(task: dict[str, Any]) -> pd.DataFrame:
    """In a worker: compile a kernel of maxminq's njit into a fresh cache whose data files
    cannot be written (ENOSPC, as numba's own write would fail on a full disk)."""
    import numba.core.caching as caching

    import maxminq._jit as jit

    def full(self: Any, name: str, data: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    caching.IndexDataCacheFile._save_data = full  # this worker process only
    jit.CACHE_DIR = Path(task["cache"])
    kernel = jit.njit(_plus_one)
    return pd.DataFrame({"value": [kernel(task["x"])]})


def test_a_workers_warning_is_the_commands_one_line_once(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    tasks = [{"runs": 1, "x": x, "cache": str(tmp_path / "cache")} for x in (1.0, 41.0)]
    with one_line_warnings("experiment"):
        frames = experiment._run_tasks(_compile_on_a_full_disk, tasks, 2, False, "test")
    assert [list(f["value"]) for f in frames] == [[2.0], [42.0]]
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "kernel cache could not be written" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith(
        "maxminq experiment: warning: numba's kernel cache could not be written "
        "(No space left on device)"
    ), err
    assert "CacheNotWrittenWarning" not in err and "dispatcher.py" not in err, err
