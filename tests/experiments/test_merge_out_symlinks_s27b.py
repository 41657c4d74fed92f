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
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from maxminq.experiments.config import config_from_document
from maxminq.experiments.shard import record_sweep
from maxminq.experiments.store import ResultsStore

FIXED = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}
NOBODY = 65534


def _as_owner(argv: list[str]) -> list[str]:
    """``argv`` as nobody (the owner of the merged folder) when the tests run as root."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


def test_a_merge_keeps_outs_symlinks_as_symlinks() -> None:
    base = Path(tempfile.mkdtemp(prefix="maxminq-merge-links-"))  # not tmp_path: 0700
    base.chmod(0o755)
    try:
        doc = {"name": "a", "kind": "toy_mdp", "fixed": FIXED, "grid": {"mu": [0.1]}}
        config = config_from_document({**doc, "scales": {"quick": {}}}, base / "a.yaml")
        (run,) = config.runs
        folder = base / "machine"
        with ResultsStore(folder, lock=True) as store:
            store.register(config.runs)
            record_sweep(store, "a", "quick", config.runs, None)
            store.mark_running(run.run_id)
            store.save_tables(run, {"toy_mdp": pd.DataFrame({"episode": [1], "x": [0.5]})})
            store.mark_finished(run.run_id)
        dest = base / "mine"
        dest.mkdir()
        if os.geteuid() == 0:
            os.chown(dest, NOBODY, NOBODY)
        merged = dest / "merged"
        argv = [sys.executable, "-m", "maxminq.cli", "merge", str(folder), "--out", str(merged)]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        (base / "data").mkdir()
        (base / "data" / "notes.txt").write_text("notes")
        links = {"data": base / "data", "notes": base / "data" / "notes.txt", "gone": base / "x"}
        for attempt in range(2):
            if attempt == 1:  # OUT holds symlinks (root's when the tests run as root)
                for name, target in links.items():
                    (merged / name).symlink_to(target)
            done = subprocess.run(
                _as_owner(argv), capture_output=True, text=True, timeout=120, cwd=base, env=env
            )
            assert done.returncode == 0, done.stderr
        assert {name: os.readlink(merged / name) for name in links} == {
            name: str(target) for name, target in links.items()
        }
        assert sorted(p.name for p in dest.iterdir()) == ["merged"]
        with ResultsStore(merged, create=False) as store:
            assert [r.status for r in store.records()] == ["done"]
    finally:
        shutil.rmtree(base)
