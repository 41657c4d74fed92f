"""Adversarial checks of the sweep runner and results store: what a kill -9 while results
are written, a damaged store, or a config edited between sweeps leave behind, and what the
user is told. (The random-moment SIGKILL, Ctrl-C, busy-folder and corrupt-table cases are in
``experiments/test_sweep.py`` and ``experiments/test_store.py``.)

Process-level tests use the test-only ``theory_mc`` kind of ``sweep_kinds`` (pure
NumPy, fast worker start-up). Kill points are made deterministic by a driver script that
SIGKILLs itself from inside the store's own write path at a chosen moment.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import sweep_kinds as helpers
from helpers import TESTS

from maxminq.cli import main
from maxminq.experiments.config import load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore, load_results

HERE = TESTS


THEORY = helpers.THEORY_CONFIG.replace("{kind}", "theory_mc")  # then .format(samples=...)


def _theory(tmp_path: Path, samples: int = 2_000, text: str = THEORY) -> Path:
    path = tmp_path / "theory.yaml"
    path.write_text(text.format(samples=samples))
    return path


def _damage_page(db: Path, table: str) -> None:
    """Overwrite the header of ``table``'s root page (a disk error past the schema)."""
    conn = sqlite3.connect(db)
    try:
        (page,) = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    data = bytearray(db.read_bytes())
    data[(page - 1) * size : (page - 1) * size + 16] = b"\xff" * 16
    db.write_bytes(bytes(data))


# A real `maxminq sweep` process that SIGKILLs itself at a chosen point of the store's own
# write path (a deterministic kill -9), after writing down its pool workers' pids.
KILLER = """
import json, os, signal, sys
sys.path.insert(0, {tests!r})
import sweep_kinds as helpers
from maxminq.experiments import store

where, nth = sys.argv[1], sys.argv[2]
calls = []


def die():
    import multiprocessing
    pids = [p.pid for p in multiprocessing.active_children()]
    with open(sys.argv[3], "w") as fh:
        json.dump(pids, fh)
    os.kill(os.getpid(), signal.SIGKILL)


if where == "table_write":  # halfway through writing the nth table file of the sweep
    real = store.atomic_write_bytes

    def atomic_write_bytes(path, data):
        calls.append(path)
        if path.name.endswith(".csv") and sum(p.name.endswith(".csv") for p in calls) == int(nth):
            def half_then_die(tmp):
                tmp.write_bytes(data[: len(data) // 2])
                die()
            store.atomic_write(path, half_then_die)
        real(path, data)

    store.atomic_write_bytes = atomic_write_bytes
elif where == "before_final_status":  # tables stored, this final status not yet written
    real = store.ResultsStore.mark_finished

    def mark_finished(self, run_id, status="done", *args, **kwargs):
        if status == nth:
            die()
        return real(self, run_id, status, *args, **kwargs)

    store.ResultsStore.mark_finished = mark_finished

if __name__ == "__main__":
    helpers.register()
    from maxminq.cli import main
    raise SystemExit(main(sys.argv[4:]))
"""


