"""Pixelcopter (PyGame Learning Environment), re-implemented from its rules in NumPy + numba.

Rules (PLE ``pixelcopter.py``, 48x48 screen, dt = 1000/30 ms, s = 0.0004 W):

* Actions: 0 = up, 1 = noop. ``momentum += (-0.875 s if up else 0.09 s) * dt``, then
  ``momentum *= 0.99`` and ``y += momentum``. The player sits at x = int(0.35 W) = 16,
  y = 24; its collision rectangle is 2x2 (a Surface of 2.4 px truncates to 2).
* Blocks 4x9 scroll left s * dt = 0.64 px per frame; a block spawns with centre x from
  [W, 1.5 W) and centre y from [0.25 H, 0.75 H).
* Terrain: 4-px-wide segments at x = start + 2, start + 6, ... with centre
  y = int(H/2 + 0.125 H sin(f x + U(0, 0.5))), f = 4.5 / W + U(-0.01, 0.01) per batch; each
  segment's collision rectangle is 4x72 around its centre, and the gap runs from
  centre - 0.25 H to centre + 0.25 H. Segments 0..4W at the start; another batch for
  [W, 5W) whenever 13 or fewer remain.
* Order within a frame: player, blocks and terrain move; block hits and terrain hits
  (``y - 2.4 <= centre - 12`` or ``y >= centre + 12`` for every overlapping segment) cost a
  life; a block at or left of the player scores +1 and spawns the next one (only while it is
  the only block); blocks and segments at x <= -4 are removed, +1 per segment; y < 0.125 H
  or y > 0.875 H costs a life. With no life left the frame also scores -5 (one life).
* Segments stay sorted by x in insertion order (a batch is spaced 4 px; a new batch starts
  at x = 50 when the 13 survivors of the previous one lie below x = 48; everything scrolls
  alike), so collision scans stop at the first segment right of the player.
* Observation (PLE ``getGameState`` order): player_y, player_vel, player_dist_to_ceil,
  player_dist_to_floor, next_gate_dist_to_player (999 if no block ahead),
  next_gate_block_top (the block's centre y, as in PLE), next_gate_block_bottom (top + 9).
  PLE defines no normalisation; ours (``normalize=True``): positions (v - 24) / 24, velocity
  / 10, distances to ceiling/floor / 24, gate distance / 48.
"""

from __future__ import annotations

import numpy as np

from maxminq._jit import njit
from maxminq.envs._game import (
    GameEnv,
    GameVectorEnv,
    KernelGameCore,
    apply_time_limit,
    fill_rect,
    to_obs,
)
from maxminq.envs._rng import randint, uniform

WIDTH = 48
HEIGHT = 48
DT = 1000.0 / 30.0
SPEED = 0.0004 * WIDTH
CLIMB = SPEED * -0.875
FALL = SPEED * 0.09
SCROLL = SPEED * DT  # 0.64 px per frame
PLAYER_X = int(WIDTH * 0.35)  # 16
PLAYER_Y0 = HEIGHT / 2  # 24.0
PLAYER_H = HEIGHT * 0.05  # 2.4, used in the ceiling test
PLAYER_RECT = int(WIDTH * 0.05)  # 2: pygame Surface sizes truncate
BLOCK_W = int(WIDTH * 0.1)  # 4
BLOCK_H = int(HEIGHT * 0.2)  # 9
TERRAIN_W = int(WIDTH * 0.1)  # 4
TERRAIN_RECT_H = int(HEIGHT * 1.5)  # 72
GAP_HALF = HEIGHT * 0.25  # 12
CEILING = HEIGHT * 0.125  # 6
FLOOR = HEIGHT * 0.875  # 42
REFILL_AT = 10 + 3
UP, NOOP = 0, 1
REWARD_POSITIVE, REWARD_LOSS = 1.0, -5.0
BLOCK_CAP = 4
TERRAIN_CAP = 64  # at most 13 + 48 segments exist at once
PLAYER_LEFT = PLAYER_X - PLAYER_RECT // 2  # 15: the player's Rect, centre (16, y) truncated


