"""The sweep runner: results equal direct calls, resume, failures, corruption, SIGKILL,
concurrent sweeps on one folder, and Ray vs local.

The toy MDP (a shipped run kind) is used where the run function itself matters; the
process-level tests use the test-only ``theory_mc`` kind of ``sweep_kinds`` (a real
Monte-Carlo estimate of Theorem 1, pure NumPy) so that worker start-up stays cheap.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sweep_kinds as helpers
from helpers import REPO, TESTS

from maxminq.experiments.config import load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore, load_results

HERE = TESTS


TOY = """
name: tiny_toy
kind: toy_mdp
fixed: {{seed: 7, episodes: {episodes}, runs: {runs}}}
grid: {{mu: [0.1, -0.1]}}
variants:
  - {{algorithm: q_learning, n: 1}}
  - {{algorithm: maxmin, n: 2}}
scales: {{quick: {{}}, paper: {{}}}}
"""


THEORY = helpers.THEORY_CONFIG


def _toy(tmp_path: Path, runs: int = 5, episodes: int = 20) -> Path:
    path = tmp_path / "toy.yaml"
    path.write_text(TOY.format(runs=runs, episodes=episodes))
    return path


def _theory(tmp_path: Path, kind: str = "theory_mc", samples: int = 20_000) -> Path:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(THEORY.format(kind=kind, samples=samples))
    return path


def _direct(config_path: Path, kind: str) -> pd.DataFrame:
    """Expected results: the run function called directly on each expanded setting."""
    frames = []
    for run in load_config(config_path, "quick").runs:
        if kind == "toy_mdp":
            from maxminq.tabular.toy_mdp import run_toy_mdp

            frame = run_toy_mdp(**run.settings)
        else:
            frame = helpers.execute_theory_mc(run.settings, Path("."), False).tables["bias"]
        frame.insert(0, "run_id", run.run_id)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _same(got: pd.DataFrame, expected: pd.DataFrame, key: list[str]) -> None:
    got = got[list(expected.columns)].sort_values(key).reset_index(drop=True)
    expected = expected.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def _done_events(out: Path) -> Counter:
    with ResultsStore(out) as store:
        return Counter(e["run_id"] for e in store.events() if e["event"] == "done")


def _integrity_ok(out: Path) -> bool:
    con = sqlite3.connect(out / "results.sqlite")
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


DEEP = """
name: cp_tiny
kind: deep
fixed: {env_id: CartPole-v1, steps: 150, seeds: [0, 1], learning_starts: 100, eval_episodes: 1}
variants:
  - {agent: dqn, n: 1}
  - {agent: maxmin-dqn, n: 2, lr: [0.001, 0.0003]}
scales: {quick: {}, paper: {}}
"""


def _sweep_cmd(path: Path, out: Path) -> list[str]:
    """The CLI, in a process that registers the test kinds first."""
    return [sys.executable, str(TESTS / "sweep_kinds.py"), "sweep", str(path),
            "--out", str(out), "--workers", "2", "--no-progress"]  # fmt: skip


ABORT_WHILE_A_RESULT_IS_HALF_SENT = """
import os, struct, time
from maxminq.experiments.runner import _LocalBackend

