"""A PLE game stays over once it is over: a step after ``terminated`` scores 0 and moves nothing.

PLE's ``act`` (``ple.py``, ``_oneStepAct``) returns 0.0 and leaves the game untouched while
``game_over()`` holds, and ``game_over()`` stays true until ``reset_game()``. Our single
Catcher / Pixelcopter envs must do the same, rather than keep playing with -5 per frame (and,
for Catcher, a fourth miss taking the lives to -1 and the episode back to not terminated).
"""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.envs.catcher import CatcherEnv
from maxminq.envs.pixelcopter import PixelcopterEnv


@pytest.mark.parametrize(("cls", "action"), [(CatcherEnv, 2), (PixelcopterEnv, 1)])
def test_steps_after_game_over_score_zero_and_change_nothing(cls: type, action: int) -> None:
    env = cls()
    env.reset(seed=0)
    for _ in range(5_000):  # noop: Catcher misses 3 fruits, the copter falls to the floor
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated:
            break
    assert terminated and reward <= -5.0  # the game-over frame scores the -5 of a loss
    last = obs.copy()
    for _ in range(60):  # 60 frames: a Catcher fruit (<= 3 px per frame) would have moved
        obs, reward, terminated, truncated, _ = env.step(action)
        assert (reward, terminated, truncated) == (0.0, True, False)
        np.testing.assert_array_equal(obs, last)
    obs, _ = env.reset()  # and a reset starts a game that plays again
    assert not np.array_equal(obs, last)
    _, _, terminated, _, _ = env.step(action)
    assert not terminated
