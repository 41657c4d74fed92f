"""``render()`` before the first ``reset()`` raises ``ResetNeeded``, as ``step()`` does: on
the native Catcher/Pixelcopter vector envs (as Gymnasium's ``SyncVectorEnv`` of
``make``'s envs, e.g. MinAtar's, does) and on our env classes built without ``make``'s order
check. It used to draw a game never set up (Catcher's fruit at (0, 0), in the corner)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from maxminq.envs import make_vector
from maxminq.envs.catcher import CatcherEnv
from maxminq.envs.minatar import MinAtarEnv
from maxminq.envs.pixelcopter import PixelcopterEnv


@pytest.mark.parametrize(
    "build",
    [
        lambda: make_vector("maxminq/Catcher-v0", seeds=[0, 1], render_mode="rgb_array"),
        lambda: make_vector("maxminq/Pixelcopter-v0", seeds=[0, 1], render_mode="rgb_array"),
        lambda: CatcherEnv(render_mode="rgb_array"),
        lambda: PixelcopterEnv(render_mode="rgb_array"),
        lambda: MinAtarEnv("breakout", render_mode="rgb_array"),
    ],
    ids=["catcher-vec", "pixelcopter-vec", "catcher", "pixelcopter", "breakout"],
)
def test_render_before_reset_is_refused_and_after_reset_draws(build) -> None:  # noqa: ANN001
    env = build()
    with pytest.raises(gym.error.ResetNeeded):
        env.render()
    env.reset(seed=0)
    frames = env.render()
    frames = frames if isinstance(frames, tuple) else (frames,)
    for frame in frames:
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.max() > 0
    env.close()
