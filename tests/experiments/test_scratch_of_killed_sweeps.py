"""What a SIGKILLed sweep leaves in ``OUT/work``, and who removes it.

A sweep killed after it stored a run's tables and before it removed the run's scratch
folder left that folder for good: no later sweep runs the finished run again. And a pool
worker whose driver died before the worker asked the kernel to die with it was handed to
a subreaper (a container's init process, not pid 1), kept running the runs queued to it and
wrote into their folders after the resumed sweep had stored them and removed the folders.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sweep_kinds
from helpers import REPO

from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore


def _config(tmp_path: Path, kind: str = "theory_mc_logs") -> Path:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(sweep_kinds.THEORY_CONFIG.format(kind=kind, samples=20_000))
    return path


def test_a_finished_runs_scratch_left_by_a_kill_is_removed_by_the_next_sweep(
    tmp_path, theory_kinds
):
    """The state a kill between storing the tables (manifest written) and the registry's
    'done' leaves: the row still 'running', the scratch folder with its checkpoint and its
    TensorBoard logs. The next sweep takes the run as done, moves the logs to
    OUT/tensorboard and removes the folder."""
    path = _config(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False).done == 8
    with ResultsStore(out) as store:
        run_id = store.records()[0].run_id
    logs = out / "tensorboard" / run_id
    expected_logs = (logs / "events.out").read_text()
    work = out / "work" / run_id
    work.mkdir(parents=True)
    shutil.move(logs, work / "tensorboard")
    (work / "checkpoint.json").write_text("{}")
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("UPDATE runs SET status='running', finished=NULL WHERE run_id=?", (run_id,))
    db.close()

    again = run_sweep(path, out, workers=2, progress=False)
    assert (again.skipped, again.done) == (8, 0)  # nothing ran again
    assert not (out / "work").exists(), sorted(p.name for p in (out / "work").iterdir())
    assert (logs / "events.out").read_text() == expected_logs
    with ResultsStore(out) as store:
        assert store.get(run_id).status == "done"


def test_a_folder_that_keep_work_kept_stays_through_a_later_sweep_without_it(
    tmp_path, theory_kinds
):
    path = _config(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False, keep_work=True).done == 8
    kept = sorted(p.name for p in (out / "work").iterdir())
    assert len(kept) == 8
    assert run_sweep(path, out, workers=2, progress=False).skipped == 8
    assert sorted(p.name for p in (out / "work").iterdir()) == kept
    assert all((out / "work" / i / "tensorboard" / "events.out").is_file() for i in kept)


def test_a_run_finished_without_keep_work_is_not_taken_for_a_kept_one(tmp_path, theory_kinds):
    """The registry says which finished runs --keep-work kept: the last attempt decides."""
    path = _config(tmp_path, "theory_mc")
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False, keep_work=True).done == 8
    with ResultsStore(out, lock=True) as store:
        ids = [r.run_id for r in store.records()]
        assert all(store.work_kept(i) for i in ids)
        store.mark_pending(ids[0], "run again")
        store.mark_running(ids[0])
        store.mark_finished(ids[0], "done")
        assert not store.work_kept(ids[0]) and store.work_kept(ids[1])


ORPHAN = """
import multiprocessing, os, sys, time
from pathlib import Path

def child(out):
    parent = multiprocessing.parent_process().pid
    while os.getppid() == parent:  # until the process that spawned it is gone
        time.sleep(0.01)
    Path(out, "orphaned").write_text(str(os.getppid()))
    from maxminq.experiments.runner import _worker_init
    _worker_init()  # the sweep pool's initializer
    Path(out, "survived").write_text("")

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    import orphan
    child = multiprocessing.get_context("spawn").Process(target=orphan.child, args=(sys.argv[1],))
    child.start()
    print(child.pid, flush=True)
    os._exit(0)  # at once, before the child has started: it is orphaned
"""

# The spawning process leaves two orphans: the child and multiprocessing's resource tracker
# (exit 0 once the child is gone). Each is reaped and the child's status printed: the first
# one reaped was taken for the child, which on a loaded machine (both ended by the time this
# process ran again) was the tracker, listed first among the orphans.
SUBREAPER = """
import ctypes, os, subprocess, sys
assert ctypes.CDLL(None, use_errno=True).prctl(36, 1) == 0  # PR_SET_CHILD_SUBREAPER
spawned = subprocess.run([sys.executable, sys.argv[1], sys.argv[2]], check=True,
                         capture_output=True, text=True)
child = int(spawned.stdout)
statuses = {}
while True:  # the orphans, handed to this process
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    statuses[pid] = os.waitstatus_to_exitcode(status)
print(statuses[child])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_worker_orphaned_before_it_asked_to_die_with_its_parent_exits(tmp_path):
    """Orphaned under a subreaper (its new parent is not pid 1), a sweep pool's worker
    exits in its initializer, code 1."""
    (tmp_path / "orphan.py").write_text(textwrap.dedent(ORPHAN))
    (tmp_path / "reaper.py").write_text(textwrap.dedent(SUBREAPER))
    done = subprocess.run(
        [sys.executable, tmp_path / "reaper.py", tmp_path / "orphan.py", tmp_path],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "orphaned").read_text() != "1"  # a subreaper took it, not init
    assert not (tmp_path / "survived").exists()
    assert done.stdout.split() == ["1"]
