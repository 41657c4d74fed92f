"""Session 18 leftovers of the command line (second batch).

1. SIGHUP (a closed terminal) stops ``maxminq train``, ``reproduce`` and ``experiment`` as
   SIGTERM does (as it already stopped ``sweep``): train checkpoints the step it stopped at,
   reproduce stops its workers and keeps its finished runs; exit 129, 'terminated by SIGHUP'.
2. A finished sweep (or reproduce) leaves no empty OUT/work folder.
3. ``maxminq sweep CONFIG`` and ``maxminq status DIR``: upper-case positionals.
4. ``reproduce --help`` lists the names ``--only`` takes.
5. A folder held by a stopped sweep is refused at once, not after SQLite's busy timeout.
6. The cut-episodes bias warning of ``train`` comes only when many probes were lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import test_sweep_helpers as helpers
import torch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HERE = Path(__file__).resolve().parent
CLI = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"


def hang_up_when(proc: subprocess.Popen, ready: Callable[[], bool]) -> tuple[int, str]:
    """SIGHUP to ``proc``'s process group (started with ``start_new_session``, as a
    terminal's foreground job; a closed terminal signals the whole group) once ``ready()``
    holds; its exit status and stderr."""
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not ready() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, f"it ended first: {proc.communicate()}"
        assert ready(), "it never started work"
        os.killpg(proc.pid, signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours: started by this test
            proc.kill()
            proc.communicate()
    return proc.returncode, err


# ----------------------------------------------------------------------------- 1. SIGHUP
def test_a_hangup_stops_train_like_sigterm_with_a_checkpoint_of_its_step(tmp_path) -> None:
    """SIGHUP once step 100 of 4,000 is reported (periodic checkpoints every 40: step 80 the
    last one before; 4,000 so that a loaded machine cannot finish the run before it stops):
    exit 129, the checkpoint of the step it stopped at (100 or later),
    the --resume line, then 'maxminq train: terminated by SIGHUP'. Before, it died at once (exit -1,
    no message, the checkpoint of step 80 at best)."""
    argv, _ = helpers.tiny_train(4000, bias_every=100)
    out = tmp_path / "hung"
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,
        preexec_fn=helpers.default_sighup,
    )
    status, err = hang_up_when(proc, lambda: helpers.progress_step(out) >= 100)
    assert status == 129, err
    step = int(torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000, err
    assert err.strip().splitlines() == [
        f"maxminq train: {out}/checkpoint holds the checkpoint of step {step:,} (of 4,000); the "
        "same command with --resume continues from it",
        "maxminq train: terminated by SIGHUP",
    ], err


def test_a_hangup_stops_reproduce_like_sigterm_and_its_workers(tmp_path) -> None:
    """SIGHUP to reproduce's group while two runs are in flight: exit 129 and the sweep's
    resume line (no traceback of a worker or of the resource tracker), the workers gone, no
    report written. Before, every process of the group died at once (exit -1)."""
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
                            text=True, start_new_session=True,
                            preexec_fn=helpers.default_sighup)  # fmt: skip
    workers: list[int] = []

    def working() -> bool:
        workers[:] = helpers.workers(proc.pid) or workers
        return helpers.started_runs(out) >= 2 and len(workers) == 2

    status, err = hang_up_when(proc, working)
    assert status == 129, err
    assert err.strip().splitlines() == [
        "maxminq reproduce: terminated by SIGHUP; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers), "workers outlived the command"
    assert not (out / "report.html").exists()


def test_a_hangup_stops_experiment_and_its_workers(tmp_path) -> None:
    """SIGHUP to ``maxminq experiment mountain-car``'s group while its two workers run long
    tasks: exit 129 and 'maxminq experiment: terminated by SIGHUP' (not 'a worker process died': the
    workers ignore it, the command stops them), both workers gone, nothing written. Before,
    the whole group died at once (exit -1)."""
    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "20", "--episodes", "100000",
            "--sigma2", "50", "--algorithms", "q_learning", "--step-sizes", "0.02", "0.04",
            "--workers", "2", "--no-progress", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=helpers.default_sighup)  # fmt: skip
    workers: list[int] = []
    seen: dict[str, float] = {}

    def working() -> bool:  # both workers up, then 1 s into their tasks
        workers[:] = helpers.workers(proc.pid) or workers
        if len(workers) == 2:
            seen.setdefault("at", time.monotonic())
        return "at" in seen and time.monotonic() - seen["at"] > 1.0

    status, err = hang_up_when(proc, working)
    assert status == 129, err
    assert err.strip().splitlines() == ["maxminq experiment: terminated by SIGHUP"], err
    assert helpers.gone(workers), "workers outlived the command"
    assert not out.exists() or not [p for p in out.rglob("*") if p.is_file()]


# ------------------------------------------------------------------ 2. an empty OUT/work
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


# ------------------------------------------------------------ 3. upper-case positionals
@pytest.mark.parametrize(("command", "metavar"), [("sweep", "CONFIG"), ("status", "DIR")])
def test_sweep_and_status_name_their_positional_in_upper_case(command, metavar, capsys) -> None:
    """As every other command (DIR, RUN_DIR) and the README (``maxminq status DIR``): the
    usage line, the help's list and the missing-argument error. Before: 'config', 'dir'."""
    from maxminq.cli import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert text.split("\n\n")[0].split()[-1] == metavar, text  # the usage's last word
    assert f"\n  {metavar}  " in text, text
    with pytest.raises(SystemExit) as exit_:
        main([command])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(f"the following arguments are required: {metavar}"), err


