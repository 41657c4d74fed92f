"""``render()`` of an environment made without a render mode returns None, as Gymnasium's
own environments do, and says so (a warning naming ``render_mode="rgb_array"``) rather than
returning None without a word; with ``render_mode="rgb_array"`` it draws, silently."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxminq.envs import make, make_vector

IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", "maxminq/MinAtar-Breakout-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_render_without_a_mode_warns_and_returns_none(env_id: str) -> None:
    env = make(env_id, seed=0)
    env.reset()
    with pytest.warns(UserWarning, match=r"render_mode='rgb_array'"):
        assert env.render() is None
    drawn = make(env_id, seed=0, render_mode="rgb_array")
    drawn.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = drawn.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3


@pytest.mark.parametrize("env_id", IDS[:2])
def test_native_vector_render_without_a_mode_warns(env_id: str) -> None:
    v = make_vector(env_id, seeds=[0, 1])
    v.reset()
    with pytest.warns(UserWarning, match=r"render_mode='rgb_array'"):
        assert v.render() is None