if __name__ == "__main__":
    backend = _LocalBackend(1)
    backend._pool.submit(os.getpid).result(timeout=60)  # workers and result thread running
    # A message header promising 1,000 bytes, then 10 of them: what a worker killed (Ctrl-C)
    # while sending its tables leaves in the result pipe.
    os.write(backend._pool._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
    time.sleep(0.5)
    manager = backend._pool._executor_manager_thread
    backend.abort()
    manager.join(timeout=20)
    print("ended" if not manager.is_alive() else "alive", flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_finished_sweep_leaves_no_empty_work_folder(tmp_path, theory_kinds) -> None:
    """Every run's scratch folder is removed once it is stored, and OUT/work with them when
    it is left empty (maxminq sweep and reproduce both run run_sweep); keep_work
    (--keep-work) keeps it with the runs' folders. Before, an empty OUT/work stayed."""
    from maxminq.experiments.runner import run_sweep

    config = tmp_path / "tiny_theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=2_000))
    out = tmp_path / "out"
    assert run_sweep(config, out, workers=1, progress=False).done == 8
    assert len(list((out / "tables").iterdir())) == 8
    assert not (out / "work").exists()
    kept = tmp_path / "kept"
    assert run_sweep(config, kept, workers=1, progress=False, keep_work=True).done == 8
    assert len(list((kept / "work").iterdir())) == 8


def test_the_failed_sweep_hint_quotes_a_folder_with_a_space() -> None:
    """Before: 'maxminq status results/my runs --errors', which a shell reads as two
    folders."""
    from maxminq.commands.status import failures_hint

    hint = failures_hint(pathlib.Path("results/my runs"))
    assert "'maxminq status 'results/my runs' --errors' shows" in hint
    assert "'maxminq status results/quick --errors' shows" in failures_hint(
        pathlib.Path("results/quick")
    )


def test_toy_mdp_sweep_equals_direct_calls_and_resume_skips_done_runs(tmp_path):
    path = _toy(tmp_path)
    out = tmp_path / "out"
    summary = run_sweep(path, out, workers=2, progress=False)
    assert summary.ok and summary.done == summary.total == 4
    table = load_results(out)["toy_mdp"]
    assert set(table["config"]) == {"tiny_toy"} and set(table["kind"]) == {"toy_mdp"}
    assert set(table["batch_size"]) == {32}  # completed settings are carried as columns
    _same(table, _direct(path, "toy_mdp"), ["run_id", "run", "episode"])
    again = run_sweep(path, out, workers=2, progress=False)
    assert (again.skipped, again.done) == (4, 0)
    assert sorted(_done_events(out).values()) == [1, 1, 1, 1]


def test_status_runs_lists_each_run_with_its_varying_settings_and_plot_folder(tmp_path, capsys):
    from maxminq.cli import main
    from maxminq.experiments.config import RunSpec

    (tmp_path / "deep.yaml").write_text(DEEP)
    out = tmp_path / "out"
    assert run_sweep(tmp_path / "deep.yaml", out, workers=1, progress=False).ok
    assert run_sweep(_toy(tmp_path, runs=2, episodes=3), out, workers=1, progress=False).ok
    with ResultsStore(out) as store:  # a deep run not trained yet has no folder to plot
        first = store.records("cp_tiny")[0]
        todo = {**first.settings, "agent": "ddqn", "n": 1, "lr": 0.01}
        store.register([RunSpec("deep-notyet", "deep", todo, "cp_tiny")])
        deep = {r.run_id: r for r in store.records("cp_tiny")}
    capsys.readouterr()
    assert main(["status", str(out), "--runs"]) == 0
    text = capsys.readouterr().out
    part = text.split("runs of cp_tiny (4):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    head = part[0].split()
    # only what varies in the deep sweep: agent, lr, n (not env_id, steps, seeds, ...)
    assert head[:3] == ["run", "id", "kind"] and {"agent", "lr", "n"} <= set(head)
    assert not {"env_id", "steps", "seeds", "batch_size"} & set(head)
    rows = {line.split()[0]: line.split() for line in part[1:]}
    assert set(rows) == set(deep)
    listed = []
    for run_id, cells in rows.items():
        settings = deep[run_id].settings
        assert cells[1:3] == (["deep", "pending"] if run_id == "deep-notyet" else ["deep", "done"])
        assert settings["agent"] in cells
        assert f"{settings['lr']:g}" in cells and str(settings["n"]) in cells
        if run_id == "deep-notyet":
            assert cells[-1] == "-"
        else:
            assert cells[-1] == str(out / "tables" / run_id)
            listed.append(cells[-1])
    assert sorted(f"{deep[r].settings['lr']:g}" for r in rows if r != "deep-notyet") == [
        "0.0003", "0.0003", "0.001",
    ]  # fmt: skip
    # the toy config gets its own table, its own varying settings, and no plot folders
    toy = text.split("runs of tiny_toy (4):\n", 1)[1].splitlines()
    assert {"mu", "algorithm", "n"} <= set(toy[0].split()) and "episodes" not in toy[0]
    assert all(line.split()[-1] == "-" for line in toy[1:5])
    # the listed folders are what 'maxminq plot' takes; it reads each run's settings from
    # the sweep's manifest.json (no config.json there): the legend tells the runs apart by
    # agent and step size, not by folder name
    assert not any((Path(f) / "config.json").exists() for f in listed)
    assert main(["plot", *listed, "--out", str(tmp_path / "cmp")]) == 0
    legend = (tmp_path / "cmp.svg").read_text()
    assert (tmp_path / "cmp.png").read_bytes()[:4] == b"\x89PNG"
    for label in ("DQN", "Maxmin DQN (N=2), lr 0.001", "Maxmin DQN (N=2), lr 0.0003"):
        assert f"<!-- {label} -->" in legend, label
    assert not any(Path(f).name in legend for f in listed)


def test_status_shows_how_far_each_running_run_is(tmp_path, capsys):
    """While a sweep holds the folder, a running deep run's progress.json (37 of 100 steps)
    shows on its line; a running run without one shows none."""
    from maxminq.cli import main
    from maxminq.experiments.config import RunSpec

    out = tmp_path / "out"
    with ResultsStore(out, lock=True) as store:  # as the sweep process holds it
        store.register([RunSpec(f"deep-{i}", "deep", {"i": i}, "c") for i in (1, 2)])
        for i in (1, 2):
            store.mark_running(f"deep-{i}")
        store.work_dir("deep-1").mkdir(parents=True)
        (store.work_dir("deep-1") / "progress.json").write_text('{"step": 37, "steps": 100}')
        capsys.readouterr()
        assert main(["status", str(out)]) == 0
        lines = capsys.readouterr().out.splitlines()
    running = {line.split()[1]: line for line in lines if line.startswith("running")}
    assert running["deep-1"].endswith(": 37% of its steps")
    assert running["deep-2"].endswith(")")


def test_failed_runs_are_recorded_then_rerun(tmp_path, theory_kinds):
    path = _theory(tmp_path, "theory_mc_flaky")
    out = tmp_path / "out"
    first = run_sweep(path, out, workers=2, progress=False)
    assert (first.done, first.failed) == (4, 4) and not first.ok
    with ResultsStore(out) as store:
        failed = [r for r in store.records() if r.status == "failed"]
        assert sorted(r.settings["N"] for r in failed) == [3, 3, 4, 4]
        assert all(f"ValueError: boom for N={r.settings['N']}" in r.error for r in failed)
    status = subprocess.run(
        [sys.executable, "-m", "maxminq.cli", "status", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 1 and status.stdout.count("ValueError: boom") == 4
    (out / "work").mkdir(exist_ok=True)
    (out / "work" / "fixed").touch()
    second = run_sweep(path, out, workers=2, progress=False)
    assert (second.skipped, second.done, second.failed) == (4, 4, 0) and second.ok
    with ResultsStore(out) as store:
        attempts = {r.settings["N"]: r.attempts for r in store.records()}
    assert attempts == {1: 1, 2: 1, 3: 2, 4: 2}


def test_diverged_runs_are_kept_and_unstorable_tables_are_failures(tmp_path, theory_kinds, capsys):
    """N = 3 runs diverge: stored with their tables and note, counted as diverged, finished
    (not rerun), left out of load_results on request. N = 4 runs return a table the store
    refuses: failed with the reason, no table folder left, tried again by the next sweep
    ('maxminq sweep': each failure printed, exit 1)."""
    from maxminq.cli import main

    path = _theory(tmp_path, "theory_mc_diverge")
    out = tmp_path / "out"
    first = run_sweep(path, out, workers=2, progress=False)
    assert (first.done, first.diverged, first.failed) == (4, 2, 2) and not first.ok
    with ResultsStore(out) as store:
        recs = {(r.settings["M"], r.settings["N"]): r for r in store.records()}
    want = {1: "done", 2: "done", 3: "diverged", 4: "failed"}
    assert {key: rec.status for key, rec in recs.items()} == {
        (m, n): want[n] for m in (2, 8) for n in (1, 2, 3, 4)
    }
    for (m, n), rec in recs.items():
        if n == 3:
            assert rec.error == f"diverged at M={m}"
        if n == 4:
            assert rec.error.startswith("could not store the tables: ValueError: table name")
            assert "'bad-name'" in rec.error and not (out / "tables" / rec.run_id).exists()
    stored = load_results(out)["bias"]
    assert set(stored["N"]) == {1, 2, 3}
    assert set(stored.loc[stored["N"] == 3, "run_status"]) == {"diverged"}
    assert set(load_results(out, include_diverged=False)["bias"]["N"]) == {1, 2}
    _same(stored, _direct(path, "theory_mc")[lambda d: d["run_id"].isin(stored["run_id"])],
          ["run_id", "chunk"])  # fmt: skip
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out), "--workers", "2", "--no-progress"]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("tiny_theory [quick]: 8 runs, 6 already done")  # skipped
    failed = sorted(line.split()[1].rstrip(":") for line in printed if "  failed " in line)
    assert failed == sorted(rec.run_id for (m, n), rec in recs.items() if n == 4)
    with ResultsStore(out) as store:
        attempts = {r.settings["N"]: r.attempts for r in store.records()}
    assert attempts == {1: 1, 2: 1, 3: 1, 4: 2}


def test_corrupted_results_are_detected_and_rerun(tmp_path, theory_kinds):
    path = _theory(tmp_path)
    out = tmp_path / "out"
    run_sweep(path, out, workers=2, progress=False)
    victims = sorted((out / "tables").iterdir())[:2]
    data = (victims[0] / "bias.csv").read_bytes()
    (victims[0] / "bias.csv").write_bytes(data[: len(data) // 2])  # half-written
    (victims[1] / "manifest.json").unlink()  # manifest never renamed in
    summary = run_sweep(path, out, workers=2, progress=False)
    assert (summary.skipped, summary.done) == (6, 2)
    assert _done_events(out)[victims[0].name] == 2
    _same(load_results(out)["bias"], _direct(path, "theory_mc"), ["run_id", "chunk"])


def test_a_rerun_continues_from_the_checkpoints_in_its_work_folder(tmp_path, theory_kinds):
    path = _theory(tmp_path, "theory_mc_ckpt")
    out = tmp_path / "out"
    first = run_sweep(path, out, workers=2, progress=False)
    assert first.failed == 8
    with ResultsStore(out) as store:
        ids = [r.run_id for r in store.records()]
    assert all((out / "work" / i / "checkpoint.json").exists() for i in ids)
    second = run_sweep(path, out, workers=2, progress=False)
    assert second.done == 8 and second.ok
    assert not any((out / "work" / i).exists() for i in ids)  # scratch removed once stored
    # Continuing from the checkpoint gives the uninterrupted result.
    _same(load_results(out)["bias"], _direct(path, "theory_mc"), ["run_id", "chunk"])


def test_tensorboard_logs_survive_the_removal_of_the_scratch_folder(tmp_path, theory_kinds):
    """A deep run with tensorboard: true logs to OUT/work/<run_id>/tensorboard, which was
    deleted with the scratch folder once the run was stored: the logs move to
    OUT/tensorboard/<run_id> instead."""
    path = _theory(tmp_path, "theory_mc_logs")
    out = tmp_path / "out"
    assert run_sweep(path, out, workers=2, progress=False).done == 8
    with ResultsStore(out) as store:
        runs = {r.run_id: r.settings for r in store.records()}
    assert not (out / "work").exists() or not any((out / "work").iterdir())
    assert sorted(p.name for p in (out / "tensorboard").iterdir()) == sorted(runs)
    for run_id, settings in runs.items():
        text = (out / "tensorboard" / run_id / "events.out").read_text()
        assert text == f"M={settings['M']} N={settings['N']}\n"


def test_keep_work_keeps_each_finished_runs_scratch_folder(tmp_path, theory_kinds):
    """'maxminq sweep --keep-work': the scratch folders (checkpoints, logs) of finished runs
    stay in OUT/work, as they were written; without it they go (tests above)."""
    from maxminq.cli import main

    path = _theory(tmp_path, "theory_mc_logs")
    out = tmp_path / "out"
    argv = ["sweep", str(path), "--out", str(out), "--workers", "2", "--no-progress"]
    assert main([*argv, "--keep-work"]) == 0
    with ResultsStore(out) as store:
        runs = {r.run_id: r.settings for r in store.records() if r.status == "done"}
    assert len(runs) == 8 and not (out / "tensorboard").exists()
    for run_id, settings in runs.items():
        text = (out / "work" / run_id / "tensorboard" / "events.out").read_text()
        assert text == f"M={settings['M']} N={settings['N']}\n"


def test_sigkill_at_random_moments_then_resume_gives_the_uninterrupted_results(
    tmp_path, theory_kinds, capsys
):
    path = _theory(tmp_path, samples=150_000)
    out = tmp_path / "out"
    rng = np.random.default_rng(2020)
    kills = 0
    for _ in range(4):
        before = helpers.started_runs(out)
        proc = subprocess.Popen(_sweep_cmd(path, out), stdout=subprocess.DEVNULL)
        # Random moments while runs are in flight (start-up time varies with machine load).
        deadline = time.monotonic() + 60
        while (
            helpers.started_runs(out) == before
            and proc.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        time.sleep(float(rng.uniform(0.0, 1.2)))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)  # the driver only; its workers die with it
            kills += 1
        proc.wait()
    assert kills >= 2
    from maxminq.cli import main

    with ResultsStore(out) as store:
        stale = [r.run_id for r in store.records() if r.status == "running"]
    assert main(["status", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "no sweep running" in shown and all(f"stale    {i}" in shown for i in stale)
    # The resume, in this process: the killed sweeps above are the processes under test.
    final = run_sweep(path, out, workers=2, progress=False)
    assert final.ok, final.failures
    with ResultsStore(out) as store:
        assert store.counts() == {"pending": 0, "running": 0, "done": 8, "failed": 0, "diverged": 0}
        events = store.events()
    done = Counter(e["run_id"] for e in events if e["event"] == "done")
    assert len(done) == 8 and set(done.values()) == {1}  # none ran to completion twice
    assert any(e["event"] == "requeued" for e in events)  # a kill did interrupt runs
    assert _integrity_ok(out)
    left = sorted(str(p.relative_to(out)) for p in out.glob("work/**/*"))
    assert left == []  # a kill between storing a run and removing its scratch left these
    _same(load_results(out)["bias"], _direct(path, "theory_mc"), ["run_id", "chunk"])


def test_a_second_sweep_on_a_busy_folder_stops_with_a_clear_message(tmp_path, theory_kinds):
    path = _theory(tmp_path, samples=150_000)
    out = tmp_path / "out"
    first = subprocess.Popen(
        _sweep_cmd(path, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lock = out / ".sweep.lock"
    deadline = time.monotonic() + 60
    # Until the first holds the lock and has started runs: its store is set up then. Paused
    # as soon as it holds the lock, it could be inside the schema's first transaction, and
    # the second sweep's read of the store (before its lock check) waited out SQLite's 60 s
    # busy timeout (as it would for any sweep stopped there, e.g. by Ctrl-Z).
    while not (
        lock.exists() and f"pid {first.pid}" in lock.read_text() and helpers.started_runs(out)
    ):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.02)
    # Pause the first sweep while the second one starts, so that a loaded machine cannot let
    # the first finish (and free the folder) before the second looks at the lock.
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = subprocess.run(_sweep_cmd(path, out), capture_output=True, text=True, timeout=120)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "in use by another sweep" in lines[0] and f"pid {first.pid}" in lines[0]
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    done = _done_events(out)
    assert len(done) == 8 and set(done.values()) == {1}
    assert _integrity_ok(out)
    _same(load_results(out)["bias"], _direct(path, "theory_mc"), ["run_id", "chunk"])


@pytest.mark.slow
def test_ray_backend_gives_the_same_tables_as_local(tmp_path, theory_kinds, monkeypatch):
    import ray.cloudpickle

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    # Without --address the sweep starts a Ray of its own (README), even where RAY_ADDRESS
    # or a `ray start` cluster exists: plain ray.init() joined that cluster and then failed
    # with "ValueError: When connecting to an existing cluster, num_cpus ... must not be
    # provided". Nothing listens at this address; joining it would fail.
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    # Ray workers do not see the tests folder: ship the test kind's functions by value.
    ray.cloudpickle.register_pickle_by_value(helpers)
    path = _theory(tmp_path)
    local = run_sweep(path, tmp_path / "local", workers=2, progress=False)
    remote = run_sweep(path, tmp_path / "ray", backend="ray", workers=2, progress=False)
    assert local.ok and remote.ok and remote.done == 8
    a, b = load_results(tmp_path / "local"), load_results(tmp_path / "ray")
    assert set(a) == set(b) == {"bias"}
    pd.testing.assert_frame_equal(a["bias"], b["bias"], check_exact=True)
    _same(b["bias"], _direct(path, "theory_mc"), ["run_id", "chunk"])
    with ResultsStore(tmp_path / "ray") as store:
        assert {r.status for r in store.records()} == {"done"}
        assert {r.host for r in store.records()} == {os.uname().nodename}


def test_an_unreachable_ray_address_is_a_usage_error_before_anything_runs(tmp_path):
    """Ray retries an address where nothing listens for minutes (ignoring Ctrl-C); the
    sweep refuses it at once with one line and exit 2, and writes nothing."""
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "c.yaml"
    config.write_text(TOY)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "maxminq.cli", "sweep", str(config), "--out", str(out)]
    dead = f"127.0.0.1:{port}"
    for address, env, expect in (
        (dead, "", f"--address: no Ray cluster answers at {dead} (Connection refused)"),
        ("head-node", "", "--address: expected auto or HOST:PORT"),
        # auto means RAY_ADDRESS when set (or the last `ray start`, which may be long dead)
        ("auto", dead, f"no Ray cluster answers at {dead}, from auto (RAY_ADDRESS)"),
    ):
        proc = subprocess.run(  # Ray's own retries would outlast the timeout
            [*cmd, "--backend", "ray", "--address", address],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "RAY_ADDRESS": env},
        )
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and expect in lines[0], proc.stderr
    assert not out.exists()


def test_an_interrupt_while_a_worker_sends_its_tables_does_not_hang_the_exit(tmp_path):
    """The pool's result thread, stuck on a half-sent result, is joined at interpreter exit:
    'maxminq sweep' printed 'interrupted' and then hung for good (seen on about one Ctrl-C
    in three of a toy sweep with large tables). abort() must let that thread end."""
    script = tmp_path / "abort.py"
    script.write_text(ABORT_WHILE_A_RESULT_IS_HALF_SENT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0 and proc.stdout.strip() == "ended", proc.stderr


def test_ctrl_c_stops_a_sweep_at_once_with_one_line_and_the_runs_requeued(tmp_path):
    """SIGINT while toy-MDP runs are in flight: exit 130 within seconds, 'interrupted' and
    no multiprocessing noise (the killed workers' tqdm locks were reported as "leaked
    semaphore objects"), and every run back in the queue for the next sweep."""
    path = _toy(tmp_path, runs=300, episodes=6000)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "maxminq.cli", "sweep", str(path), "--out", str(out),
           "--workers", "2", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while helpers.started_runs(out) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(5.0)  # the workers are inside run_toy_mdp (kernels loaded, bar created)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "maxminq sweep: interrupted; finished runs are kept: the same command resumes"
    ], err
    with ResultsStore(out) as store:  # no run left "running": each is queued, or stored
        for rec in store.records():
            assert rec.status == "pending" or (
                rec.status == "done" and store.verify_tables(rec.run_id) is None
            ), rec
        assert any(rec.status == "pending" for rec in store.records())


def test_dry_run_of_one_run_says_run_not_runs(tmp_path, capsys):
    """A config that makes a single run is counted in the singular ('1 run', was '1 runs'),
    in the dry run and in the summary."""
    from maxminq.cli import main

    path = tmp_path / "one.yaml"
    path.write_text(
        "name: one\nkind: toy_mdp\nfixed: {seed: 7, episodes: 3, runs: 2, mu: 0.1}\n"
        "variants:\n  - {algorithm: q_learning, n: 1}\nscales: {quick: {}}\n"
    )
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("one [quick]: 1 run, 0 already done in "), line
    assert not out.exists()
    assert main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("one [quick]: 1 run, 0 already done, 1 done, "), line


def test_dry_run_prints_the_runs_and_the_work_left_and_writes_nothing(tmp_path, capsys):
    """--dry-run on a folder where 3 of a toy sweep's 4 runs (2 runs x 20 episodes each) are
    done: 1 is left, 40 episodes; a run whose files were corrupted counts as left (2 left:
    80 episodes). (The paper-scale Catcher dry run is checked against the README's line in
    project/test_readme.py.)"""
    from maxminq.cli import main

    toy = _toy(tmp_path, runs=2, episodes=20)
    config = load_config(toy, "quick")
    done = tmp_path / "done"
    first = type(config)(**{**config.__dict__, "runs": config.runs[:3]})
    assert run_sweep(first, done, workers=1, progress=False).done == 3
    assert main(["sweep", str(toy), "--out", str(done), "--dry-run"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == (
        f"tiny_toy [quick]: 4 runs, 3 already done in {done}, 1 to run: 40 episodes "
        "(dry run: nothing started)"
    )
    victim = next((done / "tables").iterdir()) / "toy_mdp.csv"
    victim.write_text("corrupt")
    assert main(["sweep", str(toy), "--out", str(done), "--dry-run"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith(
        f", 2 already done in {done}, 2 to run: 80 episodes (dry run: nothing started)"
    )
    with ResultsStore(done) as store:  # nothing registered or changed by the dry runs
        assert len(store.records()) == 3 and {r.status for r in store.records()} == {"done"}
        # a sweep SIGKILLed after storing a run's tables, before marking it done: the next
        # sweep marks it done (its tables verify), so it is not left to run
        kept = next(r.run_id for r in store.records() if store.verify_tables(r.run_id) is None)
        store.mark_running(kept)
    assert main(["sweep", str(toy), "--out", str(done), "--dry-run"]) == 0
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith(f", 2 already done in {done}, 2 to run: 80 episodes (dry run: nothing started)")
    )
    assert run_sweep(toy, done, workers=1, progress=False).skipped == 2


def test_sweep_warns_of_deep_runs_that_never_learn(tmp_path, capsys):
    """A deep run whose steps do not exceed learning_starts takes only random steps: the
    sweep says so on stderr before starting (here with --dry-run): at 800 and at 1,000 steps
    (learning starts at step 1,000, the 1,001st step); at 1,001 steps and in the shipped
    quick Catcher config (3,000 steps) there is no warning."""
    from maxminq.cli import main

    text = (REPO / "configs" / "catcher.yaml").read_text()
    assert "learning_starts" not in text  # the registry's 1,000 for Catcher
    cfg = tmp_path / "idle.yaml"
    for steps, warned in ((800, True), (1000, True), (1001, False)):
        edited = text.replace("name: catcher", "name: idle").replace(
            "steps: 3000", f"steps: {steps}"
        )
        assert f"steps: {steps}," in edited
        cfg.write_text(edited)
        assert main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == int(warned), (steps, err)
        if warned:
            assert "never learn" in err[0] and "steps <= learning_starts" in err[0]
    catcher = REPO / "configs" / "catcher.yaml"
    assert main(["sweep", str(catcher), "--out", str(tmp_path / "c"), "--dry-run"]) == 0
    assert capsys.readouterr().err == ""


def test_sweep_warns_of_more_local_workers_than_cores(tmp_path, capsys):
    """Each local worker is a process of its own, started as runs need one: --workers 200
    on a 2-core machine started up to 200 processes (hundreds of MB each) without a word.
    The sweep warns on stderr; as many workers as cores give no warning."""
    import os

    from maxminq.cli import main

    cfg = REPO / "configs" / "toy_mdp.yaml"
    cores = os.cpu_count() or 1
    out = str(tmp_path / "o")
    assert main(["sweep", str(cfg), "--out", out, "--dry-run", "--workers", str(cores + 1)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"maxminq sweep: warning: --workers {cores + 1} is more than this machine's {cores} "
        "cores: each worker is a process with its own memory, and they slow each other down"
    ]
    assert main(["sweep", str(cfg), "--out", out, "--dry-run", "--workers", str(cores)]) == 0
    assert capsys.readouterr().err == ""
