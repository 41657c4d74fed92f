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


class StepsEnv(gym.Env):
    """Three features; every episode lasts exactly 6 steps (terminated); reward 1 for
    action 1, 0 for action 0; no randomness. Takes ``render_mode`` (None by default)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)
    length = 6

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def _obs(self) -> np.ndarray:
        return np.array([self.t / self.length, 1.0, 0.0], np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), float(action == 1), self.t == self.length, False, {}


class NonFiniteEnv(StepsEnv):
    """StepsEnv, finite while ``bad`` (set on the class) is None; else an inf observation
    at every reset (``"reset"``), or at step 2 of every episode a NaN observation
    (``"obs"``), a NaN reward (``"reward"``) or one beyond float32's range (``"huge"``)."""

    bad: str | None = None

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        if type(self).bad == "reset":
            obs[1] = np.inf
        return obs, info

    def step(self, action):
        obs, reward, *rest = super().step(action)
        if self.t == 2 and type(self).bad == "obs":
            obs[0] = np.nan
        elif self.t == 2 and type(self).bad == "reward":
            reward = float("nan")
        elif self.t == 2 and type(self).bad == "huge":
            reward = 1e39
        return obs, reward, *rest
