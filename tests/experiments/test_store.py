"""Results store: atomic verified tables, corruption detection, load_results, the folder
lock, readers that may not write the folder, and stores reused by ``sweep --resume``."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sweep_kinds as helpers
from helpers import REPO, TESTS
from sweep_configs import TOY_OWN_QUICK as OWN

from maxminq.cli import main
from maxminq.experiments.config import RunSpec, load_config
from maxminq.experiments.runner import LOGS
from maxminq.experiments.store import (
    ResultsStore,
    StoreError,
    atomic_write,
    atomic_write_bytes,
    holds_progress,
    load_results,
    read_progress,
    sweep_owner,
)

KEEP_OPEN = """
import sys
from maxminq.experiments.store import ResultsStore
store = ResultsStore({out!r}, create=False)
print("open", flush=True)
sys.stdin.readline()
print(sorted(r.status for r in store.records()), store.read_tables("r-1")["t"]["a"].tolist(),
      flush=True)
store.close()
"""


def _as_nobody(argv: list[str]) -> list[str]:
    """``argv`` as a user who may not write what root wrote, when the tests run as root."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]


def _writable(base: Path, on: bool) -> None:
    for path in [base, *base.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if on else mode & ~(stat.S_IWUSR | stat.S_IWGRP))


HERE = TESTS


@dataclass
class Run:
    run_id: str
    kind: str
    config: str
    settings: dict = field(default_factory=dict)


def _frame(seed: int, rows: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "episode": np.arange(rows),
            "value": rng.normal(size=rows) * 10.0 ** rng.integers(-12, 12, size=rows),
            "flag": rng.random(rows) < 0.5,
            "name": [f'a,b "{i}"' for i in range(rows)],
        }
    )


def _finish(store: ResultsStore, run: Run, tables: dict, status: str = "done") -> None:
    store.register([run])
    store.mark_running(run.run_id)
    store.save_tables(run, tables)
    store.mark_finished(run.run_id, status)


ROOT = REPO


BENCH = ROOT / "benchmarks"


