"""Environments of one's own (and their modules) shared by the deep tests."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class _Line(gym.Env):
    """Two cells; action 1 ends the episode. Deterministic from its reset seed."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([1.0, 0.0], np.float32), {}

    def step(self, action):
        done = action == 1
        return np.array([0.0, 1.0], np.float32), float(done), bool(done), False, {}
