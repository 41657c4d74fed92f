"""A render mode our games do not draw is refused with one line naming every mode that
works: ``None`` and ``"rgb_array"`` on the env itself, plus ``"human"`` and
``"rgb_array_list"`` that ``make`` (``gymnasium.make``) builds on top of ``"rgb_array"``;
the native vector envs name theirs and how to watch one game."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxminq.envs import make, make_vector


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/MinAtar-Breakout-v0"])
def test_an_unknown_render_mode_names_the_modes_make_gives(env_id: str) -> None:
    with pytest.raises(ValueError) as err:
        make(env_id, seed=0, render_mode="ansi")
    text = str(err.value)
    assert "\n" not in text and "'ansi'" in text
    for mode in ("None", "'rgb_array'", "'human'", "'rgb_array_list'"):
        assert mode in text, (mode, text)
    # the modes it names do work through make
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's "HumanRendering is being applied"
        for mode in ("human", "rgb_array_list"):
            env = make(env_id, seed=0, render_mode=mode)
            env.reset()
            env.step(0)
            env.close()


def test_human_on_a_native_vector_env_says_how_to_watch_a_game() -> None:
    with pytest.raises(ValueError) as err:
        make_vector("maxminq/Pixelcopter-v0", seeds=[0, 1], render_mode="human")
    text = str(err.value)
    assert "\n" not in text and "'human'" in text and "'rgb_array'" in text
    assert "make(" in text and "render_mode='human'" in text
    venv = make_vector("maxminq/Pixelcopter-v0", seeds=[0, 1], render_mode="rgb_array")
    venv.reset()
    frames = venv.render()
    assert frames is not None and len(frames) == 2
    assert all(f.shape == (48, 48, 3) and f.dtype == np.uint8 for f in frames)
