"""``make_vector`` takes its number of sub-envs from ``seeds``; a ``num_envs`` keyword (as
``gymnasium.make_vec`` takes one) is a one-line UsageError naming it, for every id alike.

Before, Catcher and Pixelcopter ignored it silently (``num_envs=4`` with one seed gave one
game) and any other id passed it on to the environment's constructor (a TypeError of
Gymnasium's about an unexpected keyword).
"""

from __future__ import annotations

import pytest

from maxminq.envs import make_vector
from maxminq.errors import UsageError


@pytest.mark.parametrize(
    "env_id", ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", "maxminq/MinAtar-Breakout-v0"]
)
def test_num_envs_keyword_is_refused_naming_seeds(env_id: str) -> None:
    with pytest.raises(UsageError, match=r"num_envs.*seeds=range\(4\)"):
        make_vector(env_id, seeds=[0], num_envs=4)


def test_the_number_of_seeds_is_the_number_of_sub_envs() -> None:
    assert make_vector("maxminq/Catcher-v0", seeds=range(3)).num_envs == 3
