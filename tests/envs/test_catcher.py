"""Catcher rules, pinned with numbers derived by hand from the PLE rules
(summarised in the ``maxminq.envs.catcher`` docstring).

Geometry used below: paddle rect = 13x3 with left = px - 6, top = 57; fruit rect = 4x4 with
left = fx - 2, top = fy - 2; pygame colliderect needs strict overlap. One press adds
0.021 * 64 = 1.344 to the velocity before the 0.9 decay; the fruit falls 0.00095 * 64 * 1000/30
= 2.02667 px per frame and the Rect centre truncates toward zero.
"""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.envs.catcher import LEFT, NOOP, RIGHT, CatcherCore


def _core(px: int = 25, vel: float = 0.0, fx: int = 8, fy: int = 10, lives: int = 3):
    core = CatcherCore(1)
    core.rng[0] = np.uint64(12345)
    core.px[0], core.vel[0], core.fx[0], core.fy[0], core.lives[0] = px, vel, fx, fy, lives
    return core


def _step(core: CatcherCore, action: int) -> tuple[float, bool]:
    r, t = core.step(np.array([action], dtype=np.int64))
    return float(r[0]), bool(t[0])


def test_velocity_after_press_and_decay() -> None:
    core = _core(px=25, fx=8, fy=-28)
    _step(core, RIGHT)
    assert core.vel[0] == pytest.approx(1.344 * 0.9)  # 1.2096
    assert core.px[0] == 26  # int(25 + 1.2096)
    for _ in range(3):
        _step(core, NOOP)
    assert core.vel[0] == pytest.approx(1.2096 * 0.9**3)  # 0.8817984
    assert core.px[0] == 27  # 26 -> int(27.09) -> int(27.98) -> int(27.88)
    _step(core, LEFT)
    assert core.vel[0] == pytest.approx((0.8817984 - 1.344) * 0.9)  # -0.41598144
    assert core.px[0] == 26  # int(27 - 0.416)
    # Two presses in a row: (1.344 * 0.9 + 1.344) * 0.9
    core = _core(px=25, fx=8, fy=-28)
    _step(core, RIGHT)
    _step(core, RIGHT)
    assert core.vel[0] == pytest.approx(2.29824)


def test_edges_clamp_position_and_zero_velocity() -> None:
    core = _core(px=50, vel=5.0, fx=8, fy=-28)
    _step(core, RIGHT)
    assert (core.px[0], core.vel[0]) == (51, 0.0)  # 64 - 13
    core = _core(px=2, vel=-5.0, fx=52, fy=-28)
    _step(core, LEFT)
    assert (core.px[0], core.vel[0]) == (0, 0.0)


def test_fruit_fall_per_frame() -> None:
    core = _core(px=51, fx=8, fy=10)
    for expected in (12, 14, 16):  # int(y + 2.02667) for y >= 0
        _step(core, NOOP)
        assert core.fy[0] == expected
    core = _core(px=51, fx=8, fy=-10)
    _step(core, NOOP)
    assert core.fy[0] == -7  # int(-7.97) truncates toward zero: 3 px while above the screen
    assert core.fx[0] == 8


@pytest.mark.parametrize(
    ("fx", "fy", "caught"),
    [
        (38, 58, True),  # fruit left 36 < paddle right 37
        (39, 58, False),  # fruit left 37 == paddle right: touching is no overlap
        (23, 58, True),  # fruit right 25 > paddle left 24
        (22, 58, False),
        (30, 61, True),  # fruit top 59 < paddle bottom 60
        (30, 62, False),
        (30, 56, True),  # fruit bottom 58 > paddle top 57
        (30, 55, False),
    ],
)
def test_catch_at_rectangle_boundary(fx: int, fy: int, caught: bool) -> None:
    core = _core(px=30, fx=fx, fy=fy)
    reward, term = _step(core, NOOP)
    assert not term
    if caught:
        assert reward == 1.0
        # Respawned (x in 8..52 step 4, y in -4..-28 step 4) and then fell 3 px this frame.
        assert core.fx[0] in range(8, 56, 4)
        assert core.fy[0] in range(-25, 0, 4)
    else:
        assert reward == 0.0
        assert (core.fx[0], core.fy[0]) == (fx, fy + 2)


def test_miss_costs_a_life_and_last_life_scores_minus_six() -> None:
    core = _core(px=51, fx=8, fy=64)
    reward, term = _step(core, NOOP)
    assert (reward, term, int(core.lives[0])) == (-1.0, False, 2)
    assert core.fy[0] in range(-25, 0, 4)
    core = _core(px=51, fx=8, fy=63, lives=1)  # not yet missed: falls to 65
    assert _step(core, NOOP) == (0.0, False)
    assert _step(core, NOOP) == (-6.0, True)  # -1 for the miss, -5 for the loss
    assert core.lives[0] == 0


def test_reset_spawn_sets_and_initial_state() -> None:
    core = CatcherCore(3000)
    core.rng[:] = np.arange(3000, dtype=np.uint64) * np.uint64(7919)
    core.reset_slots(np.ones(3000, dtype=bool))
    assert set(core.fx.tolist()) == set(range(8, 56, 4))
    assert set(core.fy.tolist()) == {-4, -8, -12, -16, -20, -24, -28}
    assert set(core.px.tolist()) == {25} and set(core.lives.tolist()) == {3}
    np.testing.assert_array_equal(core.state()[0], [25, 0, core.fx[0], core.fy[0]])


def test_normalised_observation_and_render() -> None:
    core = _core(px=30, vel=4.0, fx=12, fy=20)
    np.testing.assert_allclose(core.observe(True)[0], [4 / 26, 0.5, -14 / 26, 0.0], rtol=1e-6)
    img = core.render_slot(0)
    assert img.shape == (64, 64, 3) and img.dtype == np.uint8
    white = np.all(img == 255, axis=2)
    rows, cols = np.nonzero(white)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (57, 59, 24, 36)
    pink = np.all(img == (255, 120, 120), axis=2)
    rows, cols = np.nonzero(pink)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (18, 21, 10, 13)
