"""Compiled twins of ``maxminq.operators`` for one next state, for numba kernels.

A kernel that keeps a whole run inside numba (Mountain Car's per-run loop) cannot call back
into Python for every bootstrap value: the call would cost more than the update. These are
the same G functions as ``maxminq.operators`` (Lan et al. 2020, section 6), written as loops
over one state's float64 values ``q`` of shape (M, A) in the operators' member order, with
the operators' default parameters (and the same shapes refused: ValueError).
``tests/operators/test_operators.py`` checks each against its NumPy original on random and
tied inputs, bit for bit (``tests/operators/test_operators_inputs.py`` on infinities, NaN and
signed zeros); an operator called with parameters (e.g. ``weighted_double_q`` with another
``c``) stays on the NumPy path.

Ties and NaN follow NumPy: ``argmax`` takes the first maximum; a NaN anywhere in the
reduced values makes min/max NaN, as a diverged run's values do in NumPy. One exception, which
no kernel meets (the toy MDP has 8 actions at B, Mountain Car 3): with a single action and 8 or
more members, ``np.mean`` sums the contiguous member axis pairwise, so Ensemble and Averaged
can differ from these sequential sums in the last bits. And the sign of a zero result may
differ (NumPy's mean of -0.0 is +0.0; its max of -0.0 and 0.0 is either), which no later
arithmetic can tell apart.
"""

from __future__ import annotations

import numpy as np

from maxminq import operators
from maxminq._jit import njit

__all__ = ["OPERATOR_CODES", "apply_operator", "operator_code", "td_target"]

#: Kernel codes of the operators, in ``operators.OPERATORS`` order.
OPERATOR_CODES: dict[str, int] = {name: i for i, name in enumerate(operators.OPERATORS)}
_Q, _MAXMIN, _ENSEMBLE, _AVERAGED, _HBQ, _DOUBLE, _WDOUBLE = (
    OPERATOR_CODES[name]
    for name in (
        "q_learning",
        "maxmin",
        "ensemble",
        "averaged",
        "historical_best",
        "double_q",
        "weighted_double_q",
    )
)


#: The compiled operators' codes are 0 .. _N_COMPILED - 1 (bias_corrected, with its required
#: sigma, comes after them in ``operators.OPERATORS``): one range check refuses every other code.
_N_COMPILED = 7
assert sorted((_Q, _MAXMIN, _ENSEMBLE, _AVERAGED, _HBQ, _DOUBLE, _WDOUBLE)) == list(
    range(_N_COMPILED)
), "the compiled operators must come first in operators.OPERATORS"


def operator_code(name: str, op_kwargs: dict | None = None) -> int:
    """The kernel code of operator ``name``, or -1 if it must run through NumPy (parameters
    other than the defaults were given). An operator with a required parameter
    (``bias_corrected``'s sigma) has no default to compile: ValueError, as the operator."""
    if name not in OPERATOR_CODES:
        known = ", ".join(sorted(OPERATOR_CODES))
        raise ValueError(f"unknown operator {name!r}; choose one of: {known}")
    if op_kwargs:
        return -1
    missing = [k for k, required in operators.operator_params(name).items() if required]
    if missing:
        raise ValueError(f"{name}: give {', '.join(missing)} (no compiled default)")
    return OPERATOR_CODES[name]


@njit(inline="always")
def _nan_max(acc: float, v: float) -> float:
    """max(acc, v) propagating NaN like ``np.max``."""
    if v > acc or v != v:
        return v
    return acc


@njit(inline="always")
def _nan_min(acc: float, v: float) -> float:
    """min(acc, v) propagating NaN like ``np.min``."""
    if v < acc or v != v:
        return v
    return acc


