"""A merge into an existing ``OUT`` keeps the symlinks ``OUT`` holds beside its store as
symlinks, also where a symlink cannot be hard-linked into the merged folder (a file system
without hard links; a symlink its user does not own under Linux's protected_hardlinks).
Before, the copy that stands in for the hard link followed the symlink: one to a folder
failed the whole merge (``link: Is a directory``, exit 1), one to a file became a copy of
that file, and a dangling one failed it too. Run as nobody with root's symlinks when the
tests run as root (nobody may not hard-link them), as
tests/experiments/test_merge_read_only_folders_s27.py runs its merges.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from helpers import merge_as_nobody, nobodys_folder, store_finished_toy_runs

from maxminq.experiments.store import ResultsStore


def test_a_merge_keeps_outs_symlinks_as_symlinks() -> None:
    base = Path(tempfile.mkdtemp(prefix="maxminq-merge-links-"))  # not tmp_path: 0700
    base.chmod(0o755)
    try:
        folder = base / "machine"
        store_finished_toy_runs(folder, [0.1])
        dest = nobodys_folder(base / "mine")
        merged = dest / "merged"
        (base / "data").mkdir()
        (base / "data" / "notes.txt").write_text("notes")
        links = {"data": base / "data", "notes": base / "data" / "notes.txt", "gone": base / "x"}
        for attempt in range(2):
            if attempt == 1:  # OUT holds symlinks (root's when the tests run as root)
                for name, target in links.items():
                    (merged / name).symlink_to(target)
            done = merge_as_nobody([folder], merged, cwd=base)
            assert done.returncode == 0, done.stderr
        assert {name: os.readlink(merged / name) for name in links} == {
            name: str(target) for name, target in links.items()
        }
        assert sorted(p.name for p in dest.iterdir()) == ["merged"]
        with ResultsStore(merged, create=False) as store:
            assert [r.status for r in store.records()] == ["done"]
    finally:
        shutil.rmtree(base)
