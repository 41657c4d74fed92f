"""The sweep layer when something gives way under it: a local worker dying at an awkward
moment (while the driver stores a result, while sending its tables), tables that cannot be
written, a damaged database, a file system without locks, a worker in another directory;
results read by someone who may not write their folder; YAML numbers and merge keys.

The run kinds here are tiny and pure Python (a table of one row), so worker start-up is the
cost; the workers import this module by name (``test_worker_deaths``) to run them.
"""

from __future__ import annotations

import gc
import multiprocessing.queues
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import sweep_kinds as helpers
from helpers import as_nobody  # tests/helpers.py (this file calls sweep_kinds helpers)

from maxminq.experiments import runner
from maxminq.experiments.config import (
    ConfigError,
    config_from_document,
    load_config,
    parse_document,
)
from maxminq.experiments.registry import KINDS, RunKind, RunOutput
from maxminq.experiments.store import ResultsStore, load_results

HERE = Path(__file__).resolve().parent


def validate_tiny(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of a tiny run: its number ``k``, how long it sleeps, how many rows."""
    return {
        "k": int(settings["k"]),
        "sleep": float(settings.get("sleep", 0.0)),
        "rows": int(settings.get("rows", 1)),
        **({"cwd": str(settings["cwd"])} if "cwd" in settings else {}),
    }


def execute_tiny(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Sleep, then return ``rows`` rows of k and k squared."""
    time.sleep(settings["sleep"])
    k, rows = settings["k"], settings["rows"]
    return RunOutput({"t": pd.DataFrame({"k": [k] * rows, "k2": [k**2] * rows})})


def killed_mid_send(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """``execute_tiny``, except that the first attempt of k = 1 has its worker killed
    halfway through sending its answer: it holds the result pipe's lock and has written
    the start of a message, as when the OOM killer or a ``kill -9`` strikes during the send
    of a large table."""
    if settings["k"] == 1 and not (work_dir / "tried").exists():
        work_dir.mkdir(parents=True, exist_ok=True)
        (work_dir / "tried").touch()
        # The worker's one SimpleQueue is the pool's result queue (its call queue is a Queue).
        queue = next(o for o in gc.get_objects() if type(o) is multiprocessing.queues.SimpleQueue)
        queue._wlock.acquire()
        os.write(queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        os.kill(os.getpid(), signal.SIGKILL)
    return execute_tiny(settings, work_dir, progress)


def checkpoint_elsewhere(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """``execute_tiny`` that first changes its worker's working directory to
    ``settings["cwd"]`` (a Ray worker of a ``ray start`` cluster has the one ``ray start``
    ran in), then writes a checkpoint into its work folder, as a deep run does."""
    os.chdir(settings["cwd"])
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / "checkpoint").write_text(str(settings["k"]))
    return execute_tiny(settings, work_dir, progress)


def register() -> None:
    """The kinds of this file (also for a script that runs a sweep of them)."""
    KINDS["tiny17"] = RunKind("tiny17", validate_tiny, execute_tiny)
    KINDS["mid_send17"] = RunKind("mid_send17", validate_tiny, killed_mid_send)
    KINDS["elsewhere17"] = RunKind("elsewhere17", validate_tiny, checkpoint_elsewhere)


CLI = """
import sys
sys.path.insert(0, {tests!r})
sys.path.insert(1, {tests!r} + "/..")
import test_worker_deaths as kinds
from maxminq.cli import main

if __name__ == "__main__":
    kinds.register()
    raise SystemExit(main(sys.argv[1:]))
"""


def _cli(tmp_path: Path) -> list[str]:
    """The command line of ``maxminq`` with this file's kinds registered."""
    script = tmp_path / "cli17.py"
    script.write_text(CLI.format(tests=str(HERE)))
    return [sys.executable, str(script)]


@pytest.fixture
def tiny_kinds():
    """The kinds of this file, registered while a test runs."""
    register()
    yield
    KINDS.pop("tiny17", None)
    KINDS.pop("mid_send17", None)
    KINDS.pop("elsewhere17", None)


def _stored_k(out: Path) -> list[int]:
    """The k of every finished run's table, sorted."""
    return sorted(load_results(out)["t"]["k"].tolist())


MID_SEND_SWEEP = """
import sys
sys.path.insert(0, {tests!r})
sys.path.insert(1, {tests!r} + "/..")
import test_worker_deaths as kinds
from maxminq.experiments import runner
from maxminq.experiments.config import config_from_document

if __name__ == "__main__":
    kinds.register()
    runner.STUCK_AFTER = 1.0  # seconds a dead worker may go unnoticed (10 s by default)
    doc = {{"name": "mid", "kind": "mid_send17", "fixed": {{"sleep": 0.5}},
            "grid": {{"k": [1, 2, 3]}}, "scales": {{"quick": {{}}}}}}
    config = config_from_document(doc, "mid.yaml")
    summary = runner.run_sweep(config, {out!r}, workers=2, progress=False)
    print(summary.done, summary.failed, flush=True)
"""


READ_RESULTS = """
from maxminq.experiments.store import load_results
frame = load_results({out!r})["t"]
print(sorted(frame["k"].tolist()), sorted(frame["k2"].tolist()))
"""


def _read_only_results() -> Path:
    """A new folder holding ``out``: a finished sweep of runs k = 1, 2, closed cleanly, that
    no one may write (but root); the caller removes it."""
    # Not tmp_path: pytest makes its parent readable by its own user only.
    base = Path(tempfile.mkdtemp(prefix="maxminq-readonly-"))
    base.chmod(0o755)
    out = base / "out"
    config = config_from_document(
        {"name": "ro", "kind": "tiny17", "grid": {"k": [1, 2]}, "scales": {"q": {}}},
        "ro.yaml",
        "q",
    )
    with ResultsStore(out, lock=True) as store:
        store.register(config.runs)
        for run in config.runs:
            store.mark_running(run.run_id)
            store.save_tables(run, execute_tiny(run.settings, out, False).tables)
            store.mark_finished(run.run_id)
    assert not (out / "results.sqlite-wal").exists()  # a clean close removes the log
    for path in [out, *out.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return base


HOLD_OPEN = """
import sys
from maxminq.experiments.store import ResultsStore
store = ResultsStore({out!r}, create=False)
print("open", flush=True)
sys.stdin.readline()
print(sorted(r.status for r in store.records()), flush=True)
store.close()
"""


TOY_SEEDS = """
name: padded
kind: toy_mdp
fixed: {{runs: 2, episodes: 3, algorithm: q_learning, n: 1, mu: {mu}}}
grid: {{seed: {seeds}}}
scales: {{quick: {{}}}}
"""


MERGED = """
name: merged
kind: toy_mdp
fixed: &base
  seed: 0
  runs: 2
  episodes: 3
  mu: 0.1
variants:
  - &maxmin {algorithm: maxmin, n: 2}
  - {<<: *maxmin, n: 4}
scales:
  quick: {}
  paper:
    fixed:
      <<: *base
      runs: 5
"""


KILLED_AT_STATUS = """
import os, signal, sys
sys.path.insert(0, {tests!r})
sys.path.insert(1, {tests!r} + "/..")
import sweep_kinds as helpers
from maxminq.experiments.store import ResultsStore

real = ResultsStore.mark_finished


def killed(self, run_id, status="done", *args, **kw):
    if status == "done":  # the tables are stored; kill -9 before the status is written
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, run_id, status, *args, **kw)


if __name__ == "__main__":
    helpers.register()
    ResultsStore.mark_finished = killed
    from maxminq.cli import main

    raise SystemExit(main(sys.argv[1:]))
"""


def test_a_worker_dying_while_the_driver_stores_a_result_does_not_stop_the_sweep(
    tmp_path, tiny_kinds, monkeypatch
):
    """A worker that dies (OOM, kill -9) while the driver is storing another run's tables
    leaves the pool broken when the driver hands it the next run: the pool's
    BrokenProcessPool escaped from submit, and the whole sweep stopped with a traceback
    (the CLI: exit 1) instead of running the runs in flight again."""
    doc = {
        "name": "tiny",
        "kind": "tiny17",
        "grid": {"k": [1, 2, 3, 4]},
        # k = 1 ends at once; k = 2 is still running when k = 1's tables are stored
        "variants": [{"k": 1}, {"k": 2, "sleep": 2.0}, {"k": [3, 4]}],
        "scales": {"quick": {}},
    }
    config = config_from_document(doc, tmp_path / "tiny.yaml")
    backends: list[Any] = []
    make_backend = runner._make_backend
    monkeypatch.setattr(
        runner, "_make_backend", lambda *a: backends.append(make_backend(*a)) or backends[-1]
    )
    save_tables = ResultsStore.save_tables
    killed: list[int] = []

    def save_and_kill_a_worker(self: ResultsStore, run: Any, *args: Any, **kw: Any) -> Any:
        if not killed:  # the first result: kill a worker, and wait until its pool knows
            pid = helpers.workers(os.getpid())[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            deadline = time.monotonic() + 30
            while not backends[0]._pool._broken and time.monotonic() < deadline:
                time.sleep(0.01)
            assert backends[0]._pool._broken
        return save_tables(self, run, *args, **kw)

    monkeypatch.setattr(ResultsStore, "save_tables", save_and_kill_a_worker)
    out = tmp_path / "out"
    summary = runner.run_sweep(config, out, workers=2, progress=False)
    assert killed
    assert (summary.done, summary.failed) == (4, 0), summary.failures
    assert _stored_k(out) == [1, 2, 3, 4]
    with ResultsStore(out) as store:
        assert {rec.status for rec in store.records()} == {"done"}


def test_a_worker_killed_while_sending_its_tables_does_not_hang_the_sweep(tmp_path):
    """kill -9 of a worker halfway through sending its answer (it held the result pipe's
    lock): the pool's result thread waited for the rest of the message for ever, the other
    worker could not send its answer, and the sweep showed 'running 2' for good. Now the
    dead worker is noticed, the pool is replaced and the runs in flight run again; every
    run finishes once."""
    out = tmp_path / "out"
    script = tmp_path / "mid_send.py"
    script.write_text(MID_SEND_SWEEP.format(tests=str(HERE), out=str(out)))
    try:
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the sweep hung after a worker was killed while sending its answer")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", "0"], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert _stored_k(out) == [1, 2, 3]
    with ResultsStore(out) as store:
        events = store.events()
    done = [e["run_id"] for e in events if e["event"] == "done"]
    assert len(done) == len(set(done)) == 3  # each run stored once
    assert any(e["event"] == "requeued" for e in events)  # the runs in flight ran again


def test_results_in_a_folder_the_reader_may_not_write_can_be_read(tiny_kinds):
    """Results shared read-only (an archive, a colleague's folder): reading the database
    needs the index of its write-ahead log, which SQLite creates beside it, so 'maxminq
    status' and load_results failed with 'attempt to write a readonly database'."""
    base = _read_only_results()
    try:
        out = base / "out"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        status = subprocess.run(
            as_nobody([sys.executable, "-m", "maxminq.cli", "status", str(out), "--verify"]),
            capture_output=True, text=True, timeout=120, env=env, cwd=base,
        )  # fmt: skip
        assert status.returncode == 0, status.stderr
        lines = status.stdout.splitlines()
        assert lines[2].split() == ["ro", "0", "0", "2", "0", "0", "2"], status.stdout
        assert "verified: 0 finished run(s) with bad files" in status.stdout
        read = subprocess.run(
            as_nobody([sys.executable, "-c", READ_RESULTS.format(out=str(out))]),
            capture_output=True, text=True, timeout=120, env=env, cwd=base,
        )  # fmt: skip
        assert read.returncode == 0, read.stderr
        assert read.stdout.strip() == "[1, 2] [1, 4]"
        assert sorted(p.name for p in out.iterdir()) == [".sweep.lock", "results.sqlite", "tables"]
    finally:
        for path in [base, *base.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(base)


def test_a_sweep_starts_under_a_reader_of_a_folder_it_may_not_write(tiny_kinds):
    """A reader that may not write the folder reads a cleanly closed database without the
    log's index, as a file nobody changes. A sweep the folder's owner started meanwhile
    wrote under it: the reader then failed with 'database disk image is malformed' (or
    read torn pages). Now the reader copies the database while it holds the folder lock
    shared; the sweep starts meanwhile, and the reader reads its whole copy."""
    base = _read_only_results()
    out = base / "out"
    reader = subprocess.Popen(
        as_nobody([sys.executable, "-c", HOLD_OPEN.format(out=str(out))]),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=base, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    try:
        assert reader.stdout.readline() == "open\n", reader.stderr.read()
        for path in [base, *base.rglob("*")]:  # the owner may write again
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        # The reader holds a copy made under the lock, so the sweep starts (it was turned
        # away until the reader closed).
        with ResultsStore(out, lock=True) as store:
            store.mark_pending(store.records()[0].run_id, "again")
        answer, errors = reader.communicate("\n", timeout=60)
        assert reader.returncode == 0, errors
        assert answer.strip() == "['done', 'done']"  # its copy, whole
        assert _stored_k(out) == [2]
    finally:
        reader.kill()
        reader.wait()
        for path in [base, *base.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        shutil.rmtree(base)


def test_numbers_are_read_as_yaml_1_2_reads_them(tmp_path):
    """The README promises YAML 1.2 numbers, but integers were YAML 1.1's: a zero-padded
    seed ``010`` was octal 8 (another run than the one written, in silence), ``08`` a
    string (refused as 'expected a number'), ``1:30`` the base-60 number 90; and a float
    written ``-.1`` was a string."""
    path = tmp_path / "padded.yaml"
    path.write_text(TOY_SEEDS.format(mu="-.1", seeds="[007, 08, 010, 1_000, 0o17, 0x1F]"))
    config = load_config(path)
    assert [run.settings["seed"] for run in config.runs] == [7, 8, 10, 1000, 15, 31]
    assert {run.settings["mu"] for run in config.runs} == {-0.1}
    assert parse_document("a: [+.5, .5e3, -1.5e-3, 1e5, 0, -010]")["a"] == [
        0.5, 500.0, -0.0015, 100000.0, 0, -10,
    ]  # fmt: skip
    # a prefix with no digit is no number (was 'invalid literal for int() with base 16')
    assert parse_document("a: [0x_, -0o_, 0x_1]")["a"] == ["0x_", "-0o_", "0x_1"]
    path.write_text(TOY_SEEDS.format(mu="0.1", seeds="[1:30]"))
    with pytest.raises(ConfigError, match=r"grid\.seed: expected a number, got '1:30'"):
        load_config(path)


def test_yaml_merge_keys_share_settings_and_a_repeated_key_is_still_refused(tmp_path):
    """``<<: *base`` (YAML's merge key, read by PyYAML's safe loader) failed with 'could not
    determine a constructor for the tag tag:yaml.org,2002:merge': the duplicate-key check
    built the merge key as a plain key. A key after the merge overrides the merged one; a
    key given twice by hand is still an error."""
    path = tmp_path / "merged.yaml"
    path.write_text(MERGED)
    quick = load_config(path, "quick")
    assert sorted((r.settings["n"], r.settings["runs"]) for r in quick.runs) == [(2, 2), (4, 2)]
    paper = load_config(path, "paper")
    assert sorted((r.settings["n"], r.settings["runs"]) for r in paper.runs) == [(2, 5), (4, 5)]
    assert {r.settings["mu"] for r in paper.runs} == {0.1}
    path.write_text(MERGED.replace("      runs: 5", "      runs: 5\n      runs: 6"))
    with pytest.raises(ConfigError, match="duplicate key 'runs'"):
        load_config(path, "paper")


def test_tables_that_cannot_be_written_stop_the_sweep_and_the_runs_stay_queued(tmp_path):
    """A full disk (or quota) when the tables are stored is not the run's fault: each run was
    recorded failed ('could not store the tables: OSError ...') and the sweep went on
    training the others, all thrown away the same way (exit 1). Now the sweep stops at
    the first, one line naming the file, exit 2, and every run stays queued: the same
    command with room again stores them all."""
    config = tmp_path / "big.yaml"
    config.write_text(  # 80,000 rows: a 0.3 MB table; the database stays far below 200 kB
        "name: big\nkind: tiny17\nfixed: {rows: 80000}\ngrid: {k: [1, 2, 3]}\nscales: {quick: {}}\n"
    )
    out = tmp_path / "out"
    cmd = [*_cli(tmp_path), "sweep", str(config), "--out", str(out), "--workers", "2"]
    cmd += ["--no-progress"]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: helpers.no_bigger_files_than(200_000),
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, proc.stdout + proc.stderr
    assert err[0].startswith(f"maxminq sweep: error: {out / 'tables'}"), err
    assert "cannot store the tables of run" in err[0] and "File too large" in err[0], err
    with ResultsStore(out) as store:
        assert {rec.status for rec in store.records()} == {"pending"}
        assert not any(e["event"] == "failed" for e in store.events())
    assert not any((out / "tables").iterdir())  # no partial tables left
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    frame = load_results(out)["t"]
    assert sorted(frame.groupby("k").size().items()) == [(1, 80000), (2, 80000), (3, 80000)]


def test_a_damaged_database_names_the_remedy_and_the_remedy_keeps_the_finished_runs(
    tmp_path, tiny_kinds, capsys
):
    """A damaged results.sqlite stopped every sweep (and status) with 'database disk image
    is malformed' and no word on what to do, though the tables can stand in for it: the
    message now says to move it aside, and doing so keeps every finished run (none runs
    again)."""
    from maxminq.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\nkind: tiny17\ngrid: {k: [1, 2, 3]}\nscales: {quick: {}}\n")
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
    assert main(argv) == 0
    db = out / "results.sqlite"
    with open(db, "r+b") as fh:  # the first page's b-tree, past the 100-byte file header
        fh.seek(100)
        fh.write(b"\x00damaged" * 200)
    capsys.readouterr()
    for command in (argv, ["status", str(out)]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(db) in err[0], err
        assert "malformed; move it aside and run the sweep again" in err[0], err
    db.rename(out / "results.sqlite.damaged")  # what the message says
    assert main(argv) == 0
    assert "3 runs, 3 already done, 0 done" in capsys.readouterr().out
    with ResultsStore(out) as store:
        assert not any(e["event"] == "started" for e in store.events())  # none ran again
        assert {rec.status for rec in store.records()} == {"done"}
    assert _stored_k(out) == [1, 2, 3]


def test_a_file_system_without_locks_is_named_not_taken_for_another_sweep(
    tmp_path, tiny_kinds, capsys, monkeypatch
):
    """On a file system without flock (Lustre mounted without it answers ENOSYS) every sweep
    stopped with 'OUT is in use by another sweep (...); wait for it to finish', which no
    waiting could change, and status said a sweep was running. Now the sweep names the
    lock file and the missing locks, and status says no sweep runs."""
    import errno
    import fcntl

    from maxminq.cli import main

    config = tmp_path / "tiny.yaml"
    config.write_text("name: tiny\nkind: tiny17\ngrid: {k: [1, 2]}\nscales: {quick: {}}\n")
    out = tmp_path / "out"
    with ResultsStore(out, lock=True) as store:  # an earlier sweep, on a disk with locks
        store.register(load_config(config).runs)

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    capsys.readouterr()
    assert main(["sweep", str(config), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"maxminq sweep: error: {out / '.sweep.lock'}: cannot lock it "), err
    assert "does not support file locks" in err[0] and "another sweep" not in err[0], err
    with ResultsStore(out, create=False) as store:
        assert {rec.status for rec in store.records()} == {"pending"}  # nothing ran
    assert main(["status", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{out}: no sweep running"


def test_tensorboard_logs_are_moved_before_the_status_so_a_kill_cannot_strand_them(
    tmp_path, theory_kinds
):
    """A finished run's TensorBoard logs went to OUT/tensorboard/<run_id> only after its
    status was written: a kill -9 between the two left them in OUT/work/<run_id>, and the
    next sweep, taking the run as finished from its stored tables, never moved them."""
    from maxminq.experiments.runner import run_sweep

    config = tmp_path / "logs.yaml"
    config.write_text(
        "name: logs\nkind: theory_mc_logs\nfixed: {seed: 1, samples: 100, chunks: 1}\n"
        "grid: {M: [2], N: [1]}\nscales: {quick: {}}\n"
    )
    out = tmp_path / "out"
    script = tmp_path / "killed.py"
    script.write_text(KILLED_AT_STATUS.format(tests=str(HERE)))
    cmd = [sys.executable, str(script), "sweep", str(config), "--out", str(out)]
    proc = subprocess.run([*cmd, "--workers", "1", "--no-progress"], timeout=120)
    assert proc.returncode == -signal.SIGKILL
    (run,) = load_config(config).runs
    with ResultsStore(out) as store:
        assert store.get(run.run_id).status == "running"  # killed before its status
    summary = run_sweep(config, out, workers=1, progress=False)
    assert (summary.skipped, summary.done) == (1, 0)  # its stored tables are kept
    logs = out / "tensorboard" / run.run_id / "events.out"
    assert logs.read_text() == "M=2 N=1\n"
    assert not (out / "work" / run.run_id / "tensorboard").exists()


def test_a_worker_in_another_directory_still_writes_its_work_folder_under_out(
    tmp_path, tiny_kinds, monkeypatch
):
    """A relative --out (the default, results/<name>) was handed to the workers as a
    relative work folder: a worker whose working directory is not the driver's (every
    worker of a `ray start` cluster has the directory `ray start` ran in; checked by hand
    with --address) wrote its checkpoints, progress, TensorBoard logs and --keep-work
    folder under that directory instead of OUT/work (or failed where it cannot write),
    so they were never found, moved or removed. Workers now get the absolute path."""
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    doc = {
        "name": "cwd",
        "kind": "elsewhere17",
        "fixed": {"cwd": str(elsewhere)},
        "grid": {"k": [1, 2]},
        "scales": {"quick": {}},
    }
    config = config_from_document(doc, "cwd.yaml")
    summary = runner.run_sweep(config, "out", workers=2, progress=False, keep_work=True)
    assert summary.done == 2
    for run in config.runs:
        assert (tmp_path / "out" / "work" / run.run_id / "checkpoint").read_text() == str(
            run.settings["k"]
        )
    assert not any(elsewhere.iterdir())
