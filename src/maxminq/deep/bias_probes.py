"""Estimation-bias probes of deep training: which probes count (``probe_counts``; in an
episode the time limit cut, only those ``bias_horizon`` steps or more before the cut) and
the discounted returns they are scored against. See ``deep.train``'s docstring."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from maxminq.deep.config import BIAS_TAIL


def probe_counts(terminated: Any, steps_to_end: Any, gamma: float) -> Any:
    """Whether a bias probe counts: its episode terminated, or the time limit cut it
    ``steps_to_end`` steps after the probe and the missing tail weighs
    ``gamma^steps_to_end <= BIAS_TAIL``. Element-wise on arrays and Series too."""
    return terminated | (gamma**steps_to_end <= BIAS_TAIL)


def bias_horizon(gamma: float) -> int | None:
    """The fewest steps k from a probe to a time-limit cut for which the cut episode's probe
    still counts (``gamma^k <= BIAS_TAIL``); None if none does (gamma = 1)."""
    if gamma >= 1.0:
        return None
    if gamma <= 0.0:
        return 1
    k = max(1, math.ceil(math.log(BIAS_TAIL) / math.log(gamma)) - 1)
    while not probe_counts(False, k, gamma):  # the trainer's own test (logs may round)
        k += 1
    return k


def _discounted_returns(rewards: list[float], gamma: float) -> np.ndarray:
    """``G_t = sum_k gamma^k r_{t+k}`` for every t of one episode."""
    out = np.empty(len(rewards))
    g = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out
