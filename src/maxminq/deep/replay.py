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

__all__ = ["ReplayBuffers"]


class ReplayBuffers:
    """Transitions ``(obs, action, reward, next_obs, terminated)`` for S seeds.

    ``terminated`` is the flag that stops bootstrapping: true terminal states only
    (time-limit truncation still bootstraps), unless the caller chooses otherwise.
    Observations are stored as uint8 when the environment's are boolean/uint8 images
    (MinAtar), float32 otherwise.
    """

    def __init__(
        self, seeds: int, capacity: int, obs_shape: tuple[int, ...], obs_dtype: np.dtype
    ) -> None:
        self.seeds, self.capacity = seeds, capacity
        # NumPy storage: per-step writes and small fancy-index gathers cost far less
        # there than as torch ops; batches are handed to torch without copying.
        self.obs = np.zeros((seeds, capacity, *obs_shape), dtype=obs_dtype)
        self.next_obs = np.zeros((seeds, capacity, *obs_shape), dtype=obs_dtype)
        self.action = np.zeros((seeds, capacity), dtype=np.int64)
        self.reward = np.zeros((seeds, capacity), dtype=np.float32)
        self.terminated = np.zeros((seeds, capacity), dtype=np.float32)
        self.pos = 0
        self.size = 0

    def add(
        self,
        obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        next_obs: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """Store one transition per seed (arrays with leading dimension S)."""
        p = self.pos
        self.obs[:, p] = obs
        self.next_obs[:, p] = next_obs
        self.action[:, p] = action
        self.reward[:, p] = reward
        self.terminated[:, p] = terminated
        self.pos = (p + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

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
