"""Loose ends of ``maxminq.deep.train`` checked in review: the step a diverged seed is
recorded at (``runs.diverged_step``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq.deep.config import TrainConfig
from maxminq.deep.train import Trainer, run_training

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_a_diverged_seed_is_recorded_at_the_step_whose_update_made_it_non_finite(
    tmp_path,
) -> None:
    """A step size far too large (RMSprop, 1e30, no clipping) makes the loss overflow
    within a few updates; runs.csv names, per seed, the step whose update first left NaN/inf
    in that seed's networks (found here by stepping a Trainer by hand and looking at the
    weights after every step), not the step after it."""
    config = TrainConfig(
        env_id="CartPole-v1",
        agent="dqn",
        steps=40,
        seeds=[0, 1, 2],
        learning_starts=20,
        buffer_size=200,
        checkpoint_every=0,
        eval_episodes=0,
        optimizer="rmsprop",
        lr=1e30,
        grad_clip=-1,
    )
    trainer = Trainer(config.resolve())
    first: dict[int, int] = {}
    try:
        with torch.random.fork_rng():
            while trainer.step < 40:
                trainer.train_step()
                weights = trainer.learner.online.flat.reshape(3, trainer.learner.n_online, -1)
                for s in range(3):
                    if s not in first and not torch.isfinite(weights[s]).all():
                        first[s] = trainer.step
    finally:
        trainer.close()
    assert sorted(first) == [0, 1, 2] and min(first.values()) > 20  # after learning starts
    with torch.random.fork_rng():
        runs = run_training(config, tmp_path / "run", progress=False)["runs"]
    assert runs["status"].tolist() == ["diverged"] * 3
    np.testing.assert_array_equal(runs["diverged_step"], [first[0], first[1], first[2]])
