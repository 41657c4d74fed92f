"""Pixelcopter frames stack the sprites as PLE draws them (``Pixelcopter.step`` ends with
``player_group.draw``, then ``block_group.draw``, then ``terrain_group.draw``): a block or a
terrain wall overlapping the copter (a crash) hides it, as on PLE's screen.

Geometry by hand: the copter's 2x2 Rect at centre (16, 24) covers x 15..16, y 23..24; a
4x9 block at centre (17, 24) covers x 15..18, y 20..28; green is (120, 240, 80).
"""

from __future__ import annotations

import numpy as np

from maxminq.envs.pixelcopter import PixelcopterCore

GREEN = (120, 240, 80)


def _core(block: tuple[float, int] | None, terrain_y: int = 24) -> PixelcopterCore:
    core = PixelcopterCore(1)
    core.py[0], core.mom[0] = 24.0, 0.0
    core.nt[0] = 48
    core.tx[0, :48] = 2.0 + 4.0 * np.arange(48)
    core.ty[0, :48] = terrain_y
    core.nb[0] = 0 if block is None else 1
    if block is not None:
        core.bx[0, 0], core.by[0, 0] = block
    return core


def test_a_block_over_the_copter_hides_it() -> None:
    img = _core((17.0, 24)).render_slot(0)
    assert all(tuple(img[y, x]) == GREEN for y in (23, 24) for x in (15, 16))


def test_a_terrain_wall_over_the_copter_hides_it() -> None:
    # Terrain centre 40: its top wall covers y from 40 - 36 = 4 to 4 + 24 = 28 (exclusive).
    img = _core(None, terrain_y=40).render_slot(0)
    assert all(tuple(img[y, x]) == GREEN for y in (23, 24) for x in (15, 16))


def test_the_copter_in_the_gap_is_white() -> None:
    img = _core(None).render_slot(0)  # terrain 24: walls end at y 12 and start at y 36
    assert all(tuple(img[y, x]) == (255, 255, 255) for y in (23, 24) for x in (15, 16))
