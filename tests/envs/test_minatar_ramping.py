"""``difficulty_ramping`` changes nothing in Breakout and Freeway: MinAtar's ``breakout.py``
and ``freeway.py`` take the ``ramping`` argument and never read it (docs/environments.md
says so), so the same seed and actions give the same frames either way."""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.envs import make


@pytest.mark.parametrize("game", ["Breakout", "Freeway"])
def test_ramping_changes_nothing_where_the_game_has_no_ramp(game: str) -> None:
    env_id = f"maxminq/MinAtar-{game}-v0"
    on, off = make(env_id, seed=3), make(env_id, seed=3, difficulty_ramping=False)
    a, b = on.reset()[0], off.reset()[0]
    actions = np.random.default_rng(0).integers(0, 6, 600)
    for action in actions:
        np.testing.assert_array_equal(a, b)
        a, ra, ta, ua, _ = on.step(int(action))
        b, rb, tb, ub, _ = off.step(int(action))
        assert (ra, ta, ua) == (rb, tb, ub)
        if ta or ua:
            a, b = on.reset()[0], off.reset()[0]
