"""What docs/environments.md says of Gymnasium's vector observation wrappers: they refuse
``make_vector``'s SAME_STEP envs, and ``gymnasium.make_vec`` of our ids (NEXT_STEP) takes
them, its sub-envs seeded as ``make`` seeds one (seed + i)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers.vector import NormalizeObservation

from maxminq.envs import make, make_vector


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/MinAtar-Breakout-v0"])
def test_observation_wrappers_take_make_vec_not_make_vector(env_id: str) -> None:
    with pytest.raises(ValueError, match="NEXT_STEP"):
        NormalizeObservation(make_vector(env_id, seeds=[0, 1]))
    vec = gym.make_vec(env_id, num_envs=2)
    obs, _ = vec.reset(seed=5)
    for i in range(2):
        np.testing.assert_array_equal(obs[i], make(env_id).reset(seed=5 + i)[0])
    wrapped = NormalizeObservation(gym.make_vec(env_id, num_envs=2))
    wrapped.reset(seed=0)
    for _ in range(30):
        wrapped.step(np.zeros(2, dtype=np.int64))