def _kill_at(tmp_path: Path, where: str, nth: object, config: Path, out: Path) -> list[int]:
    """Run a sweep of ``config`` into ``out`` that SIGKILLs itself at ``where`` (see
    KILLER); returns the pids its pool workers had."""
    script = tmp_path / "killer.py"
    script.write_text(KILLER.format(tests=str(HERE)))
    pids = tmp_path / "workers.json"
    cmd = [sys.executable, str(script), where, str(nth), str(pids), "sweep", str(config)]
    cmd += ["--out", str(out), "--workers", "2", "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == -9, proc.stderr  # killed where planned, not ended otherwise
    return json.loads(pids.read_text())


def _events(out: Path, event: str) -> Counter:
    """How many ``event`` entries each run has in the store's event log."""
    with ResultsStore(out) as store:
        return Counter(e["run_id"] for e in store.events() if e["event"] == event)


DIVERGING = """
name: tiny_diverging
kind: theory_mc_diverge
fixed: {{seed: 11, samples: {samples}, chunks: 3, M: 2, N: 3}}
scales: {{quick: {{}}, paper: {{}}}}
"""


EDITABLE = """
name: tiny_edit
kind: theory_mc
fixed: {{seed: 11, samples: {samples}, chunks: 2, M: 2}}
grid: {{N: {ns}}}
scales: {{quick: {{}}, paper: {{}}}}
"""


def crash_at_n3(settings: dict, work_dir: Path, progress: bool) -> helpers.RunOutput:
    """``theory_mc`` whose N = 3 run kills its own worker process (as a segfault or an
    out-of-memory kill would) once the three other runs are computing (their first
    attempts wait, up to a minute, so the pool breaks under them); the others' next
    attempts compute at once."""
    started = work_dir / "started"
    first = not started.exists()
    work_dir.mkdir(parents=True, exist_ok=True)
    started.touch()
    deadline = time.monotonic() + 60
    while first and settings["N"] == 3 and len(list(work_dir.parent.glob("*/started"))) < 4:
        assert time.monotonic() < deadline, "the other runs did not start"
        time.sleep(0.02)
    if settings["N"] == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    while first and time.monotonic() < deadline:  # ended by the broken pool
        time.sleep(0.05)
    return helpers.execute_theory_mc(settings, work_dir, progress)


CRASHING = """
name: tiny_crash
kind: theory_mc_crash
fixed: {{seed: 11, samples: {samples}, chunks: 2, M: 2}}
grid: {{N: [1, 2, 3, 4]}}
scales: {{quick: {{}}, paper: {{}}}}
"""


def unpicklable_at_n1(settings: dict, work_dir: Path, progress: bool) -> helpers.RunOutput:
    """``theory_mc`` whose N = 1 run returns a table its worker cannot send back (a cell
    holding a local function), as a run kind of one's own might."""
    out = helpers.execute_theory_mc(settings, work_dir, progress)
    if settings["N"] == 1:
        out.tables["bias"]["note"] = [lambda: 0] * len(out.tables["bias"])
    return out


@pytest.mark.parametrize("table", ["runs", "members", "events"])
def test_a_sweep_on_a_store_damaged_past_its_schema_is_one_line_not_a_traceback(
    tmp_path, capsys, theory_kinds, table
):
    """The sweep opens its store for writing; a damaged runs/members/events page raised
    sqlite3.DatabaseError from register() (or later, from the first event written after
    hours of work) as a traceback. Now: one line naming the file, exit 2, nothing run."""
    path = _theory(tmp_path)
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(load_config(path).runs[:1])
    _damage_page(out / "results.sqlite", table)
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(out / "results.sqlite") in err[0] and "cannot open" in err[0], err
    assert not (out / "tables").exists()  # nothing ran


def test_kill_9_while_a_table_file_is_half_written_then_status_and_resume(
    tmp_path, capsys, theory_kinds
):
    """SIGKILL halfway through the third run's table file: the two runs stored before
    survive and are not run again; the cut run (row 'running', half a file in a temporary
    name, no manifest) is never read as a result, status says it will be re-run and
    --verify finds no bad finished run; the workers die with the sweep; the resumed sweep
    runs the six others once each and gives the direct calls' numbers."""
    path = _theory(tmp_path)
    out = tmp_path / "out"
    workers = _kill_at(tmp_path, "table_write", 3, path, out)
    assert workers and helpers.gone(workers, within=30.0), "pool workers outlived the killed sweep"
    with ResultsStore(out) as store:
        recs = {r.run_id: r for r in store.records()}
        done = {i for i, r in recs.items() if r.status == "done"}
        cut = [i for i, r in recs.items() if (out / "tables" / i).is_dir() and i not in done]
    assert len(done) == 2 and len(cut) == 1, recs
    assert recs[cut[0]].status == "running"
    assert list((out / "tables" / cut[0]).glob(".bias.csv.*.tmp"))  # the half-written file
    assert not (out / "tables" / cut[0] / "manifest.json").exists()
    assert set(load_results(out)["bias"]["run_id"]) == done
    capsys.readouterr()
    assert main(["status", str(out), "--verify"]) == 0
    shown = capsys.readouterr().out
    assert "no sweep running" in shown
    assert f"stale    {cut[0]} since" in shown and "(interrupted; will be re-run)" in shown
    assert "verified: 0 finished run(s) with bad files" in shown
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert ": 8 runs, 2 already done in " in capsys.readouterr().out
    summary = run_sweep(path, out, workers=2, progress=False)
    assert (summary.skipped, summary.done, summary.failed) == (2, 6, 0)
    assert set(_events(out, "done").values()) == {1} and len(_events(out, "done")) == 8
    started = _events(out, "started")
    assert all(started[i] == 1 for i in done) and started[cut[0]] == 2
    assert not list((out / "tables").glob("*/.*.tmp"))
    got = load_results(out)["bias"]
    for run in load_config(path).runs:  # the numbers of a direct call of the run function
        want = helpers.execute_theory_mc(run.settings, tmp_path, False).tables["bias"]
        mine = got[got["run_id"] == run.run_id][list(want.columns)].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, want, check_exact=True)


