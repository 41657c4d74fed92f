"""Catcher (PyGame Learning Environment), re-implemented from its rules in NumPy + numba.

Rules (PLE ``catcher.py``, 64x64 screen, fps 30 with force_fps so dt = 1000/30 ms):

* Actions: 0 = left, 1 = right, 2 = noop. A press adds -/+ 0.021 W to the paddle velocity,
  then ``vel *= 0.9`` and ``x += vel``; at an edge x is clamped and vel set to 0.
* Paddle 13x3 (round(0.2 W) x round(0.04 H)) with its centre at y = H - 3 - 3 = 58; the
  centre x starts at int(W/2 - 13/2) = 25. Fruit 4x4 falls 0.00095 H dt (about 2.03) px
  per frame; positions are pygame ``Rect`` centres, so every move truncates toward zero.
* Fruit respawn: centre x from range(8, 56, 4), centre y = -(one of range(4, 32, 4)).
* Order within a frame: miss check (fruit centre y >= H: -1, lose a life, respawn), catch
  check (pygame ``colliderect``, strict overlap: +1, respawn), then paddle and fruit move;
  when the lives reach 0 the frame also scores -5 and the game is over. 3 lives.
* Observation (PLE ``getGameState`` order): player_x, player_vel, fruit_x, fruit_y.
  Normalised variant (the authors' wrapper): (x-26)/26, vel/8, (fx-26)/26, (fy-20)/45.
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
from maxminq.envs._rng import randint

WIDTH = 64
HEIGHT = 64
DT = 1000.0 / 30.0
INIT_LIVES = 3
PADDLE_W = int(np.round(WIDTH * 0.2))  # 13
PADDLE_H = int(np.round(HEIGHT * 0.04))  # 3
FRUIT = int(np.round(HEIGHT * 0.06))  # 4
PLAYER_SPEED = 0.021 * WIDTH  # velocity added by one press
FALL = 0.00095 * HEIGHT * DT  # fruit fall per frame before truncation
PADDLE_CY = HEIGHT - PADDLE_H - 3  # 58
PADDLE_X0 = int(WIDTH / 2 - PADDLE_W / 2)  # 25 (pygame truncates 25.5)
# pygame Rect geometry from a centre: left = cx - w // 2, top = cy - h // 2.
PADDLE_TOP = PADDLE_CY - PADDLE_H // 2  # 57
PADDLE_HALF = PADDLE_W // 2  # 6
FRUIT_HALF = FRUIT // 2  # 2
SPAWN_X = np.arange(FRUIT * 2, WIDTH - FRUIT * 2, FRUIT)  # 8, 12, ..., 52
SPAWN_Y = np.arange(FRUIT, HEIGHT // 2, FRUIT)  # 4, 8, ..., 28
LEFT, RIGHT, NOOP = 0, 1, 2
REWARD_POSITIVE, REWARD_NEGATIVE, REWARD_LOSS = 1.0, -1.0, -5.0

_N_SPAWN_X = len(SPAWN_X)
_N_SPAWN_Y = len(SPAWN_Y)


@njit
def _spawn(i: int, fx: np.ndarray, fy: np.ndarray, rng: np.ndarray) -> None:
    """New fruit for slot i: centre x from SPAWN_X, centre y = -(one of SPAWN_Y)."""
    fx[i] = FRUIT * 2 + FRUIT * randint(rng, i, 0, _N_SPAWN_X)
    fy[i] = -(FRUIT + FRUIT * randint(rng, i, 0, _N_SPAWN_Y))


@njit
def _reset(
    mask: np.ndarray,
    px: np.ndarray,
    vel: np.ndarray,
    fx: np.ndarray,
    fy: np.ndarray,
    lives: np.ndarray,
    rng: np.ndarray,
) -> None:
    """Start a new game in every masked slot: paddle centred, still, 3 lives, a fresh fruit."""
    for i in range(mask.shape[0]):
        if mask[i]:
            px[i] = PADDLE_X0
            vel[i] = 0.0
            lives[i] = INIT_LIVES
            _spawn(i, fx, fy, rng)


@njit
def collides(px: int, fx: int, fy: int) -> bool:
    """pygame ``colliderect`` of the paddle (centre px, 58) and the fruit (centre fx, fy)."""
    pl, pt = px - PADDLE_HALF, PADDLE_TOP
    fl, ft = fx - FRUIT_HALF, fy - FRUIT_HALF
    return pl < fl + FRUIT and fl < pl + PADDLE_W and pt < ft + FRUIT and ft < pt + PADDLE_H


@njit
def _step(
    actions: np.ndarray,
    px: np.ndarray,
    vel: np.ndarray,
    fx: np.ndarray,
    fy: np.ndarray,
    lives: np.ndarray,
    rng: np.ndarray,
    reward: np.ndarray,
    term: np.ndarray,
) -> None:
    """One frame for every slot; writes reward and terminated (see module docstring)."""
    for i in range(actions.shape[0]):
        a = actions[i]
        dx = -PLAYER_SPEED if a == LEFT else (PLAYER_SPEED if a == RIGHT else 0.0)
        r = 0.0
        if fy[i] >= HEIGHT:  # missed: checked before anything moves
            r += REWARD_NEGATIVE
            lives[i] -= 1
            _spawn(i, fx, fy, rng)
        if collides(px[i], fx[i], fy[i]):
            r += REWARD_POSITIVE
            _spawn(i, fx, fy, rng)
        v = (vel[i] + dx) * 0.9
        nx = px[i] + v
        if nx <= 0:
            v = 0.0
            nx = 0.0
        if nx + PADDLE_W >= WIDTH:
            v = 0.0
            nx = float(WIDTH - PADDLE_W)
        vel[i] = v
        px[i] = int(nx)  # Rect centre: truncation toward zero
        fy[i] = int(fy[i] + FALL)
        over = lives[i] == 0
        if over:
            r += REWARD_LOSS
        reward[i] = r
        term[i] = over


@njit
def _state(
    px: np.ndarray,
    vel: np.ndarray,
    fx: np.ndarray,
    fy: np.ndarray,
    out: np.ndarray,
    rows: np.ndarray,
) -> None:
    """getGameState rows (player_x, player_vel, fruit_x, fruit_y) into ``out``."""
    for i in rows:
        out[i, 0] = px[i]
        out[i, 1] = vel[i]
        out[i, 2] = fx[i]
        out[i, 3] = fy[i]


@njit
def _vector_step(
    actions: np.ndarray,
    px: np.ndarray,
    vel: np.ndarray,
    fx: np.ndarray,
    fy: np.ndarray,
    lives: np.ndarray,
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
    _step(actions, px, vel, fx, fy, lives, rng, reward, term)
    trunc, done, idx = apply_time_limit(term, elapsed, cap)
    raw = np.empty((b, 4))
    obs = np.empty((b, 4), dtype=np.float32)
    rows = np.arange(b)
    _state(px, vel, fx, fy, raw, rows)
    to_obs(raw, shift, scale, normalize, obs, rows)
    final = obs[idx]
    if idx.size > 0:
        _reset(done, px, vel, fx, fy, lives, rng)
        _state(px, vel, fx, fy, raw, idx)
        to_obs(raw, shift, scale, normalize, obs, idx)
    return obs, reward, term, trunc, idx, final


class CatcherCore(KernelGameCore):
    """State of B Catcher games: paddle x / velocity, fruit centre, lives."""

    n_actions = 3
    obs_dim = 4
    action_names = ("left", "right", "noop")  # PLE's action set: its keys, then NOOP
    observation_names = ("player_x", "player_vel", "fruit_x", "fruit_y")
    # Bounds: |vel| <= 0.9 * 1.344 / (1 - 0.9) = 12.1; fruit y from -28 to at most 65.
    obs_low = np.array([0.0, -12.5, float(SPAWN_X[0]), -30.0])
    obs_high = np.array([float(WIDTH - PADDLE_W), 12.5, float(SPAWN_X[-1]), 66.0])
    norm_shift = np.array([26.0, 0.0, 26.0, 20.0])
    norm_scale = np.array([26.0, 8.0, 26.0, 45.0])
    reset_kernel = staticmethod(_reset)
    step_kernel = staticmethod(_step)
    vector_kernel = staticmethod(_vector_step)

    def __init__(self, num_games: int) -> None:
        """Arrays for ``num_games`` games, filled in when each is reset."""
        super().__init__(num_games)
        b = num_games
        self.px = np.full(b, PADDLE_X0, dtype=np.int64)
        self.vel = np.zeros(b)
        self.fx = np.zeros(b, dtype=np.int64)
        self.fy = np.zeros(b, dtype=np.int64)
        self.lives = np.full(b, INIT_LIVES, dtype=np.int64)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The game-state arrays, in the order the kernels take them."""
        return (self.px, self.vel, self.fx, self.fy, self.lives)

    def fill_state(self, out: np.ndarray, rows: np.ndarray) -> None:
        """PLE getGameState: player_x, player_vel, fruit_x, fruit_y."""
        _state(self.px, self.vel, self.fx, self.fy, out, rows)

    def render_slot(self, i: int) -> np.ndarray:
        """Paddle (white) and fruit (pink) drawn at their collision rectangles."""
        img = np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8)
        fill_rect(img, self.px[i] - PADDLE_HALF, PADDLE_TOP, PADDLE_W, PADDLE_H, (255, 255, 255))
        fill_rect(
            img, self.fx[i] - FRUIT_HALF, self.fy[i] - FRUIT_HALF, FRUIT, FRUIT, (255, 120, 120)
        )
        return img


class CatcherEnv(GameEnv):
    """Catcher as a Gymnasium env (``maxminq/Catcher-v0``, episode cap 2,000)."""

    core_cls = CatcherCore


class CatcherVectorEnv(GameVectorEnv):
    """B Catcher games stepped by one numba kernel call (same-step autoreset)."""

    core_cls = CatcherCore
