"""A dense grid tile coder for two bounded dimensions (Sutton & Barto 2018, section 9.5.4).

``n_tilings`` tilings, each tile ``1/tiles_per_dim`` of the bounded range in each dimension
(Lan et al. 2020 use 8 tilings of 8 x 8 tiles on Mountain Car). Offsets follow the standard
tile coder (Sutton's ``tiles3``): with inputs scaled so a tile is one unit wide, tiling t is
displaced by ``t * (2 i + 1) / n_tilings`` tile widths in dimension i (the asymmetric
1, 3 displacement vector). Instead of hashing, each tiling is a dense grid of
``(tiles_per_dim + 3) ** 2`` cells (the displacement of up to 3 (n_tilings - 1) / n_tilings
tile widths plus the upper bound itself reach at most two cells past the last tile), so the
feature index of tiling t is ``t * cells + ix * side + iy``.

The grid starts at ``lo``: inputs are scaled as ``(x - lo) / (hi - lo) * tiles_per_dim``.
The common ``tiles3`` recipe for Mountain Car scales ``x`` itself (``8 x / 1.7``), which puts
the tilings' origin at 0 instead: for velocity (-0.07 is exactly 4 tiles from 0) the
partitions are the same, for position they are shifted by 0.18 / 8 of a tile.
"""

from __future__ import annotations

import math

import numpy as np

from maxminq._jit import njit

__all__ = ["TileCoder", "tile_indices"]


@njit(inline="always")
def tile_indices(x, y, lo_x, hi_x, lo_y, hi_y, n_tilings, tiles_per_dim, out):  # pragma: no cover
    """Write the active feature index of each tiling for point (x, y) into ``out``."""
    side = tiles_per_dim + 3
    cells = side * side
    # Scale so one tile spans n_tilings units: integer offsets then shift by 1/n_tilings tile.
    qx = math.floor((x - lo_x) / (hi_x - lo_x) * tiles_per_dim * n_tilings)
    qy = math.floor((y - lo_y) / (hi_y - lo_y) * tiles_per_dim * n_tilings)
    for t in range(n_tilings):
        ix = (qx + t) // n_tilings
        iy = (qy + 3 * t) // n_tilings
        out[t] = t * cells + ix * side + iy


class TileCoder:
    """Tile coder over the box ``[lo_x, hi_x] x [lo_y, hi_y]`` (inputs are clipped to it)."""

    def __init__(
        self,
        lo: tuple[float, float],
        hi: tuple[float, float],
        n_tilings: int = 8,
        tiles_per_dim: int = 8,
    ) -> None:
        for name, count in (("n_tilings", n_tilings), ("tiles_per_dim", tiles_per_dim)):
            # 2.5 was read as 2 and True as 1
            if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
                raise ValueError(f"TileCoder: {name} must be a whole number >= 1, got {count!r}")
        bounds = [float(b) for b in (*lo, *hi)]
        # an infinite bound (or width) put every input in tile 0
        widths = (bounds[2] - bounds[0], bounds[3] - bounds[1]) if len(bounds) == 4 else ()
        if len(bounds) != 4 or not all(map(math.isfinite, (*bounds, *widths))):
            raise ValueError(
                f"TileCoder: lo and hi must be finite pairs, hi - lo too; got {lo}, {hi}"
            )
        if not (bounds[0] < bounds[2] and bounds[1] < bounds[3]):
            raise ValueError(f"TileCoder: need lo < hi in both dimensions, got {lo}, {hi}")
        self.lo, self.hi = (bounds[0], bounds[1]), (bounds[2], bounds[3])
        self.n_tilings, self.tiles_per_dim = int(n_tilings), int(tiles_per_dim)

    @property
    def n_features(self) -> int:
        """Total number of features (n_tilings dense grids)."""
        return self.n_tilings * (self.tiles_per_dim + 3) ** 2

    def __call__(self, x: float, y: float) -> np.ndarray:
        """The ``n_tilings`` active feature indices of point (x, y); ValueError for NaN.

        Infinite coordinates are clipped to the box like any other outside it."""
        out = np.empty(self.n_tilings, dtype=np.int64)
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):  # floor(NaN) gave indices far past n_features
            raise ValueError(f"TileCoder: the point must not be NaN, got ({x}, {y})")
        x = min(max(x, self.lo[0]), self.hi[0])
        y = min(max(y, self.lo[1]), self.hi[1])
        tile_indices(x, y, self.lo[0], self.hi[0], self.lo[1], self.hi[1],
                     self.n_tilings, self.tiles_per_dim, out)  # fmt: skip
        return out
