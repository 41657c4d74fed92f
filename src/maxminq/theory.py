"""Theorem 1 and Corollary 1 of Lan et al. (2020), in closed form and by Monte Carlo.

Setting (paper section 4): every estimate ``Q^i(s', a)`` equals the true value plus an
independent error ``e^i_{s'a} ~ U(-tau, tau)``, all M actions share the same true value,
and Maxmin Q-learning bootstraps with ``max_a min_i Q^i(s', a)``. Then

* Theorem 1 (i):  ``E[Z_MN] = gamma * tau * (1 - 2 t_MN)`` with
  ``t_MN = int_0^1 (1 - y^N)^M dy = Gamma(M+1) Gamma(1+1/N) / Gamma(M+1+1/N)``;
* Theorem 1 (ii): ``Var[Q^min] = 4 N tau^2 / ((N+1)^2 (N+2))``;
* the variance of the target's error, which the paper does not give:
  ``Var[Z_MN] = 4 gamma^2 tau^2 (s_MN - t_MN^2)``, ``s_MN = int_0^1 2y (1 - y^N)^M dy``;
* Corollary 1:    ``Var[Q^min] / Var[Q] = 12 N^2 / ((N+1)^2 (N+2))`` when the samples are
  split evenly among the N estimators (so ``tau`` grows like ``sqrt(N)``).

Every function broadcasts over array arguments (NumPy rules) and returns a Python ``float``
(or ``int``) when all arguments are scalars, an ``np.ndarray`` otherwise. Invalid arguments
raise ``ValueError`` naming the argument.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gamma as gamma_fn
from scipy.special import poch

from maxminq.errors import INT64_MAX
from maxminq.operators import (
    OPERATORS,
    bootstrap,
    load_operator,
    maxmin,
    operator_params,
    own_operator,
)

__all__ = [
    "NOISES",
    "MonteCarloEstimate",
    "OperatorBias",
    "choose_n",
    "expected_bias",
    "min_variance",
    "monte_carlo_bias",
    "operator_bias",
    "operator_expected_bias",
    "t_mn",
    "target_variance",
    "variance_ratio",
    "zero_bias_n",
]

NOISES = ("uniform", "normal")  # the error laws the Monte Carlo draws (uniform: Theorem 1's)

# Elements per Monte-Carlo chunk: bounds memory at ~8 MB of float64 per array.
_CHUNK_ELEMENTS = 1 << 20


# --- argument checks --------------------------------------------------------------------------


def _integers(value: Any, name: str, minimum: int = 1) -> np.ndarray:
    """``value`` as an int64 array; integral values >= ``minimum`` only."""
    arr = np.asarray(value)
    if (
        arr.dtype == object
        and arr.size
        and all(isinstance(v, int) and not isinstance(v, bool) for v in arr.flat)
    ):  # Python ints past 64 bits (NumPy keeps them as objects): whole, but out of range
        low = any(v < minimum for v in arr.flat)
        raise ValueError(f"{name} must be {f'>= {minimum}' if low else '< 2**63'}, got {value!r}")
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must be an integer (or array of integers), got {value!r}")
    if np.issubdtype(arr.dtype, np.floating) and (
        not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))
    ):
        raise ValueError(f"{name} must be an integer (or array of integers), got {value!r}")
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    # Past int64 the cast below wraps round (2**63 became -2**63: a negative t_MN); floats
    # compare as floats, so 2.0**63 (= 2**63) is caught too.
    if np.any(arr >= 2.0**63 if np.issubdtype(arr.dtype, np.floating) else arr > INT64_MAX):
        raise ValueError(f"{name} must be < 2**63, got {value!r}")
    return arr.astype(np.int64)


def _reals(value: Any, name: str, low: float, high: float, low_open: bool = False) -> np.ndarray:
    """``value`` as a float64 array within ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a real number (or array), got {value!r}")
    arr = arr.astype(np.float64)
    below = arr <= low if low_open else arr < low
    if not np.all(np.isfinite(arr)) or np.any(below) or np.any(arr > high):
        interval = f"{'(' if low_open else '['}{low}, {high}{']' if np.isfinite(high) else ')'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return arr


def _broadcast(**arrays: np.ndarray) -> None:
    """ValueError naming two of ``arrays`` (checked arguments, in signature order) whose shapes
    do not broadcast together (NumPy's own message named none). Pairs suffice: shapes that
    broadcast pairwise broadcast together."""
    shapes = [(name, np.shape(arr)) for name, arr in arrays.items()]
    for k, (name, shape) in enumerate(shapes):
        for other, other_shape in shapes[:k]:
            try:
                np.broadcast_shapes(other_shape, shape)
            except ValueError:
                raise ValueError(
                    f"{other}, {name} must broadcast together, got shapes {other_shape} and {shape}"
                ) from None


def _out(result: np.ndarray, *args: Any) -> Any:
    """A Python scalar when every argument was a scalar, else the array."""
    if all(np.ndim(a) == 0 for a in args):
        return result.item()
    return result


def _tau(tau: Any) -> np.ndarray:
    return _reals(tau, "tau", 0.0, np.inf, low_open=True)


def _sampled_tau(tau: Any) -> np.ndarray:
    """``tau`` for the Monte Carlo: also small enough that ``U(-tau, tau)`` can be drawn (NumPy
    raised OverflowError once ``2 tau`` passed the largest double)."""
    s = _tau(tau)
    if np.any(s > np.finfo(np.float64).max / 2):
        raise ValueError(
            f"tau must be at most {np.finfo(np.float64).max / 2:.4g} to be sampled (2 tau must be "
            f"a finite number), got {tau!r}"
        )
    return s


def _gamma(gamma: Any) -> np.ndarray:
    return _reals(gamma, "gamma", 0.0, 1.0)


# --- closed forms -----------------------------------------------------------------------------


def _t_mn(m: np.ndarray, n: np.ndarray) -> np.ndarray:
    inv_n = 1.0 / n
    # Gamma(M+1) / Gamma(M+1+1/N) as 1 / poch(M+1, 1/N): a difference of log-gammas loses
    # digits as M grows (0.5% off at M = 10^12).
    return gamma_fn(1.0 + inv_n) / poch(m + 1.0, inv_n)


