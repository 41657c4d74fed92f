"""Shared machinery for the NumPy/numba PLE games: single env and batched VectorEnv.

A game is a :class:`GameCore`: the state of B independent games in flat arrays, plus
numba kernels that reset some slots and step all of them (:class:`KernelGameCore` calls a
game's kernels, which each game writes out for speed). :class:`GameEnv` is the
single-game Gymnasium env (a core with B = 1) and :class:`GameVectorEnv` steps B games at
once with same-step autoreset and a per-slot time limit. Both call the same kernels and
draw from per-slot random streams, so slot i of a batch replays exactly the game a single
env with the same seed plays.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from maxminq._jit import njit
from maxminq.envs._checks import (
    check_action,
    check_actions,
    check_bool,
    check_cap,
    check_render_mode,
    check_seed,
    check_vector_seed,
    warn_no_render_mode,
)
from maxminq.envs._rng import state_from_generator


@njit
def to_obs(
    raw: np.ndarray,
    shift: np.ndarray,
    scale: np.ndarray,
    normalize: bool,
    out: np.ndarray,
    rows: np.ndarray,
) -> None:
    """Write float32 ``raw`` rows into ``out``, optionally (raw - shift) / scale per feature."""
    for i in rows:
        for k in range(raw.shape[1]):
            v = raw[i, k]
            out[i, k] = (v - shift[k]) / scale[k] if normalize else v


@njit
def apply_time_limit(
    term: np.ndarray, elapsed: np.ndarray, cap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advance ``elapsed``; return (truncated, done mask, indices of done slots)."""
    b = term.shape[0]
    trunc = np.zeros(b, dtype=np.bool_)
    done = np.zeros(b, dtype=np.bool_)
    for i in range(b):
        elapsed[i] += 1
        trunc[i] = cap > 0 and elapsed[i] >= cap
        done[i] = term[i] or trunc[i]
    idx = np.flatnonzero(done)
    for j in idx:
        elapsed[j] = 0
    return trunc, done, idx


class GameCore(ABC):
    """State and dynamics of ``num_games`` copies of one game.

    Subclasses define the arrays, :meth:`reset_slots`, :meth:`step`, :meth:`fill_state`
    and :meth:`render_slot`. ``rng`` holds one SplitMix64 state per slot.
    """

    n_actions: ClassVar[int]
    obs_dim: ClassVar[int]
    action_names: ClassVar[tuple[str, ...]]  # PLE's action set, in action order
    observation_names: ClassVar[tuple[str, ...]]  # PLE's getGameState keys, in order
    obs_low: ClassVar[np.ndarray]
    obs_high: ClassVar[np.ndarray]
    norm_shift: ClassVar[np.ndarray]
    norm_scale: ClassVar[np.ndarray]

    def __init__(self, num_games: int) -> None:
        self.num_games = num_games
        self.rng = np.zeros(num_games, dtype=np.uint64)
        self._raw = np.zeros((num_games, self.obs_dim))
        self.all_rows = np.arange(num_games)

    @abstractmethod
    def reset_slots(self, mask: np.ndarray) -> None:
        """Start a new game in every slot where ``mask`` is True (using that slot's stream)."""

    @abstractmethod
    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Advance every slot by one frame; return (reward float64[B], terminated bool[B])."""

    @abstractmethod
    def fill_state(self, out: np.ndarray, rows: np.ndarray) -> None:
        """Write the raw PLE ``getGameState()`` values of slots ``rows`` into ``out`` rows."""

    def state(self) -> np.ndarray:
        """Raw PLE ``getGameState()`` values, shape (B, obs_dim), float64 (a new array)."""
        out = np.empty((self.num_games, self.obs_dim))
        self.fill_state(out, self.all_rows)
        return out

    @abstractmethod
    def render_slot(self, i: int) -> np.ndarray:
        """RGB frame (height, width, 3) uint8 of slot ``i``."""

    def observe(
        self, normalize: bool, out: np.ndarray | None = None, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """Observations (B, obs_dim) float32, optionally normalised.

        With ``out`` and ``rows`` only those rows of ``out`` are rewritten (after a reset).
        """
        if out is None:
            out = np.empty((self.num_games, self.obs_dim), dtype=np.float32)
        rows = self.all_rows if rows is None else rows
        self.fill_state(self._raw, rows)
        to_obs(self._raw, self.norm_shift, self.norm_scale, normalize, out, rows)
        return out

    def vector_step(
        self, actions: np.ndarray, elapsed: np.ndarray, cap: int, normalize: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Step, apply the time limit ``cap`` (0 = none) to ``elapsed``, reset finished slots.

        Returns (obs, reward, terminated, truncated, finished slot indices, their last
        observations). Truncation is flagged at the cap even if the game also ended then, as
        Gymnasium's TimeLimit does. :class:`KernelGameCore` overrides this with the game's
        fused numba kernel; this is the reference version.
        """
        reward, terminated = self.step(actions)
        reward, terminated = reward.copy(), terminated.copy()
        elapsed += 1
        truncated = elapsed >= cap if cap > 0 else np.zeros(self.num_games, dtype=np.bool_)
        obs = self.observe(normalize)
        idx = np.flatnonzero(terminated | truncated)
        final = obs[idx]
        if idx.size:
            self.reset_slots(terminated | truncated)
            elapsed[idx] = 0
            self.observe(normalize, out=obs, rows=idx)
        return obs, reward, terminated, truncated, idx, final

    @classmethod
    def observation_space(cls, normalize: bool) -> spaces.Box:
        """Box of one observation (bounds transformed like the observation)."""
        low, high = cls.obs_low, cls.obs_high
        if normalize:
            low = (low - cls.norm_shift) / cls.norm_scale
            high = (high - cls.norm_shift) / cls.norm_scale
        return spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


