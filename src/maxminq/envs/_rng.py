"""A per-game SplitMix64 stream usable inside numba kernels.

Each game instance (single or one slot of a batch) owns one 64-bit state. The state is
derived from the Gymnasium ``np_random`` generator at a seeded reset, so a game is fully
determined by its seed, and a slot of a batch behaves exactly as a single game with the same
seed (its stream is touched by nobody else). SplitMix64 (Steele, Lea and Flood 2014) passes
BigCrush and costs a few integer operations, which keeps the batched kernels fast.
"""

from __future__ import annotations

import numpy as np

from maxminq._jit import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@njit
def next_u64(state: np.ndarray, i: int) -> np.uint64:
    """Advance stream ``i`` of ``state`` (uint64 array) and return 64 random bits."""
    state[i] += _GOLDEN
    z = state[i]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def uniform(state: np.ndarray, i: int, low: float, high: float) -> float:
    """Uniform float in [low, high) from stream ``i`` (53 random bits)."""
    u = np.float64(next_u64(state, i) >> _S11) * _INV53
    return low + (high - low) * u


@njit
def randint(state: np.ndarray, i: int, low: int, high: int) -> int:
    """Uniform integer in [low, high) from stream ``i``."""
    u = np.float64(next_u64(state, i) >> _S11) * _INV53
    return low + int(u * (high - low))


def state_from_generator(rng: np.random.Generator) -> np.uint64:
    """A fresh SplitMix64 state drawn from a NumPy generator (e.g. Gymnasium's np_random)."""
    return np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
