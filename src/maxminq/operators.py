"""The Generalized Q-learning operators: one pure function per bootstrap G.

Lan et al. (2020), section 6, write every variant of Q-learning as

    Y^GQ = r + gamma * Q^GQ_{s'}(t - 1),      Q^GQ_{s'} = G(Q^{i}_{s'}(t - j)),

a function G of N estimators and K past snapshots of the next-state action values.
This module holds those G functions, and is the only place in `maxminq` where a
bootstrap value is computed: the tabular, tile-coded and deep agents all call it (numba
kernels that keep a whole run compiled call ``maxminq.operators_jit``, the same functions for
one state, tested bit for bit against these).

Conventions (shared by every function):

* ``q`` has shape ``(..., N, A)``: any leading batch dimensions, then the member
  axis (the N estimators, or the K snapshots for Averaged and Historical Best),
  then the action axis. The result has shape ``(...)``: one bootstrap value per
  sample.
* ``q`` may be a NumPy array or a torch tensor; the result has the same type.
  Functions are pure: they never modify ``q``, nor return a view of it. The two backends
  agree bit for bit, except Ensemble's and Averaged's mean of 5 or more members, which torch
  sums in another order (the last bits differ; tests/operators/test_operators_inputs.py).
* Floating ``q`` keeps its dtype; integer or boolean ``q`` is read as float64 (NumPy and
  torch alike, every operator: no integer results, no unsigned wrap-around); complex or
  object values are a TypeError. No axis is guessed: a ``(samples, A)`` array passed to
  ``maxmin`` is one state with ``samples`` estimators.

Assumption 1 of Lan et al. (2020) (G of equal members is their max; G is 1-Lipschitz in the
max norm), on which Theorem 2's convergence rests, holds for ``q_learning``, ``maxmin``,
``ensemble``, ``averaged`` and ``historical_best``; ``double_q`` and ``weighted_double_q`` break
the Lipschitz part, ``bias_corrected`` with ``sigma > 0`` the first
(tests/operators/test_operators.py).

Example::

    >>> import numpy as np
    >>> q = np.array([[1.0, 5.0], [3.0, 2.0]])   # N = 2 estimators, A = 2 actions
    >>> float(maxmin(q))                          # max(min(1, 3), min(5, 2))
    2.0
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

Array = TypeVar("Array", bound=Any)  # np.ndarray or torch.Tensor (Any: torch not imported)

__all__ = [
    "ACTION_VALUE_OPERATORS",
    "OPERATORS",
    "action_values",
    "averaged",
    "bias_corrected",
    "bootstrap",
    "check_keywords",
    "check_on_zeros",
    "double_q",
    "ensemble",
    "expected_max_standard_normal",
    "historical_best",
    "load_operator",
    "maxmin",
    "operator_params",
    "operator_reference",
    "own_operator",
    "q_learning",
    "td_target",
    "unnamed_operator",
    "weighted_double_q",
]


# --- backend helpers: the same reductions for NumPy and torch --------------------------------


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _check(q: Any, name: str, members: int | None = None) -> Any:
    """Refuse what is not a ``(..., N, A)`` array of N >= 1 (``members`` if given) estimators
    of A >= 1 actions; return ``q`` with floating values (see :func:`_floating`)."""
    numpy = isinstance(q, np.ndarray)
    if not (numpy or _is_torch(q)):
        raise TypeError(
            f"{name}: q must be a NumPy array or a torch tensor, got {type(q).__name__}"
        )
    if q.ndim < 2:
        raise ValueError(f"{name}: q must have shape (..., N, A), got {tuple(q.shape)}")
    if members is not None and q.shape[-2] != members:
        raise ValueError(
            f"{name}: q must stack exactly {members} estimator(s) on axis -2, got {q.shape[-2]}"
        )
    if q.shape[-2] == 0 or q.shape[-1] == 0:  # else NumPy's or torch's reduction error
        raise ValueError(
            f"{name}: q needs at least one estimator and one action, got {tuple(q.shape)}"
        )
    if q.dtype.kind == "f" if numpy else q.is_floating_point():  # the common case, inline
        return q
    return _floating(q, name)


def _floating(q: Any, name: str) -> Any:
    """Non-floating ``q`` (:func:`_check` returns floats as they are): integer or boolean
    values as float64, NumPy and torch alike (maxmin kept integers while ensemble averaged
    them into float64, and weighted_double_q's gap V(a*) - V(a_L) wrapped around in unsigned
    integers). Complex or object values are a TypeError (NumPy orders complex numbers, but
    not as action values)."""
    if _is_torch(q):
        if not q.is_complex():  # integers and bool
            return q.double()
    elif q.dtype.kind in "biu":
        return q.astype(np.float64)
    raise TypeError(f"{name}: q must hold real numbers, got {q.dtype}")


_BOOLS = ("bool", "torch.bool")  # the dtype names of NumPy's and torch's booleans


def _shown(value: Any) -> str:
    """``value`` for a one-line error: an array (or a list or tuple of several) by its type
    and shape (the repr of a long one spans many lines), anything else by its repr."""
    if hasattr(value, "shape") and len(value.shape) > 0:
        return f"a {value.dtype} {type(value).__name__} of shape {tuple(value.shape)}"
    if isinstance(value, list | tuple) and len(value) > 4:
        return f"a {type(value).__name__} of {len(value)} values starting {value[0]!r}"
    return repr(value)


def _check_param(value: Any, op: str, name: str, q: Any, low: str, finite: bool = False) -> Any:
    """Operator parameter ``name``: a number, or an array broadcasting to ``q``'s batch shape
    (a larger one silently changed the result's shape), ``low`` (">= 0" or "> 0"), and finite
    if ``finite``. Returns it in ``q``'s dtype: a list or tuple as an array of ``q``'s backend (a
    list failed inside the formula: "can't multiply sequence by non-int of type 'float'"), an
    array cast, a NumPy scalar as a plain number."""
    if isinstance(value, (bool, str)) or str(getattr(value, "dtype", "")) in _BOOLS:
        # True read as 1 (np.True_ and boolean arrays too), "0.5" failed inside the formula
        raise ValueError(f"{op}: {name} must be a number (or array), got {_shown(value)}")
    if (_is_torch(value) or isinstance(value, np.ndarray)) and _is_torch(value) != _is_torch(q):
        # else NumPy's or torch's puzzling error, or a torch result from NumPy q
        like = "a torch tensor" if _is_torch(q) else "a NumPy array"
        raise ValueError(
            f"{op}: {name} must be a number or {like}, as q is, got {type(value).__name__}"
        )
    try:
        arr = value if _is_torch(value) else np.asarray(value, dtype=float)
        if isinstance(value, list | tuple) and np.asarray(value).dtype == bool:
            raise TypeError
    except (TypeError, ValueError):  # complex, None inside a list, ragged lists, booleans
        raise ValueError(f"{op}: {name} must be a number (or array), got {_shown(value)}") from None
    batch = tuple(q.shape[:-2])
    try:
        fits = np.broadcast_shapes(tuple(arr.shape), batch) == batch
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{op}: {name} must be a number or broadcast to the batch shape {batch}, "
            f"got shape {tuple(arr.shape)}"
        )
    if not bool((arr > 0).all() if low == "> 0" else (arr >= 0).all()):  # also catches NaN
        shown = f", got {value}" if np.ndim(value) == 0 else " everywhere"
        raise ValueError(f"{op}: {name} must be {low}{shown}")
    if finite and not bool((arr < math.inf).all()):  # an infinite sigma gave a -inf bootstrap
        raise ValueError(f"{op}: {name} must be finite")
    # In q's dtype, so that the result keeps it (float32 q with a per-sample float64 c or
    # sigma gave float64 in NumPy, and with a list float32 in torch but float64 in NumPy).
    if _is_torch(q):
        if isinstance(value, list | tuple):
            return q.new_tensor(arr)  # q's dtype and device
        if _is_torch(value) and value.dtype != q.dtype:
            return value.to(dtype=q.dtype)
        return value  # numbers, as NumPy scalars, keep q's dtype in torch
    if isinstance(value, np.ndarray | list | tuple):
        return arr.astype(q.dtype)
    if isinstance(value, np.generic):  # a plain number as torch reads it (np.float64 promoted)
        return float(value)
    return value


def _max(x: Any, axis: int) -> Any:
    return x.amax(dim=axis) if _is_torch(x) else np.max(x, axis=axis)


def _min(x: Any, axis: int) -> Any:
    return x.amin(dim=axis) if _is_torch(x) else np.min(x, axis=axis)


def _mean(x: Any, axis: int) -> Any:
    return x.mean(dim=axis) if _is_torch(x) else np.mean(x, axis=axis)  # x floats (_check)


def _argmax(x: Any, axis: int = -1) -> Any:
    return x.argmax(dim=axis) if _is_torch(x) else np.argmax(x, axis=axis)


def _argmin(x: Any, axis: int = -1) -> Any:
    return x.argmin(dim=axis) if _is_torch(x) else np.argmin(x, axis=axis)


def _at(values: Any, index: Any) -> Any:
    """values[..., index[...]] along the last (action) axis."""
    if _is_torch(values):
        return values.gather(-1, index.unsqueeze(-1)).squeeze(-1)
    return np.take_along_axis(values, index[..., None], axis=-1)[..., 0]


def _abs(x: Any) -> Any:
    return x.abs() if _is_torch(x) else np.abs(x)


#: Per-action estimate of the operators that maximise one (see :func:`action_values`); the G
#: functions below spell their formulas out, and a test checks G = max_a of these.
_ACTION_VALUES: dict[str, Callable[[Any], Any]] = {
    # a copy, as the others' reductions are (a view let an in-place edit reach the caller's q)
    "q_learning": lambda x: x[..., 0, :].clone() if _is_torch(x) else x[..., 0, :].copy(),
    "maxmin": lambda x: _min(x, axis=-2),
    "ensemble": lambda x: _mean(x, axis=-2),
    "averaged": lambda x: _mean(x, axis=-2),
    "historical_best": lambda x: _max(x, axis=-2),
}
#: The operators that have a per-action estimate for :func:`action_values`.
ACTION_VALUE_OPERATORS = frozenset(_ACTION_VALUES)


# --- the G functions --------------------------------------------------------------------------


def q_learning(q: Array) -> Array:
    """Q-learning: ``G(Q_s') = max_a Q(s', a)`` (Watkins 1989).

    Lan et al. (2020), section 6: Generalized Q-learning with N = 1, K = 1.
    ``q`` has shape (..., 1, A).
    """
    q = _check(q, "q_learning", members=1)
    return _max(q[..., 0, :], axis=-1)


def maxmin(q: Array) -> Array:
    """Maxmin Q-learning: ``G^MQ = max_a min_i Q^i(s', a)``.

    Lan et al. (2020), Algorithm 1 (target Y^MQ) and section 6 (G^MQ). With N = 1
    this is Q-learning; larger N moves the bias from over- to underestimation
    (Theorem 1). ``q`` has shape (..., N, A).
    """
    q = _check(q, "maxmin")
    return _max(_min(q, axis=-2), axis=-1)


def ensemble(q: Array) -> Array:
    """Ensemble Q-learning: ``G^EQ = max_a (1/N) sum_i Q^i(s', a)``.

    Anschel et al. (2017); Lan et al. (2020), section 6 (K = 1, N estimators
    learned side by side). ``q`` has shape (..., N, A).
    """
    q = _check(q, "ensemble")
    return _max(_mean(q, axis=-2), axis=-1)


def averaged(q: Array) -> Array:
    """Averaged Q-learning: ``G = max_a (1/K) sum_{j=1..K} Q(s', a; t - j)``.

    Anschel et al. (2017), Averaged-DQN; Lan et al. (2020), section 6 (N = 1,
    K snapshots). ``q`` stacks the K most recent snapshots: shape (..., K, A).
    """
    q = _check(q, "averaged")
    return _max(_mean(q, axis=-2), axis=-1)


def historical_best(q: Array) -> Array:
    """Historical Best Q-learning: the largest action value among K snapshots.

    Yu et al. (2018); Lan et al. (2020), section 6: ``G^HBQ = max_{a, j}
    Q(s', a; t - j)`` for j = 1..K. ``q`` has shape (..., K, A).
    """
    q = _check(q, "historical_best")
    return _max(_max(q, axis=-2), axis=-1)


def double_q(q: Array) -> Array:
    """Double Q-learning: ``G = Q^2(s', argmax_a Q^1(s', a))``.

    van Hasselt (2010); Lan et al. (2020), section 6 (K = 1, N = 2). Member 0
    selects the action, member 1 evaluates it; Double DQN (van Hasselt et al.
    2016) passes (online, target). ``q`` has shape (..., 2, A).
    """
    q = _check(q, "double_q", members=2)
    best = _argmax(q[..., 0, :])
    value, chosen = _at(q[..., 1, :], best), _at(q[..., 0, :], best)
    # argmax takes a NaN as the maximum, so a diverged selector's choice is NaN: give it, as
    # every other G does (and operators_jit).
    if _is_torch(q):
        return value.where(~chosen.isnan(), chosen)
    return np.where(np.isnan(chosen), chosen, value)[()]  # [()]: 0-d -> scalar


def weighted_double_q(q: Array, c: float = 1.0) -> Array:
    """Weighted Double Q-learning (Zhang, Pan and Kochenderfer, IJCAI 2017).

    With U = member 0 (the estimator being updated) and V = member 1,
    ``a* = argmax_a Q^U(s', a)``, ``a_L = argmin_a Q^U(s', a)``,
    ``beta = |Q^V(a*) - Q^V(a_L)| / (c + |Q^V(a*) - Q^V(a_L)|)`` and
    ``G = beta * Q^U(a*) + (1 - beta) * Q^V(a*)``: beta -> 1 gives Q-learning,
    beta -> 0 gives Double Q. ``q`` has shape (..., 2, A); ``c > 0``, a number or one per
    sample (an array, or a list, broadcasting to the batch shape), in the values' units. Its
    default, 1, is maxminq's choice: Zhang et al. treat c as a constant to tune per problem,
    and Lan et al. (2020) run no Weighted Double Q experiment. An infinite estimate that
    V contributes to the gap makes beta inf / inf: NaN, as for any diverged estimate.
    """
    q = _check(q, "weighted_double_q", members=2)
    c = _check_param(c, "weighted_double_q", "c", q, "> 0")
    qu, qv = q[..., 0, :], q[..., 1, :]
    best, worst = _argmax(qu), _argmin(qu)
    gap = _abs(_at(qv, best) - _at(qv, worst))
    beta = gap / (c + gap)
    return beta * _at(qu, best) + (1 - beta) * _at(qv, best)


#: Up to this m, :func:`expected_max_standard_normal` integrates ``x d/dx Phi(x)^m`` as it
#: always has (within 3e-13 there; every action count of an environment, bit for bit);
#: above, Phi^m in its stable form (the other lost digits: 5e-8 off at m = 10^9, 3e-6 at
#: 10^12, 8e-3 at 10^15).
_MAX_NORMAL_PLAIN_UP_TO = 10_000


@lru_cache(maxsize=1024)
def expected_max_standard_normal(m: int) -> float:
    """E[max of m i.i.d. N(0, 1)], by quadrature of ``x * d/dx Phi(x)^m``; m a whole number.

    For m above ``_MAX_NORMAL_PLAIN_UP_TO``, ``int_0^inf (1 - Phi^m) - int_-inf^0 Phi^m`` with
    ``Phi^m = exp(m log Phi)`` (``log_ndtr``): Phi within 1e-16 of 1 near the maximum, about
    ``sqrt(2 ln m)``, kept few digits of 1 - Phi ~ 1/m, and quad missed the narrow peak."""
    if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:  # 2.5 gave a value
        raise ValueError(f"expected_max_standard_normal: m must be a whole number >= 1, got {m!r}")
    if m == 1:
        return 0.0
    # The density and Phi^m underflow to 0 in the tails, as they should: with
    # np.seterr(all="raise") in the caller's program (or np.errstate around a training step)
    # that was a FloatingPointError, for bias_corrected's every call.
    with np.errstate(under="ignore"):
        if m > _MAX_NORMAL_PLAIN_UP_TO:
            return _expected_max_standard_normal_large(int(m))
        from scipy import integrate, stats

        def integrand(x: float) -> float:
            return x * m * stats.norm.pdf(x) * stats.norm.cdf(x) ** (m - 1)

        value, _ = integrate.quad(integrand, -math.inf, math.inf, limit=200)
    return float(value)


def _expected_max_standard_normal_large(m: int) -> float:
    """:func:`expected_max_standard_normal` for large m, Phi^m in its stable form: 1 - Phi^m
    rises to 1 below the maximum's location sqrt(2 ln m) within about 1 / sqrt(2 ln m)."""
    from scipy import integrate, special

    def power(x: float) -> float:  # Phi(x)^m
        return math.exp(m * float(special.log_ndtr(x)))

    def rest(x: float) -> float:  # 1 - Phi(x)^m
        return -math.expm1(m * float(special.log_ndtr(x)))

    at = math.sqrt(2.0 * math.log(m))
    edges = [0.0, at - 3.0, at - 1.0, at - 0.5, at, at + 0.5, at + 1.0, at + 3.0]
    above = sum(integrate.quad(rest, lo, hi, epsabs=1e-15, limit=200)[0]
                for lo, hi in zip(edges[:-1], edges[1:], strict=True))  # fmt: skip
    above += integrate.quad(rest, edges[-1], math.inf, epsabs=1e-15, limit=200)[0]
    below = integrate.quad(power, -math.inf, 0.0, epsabs=1e-15, limit=200)[0]
    return float(above - below)


def bias_corrected(q: Array, sigma: Any = None) -> Array:
    """Bias-corrected Q-learning (Lee, Defourny and Powell, IEEE ADPRL 2013).

    ``G = max_a Q(s', a) - sigma * E[max of M i.i.d. N(0, 1)]``: the max operator's
    expected upward bias when the M action-value estimates carry independent
    Gaussian errors of standard deviation ``sigma`` is subtracted from the
    Q-learning bootstrap. Lee et al. estimate ``sigma`` from the sample variance of
    the rewards and the visit counts; here the caller passes it (a scalar or an
    array or list broadcasting to the batch shape), and the expectation is computed exactly
    by quadrature instead of by their large-M approximation. ``q`` has shape
    (..., 1, A). ``sigma`` must be given (sigma = 0 is plain Q-learning).

    A constant ``sigma > 0`` does not vanish as the estimates improve: G of equal members is
    not their max, so Assumption 1 (i) of Lan et al. (2020) fails and Theorem 2 does not
    apply. With M actions at every state and ``gamma < 1`` the fixed point is
    ``Q* - gamma sigma E[max of M N(0, 1)] / (1 - gamma)`` (every value shifted alike, so the
    greedy policy is Q*'s). Lee et al.'s correction shrinks as the visits grow, which keeps
    their algorithm asymptotically unbiased: pass such a sigma as an array of the batch shape.
    """
    q = _check(q, "bias_corrected", members=1)
    if sigma is None:
        raise ValueError("bias_corrected: give sigma, the estimates' noise standard deviation")
    sigma = _check_param(sigma, "bias_corrected", "sigma", q, ">= 0", finite=True)
    correction = expected_max_standard_normal(int(q.shape[-1]))
    return q_learning(q) - sigma * correction


OPERATORS: dict[str, Callable[..., Any]] = {
    "q_learning": q_learning,
    "maxmin": maxmin,
    "ensemble": ensemble,
    "averaged": averaged,
    "historical_best": historical_best,
    "double_q": double_q,
    "weighted_double_q": weighted_double_q,
    "bias_corrected": bias_corrected,
}


def _operator(name: str, caller: str = "") -> Callable[..., Any]:
    """``OPERATORS[name]``; ValueError naming the known ones if there is none (a name that
    is no string too: a list was a TypeError of the dict lookup)."""
    if not isinstance(name, str) or name not in OPERATORS:
        known = ", ".join(sorted(OPERATORS))
        raise ValueError(f"{caller}unknown operator {name!r}; choose one of: {known}")
    return OPERATORS[name]


def bootstrap(name: str, q: Array, **params: Any) -> Array:
    """Apply the operator called ``name`` (a key of ``OPERATORS``) to ``q``."""
    return _operator(name)(q, **params)


def own_operator(
    g: Callable[..., Any],
    q_shapes: list[tuple[int, ...]],
    label: str | None = None,
    /,
    **params: Any,
) -> Callable[..., Any]:
    """``g``, a G function of one's own, as maxminq's tools call it (``theory.operator_bias``,
    ``FiniteMDP.learn``): its values read as float64 NumPy (so a G returning a torch tensor
    or float32 values works too), after :func:`check_on_zeros` has tried it once on NumPy
    zeros of each shape (..., N, A) of ``q_shapes`` with ``params``: a TypeError naming it
    for one that fails there with a TypeError or AttributeError (written for torch tensors:
    "'numpy.ndarray' object has no attribute 'median'"), a ValueError for one that returns
    whole numbers, does not map (..., N, A) to (...) (``np.max(q)`` reduces every axis) or
    gives a value that is not finite there; G's own ValueError (its checks) passes. Messages
    name G ``label`` (as the user named it, e.g. ``'my_ops:median_q'``), by default its
    ``__name__``."""
    label = label or str(getattr(g, "__name__", "G"))
    if isinstance(g, type):  # callable, but G(q) would make an instance of it
        raise TypeError(
            f"operator {label!r} is a class, not a G function; pass a function (or an "
            "instance of a class with __call__)"
        )
    check_keywords(g, label, params)
    check_on_zeros(g, f"operator {label!r}", q_shapes, params, "numpy")

    def as_float64(q: Any, **kw: Any) -> np.ndarray:
        return np.asarray(g(q, **kw), dtype=np.float64)

    return as_float64


#: What :func:`check_on_zeros` says of each kind of array a tool passes G: the zeros it tries,
#: the shape G must map, how G is called there, and how to write its float result.
_KINDS: dict[str, dict[str, str]] = {
    "numpy": {
        "zeros": "NumPy zeros",
        "called": " (G is called as G(q, **params), q a float64 NumPy array of shape (..., N, A);"
        " a G written for torch tensors can take torch.as_tensor(q))",
        "maps": "(..., N, A) to (...), one value per (N, A) slice",
        "floats": "q.mean(axis=-2).max(axis=-1), not argmax",
    },
    "torch": {
        "zeros": "torch zeros",
        "where": " (one seed's mini-batch of next-state values of its N target nets, (B, N, A))",
        "called": "; G gets a float32 torch tensor here and must return one: write it with torch "
        "operations, or wrap a NumPy G: torch.as_tensor(g(q.numpy()))",
        "maps": "(B, N, A) to (B,), one value per sample",
        "floats": "q.mean(dim=-2).amax(dim=-1), not .argmax",
    },
}


def check_on_zeros(
    g: Callable[..., Any],
    who: str,
    shapes: Sequence[tuple[int, ...]],
    params: dict[str, Any],
    kind: str = "numpy",
) -> None:
    """Try the G function ``g`` once on zeros of each shape (..., N, A) of ``shapes``, with
    ``params``, as a tool passes it q: ``kind`` ``"numpy"`` (float64 NumPy arrays: the
    theory and the classic experiments, :func:`own_operator`) or ``"torch"`` (float32 torch
    tensors of one seed's (B, N, A): ``generalized-dqn``, ``deep.agents.check_operator``).
    The one contract: G returns floating values of shape (...), a torch tensor for torch
    input, finite for these finite q. One-line messages start with ``who`` (``"operator
    'my_ops:median_q'"``): a TypeError when G fails there (on NumPy, only with a TypeError
    or AttributeError, a G written for torch: G's own ValueError, its checks, passes; on
    torch with any exception, a library operator's checks too), a ValueError when its
    values break the contract."""
    text = _KINDS[kind]
    torch_kind = kind == "torch"
    if torch_kind:
        import torch

        def zeros(shape: tuple[int, ...]) -> Any:
            return torch.zeros(shape, dtype=torch.float32)  # as training, whatever the default
    else:
        zeros = np.zeros
    caught: tuple[type[BaseException], ...] = (
        (Exception,) if torch_kind else (TypeError, AttributeError)
    )
    on = text["zeros"]
    for shape in shapes:
        shape = tuple(shape)
        try:
            out = g(zeros(shape), **params)
        except caught as err:  # a G that cannot take this kind of q: before any work
            other = isinstance(err, TypeError | AttributeError)  # written for the other kind
            raise TypeError(
                f"{who} failed on {on} of shape {shape}{text.get('where', '')}: "
                f"{type(err).__name__}: {_first_line(err)}{text['called'] if other else ''}"
            ) from None
        if torch_kind and not _is_torch(out):
            raise ValueError(
                f"{who} returned a value of type {type(out).__name__} for {on} of shape "
                f"{shape}; the deep agents need a torch tensor (write G with torch "
                "operations, e.g. q.median(dim=-2).values.amax(dim=-1))"
            )
        values: Any = out if torch_kind else np.asarray(out)
        floating = values.is_floating_point() if torch_kind else values.dtype.kind == "f"
        if not floating:  # e.g. the greedy action's index, not its value
            what = f"{values.dtype} values" if values.dtype != object else (
                f"a value of type {type(out).__name__}"
            )  # fmt: skip
            raise ValueError(
                f"{who} returned {what} for {on} of shape {shape}; G must return the "
                f"bootstrap values as floats (e.g. {text['floats']})"
            )
        if tuple(values.shape) != shape[:-2]:
            raise ValueError(
                f"{who} must map q of shape {text['maps']}: got shape {tuple(values.shape)} "
                f"from {shape}"
            )
        finite = bool(values.isfinite().all()) if torch_kind else bool(np.isfinite(values).all())
        if not finite:  # (a soft-min at beta = 0: the runs were all NaN)
            bad = values[~values.isfinite()] if torch_kind else values[~np.isfinite(values)]
            with_params = f" with {params}" if params else ""
            raise ValueError(
                f"{who} gave {bad.reshape(-1)[0].item()} on {on} of shape {shape}"
                f"{with_params}; G must give finite values for finite ones"
            )


def _missing_attribute(reference: str, module_name: str, attribute: str) -> str:
    """The message of ``load_operator`` for a module without ``attribute``. In a worker
    process (a sweep's, ``maxminq experiment --workers``'s) ``'__main__:median_q'`` names
    a function of the notebook or session that started it, which no other process has:
    said so, and what to do (the bare "module '__main__' has no 'median_q'" read as wrong
    to its user, who had just defined it)."""
    import multiprocessing

    text = f"operator {reference!r}: module {module_name!r} has no {attribute!r}"
    if module_name != "__main__" or multiprocessing.parent_process() is None:
        return text
    short = attribute.rpartition(".")[2]
    return (
        f"{text} in this worker process: a function defined in a notebook or an interactive "
        f"session is seen only by the process that defined it; {define_in_module(short, 'it')}"
    )


def define_in_module(short: str, subject: str | None = None) -> str:
    """What to do with a G (function ``short``) that only the process defining it has (a
    notebook's, an interactive session's, ``python -``'s ``'__main__:short'``): ``define
    short in a module of yours (e.g. my_ops.py on PYTHONPATH) and name it 'my_ops:short'``,
    ``subject`` in place of the first ``short`` if given (``'it'``). The one wording of this
    advice, for :func:`load_operator` in a worker and the sweep's and ``maxminq
    experiment``'s refusal before any (``maxminq.experiments.workers.session_function_error``)."""
    return (
        f"define {subject or short} in a module of yours (e.g. my_ops.py on PYTHONPATH) and "
        f"name it 'my_ops:{short}'"
    )


def load_operator(reference: str) -> Callable[..., Any]:
    """The G function a string names: a key of ``OPERATORS`` (``'maxmin'``), or
    ``'module:function'`` for one of your own, imported as Python imports it (from ``sys.path``:
    the current folder under ``python -m maxminq``, else ``PYTHONPATH=.``), e.g.
    ``'my_ops:median_q'``. Config files and the command line name an operator this way.

    Raises ValueError naming ``reference`` and what to do when it names nothing: no such
    operator, module or attribute, an attribute that is not callable, or a module that fails
    when imported (its error's type, first line and file:line, in one line).
    """
    if not isinstance(reference, str) or not reference.strip():
        raise ValueError(f"operator must be a name or 'module:function', got {reference!r}")
    if ":" not in reference:
        if reference not in OPERATORS:
            known = ", ".join(sorted(OPERATORS))
            raise ValueError(
                f"unknown operator {reference!r}; choose one of: {known}, or name one of your "
                "own as 'module:function'"
            )
        return OPERATORS[reference]
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"operator {reference!r}: write 'module:function', e.g. 'my_ops:median_q'")
    if module_name.startswith("."):  # import_module's TypeError: no package to be relative to
        raise ValueError(
            f"operator {reference!r}: name the module in full, without a leading dot "
            f"(e.g. 'my_package.my_ops:median_q'); a relative name has no package to start from"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:  # ModuleNotFoundError, or the module's own failed import
        missing = err.name if isinstance(err, ModuleNotFoundError) else None
        if not missing or not (module_name + ".").startswith(missing + "."):
            # found, but its own import failed (a module it imports is not installed, or it
            # raised ImportError): not a PYTHONPATH matter; one line, where it failed
            install = f"; install {missing} (a module it imports)" if missing else ""
            raise ValueError(
                f"operator {reference!r}: importing {module_name!r} failed: "
                f"{_import_failure(err)}{install}"
            ) from None
        raise ValueError(
            f"operator {reference!r}: cannot import {module_name!r} ({err}); put the folder "
            f"holding it on PYTHONPATH (PYTHONPATH=. for the current folder, as python -m "
            "maxminq does), or install it"
        ) from None
    except Exception as err:  # the module's own failure at import: a SyntaxError, a raise
        raise ValueError(
            f"operator {reference!r}: importing {module_name!r} failed: {_import_failure(err)}"
        ) from None
    g: Any = module
    for part in attribute.split("."):
        if not hasattr(g, part):
            raise ValueError(_missing_attribute(reference, module_name, attribute))
        found = inspect.getattr_static(g, part)
        if (
            isinstance(g, type)
            and inspect.isfunction(found)
            and found.__qualname__ == f"{g.__qualname__}.{part}"  # defined in the class body
        ):
            # 'm:Cls.g' for a method taking self: called as G(q), q went in for self
            raise ValueError(
                f"operator {reference!r} is a method of class {g.__name__} (it takes self "
                "first); make it a @staticmethod, or name a function or an instance"
            )
        g = getattr(g, part)
    if isinstance(g, type):  # callable, but calling it makes an instance, not G's values
        raise ValueError(
            f"operator {reference!r} is a class, not a G function; name a function (or an "
            "instance of a class with __call__), e.g. 'my_ops:median_q'"
        )
    if not callable(g):
        raise ValueError(f"operator {reference!r} is a {type(g).__name__}, not a G function")
    return g


def _first_line(err: BaseException) -> str:
    """An exception's message up to its first line break: torch's 'received an invalid
    combination of arguments' goes on to list every signature, one a line."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else ""


def raised_in_module(err: BaseException, module: str | None) -> bool:
    """Whether ``err`` passed through a frame of the (imported) ``module``'s file: a G of
    one's own that raises during a run is the user's failure, told in one line, while an
    exception from the library's code keeps its traceback (a bug there)."""
    where = getattr(sys.modules.get(module or ""), "__file__", None)
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != where:
        tb = tb.tb_next
    return where is not None and tb is not None


def _import_failure(err: BaseException) -> str:
    """One line for an exception raised while importing a user's module: its type and first
    line, and where (``my_ops.py, line 3``: a SyntaxError's, else the deepest frame's)."""
    import traceback

    text = _first_line(err)
    if isinstance(err, SyntaxError):
        where = f"{err.filename}, line {err.lineno}"
        text = err.msg or text
    else:
        frames = traceback.extract_tb(err.__traceback__)
        where = f"{frames[-1].filename}, line {frames[-1].lineno}" if frames else ""
    message = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return f"{message} ({where})" if where else message


def operator_reference(g: str | Callable[..., Any]) -> str | None:
    """The string ``load_operator`` turns back into ``g``: a name of ``OPERATORS`` for the
    library's own functions, ``'module:qualname'`` for a module-level function of your own,
    None for one that cannot be imported by name (a lambda, a closure, a function defined in
    ``__main__`` or a notebook), which a saved run or a config cannot name."""
    if isinstance(g, str):
        return g
    name = next((key for key, fn in OPERATORS.items() if fn is g), None)
    if name is not None:
        return name
    module, qualname = getattr(g, "__module__", None), getattr(g, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        return None
    reference = f"{module}:{qualname}"
    try:
        loaded = load_operator(reference)
    except ValueError:
        return None
    # a classmethod is a new bound method at each lookup: equal to g, not g itself
    return reference if loaded is g or (inspect.ismethod(g) and loaded == g) else None


def unnamed_operator(g: Any, keyword: str = "operator") -> str:
    """Why the callable ``g``, which :func:`operator_reference` cannot name, cannot be named,
    and what to pass instead as ``keyword`` (the Python argument: ``operator`` of TrainConfig,
    ``algorithm`` of the classic experiments): one line for the messages of the tools that
    must record G by name (a run folder for ``--resume``, a CSV, a sweep's run ids)."""
    import functools

    if isinstance(g, functools.partial):  # G with its keywords bound
        inner = operator_reference(g.func)
        bound = ", ".join(f"{k!r}: {v!r}" for k, v in g.keywords.items())
        fix = (
            f"pass {keyword}={inner!r}, op_kwargs={{{bound}}}"
            if inner is not None and not g.args
            else "pass the function itself (or 'module:function') and its keywords as op_kwargs"
        )
        return f"a functools.partial cannot be named for import; {fix}"
    if isinstance(g, type):  # G(q) would make an instance
        return (
            f"{g.__name__!r} is a class, not a G function; pass a function (or an instance "
            "of a class with __call__, as 'module:name')"
        )
    if not hasattr(g, "__qualname__"):  # an instance with __call__
        return (
            f"a callable {type(g).__name__} object cannot be named for import from the object "
            "itself; pass 'module:name', the name it has in its module"
        )
    module, qualname = getattr(g, "__module__", None), g.__qualname__
    named = module and module != "__main__" and "<" not in qualname
    if named and getattr(g, "__self__", None) is None:
        try:
            load_operator(f"{module}:{qualname}")
        except ValueError:
            pass
        else:  # a module-level name that now holds another object: the module reloaded
            return (
                f"'{module}:{qualname}' now names another object than the function given (its "
                f"module was reloaded, or the function redefined, since it was taken); pass "
                f"{keyword}='{module}:{qualname}' (or the module's function as it is now)"
            )
    return (
        f"G function {g.__name__!r} cannot be named for import (a lambda, a closure or a function "
        "defined in __main__: a script run as a program, a notebook, an interactive session); "
        "define it at the top level of a module of yours (e.g. my_ops.py on PYTHONPATH) and "
        "pass it, or 'my_ops:function'"
    )


def check_keywords(g: Callable[..., Any], label: str, params: dict[str, Any]) -> None:
    """TypeError naming a keyword of ``params`` that the G function ``g`` (called ``label``)
    does not take, and the ones it does, before G is called: a misspelt ``lamb=`` for
    ``lam`` failed inside G with Python's 'unexpected keyword argument', under advice about
    torch tensors. Nothing is checked for a G taking ``**kwargs`` or without a signature."""
    try:
        parameters = list(inspect.signature(g).parameters.values())[1:]  # after q
    except (TypeError, ValueError):  # a builtin or C function: no signature to read
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    names = [p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY]
    unknown = [key for key in params if key not in names]
    by_position = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    if unknown and unknown[0] in by_position:  # def g(q, lam, /): it has lam, not by keyword
        raise TypeError(
            f"operator {label!r} takes {unknown[0]!r} by position only (a parameter before "
            "'/'); make it a keyword parameter (drop the '/') to give it by name"
        )
    if unknown:
        takes = f"its parameters: {', '.join(names)}" if names else "it takes none"
        raise TypeError(f"operator {label!r} has no parameter {unknown[0]!r} ({takes})")


def operator_params(name: str, caller: str = "operator_params") -> dict[str, bool]:
    """The keyword parameters of operator ``name``, each mapped to whether it is required
    (no default: ``bias_corrected``'s sigma), e.g. ``{"sigma": True}``. ValueError for an
    unknown name, its message starting with ``caller``: the function the user called."""
    params = list(inspect.signature(_operator(name, f"{caller}: ")).parameters.values())[1:]
    return {p.name: p.default is None for p in params}


def action_values(name: str, q: Array) -> Array:
    """The per-action estimate that operator ``name`` maximises: ``G = max_a`` of it.

    Maxmin: ``Q^min(s, a) = min_i Q^i(s, a)`` (Lan et al. 2020, Algorithm 1, which also acts
    eps-greedily on it); Ensemble and Averaged: the mean over members / snapshots; Historical
    Best: the max over snapshots; Q-learning: the one table. Shape (..., N, A) -> (..., A).
    Double, Weighted Double and Bias-corrected Q select with one table (or correction) and
    evaluate with another, so they have no such estimate: ValueError.
    """
    _operator(name, "action_values: ")  # a typo is not an operator without an estimate
    if name not in _ACTION_VALUES:
        raise ValueError(f"action_values: {name!r} has no per-action estimate; "
                         f"one of {', '.join(_ACTION_VALUES)}")  # fmt: skip
    q = _check(q, name, members=1 if name == "q_learning" else None)
    return _ACTION_VALUES[name](q)


_NUMBERS = (int, float)  # tuples: isinstance is faster than with int | float (per transition)
_ARRAYS = (np.ndarray, np.generic)


def td_target(reward: Array, discount: float, terminated: Array, next_value: Array) -> Array:
    """One-step target ``r + gamma * (1 - terminated) * G(Q_s')`` (Lan et al. 2020, Y^GQ).

    ``terminated`` marks true terminal transitions only: a time-limit truncation
    still bootstraps, so it must be passed as not terminated. A terminal transition's target
    is its reward even where G is infinite or NaN (``0 * inf`` would be NaN). The three
    arrays must have one shape (no silent broadcasting); ``terminated`` holds 0 or 1 or is
    boolean (any other value is a ValueError: it is a flag, not a probability);
    ``0 <= discount <= 1``.
    """
    try:  # one number (an array gave NumPy's 'truth value of an array is ambiguous')
        gamma = math.nan if isinstance(discount, bool | str) else float(discount)
    except (TypeError, ValueError):
        gamma = math.nan
    if getattr(discount, "ndim", 0) != 0 or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"td_target: discount must be one number in [0, 1], got {discount!r}")
    shapes = [  # None: neither a NumPy or torch array nor a Python number (bool is an int)
        ()  # first: the per-transition loop passes Python floats (np.float64 is one too)
        if isinstance(x, _NUMBERS)
        else tuple(x.shape)
        if isinstance(x, _ARRAYS) or _is_torch(x)
        else None
        for x in (reward, terminated, next_value)
    ]
    if None in shapes:  # a list was read as one number ("can't multiply sequence by ..."),
        # a pandas column failed in pandas ("the truth value of a Series is ambiguous")
        i = shapes.index(None)
        raise ValueError(
            f"td_target: {('reward', 'terminated', 'next_value')[i]} must be a NumPy array, "
            f"a torch tensor or a number, got {type((reward, terminated, next_value)[i]).__name__}"
        )
    if len(set(shapes)) > 1:
        raise ValueError(
            "td_target: reward, terminated and next_value must have one shape, got "
            + ", ".join(map(str, shapes))
        )
    arrays = [x for x in (reward, terminated, next_value) if hasattr(x, "shape")]
    if len({_is_torch(x) for x in arrays}) > 1:  # else NumPy's or torch's puzzling TypeError
        raise ValueError(
            "td_target: reward, terminated and next_value must be all torch tensors or all "
            "NumPy arrays (or Python numbers), got "
            + ", ".join(type(x).__name__ for x in (reward, terminated, next_value))
        )
    # A terminal transition's target is its reward whatever G is: zeroing G there (rather
    # than multiplying by 1 - terminated) also keeps 0 * inf and 0 * NaN, a diverged
    # network's value of a terminal state, out of the target, as operators_jit.td_target
    # does. (A boolean flag compares equal to 1 too.)
    done = terminated == 1
    # A flag of 0.5 (or NaN, 2, -1) bootstrapped fully here, gave the reward alone in
    # operators_jit and r + gamma / 2 * G in neither: refused. Boolean flags (done's own
    # dtype) need no look; 0/1 flags equal done (NaN equals nothing): one comparison (on a
    # GPU, one synchronisation; Tensor.equal is the cheapest on CPU, about 2 us).
    if hasattr(terminated, "dtype"):
        if terminated.dtype != done.dtype and not (
            terminated.equal(done.to(terminated.dtype))
            if _is_torch(terminated)
            else not (terminated != done).any()
        ):
            bad = terminated[~((terminated == 0) | done)].reshape(-1)[0]
            raise ValueError(f"td_target: terminated must be 0 or 1 (or boolean), got {bad}")
    elif not (done or terminated == 0):  # plain numbers
        raise ValueError(f"td_target: terminated must be 0 or 1 (or boolean), got {terminated}")
    if _is_torch(next_value):
        if not _is_torch(done):  # a plain-number flag (~True is the integer -2)
            done = next_value.new_tensor(float(done)) == 1
        g = next_value.where(~done, 0)  # no .any(): that would sync a GPU
    elif isinstance(done, np.ndarray):
        g = np.where(done, 0, next_value) if done.any() else next_value
    else:  # plain numbers (a per-transition loop: no NumPy call on this path)
        g = 0.0 if done else next_value
    return reward + discount * g