class KernelGameCore(GameCore):
    """A :class:`GameCore` whose dynamics are the game's numba kernels over its state arrays.

    A game lists its arrays in :meth:`_arrays`, in the order every kernel takes them, and
    names its kernels as static methods: ``reset_kernel(mask, *arrays, rng)``,
    ``step_kernel(actions, *arrays, rng, reward, terminated)`` (writes the last two) and
    ``vector_kernel(actions, *arrays, rng, elapsed, cap, shift, scale, normalize)``, the
    fused :meth:`GameCore.vector_step` in one call.
    """

    reset_kernel: ClassVar[Callable[..., None]]
    step_kernel: ClassVar[Callable[..., None]]
    vector_kernel: ClassVar[
        Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    ]

    def __init__(self, num_games: int) -> None:
        super().__init__(num_games)
        self._reward = np.zeros(num_games)
        self._term = np.zeros(num_games, dtype=np.bool_)

    @abstractmethod
    def _arrays(self) -> tuple[np.ndarray, ...]:
        """The game-state arrays, in the order the kernels take them."""

    def reset_slots(self, mask: np.ndarray) -> None:
        """Start a new game in every slot where ``mask`` is True (the game's reset kernel)."""
        self.reset_kernel(mask, *self._arrays(), self.rng)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One frame for every slot (the game's step kernel); (reward, terminated) arrays
        that the next step overwrites."""
        self.step_kernel(actions, *self._arrays(), self.rng, self._reward, self._term)
        return self._reward, self._term

    def vector_step(
        self, actions: np.ndarray, elapsed: np.ndarray, cap: int, normalize: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One fused numba call (see :meth:`GameCore.vector_step`)."""
        return self.vector_kernel(
            actions,
            *self._arrays(),
            self.rng,
            elapsed,
            cap,
            self.norm_shift,
            self.norm_scale,
            normalize,
        )


def fill_rect(img: np.ndarray, x: float, y: float, w: float, h: float, color: tuple) -> None:
    """Draw an axis-aligned filled rectangle (top-left x, y) clipped to the image."""
    height, width = img.shape[:2]
    x0, y0 = max(int(x), 0), max(int(y), 0)
    x1, y1 = min(int(x + w), width), min(int(y + h), height)
    if x1 > x0 and y1 > y0:
        img[y0:y1, x0:x1] = color


class GameEnv(gym.Env):
    """Single-game Gymnasium env over a :class:`GameCore` with one slot.

    Args:
        normalize: return normalised features instead of the raw PLE state.
        render_mode: None or ``"rgb_array"``.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 30}  # gym's type
    core_cls: ClassVar[type[GameCore]]

    def __init__(self, normalize: bool = False, render_mode: str | None = None) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.normalize = check_bool("normalize", normalize)
        self.core = self.core_cls(1)
        self.observation_space = self.core_cls.observation_space(self.normalize)
        self.action_space = spaces.Discrete(self.core_cls.n_actions)
        self._seeded = False
        self._over = False  # the game ended: PLE's act then scores 0 and moves nothing
        self._action = np.zeros(1, dtype=np.int64)

    @property
    def action_names(self) -> tuple[str, ...]:
        """What each action does, in action order (PLE's action set)."""
        return self.core_cls.action_names

    @property
    def observation_names(self) -> tuple[str, ...]:
        """The observation's features, in order (PLE's ``getGameState`` keys)."""
        return self.core_cls.observation_names

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game; a seed re-seeds the game's own stream, else it continues."""
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            self.core.rng[0] = state_from_generator(self.np_random)
            self._seeded = True
        self.core.reset_slots(np.ones(1, dtype=np.bool_))
        self._over = False
        return self.core.observe(self.normalize)[0], {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One frame (dt = 1000/30 ms); reward = change of the PLE score.

        Once the game is over it stays over until ``reset()``: as PLE's ``act``, a step then
        scores 0, moves nothing and reports ``terminated`` again.

        Raises:
            gymnasium.error.ResetNeeded: before the first ``reset()`` (no game set up yet).
            ValueError: ``action`` is not an integer in ``[0, n_actions)``.
        """
        if not self._seeded:  # no game set up: zero random state, Catcher's fruit at (0, 0)
            raise gym.error.ResetNeeded("Cannot call step() before calling reset()")
        self._action[0] = check_action(action, self.core_cls.n_actions)
        if self._over:
            return self.core.observe(self.normalize)[0], 0.0, True, False, {}
        reward, terminated = self.core.step(self._action)
        self._over = bool(terminated[0])
        obs = self.core.observe(self.normalize)[0]
        return obs, float(reward[0]), self._over, False, {}

    def render(self) -> np.ndarray | None:
        """RGB frame of the current state (``render_mode="rgb_array"``); None, with a
        warning, without a render mode.

        Raises:
            gymnasium.error.ResetNeeded: before the first ``reset()`` (no game to draw), as
                ``make``'s order check does.
        """
        if not self._seeded:
            raise gym.error.ResetNeeded("Cannot call render() before calling reset()")
        if self.render_mode == "rgb_array":
            return self.core.render_slot(0)
        warn_no_render_mode(self)
        return None


class GameVectorEnv(VectorEnv):
    """B games stepped together by one kernel call, same-step autoreset, per-slot time limit.

    When slot i terminates or reaches ``max_episode_steps`` the returned ``obs[i]`` is already
    the first observation of its next game; the last observation is in
    ``info["final_obs"][i]`` (mask ``info["_final_obs"]``), as Gymnasium's
    ``SyncVectorEnv(autoreset_mode=SAME_STEP)`` does.

    Args:
        seeds: one seed per slot, used at the first reset without an explicit seed; the
            first also seeds the action spaces (as ``make(seed=...)`` seeds its own).
        max_episode_steps: time limit per game (truncation), None for none; otherwise a
            positive integer (ValueError for zero or negative).
        normalize: normalised features instead of the raw PLE state.
    """

    metadata: dict[str, Any] = {  # an instance variable in gymnasium's VectorEnv
        "render_modes": ["rgb_array"],
        "render_fps": 30,  # PLE's fps, as GameEnv's (vector HumanRendering needs it)
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }
    core_cls: ClassVar[type[GameCore]]

    def __init__(
        self,
        seeds: list[int] | None = None,
        num_envs: int | None = None,
        max_episode_steps: int | None = None,
        normalize: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if seeds is None and num_envs is None:
            raise ValueError("give seeds or num_envs")
        self.num_envs = len(seeds) if seeds is not None else int(num_envs)  # type: ignore[arg-type]
        if self.num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {self.num_envs}")
        self._init_seeds: list[int | None] | None = (
            None
            if seeds is None
            else [None if x is None else check_seed(x, f"seeds[{i}]") for i, x in enumerate(seeds)]
        )
        self.max_episode_steps = check_cap(max_episode_steps)
        self.normalize = check_bool("normalize", normalize)
        check_render_mode(render_mode, vector=True)
        self.render_mode = render_mode
        self.core = self.core_cls(self.num_envs)
        self.single_observation_space = self.core_cls.observation_space(self.normalize)
        # Seeded with the first slot's seed as a SyncVectorEnv's is (its sub-env 0's action
        # space, seeded by make(seed=seeds[0])); batch_space copies that generator.
        first = self._init_seeds[0] if self._init_seeds else None
        self.single_action_space = spaces.Discrete(self.core_cls.n_actions, seed=first)
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._all = np.ones(self.num_envs, dtype=np.bool_)
        self._seeded = False
        self._slot_seeds: list[int | None] = [None] * self.num_envs

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:  # type: ignore[override]
        """The seed each slot's game stream was last seeded with (None before the first
        reset), as Gymnasium's ``SyncVectorEnv`` gives its sub-envs' ``np_random_seed``;
        a slot seeded from None has the seed Gymnasium drew for it."""
        return tuple(self._slot_seeds)

    def _seed_slot(self, i: int, seed: int | None) -> None:
        """Seed slot ``i``'s game stream as a single env's ``reset(seed=seed)`` does."""
        rng, used = seeding.np_random(seed)
        self.core.rng[i] = state_from_generator(rng)
        self._slot_seeds[i] = int(used)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every slot, or those of ``options["reset_mask"]``. ``seed``: int (slot i gets
        seed + i), list (or 1-D integer array), or None.

        With None, the first reset uses the seeds given at construction (so does a None in
        the list, for its slot); later ones continue each slot's own stream. With a
        ``reset_mask`` (bool[num_envs], as Gymnasium's ``SyncVectorEnv``) only the masked
        slots restart (and take their seeds); the others keep their game and elapsed steps,
        and their rows of the observation are unchanged.

        Raises:
            ValueError: a malformed seed or ``reset_mask``, or a mask at the first reset.
        """
        mask = self._reset_mask(options)
        if seed is None and not self._seeded and self._init_seeds is not None:
            seed = self._init_seeds
        seed = check_vector_seed(seed, self.num_envs)
        if seed is not None:
            if not self._seeded and self._init_seeds is not None:
                # A None slot at the first reset takes its construction seed, as a sub-env of
                # make_vector's SyncVectorEnv does (it was OS entropy here).
                init = self._init_seeds
                seed = [s0 if s is None else s for s, s0 in zip(seed, init, strict=True)]
            for i, s in enumerate(seed):
                if mask[i] and (s is not None or not self._seeded):
                    self._seed_slot(i, s)
            self._np_random, _ = seeding.np_random(seed[0])
        elif not self._seeded:
            for i in range(self.num_envs):
                self._seed_slot(i, None)
        self._seeded = True
        self._elapsed[mask] = 0
        self.core.reset_slots(mask)
        return self.core.observe(self.normalize), {}

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray:
        """The slots a reset restarts: ``options["reset_mask"]`` (checked) or all."""
        if not options or "reset_mask" not in options:
            return self._all
        mask = options["reset_mask"]
        if (
            not isinstance(mask, np.ndarray)
            or mask.dtype != np.bool_
            or mask.shape != (self.num_envs,)
            or not mask.any()
        ):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with "
                f"at least one True, got {mask!r}"
            )
        if not self._seeded and not mask.all():  # the other slots hold no game yet
            raise ValueError("options['reset_mask']: the first reset must reset every slot")
        return mask.copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step all slots; finished slots are reset in the same call.

        Raises:
            ValueError: ``actions`` is not ``num_envs`` integers in ``[0, n_actions)``
                (checked before any slot moves).
            gymnasium.error.ResetNeeded: before the first ``reset()``.
        """
        if not self._seeded:  # the games are not set up before the first reset
            raise gym.error.ResetNeeded("Cannot call step() before calling reset()")
        actions = check_actions(actions, self.core_cls.n_actions, self.num_envs)
        cap = self.max_episode_steps or 0  # 0: no time limit in the kernels
        obs, reward, terminated, truncated, idx, final_rows = self.core.vector_step(
            actions, self._elapsed, cap, self.normalize
        )
        info: dict[str, Any] = {}
        if idx.size:
            done = terminated | truncated
            final = np.empty(self.num_envs, dtype=object)
            for k, i in enumerate(idx):
                final[i] = final_rows[k]
            info = {
                "final_obs": final,
                "_final_obs": done,
                "final_info": {},
                "_final_info": done.copy(),
            }
        return obs, reward, terminated, truncated, info

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per slot (``render_mode="rgb_array"``); None, with a warning,
        without a render mode.

        Raises:
            gymnasium.error.ResetNeeded: before the first ``reset()`` (no games to draw), as
                a ``SyncVectorEnv`` of ``make``'s envs does.
        """
        if not self._seeded:
            raise gym.error.ResetNeeded("Cannot call render() before calling reset()")
        if self.render_mode == "rgb_array":
            return tuple(self.core.render_slot(i) for i in range(self.num_envs))
        warn_no_render_mode(self)
        return None
