"""S uniform replay buffers in preallocated tensors (one per seed, filled in lock-step).

All seeds of a batched run take one environment step per training step, so every
buffer has the same write position and size: one shared ring pointer, and one
advanced-indexing write per step for all S seeds. Sampling is uniform with replacement
(as in the authors' code) from each seed's own ``np.random.Generator``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from maxminq.errors import UsageError

__all__ = ["ReplayBuffers"]


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
        given (one comparison per array: cheap next to a training step)."""
        uint8 = self.obs.dtype == np.uint8
        for given, stored in ((obs, self.obs[:, p]), (next_obs, self.next_obs[:, p])):
            # A float32 buffer holds float32 observations exactly: only NaN / inf to refuse.
            if np.array_equal(stored, given) if uint8 else np.isfinite(stored).all():
                continue
            given = np.asarray(given).reshape(self.seeds, -1)
            stored = stored.reshape(self.seeds, -1)
            bad = (stored != given) | ~np.isfinite(given)
            s, i = (int(k[0]) for k in np.nonzero(bad))
            value = given[s, i]
            if uint8 and np.isfinite(value):
                raise UsageError(
                    f"--env: an observation (seed position {s} in --seeds) holds {value:g}, "
                    "which the uint8 replay buffers of a uint8 / bool image observation space "
                    "cannot hold; return whole numbers in [0, 255] or declare the space's "
                    "actual dtype (e.g. float32)"
                )
            # Observations reach here as float32: inf may be a finite value beyond its range.
            top = float(np.finfo(np.float32).max)
            as32 = "" if np.isnan(value) else f" as float32 (a value beyond +-{top:.2g} or inf)"
            raise UsageError(
                f"--env: an observation (seed position {s} in --seeds) holds {value}{as32}; "
                "observations must be finite numbers"
            )
        reward = self.reward[:, p]
        if not np.isfinite(reward).all():
            s = int(np.flatnonzero(~np.isfinite(reward))[0])
            raise UsageError(
                f"--env: a reward (seed position {s} in --seeds) is {reward[s]} as float32; "
                "rewards must be finite numbers"
            )

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

    def state_dict(self) -> dict[str, Any]:
        """The filled part of the buffers plus the ring pointer."""
        n = self.size
        return {
            "pos": self.pos,
            "size": n,
            **{k: torch.from_numpy(getattr(self, k)[:, :n].copy()) for k in self._fields},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` wrote."""
        n = int(state["size"])
        for k in self._fields:
            getattr(self, k)[:, :n] = state[k].numpy()
        self.pos, self.size = int(state["pos"]), n

    _fields = ("obs", "next_obs", "action", "reward", "terminated")