def run_resume(*args: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/bench_sweep_resume.py --smoke ARGS`` from the repository root."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep_resume.py"), "--smoke", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env=dict(os.environ),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_a_reader_that_may_not_write_the_folder_does_not_keep_its_sweep_out(tmp_path) -> None:
    """Another user keeps a store of this folder open (a notebook's load_results, a
    ResultsStore left open). Before, the folder's owner could not start a sweep there until
    that reader closed ('is being read by a process that may not write it'). Now the reader
    holds a copy made under the folder lock: the owner's sweep starts and writes at once,
    and the reader still reads whole, consistent data (its copy, and the verified tables)."""
    base = Path(tempfile.mkdtemp(prefix="maxminq-h3-"))  # not tmp_path: its parent is 0700
    base.chmod(0o755)
    out = base / "out"
    runs = [RunSpec(f"r-{k}", "toy_mdp", {"k": k}, "c") for k in (1, 2)]
    with ResultsStore(out, lock=True) as store:
        store.register(runs)
        for run in runs:
            store.mark_running(run.run_id)
            store.save_tables(run, {"t": pd.DataFrame({"a": [run.settings["k"]]})})
            store.mark_finished(run.run_id)
    assert not (out / "results.sqlite-wal").exists()  # closed cleanly: the immutable path
    _writable(base, False)
    reader = subprocess.Popen(
        _as_nobody([sys.executable, "-c", KEEP_OPEN.format(out=str(out))]),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=base, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    try:
        assert reader.stdout.readline() == "open\n", reader.stderr.read()
        _writable(base, True)  # the owner may write again
        with ResultsStore(out, lock=True) as store:  # before: StoreError, being read
            store.mark_pending("r-2", "again")
            store.mark_running("r-2")
        answer, errors = reader.communicate("\n", timeout=60)
        assert reader.returncode == 0, errors
        assert answer.strip() == "['done', 'done'] [1]"  # its copy: as when it opened
        with ResultsStore(out, create=False) as store:
            assert sorted(r.status for r in store.records()) == ["done", "running"]
    finally:
        if reader.poll() is None:  # ours
            reader.kill()
            reader.communicate()
        _writable(base, True)
        shutil.rmtree(base)


def test_a_sweep_waits_for_a_reader_copying_the_database(tmp_path) -> None:
    """A reader copying a large database holds the folder lock shared for longer than the
    second a sweep used to wait before it gave up ('is being read by ...'): the sweep now
    waits for such readers (up to READER_WAIT s), then starts. Here a reader's shared lock
    is released after 1.5 s."""
    import fcntl
    import threading

    out = tmp_path / "out"
    ResultsStore(out, lock=True).close()  # the folder and its lock file
    fh = open(out / ".sweep.lock")  # noqa: SIM115 - released by the timer
    fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    timer = threading.Timer(1.5, fh.close)
    timer.start()
    try:
        with ResultsStore(out, lock=True) as store:
            store.register([RunSpec("r-1", "toy_mdp", {"k": 1}, "c")])
        assert fh.closed  # it was held until the timer released it
    finally:
        timer.cancel()
        fh.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command", ["sweep", "sweep --dry-run", "reproduce"])
def test_a_folder_held_by_a_stopped_sweep_is_refused_at_once(tmp_path, command) -> None:
    """A sweep stopped (Ctrl-Z) while it sets up its store holds the folder lock and
    SQLite's lock on results.sqlite (here: held by this test). A second sweep (or its dry
    run, or reproduce) on that folder says at once that it is in use, exit 2. Before, it
    read the store first and waited SQLite's 60 s busy timeout (here: the 45 s timeout,
    which a loaded machine's start of Python and pandas stays far below)."""
    import fcntl
    import sqlite3

    from maxminq.experiments.store import LOCK_NAME

    config = tmp_path / "configs" / "tiny_theory.yaml"
    config.parent.mkdir()
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=2_000))
    out = tmp_path / "out"
    out.mkdir()
    holder = open(out / LOCK_NAME, "a+")  # noqa: SIM115 - the stopped sweep's lock
    fcntl.flock(holder.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    holder.write("pid 4242 on elsewhere since 2026-11-23 23:00:00")
    holder.flush()
    db = sqlite3.connect(out / "results.sqlite", isolation_level=None)
    db.execute("CREATE TABLE meta (key TEXT)")
    db.execute("BEGIN EXCLUSIVE")  # a rollback-journal database: readers wait
    try:
        if command == "reproduce":
            argv = ["reproduce", "--configs", str(config.parent), "--out", str(out)]
        else:
            argv = ["sweep", str(config), "--out", str(out), *command.split()[1:]]
        script = [sys.executable, str(TESTS / "sweep_kinds.py")]  # the test kinds known
        done = subprocess.run([*script, *argv], capture_output=True, text=True, timeout=45)
    finally:
        db.close()
        holder.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"maxminq {argv[0]}: error: {out} is in use by another sweep (pid 4242 on elsewhere "
        f"since 2026-11-23 23:00:00); wait for it to finish (maxminq status {out} shows its "
        "progress) or choose another --out"
    ], done.stderr


