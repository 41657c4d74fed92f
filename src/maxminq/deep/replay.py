"""S uniform replay buffers in preallocated tensors (one per seed, filled in lock-step).

All seeds of a batched run take one environment step per training step, so every
buffer has the same write position and size: one shared ring pointer, and one
advanced-indexing write per step for all S seeds. Sampling is uniform with replacement
(as in the authors' code) from each seed's own ``np.random.Generator``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from maxminq.errors import UsageError

__all__ = ["ReplayBuffers", "check_finite", "quiet_float32_overflow"]

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_finite(place: str | Callable[[int], str], reward: Any, *obs: np.ndarray) -> None:
    """UsageError naming ``--env`` when an observation of ``obs`` or ``reward`` is NaN or
    infinite as float32 (the networks' precision: a finite value beyond +-3.4e38 is inf
    there), naming the first one met (the observations in order, then the reward). The one
    check of training (``ReplayBuffers.add``: a NaN would turn the networks NaN and be
    recorded as the seed's divergence) and of test and evaluation episodes
    (``deep.env_checks.episode_observation``: a NaN observation was played as action 0).

    One step of one episode: ``place`` a str saying where the values came from (the
    message reads "an observation {place} is nan as float32"), ``reward`` one number (None
    reads as NaN), each of ``obs`` one observation as float32. Every seed's row of one
    training step: ``place`` a function of the seed position of the first row that is not
    finite, ``reward`` float32 (S,), each of ``obs`` float32 (S, ...).

    Fast when everything is finite (every step of training and of each test episode comes
    here): one sum of squares per array, NaN or inf exactly when a value is (or when a
    square exceeds float32: then the exact test below decides)."""
    if isinstance(place, str):
        try:
            finite = abs(float(reward)) <= _FLOAT32_MAX  # NaN: False
        except (TypeError, ValueError):  # e.g. None: nan as float32 below
            finite = False
    else:
        finite = math.isfinite(np.vdot(reward, reward))
    for o in obs:
        finite = finite and math.isfinite(np.vdot(o, o))
    if not finite:
        _refuse_non_finite(place, reward, obs)


def quiet_float32_overflow() -> None:
    """Hide NumPy's ``RuntimeWarning: overflow encountered in cast`` for the rest of the
    enclosing ``warnings.catch_warnings()`` block (``maxminq train`` and ``maxminq evaluate``
    run in one: ``cli.one_line_warnings``). An environment's value beyond float32 becomes
    inf where its observations and rewards are cast, which :func:`check_finite` then refuses
    with an error naming float32's range: Python's two lines of file and source before that
    one line said nothing more. (Not done per step: ``np.errstate`` costs 2 us each time.)"""
    warnings.filterwarnings("ignore", "overflow encountered in cast", RuntimeWarning)


def _refuse_non_finite(
    place: str | Callable[[int], str], reward: Any, obs: tuple[np.ndarray, ...]
) -> None:
    """:func:`check_finite`'s exact test and error, once its quick one failed."""
    rows = not isinstance(place, str)
    with np.errstate(over="ignore"):  # beyond float32: inf, refused as such
        # (a reward just above float32's maximum rounds down to it: finite)
        r32 = np.asarray(reward if rows else np.float32(reward), dtype=np.float32)
    arrays = [("observation", np.asarray(o, dtype=np.float32)) for o in obs]
    for what, a in [*arrays, ("reward", r32)]:
        flat = a.reshape(a.shape[0] if rows else 1, -1)
        bad = ~np.isfinite(flat)
        if not bad.any():
            continue
        s, i = (int(k[0]) for k in np.nonzero(bad))
        value = flat[s, i]
        where = place if isinstance(place, str) else place(s)
        top = (
            "" if np.isnan(value) else f" (float32 holds +-{_FLOAT32_MAX:.2g} at most: beyond, inf)"
        )
        raise UsageError(
            f"--env: {'an' if what == 'observation' else 'a'} {what} {where} is {value} as "
            f"float32; {what}s must be finite numbers{top}"
        )


def _seed_position(s: int) -> str:
    """Where a row of a training step comes from, in :func:`check_finite`'s message."""
    return f"(seed position {s} in --seeds)"


class ReplayBuffers:
    """Transitions ``(obs, action, reward, next_obs, terminated)`` for S seeds.

    ``terminated`` is the flag that stops bootstrapping: true terminal states only
    (time-limit truncation still bootstraps), unless the caller chooses otherwise.
    Observations are stored as uint8 when the environment's are boolean/uint8 images
    (MinAtar), float32 otherwise. ``add`` refuses what it cannot store faithfully: a value a
    uint8 buffer would wrap or truncate, a NaN or infinite observation or reward (an
    environment's fault, which would otherwise turn the networks NaN and be recorded as
    the seed's divergence).
    """

    def __init__(
        self, seeds: int, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype
    ) -> None:
        self.seeds, self.capacity = seeds, capacity
        # NumPy storage: per-step writes and small fancy-index gathers cost far less
        # there than as torch ops; batches are handed to torch without copying.
        self.obs = np.zeros((seeds, capacity, *obs_shape), dtype=obs_dtype)
        self.next_obs = np.zeros((seeds, capacity, *obs_shape), dtype=obs_dtype)
        self.action = np.zeros((seeds, capacity), dtype=self.SCALARS["action"])
        self.reward = np.zeros((seeds, capacity), dtype=self.SCALARS["reward"])
        self.terminated = np.zeros((seeds, capacity), dtype=self.SCALARS["terminated"])
        self.pos = 0
        self.size = 0

    #: The per-transition scalars and how they are stored.
    SCALARS: dict[str, type[np.generic]] = {
        "action": np.int64,
        "reward": np.float32,
        "terminated": np.float32,
    }

    @classmethod
    def nbytes(
        cls, seeds: int, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype
    ) -> int:
        """Bytes the buffers of these arguments take once filled (as ``__init__`` lays them
        out), for a memory check before any is made."""
        obs = 2 * int(np.prod(obs_shape)) * np.dtype(obs_dtype).itemsize
        row = obs + sum(np.dtype(t).itemsize for t in cls.SCALARS.values())
        return seeds * capacity * row

    def add(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        next_obs: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """Store one transition per seed (arrays with leading dimension S).

        Raises:
            UsageError: naming ``--env``, if an observation or reward cannot be stored as
                given (see the class docstring); the buffers' size and position are then
                unchanged, but row ``pos`` holds the refused transition (in a full buffer,
                in place of a sampled one): the run must stop, as training does.
        """
        p = self.pos
        with np.errstate(invalid="ignore"):  # NaN / out-of-range into uint8: refused below
            self.obs[:, p] = obs
            self.next_obs[:, p] = next_obs
        self.action[:, p] = action
        self.reward[:, p] = reward
        self.terminated[:, p] = terminated
        self._check_stored(obs, next_obs, p)
        self.pos = (p + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def _check_stored(self, obs: np.ndarray, next_obs: np.ndarray, p: int) -> None:
        """UsageError unless row ``p`` holds ``obs``, ``next_obs`` and a finite reward as
        given (:func:`check_finite`; one comparison per array: cheap next to a training step)."""
        reward = self.reward[:, p]
        if self.obs.dtype != np.uint8:  # float32 holds float32 observations exactly
            check_finite(_seed_position, reward, self.obs[:, p], self.next_obs[:, p])
            return
        for given, stored in ((obs, self.obs[:, p]), (next_obs, self.next_obs[:, p])):
            if np.array_equal(stored, given):
                continue
            with np.errstate(over="ignore", invalid="ignore"):
                as32 = np.asarray(given, dtype=np.float32)
            check_finite(_seed_position, reward, as32)  # a NaN / inf: named as such
            # The value as given (not its float32 rounding: 255.0000001 rounds to 255).
            given, stored = (
                np.asarray(given).reshape(self.seeds, -1),
                stored.reshape(self.seeds, -1),
            )
            s, i = (int(k[0]) for k in np.nonzero(stored != given))
            raise UsageError(
                f"--env: an observation (seed position {s} in --seeds) holds "
                f"{given[s, i]!s}, "
                "which the uint8 replay buffers of a uint8 / bool image observation space "
                "cannot hold; return whole numbers in [0, 255] or declare the space's "
                "actual dtype (e.g. float32)"
            )
        check_finite(_seed_position, reward)

    def gather(self, seeds: np.ndarray, idx: np.ndarray) -> dict[str, torch.Tensor]:
        """The transitions ``idx[k]`` of seed ``seeds[k]``: tensors ``(k, batch, ...)``."""
        # One flat row index into (S * capacity, ...) views: np.take on a single index
        # array is several times cheaper than fancy indexing with two.
        rows = np.asarray(seeds)[:, None] * self.capacity + idx

        def take(a: np.ndarray) -> torch.Tensor:
            flat = a.reshape(self.seeds * self.capacity, *a.shape[2:])
            return torch.from_numpy(np.take(flat, rows, axis=0).astype(np.float32, copy=False))

        return {
            "obs": take(self.obs),
            "action": torch.from_numpy(np.take(self.action.reshape(-1), rows)),
            "reward": take(self.reward),
            "next_obs": take(self.next_obs),
            "terminated": take(self.terminated),
        }

    def state_dict(self, copy: bool = True) -> dict[str, Any]:
        """The filled part of the buffers plus the ring pointer. ``copy=False`` (a
        checkpoint written at once, before the next step): full buffers are given as views
        of the live ones, not copied, so writing a checkpoint does not double the memory the
        buffers take (the copy of a 5-seed Seaquest run's is 1 GB); the state holds the same
        values and is saved as the same bytes either way."""
        n = self.size

        def part(a: np.ndarray) -> torch.Tensor:
            if not copy and n == self.capacity:  # the whole array: contiguous as it is
                return torch.from_numpy(a)
            return torch.from_numpy(a[:, :n].copy())

        return {"pos": self.pos, "size": n, **{k: part(getattr(self, k)) for k in self._fields}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` wrote."""
        n = int(state["size"])
        for k in self._fields:
            getattr(self, k)[:, :n] = state[k].numpy()
        self.pos, self.size = int(state["pos"]), n

    _fields = ("obs", "next_obs", "action", "reward", "terminated")
