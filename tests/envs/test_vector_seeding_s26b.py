"""``reset(seed=range(...))`` of the vector envs ``make_vector`` returns: docs/environments.md
says their reset takes any sequence of seeds (list, range, NumPy array), as ``make_vector``'s
``seeds`` does; the ``SyncVectorEnv`` of every id but Catcher and Pixelcopter took a range
before bf7b004 (Gymnasium's own reset does), and that commit's check refused it."""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.envs import make, make_vector

IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", "maxminq/MinAtar-Breakout-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_a_range_of_seeds_resets_as_the_list_of_them(env_id: str) -> None:
    venv = make_vector(env_id, seeds=[0, 1])
    obs, _ = venv.reset(seed=range(7, 9))
    # Expected from single envs reset with 7 and 8, independent of the vector env.
    singles = [make(env_id).reset(seed=s)[0] for s in (7, 8)]
    np.testing.assert_array_equal(obs, np.stack(singles))
    assert venv.np_random_seed == (7, 8)


@pytest.mark.parametrize("env_id", IDS)
def test_a_range_of_the_wrong_length_is_refused_naming_seed(env_id: str) -> None:
    venv = make_vector(env_id, seeds=[0, 1])
    with pytest.raises(ValueError, match=r"seed must be None, an integer or a list of 2 seeds"):
        venv.reset(seed=range(3))
    with pytest.raises(ValueError, match=r"seed must be None, an integer or a list of 2 seeds"):
        venv.reset(seed="12")