def t_mn(M: Any, N: Any) -> Any:
    """The integral ``t_MN = int_0^1 (1 - y^N)^M dy`` of Theorem 1 (Lan et al. 2020, App. A).

    Closed form ``t_MN = Gamma(M+1) Gamma(1+1/N) / Gamma(M+1+1/N)``, evaluated as
    ``Gamma(1+1/N) / poch(M+1, 1/N)`` (scipy): within about 2e-12 (relative) of 50-digit
    values for M up to 10^15 (log-gamma differences were 0.5% off at M = 10^12). Special
    values: ``t_{M,1} = 1/(M+1)``; ``t_MN -> 1`` as ``N -> infinity``; increasing in N.

    Args:
        M: number of actions at the next state (integer >= 1, or array).
        N: number of action-value estimators (integer >= 1, or array).
    """
    m = _integers(M, "M")
    n = _integers(N, "N")
    _broadcast(M=m, N=n)
    return _out(_t_mn(m, n), M, N)


def _theorem_args(
    M: Any, N: Any, tau: Any, gamma: Any, split: Any = False
) -> tuple[Any, Any, Any, Any]:
    """Theorem 1's M, N, tau and gamma, each checked (an error names the bad one); with
    ``split`` (Corollary 1's even split of a sample budget), tau scaled by sqrt(N)."""
    m, n, g, s = _integers(M, "M"), _integers(N, "N"), _gamma(gamma), _tau(tau)
    _broadcast(M=m, N=n, tau=s, gamma=g)
    return m, n, g, _split_tau(s, n, split)


def _split_tau(s: np.ndarray, n: np.ndarray, split: Any) -> np.ndarray:
    """``tau`` of each of N estimators: ``s`` itself, or with ``split`` (a budget of samples
    shared evenly, Corollary 1) ``s sqrt(N)``, ``s`` being one estimator's on every sample."""
    if not isinstance(split, bool | np.bool_):
        raise ValueError(f"split must be True or False, got {split!r}")
    if not split:
        return s
    with np.errstate(over="ignore"):  # past the largest double: inf, as tau^2 is there
        return s * np.sqrt(n)


def expected_bias(M: Any, N: Any, tau: Any = 1.0, gamma: Any = 1.0, *, split: bool = False) -> Any:
    """Expected estimation bias of Maxmin Q-learning, Theorem 1 (i) of Lan et al. (2020).

    ``E[Z_MN] = gamma * tau * (1 - 2 t_MN)``, where ``Z_MN`` is the error of the bootstrap
    ``gamma * max_a min_i Q^i(s', a)`` when each of the N estimates of the M actions carries
    independent ``U(-tau, tau)`` noise. ``E[Z_{M,1}] = gamma tau (M-1)/(M+1)`` (Q-learning's
    overestimation); ``E[Z_MN] -> -gamma tau`` as ``N -> infinity``.

    Args:
        M: number of actions (integer >= 1). N: number of estimators (integer >= 1).
        tau: half-width of the uniform error (> 0). gamma: discount factor in [0, 1].
        split: Corollary 1's setting, a fixed budget of samples shared evenly by the N
            estimators: each one's half-width is ``tau sqrt(N)`` (``tau``: that of one
            estimator on every sample), as in ``choose_n(split=True)``.
    """
    m, n, g, s = _theorem_args(M, N, tau, gamma, split)
    return _out(g * s * (1.0 - 2.0 * _t_mn(m, n)), M, N, tau, gamma)


def target_variance(
    M: Any, N: Any, tau: Any = 1.0, gamma: Any = 1.0, *, split: bool = False
) -> Any:
    """``Var[Z_MN]``: how much Maxmin's target error spreads around Theorem 1 (i)'s mean.

    Theorem 1 gives the mean of ``Z_MN = gamma max_a min_i e^i_a`` and the variance of one
    action's ``Q^min``, not the variance of the target itself. With
    ``W = (1 - max_a min_i e^i_a / tau) / 2``, ``P(W > w) = (1 - w^N)^M`` on [0, 1], so
    ``E[W] = t_MN`` and ``E[W^2] = int_0^1 2w (1 - w^N)^M dw = s_MN
    = Gamma(M+1) Gamma(1+2/N) / Gamma(M+1+2/N)`` (substitute ``u = w^N``: a Beta integral, as
    in the paper's proof), hence ``Var[Z_MN] = 4 gamma^2 tau^2 (s_MN - t_MN^2)``. Special
    values: ``4 gamma^2 tau^2 M / ((M+1)^2 (M+2))`` for N = 1 (the max of M errors: Q-learning)
    and ``gamma^2`` times Theorem 1 (ii) for M = 1. ``s_MN - t_MN^2`` is summed as a series
    for N >= 4, as the plain difference cancels as N grows: relative error below 1e-11 up to
    N = 10^8 and M = 10^12 (the plain difference lost 1.6e-6 at M = 100, N = 10^4).

    Args:
        M: number of actions (integer >= 1). N: number of estimators (integer >= 1).
        tau: half-width of the uniform error (> 0). gamma: discount factor in [0, 1].
        split: a sample budget shared evenly by the N estimators (half-width ``tau sqrt(N)``),
            as in :func:`expected_bias`: ``target_variance(M, N, split=True) /
            target_variance(M, 1)`` compares Maxmin's target with Q-learning's on one budget.
    """
    m, n, g, s = _theorem_args(M, N, tau, gamma, split)
    with np.errstate(over="ignore"):  # tau^2 past the largest double: inf is the answer
        return _out(4.0 * (g * s) ** 2 * _w_variance(m, n), M, N, tau, gamma)


# Where ``_w_variance`` sums a series instead of subtracting (1/N in (low, high], so N >= 4)
# and how many terms: the k-th is about (2/N)^k / k, below 1e-17 by the count given.
_SERIES_GROUPS = ((0.05, 0.25, 48), (0.005, 0.05, 18), (0.0, 0.005, 9))


