"""A test-only run kind for the runner tests (registered by the tests themselves).

``theory_mc`` is a real, small experiment: the Monte-Carlo estimate of Theorem 1's bias
and Corollary 1's variance ratio (:func:`maxminq.theory.monte_carlo_bias`) for one (M, N).
It is pure NumPy, so worker processes start in a fraction of a second (the toy MDP's numba
kernels take several seconds to load per process on a busy machine), and its run time is
set by ``samples``. Running this file as a script registers the kind and runs the CLI.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from maxminq.experiments.registry import KINDS, RunKind, RunOutput, SettingsError

# A sweep of this kind (or a variant registered by a test) over 8 (M, N) cells; fill in
# ``kind`` and ``samples`` with ``str.format``.
THEORY_CONFIG = """
name: tiny_theory
kind: {kind}
fixed: {{seed: 11, samples: {samples}, chunks: 3}}
grid: {{M: [2, 8], N: [1, 2, 3, 4]}}
scales: {{quick: {{}}, paper: {{}}}}
"""


class TheoryMCSettings(BaseModel):
    """Settings of one Monte-Carlo estimate."""

    model_config = ConfigDict(extra="forbid")
    M: int = Field(ge=1)
    N: int = Field(ge=1)
    samples: int = Field(ge=2)
    seed: int = Field(ge=0)
    chunks: int = Field(default=4, ge=1)


def no_bigger_files_than(limit: int) -> None:
    """In a child process: files can grow to ``limit`` bytes (a full disk or a quota)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond it fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def started_runs(out: Path) -> int:
    """Run attempts a sweep in ``out`` has started so far, read-only (0 while its database
    is not there or its tables are not created yet); tests poll it to act mid-sweep."""
    if not (out / "results.sqlite").exists():
        return 0
    con = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM events WHERE event='started'").fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return 0
    finally:
        con.close()


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (from /proc; a zombie waiting to be reaped does not)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pids: list[int], within: float = 10.0) -> bool:
    """Whether every process in ``pids`` has ended (polled for up to ``within`` s)."""
    deadline = time.monotonic() + within
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(map(alive, pids))


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:  # gone
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def workers(pid: int) -> list[int]:
    """``pid``'s multiprocessing workers (spawned: their command line says spawn_main)."""
    found = []
    for child in children(pid):
        try:
            cmdline = (Path("/proc") / str(child) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            found.append(child)
    return found


def wait_for_workers(
    proc: subprocess.Popen, count: int = 2, within: float = 30.0, poll: float = 0.01
) -> list[int]:
    """``proc``'s spawned workers once ``count`` of them exist (fewer if ``proc`` ends or
    ``within`` seconds pass first: the caller asserts how many it needs)."""
    deadline = time.monotonic() + within
    found: list[int] = []
    while len(found) < count and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(poll)
        found = workers(proc.pid)
    return found


def default_sighup() -> None:
    """``preexec_fn``: SIGHUP at its default in the child, as in a terminal session. The
    tests may themselves run under ``nohup`` (a CI job), whose ignored SIGHUP a child
    inherits: the command then rightly runs on, and a hang-up test would test nothing."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def terminate_when(
    proc: subprocess.Popen,
    ready: Callable[[], bool],
    timeout: float = 60.0,
    group: bool = False,
    sig: int = signal.SIGTERM,
) -> tuple[int, str]:
    """SIGTERM (or ``sig``) ``proc`` once ``ready()`` holds; its exit status and stderr.
    ``group``: to its whole process group (started with ``start_new_session``), as SLURM
    signals every process of a job step (and a closed terminal sends SIGHUP); else to
    ``proc`` alone, as Kubernetes or ``timeout`` do."""
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None and not ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, f"it ended first: {proc.communicate()}"
        assert ready(), "it never started work"
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours: started by this test
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def progress_step(out: Path) -> int:
    """The step a ``maxminq train`` run in ``out`` reports in progress.json (-1 while it is
    not there or not whole)."""
    try:
        return int(json.loads((out / "progress.json").read_text())["step"])
    except (OSError, ValueError, KeyError):
        return -1


def tiny_train(steps: int, bias_every: int) -> tuple[list[str], dict[str, Any]]:
    """A tiny CartPole run of Maxmin DQN (N = 2, seeds 0 and 1, learning after 40 steps, a
    checkpoint every 40): its ``maxminq train`` arguments (without --out) and the same run
    as TrainConfig keywords, so the two cannot drift apart."""
    kw: dict[str, Any] = dict(
        env_id="CartPole-v1", agent="maxmin-dqn", n=2, lr=1e-3, steps=steps, seeds=[0, 1],
        learning_starts=40, eval_episodes=2, bias_every=bias_every, buffer_size=200,
        target_update=30, checkpoint_every=40,
    )  # fmt: skip
    argv = ["train", "--env", kw["env_id"], "--agent", kw["agent"], "--n", "2", "--lr", "1e-3"]
    argv += ["--steps", str(steps), "--seeds", "0-1", "--learning-starts", "40"]
    argv += ["--eval-episodes", "2", "--bias-every", str(bias_every), "--buffer-size", "200"]
    argv += ["--target-update", "30", "--checkpoint-every", "40", "--no-progress", "--no-plot"]
    return argv, kw


def same_tables(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    """``a`` and ``b`` (a deep run's tables) hold the same tables, bitwise, all but the
    wall-clock steps_per_s of metrics (row labels ignored: a seed's rows may be a subset)."""
    assert sorted(a) == sorted(b)
    for name in a:
        x, y = a[name], b[name]
        if name == "metrics":
            x, y = x.drop(columns="steps_per_s"), y.drop(columns="steps_per_s")
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True))


def validate_theory_mc(settings: dict) -> dict:
    """Validate the settings (pydantic) for the registry."""
    try:
        return TheoryMCSettings.model_validate(settings).model_dump()
    except ValidationError as err:
        first = err.errors()[0]
        raise SettingsError(str(first["loc"][0]) if first["loc"] else None, first["msg"]) from None


def _estimate(settings: dict, rng: np.random.Generator, chunk: int) -> dict:
    """One Monte-Carlo estimate as a table row."""
    from maxminq.theory import monte_carlo_bias

    est = monte_carlo_bias(settings["M"], settings["N"], 1.0, 1.0, settings["samples"], rng)
    return {
        "chunk": chunk,
        "bias": float(est.bias),
        "bias_se": float(est.bias_se),
        "variance_ratio": float(est.variance_ratio),
    }


def execute_theory_mc(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
    """``chunks`` independent estimates, one row each (a table with several rows)."""
    rng = np.random.default_rng(settings["seed"])
    rows = [_estimate(settings, rng, chunk) for chunk in range(settings["chunks"])]
    return RunOutput({"bias": pd.DataFrame(rows)})


def fail_unless_fixed(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
    """Like ``theory_mc`` but fails for N > 2 until ``OUT/work/fixed`` exists."""
    if settings["N"] > 2 and not (work_dir.parent / "fixed").exists():
        raise ValueError(f"boom for N={settings['N']}")
    return execute_theory_mc(settings, work_dir, progress)


def checkpointed(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
    """``theory_mc`` with a checkpoint after each chunk in ``work_dir``; the first attempt
    stops (fails) after one chunk, as a killed run would; the next attempt continues."""
    import json

    ckpt = work_dir / "checkpoint.json"
    if ckpt.exists():
        state = json.loads(ckpt.read_text())
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        rows = state["rows"]
    else:
        rng, rows = np.random.default_rng(settings["seed"]), []
    while len(rows) < settings["chunks"]:
        rows.append(_estimate(settings, rng, len(rows)))
        work_dir.mkdir(parents=True, exist_ok=True)
        ckpt.write_text(json.dumps({"rng": rng.bit_generator.state, "rows": rows}))
        if len(rows) == 1 and not ckpt.with_name("resumed").exists():
            ckpt.with_name("resumed").touch()
            raise RuntimeError("stopped after the first chunk")
    return RunOutput({"bias": pd.DataFrame(rows)})


def with_logs(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
    """``theory_mc`` that also writes a log file to ``work_dir/tensorboard``, as a deep run
    with ``tensorboard: true`` does."""
    logs = work_dir / "tensorboard"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "events.out").write_text(f"M={settings['M']} N={settings['N']}\n")
    return execute_theory_mc(settings, work_dir, progress)


def diverge_or_unstorable(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
    """``theory_mc`` whose N = 3 runs diverge (tables kept, the run marked ``diverged``) and
    whose N = 4 runs return a second table under a name the store cannot write."""
    out = execute_theory_mc(settings, work_dir, progress)
    if settings["N"] == 3:
        return RunOutput(out.tables, status="diverged", note=f"diverged at M={settings['M']}")
    if settings["N"] == 4:
        return RunOutput({**out.tables, "bad-name": out.tables["bias"]})
    return out


def register() -> None:
    """Register the test kinds in this process."""
    KINDS["theory_mc"] = RunKind("theory_mc", validate_theory_mc, execute_theory_mc)
    KINDS["theory_mc_flaky"] = RunKind("theory_mc_flaky", validate_theory_mc, fail_unless_fixed)
    KINDS["theory_mc_ckpt"] = RunKind("theory_mc_ckpt", validate_theory_mc, checkpointed)
    KINDS["theory_mc_logs"] = RunKind("theory_mc_logs", validate_theory_mc, with_logs)
    KINDS["theory_mc_diverge"] = RunKind(
        "theory_mc_diverge", validate_theory_mc, diverge_or_unstorable
    )


def unregister() -> None:
    """Remove the test kinds again."""
    KINDS.pop("theory_mc", None)
    KINDS.pop("theory_mc_flaky", None)
    KINDS.pop("theory_mc_ckpt", None)
    KINDS.pop("theory_mc_logs", None)
    KINDS.pop("theory_mc_diverge", None)


if __name__ == "__main__":
    register()
    from maxminq.cli import main

    raise SystemExit(main(sys.argv[1:]))