@njit(inline="always")
def _arg_extreme(row: np.ndarray, n_actions: int, largest: bool) -> int:
    """First index of the maximum (``largest``) or minimum, NaN counting as the extreme:
    ``np.argmax`` / ``np.argmin``."""
    best, arg = row[0], 0
    if best != best:
        return 0
    for a in range(1, n_actions):
        v = row[a]
        if v != v:
            return a
        if (v > best) if largest else (v < best):
            best, arg = v, a
    return arg


@njit(inline="always")
def apply_operator(code: int, q: np.ndarray) -> float:
    """G(Q_{s'}) of operator ``code`` (from ``operator_code``) for one state's values ``q``
    (M, A). ``bias_corrected`` has no compiled twin (its sigma is required: the NumPy path):
    its code, like any code ``operator_code`` does not return (-1 included), is a ValueError
    rather than a value (it gave Q-learning's max, sigma silently 0)."""
    if code < 0 or code >= _N_COMPILED:
        raise ValueError("apply_operator: no compiled operator has this code")
    n_members, n_actions = q.shape[0], q.shape[1]
    # The shapes maxminq.operators refuses: an empty axis read memory past the array (or
    # gave 0.0), one member too few for the two-table operators too, one too many was
    # silently ignored. (Two integer compares per call: no measurable cost in a kernel.)
    if n_members == 0 or n_actions == 0:
        raise ValueError("apply_operator: q needs at least one estimator and one action")
    if code == _Q and n_members != 1:
        raise ValueError("apply_operator: q_learning takes exactly 1 estimator")
    if (code == _DOUBLE or code == _WDOUBLE) and n_members != 2:  # noqa: SIM109 (numba)
        raise ValueError("apply_operator: double_q and weighted_double_q take exactly 2")
    if code == _DOUBLE or code == _WDOUBLE:  # noqa: SIM109 (plain compares for numba)
        best = _arg_extreme(q[0], n_actions, True)
        if code == _DOUBLE:  # van Hasselt (2010): member 1 evaluates member 0's choice
            if q[0, best] != q[0, best]:  # a NaN was selected: NaN, as in maxminq.operators
                return np.nan
            return q[1, best]
        worst = _arg_extreme(q[0], n_actions, False)  # Zhang et al. (2017), c = 1
        gap = abs(q[1, best] - q[1, worst])
        beta = gap / (1.0 + gap)
        return beta * q[0, best] + (1 - beta) * q[1, best]
    g = 0.0
    for a in range(n_actions):
        if code == _MAXMIN:  # max_a min_i Q^i(s', a)
            v = q[0, a]
            for m in range(1, n_members):
                v = _nan_min(v, q[m, a])
        elif code == _ENSEMBLE or code == _AVERAGED:  # noqa: SIM109 (mean over members)
            v = q[0, a]
            for m in range(1, n_members):
                v += q[m, a]
            v = v / n_members
        elif code == _HBQ:  # max over snapshots and actions
            v = q[0, a]
            for m in range(1, n_members):
                v = _nan_max(v, q[m, a])
        else:  # Q-learning: max_a Q(s', a)
            v = q[0, a]
        g = v if a == 0 else _nan_max(g, v)
    return g


@njit(inline="always")
def td_target(reward: float, discount: float, terminated: bool, next_value: float) -> float:
    """``r + gamma * (1 - terminated) * G`` for one transition: ``maxminq.operators.td_target``
    (Lan et al. 2020, Y^GQ), bit for bit for finite G. A terminal transition's target is the
    reward alone, whatever G is (an infinite or NaN G too, as in ``maxminq.operators``).
    ``terminated`` is 0 or 1 (or boolean) and ``0 <= discount <= 1``, else ValueError, as
    there (0.5 counted as terminal here and as not terminal there)."""
    if terminated != 0 and terminated != 1:
        raise ValueError("td_target: terminated must be 0 or 1 (or boolean)")
    if not 0.0 <= discount <= 1.0:
        raise ValueError("td_target: discount must be in [0, 1]")
    if terminated:
        return reward
    return reward + discount * next_value