def test_a_diverged_run_killed_before_its_status_was_written_stays_diverged(
    tmp_path, capsys, theory_kinds
):
    """SIGKILL after a diverged run's tables were stored, before its row said so: the next
    sweep keeps the tables (no re-run) and must record the run as diverged, with its note,
    not as done (which load_results(include_diverged=False) and the report would take)."""
    path = _theory(tmp_path, text=DIVERGING)
    out = tmp_path / "out"
    (run,) = load_config(path).runs
    _kill_at(tmp_path, "before_final_status", "diverged", path, out)
    with ResultsStore(out) as store:
        assert store.get(run.run_id).status == "running"
        assert store.verify_tables(run.run_id) is None  # stored before the kill
    capsys.readouterr()
    assert main(["status", str(out)]) == 0
    assert "the next sweep marks it diverged)" in capsys.readouterr().out
    summary = run_sweep(path, out, workers=1, progress=False)
    assert (summary.skipped, summary.done, summary.diverged) == (1, 0, 0)
    with ResultsStore(out) as store:
        rec = store.get(run.run_id)
    assert (rec.status, rec.error, rec.attempts) == ("diverged", "diverged at M=2", 1)
    assert load_results(out, include_diverged=False) == {}
    assert set(load_results(out)["bias"]["run_status"]) == {"diverged"}


def test_a_config_edited_between_sweeps_reuses_only_equal_runs_and_says_what_stays(
    tmp_path, capsys, theory_kinds
):
    """Runs are reused only when their settings are equal (a grid extended: the old runs are
    skipped; a fixed setting changed: all run again). Runs the edited config no longer
    makes stay in the folder under the config's name, counted by 'maxminq status' and the
    report with the new ones: the sweep (and its dry run) says so in one line."""
    out = tmp_path / "out"
    config = tmp_path / "edit.yaml"

    def sweep(samples: int, ns: str, *extra: str) -> tuple[str, list[str]]:
        config.write_text(EDITABLE.format(samples=samples, ns=ns))
        argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
        assert main([*argv, *extra]) == 0
        got = capsys.readouterr()
        return got.out, got.err.strip().splitlines()

    capsys.readouterr()
    assert sweep(2000, "[1, 2]")[1] == []
    printed, err = sweep(2000, "[1, 2, 3]")  # extended: nothing stale
    assert "3 runs, 2 already done, 1 done" in printed and err == []
    printed, err = sweep(3000, "[1, 2, 3]")  # a fixed setting changed: new runs
    assert "3 runs, 0 already done, 3 done" in printed
    assert len(err) == 1 and "3 run(s) of config tiny_edit" in err[0], err
    assert str(out) in err[0] and "--out" in err[0]
    printed, err = sweep(3000, "[1]", "--dry-run")  # a value removed: 5 others stay
    assert "1 run, 1 already done" in printed
    assert len(err) == 1 and "5 run(s) of config tiny_edit" in err[0], err
    assert main(["status", str(out)]) == 0  # what the note warns of: 6 runs listed
    assert capsys.readouterr().out.splitlines()[2].split()[-1] == "6"


def test_a_lost_registry_is_rebuilt_from_the_verified_tables_not_by_rerunning(
    tmp_path, capsys, theory_kinds
):
    """results.sqlite truncated to nothing (a lost or emptied registry) next to intact
    tables: the sweep re-ran every finished run (hours at paper scale). A run registered
    as pending whose tables verify against their manifest was stored by a sweep (a manifest
    is written last, only for complete tables), so it is taken as finished; a run whose
    tables were damaged as well is run again."""
    path = _theory(tmp_path)
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False).done == 8
    before = load_results(out)["bias"]
    (out / "results.sqlite").write_bytes(b"")
    victim = sorted((out / "tables").iterdir())[0]
    (victim / "bias.csv").write_text("M,N\n")
    # The dry run counts as the sweep will: it said '0 already done' for a lost registry
    # (and refused an emptied one), and it writes nothing.
    capsys.readouterr()
    for lost in (False, True):
        if lost:
            (out / "results.sqlite").unlink()
        assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
        assert ": 8 runs, 7 already done in " in capsys.readouterr().out
    assert not (out / "results.sqlite").exists()
    summary = run_sweep(path, out, workers=2, progress=False)
    assert (summary.skipped, summary.done, summary.failed) == (7, 1, 0)
    assert _events(out, "started") == Counter({victim.name: 1})
    after = load_results(out)["bias"]
    pd.testing.assert_frame_equal(after, before, check_exact=True)