# ------------------------------------------------------------ 4. --only names its choices
def test_reproduce_help_lists_the_names_only_takes(capsys) -> None:
    """``reproduce --help`` lists, under --only, 'theory' and every config installed with
    the package (those of its configs folder). Before, the
    names were found only in the error of a wrong one."""
    import maxminq
    from maxminq.cli import main

    shipped = sorted((Path(maxminq.__file__).parent / "configs").glob("*.yaml"))
    assert len(shipped) >= 10
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    only = text[text.index("--only NAMES ") : text.index("--configs DIR ")]
    assert "theory" in only
    for path in shipped:
        assert f" {path.stem}," in only or f" {path.stem} " in only, (path.stem, only)


# ------------------------------------------------- 5. a stopped sweep's folder, at once
@pytest.mark.parametrize("command", ["sweep", "sweep --dry-run", "reproduce"])
def test_a_folder_held_by_a_stopped_sweep_is_refused_at_once(tmp_path, command) -> None:
    """A sweep stopped (Ctrl-Z) while it sets up its store holds the folder lock and
    SQLite's lock on results.sqlite (here: held by this test). A second sweep (or its dry
    run, or reproduce) on that folder says at once that it is in use, exit 2. Before, it
    read the store first and waited SQLite's 60 s busy timeout (here: the 20 s timeout)."""
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
        script = [sys.executable, str(HERE / "test_sweep_helpers.py")]  # the test kinds known
        done = subprocess.run([*script, *argv], capture_output=True, text=True, timeout=20)
    finally:
        db.close()
        holder.close()
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"maxminq {argv[0]}: error: {out} is in use by another sweep (pid 4242 on elsewhere "
        f"since 2026-11-23 23:00:00); wait for it to finish (maxminq status {out} shows its "
        "progress) or choose another --out"
    ], done.stderr


# ------------------------------------------- 6. the cut-episodes warning, when it matters
_SHORT_CORRIDOR = '''
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    """The README's Corridor, 3 cells from the middle one: every episode terminates."""

    observation_space = gym.spaces.Box(0.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 1
        return np.eye(3, dtype=np.float32)[self.pos], {}

    def step(self, action):
        self.pos = min(2, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 2
        return np.eye(3, dtype=np.float32)[self.pos], float(done), done, False, {}


gym.register("ShortCorridor-v0", entry_point=Corridor, max_episode_steps=100)
'''


def test_no_cut_episodes_warning_where_episodes_terminate(tmp_path, monkeypatch, capsys) -> None:
    """A cap of 100 at gamma 0.99 (a cut episode's probes never count) on an environment
    whose every episode terminates, as the README's Corridor's nearly all do: no warning,
    and the bias is measured. Before, 'only episodes that terminate give bias numbers' on
    every run, whatever its episodes did."""
    from maxminq.cli import main

    (tmp_path / "short_corridor_mmq.py").write_text(_SHORT_CORRIDOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    argv = ["train", "--env", "short_corridor_mmq:ShortCorridor-v0", "--agent", "dqn"]
    argv += ["--steps", "300", "--learning-starts", "100", "--bias-every", "300"]
    argv += ["--eval-episodes", "1", "--no-progress", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning" not in err, err
    import pandas as pd

    assert pd.read_csv(out / "episodes.csv")["terminated"].all()
    assert (pd.read_csv(out / "metrics.csv")["bias_n"] > 0).all()


def test_the_cut_episodes_warning_says_how_much_was_lost(capsys) -> None:
    """Learning from step 100; the first episode (steps 1-150) was cut, the second (151-200)
    terminated: each held 50 steps since learning started, so about half the probes did not
    count: said with the numbers. All cut: none counted. 10 of 110 steps (9%, under 20%) or
    a cap long enough for a cut episode's probes (299 at gamma 0.99): no warning."""
    import pandas as pd

    from maxminq.commands.train import _warn_if_cut_episodes_give_no_bias

    def episodes(ends: list[int], lengths: list[int], cut: list[bool]) -> pd.DataFrame:
        return pd.DataFrame(
            {"step": ends, "length": lengths, "terminated": [not c for c in cut], "truncated": cut}
        )

    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([150, 200], [150, 50], [True, False])
    )
    assert capsys.readouterr().err.splitlines() == [
        "maxminq train: warning: --max-episode-steps 150 with --gamma 0.99: only episodes "
        "that terminate give bias numbers (a cut episode's probe counts only 299+ steps "
        "before the cut: gamma^k <= 0.05); it cut 1 of the 2 training episodes, which held "
        "50% of the steps since learning started: about that share of the bias probes did "
        "not count"
    ]
    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([150, 300], [150, 150], [True, True])
    )
    last = capsys.readouterr().err.strip()
    assert last.endswith("which held 100% of the steps since learning started: no bias probe "
                         "counted"), last  # fmt: skip
    # 10 of 110 steps since learning started in the cut episode: no warning
    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([110, 210], [110, 100], [True, False])
    )
    # a cap a cut episode's probes can count with (299 at gamma 0.99): none either
    _warn_if_cut_episodes_give_no_bias(
        300, 0.99, 100, episodes([300, 600], [300, 300], [True, True])
    )
    assert capsys.readouterr().err == ""
