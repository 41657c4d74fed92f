"""Results store: atomic verified tables, corruption detection, load_results, folder lock."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from maxminq.experiments.store import (
    ResultsStore,
    StoreError,
    atomic_write,
    atomic_write_bytes,
    load_results,
    read_progress,
    sweep_owner,
    write_progress,
)


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
    with pytest.raises(StoreError, match=r": no config 'cfg_c' here; known: cfg_a, cfg_b$"):
        load_results(tmp_path, config="cfg_c")
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
        write_progress(store.work_dir("deep-a"), 37, 100)
        write_progress(store.work_dir("deep-b"), 5, 100)
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