def test_a_worker_that_dies_fails_its_own_run_only(tmp_path, theory_kinds):
    """One run kills its worker while three others are in flight: the local pool breaks and
    every run in flight got 'worker process died' and counted as failed, so a run that
    never crashes failed on every resume where it ran beside the culprit. The runs in
    flight at a break are now requeued and run alone; only the one that kills its worker
    alone fails. (The death of a worker spawned last also went unnoticed until another run
    ended: here the others' first attempts, after a minute, so they finished as 'done' at
    attempt 1 in about one sweep in five; now the sweep notices within half a second.)"""
    from maxminq.experiments.registry import KINDS, RunKind

    KINDS["theory_mc_crash"] = RunKind("theory_mc_crash", helpers.validate_theory_mc, crash_at_n3)
    try:
        path = _theory(tmp_path, text=CRASHING)
        out = tmp_path / "out"
        summary = run_sweep(path, out, workers=4, progress=False)
    finally:
        KINDS.pop("theory_mc_crash", None)
    with ResultsStore(out) as store:
        recs = {r.settings["N"]: r for r in store.records()}
    assert {n: r.status for n, r in recs.items()} == {1: "done", 2: "done", 3: "failed", 4: "done"}
    assert "worker process died" in recs[3].error
    assert (summary.done, summary.failed) == (3, 1) and list(summary.failures) == [recs[3].run_id]
    assert {n: r.attempts for n, r in recs.items()} == {1: 2, 2: 2, 3: 2, 4: 2}  # then alone


def test_a_full_disk_during_a_sweep_is_one_line_and_the_resume_completes(tmp_path, theory_kinds):
    """The results database cannot grow past 200 kB (its write-ahead log fills up after a
    few runs): the sweep stopped with a sqlite3.OperationalError traceback (twice over:
    again while requeueing the runs in flight). Now one line naming the database, exit 2;
    the next sweep, with space again, finishes every run exactly once."""
    path = _theory(tmp_path)
    out = tmp_path / "out"
    cmd = [sys.executable, str(TESTS / "sweep_kinds.py"), "sweep", str(path)]
    cmd += ["--out", str(out), "--workers", "2", "--no-progress"]
    proc = subprocess.run(  # the CLI, with the test kinds registered
        cmd,
        capture_output=True,
        text=True,
        timeout=180,
        preexec_fn=lambda: helpers.no_bigger_files_than(200_000),
    )
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert err[0].startswith(f"maxminq sweep: error: {out / 'results.sqlite'}: ")
    assert "disk I/O error" in err[0] or "full" in err[0], err
    summary = run_sweep(path, out, workers=2, progress=False)
    assert summary.ok and summary.skipped + summary.done == 8
    assert len(_events(out, "done")) == 8 and set(_events(out, "done").values()) == {1}


def test_a_result_that_cannot_be_sent_back_fails_its_run_not_the_pool(tmp_path, theory_kinds):
    """A worker that cannot pickle its run's result is alive and well: the run fails with
    that reason, once, and the pool is left alone (it was taken for a dead worker: 'worker
    process died', the pool replaced, the run tried again alone)."""
    from maxminq.experiments.registry import KINDS, RunKind

    text = CRASHING.replace("tiny_crash", "tiny_pickle").replace("N: [1, 2, 3, 4]", "N: [1, 2]")
    KINDS["theory_mc_crash"] = RunKind(
        "theory_mc_crash", helpers.validate_theory_mc, unpicklable_at_n1
    )
    try:
        out = tmp_path / "out"
        summary = run_sweep(_theory(tmp_path, text=text), out, workers=2, progress=False)
    finally:
        KINDS.pop("theory_mc_crash", None)
    with ResultsStore(out) as store:
        recs = {r.settings["N"]: r for r in store.records()}
    assert (summary.done, summary.failed) == (1, 1)
    assert (recs[1].status, recs[1].attempts, recs[2].status) == ("failed", 1, "done")
    assert "pickle" in recs[1].error and "worker process died" not in recs[1].error
