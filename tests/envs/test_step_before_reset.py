"""Our single envs refuse ``step()`` before the first ``reset()`` (Gymnasium's ResetNeeded),
as our native vector envs do, also when built from the class without ``make``'s
OrderEnforcing wrapper: before it, Catcher and Pixelcopter played a game never set up (a
zero random state, Catcher's fruit at (0, 0)) and MinAtar one drawn from an unseeded
RandomState, so no seed controlled it."""

from __future__ import annotations

import gymnasium as gym
import pytest

from maxminq.envs.catcher import CatcherEnv
from maxminq.envs.minatar import MinAtarEnv
from maxminq.envs.pixelcopter import PixelcopterEnv


@pytest.mark.parametrize(
    "build",
    [CatcherEnv, PixelcopterEnv, lambda: MinAtarEnv("breakout")],
    ids=["catcher", "pixelcopter", "minatar"],
)
def test_step_before_reset_is_refused(build) -> None:  # noqa: ANN001
    env = build()
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step(0)
    env.reset(seed=0)
    env.step(0)  # and after a reset it plays
