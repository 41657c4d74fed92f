"""Edge inputs of the tile coder, the finite-MDP solver and the theory functions that gave
wrong numbers, long waits or tracebacks. Every expected value here is derived by hand or by an
independent computation in the test."""

from __future__ import annotations

import math

import pytest

from maxminq.linear.tiles import TileCoder


def test_tile_coder_refuses_a_nan_point_instead_of_indexing_past_its_features() -> None:
    """floor(NaN) became a huge integer: indices ~5.8e18, far past n_features = 968, which
    would index outside any weight vector of that size."""
    coder = TileCoder((-1.2, -0.07), (0.5, 0.07))
    for point in ((math.nan, 0.0), (0.0, math.nan)):
        with pytest.raises(ValueError, match="NaN"):
            coder(*point)
    # infinite coordinates are outside the box, so they clip to its corners like any other
    assert coder(math.inf, math.inf).tolist() == coder(0.5, 0.07).tolist()
    assert coder(-math.inf, -math.inf).tolist() == coder(-1.2, -0.07).tolist()
    assert 0 <= coder(math.inf, -math.inf).min() <= coder(math.inf, -math.inf).max() < 968


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"n_tilings": 2.5}, "n_tilings must be a whole number"),  # was read as 2
        ({"n_tilings": True}, "n_tilings must be a whole number"),  # was read as 1
        ({"tiles_per_dim": 0}, "tiles_per_dim must be a whole number"),
        ({"hi": (math.inf, 1.0)}, "finite"),  # every point fell in tile 0
        ({"lo": (-1e308, 0.0), "hi": (1e308, 1.0)}, "finite"),  # width inf: tile 0 again
        ({"hi": (0.0, 1.0)}, "lo < hi"),
    ],
)
def test_tile_coder_refuses_bad_settings(kwargs, words) -> None:
    args = {"lo": (0.0, 0.0), "hi": (1.0, 1.0), **kwargs}
    with pytest.raises(ValueError, match=words):
        TileCoder(**args)


def test_tile_coder_with_other_tilings_stays_inside_its_features() -> None:
    """The dense grid's side (tiles + 3) holds the 1, 3 displacement at every tiling count:
    checked at the box's corners, where the displacement reaches furthest, against the
    displacement worked out here (ix = (q + t) // T, iy = (q + 3 t) // T)."""
    for n_tilings in (1, 2, 3, 7, 16):
        for tiles in (1, 4, 8):
            coder = TileCoder((0.0, 0.0), (1.0, 1.0), n_tilings, tiles)
            side = tiles + 3
            for x, y in ((0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)):
                q = [int(x * tiles * n_tilings), int(y * tiles * n_tilings)]
                expected = [
                    t * side * side + ((q[0] + t) // n_tilings) * side + (q[1] + 3 * t) // n_tilings
                    for t in range(n_tilings)
                ]
                got = coder(x, y)
                assert got.tolist() == expected
                assert got.max() < coder.n_features
