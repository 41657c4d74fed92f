"""Gymnasium's own tools on the environments ``maxminq.envs.make`` builds: ``check_env`` and
remaking an environment from its ``env.spec`` (as Gymnasium's checker, ``RecordVideo``-style
tools and users' scripts do)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import maxminq.envs as envs
from maxminq.envs import make

OUR_IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", *envs.MINATAR_IDS]


def _episode(env: gym.Env, steps: int = 60) -> list[np.ndarray]:
    """Observations of the first reset (no seed) and ``steps`` fixed actions after it."""
    obs, _ = env.reset()
    out = [obs.copy()]
    n = int(env.action_space.n)
    for t in range(steps):
        obs, _, term, trunc, _ = env.step(t % n)
        out.append(obs.copy())
        if term or trunc:
            obs, _ = env.reset()
            out.append(obs.copy())
    return out


@pytest.mark.parametrize("env_id", OUR_IDS)
def test_check_env_passes_on_a_seeded_make(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice (e.g. wrapped env) is not at issue
        check_env(make(env_id, seed=3))


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/MinAtar-Breakout-v0"])
def test_env_spec_remakes_the_same_seeded_environment(env_id: str) -> None:
    env = make(env_id, seed=11, max_episode_steps=40)
    again = gym.make(env.spec)
    assert again.spec.max_episode_steps == 40
    # The seed given to make is part of the spec: the remade env plays the same game.
    assert all(np.array_equal(a, b) for a, b in zip(_episode(env), _episode(again), strict=True))
