"""SIGTERM, how batch schedulers (SLURM, Kubernetes, ``timeout``) stop a job, handled as
Ctrl-C is: ``maxminq train``, ``sweep`` and ``experiment`` end with exit status 143 and the
one line ``maxminq NAME: terminated`` (plus the command's resume hint), keep what the next
run needs, leave no worker process running, and the same command (``train --resume``, the
same ``sweep``) then finishes to what an uninterrupted run gives. (Before, SIGTERM killed
the driver on the spot: exit -15, no message, workers left to the kernel, a sweep's runs
in flight left 'running'.) Each test starts the real command as a subprocess at a tiny
scale and sends SIGTERM to it alone (not to its process group) once it has started work."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import pandas as pd
import pytest
import test_sweep_helpers as helpers
import torch
from helpers import rerun_while_late, terminate_or_finished

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import read_tables, run_training
from maxminq.experiments.config import load_config
from maxminq.experiments.store import ResultsStore, load_results

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HERE = pathlib.Path(__file__).resolve().parent
CLI = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"

# A tiny CartPole run: 200 steps, a checkpoint every 40 (the run of test_train_robustness,
# shorter).
TRAIN, TRAIN_KW = helpers.tiny_train(200, bias_every=50)


def test_sigterm_stops_train_like_ctrl_c_and_resume_gives_the_uninterrupted_run(
    tmp_path, capsys, torch_one_thread
) -> None:
    """SIGTERM once step 100 is reported (the last periodic checkpoint: step 80): exit 143,
    a checkpoint of the step it stopped at (100 or later: not the periodic one of step 80),
    what --resume will find, then 'maxminq train: terminated'; no temporary file left;
    --resume gives the tables of an uninterrupted run, bitwise (all but the wall-clock
    steps_per_s)."""
    out = tmp_path / "terminated"
    # Step 100 to the end takes under a second here: a loaded machine that does not run this
    # process for that long lets the run finish (runs.csv written, exit 0) before SIGTERM.
    # Such a run tests nothing here: it is removed and run again (at most 3 runs).

    def terminate_at_step_100() -> tuple[int, str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, *TRAIN, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        return terminate_or_finished(proc, lambda: helpers.progress_step(out) >= 100)

    status, err = rerun_while_late(
        terminate_at_step_100,
        lambda run: run[0] == 0 or (out / "runs.csv").exists(),
        lambda: shutil.rmtree(out),
    )
    assert status == 143, err
    step = int(torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step <= 200, err
    assert err.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step {step} (of 200); the "
        "same command with --resume continues from it",
        "maxminq train: terminated",
    ], err
    assert not (out / "runs.csv").exists() and not list(out.rglob("*.tmp"))
    assert main([*TRAIN, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    whole = tmp_path / "whole"
    with torch.random.fork_rng():
        run_training(TrainConfig(**TRAIN_KW), whole, resume=False, progress=False)
    helpers.same_tables(read_tables(out), read_tables(whole))


@pytest.mark.parametrize("target", ["driver", "group"])
def test_sigterm_stops_a_sweep_like_ctrl_c_and_the_same_command_finishes_it(
    tmp_path, theory_kinds, capsys, target: str
) -> None:
    """SIGTERM to the driver alone (Kubernetes, timeout) or to it and its workers (SLURM)
    while runs are in flight: exit 143, 'maxminq sweep: terminated; ...', the workers gone,
    no run left 'running' or failed; the same command then stores every run exactly once,
    with the numbers of the direct calls."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
    script = [sys.executable, str(HERE / "test_sweep_helpers.py")]  # the test kinds known
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = helpers.terminate_when(proc, working, group=target == "group")
    assert status == 143, err
    assert err.strip().splitlines() == [
        "maxminq sweep: terminated; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the terminated sweep"
    with ResultsStore(out) as store:
        statuses = Counter(rec.status for rec in store.records())
    assert set(statuses) <= {"pending", "done"} and statuses["pending"] >= 1, statuses
    # The same command again, in this process (the test kinds are registered here too): the
    # process that is stopped is the one above; a second one would only start Python again.
    assert main(argv) == 0, capsys.readouterr().err
    with ResultsStore(out) as store:
        done = Counter(e["run_id"] for e in store.events() if e["event"] == "done")
        records = store.records()
    runs = load_config(config, "quick").runs
    assert {r.run_id for r in records} == {r.run_id for r in runs}
    assert {r.status for r in records} == {"done"}
    assert sorted(done.values()) == [1] * len(runs)  # each run stored once
    stored = load_results(out)["bias"]
    for run in runs:
        direct = helpers.execute_theory_mc(run.settings, tmp_path, False).tables["bias"]
        mine = stored[stored["run_id"] == run.run_id].sort_values("chunk")[list(direct.columns)]
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), direct, check_dtype=False)


