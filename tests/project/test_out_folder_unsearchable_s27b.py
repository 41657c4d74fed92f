"""An ``--out`` folder one may not look into (no search right: mode 0600) is the one-line
'--out: cannot write in OUT (Permission denied)', exit 2, as it was before c8d345a. That
commit's check of what the folder holds (cli.output_kind) ran first and its look at
OUT/results.sqlite raised: 'maxminq theory: error: OUT/results.sqlite: Permission denied',
exit 1, naming no option. Run as nobody when the tests run as root (who may look into
anything), as tests/experiments/test_merge_read_only_out_s27b.py does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import as_nobody


def test_an_out_folder_one_may_not_look_into_is_the_one_line_error_naming_out() -> None:
    base = Path(tempfile.mkdtemp(prefix="maxminq-unsearchable-out-"))  # not tmp_path: 0700
    base.chmod(0o755)
    locked = base / "locked"
    locked.mkdir()
    locked.chmod(0o600)  # root's when run as root: nobody may not search it; else the owner's
    try:
        argv = [sys.executable, "-m", "maxminq.cli", "theory", "--out", str(locked)]
        argv += ["--m-max", "2", "--n-max", "2", "--samples", "10", "--variance-samples", "10"]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(
            as_nobody([*argv, "--no-progress"]),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=base,
            env=env,
        )
        assert done.returncode == 2, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last == f"maxminq theory: error: --out: cannot write in {locked} (Permission denied)"
    finally:
        locked.chmod(0o700)
        shutil.rmtree(base, ignore_errors=True)
