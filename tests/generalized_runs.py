"""Tiny generalized-dqn runs shared by the deep tests of a G of one's own."""

from __future__ import annotations

from maxminq.deep import TrainConfig


def _small(**kw) -> TrainConfig:
    """A run of about a second: two seeds (the batched paths), a tiny net."""
    base = dict(
        env_id="CartPole-v1",
        agent="generalized-dqn",
        n=2,
        lr=1e-3,
        steps=200,
        seeds=[0, 1],
        eval_episodes=1,
        bias_every=50,
        bias_probe_every=5,
        learning_starts=60,
        checkpoint_every=0,
        target_update=40,
        buffer_size=250,
        batch_size=16,
        hidden=(16,),
    )
    return TrainConfig(**{**base, **kw})
