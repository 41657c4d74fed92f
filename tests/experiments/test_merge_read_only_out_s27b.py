"""A merge into an existing ``OUT`` that holds a folder its owner may not write (the
TensorBoard logs a maxminq before d27e903 copied read-only from read-only results, or a
folder the user made read-only) replaces ``OUT`` and removes the old one entirely. Before,
the old ``OUT`` (moved to ``.OUT.merge-*.tmp`` by the swap) was removed with
``rmtree(ignore_errors=True)``, which cannot empty a read-only folder: it stayed beside
``OUT`` for good, and every later merge's clean-up (``remove_killed_merges``) failed on it
the same way. A folder that ``OUT`` links to is not its: its modes stay as they are. Run
as nobody when the tests run as root (who may delete anything), as
tests/experiments/test_merge_read_only_folders_s27.py does.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from helpers import NOBODY, merge_as_nobody, nobodys_folder, store_finished_toy_runs

from maxminq.experiments.store import ResultsStore


def test_a_merge_removes_the_old_out_even_with_read_only_folders_in_it() -> None:
    base = Path(tempfile.mkdtemp(prefix="maxminq-merge-ro-out-"))  # not tmp_path: 0700
    base.chmod(0o755)
    try:
        folder = base / "machine"
        store_finished_toy_runs(folder, [0.1])
        dest = nobodys_folder(base / "mine")
        merged = dest / "merged"
        for attempt in range(2):
            if attempt == 1:  # OUT holds read-only folders of its owner's: notes/, notes/old/
                old = merged / "notes" / "old"
                old.mkdir(parents=True)
                (old / "a.txt").write_text("kept")
                for path in (old / "a.txt", old, old.parent):
                    if os.geteuid() == 0:  # made here by root: the owner's
                        os.chown(path, NOBODY, NOBODY)
                for path in (old, old.parent):
                    path.chmod(0o555)
                outside = base / "outside"  # a read-only folder OUT links to: left as it is
                (outside / "sub").mkdir(parents=True)
                (merged / "link").symlink_to(outside)
                if os.geteuid() == 0:
                    os.chown(merged / "link", NOBODY, NOBODY, follow_symlinks=False)
                for path in (outside / "sub", outside):
                    path.chmod(0o555)
            done = merge_as_nobody([folder], merged, cwd=base)
            assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in dest.iterdir()) == ["merged"]  # no old OUT left
        assert (merged / "notes" / "old" / "a.txt").read_text() == "kept"  # carried over
        assert (merged / "link").resolve() == outside.resolve()
        assert [stat.S_IMODE(p.stat().st_mode) for p in (outside, outside / "sub")] == [0o555] * 2
        with ResultsStore(merged, create=False) as store:
            assert [r.status for r in store.records()] == ["done"]
    finally:
        for path in [base, *base.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(base)