def test_a_sweep_folder_without_its_store_is_named_so(tmp_path, capsys) -> None:
    """A sweep's folder whose results.sqlite was lost or moved (its tables/<run_id>/ with
    their manifests left): report and status called it a folder of 'maxminq train' runs
    and offered --published; with theory/ beside it the report held the theory alone."""
    folder = tmp_path / "sweep"
    run = folder / "tables" / "deep-0123"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text('{"run_id": "deep-0123", "kind": "deep"}')
    (run / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n")
    why = (
        f"DIR: {folder} holds a sweep's run tables (tables/) but no results.sqlite (lost or "
        "moved): {again}; it takes the runs whose tables verify as done and runs only the others"
    )
    again = f"run the same sweep (or 'maxminq reproduce') into {folder} again"
    for command in ("report", "status"):
        assert main([command, str(folder)]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"maxminq {command}: error: " + why.format(again=again)
        ]
    (folder / "theory").mkdir()
    (folder / "theory" / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    (folder / "reproduce.json").write_text('{"command": "maxminq reproduce --out sweep"}')
    assert main(["report", str(folder)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq report: error: " + why.format(again="run 'maxminq reproduce --out sweep' again")
    ]
    assert not (folder / "report.md").exists()


def test_tensorboard_logs_alone_are_no_checkpoint(tmp_path, capsys) -> None:
    """Two runs left: one stopped before its first checkpoint with only its options and its
    TensorBoard events (it starts over), one with a checkpoint. Before: '2 of them from a
    checkpoint'."""
    path = tmp_path / "own.yaml"
    path.write_text(OWN)
    config = load_config(path, "quick")
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(config.runs)
        logs_only, checkpointed = (store.work_dir(r.run_id) for r in config.runs)
    (logs_only / LOGS).mkdir(parents=True)
    (logs_only / LOGS / "events.out.tfevents.1700000000.host.1.0").write_bytes(b"ev")
    (logs_only / "config.json").write_text("{}")
    (checkpointed / "checkpoint").mkdir(parents=True)
    (checkpointed / "checkpoint" / "state.pt").write_bytes(b"state")
    assert not holds_progress(logs_only)
    assert holds_progress(checkpointed)
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        f"own [quick]: 2 runs, 0 already done in {out}, 2 to run, 1 of them from a checkpoint "
        f"in {out / 'work'}: 24 episodes (dry run: nothing started)\n"
    )


def test_tables_round_trip_exactly_and_load_results_adds_run_columns(tmp_path):
    runs = [
        Run("k-1", "k", "cfg_a", {"alpha": 0.1, "seeds": [0, 1], "episode": 99}),
        Run("k-2", "k", "cfg_a", {"alpha": 0.2, "seeds": [2], "episode": 99}),
        Run("k-3", "k", "cfg_b", {"alpha": 0.3, "seeds": [3], "episode": 99}),
        Run("k-4", "k", "cfg_b", {"alpha": 0.4, "seeds": [4], "episode": 99}),
    ]
    frames = {r.run_id: _frame(i) for i, r in enumerate(runs)}
    with ResultsStore(tmp_path) as store:
        for run in runs[:3]:
            _finish(store, run, {"curve": frames[run.run_id], "other": frames[run.run_id].head(2)})
        store.register([runs[3]])  # pending: must not appear
        store.mark_running(runs[3].run_id)
        store.save_tables(runs[3], {"curve": frames[runs[3].run_id]})
        assert store.counts() == {"pending": 0, "running": 1, "done": 3, "failed": 0, "diverged": 0}
        for run in runs[:3]:
            got = store.read_tables(run.run_id)["curve"]
            pd.testing.assert_frame_equal(got, frames[run.run_id], check_exact=True)
    results = load_results(tmp_path)
    assert set(results) == {"curve", "other"}
    curve = results["curve"]
    assert sorted(curve["run_id"].unique()) == ["k-1", "k-2", "k-3"]
    assert list(curve.columns[:6]) == ["run_id", "config", "kind", "run_status", "alpha", "seeds"]
    one = curve[curve["run_id"] == "k-1"]
    assert (one["alpha"] == 0.1).all() and (one["seeds"] == "[0,1]").all()
    assert (one["config"] == "cfg_a").all() and (one["kind"] == "k").all()
    # A setting named like a table column keeps the table's values.
    assert list(one["episode"]) == list(range(7))
    pd.testing.assert_frame_equal(
        one[list(frames["k-1"].columns)].reset_index(drop=True), frames["k-1"], check_exact=True
    )
    only_b = load_results(tmp_path, config="cfg_b")
    assert set(only_b["curve"]["run_id"]) == {"k-3"}
    # a name that registered nothing here is an error, not {} (then a bare KeyError)
    with pytest.raises(StoreError, match=r": no config 'cfg_c' here\b.*; known: cfg_a, cfg_b$"):
        load_results(tmp_path, config="cfg_c")  # (the did-you-mean: test_store_guesses.py)
    slim = load_results(tmp_path, tables=["other"], settings=["alpha"])
    assert set(slim) == {"other"} and len(slim["other"]) == 6
    assert list(slim["other"].columns) == ["run_id", "config", "kind", "run_status", "alpha",
                                           *frames["k-1"].columns]  # fmt: skip
    bare = load_results(tmp_path, settings=False)["curve"]
    assert list(bare.columns) == ["run_id", "config", "kind", "run_status", *frames["k-1"].columns]


def test_table_columns_named_like_run_columns_are_kept(tmp_path):
    # The deep ``runs`` table has a per-seed ``status``; a table may also carry ``n``.
    runs_table = pd.DataFrame({"seed": [0, 1], "status": ["done", "diverged"], "n": [3, 3]})
    with ResultsStore(tmp_path) as store:
        _finish(
            store,
            Run("d-1", "deep", "c", {"n": 3, "seeds": [0, 1]}),
            {"runs": runs_table},
            "diverged",
        )
    table = load_results(tmp_path)["runs"]
    assert list(table["status"]) == ["done", "diverged"]
    assert list(table["run_status"]) == ["diverged", "diverged"]
    assert list(table.columns) == [
        "run_id",
        "config",
        "kind",
        "run_status",
        "seeds",
        "seed",
        "status",
        "n",
    ]
    assert load_results(tmp_path, include_diverged=False) == {}


def test_run_shared_by_two_configs_is_stored_once_and_listed_under_both(tmp_path):
    with ResultsStore(tmp_path) as store:
        _finish(store, Run("k-1", "k", "first", {"a": 1}), {"t": _frame(0)})
        store.register([Run("k-1", "k", "second", {"a": 1})])
        assert store.configs() == ["first", "second"]
        assert [r.run_id for r in store.records("second")] == ["k-1"]
        assert store.get("k-1").status == "done"
    second = load_results(tmp_path, config="second")["t"]
    assert set(second["config"]) == {"second"} and len(second) == 7
    assert set(load_results(tmp_path)["t"]["config"]) == {"first"}


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete", "manifest", "tmp_only"])
def test_corrupt_or_half_written_tables_are_detected_and_never_read(tmp_path, damage):
    run = Run("k-1", "k", "c", {})
    with ResultsStore(tmp_path) as store:
        _finish(store, run, {"t": _frame(1, rows=50)})
        _finish(store, Run("k-2", "k", "c", {}), {"t": _frame(2)})
        assert store.verify_tables("k-1") is None
        folder = store.run_tables_dir("k-1")
        csv = folder / "t.csv"
        data = csv.read_bytes()
        if damage == "flip":
            i = len(data) // 2
            csv.write_bytes(data[:i] + bytes([data[i] ^ 1]) + data[i + 1 :])
        elif damage == "truncate":
            csv.write_bytes(data[: len(data) // 2])
        elif damage == "delete":
            csv.unlink()
        elif damage == "manifest":
            (folder / "manifest.json").write_text('{"run_id": "k-1", "tab')
        else:  # a crash after writing the temp file, before the manifest was renamed in
            (folder / "manifest.json").unlink()
            csv.rename(folder / ".t.csv.tmp-1")
        problem = store.verify_tables("k-1")
        named = {"flip": "t.csv: size or checksum differs", "truncate": "t.csv: size or "
                 "checksum differs", "delete": "t.csv: unreadable", "manifest": "manifest.json: "
                 "unreadable manifest", "tmp_only": "manifest.json: missing"}  # fmt: skip
        assert problem.startswith(f"{folder}/{named[damage]}"), problem
        assert store.verify_tables("k-2") is None  # the other run is untouched
        with pytest.raises(StoreError):
            store.read_tables("k-1")
    with pytest.warns(UserWarning, match="skipping run k-1"):
        results = load_results(tmp_path)
    assert set(results["t"]["run_id"]) == {"k-2"}


def test_a_run_is_finished_when_its_row_is_final_or_running_and_its_tables_verify(tmp_path):
    """ResultsStore.finished, asked by the sweep and its dry run alike: done, diverged and
    running (a killed sweep) rows with sound tables are finished; failed and pending ones
    are not and keep their row; bad or missing tables send a done or running run back."""
    with ResultsStore(tmp_path) as store:
        for status in ("done", "diverged", "failed"):
            _finish(store, Run(status, "k", "c"), {"t": _frame(1)}, status)
        for run_id in ("stored", "cut"):
            store.register([Run(run_id, "k", "c")])
            store.mark_running(run_id)
        store.save_tables(Run("stored", "k", "c"), {"t": _frame(2)})
        store.register([Run("pending", "k", "c")])
        got = {r.run_id: store.finished(r) for r in store.records()}
        assert got == {
            "done": (True, None), "diverged": (True, None), "failed": (False, None),
            "stored": (True, None), "pending": (False, None),
            "cut": (False, "interrupted (the sweep stopped during this run)"),
        }  # fmt: skip
        assert store.finished(None) == (False, None)
        (store.run_tables_dir("done") / "t.csv").write_text("corrupt")
        finished, why = store.finished(store.get("done"))
        assert not finished and why.startswith("results failed verification: ")
        assert "checksum" in why


def test_manifest_records_rows_and_checksums(tmp_path):
    import hashlib

    with ResultsStore(tmp_path) as store:
        _finish(store, Run("k-1", "k", "c", {"x": 1}), {"t": _frame(3, rows=11)})
        folder = store.run_tables_dir("k-1")
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = manifest["tables"]["t"]
    data = (folder / "t.csv").read_bytes()
    assert entry["rows"] == 11 == data.count(b"\n") - 1
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    assert manifest["settings"] == {"x": 1}
    assert not [p for p in folder.iterdir() if "tmp" in p.name]


def test_registry_schema_statuses_and_event_log(tmp_path):
    with ResultsStore(tmp_path) as store:
        run = Run("k-1", "k", "c", {"b": [1, 2], "a": "x"})
        assert store.register([run]) == 1
        assert store.register([run]) == 0
        store.mark_running("k-1")
        store.mark_finished("k-1", "failed", "Traceback ...\nValueError: boom")
        store.mark_pending("k-1", "retry")
        store.mark_running("k-1")
        store.mark_finished("k-1", "diverged", "seed 3 diverged at step 10")
        rec = store.get("k-1")
        assert rec.attempts == 2 and rec.status == "diverged" and rec.settings == run.settings
        assert [e["event"] for e in store.events("k-1")] == [
            "registered", "started", "failed", "requeued", "started", "diverged",
        ]  # fmt: skip
        with pytest.raises(ValueError):
            store.mark_finished("k-1", "running")
    con = sqlite3.connect(tmp_path / "results.sqlite")
    cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    assert cols == [
        "run_id", "config", "kind", "settings", "status", "attempts", "created", "started",
        "finished", "host", "pid", "error",
    ]  # fmt: skip
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("UPDATE runs SET status='weird'")
    con.close()


def test_folder_lock_is_exclusive_across_processes_and_released_on_kill(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from maxminq.experiments.store import ResultsStore
                s = ResultsStore({str(tmp_path)!r}); s.lock(); print("locked", flush=True)
                time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert f"pid {holder.pid}" in (sweep_owner(tmp_path) or "")
        with ResultsStore(tmp_path) as store, pytest.raises(StoreError) as info:
            store.lock()
        assert "in use by another sweep" in str(info.value) and f"pid {holder.pid}" in str(
            info.value
        )
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)
    assert sweep_owner(tmp_path) is None
    with ResultsStore(tmp_path) as store:
        store.lock()  # the kernel released the dead holder's lock
        assert sweep_owner(tmp_path) is not None


def test_status_command_prints_counts_and_failures(tmp_path):
    from maxminq.cli import main

    with ResultsStore(tmp_path) as store:
        _finish(store, Run("k-1", "k", "cfg", {}), {"t": _frame(0)})
        store.register([Run("k-2", "k", "cfg", {}), Run("k-3", "k", "cfg", {})])
        store.mark_running("k-2")
        store.mark_finished("k-2", "failed", "Traceback (most recent call last):\nValueError: boom")
    proc = subprocess.run(
        [sys.executable, "-m", "maxminq.cli", "status", str(tmp_path), "--verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    row = next(line for line in lines if line.startswith("cfg "))
    assert row.split()[1:] == [
        "1",
        "0",
        "1",
        "1",
        "0",
        "3",
    ]  # pending running done failed div total
    assert any("failed   k-2" in line and "ValueError: boom" in line for line in lines)
    assert main(["status", str(tmp_path / "nope")]) == 2


def test_status_verify_names_corrupt_runs_and_config_selects_one(tmp_path, capsys):
    """Config a: k-1 done (its table then damaged), k-2 diverged; config b: k-3 done.
    --verify names the corrupt run and counts it (exit 1); diverged runs show their note;
    --config b shows b's row alone (no 'all' row) and checks b's runs only; an unknown
    --config is one line naming the known ones."""
    from maxminq.cli import main

    with ResultsStore(tmp_path) as store:
        _finish(store, Run("k-1", "k", "a"), {"t": _frame(0)})
        _finish(store, Run("k-2", "k", "a"), {"t": _frame(1)}, "diverged")
        store.mark_finished("k-2", "diverged", "seed 3 diverged at step 10")
        _finish(store, Run("k-3", "k", "b"), {"t": _frame(2)})
        (store.run_tables_dir("k-1") / "t.csv").write_text("damaged")
    capsys.readouterr()
    assert main(["status", str(tmp_path), "--verify"]) == 1
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:5]}
    # pending, running, done, failed, diverged, total
    assert rows == {"a": ["0", "0", "1", "0", "1", "2"], "b": ["0", "0", "1", "0", "0", "1"],
                    "all": ["0", "0", "2", "0", "1", "3"]}  # fmt: skip
    assert "diverged k-2: seed 3 diverged at step 10" in lines
    (corrupt,) = [line for line in lines if line.startswith("corrupt")]
    assert corrupt.startswith("corrupt  k-1: ") and "checksum" in corrupt
    assert lines[-1] == "verified: 1 finished run(s) with bad files (re-run by the next sweep)"
    assert main(["status", str(tmp_path), "--config", "b", "--verify"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[2:]] == ["b", "verified:"]
    assert lines[-1].startswith("verified: 0 finished run(s)")
    assert main(["status", str(tmp_path), "--config", "c"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["maxminq status: error: --config: no config 'c' here; known: a, b"]


def test_status_says_what_the_next_sweep_does_with_a_run_left_running(tmp_path, capsys):
    """A run left running by a killed sweep is re-run, unless its tables were all stored
    before the kill: then the next sweep marks it done (as ResultsStore.finished decides)."""
    from maxminq.cli import main

    with ResultsStore(tmp_path) as store:
        for run_id in ("stored", "cut"):
            store.register([Run(run_id, "k", "c")])
            store.mark_running(run_id)
        store.save_tables(Run("stored", "k", "c"), {"t": _frame(0)})
        # Pending rows (a sweep interrupted between a run's tables and its status): only the
        # one whose tables verify is named, with the status its manifest records.
        for run_id in ("queued", "saved", "damaged"):
            store.register([Run(run_id, "k", "c")])
        store.save_tables(Run("saved", "k", "c"), {"t": _frame(0)}, "diverged", "seed 0")
        store.save_tables(Run("damaged", "k", "c"), {"t": _frame(0)})
    (tmp_path / "tables" / "damaged" / "t.csv").write_text("cut")
    assert main(["status", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    stale = {line.split()[1]: line for line in out if line.startswith("stale ")}
    assert stale["cut"].endswith("(interrupted; will be re-run)")
    assert stale["stored"].endswith(
        "(interrupted; its tables are stored: the next sweep marks it done)"
    )
    stored = [line for line in out if line.startswith("stored ")]
    assert stored == [
        "stored   saved (pending; its tables are stored: the next sweep marks it diverged)"
    ]


def test_atomic_write_replaces_whole_files_and_keeps_the_old_one_on_error(tmp_path):
    path = tmp_path / "new" / "f.txt"  # the folder is created
    atomic_write_bytes(path, b"old")
    assert path.read_bytes() == b"old" and path.stat().st_mode & 0o777 == 0o644

    def half_then_fail(tmp):
        tmp.write_bytes(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert path.read_bytes() == b"old"
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]  # no temporary file left
    atomic_write(path, lambda tmp: tmp.write_text("new"))
    assert path.read_bytes() == b"new" and [p.name for p in path.parent.iterdir()] == ["f.txt"]


def test_progress_files_report_in_flight_runs_and_bad_ones_say_nothing(tmp_path) -> None:
    from maxminq.experiments.runner import _inflight_progress

    runs = [Run("deep-a", "deep", "c"), Run("deep-b", "deep", "c"), Run("toy-c", "toy_mdp", "c")]
    with ResultsStore(tmp_path) as store:
        # as a deep run's ProgressReport writes it (step and steps, beside other fields)
        for run_id, text in (
            ("deep-a", '{"step": 37, "steps": 100}'),
            ("deep-b", '{"steps": 100, "step": 5}'),
        ):
            store.work_dir(run_id).mkdir(parents=True)
            (store.work_dir(run_id) / "progress.json").write_text(text)
        assert read_progress(store.work_dir("deep-a")) == 0.37
        assert _inflight_progress(store, runs) == " (37%, 5%)"  # toy-c reports nothing
        (store.work_dir("deep-b") / "progress.json").write_text('{"step": 3')  # torn, foreign
        assert read_progress(store.work_dir("deep-b")) is None
        assert _inflight_progress(store, runs[1:]) == ""


@pytest.mark.parametrize("content", [b"", b"not a database at all", "sqlite-other", "damaged-runs"])
def test_a_damaged_or_foreign_store_is_one_line_for_status(tmp_path, capsys, content) -> None:
    """status (which opens an existing store) on a results.sqlite that is empty, damaged
    (also past its schema: the runs table's page) or another program's SQLite file: one line
    naming the file, exit 2, not a traceback."""
    from maxminq.cli import main

    path = tmp_path / "results.sqlite"
    if content == "sqlite-other":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
        conn.close()
    elif content == "damaged-runs":
        with ResultsStore(tmp_path) as store:
            store.register([Run("r", "k", "c")])
            (page,) = store._conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE name = 'runs'"
            ).fetchone()
        data = bytearray(path.read_bytes())
        data[(page - 1) * 4096 : (page - 1) * 4096 + 16] = b"\xff" * 16  # its page header
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(content)
    with pytest.raises(StoreError, match="cannot open the results database"):
        ResultsStore(tmp_path, create=False)
    assert main(["status", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err


def test_atomic_write_names_the_target_in_an_os_error_that_names_no_file(tmp_path):
    """matplotlib, pyarrow and torch.save raise 'File too large' with no file name on a full
    disk; the error must name the output, and leave neither it nor a temporary file."""
    import errno

    def full_disk(tmp):
        raise OSError(errno.EFBIG, "File too large")

    def named(tmp):
        raise OSError(errno.EACCES, "Permission denied", str(tmp_path / "elsewhere"))

    target = tmp_path / "fig.png"
    with pytest.raises(OSError) as info:
        atomic_write(target, full_disk)
    assert info.value.filename == str(target) and info.value.errno == errno.EFBIG
    with pytest.raises(OSError) as info:  # an error that names its own file keeps it
        atomic_write(target, named)
    assert info.value.filename == str(tmp_path / "elsewhere")
    assert list(tmp_path.iterdir()) == []


def test_sweep_resume_reuse_without_keep_keeps_the_reused_store(tmp_path: Path) -> None:
    """``--reuse`` times a store an earlier ``--keep`` run left; without ``--keep`` it
    deleted that store at the end (a second --reuse then failed: 'holds no store')."""
    sys.path.insert(0, str(BENCH))  # the script and its _cli.py
    import bench_sweep_resume

    folder = tmp_path / "resume"  # what a --runs 2 --table-kb 1 --keep run leaves, built
    (folder / "out").mkdir(parents=True)  # here by the script's own functions (faster)
    bench_sweep_resume.write_config(folder / "bench.yaml", 2)
    bench_sweep_resume.build_store(folder / "bench.yaml", folder / "out", 1.0)
    db = folder / "out" / "results.sqlite"
    assert db.is_file()
    tables = sorted(p.relative_to(folder) for p in (folder / "out" / "tables").rglob("*.csv"))
    assert len(tables) == 2
    reused = run_resume("--reuse", "--dir", str(folder))  # no --keep
    assert "2 finished runs" in reused.stdout and "(reused)" in reused.stdout
    assert db.is_file()  # was: the whole --dir deleted
    assert sorted(p.relative_to(folder) for p in (folder / "out" / "tables").rglob("*.csv")) == (
        tables
    )
    assert not (folder / "copy").exists()  # the copy this run made is its own: removed


@pytest.mark.parametrize("argv", [["--runs", "600"], ["--table-kb", "1500"]])
def test_sweep_resume_reuse_refuses_store_options(tmp_path: Path, argv: list[str]) -> None:
    """``--reuse`` times the store as it is: ``--runs``/``--table-kb`` beside it were
    ignored in silence (the header then printed the store's own count)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep_resume.py"), "--reuse", *argv,
         "--dir", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f"error: {argv[0]}: not with --reuse" in lines[0], proc.stderr


def test_sweep_resume_keeps_an_empty_folder_the_user_gave(tmp_path: Path) -> None:
    """``--dir`` may be an empty folder of the user's (made with mkdir, a mount point): the
    script removed the folder itself at the end; only what it wrote in it goes now."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    run_resume("--runs", "1", "--table-kb", "1", "--dir", str(folder))
    assert folder.is_dir() and sorted(folder.iterdir()) == []
