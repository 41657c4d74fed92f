"""Pixelcopter rules, pinned with numbers derived by hand from the PLE rules
(summarised in the ``maxminq.envs.pixelcopter`` docstring).

s = 0.0004 * 48 = 0.0192 and dt = 1000/30, so one "up" adds -0.875 s dt = -0.56 to the
momentum, one noop adds 0.09 s dt = 0.0576, then momentum *= 0.99; everything scrolls
s dt = 0.64 px per frame. The player's collision rect is 2x2 at x 15..16.
"""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.envs.pixelcopter import NOOP, UP, PixelcopterCore


def _core(
    y: float = 24.0,
    mom: float = 0.0,
    terrain_y: int = 24,
    blocks: tuple[tuple[float, int], ...] = ((60.0, 40),),
    n_terrain: int = 48,
) -> PixelcopterCore:
    """One game with a flat terrain (centre ``terrain_y``) at x = 2, 6, ..., and given blocks."""
    core = PixelcopterCore(1)
    core.rng[0] = np.uint64(99)
    core.py[0], core.mom[0] = y, mom
    core.nt[0] = n_terrain
    core.tx[0, :n_terrain] = 2.0 + 4.0 * np.arange(n_terrain)
    core.ty[0, :n_terrain] = terrain_y
    core.nb[0] = len(blocks)
    for j, (bx, by) in enumerate(blocks):
        core.bx[0, j], core.by[0, j] = bx, by
    return core


def _step(core: PixelcopterCore, action: int) -> tuple[float, bool]:
    r, t = core.step(np.array([action], dtype=np.int64))
    return float(r[0]), bool(t[0])


def _closed_form(k: int, push: float) -> tuple[float, float]:
    """Momentum and displacement after k identical actions from rest: m_j = 0.99 (m_{j-1} + p)."""
    moms = [push * 0.99 * (1 - 0.99**j) / (1 - 0.99) for j in range(1, k + 1)]
    return moms[-1], sum(moms)


@pytest.mark.parametrize(
    ("action", "push", "k"), [(UP, -0.56, 1), (UP, -0.56, 5), (NOOP, 0.0576, 9)]
)
def test_momentum_after_k_steps(action: int, push: float, k: int) -> None:
    core = _core()
    for _ in range(k):
        _step(core, action)
    mom, dy = _closed_form(k, push)
    assert core.mom[0] == pytest.approx(mom, rel=1e-12)
    assert core.py[0] == pytest.approx(24.0 + dy, rel=1e-12)
    if k == 1 and action == UP:
        assert core.mom[0] == pytest.approx(-0.5544)


def test_scroll_speed_of_blocks_and_terrain() -> None:
    core = _core(blocks=((60.0, 40),))
    for _ in range(5):
        _step(core, NOOP)
    assert core.bx[0, 0] == pytest.approx(60.0 - 5 * 0.64)
    np.testing.assert_allclose(core.tx[0, :3], [2.0 - 3.2, 6.0 - 3.2, 10.0 - 3.2])


def test_plus_one_when_the_only_block_passes_the_player() -> None:
    core = _core(blocks=((16.5, 40),))  # 16.5 - 0.64 <= 16: passes this frame
    assert _step(core, NOOP) == (1.0, False)
    assert core.nb[0] == 2
    new_x, new_y = core.bx[0, 1], core.by[0, 1]
    assert 48 <= new_x < 72 and new_x == int(new_x) and 12 <= new_y < 36
    # The old block stays until x <= -4; while two blocks exist nothing more is scored.
    assert _step(core, NOOP) == (0.0, False)
    # Not the only block: no score even though it passes.
    core = _core(blocks=((16.5, 40), (50.0, 40)))
    assert _step(core, NOOP) == (0.0, False)
    assert core.nb[0] == 2


def test_block_removed_at_minus_width() -> None:
    core = _core(blocks=((-3.5, 40), (40.0, 12)))
    assert _step(core, NOOP) == (0.0, False)  # -4.14 <= -4: removed, no score
    assert core.nb[0] == 1 and core.bx[0, 0] == pytest.approx(40.0 - 0.64)


def test_plus_one_per_terrain_segment_scrolled_off() -> None:
    core = _core(n_terrain=40)
    core.tx[0, 0], core.tx[0, 1] = -3.5, -3.6  # both reach <= -4 this frame
    assert _step(core, NOOP) == (2.0, False)
    assert core.nt[0] == 38


def test_terrain_refill_when_thirteen_or_fewer_remain() -> None:
    core = _core(n_terrain=14)
    core.tx[0, :14] = np.r_[-3.5, 14.5 + 4.0 * np.arange(13)]  # the first one leaves
    reward, _ = _step(core, NOOP)
    assert reward == 1.0
    assert core.nt[0] == 13 + 48
    np.testing.assert_array_equal(core.tx[0, 13:61], np.arange(50, 240, 4))
    heights = core.ty[0, 13:61]
    assert heights.min() >= 18 and heights.max() <= 30  # int(24 + 6 sin(.))


@pytest.mark.parametrize(
    ("y", "mom", "action", "terrain_y", "blocks", "why"),
    [
        (6.3, 0.0, UP, 0, ((60.0, 40),), "above 0.125 H"),
        (41.95, 0.0, NOOP, 40, ((60.0, 12),), "below 0.875 H"),
        (20.0, 0.0, NOOP, 30, ((60.0, 12),), "y - 2.4 <= terrain centre - 12"),
        (23.95, 0.0, NOOP, 12, ((60.0, 40),), "y >= terrain centre + 12"),
        (24.0, 0.0, NOOP, 24, ((17.0, 24),), "block hit"),
    ],
)
def test_death_conditions(y, mom, action, terrain_y, blocks, why) -> None:  # noqa: ANN001
    core = _core(y=y, mom=mom, terrain_y=terrain_y, blocks=blocks)
    assert _step(core, action) == (-5.0, True), why


def test_alive_just_inside_the_limits() -> None:
    # Gap of a flat terrain at 24: [12, 36); y - 2.4 > 12 and y < 36 survive.
    for y in (14.5, 35.9):
        core = _core(y=y - 0.0576 * 0.99)
        assert _step(core, NOOP) == (0.0, False)


def test_state_features_in_ple_order() -> None:
    core = _core(terrain_y=20, blocks=((10.0, 12), (40.0, 30)))
    np.testing.assert_array_equal(core.state()[0], [24.0, 0.0, 16.0, 8.0, 24.0, 30.0, 39.0])
    core = _core(blocks=((10.0, 12),))  # no block ahead: PLE's 999 sentinel
    assert core.state()[0, 4] == 999.0


def test_reset_layout() -> None:
    core = PixelcopterCore(500)
    core.rng[:] = np.arange(500, dtype=np.uint64) + np.uint64(1)
    core.reset_slots(np.ones(500, dtype=bool))
    assert set(core.nt.tolist()) == {48} and set(core.nb.tolist()) == {1}
    np.testing.assert_array_equal(core.tx[:, :48], np.tile(np.arange(2, 192, 4), (500, 1)))
    assert core.ty[:, :48].min() >= 18 and core.ty[:, :48].max() <= 30
    assert set(core.bx[:, 0].astype(int).tolist()) <= set(range(48, 72))
    assert len(set(core.bx[:, 0].tolist())) > 15
    assert core.by[:, 0].min() >= 12 and core.by[:, 0].max() < 36
    img = core.render_slot(0)
    assert img.shape == (48, 48, 3) and (img == 255).all(axis=2).sum() == 4  # 2x2 player