@njit
def _hits_player(pry: int, left: int, top: int, w: int, h: int) -> bool:
    """pygame ``colliderect`` (strict overlap) of the player's Rect (top ``pry``) and another."""
    return (
        left + w > PLAYER_LEFT
        and left < PLAYER_LEFT + PLAYER_RECT
        and pry < top + h
        and top < pry + PLAYER_RECT
    )


@njit
def _terrain_hit(pry: int, x: float, cy: int) -> int:
    """Segment (centre x, cy) vs the player's Rect: 1 overlap, 0 none, -1 right of the player.

    Segments are sorted by x (see module docstring), so after a -1 none further overlap.
    """
    left = int(x) - TERRAIN_W // 2
    if left >= PLAYER_LEFT + PLAYER_RECT:
        return -1
    return int(_hits_player(pry, left, cy - TERRAIN_RECT_H // 2, TERRAIN_W, TERRAIN_RECT_H))


@njit
def _add_terrain(
    i: int, start: int, end: int, tx: np.ndarray, ty: np.ndarray, nt: np.ndarray, rng: np.ndarray
) -> None:
    """Append a batch of terrain segments for x in [start, end) to slot i."""
    freq = 4.5 / WIDTH + uniform(rng, i, -0.01, 0.01)
    for x in range(start + TERRAIN_W // 2, end + TERRAIN_W // 2, TERRAIN_W):
        jitter = (HEIGHT * 0.125) * np.sin(freq * x + uniform(rng, i, 0.0, 0.5))
        k = nt[i]
        tx[i, k] = x
        ty[i, k] = int(HEIGHT / 2.0 + jitter)
        nt[i] = k + 1


@njit
def _add_block(i: int, bx: np.ndarray, by: np.ndarray, nb: np.ndarray, rng: np.ndarray) -> None:
    """Append one block to slot i (centre x in [W, 1.5 W), y in [0.25 H, 0.75 H))."""
    k = nb[i]
    bx[i, k] = randint(rng, i, WIDTH, int(WIDTH * 1.5))
    by[i, k] = randint(rng, i, int(HEIGHT * 0.25), int(HEIGHT * 0.75))
    nb[i] = k + 1


@njit
def _reset(
    mask: np.ndarray,
    py: np.ndarray,
    mom: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    nb: np.ndarray,
    tx: np.ndarray,
    ty: np.ndarray,
    nt: np.ndarray,
    rng: np.ndarray,
) -> None:
    """Start a new game in every masked slot: player at (16, 24), one block, then 48 terrain
    segments (in PLE's order)."""
    for i in range(mask.shape[0]):
        if mask[i]:
            py[i] = PLAYER_Y0
            mom[i] = 0.0
            nb[i] = 0
            nt[i] = 0
            _add_block(i, bx, by, nb, rng)
            _add_terrain(i, 0, WIDTH * 4, tx, ty, nt, rng)


@njit
def _step(
    actions: np.ndarray,
    py: np.ndarray,
    mom: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    nb: np.ndarray,
    tx: np.ndarray,
    ty: np.ndarray,
    nt: np.ndarray,
    rng: np.ndarray,
    reward: np.ndarray,
    term: np.ndarray,
) -> None:
    """One frame for every slot; writes reward and terminated (see module docstring)."""
    alive = np.empty(BLOCK_CAP, dtype=np.bool_)  # per block of the slot being stepped
    for i in range(actions.shape[0]):
        m = mom[i] + (CLIMB if actions[i] == UP else FALL) * DT
        m *= 0.99
        mom[i] = m
        y = py[i] + m
        py[i] = y
        for j in range(nb[i]):
            bx[i, j] -= SCROLL
        for j in range(nt[i]):
            tx[i, j] -= SCROLL
        lives = 1
        score = 0.0
        pry = int(y) - PLAYER_RECT // 2
        for j in range(nb[i]):
            left = int(bx[i, j]) - BLOCK_W // 2
            if _hits_player(pry, left, by[i, j] - BLOCK_H // 2, BLOCK_W, BLOCK_H):
                lives -= 1
        for j in range(nt[i]):
            hit = _terrain_hit(pry, tx[i, j], ty[i, j])
            if hit < 0:
                break
            if hit:
                if y - PLAYER_H <= ty[i, j] - GAP_HALF:
                    lives -= 1
                if y >= ty[i, j] + GAP_HALF:
                    lives -= 1
        # Blocks: iterate the blocks present at the start of this loop, with the live count.
        n0 = nb[i]
        count = n0
        for j in range(n0):
            alive[j] = True
        for j in range(n0):
            if bx[i, j] <= PLAYER_X and count == 1:
                score += REWARD_POSITIVE
                _add_block(i, bx, by, nb, rng)
                alive[nb[i] - 1] = True
                count += 1
            if bx[i, j] <= -BLOCK_W:
                alive[j] = False
                count -= 1
        k = 0
        for j in range(nb[i]):
            if alive[j]:
                bx[i, k] = bx[i, j]
                by[i, k] = by[i, j]
                k += 1
        nb[i] = k
        # Terrain segments leaving the screen: +1 each.
        k = 0
        for j in range(nt[i]):
            if tx[i, j] <= -TERRAIN_W:
                score += REWARD_POSITIVE
            else:
                tx[i, k] = tx[i, j]
                ty[i, k] = ty[i, j]
                k += 1
        nt[i] = k
        if y < CEILING:
            lives -= 1
        if y > FLOOR:
            lives -= 1
        if nt[i] <= REFILL_AT:
            _add_terrain(i, WIDTH, WIDTH * 5, tx, ty, nt, rng)
        over = lives <= 0
        if over:
            score += REWARD_LOSS
        reward[i] = score
        term[i] = over


@njit
def _state(
    py: np.ndarray,
    mom: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    nb: np.ndarray,
    tx: np.ndarray,
    ty: np.ndarray,
    nt: np.ndarray,
    out: np.ndarray,
    rows: np.ndarray,
) -> None:
    """getGameState rows (PLE order) of slots ``rows`` into ``out``."""
    for i in rows:
        y = py[i]
        pry = int(y) - PLAYER_RECT // 2
        # PLE takes the first terrain segment (in insertion order) touching the player.
        cur = -1
        for j in range(nt[i]):
            hit = _terrain_hit(pry, tx[i, j], ty[i, j])
            if hit < 0:
                break
            if hit:
                cur = j
                break
        if cur < 0:  # PLE would fail here; fall back to the segment nearest in x
            best = 1e9
            for j in range(nt[i]):
                d = abs(tx[i, j] - PLAYER_X)
                if d < best:
                    best = d
                    cur = j
        cy = ty[i, cur]
        min_dist = 999.0
        top = 0.0
        for j in range(nb[i]):
            d = bx[i, j] - PLAYER_X
            if d > 0 and d < min_dist:
                min_dist = d
                top = by[i, j]
        out[i, 0] = y
        out[i, 1] = mom[i]
        out[i, 2] = y - (cy - GAP_HALF)
        out[i, 3] = (cy + GAP_HALF) - y
        out[i, 4] = min_dist
        out[i, 5] = top
        out[i, 6] = top + BLOCK_H


@njit
def _vector_step(
    actions: np.ndarray,
    py: np.ndarray,
    mom: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    nb: np.ndarray,
    tx: np.ndarray,
    ty: np.ndarray,
    nt: np.ndarray,
    rng: np.ndarray,
    elapsed: np.ndarray,
    cap: int,
    shift: np.ndarray,
    scale: np.ndarray,
    normalize: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fused step + time limit + same-step reset + observation for all slots."""
    b = actions.shape[0]
    reward = np.empty(b)
    term = np.empty(b, dtype=np.bool_)
    _step(actions, py, mom, bx, by, nb, tx, ty, nt, rng, reward, term)
    trunc, done, idx = apply_time_limit(term, elapsed, cap)
    raw = np.empty((b, 7))
    obs = np.empty((b, 7), dtype=np.float32)
    rows = np.arange(b)
    _state(py, mom, bx, by, nb, tx, ty, nt, raw, rows)
    to_obs(raw, shift, scale, normalize, obs, rows)
    final = obs[idx]
    if idx.size > 0:
        _reset(done, py, mom, bx, by, nb, tx, ty, nt, rng)
        _state(py, mom, bx, by, nb, tx, ty, nt, raw, idx)
        to_obs(raw, shift, scale, normalize, obs, idx)
    return obs, reward, term, trunc, idx, final


class PixelcopterCore(KernelGameCore):
    """State of B Pixelcopter games: player, blocks and terrain segments."""

    n_actions = 2
    obs_dim = 7
    action_names = ("up", "noop")  # PLE's action set: its key, then NOOP
    observation_names = (
        "player_y",
        "player_vel",
        "player_dist_to_ceil",
        "player_dist_to_floor",
        "next_gate_dist_to_player",
        "next_gate_block_top",
        "next_gate_block_bottom",
    )
    obs_low = np.full(7, -1000.0)
    obs_high = np.full(7, 1000.0)
    norm_shift = np.array([24.0, 0.0, 0.0, 0.0, 0.0, 24.0, 24.0])
    norm_scale = np.array([24.0, 10.0, 24.0, 24.0, 48.0, 24.0, 24.0])
    reset_kernel = staticmethod(_reset)
    step_kernel = staticmethod(_step)
    vector_kernel = staticmethod(_vector_step)

    def __init__(self, num_games: int) -> None:
        """Arrays for ``num_games`` games, filled in when each is reset."""
        super().__init__(num_games)
        b = num_games
        self.py = np.full(b, PLAYER_Y0)
        self.mom = np.zeros(b)
        self.bx = np.zeros((b, BLOCK_CAP))
        self.by = np.zeros((b, BLOCK_CAP), dtype=np.int64)
        self.nb = np.zeros(b, dtype=np.int64)
        self.tx = np.zeros((b, TERRAIN_CAP))
        self.ty = np.zeros((b, TERRAIN_CAP), dtype=np.int64)
        self.nt = np.zeros(b, dtype=np.int64)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The game-state arrays, in the order the kernels take them."""
        return (self.py, self.mom, self.bx, self.by, self.nb, self.tx, self.ty, self.nt)

    def fill_state(self, out: np.ndarray, rows: np.ndarray) -> None:
        """PLE getGameState values, shape (B, 7)."""
        _state(*self._arrays(), out, rows)

    def render_slot(self, i: int) -> np.ndarray:
        """Player (white), blocks and terrain walls (green) at their PLE drawing rectangles,
        drawn in PLE's order (player, blocks, terrain: a wall or block hides a crashed copter)."""
        img = np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8)
        green = (120, 240, 80)
        y = int(self.py[i]) - PLAYER_RECT // 2
        fill_rect(img, PLAYER_LEFT, y, PLAYER_RECT, PLAYER_RECT, (255, 255, 255))
        for j in range(self.nb[i]):
            left = int(self.bx[i, j]) - BLOCK_W // 2
            fill_rect(img, left, self.by[i, j] - BLOCK_H // 2, BLOCK_W, BLOCK_H, green)
        for j in range(self.nt[i]):
            left = int(self.tx[i, j]) - TERRAIN_W // 2
            top = self.ty[i, j] - TERRAIN_RECT_H // 2
            fill_rect(img, left, top, TERRAIN_W, HEIGHT * 0.5, green)
            fill_rect(img, left, top + int(HEIGHT * 1.05), TERRAIN_W, HEIGHT * 0.5, green)
        return img


class PixelcopterEnv(GameEnv):
    """Pixelcopter as a Gymnasium env (``maxminq/Pixelcopter-v0``, episode cap 500)."""

    core_cls = PixelcopterCore


class PixelcopterVectorEnv(GameVectorEnv):
    """B Pixelcopter games stepped by one numba kernel call (same-step autoreset)."""

    core_cls = PixelcopterCore
