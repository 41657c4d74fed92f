"""Environments of one's own (and the source of a module of them) shared by the deep, status
and compare tests."""

from __future__ import annotations

import textwrap

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


J22_ENVS = "j22_own_envs"
"""The name of the module of ``J22_ENVS_SOURCE`` (imported through ``user_modules``)."""


# A module of a user's environments: a one-hot line (registered through a function entry
# point as J22Line-v0, and in a namespace as j22lab/J22Walk-v0), its variants that train
# refuses (channels-last images, MultiDiscrete or shifted Discrete actions), a class never
# registered and a function entry point never registered.
J22_ENVS_SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    class J22Line(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (4,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos = 0
            return self._obs(), {}

        def _obs(self):
            return np.eye(4, dtype=np.float32)[self.pos]

        def step(self, action):
            self.pos = min(3, max(0, self.pos + (1 if int(np.ravel(action)[0]) == 1 else -1)))
            return self._obs(), float(self.pos == 3), self.pos == 3, False, {}


    class J22Pixels(J22Line):  # uint8 (H, W, C): channels last, as cameras give them
        observation_space = gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)

        def _obs(self):
            frame = np.zeros((8, 8, 3), np.uint8)
            frame[self.pos] = 255
            return frame


    class J22Pair(J22Line):
        action_space = gym.spaces.MultiDiscrete([2, 3])


    class J22FromOne(J22Line):
        action_space = gym.spaces.Discrete(2, start=1)


    class J22NeverRegistered(J22Line):
        pass


    def make_line(**kwargs):  # an entry point that is a function, registered below
        return J22Line(**kwargs)


    def make_unregistered(**kwargs):  # one that is not
        return J22Line(**kwargs)


    gym.register("J22Pixels-v0", entry_point=J22Pixels, max_episode_steps=20)
    gym.register("J22Pair-v0", entry_point=J22Pair, max_episode_steps=20)
    gym.register("J22FromOne-v0", entry_point=J22FromOne, max_episode_steps=20)
    gym.register("J22Line-v0", entry_point=make_line, max_episode_steps=20)
    gym.register("j22lab/J22Walk-v0", entry_point=J22Line, max_episode_steps=20)
    """
)
