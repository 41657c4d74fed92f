"""A long deep run on a laptop (MinAtar's 5 M steps, left running for a day), measured on
tiny runs: the memory its replay buffers take while it trains, checkpoints and resumes,
what a resumed run carries over, and what it tells whoever watches it."""

from __future__ import annotations

import calendar
import dataclasses
import gc
import json
import pathlib
import shutil
import time
import tracemalloc
import warnings
import weakref

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from deep_runs import _small

import maxminq
import maxminq.deep.train as train_module
from maxminq.deep.policy import state_digest
from maxminq.deep.train import CheckpointWarning, RunSizeWarning, Trainer, run_training
from maxminq.errors import UsageError


def _full_breakout_trainer(buffer_size: int) -> Trainer:
    """A Breakout trainer of two seeds whose uint8 replay buffers are full (ones written
    in, as after ``buffer_size`` steps)."""
    cfg = _small(
        env_id="maxminq/MinAtar-Breakout-v0", seeds=[0, 1], buffer_size=buffer_size, steps=50
    )
    trainer = Trainer(cfg.resolve())
    replay = trainer.replay
    replay.obs[:] = 1
    replay.next_obs[:] = 1
    replay.size = replay.capacity
    return trainer


def test_writing_a_checkpoint_does_not_copy_the_full_replay_buffers(tmp_path) -> None:
    """A checkpoint of full buffers (every periodic one of a MinAtar run after its first
    100,000 steps) is written from the buffers themselves: the copy that state_dict made of
    them doubled their memory at every checkpoint (10 GB of buffers needed 20). What it
    writes is what the copy wrote: the same state, read back."""
    trainer = _full_breakout_trainer(buffer_size=10_000)
    replay = trainer.replay
    buffers = sum(getattr(replay, k).nbytes for k in replay._fields)
    assert buffers > 16e6  # 2 seeds x 10,000 x (2 x 400 B of observations + 16 B)
    tracemalloc.start()
    try:
        trainer.save_checkpoint(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < buffers / 10
    saved = torch.load(tmp_path / "state.pt", weights_only=True)
    assert saved.pop("sha256") == state_digest(trainer.state_dict())
    np.testing.assert_array_equal(saved["replay"]["obs"].numpy(), replay.obs)
    trainer.close()


def test_a_resumed_run_does_not_keep_the_checkpoint_it_loaded(tmp_path, monkeypatch) -> None:
    """Once the checkpoint is copied into the trainer, the state read from the file is let
    go: a resumed run kept it (a second copy of every seed's replay buffers, 163 MB for
    Breakout's two seeds) until it ended."""
    cfg = _small(steps=120, learning_starts=20, checkpoint_every=50, buffer_size=100)
    out = tmp_path / "run"
    assert run_training(cfg, out, stop_after=60, progress=False) == {}
    loaded: list[weakref.ref[torch.Tensor]] = []
    read = train_module._read_checkpoint

    def noted(path: pathlib.Path):
        state, saved = read(path)
        loaded.append(weakref.ref(state["replay"]["obs"]))
        return state, saved

    alive_at_steps: list[bool] = []
    step = Trainer.train_step

    def watched(self: Trainer) -> None:
        if self.step in (60, 100):  # the first resumed step, and one later
            gc.collect()
            alive_at_steps.append(loaded[0]() is not None)
        step(self)

    monkeypatch.setattr(train_module, "_read_checkpoint", noted)
    monkeypatch.setattr(Trainer, "train_step", watched)
    tables = run_training(cfg, out, progress=False)
    assert alive_at_steps == [False, False]
    assert tables["metrics"]["step"].max() == 120


def _without_wall_clock(state: dict) -> dict:
    """``state`` with each metrics row's steps_per_s (wall clock) set to 0."""
    rows = {k: [list(r) for r in v] for k, v in state["rows"].items()}
    for row in rows["metrics"]:
        row[-1] = 0.0
    return {**state, "rows": rows}


def test_a_resumed_run_ends_in_the_state_of_an_uninterrupted_one(tmp_path) -> None:
    """Killed at step 230 of 330 with a replay buffer of 100 (wrapped twice, the ring at
    30) and resumed: the last checkpoint is the uninterrupted run's, entry by entry (the
    replay buffers' contents and ring pointer, the networks and optimiser states, every
    seed's training, test and sampler random states and block of uniforms, the environments'
    episodes, the partial tables), wall-clock speeds aside. The tables alike would not show
    a replay buffer restored in another order whose samples happen to give close losses."""
    cfg = _small(seeds=[1, 2], steps=330, buffer_size=100, checkpoint_every=100, learning_starts=30)
    run_training(cfg, tmp_path / "straight", progress=False)
    killed = tmp_path / "killed"
    assert run_training(cfg, killed, stop_after=230, progress=False) == {}
    stopped = torch.load(killed / "checkpoint" / "state.pt", weights_only=True)
    assert stopped["replay"]["pos"] == 30 and stopped["replay"]["size"] == 100
    run_training(cfg, killed, progress=False)
    straight, resumed = (
        torch.load(folder / "checkpoint" / "state.pt", weights_only=True)
        for folder in (tmp_path / "straight", killed)
    )
    assert straight["step"] == resumed["step"] == 330
    assert set(straight) == set(resumed)
    for key in sorted(set(straight) - {"sha256"}):
        a, b = _without_wall_clock(straight), _without_wall_clock(resumed)
        assert state_digest({key: a[key]}) == state_digest({key: b[key]}), key


def test_progress_json_tells_the_speed_the_time_left_and_the_returns(tmp_path) -> None:
    """Another shell can tell when a run will end and how it is doing: its progress.json
    holds, beside the step, the speed, the time left at that speed, when it was written,
    the training return (each seed's mean over its last 100 episodes, averaged over the
    seeds) and the last evaluation's mean return (it held the step alone)."""
    cfg = _small(seeds=[0, 3], steps=400, eval_every=100, eval_every_episodes=2)
    out = tmp_path / "run"
    assert run_training(cfg, out, stop_after=230, progress=False) == {}  # reported at 230
    report = json.loads((out / "progress.json").read_text())
    rows = torch.load(out / "checkpoint" / "state.pt", weights_only=True)["rows"]
    episodes = pd.DataFrame(rows["episodes"]).rename(columns={0: "seed", 3: "return"})
    last100 = episodes.groupby("seed")["return"].apply(lambda r: r.tail(100).mean())
    assert len(last100) == 2 and (episodes.groupby("seed").size() > 5).all()
    evals = pd.DataFrame(rows["evals"]).rename(columns={1: "step", 3: "return"})
    assert report["step"] == 230 and report["steps"] == 400
    assert report["return_avg100"] == pytest.approx(last100.mean(), rel=1e-12)
    assert report["eval_step"] == 200 == evals["step"].max()
    last_eval = evals[evals["step"] == 200]["return"]
    assert len(last_eval) == 4  # 2 episodes of each seed
    assert report["eval_return"] == pytest.approx(last_eval.mean(), rel=1e-12)
    assert report["steps_per_s"] > 0
    assert report["seconds_left"] == pytest.approx(170 / report["steps_per_s"], abs=0.06)
    assert abs(report["updated"] - time.time()) < 3600  # Unix time, not a monotonic clock


def test_describe_progress_is_the_line_another_shell_reads(tmp_path, monkeypatch) -> None:
    """The line 'maxminq status' can print for a run training now: step, speed, time left
    as of its last report (in local time), the returns; for a stopped run the step and
    returns alone; nothing for a torn file. Reports of an older maxminq (step alone) read
    as before."""
    from maxminq._progress import describe_progress

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    report = {
        "step": 1_250_000,
        "steps": 5_000_000,
        "steps_per_s": 172.4,
        "seconds_left": 21_780.0,  # 6 h 03 min
        # 14:31:00 UTC today (a fixed date read 'as of 2026-11-24 14:31' every other day)
        "updated": float(calendar.timegm((*time.gmtime()[:3], 14, 31, 0))),
        "return_avg100": 7.3125,
        "eval_return": 9.2,
        "eval_step": 1_200_000,
    }
    (tmp_path / "progress.json").write_text(json.dumps(report))
    assert describe_progress(tmp_path) == (
        "step 1,250,000 of 5,000,000 (25%), 172 steps/s, about 6 h 03 min left as of "
        "14:31 UTC, training return 7.31 (last 100 episodes), evaluation return 9.2 at step "
        "1,200,000"
    )
    assert describe_progress(tmp_path, training=False) == (
        "step 1,250,000 of 5,000,000 (25%), training return 7.31 (last 100 episodes), "
        "evaluation return 9.2 at step 1,200,000"
    )
    (tmp_path / "progress.json").write_text('{"step": 40, "steps": 400}')
    assert describe_progress(tmp_path) == "step 40 of 400 (10%)"
    (tmp_path / "progress.json").write_text('{"step": 4')
    assert describe_progress(tmp_path) is None
    monkeypatch.undo()
    time.tzset()


def test_a_long_run_starts_with_what_it_takes_and_how_to_watch_it(
    tmp_path, monkeypatch, capsys
) -> None:
    """'maxminq train' of a long run (100,000 steps or more) says first, in one line, the
    memory its replay buffers take once full (2 seeds x 100,000 Breakout transitions of
    2 x 400 B uint8 images, an int64 action and two float32: 163.2 MB), its checkpoints'
    interval and least size, and how to watch it from another shell; it said nothing
    before the bar. A short run starts as before."""
    from maxminq.cli import main

    def stopped(*args, **kwargs):
        raise UsageError("stopped here by the test")

    monkeypatch.setattr(train_module, "run_training", stopped)
    out = tmp_path / "breakout"
    argv = ["train", "--env", "maxminq/MinAtar-Breakout-v0", "--seeds", "0-1", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "maxminq train: the replay buffers of 2 seeds x 100,000 transitions take 163 MB of "
        "memory once full; a checkpoint every 250,000 steps holds them: at least 163 MB in "
        f"{out}/checkpoint; from another shell, 'maxminq status {out}' tells how far it is "
        f"({out}/progress.json: its speed, time left and returns)"
    )
    assert main([*argv, "--steps", "99999", "--overwrite"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq train: error: stopped here by the test"
    ]


def test_a_run_whose_buffers_or_checkpoint_may_not_fit_is_warned_before_it_starts(
    tmp_path, monkeypatch
) -> None:
    """Memory free now below what the full buffers take, or disk free below a checkpoint:
    a RunSizeWarning naming the option, before the first step (the run was killed when its
    buffers filled, or stopped at its first checkpoint, hours in)."""
    cfg = _small(seeds=[0, 1], steps=60, buffer_size=50, learning_starts=20, eval_episodes=0)
    need = 2 * 50 * (2 * 4 * 4 + 16)  # CartPole: 4 float32 observed, twice; 16 B of scalars
    monkeypatch.setattr(train_module, "free_memory", lambda: need - 1.0)
    with pytest.warns(RunSizeWarning) as caught:
        run_training(cfg, tmp_path / "short_of_memory", progress=False)
    assert [str(w.message) for w in caught if w.category is RunSizeWarning] == [
        "--buffer-size: the replay buffers of 2 seeds x 50 transitions take 4.8 kB once "
        "full, more than the 4.8 kB of memory free now: the run may be killed for want of "
        "memory when they fill (by step 50); free memory, or give fewer --seeds or a smaller "
        "--buffer-size"
    ]
    monkeypatch.setattr(train_module, "free_memory", lambda: None)  # the OS does not say
    free = shutil.disk_usage(tmp_path)._replace(free=need - 1)
    monkeypatch.setattr(train_module.shutil, "disk_usage", lambda path: free)
    out = tmp_path / "short_of_disk"
    with pytest.warns(RunSizeWarning) as caught:
        run_training(dataclasses.replace(cfg, checkpoint_every=20), out, progress=False)
    assert [str(w.message) for w in caught if w.category is RunSizeWarning] == [
        "--out: a checkpoint of this run holds the replay buffers of 2 seeds x 50 "
        "transitions once they are full, at least 4.8 kB, more than the 4.8 kB free on the "
        f"disk of {out}: the run would stop at a checkpoint, by step 60; free disk space, or "
        "choose another --out"
    ]
    with warnings.catch_warnings():  # no checkpoint: nothing to fit on the disk
        warnings.simplefilter("error", RunSizeWarning)
        run_training(cfg, tmp_path / "no_checkpoint", progress=False)


def test_a_run_resumed_under_other_versions_or_threads_is_warned(tmp_path, monkeypatch) -> None:
    """A checkpoint keeps the torch, NumPy, Gymnasium and maxminq versions and the thread
    count it was written under; a run resumed under others (a laptop updated overnight, the
    run moved to another machine) goes on after a CheckpointWarning naming what differs (it
    went on silently, though the same tables are promised only under the same ones)."""
    cfg = _small(steps=100, learning_starts=20, checkpoint_every=50, eval_episodes=0)
    out = tmp_path / "run"
    assert run_training(cfg, out, stop_after=60, progress=False) == {}
    saved = torch.load(out / "checkpoint" / "state.pt", weights_only=True)["platform"]
    assert saved == {
        "torch": torch.__version__,
        "numpy": np.__version__,
        "gymnasium": gym.__version__,
        "maxminq": maxminq.__version__,
        "threads": 1,
    }

    def here() -> dict:  # another torch; the thread count of the moment, as platform()'s
        return {**saved, "torch": "9.9.9", "threads": torch.get_num_threads()}

    monkeypatch.setattr(train_module, "platform", here)
    with pytest.warns(CheckpointWarning) as caught:
        assert run_training(cfg, out, stop_after=70, progress=False, threads=2) == {}
    ckpt = out / "checkpoint" / "state.pt"
    assert [str(w.message) for w in caught if w.category is CheckpointWarning] == [
        f"--resume: {ckpt} was written under torch {torch.__version__}, 1 torch thread; this "
        "run has torch 9.9.9, 2 torch threads: it continues, but its remaining steps may "
        "differ from the uninterrupted run's, in their last bits at first, then in the "
        "episodes the networks act on (the same versions and --threads give the same tables)"
    ]
    with warnings.catch_warnings():  # under what it was written with (torch 9.9.9 here)
        warnings.simplefilter("error", CheckpointWarning)
        tables = run_training(cfg, out, progress=False, threads=2)
    assert tables["metrics"]["step"].max() == 100


def test_envs_says_the_memory_of_a_seeds_replay_buffer(capsys) -> None:
    """'maxminq envs --env ID' says beside --buffer-size what one seed's full buffer takes
    (it gave the count alone): Breakout 100,000 x (2 x 400 B + 16 B) = 81.6 MB, Seaquest's
    10 channels 100,000 x (2 x 1,000 B + 16 B) = 202 MB, CartPole 10,000 x (2 x 16 B +
    16 B) = 480 kB."""
    from maxminq.cli import main

    said = {}
    for env_id in ("maxminq/MinAtar-Breakout-v0", "maxminq/MinAtar-Seaquest-v0", "CartPole-v1"):
        assert main(["envs", "--env", env_id]) == 0
        out = capsys.readouterr().out
        said[env_id] = [line for line in out.splitlines() if "--buffer-size" in line]
    tail = "of memory per seed once full; checkpoints hold it)"
    assert said == {
        "maxminq/MinAtar-Breakout-v0": [f"  --buffer-size        100,000 (81.6 MB {tail}"],
        "maxminq/MinAtar-Seaquest-v0": [f"  --buffer-size        100,000 (202 MB {tail}"],
        "CartPole-v1": [f"  --buffer-size        10,000 (480 kB {tail}"],
    }