def _w_variance(m: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``s_MN - t_MN^2`` (see :func:`target_variance`), without the cancellation of the plain
    difference, which lost 1.6e-6 (relative) at M = 100, N = 10^4.

    With x = 1/N, ``s_MN / t_MN^2 = exp(D)``, ``D = d(1) - d(M+1)``,
    ``d(a) = lgamma(a+2x) - 2 lgamma(a+x) + lgamma(a) = sum_{k>=2} psi^(k-1)(a) (2^k-2) x^k / k!``
    (Taylor), and ``psi^(k-1)(1) - psi^(k-1)(M+1) = (-1)^k (k-1)! H_M^(k)`` with
    ``H_M^(k) = sum_{i<=M} i^-k = zeta(k) - zeta(k, M+1)``, so
    ``D = sum_{k>=2} (-1)^k (2^k - 2) / k x^k H_M^(k)`` and ``s_MN - t_MN^2 = t_MN^2 expm1(D)``,
    with no two nearly equal numbers subtracted. Used for N >= 4 (below, the difference is
    large and taken directly); H is evaluated once per distinct M."""
    from scipy.special import zeta

    mm, nn = np.broadcast_arrays(m.astype(np.float64), n.astype(np.float64))
    # M's distinct values, from M itself (not from the broadcast cells: no large sort)
    distinct, inverse = np.unique(m.astype(np.float64), return_inverse=True)
    index = np.broadcast_to(inverse.reshape(m.shape), mm.shape)
    x = 1.0 / nn
    t = _t_mn(mm, nn)
    out = np.array(gamma_fn(1.0 + 2.0 * x) / poch(mm + 1.0, 2.0 * x) - t**2, dtype=np.float64)
    # Cells by 1/N, each group with the terms its largest x needs ((2x)^k / k below 1e-17):
    # most cells of a large table have a large N and need few.
    for low, high, terms in _SERIES_GROUPS:
        small = (x > low) & (x <= high)
        if not small.any():
            continue
        xs, which = x[small], index[small]
        d = np.zeros_like(xs)
        for k in range(terms, 1, -1):  # Horner's scheme in x, smallest terms first
            harmonic = zeta(float(k), 1.0) - zeta(float(k), distinct + 1.0)  # H_M^(k)
            d = (d + (-1.0) ** k * (2.0**k - 2.0) / k * harmonic[which]) * xs
        out[small] = t[small] ** 2 * np.expm1(d * xs)  # the series starts at x^2
    return out


def min_variance(N: Any, tau: Any = 1.0, *, split: bool = False) -> Any:
    """Variance of ``Q^min = min_i Q^i(s, a)``, Theorem 1 (ii) of Lan et al. (2020).

    ``Var[Q^min] = 4 N tau^2 / ((N+1)^2 (N+2))``, the variance of the minimum of N i.i.d.
    ``U(-tau, tau)`` errors (Lemma 1 (iv)); ``tau^2 / 3`` for N = 1. ``split``: a sample
    budget shared evenly by the N estimators (half-width ``tau sqrt(N)``, Corollary 1), so
    ``min_variance(N, tau, split=True) / min_variance(1, tau)`` is ``variance_ratio(N)``.
    """
    n = _integers(N, "N").astype(np.float64)
    s = _tau(tau)
    _broadcast(N=n, tau=s)
    s = _split_tau(s, n, split)
    with np.errstate(over="ignore"):  # tau^2 past the largest double: inf is the answer
        return _out(4.0 * n * s**2 / ((n + 1.0) ** 2 * (n + 2.0)), N, tau)


def variance_ratio(N: Any) -> Any:
    """Corollary 1 of Lan et al. (2020): ``Var[Q^min] / Var[Q] = 12 N^2 / ((N+1)^2 (N+2))``.

    Compares Maxmin's ``Q^min`` (N estimators, each fitted on ``n_sa / N`` samples, so
    ``tau = sqrt(3 sigma^2 N / n_sa)``) with a single estimator using all ``n_sa`` samples.
    The ratio is 1 at N = 1, above 1 for N = 2..7 and below 1 for every N >= 8.
    """
    n = _integers(N, "N").astype(np.float64)
    return _out(12.0 * n**2 / ((n + 1.0) ** 2 * (n + 2.0)), N)


def choose_n(
    M: Any,
    *,
    tau: Any = 1.0,
    gamma: Any = 1.0,
    n_max: int = 1000,
    target: Any = 0.0,
    split: bool = False,
) -> Any:
    """The N in ``1..n_max`` whose expected bias ``E[Z_MN]`` (Theorem 1 (i)) is closest to
    ``target`` for M actions: by default the least biased N.

    ``E[Z_MN]`` falls with N from Q-learning's ``gamma tau (M-1)/(M+1)`` towards
    ``-gamma tau``; a ``target`` outside that range gives N = 1 or ``n_max``. Ties go to the
    smallest N (so ``gamma = 0``, where every N is unbiased, gives N = 1). Broadcasts over
    ``M``, ``tau``, ``gamma`` and ``target``. All but M are keywords: ``choose_n(100, 5)``
    took 5 as tau, which does not move the least biased N, and returned 7, not a cap of 5.

    ``split=True``: a fixed sample budget shared evenly by the N estimators, as in Corollary 1,
    so each estimator's half-width is ``tau sqrt(N)`` (``tau``: that of one estimator using
    every sample) and the bias ``gamma tau sqrt(N) (1 - 2 t_MN)``. The sign of the bias, and
    so its zero, do not change, but the least biased whole N can be one smaller (M = 7: 3
    instead of 4; M = 111: 7 instead of 8).
    """
    if not isinstance(split, bool | np.bool_):
        raise ValueError(f"split must be True or False, got {split!r}")
    m = _integers(M, "M")
    s = _tau(tau)
    g = _gamma(gamma)
    try:
        goal = np.asarray(target, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"target must be a finite real number (or array), got {target!r}"
        ) from None
    if not np.isfinite(goal).all():
        raise ValueError(f"target must be finite, got {target!r}")
    if np.ndim(n_max) != 0:
        raise ValueError(f"n_max must be a scalar integer, got {n_max!r}")
    n_cap = int(_integers(n_max, "n_max"))
    _broadcast(M=m, tau=s, gamma=g, target=goal)
    m_b, s_b, g_b, goal_b = np.broadcast_arrays(m, s, g, goal)
    flat_m = m_b.ravel()
    # Compared in units of gamma tau, |unit bias - target / (gamma tau)|: the same order, but
    # gamma * tau no longer underflows to 0 (1e-200 x 1e-200 made every bias 0: N = 1). A
    # target beyond every unit bias (|unit| <= sqrt(n_max)) is clipped: the order stays.
    # gamma = 0: every N is unbiased, all gaps tie (N = 1).
    bound = 2.0 * np.sqrt(n_cap) + 2.0
    flat_zero = (g_b == 0.0).ravel()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        unit_goal = np.where(flat_zero, 0.0, goal_b.ravel() / s_b.ravel() / g_b.ravel())
    flat_goal = np.clip(unit_goal, -bound, bound)
    # Chunks of at most _CHUNK_ELEMENTS cells in both M and N: one row of a large n_max was
    # n_max long (10^9 asked for 40 GB of temporaries).
    cols = min(n_cap, _CHUNK_ELEMENTS)
    rows = max(1, _CHUNK_ELEMENTS // cols)
    best = np.empty(flat_m.shape, dtype=np.int64)
    for lo in range(0, flat_m.size, rows):
        mm = flat_m[lo : lo + rows, None]
        best_gap = np.full(mm.shape[0], np.inf)
        for n_lo in range(1, n_cap + 1, cols):
            ns = np.arange(n_lo, min(n_lo + cols, n_cap + 1), dtype=np.int64)
            bias = 1.0 - 2.0 * _t_mn(mm, ns[None, :])  # in units of gamma tau
            if split:  # the errors' half-width grows as sqrt(N) (Corollary 1)
                bias = bias * np.sqrt(ns[None, :])
            gap = np.abs(bias - flat_goal[lo : lo + rows, None])
            gap[flat_zero[lo : lo + rows]] = 0.0  # gamma = 0: all N tie
            first = np.argmin(gap, axis=1)  # argmin: first minimum = smallest N
            chunk_gap = gap[np.arange(gap.shape[0]), first]
            # strictly smaller only: on a tie the earlier chunk's (smaller) N stays
            better = (chunk_gap < best_gap) | (n_lo == 1)
            best_gap[better] = chunk_gap[better]
            best[lo : lo + rows][better] = ns[first[better]]
    return _out(best.reshape(m_b.shape), M, tau, gamma, target)


def zero_bias_n(M: Any) -> Any:
    """The real N at which Theorem 1 (i)'s bias vanishes: ``t_MN = 1/2`` (the paper's advice,
    "choose N such that t_MN ~ 1/2"), e.g. 1.78 for M = 2, 3.66 for M = 8, 10.69 for M = 1000;
    1 for M = 1. ``choose_n`` picks the whole N of smallest |bias| next to it; the bias is
    convex in N, so that is not always the nearest whole number (M = 7: 3.47, but N = 4).

    Bisection on ``x = 1/N`` in (0, 1], where ``t_MN = Gamma(1+x) / poch(M+1, x)`` falls from 1
    to ``1/(M+1)``; independent of tau and gamma.
    """
    m = _integers(M, "M").astype(np.float64)
    lo, hi = np.zeros_like(m), np.ones_like(m)
    for _ in range(64):  # the bracket halves each time: 2^-64 of x at the end
        mid = (lo + hi) / 2
        above = gamma_fn(1.0 + mid) / poch(m + 1.0, mid) > 0.5  # N = 1/mid is above the root
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    # M = 1: t = 1 / (1 + x) is 1/2 at x = 1 exactly, which rounding in t can miss by 1 ulp.
    return _out(np.where(m == 1.0, 1.0, 2.0 / (lo + hi)), M)


# --- Monte Carlo ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MonteCarloEstimate:
    """Sampled counterparts of Theorem 1 and Corollary 1 (arrays, or floats for scalars).

    Attributes:
        bias: mean of ``Z_MN = gamma * max_a min_i e^i_a`` (estimates ``expected_bias``).
        bias_se: its standard error.
        target_variance: sample variance of ``Z_MN`` (estimates ``target_variance``).
        target_variance_se: its standard error (from the fourth central moment; NaN for
            ``samples`` = 2, where the moments give exactly 0 whatever the truth).
        min_variance: sample variance of ``min_i e^i`` for one action (``min_variance``).
        min_variance_se: its standard error (from the fourth central moment).
        variance_ratio: Corollary 1's ratio, sampled: the variance of the minimum of N errors
            with half-width ``sqrt(N) * tau`` over that of an independent single error with
            half-width ``tau`` (the even split of the samples among N estimators; for normal
            errors the standard deviation is scaled by ``sqrt(N)`` in the same way).
        variance_ratio_se: its standard error (delta method, independent numerator and
            denominator).
        samples: number of samples per element.
        noise: the error distribution sampled, ``"uniform"`` (Theorem 1's) or ``"normal"``.
        split: whether each estimator's errors were scaled by ``sqrt(N)`` (Corollary 1's
            shared sample budget; ``monte_carlo_bias(split=True)``).
    """

    bias: Any
    bias_se: Any
    target_variance: Any
    target_variance_se: Any
    min_variance: Any
    min_variance_se: Any
    variance_ratio: Any
    variance_ratio_se: Any
    samples: int
    noise: str = "uniform"
    split: bool = False


class _Moments:
    """Running moments 1..4 of a bounded stream, about the first chunk's mean and in units of
    its largest deviation from that mean (``shift`` and ``scale``).

    Raw moments lost the spread of a stream whose spread is tiny beside its mean (the standard
    error of Bias-corrected Q's mean, near -1.42 sigma with a spread of 0.2 tau, was 10x too
    large at tau = 1e-8 and noise below), and sums of x^2 and x^4 underflowed to 0 below
    tau ~ 1e-75 (standard errors of 0) and overflowed above ~ 1e75 (NaN). In these units every
    sum is of order one; the results are scaled back at the end.
    """

    def __init__(self) -> None:
        self.n = 0
        self.sums = np.zeros(4)
        self.shift, self.scale = 0.0, 1.0

    def add(self, x: np.ndarray) -> None:
        if self.n == 0 and x.size:
            size = float(np.max(np.abs(x)))  # x / size first: the mean of huge x overflowed
            size = size if 0.0 < size < np.inf else 1.0
            self.shift = float(np.mean(x / size)) * size
            spread = float(np.max(np.abs(x - self.shift)))
            # one value (a chunk of one sample) has no spread: its size is the scale then
            self.scale = spread if 0.0 < spread < np.inf else size
        y = (x - self.shift) / self.scale
        self.n += y.size
        self.sums += [y.sum(), (y**2).sum(), (y**3).sum(), (y**4).sum()]

    def _central(self) -> tuple[float, float, float]:
        """Mean, second and fourth central moments, in units of ``scale`` (about ``shift``)."""
        m1, m2, m3, m4 = self.sums / self.n
        c2 = max(m2 - m1**2, 0.0)
        c4 = m4 - 4 * m3 * m1 + 6 * m2 * m1**2 - 3 * m1**4
        return m1, c2, c4

    def mean_se(self) -> tuple[float, float]:
        """The mean and its standard error (from the sample variance)."""
        m1, c2, _ = self._central()
        unit_var = c2 * self.n / (self.n - 1)
        return self.shift + self.scale * m1, self.scale * float(np.sqrt(unit_var / self.n))

    def unit_var_se(self) -> tuple[float, float]:
        """The sample variance and its standard error (from the fourth central moment), both
        in units of ``scale**2``; the error is NaN below 3 values, where the moments make it
        exactly 0."""
        _, c2, c4 = self._central()
        var = c2 * self.n / (self.n - 1)
        if self.n < 3:  # two values: c4 = c2^2 always, an error of 0 that means nothing
            return var, float("nan")
        return var, float(np.sqrt(max(c4 - c2**2, 0.0) / self.n))

    def var_se(self) -> tuple[float, float]:
        """:meth:`unit_var_se` scaled back (0 where a variance is below the smallest double,
        inf where it is above the largest: tau**2 past 1.8e308, the units' own limit)."""
        var, se = self.unit_var_se()
        with np.errstate(over="ignore"):  # inf is the answer there, not a fault
            return var * self.scale * self.scale, se * self.scale * self.scale


def _mc_arguments(
    M: Any, N: Any, tau: Any, gamma: Any, samples: Any, rng: Any, noise: Any, split: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The arguments shared by ``monte_carlo_bias`` and ``operator_bias``, checked in that
    order (ValueError naming the first bad one): M, N, tau and gamma as arrays that broadcast
    together, and ``samples`` as an int; with ``split``, tau is each member's, ``tau
    sqrt(N)`` (as :func:`expected_bias` takes it), which must be small enough to draw."""
    m = _integers(M, "M")
    n = _integers(N, "N")
    s = _sampled_tau(tau)
    g = _gamma(gamma)
    if np.ndim(samples) != 0:
        raise ValueError(f"samples must be a scalar integer, got {samples!r}")
    count = int(_integers(samples, "samples", minimum=2))
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if noise not in NOISES:
        raise ValueError(f"noise must be {' or '.join(map(repr, NOISES))}, got {noise!r}")
    _broadcast(M=m, N=n, tau=s, gamma=g)
    s = _split_tau(s, n, split)
    if split and np.any(s > np.finfo(np.float64).max / 2):
        raise ValueError(
            f"tau sqrt(N) (split=True) must be at most {np.finfo(np.float64).max / 2:.4g} to "
            f"be sampled, got tau={tau!r} with N={N!r}"
        )
    return m, n, s, g, count


def _each_element(
    checked: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    n_fields: int,
    sample: Callable[[int, int, float, float], tuple[float, ...]],
    given: tuple[Any, Any, Any, Any],
) -> list[Any]:
    """``sample(M, N, tau, gamma)`` (``n_fields`` floats) at every element of the broadcast
    ``checked`` arrays, in C order (the order the samples draw from the generator): one
    result per field, an array of the broadcast shape, or a Python float when every
    argument ``given`` (the caller's M, N, tau, gamma) was a scalar."""
    m_b, n_b, s_b, g_b = np.broadcast_arrays(*checked)
    fields = np.empty((n_fields, *m_b.shape))
    for idx in np.ndindex(m_b.shape):
        fields[(slice(None),) + idx] = sample(
            int(m_b[idx]), int(n_b[idx]), float(s_b[idx]), float(g_b[idx])
        )
    return [_out(f, *given) for f in fields]


def _draw(rng: np.random.Generator, tau: float, noise: str) -> Any:
    """Sampler of the errors: ``U(-tau, tau)``, or the normal law of the same variance."""
    if noise == "uniform":
        return functools.partial(rng.uniform, -tau, tau)
    return functools.partial(rng.normal, 0.0, tau / np.sqrt(3.0))


def _simulate(
    m: int, n: int, tau: float, gamma: float, samples: int, rng: np.random.Generator, noise: str
) -> tuple[float, ...]:
    draw = _draw(rng, tau, noise)
    bias, qmin, single = _Moments(), _Moments(), _Moments()
    rows = max(1, _CHUNK_ELEMENTS // (n * m))
    for lo in range(0, samples, rows):
        size = min(rows, samples - lo)
        errors = draw(size=(size, n, m))
        # Z_MN = gamma (max_a min_i Q^i - max_a Q*) = gamma * maxmin(errors) (equal true values).
        z = gamma * maxmin(errors)
        bias.add(z)
        # Q^min of one action: maxmin over a single action is the min over the N estimators.
        qmin.add(maxmin(errors[:, :, :1]))
        single.add(draw(size=size))
    b, b_se = bias.mean_se()
    bv, bv_se = bias.var_se()
    v, v_se = qmin.var_se()
    # Corollary 1: N estimators each see n_sa/N samples, so their errors' variance is N times
    # a single estimator's (half-width sqrt(N) tau; for normal errors sd sqrt(N) times). From
    # the variances in their own units: a pure number, whatever tau's magnitude.
    (u, u_se), (u1, u1_se) = qmin.unit_var_se(), single.unit_var_se()
    ratio = n * u / u1 * (qmin.scale / single.scale) ** 2
    ratio_se = ratio * np.sqrt((u_se / u) ** 2 + (u1_se / u1) ** 2)
    return b, b_se, bv, bv_se, v, v_se, ratio, float(ratio_se)


def monte_carlo_bias(
    M: Any,
    N: Any,
    tau: Any,
    gamma: Any,
    samples: int,
    rng: np.random.Generator,
    noise: str = "uniform",
    *,
    split: bool = False,
) -> MonteCarloEstimate:
    """Estimate Theorem 1 and Corollary 1 by sampling the estimates' errors.

    For each broadcast element, draws ``samples`` tensors of errors ``e ~ U(-tau, tau)`` of
    shape (N, M) and applies ``maxminq.operators.maxmin`` (chunked to bound memory), giving
    the mean bias ``E[Z_MN]``, its variance ``Var[Z_MN]``, ``Var[Q^min]`` and Corollary 1's
    variance ratio, each with a standard error.

    ``noise="normal"`` draws ``e ~ N(0, tau^2 / 3)`` instead (the same variance), to see how
    much the closed forms owe to the uniform assumption: sample-mean errors, the setting of
    Corollary 1's proof, are close to normal. With normal errors the bias still falls with N
    and its least biased N is ``choose_n(M)`` for every M in 1..100 but 14 and 28 (one more
    there), by quadrature; but ``Var[Q^min] / Var[Q]`` grows with N (2.98 at N = 8, where
    the uniform model gives 0.95): the minimum of unbounded errors keeps a wide spread.

    Args:
        M, N: integers >= 1 (or arrays). tau: > 0. gamma: in [0, 1].
        samples: samples per element (integer >= 2).
        rng: the only source of randomness.
        noise: ``"uniform"`` (Theorem 1's assumption, default) or ``"normal"``.
        split: Corollary 1's setting, a sample budget shared evenly by the N estimators:
            each one's errors have half-width ``tau sqrt(N)`` (for normal errors, the
            standard deviation ``sqrt(N)`` times), the simulated twin of
            ``expected_bias(..., split=True)`` and ``target_variance(..., split=True)``;
            ``min_variance`` is then that of ``min_variance(N, tau, split=True)``.
            ``variance_ratio`` is Corollary 1's either way.
    """
    m, n, s, g, count = _mc_arguments(M, N, tau, gamma, samples, rng, noise, split)
    values = _each_element(
        (m, n, s, g),
        8,
        lambda mm, nn, tt, gg: _simulate(mm, nn, tt, gg, count, rng, noise),
        (M, N, tau, gamma),
    )
    # the fields before samples, in order (mypy cannot count a list)
    return MonteCarloEstimate(*values, samples=count, noise=noise, split=split)  # type: ignore[misc]


@dataclass(frozen=True)
class OperatorBias:
    """Sampled bias of one operator's target in Theorem 1's setting (arrays, or floats).

    Attributes:
        bias: mean of ``Z = gamma (G(Q_s') - max_a Q*(s', a))``; ``bias_se`` its standard error.
        variance: sample variance of Z; ``variance_se`` its standard error.
        samples: samples per element. noise: the error law sampled. split: whether each
            member's errors were scaled by ``sqrt(N)`` (``operator_bias(split=True)``).
    """

    bias: Any
    bias_se: Any
    variance: Any
    variance_se: Any
    samples: int
    noise: str
    split: bool = False


def _library_name(name: Any) -> Any:
    """``name``, or the key of ``maxminq.operators.OPERATORS`` if ``name`` is one of its
    functions: the library's own G passed as a function is that operator (its parameters
    checked as the name's, its closed form known), as ``FiniteMDP.learn`` reads it. A
    ``'module:function'`` string is the G of one's own it names (``operators.load_operator``,
    whose one-line ValueError says what is wrong), as the classic experiments read it."""
    if isinstance(name, str) and ":" in name:
        name = load_operator(name)
    if callable(name):
        return next((key for key, fn in OPERATORS.items() if fn is name), name)
    return name


def _operator_kwargs(op_kwargs: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The operator's parameters: ``op_kwargs`` (a mapping, or None) and ``params`` (the
    keyword arguments) together; ValueError for another ``op_kwargs`` or a name given in
    both."""
    if op_kwargs is None:
        return params
    if not isinstance(op_kwargs, Mapping):
        raise ValueError(f"op_kwargs must be a mapping of parameter names, got {op_kwargs!r}")
    twice = sorted(set(op_kwargs) & set(params))
    if twice:
        raise ValueError(f"{twice[0]!r} is given in op_kwargs and as a keyword; give it once")
    return {**op_kwargs, **params}


def _operator_g(name: Any, params: dict[str, Any], members: np.ndarray) -> Callable[..., Any]:
    """The G function ``operator_bias`` applies: ``name``'s from ``maxminq.operators`` (its
    parameters checked: known names, the operator's own checks, for each member count of
    ``members``), or ``name`` itself, a G function of your own. Either is tried on zeros of
    each member count, and a G of your own must map shape (..., N, A) to (...): one value per
    sample (a G that reduced the samples too gave one number, read as every sample's). A G of
    your own that fails on the NumPy zeros with a TypeError or AttributeError (one written
    for torch tensors: "'numpy.ndarray' object has no attribute 'median'") is a TypeError
    naming it and what it is given."""
    if callable(name):  # tried on each member count (an empty N tries none)
        return own_operator(name, [(1, int(k), 2) for k in np.unique(members)], **params)
    _check_library_params(name, params, members, "operator_bias")
    return functools.partial(bootstrap, name)


def _check_library_params(
    name: str, params: dict[str, Any], members: np.ndarray, caller: str
) -> None:
    """ValueError unless ``name`` is a library operator (the message starts with ``caller``,
    the function the user called: it named ``operator_params``, which they had not) that
    takes ``params``, each one number
    (one c or sigma for every sample: a per-sample array would not fit the Monte Carlo's
    chunks, nor a closed form), and passes its own checks (member count, the parameters'
    values) at each member count of ``members`` (an empty N checks none). The numbers are
    checked before the operator's own checks, which tried them on a batch of one and named
    that batch's shape, ``(1,)``, that no one had given."""
    try:
        takes = operator_params(name, caller)
    except ValueError as err:  # an unknown name; operator_bias also takes a G of one's own
        own = ", or a G function of your own" if caller == "operator_bias" else ""
        raise ValueError(f"{err}{own}") from None
    unknown = sorted(set(params) - set(takes))
    if unknown:  # else Python's TypeError
        raise ValueError(f"{name} takes no parameter {', '.join(map(repr, unknown))}")
    for key, value in params.items():
        if np.ndim(value) != 0:
            raise ValueError(
                f"{name}: {key} must be one number here (the same for every M, N and "
                f"sample), got shape {np.shape(value)}"
            )
    for k in np.unique(members):
        bootstrap(name, np.zeros((1, int(k), 2)), **params)


def operator_bias(
    name: str | Callable[..., Any],
    M: Any,
    N: Any,
    tau: Any,
    gamma: Any,
    samples: int,
    rng: np.random.Generator,
    noise: str = "uniform",
    *,
    split: bool = False,
    op_kwargs: Mapping[str, Any] | None = None,
    **params: Any,
) -> OperatorBias:
    """Theorem 1's experiment for any operator of ``maxminq.operators``: the bias and spread of
    ``gamma * G(errors)`` for N members of M equally valued actions, every estimate's error drawn
    independently from ``U(-tau, tau)`` (or, ``noise="normal"``, ``N(0, tau^2 / 3)``).

    ``N`` is the operator's member count (N estimators, or K snapshots for ``averaged`` and
    ``historical_best``, here independent: real snapshots of one table are correlated, which
    pulls them towards Q-learning); ``q_learning`` and ``bias_corrected`` take N = 1, ``double_q``
    and ``weighted_double_q`` N = 2 (else the operator's ValueError). ``params`` go to the
    operator (``c=``, ``sigma=``; ``sigma = tau / sqrt(3)`` is the errors' true standard
    deviation). Closed forms for uniform errors and gamma = 1 (checked in the tests):
    ``q_learning`` ``tau (M-1)/(M+1)``; ``maxmin`` Theorem 1 (i); ``double_q`` 0;
    ``historical_best`` ``tau (MK-1)/(MK+1)``; ``weighted_double_q`` ``E[beta] tau (M-1)/(M+1)``
    (Q^U's max times the mean weight, as beta depends on Q^V only and Q^V's sign is symmetric;
    0 for M = 1), ``E[beta] = int_0^{2 tau} d/(c+d) (2 tau - d)/(2 tau^2) dd`` (d = |Q^V(a*) -
    Q^V(a_L)|); ``bias_corrected`` ``tau (M-1)/(M+1) - sigma E[max of M N(0, 1)]``.

    ``name`` may also be a G function of your own, ``G(q, **params)`` mapping errors of shape
    (samples, N, M) to the (samples,) bootstrap values (as ``maxminq.operators``' do), to
    measure a new operator's bias in the same setting; it is tried once on zeros of each N
    first (a ValueError if it returns another shape, a TypeError naming it if it fails on
    NumPy input), and its values are read as float64 (a torch tensor or float32 values too);
    a value that is not finite (an overflow in G) is a ValueError naming it. A function of
    ``maxminq.operators`` is its operator, as if named.

    ``op_kwargs``: G's parameters as one mapping (as the toy MDP's ``op_kwargs`` and
    ``FiniteMDP.learn``'s ``operator_kwargs`` take them), merged with ``params``: the way to
    give a G a parameter that shares a name with one of this function's (a soft operator's
    temperature ``tau``, a ``gamma``, ``noise``, ``split``), which ``**params`` cannot take.

    ``split``: Corollary 1's even split of a sample budget, every member's errors of
    half-width ``tau sqrt(N)``, as in :func:`monte_carlo_bias`.
    """
    params = _operator_kwargs(op_kwargs, params)
    m, n, s, g, count = _mc_arguments(M, N, tau, gamma, samples, rng, noise, split)
    library = _library_name(name)
    op = _operator_g(library, params, n)
    own = None if isinstance(library, str) else str(getattr(library, "__name__", "G"))

    def sample(mm: int, nn: int, tt: float, gg: float) -> tuple[float, ...]:
        draw = _draw(rng, tt, noise)
        bias = _Moments()
        rows = max(1, _CHUNK_ELEMENTS // (nn * mm))
        for lo in range(0, count, rows):
            values = op(draw(size=(min(rows, count - lo), nn, mm)), **params)
            if own is not None and not np.all(np.isfinite(values)):  # else NaN results
                bad = values[~np.isfinite(values)].flat[0]
                raise ValueError(
                    f"operator {own!r} gave {bad} on the random errors of N = {nn} members "
                    f"and M = {mm} actions; G must give finite values for finite ones"
                )
            z = gg * values
            bias.add(z)
        return (*bias.mean_se(), *bias.var_se())

    values = _each_element((m, n, s, g), 4, sample, (M, N, tau, gamma))
    # the fields before samples, in order (mypy cannot count a list)
    return OperatorBias(*values, samples=count, noise=noise, split=split)  # type: ignore[misc]


#: From this many errors per mean on, :func:`_max_of_means` sums on a grid: de Boor's
#: recursion costs n^2 per point, 0.6-0.9 s per N at N = 1000, so `maxminq theory --n-max
#: 1000` spent about 3 minutes on Ensemble's exact means (the grid: 8 s for N = 1..1000).
#: Below it, the mean's law has too few continuous derivatives for the trapezoid rule, and
#: the spline's quadrature is quick.
_GRID_FROM = 32


def _max_of_means(m: int, n: int) -> float:
    """E[max of m means of n i.i.d. U(-1, 1)] = 1 - int_{-1}^{1} F_n(x)^m dx, F_n the law of
    one mean: the Irwin-Hall law (sum of n U(0, 1)) is the cardinal B-spline of degree n - 1,
    whose integral scipy evaluates by de Boor's recursion (the textbook alternating sum
    cancels terms up to 4e15 at n = 100, every digit of float64); from n = ``_GRID_FROM`` on,
    :func:`_max_of_means_grid`. Where F_n > 1/2, F_n^m is taken as exp(m log1p(-(1 - F_n)))
    with 1 - F_n(x) = F_n(-x) (the law is symmetric): F_n itself, within 1e-16 of 1, left
    1 - F_n about 1/m with few digits, and F_n^m wrong for large m (0.70 for 0.50 at
    m = 2^63 - 1, n = 100; 3e-7 off at m = 10^12, n = 2)."""
    if n == 1:
        return (m - 1) / (m + 1)
    if n >= _GRID_FROM:
        # F^M and the CDF's lower tail underflow to 0 by design: with np.seterr(all="raise")
        # in the caller's program that was a FloatingPointError (N = 40, M = 8)
        with np.errstate(under="ignore"):
            return _max_of_means_grid(m, n)
    from scipy import integrate, optimize
    from scipy.interpolate import BSpline

    spline = BSpline.basis_element(np.arange(n + 1.0), extrapolate=False).antiderivative()

    def cdf(x: float) -> float:
        return float(np.clip(spline((x + 1.0) * n / 2.0), 0.0, 1.0))

    def cdf_max(x: float) -> float:
        if x <= 0.0:
            return cdf(x) ** m
        return math.exp(m * math.log1p(-cdf(-x)))  # 1 - F(x) = F(-x)

    # F^m climbs from 0 to 1 in a narrow band below x = 1 when m is large (1e-6 wide at
    # n = 2, m = 10^12): tell quad where it starts and where it is half way (given the
    # middle alone, quad saw zeros left of it, 3e-7 of the mean lost), and where the
    # spline's pieces join (2k/n - 1: a derivative of F jumps there).
    def where(level: float) -> float:  # the x at which F^m reaches level
        return float(optimize.brentq(lambda x: cdf_max(x) - level, -1.0, 1.0, xtol=1e-15))

    start, mid = where(1e-16), where(0.5)
    knots = [2.0 * k / n - 1.0 for k in range(1, n)]
    points = [start, mid, *knots]
    value, _ = integrate.quad(cdf_max, -1.0, 1.0, points=points, limit=400, epsabs=1e-14)
    return 1.0 - value


def _once_per_distinct(fn: Callable[..., float], *counts: np.ndarray) -> np.ndarray:
    """``fn`` of the whole numbers ``counts`` (broadcast together), called once per distinct
    tuple of values and spread back over the broadcast shape: an exact mean costs a
    quadrature, and a loop over every element (``np.vectorize``) also read the
    floating-point flags the tails' ignored underflow left set (np.seterr(all="raise"))."""
    shaped = np.broadcast_arrays(*counts)
    rows = np.stack(shaped, axis=-1).reshape(-1, len(counts))
    distinct, where = np.unique(rows, axis=0, return_inverse=True)
    values = np.array([fn(*(int(v) for v in row)) for row in distinct], dtype=float)
    return values[where.reshape(-1)].reshape(shaped[0].shape)


def _max_of_means_grid(m: int, n: int) -> float:
    """:func:`_max_of_means` for n >= ``_GRID_FROM``: the Irwin-Hall CDF of the sum S at every
    point of a grid of step 1/r over [0, n], all points at once, by the recursion
    F_k(s) = (s F_{k-1}(s) + (k - s) F_{k-1}(s - 1)) / k (weights in [0, 1] summing to 1 on
    the support: no cancellation; n^2 r operations in all), then int F^m by the trapezoid
    rule, which is exact up to the jumps of the n-th derivative at the integers and the
    derivatives at the ends, which vanish: within 1e-13 of 40-digit values."""
    r = 64 if n < 128 else 16  # steps per unit of S; sd(S) = sqrt(n / 12) >= 1.6 here
    s = np.arange(n * r + 1) / r  # exact: r is a power of 2
    f = np.ones_like(s)  # F_0: all the mass at 0; F_k is 1 from s = k on, left as it is
    for k in range(1, n + 1):
        top = k * r  # the points below s = k
        before = f[: top - r].copy()  # F_{k-1}(s - 1) at s = 1 .. k; 0 below s = 1
        f[:top] *= s[:top]
        f[r:top] += (k - s[r:top]) * before
        f[:top] /= k
    upper = s > n / 2.0
    power = np.empty_like(s)
    power[~upper] = f[~upper] ** m
    tail = f[::-1][upper]  # 1 - F(s) = F(n - s): below 1/2, with its own digits
    power[upper] = np.exp(m * np.log1p(-tail))
    integral = (power.sum() - 0.5 * (power[0] + power[-1])) / r
    return float(1.0 - 2.0 * integral / n)


def _mean_weight(tau: float, c: float) -> float:
    """Weighted Double Q's E[beta] = E[d / (c + d)], d = tau |X - Y| for X, Y i.i.d.
    U(-1, 1): |X - Y| has the triangular density (2 - u) / 2 on [0, 2]."""
    from scipy import integrate

    if np.isfinite(2.0 * tau):
        value, _ = integrate.quad(lambda u: tau * u / (c + tau * u) * (2.0 - u) / 2.0, 0.0, 2.0)
    else:  # tau u past the largest double: inf / inf gave NaN (tau >= 9e307); divided by tau
        value, _ = integrate.quad(lambda u: u / (c / tau + u) * (2.0 - u) / 2.0, 0.0, 2.0)
    return value


def operator_expected_bias(
    name: str | Callable[..., Any],
    M: Any,
    N: Any,
    tau: Any = 1.0,
    gamma: Any = 1.0,
    *,
    op_kwargs: Mapping[str, Any] | None = None,
    **params: Any,
) -> Any:
    """The exact mean of ``operator_bias``'s ``Z = gamma (G(Q_s') - max_a Q*(s', a))`` with
    Theorem 1's uniform errors ``U(-tau, tau)`` (what ``operator_bias`` estimates with
    ``noise="uniform"``), by closed form or one-dimensional quadrature:

    * ``q_learning`` (N = 1): ``gamma tau (M-1)/(M+1)``, the max of M errors;
    * ``maxmin``: Theorem 1 (i), ``expected_bias``;
    * ``double_q`` (N = 2): 0 (the evaluating table's error is independent of the choice);
    * ``weighted_double_q`` (N = 2): ``gamma E[beta] tau (M-1)/(M+1)``, ``E[beta] =
      int_0^2 tau u / (c + tau u) (2 - u) / 2 du`` (beta depends on Q^V only, and Q^V's part
      averages to 0 by symmetry; 0 for M = 1);
    * ``historical_best``: ``gamma tau (MN-1)/(MN+1)``, the max of M N errors (independent
      snapshots);
    * ``ensemble``, and ``averaged`` with independent snapshots: ``gamma tau E[max of M means
      of N U(-1, 1)]``, positive for every N;
    * ``bias_corrected`` (N = 1): ``gamma (tau (M-1)/(M+1) - sigma E[max of M N(0, 1)])``.

    ``params`` are the operator's (``c``, ``sigma``; or as one mapping ``op_kwargs``, as
    ``operator_bias`` takes them), with its defaults and checks. Broadcasts
    over M, N, tau and gamma; ValueError naming a bad argument. ``name`` may be a function of
    ``maxminq.operators`` (``operators.maxmin`` is ``"maxmin"``); a G of your own has no closed
    form here (ValueError: estimate it with ``operator_bias``).
    """
    params = _operator_kwargs(op_kwargs, params)
    if "noise" in params:  # operator_bias's argument; it read "maxmin takes no parameter 'noise'"
        raise ValueError(
            "operator_expected_bias takes no noise: its closed forms are for Theorem 1's "
            "uniform errors; simulate another law with operator_bias(..., noise='normal')"
        )
    name = _library_name(name)  # operators.maxmin is "maxmin": it has its closed form
    if callable(name):  # (operator_params named the function's repr as an unknown operator)
        raise ValueError(
            f"operator_expected_bias: no closed form for a G function of your own "
            f"({getattr(name, '__name__', name)!r}); estimate its bias with operator_bias"
        )
    m = _integers(M, "M")
    n = _integers(N, "N")
    s = _tau(tau)
    g = _gamma(gamma)
    _broadcast(M=m, N=n, tau=s, gamma=g)
    _check_library_params(name, params, n, "operator_expected_bias")  # as operator_bias does
    m_b, n_b, s_b, g_b = (a.astype(np.float64) for a in np.broadcast_arrays(m, n, s, g))
    q_max = (m_b - 1.0) / (m_b + 1.0)  # E[max of M U(-1, 1)]
    if name == "q_learning":
        unit = q_max
    elif name == "maxmin":  # Theorem 1 (i)
        unit = np.asarray(expected_bias(*np.broadcast_arrays(m, n)))
    elif name == "double_q":
        unit = np.zeros_like(q_max)
    elif name == "historical_best":
        unit = (m_b * n_b - 1.0) / (m_b * n_b + 1.0)
    elif name in ("ensemble", "averaged"):
        # one quadrature per distinct (M, N), broadcast over tau and gamma: each element of
        # the full broadcast got its own (1000 taus at N = 20: 8 s for what takes 10 ms)
        unit = np.broadcast_to(_once_per_distinct(_max_of_means, m, n), q_max.shape)
    elif name == "weighted_double_q":
        c = float(params.get("c", 1.0))
        unit = q_max * np.vectorize(lambda tt: _mean_weight(float(tt), c), otypes=[float])(s_b)
    else:  # bias_corrected; its sigma was checked above
        from maxminq.operators import expected_max_standard_normal

        sigma = float(params["sigma"])
        # once per distinct M, outside a ufunc: np.vectorize's loop read the floating-point
        # flags that the tails' (ignored) underflow left set past 10^4 actions, and raised
        # FloatingPointError under np.seterr(all="raise")
        correction = np.broadcast_to(
            _once_per_distinct(expected_max_standard_normal, m), q_max.shape
        )
        return _out(g_b * (s_b * q_max - sigma * correction), M, N, tau, gamma)
    return _out(g_b * s_b * np.asarray(unit, dtype=np.float64), M, N, tau, gamma)
