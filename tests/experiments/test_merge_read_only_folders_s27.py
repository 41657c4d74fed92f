"""``maxminq merge`` of machines' folders that the merging user may not write (an archive,
a colleague's folder, a read-only mount): they are only read (their databases as
``maxminq status`` reads such a folder), the merged folder holds every run, and the
folders are left as they were. Run as a user who may not write what root wrote (nobody)
when the tests run as root, as tests/experiments/test_worker_deaths.py reads such
results.

A finished run's TensorBoard logs (``OUT/tensorboard/<run_id>``) came with their source's
read-only folder modes: the merging user could not delete them, and a second merge into
that ``OUT`` could not remove the old one (its ``.OUT.merge-*.tmp`` stayed beside it, its
logs folder undeletable). Now the copied folders are writable by their owner.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from helpers import as_nobody, nobodys_folder, store_finished_toy_runs

from maxminq.experiments.store import ResultsStore


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_merge_reads_folders_it_may_not_write_and_leaves_them_as_they_were() -> None:
    base = Path(tempfile.mkdtemp(prefix="maxminq-merge-ro-"))  # not tmp_path: 0700 parents
    base.chmod(0o755)
    try:
        folders = [base / "one", base / "two"]
        for i, folder in enumerate(folders):  # one run each
            runs = store_finished_toy_runs(folder, [0.1, 0.2], slice(i, i + 1))
        logs = folders[0] / "tensorboard" / runs[0].run_id / "seed0"  # a deep run's
        logs.mkdir(parents=True)
        (logs / "events.out.tfevents.1").write_bytes(b"scalars")
        before = [_files(folder) for folder in folders]
        for path in [p for folder in folders for p in [folder, *folder.rglob("*")]]:
            path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        dest = nobodys_folder(base / "mine")
        merged = dest / "merged"
        argv = [sys.executable, "-m", "maxminq.cli", "merge", *map(str, folders)]
        for _ in range(2):  # the second merges into the first's OUT, which it replaces
            done = subprocess.run(
                as_nobody([*argv, "--out", str(merged)]), capture_output=True, text=True,
                timeout=120, cwd=base, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert "2 runs, 2 finished (" in done.stdout
        assert [_files(folder) for folder in folders] == before  # nothing written there
        assert sorted(p.name for p in dest.iterdir()) == ["merged"]  # no old OUT left
        copied = merged / "tensorboard" / runs[0].run_id / "seed0"
        assert (copied / "events.out.tfevents.1").read_bytes() == b"scalars"
        folders_in = [merged, *(p for p in merged.rglob("*") if p.is_dir())]
        assert all(p.stat().st_mode & stat.S_IWUSR for p in folders_in)
        with ResultsStore(merged, create=False) as store:
            assert sorted(r.status for r in store.records()) == ["done", "done"]
            assert all(store.verify_tables(r.run_id) is None for r in store.records())
    finally:
        for path in [base, *base.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(base)