@pytest.mark.parametrize("target", ["driver", "group"])
def test_sigterm_stops_experiment_and_its_workers_and_writes_nothing(tmp_path, target: str) -> None:
    """SIGTERM to ``maxminq experiment mountain-car`` alone, or to it and its workers, while
    its two workers run tasks of about 10^9 steps: exit 143, 'maxminq experiment:
    terminated' (not 'a worker process died'), both workers gone within seconds, no CSV,
    figure or temporary file in --out (it writes only at the end; the same command starts
    again)."""
    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "20", "--episodes", "100000",
            "--sigma2", "50", "--algorithms", "q_learning", "--step-sizes", "0.02", "0.04",
            "0.08", "--workers", "2", "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    workers: list[int] = []
    seen: dict[str, float] = {}

    def working() -> bool:  # both workers up, then 2 s into their tasks
        workers[:] = helpers.workers(proc.pid) or workers
        if len(workers) == 2:
            seen.setdefault("at", time.monotonic())
        return "at" in seen and time.monotonic() - seen["at"] > 2.0

    status, err = helpers.terminate_when(proc, working, group=target == "group")
    assert status == 143, err
    assert err.strip().splitlines() == ["maxminq experiment: terminated"], err
    assert helpers.gone(workers), "workers outlived the terminated command"
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


def test_sigterm_stops_a_ray_sweep_like_ctrl_c(tmp_path, theory_kinds) -> None:
    """With --backend ray, ray.init put its own SIGTERM handlers in place (its core
    worker's aborts: exit 134 and a stack dump, runs in flight left 'running'), and Ray turns
    the exception a handler raises inside ray.wait into a plain KeyboardInterrupt. Now the
    same as the local backend: exit 143, the one line, the runs in flight requeued."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "2", "--no-progress"]
    argv += ["--backend", "ray"]
    script = [sys.executable, str(HERE / "test_sweep_helpers.py")]
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    status, err = helpers.terminate_when(proc, lambda: helpers.started_runs(out) >= 1, timeout=120)
    lines = [line for line in err.strip().splitlines() if "INFO worker.py" not in line]
    assert status == 143, err
    assert lines == [
        "maxminq sweep: terminated; finished runs are kept: the same command resumes"
    ], err
    with ResultsStore(out) as store:
        statuses = Counter(rec.status for rec in store.records())
    assert set(statuses) <= {"pending", "done"} and statuses["pending"] >= 1, statuses


def test_main_puts_the_sigterm_handler_it_replaced_back(tmp_path, capsys) -> None:
    """main() handles SIGTERM only while its command runs: a program (or test session)
    calling it keeps its own handler afterwards, also when the command failed."""

    def mine(signum: int, frame: object) -> None:
        """A caller's own handler."""

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        assert main(["envs"]) == 0
        assert signal.getsignal(signal.SIGTERM) is mine
        argv = ["train", "--env", "CartPole-v1", "--out", str(tmp_path / "run")]
        assert main([*argv, "--threads", "0"]) == 2  # a UsageError in the command
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    capsys.readouterr()


def test_sigterm_stops_reproduce_like_ctrl_c_and_the_same_command_finishes_it(
    tmp_path, theory_kinds, capsys
) -> None:
    """'maxminq reproduce' runs its sweeps through the same path: SIGTERM while runs are in
    flight ends it with exit 143 and the sweep's resume hint, its workers gone and no
    report written; the same command then stores every run once and writes the report."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_theory.yaml").write_text(
        helpers.THEORY_CONFIG.format(kind="theory_mc", samples=80_000)
    )
    out = tmp_path / "out"
    argv = ["reproduce", "--configs", str(configs), "--only", "tiny_theory", "--out", str(out)]
    argv += ["--workers", "2", "--no-progress"]
    script = [sys.executable, str(HERE / "test_sweep_helpers.py")]  # the test kinds known
    proc = subprocess.Popen([*script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = helpers.terminate_when(proc, working)
    assert status == 143, err
    assert err.strip().splitlines() == [
        "maxminq reproduce: terminated; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the terminated command"
    assert not (out / "report.html").exists()
    assert main(argv) == 0, capsys.readouterr().err  # the same command, in this process
    with ResultsStore(out) as store:
        done = Counter(e["run_id"] for e in store.events() if e["event"] == "done")
    assert sorted(done.values()) == [1] * 8
    assert (out / "report.html").exists()
