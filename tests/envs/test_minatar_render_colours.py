"""MinAtar frames use the colours of MinAtar's own display (``Environment.display_state``,
and the authors' gym-games ``rgb_array``): black for an empty cell, then for channel k of C
seaborn's ``color_palette("cubehelix", C)``, which is matplotlib's ``cubehelix`` colormap
at the C evenly spaced points strictly inside [0, 1]: (k + 1) / (C + 1).

For Breakout (C = 4: paddle, ball, trail, brick) those points are 0.2, 0.4, 0.6, 0.8; the
colours are read from matplotlib's colormap here, scaled to 0..255 and rounded.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps

from maxminq.envs import make


def test_breakout_frame_colours_are_minatars_palette() -> None:
    env = make("maxminq/MinAtar-Breakout-v0", seed=0, render_mode="rgb_array", render_scale=1)
    env.reset()
    frame = env.render()
    state = env.unwrapped.game.state()  # (10, 10, 4) bool, MinAtar's own layout
    cube = colormaps["cubehelix"]
    palette = [(0, 0, 0)] + [
        tuple(int(v) for v in np.round(np.array(cube(x)[:3]) * 255)) for x in (0.2, 0.4, 0.6, 0.8)
    ]
    for i in range(10):
        for j in range(10):
            on = np.flatnonzero(state[i, j])
            k = 0 if on.size == 0 else on.max() + 1  # the highest active channel is drawn
            assert tuple(frame[i, j]) == palette[k], (i, j)
    assert {tuple(frame[i, j]) for i in range(10) for j in range(10)} >= set(palette[1:2])
