"""A tiny environment for tests of training on one's own environment (shared by test files;
subclasses there break one rule of the environment contract each)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class LineEnv(gym.Env):
    """Eight one-hot cells; action 1 moves right, the last cell ends the episode (reward 1).
    No ``render_mode``, as many users' environments."""

    observation_space = gym.spaces.Box(0.0, 1.0, (8,), np.float32)
    action_space = gym.spaces.Discrete(2)
    resets = 0  # counted over every instance (for the late-failing variants)

    def _obs(self) -> np.ndarray:
        return np.eye(8, dtype=np.float32)[self.pos]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        type(self).resets += 1
        self.pos = 0
        return self._obs(), {}

    def step(self, action):
        self.pos = min(7, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 7
        return self._obs(), float(done), done, False, {}
