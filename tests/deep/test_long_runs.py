"""A long deep run on a laptop (MinAtar's 5 M steps, left running for a day), measured on
tiny runs: the memory its replay buffers take while it trains, checkpoints and resumes,
what a resumed run carries over, and what it tells whoever watches it."""

from __future__ import annotations

import gc
import pathlib
import tracemalloc
import weakref

import numpy as np
import torch
from deep_runs import _small

import maxminq.deep.train as train_module
from maxminq.deep.policy import state_digest
from maxminq.deep.train import Trainer, run_training


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
