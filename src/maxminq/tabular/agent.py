"""Shared machinery of the vectorised tabular and tile-coded Generalized Q-learning agents.

The toy MDP (``maxminq.tabular.toy_mdp``) and noisy Mountain Car (``maxminq.linear``) run
R independent runs as "lanes" of arrays (one kernel call runs one lane's whole run; an
operator called with parameters steps all lanes in lockstep instead). Every lane carries
its own random stream, a SplitMix64 counter seeded from
``np.random.SeedSequence(seed, spawn_key=(run,))``, so a run's trajectory does not depend
on which other runs share the batch, and a plain single-run loop that draws the same
numbers in the same order reproduces it exactly (``tests/reference_loops.py``).

An algorithm is an operator of ``maxminq.operators`` plus a way of keeping its M value
tables (Lan et al. 2020, section 6, Generalized Q-learning with N estimators and K
snapshots):

* ``estimators`` (Maxmin, Ensemble): N tables; each update trains one uniformly chosen
  table (Algorithm 1, "randomly select one i to update"); behaviour is eps-greedy on
  ``min_i Q^i`` (Maxmin, Algorithm 1) or on ``mean_i Q^i`` (Ensemble).
* ``double`` (Double Q, Weighted Double Q): two tables; the chosen table i is stacked first
  so that the operator's member 0 (selector) is Q^i and member 1 (evaluator) is Q^{1-i}
  (van Hasselt 2010). Behaviour is eps-greedy on the mean of the two.
* ``snapshots`` (Averaged, Historical Best): one learning table plus its K-1 previous
  versions, kept as a ring of K tables, stacked newest first for the operator
  (``Q(s', a; t - j)``, j = 1..K). Behaviour uses the newest table.
* ``single`` (Q-learning, Bias-corrected Q): one table.

A G function of one's own, named ``'module:function'`` (``operators.load_operator``), is an
``estimators`` algorithm with any N: N tables, each update training one uniformly chosen
table (or Algorithm 1's subset), behaviour eps-greedy on their mean (an arbitrary G gives no
per-action values to act on; the mean is Ensemble's and Double Q's choice, the same for every
G). It has no compiled twin, so it runs on the lockstep NumPy path (:func:`algorithm_spec`,
:func:`own_operator_function`).

Bootstrap values are never computed here: the kernels gather next-state action values into
an array of shape (..., M, A) in the operator's member order, and the operator from
``maxminq.operators`` (or, inside a kernel that runs a whole run, its compiled twin from
``maxminq.operators_jit``) turns them into targets before the TD update is scattered.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from maxminq import operators
from maxminq._jit import njit
from maxminq.errors import INT64_MAX, UsageError, ascii_float, closest, is_digits
from maxminq.operators_jit import operator_code

# INT64_MAX: the compiled kernels' integers are int64; a larger count (max_steps=10**30 from
# Python or a sweep config) failed in numba's type inference, a long traceback after compiling.


# Table kinds (see module docstring) and behaviour modes, as small ints for the kernels.
KIND_ESTIMATORS, KIND_DOUBLE, KIND_SNAPSHOTS, KIND_SINGLE = 0, 1, 2, 3
BEHAVE_MIN, BEHAVE_MEAN, BEHAVE_CURRENT = 0, 1, 2


@dataclass(frozen=True)
class AlgorithmSpec:
    """How one operator keeps and uses its value tables."""

    name: str
    kind: int
    behaviour: int
    fixed_n: int | None  # None: n is free (>= 1)


ALGORITHMS: dict[str, AlgorithmSpec] = {
    "q_learning": AlgorithmSpec("q_learning", KIND_SINGLE, BEHAVE_CURRENT, 1),
    "bias_corrected": AlgorithmSpec("bias_corrected", KIND_SINGLE, BEHAVE_CURRENT, 1),
    "maxmin": AlgorithmSpec("maxmin", KIND_ESTIMATORS, BEHAVE_MIN, None),
    "ensemble": AlgorithmSpec("ensemble", KIND_ESTIMATORS, BEHAVE_MEAN, None),
    "double_q": AlgorithmSpec("double_q", KIND_DOUBLE, BEHAVE_MEAN, 2),
    "weighted_double_q": AlgorithmSpec("weighted_double_q", KIND_DOUBLE, BEHAVE_MEAN, 2),
    "averaged": AlgorithmSpec("averaged", KIND_SNAPSHOTS, BEHAVE_CURRENT, None),
    "historical_best": AlgorithmSpec("historical_best", KIND_SNAPSHOTS, BEHAVE_CURRENT, None),
}
assert set(ALGORITHMS) == set(operators.OPERATORS), "every operator needs an AlgorithmSpec"


def is_own_operator(algorithm: Any) -> bool:
    """Whether ``algorithm`` names a G function of one's own, ``'module:function'`` (for
    :func:`maxminq.operators.load_operator`), rather than one of ``ALGORITHMS``."""
    return isinstance(algorithm, str) and ":" in algorithm


def algorithm_name(algorithm: Any, option: str = "--algorithms") -> Any:
    """``algorithm`` as the run functions name it: a G function given as a function (as
    ``theory.operator_bias`` and ``FiniteMDP.learn`` take it) becomes its name,
    ``operators.operator_reference`` (``'maxmin'`` for the library's own, which keeps its
    compiled kernel; ``'module:function'`` for one of your own); anything else is returned
    as it is, for :func:`resolve_algorithm` to check ('module:function' naming one of the
    library's functions, ``'maxminq.operators:double_q'``, is its library name, as
    ``FiniteMDP.learn`` and generalized-dqn take it); one defined in ``__main__`` (a
    notebook, an interactive session; at its top level or in a class there) is
    ``'__main__:name'`` (:func:`_main_reference`). A function that cannot be named (a
    lambda, a closure) is a UsageError, saying what to pass instead where the session has
    it (:func:`_unnamed_in_session`): the CSV, a sweep's run ids and its worker processes
    need a name to import."""
    if isinstance(algorithm, str) and is_own_operator(algorithm):
        # 'maxminq.operators:double_q' (or an alias in one's module) is the library's
        # operator, as FiniteMDP.learn and generalized-dqn take it: its roles and behaviour
        try:
            library = operators.operator_reference(operators.load_operator(algorithm))
        except ValueError:  # said later, naming the option (resolve_algorithm)
            return algorithm
        return library if library in ALGORITHMS else algorithm
    if isinstance(algorithm, str) or not callable(algorithm):
        return algorithm
    reference = operators.operator_reference(algorithm) or _main_reference(algorithm, option)
    if reference is None and inspect.isfunction(algorithm) and "<" in algorithm.__qualname__:
        raise UsageError(  # here a notebook's own top-level function is named: say so
            f"{option}: G function {algorithm.__name__!r} cannot be named (a lambda or a "
            "closure); define it with def at the top level of your notebook or script, or of "
            "a module of yours (e.g. my_ops.py, then 'my_ops:function'), and pass it"
        )
    if reference is None:  # the CSV, a sweep's run ids and its workers import G by name
        why = _unnamed_in_session(algorithm, option)
        raise UsageError(f"{option}: {why or operators.unnamed_operator(algorithm, 'algorithm')}")
    return reference


def _main_reference(g: Any, option: str) -> str | None:
    """``'__main__:name'`` for a function defined in ``__main__`` (a notebook's cell, an
    interactive session, the script that runs), at its top level or in a class there
    (``'__main__:Ops.median_q'``, a staticmethod or classmethod): the run functions call G
    in this process, where ``__main__`` has it, as they took the string; the results'
    ``algorithm`` column names it so. None for anything else (a lambda, a closure: no name
    to give). A function redefined since it was taken (the cell run again), or whose name
    is gone (deleted), is a UsageError naming ``option``: the name no longer holds it."""
    module, qualname = getattr(g, "__module__", None), getattr(g, "__qualname__", None)
    if module != "__main__" or not isinstance(qualname, str) or "<" in qualname:
        return None
    current: Any = sys.modules.get("__main__")
    for part in qualname.split("."):
        current = getattr(current, part, None)
    if current is g or (inspect.ismethod(g) and current == g):  # a classmethod: bound anew
        return f"__main__:{qualname}"
    if inspect.ismethod(g):  # a method of an instance: no name in __main__ holds it
        return None
    if callable(current):
        raise UsageError(
            f"{option}: G function {qualname!r} was redefined since it was taken (its cell "
            f"run again, say); pass {qualname} as it is now"
        )
    raise UsageError(
        f"{option}: G function {qualname!r} is no longer defined in __main__ under that name "
        "(deleted, or the name holds something else now); define it again and pass it"
    )


def _main_name(g: Any) -> str | None:
    """The one public name of ``__main__`` bound to the object ``g`` (a callable object of
    a notebook, ``g = MedianG()``), else None."""
    main = sys.modules.get("__main__")
    names = [k for k, v in vars(main).items() if v is g and not k.startswith("_")] if main else []
    return names[0] if len(names) == 1 else None


def _unnamed_in_session(g: Any, option: str) -> str | None:
    """What to pass instead of a G that a notebook or session holds but cannot be named by
    itself: a functools.partial of one of its functions (the function and op_kwargs), a
    callable object bound to a name of ``__main__`` (``'__main__:name'``); else None."""
    import functools

    if isinstance(g, functools.partial) and not g.args:
        try:
            inner = _main_reference(g.func, option)
        except UsageError:
            return None
        if inner is None:
            return None
        bound = ", ".join(f"{k!r}: {v!r}" for k, v in g.keywords.items())
        return (
            f"a functools.partial cannot be named; pass {option}={inner.partition(':')[2]}, "
            f"op_kwargs={{{bound}}}"
        )
    if not isinstance(g, type) and not hasattr(g, "__qualname__"):  # an instance: __call__
        name = _main_name(g)
        if name is not None:
            return (
                f"a callable {type(g).__name__} object cannot be named from the object itself; "
                f"pass {option}='__main__:{name}' (its name in this session)"
            )
    return None


def algorithm_spec(algorithm: str) -> AlgorithmSpec:
    """The :class:`AlgorithmSpec` of a library name or of a G of one's own
    (``'module:function'``: N estimator tables, one trained per update as Maxmin's and
    Ensemble's, behaviour eps-greedy on their mean, as Ensemble and Double Q; any N >= 1).
    KeyError for an unknown library name."""
    if is_own_operator(algorithm):
        return AlgorithmSpec(algorithm, KIND_ESTIMATORS, BEHAVE_MEAN, None)
    return ALGORITHMS[algorithm]


def _unknown_algorithm(algorithm: Any, option: str) -> UsageError:
    """The one-line error for a name that is neither a library algorithm nor 'module:function'
    (with the library name it most likely meant, ``maxmni`` -> maxmin)."""
    known = ", ".join(sorted(ALGORITHMS))
    close = closest(algorithm, list(ALGORITHMS)) if isinstance(algorithm, str) else None
    meant = f" (did you mean {close}?)" if close else ""
    return UsageError(
        f"{option}: unknown algorithm {algorithm!r}{meant}; choose from {known}, or name a G "
        "function of your own as 'module:function'"
    )


def _module_importable(name: str) -> bool:
    """Whether a module ``name`` can be found on ``sys.path`` (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a dotted name whose parent is no package, ...
        return False


def _load_own(algorithm: str, option: str) -> Callable[..., Any]:
    """``operators.load_operator(algorithm)`` for a G of one's own, its ValueError (also the
    module's own failure at import: a SyntaxError, an error it raises) as one UsageError
    naming ``option``; a module that cannot be found whose name is close to a
    library operator's (``bias_correctd:x``) is most likely that operator mistyped: said."""
    module = algorithm.partition(":")[0]
    try:
        return operators.load_operator(algorithm)
    except ValueError as err:
        close = None if not module or _module_importable(module) else closest(
            module, list(ALGORITHMS)
        )  # fmt: skip
        if close:  # the command line's syntax, or a config's (ConfigWordedError)
            raise ConfigWordedError(
                f"{option}: {err}; did you mean the library's {close} (written "
                f"{close}[:N][:key=value])?",
                f"{err}; did you mean the library's {close} (algorithm: {close})?",
            ) from None
        raise UsageError(f"{option}: {err}") from None


#: The value shapes a G of one's own is tried on before any work (``operators.own_operator``):
#: one state's (N, A) and the lockstep paths' batches, (lanes, N, A) and (lanes, batch, N, A),
#: with A = 8 (the toy MDP's state B) and 3 (Mountain Car); ``n`` is put in for N.
_OWN_TRY_SHAPES = ((8,), (2, 8), (3,), (2, 2, 3))


def own_operator_function(
    algorithm: str, n: int, op_kwargs: Mapping[str, Any] | None = None,
    option: str = "--algorithms",
) -> Callable[[np.ndarray], np.ndarray]:  # fmt: skip
    """The G function ``algorithm`` (``'module:function'``) names, imported by
    ``operators.load_operator`` and tried once by ``operators.own_operator`` on NumPy zeros
    of the shapes it is called with here (N = ``n`` members), with ``op_kwargs``: returns
    ``q -> G(q, **op_kwargs)`` as float64 NumPy. Any failure (no such module or function, a
    G that fails on NumPy input or does not map (..., N, A) to (...)) is a one-line
    UsageError naming ``option`` and the operator."""
    kwargs = dict(op_kwargs or {})
    g = _load_own(algorithm, option)
    shapes = [(*s[:-1], int(n), s[-1]) for s in _OWN_TRY_SHAPES]
    try:  # messages name G as the user named it: 'my_ops:median_q'
        wrapped = operators.own_operator(g, shapes, algorithm, **kwargs)
    except Exception as err:  # G's own failures too: the user's code, one line here
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        if not text.startswith(f"operator {algorithm!r}"):  # G's own error (a ValueError)
            text = f"operator {algorithm!r} failed on NumPy zeros of shape {shapes[0]}: {text}"
        raise UsageError(f"{option}: {text}") from None
    return lambda q: np.ascontiguousarray(wrapped(q, **kwargs))


def resolve_algorithm(
    algorithm: str, n: int, option: str = "--algorithms", n_option: str | None = None
) -> AlgorithmSpec:
    """Validate ``algorithm`` and its member count ``n``; raise UsageError naming ``option``
    (``n_option`` for a bad ``n``; by default ``option`` too, as ``--algorithms`` sets both).
    A G of one's own (``'module:function'``) must import (:func:`own_operator_function`
    tries it, once its ``op_kwargs`` are known)."""
    if is_own_operator(algorithm):
        spec = algorithm_spec(algorithm)
    else:
        found = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else None
        if found is None:
            raise _unknown_algorithm(algorithm, option)
        spec = found
    n_opt = n_option or option
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise UsageError(f"{n_opt}: {algorithm} needs a whole number of estimators n >= 1")
    if n > INT64_MAX:  # else "Maximum allowed dimension exceeded" from NumPy, naming nothing
        raise UsageError(f"{n_opt}: {algorithm} needs n <= {INT64_MAX} estimators, got {n}")
    if spec.fixed_n is not None and n != spec.fixed_n:
        raise UsageError(f"{n_opt}: {algorithm} uses exactly n = {spec.fixed_n}, got {n}")
    if is_own_operator(algorithm):  # importable now; tried with its op_kwargs by the checks
        _load_own(algorithm, option)
    return spec


def op_params_text(op_kwargs: dict[str, float]) -> str:
    """``{"sigma": 0.5}`` -> ``"sigma=0.5"`` (the ``--algorithms`` spelling)."""
    return ",".join(f"{k}={v:g}" for k, v in sorted(op_kwargs.items()))


class ConfigWordedError(UsageError):
    """A UsageError whose message shows command-line syntax (``bias_corrected:sigma=1``),
    carrying ``config_message``: the same without the option's name, in a sweep config's
    words (``op_kwargs: {sigma: 1}``), which ``experiments.registry`` shows instead of
    rewriting the message."""

    def __init__(self, message: str, config_message: str | None = None) -> None:
        super().__init__(message)
        self.config_message = config_message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles with both messages (worker pools, Ray)."""
        return (type(self), (str(self), self.config_message))


def _number(algorithm: str, key: str, value: Any, option: str) -> float:
    """Operator parameter ``key`` as a finite float, else UsageError naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise UsageError(f"{option}: {algorithm} {key} must be a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise UsageError(f"{option}: {algorithm} {key} must be finite, got {value!r}")
    return float(value)


def check_op_kwargs(
    algorithm: str, op_kwargs: Any, option: str = "--op-kwargs"
) -> dict[str, float]:
    """Validate the operator parameters ``op_kwargs`` of (a valid) ``algorithm``: known names,
    finite numbers, the operator's own range checks, the required ones given. Returns them as
    floats (a G of one's own: whole numbers given as ints stay ints, for a G that indexes or
    counts with them); raises UsageError naming ``option``."""
    if op_kwargs is not None and not isinstance(op_kwargs, Mapping):
        raise UsageError(f"{option}: op_kwargs must be a mapping, got {op_kwargs!r}")
    kwargs = dict(op_kwargs or {})
    if is_own_operator(algorithm):  # its names: own_operator_function's try on them
        for key, value in kwargs.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise UsageError(f"{option}: {algorithm} parameters need names, got {key!r}")
            number = _number(algorithm, key, value, option)
            # a whole number stays one (an index, a count: G may need an int); others floats
            is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            kwargs[key] = int(value) if is_int else number
        return kwargs
    params = operators.operator_params(algorithm)  # name -> required
    allowed = tuple(params)
    for key, value in kwargs.items():
        if key not in allowed:
            takes = f"takes {', '.join(allowed)}" if allowed else "takes no parameters"
            raise UsageError(f"{option}: {algorithm} {takes}, got {key!r}")
        kwargs[key] = _number(algorithm, key, value, option)
    for key in (k for k, required in params.items() if required):
        if key not in kwargs:
            zero = f"with {key} = 0 it is q_learning"
            raise ConfigWordedError(
                f"{option}: {algorithm} needs {key} (e.g. {algorithm}:{key}=1; config: "
                f"op_kwargs: {{{key}: 1}}); {zero}",
                f"{algorithm} needs {key} (e.g. op_kwargs: {{{key}: 1}}); {zero}",
            )
    members = ALGORITHMS[algorithm].fixed_n or 1
    try:  # the operator's own range checks (sigma >= 0, c > 0), on a dummy input
        operators.bootstrap(algorithm, np.zeros((members, 2)), **kwargs)
    except ValueError as err:
        raise UsageError(f"{option}: {err}") from None
    return kwargs


def check_algorithm_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Check the ``algorithm``, ``n`` and ``op_kwargs`` of a run's settings (a run kind's
    ``check_settings``); returns the other settings, less ``progress`` and ``seed``."""
    s = dict(settings)
    s.pop("progress", None)
    s.pop("seed", None)
    algorithm, n = s.pop("algorithm", None), s.pop("n", None)
    resolve_algorithm(algorithm, n)
    op_kwargs = check_op_kwargs(algorithm, s.get("op_kwargs"))
    if is_own_operator(algorithm):
        own_operator_function(algorithm, n, op_kwargs)
    if "update_members" in s:
        check_update_members(algorithm, n, s["update_members"])
    return s


def parse_algorithm(
    token: str, default_n: Mapping[str, tuple[int, ...]], option: str = "--algorithms"
) -> list[tuple[str, int, dict[str, float]]]:
    """Parse one ``--algorithms`` token, ``name[:N][:key=value[,key=value]]``: ``maxmin:4``,
    ``bias_corrected:sigma=0.5``, ``weighted_double_q:c=10``; ``name`` may be a G of one's
    own, ``module:function`` (``my_ops:median_q:4:k=2``: the part after the first colon is
    the function unless it is N or key=value; after a library operator's name only when a
    module of that name can be imported: ``averaged:g`` is the library's averaged with a bad N
    otherwise). Without N, a fixed-N operator uses its N and
    the others ``default_n[name]`` (one entry per N; N = 2 if absent). A G of one's own is
    imported and tried now (:func:`own_operator_function`). Raises UsageError."""
    name, *parts = token.split(":")
    if (
        parts
        and "=" not in parts[0]
        and not is_digits(parts[0])
        and (name not in ALGORITHMS or _module_importable(name))
    ):  # 'module:function', a G of one's own (a module may share a library operator's name)
        name = f"{name}:{parts.pop(0)}"
    if name not in ALGORITHMS and not is_own_operator(name):
        raise _unknown_algorithm(name, option)
    spec = algorithm_spec(name)
    own = is_own_operator(name)
    ns: tuple[int, ...] | None = None
    kwargs: dict[str, Any] = {}
    for part in parts:
        if "=" in part:
            for item in part.split(","):
                key, eq, text = item.partition("=")
                value: float | int | None
                try:
                    value = ascii_float(text) if eq else None
                except ValueError:
                    value = None
                if value is not None and own and text.strip().lstrip("+-").isdigit():
                    value = int(text)  # 'k=1' for a G of one's own: the whole number 1
                if value is None or not key:
                    raise UsageError(f"{option}: expected key=number in {token!r}, got {item!r}")
                if key in kwargs:
                    raise UsageError(f"{option}: {key} given twice in {token!r}")
                kwargs[key] = value
        elif ns is None and is_digits(part) and int(part) >= 1:
            ns = (int(part),)
        else:
            raise UsageError(
                f"{option}: expected name[:N][:key=value] with N a whole number >= 1, got {token!r}"
            )
    if ns is None:
        ns = (spec.fixed_n,) if spec.fixed_n is not None else default_n.get(name, (2,))
    kwargs = check_op_kwargs(name, kwargs, option)
    out = []
    for n in ns:
        resolve_algorithm(name, n, option)
        if is_own_operator(name):
            own_operator_function(name, n, kwargs, option)
        out.append((name, n, kwargs))
    return out


def bootstrap_values(algorithm: str, gathered: np.ndarray, op_kwargs: dict[str, Any]) -> np.ndarray:
    """Apply the shared operator to gathered next-state values of shape (..., M, A)."""
    return np.ascontiguousarray(operators.bootstrap(algorithm, gathered, **op_kwargs))


def bootstrap_function(
    algorithm: str, n: int, op_kwargs: dict[str, Any], option: str = "--algorithms"
) -> Callable[[np.ndarray], np.ndarray]:
    """``gathered -> G`` for the lockstep paths: :func:`bootstrap_values` of a library
    operator, or the G of one's own (imported and tried once, :func:`own_operator_function`,
    raising UsageError naming ``option``, the one that names G)."""
    if is_own_operator(algorithm):
        return own_operator_function(algorithm, n, op_kwargs, option)
    return lambda gathered: bootstrap_values(algorithm, gathered, op_kwargs)


def kernel_operator_code(algorithm: str, op_kwargs: dict[str, Any]) -> int:
    """``operators_jit.operator_code``, or -1 (the lockstep NumPy path) for a G of one's own,
    which has no compiled twin."""
    if is_own_operator(algorithm):
        return -1
    return operator_code(algorithm, op_kwargs)


def check_positive_int(
    value: Any, option: str, minimum: int = 1, maximum: float = INT64_MAX
) -> int:
    """Return ``value`` as int if it is a whole number from ``minimum`` to ``maximum`` (by
    default ``INT64_MAX``), else raise UsageError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise UsageError(f"{option}: expected a whole number >= {minimum}, got {value!r}")
    if value > maximum:
        raise UsageError(f"{option}: expected a whole number <= {maximum}, got {value!r}")
    return int(value)


def check_run_offset(run_offset: Any, runs: int, option: str = "--run-offset") -> int:
    """``run_offset`` as int: a whole number >= 0 whose run ids ``run_offset .. run_offset +
    runs - 1`` fit in int64 (past it NumPy made them floats: two runs got one id and, through
    :func:`lane_seeds`, one random stream); raises UsageError naming ``option``."""
    # (no int64 bound here: the run ids' own check below names the range they must stay in)
    offset = check_positive_int(run_offset, option, minimum=0, maximum=math.inf)
    if offset + int(runs) > 2**63:
        raise UsageError(
            f"{option}: run ids {offset} .. {offset} + {runs} - 1 must stay below 2**63"
        )
    return offset


def check_update_members(
    algorithm: str, n: int, value: Any, option: str = "--update-members"
) -> int:
    """``update_members``, the size of Algorithm 1's update subset S: a whole number from 1
    to n, above 1 only for the operators with n estimators (maxmin, ensemble); raises
    UsageError naming ``option``."""
    u = check_positive_int(value, option)
    if u > 1 and algorithm_spec(algorithm).kind != KIND_ESTIMATORS:
        raise UsageError(
            f"{option}: {algorithm} updates one table per step (only maxmin, "
            f"ensemble and a G of your own ('module:function') update a subset of their n "
            f"estimators), got {u}"
        )
    if u > n:
        raise UsageError(f"{option}: {algorithm} has n = {n} estimators, got {u}")
    return u


def check_float_list(
    values: Any, option: str, *, positive: bool, nonzero: bool = False, maximum: float = math.inf
) -> list[float]:
    """``values`` (one number or a sequence; strings from the command line too) as floats,
    each finite, > 0 if ``positive`` else >= 0 (any non-zero number if ``nonzero``), at most
    ``maximum`` and given once (a repeated value would repeat its rows); raises UsageError."""
    vals = [values] if np.ndim(values) == 0 else list(values)
    if not vals:
        raise UsageError(f"{option}: expected at least one number, got an empty list")
    out: list[float] = []
    for v in vals:
        try:
            x = ascii_float(v)
        except (TypeError, ValueError):
            raise UsageError(f"{option}: expected numbers, got {v!r}") from None
        bad = not math.isfinite(x) or (x <= 0 if positive else x < 0 and not nonzero)
        if bad or (nonzero and x == 0) or x > maximum:
            need = "> 0" if positive else ("non-zero" if nonzero else ">= 0")
            need += f" and <= {maximum:g}" if maximum < math.inf else ""
            raise UsageError(f"{option}: every value must be finite and {need}, got {v!r}")
        if x in out:
            raise UsageError(f"{option}: {x:g} is given twice; give each value once")
        out.append(x)
    return out


def check_real(value: Any, option: str, minimum: float = -math.inf, strict: bool = False) -> float:
    """Return ``value`` as float if it is a finite number >= ``minimum`` (> if ``strict``),
    else raise UsageError (an infinite step size or initial value only gave NaN results)."""
    need = "a finite number" + (f" {'>' if strict else '>='} {minimum:g}" if minimum > -math.inf
                                else "")  # fmt: skip
    try:
        x = math.nan if isinstance(value, bool) else ascii_float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or x < minimum or (strict and x == minimum):
        raise UsageError(f"{option}: expected {need}, got {value!r}")
    return x


def check_probability(value: Any, option: str) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise UsageError."""
    try:
        x = ascii_float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{option}: expected a number in [0, 1], got {value!r}") from None
    if not 0.0 <= x <= 1.0:
        raise UsageError(f"{option}: expected a number in [0, 1], got {value!r}")
    return x


def check_own_params(
    algorithm: str, params: Mapping[str, Any], defaults: Mapping[str, Any], what: str
) -> None:
    """From Python: a run function's keyword that is none of its settings but a parameter of
    the G of one's own ``algorithm`` names (``run_toy_mdp(..., lam=0.3)``) is a UsageError
    saying it goes in ``op_kwargs={'lam': ...}``; anything else is left to
    :func:`agent_params`' check (the error it gave named no way out)."""
    if not is_own_operator(algorithm):
        return
    unknown = sorted(set(params) - set(defaults) - set(OPTIONAL_PARAMS))
    if not unknown:
        return
    try:
        names = list(inspect.signature(_load_own(algorithm, "algorithm")).parameters)[1:]
    except (TypeError, ValueError):  # no signature to read (a builtin, a C function)
        return
    theirs = [k for k in unknown if k in names]
    if theirs:
        given = ", ".join(f"{k!r}: {params[k]!r}" for k in theirs)
        raise UsageError(
            f"{what}: unknown parameter(s) {unknown}; the parameters of the G function "
            f"{algorithm!r} go in op_kwargs={{{given}}}"
        )


#: Parameters of the tabular and tile-coded runs without an entry in their defaults: absent
#: from a run's settings unless given (so the settings, and sweep run ids, of runs made
#: before ``update_members`` existed stay as they were).
OPTIONAL_PARAMS = ("op_kwargs", "update_members")


def cli_option(key: str) -> str:
    """The command-line option that sets a run function's parameter ``key`` (``step_size`` ->
    ``--step-size``; ``algorithm`` and ``n`` -> ``--algorithms``): how the checks name a bad
    value for the command line and a sweep (``experiments.registry`` reads the option back
    as the config key)."""
    return "--algorithms" if key in ("algorithm", "n") else "--" + key.replace("_", "-")


def api_parameter(key: str) -> str:
    """The run function's own keyword ``key`` itself: how the checks name a bad value when
    the run function is called from Python (``runs: expected ...``, not ``--runs``)."""
    return key


#: How a run's checks name a bad value: :func:`cli_option` or :func:`api_parameter`.
Names = Callable[[str], str]


def agent_params(
    params: dict[str, Any],
    defaults: dict[str, Any],
    what: str,
    counts: tuple[str, ...],
    names: Names = cli_option,
) -> dict[str, Any]:
    """``params`` over ``defaults`` (plus any of ``OPTIONAL_PARAMS``, which the caller checks
    with the algorithm), checked: unknown names, ``epsilon`` and ``gamma`` in [0, 1], the
    ``counts`` whole numbers >= 1; raises UsageError naming ``names(key)``."""
    unknown = set(params) - set(defaults) - set(OPTIONAL_PARAMS)
    if unknown:
        raise UsageError(f"{what}: unknown parameter(s) {sorted(unknown)}")
    p = {**defaults, **params}
    p["epsilon"] = check_probability(p["epsilon"], names("epsilon"))
    p["gamma"] = check_probability(p["gamma"], names("gamma"))
    for key in counts:
        p[key] = check_positive_int(p[key], names(key))
    return p


@dataclass(frozen=True)
class RunSetup:
    """What the toy MDP's and Mountain Car's run functions share once their arguments are
    checked (:func:`setup_run`)."""

    name: str  # the algorithm as the results name it (a G given as a function: its name)
    spec: AlgorithmSpec
    op_kwargs: dict[str, Any]
    extra: int  # update_members - 1: the subset's members after the first
    bootstrap: Callable[[np.ndarray], np.ndarray]  # G for the lockstep path


def setup_run(
    algorithm: Any,
    n: Any,
    seed: Any,
    params: dict[str, Any],
    defaults: dict[str, Any],
    what: str,
    check: Callable[[], dict[str, Any]],
) -> tuple[RunSetup, dict[str, Any]]:
    """The prologue of a classic run function called from Python: ``algorithm`` and ``n``
    resolved, a G's own keyword given outside ``op_kwargs`` refused (:func:`check_own_params`),
    then ``check()``, the run's own checks (the settings ``p`` with its ``params`` over its
    ``defaults``), then ``op_kwargs``, ``update_members``, the G of one's own tried and the
    ``seed``: every error names the run function's parameter (:func:`api_parameter`), not
    the command line's option, which the command line's checks (``check_settings``, before
    any run) name. Returns the setup and ``p`` without ``op_kwargs`` and ``update_members``."""
    name: str = algorithm_name(algorithm, "algorithm")  # a G given as a function: its name
    spec = resolve_algorithm(name, n, "algorithm", "n")
    check_own_params(name, params, defaults, what)  # lam=0.3 for G: op_kwargs
    p = check()
    op_kwargs = check_op_kwargs(name, p.pop("op_kwargs", None), "op_kwargs")
    extra = check_update_members(name, n, p.pop("update_members", 1), "update_members") - 1
    bootstrap = bootstrap_function(name, int(n), op_kwargs, "algorithm")  # own G: tried
    lane_seeds(seed, 0, "seed")  # the seed's check now; its streams once arrays are in place
    return RunSetup(name, spec, op_kwargs, extra, bootstrap), p


# --- per-lane random streams -----------------------------------------------------------------


def lane_seeds(seed: int, runs: int | np.ndarray, option: str = "--seed") -> np.ndarray:
    """One 64-bit SplitMix64 state per run: run r gets ``SeedSequence(seed, spawn_key=(r,))``.

    This equals ``SeedSequence(seed).spawn(runs)[r]``, so run r's stream is the same however
    many runs are simulated together. ``runs`` may be a count or an array of run indices.
    ``seed`` must be a whole number >= 0 (None would draw fresh entropy: not reproducible;
    UsageError naming ``option``).
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise UsageError(f"{option}: expected a whole number >= 0, got {seed!r}")
    ids = np.arange(cast(int, runs)) if np.ndim(runs) == 0 else np.asarray(runs)
    out = np.empty(len(ids), dtype=np.uint64)
    for k, r in enumerate(ids):
        ss = np.random.SeedSequence(seed, spawn_key=(int(r),))
        out[k] = ss.generate_state(1, dtype=np.uint64)[0]
    return out


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO_M53 = 2.0**-53


@njit(inline="always")
def rng_next(state: np.ndarray, lane: int) -> np.uint64:
    """Advance lane ``lane`` of the SplitMix64 states and return its next 64-bit output."""
    z = state[lane] + _GOLDEN
    state[lane] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(inline="always")
def rng_uniform(state: np.ndarray, lane: int) -> float:
    """A uniform float in [0, 1) with 53 random bits."""
    return float(rng_next(state, lane) >> _S11) * _TWO_M53


@njit(inline="always")
def rng_int(state: np.ndarray, lane: int, n: int) -> int:
    """A uniform integer in [0, n) (floor of uniform * n; bias below 2**-40 for small n)."""
    return int(rng_uniform(state, lane) * n)


@njit(inline="always")
def rng_normal(state: np.ndarray, lane: int) -> float:
    """A standard normal by Box-Muller (two uniforms, the cosine branch)."""
    u1 = rng_uniform(state, lane)
    u2 = rng_uniform(state, lane)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


@njit(inline="always")
def greedy_random_ties(values: np.ndarray, n_actions: int, state: np.ndarray, lane: int) -> int:
    """argmax of ``values[:n_actions]`` with ties broken uniformly (one draw, only on a tie).

    NaN (a diverged table) never wins nor ties against a number; with values[0] NaN no value
    equals the "best", so the one draw is made and the last action returned. Kept as it is:
    the full Mountain Car runs of docs/classic-experiments.md (Q-learning and Averaged Q at
    sigma^2 = 50, whose weights reach NaN) act so, and another rule (a uniform action, say)
    would change their numbers. A diverged run is reported by its records instead: the toy
    MDP logs P(Left | A) and Q(A, Left) as NaN, Mountain Car the episodes hitting the cap."""
    best = values[0]
    count = 1
    for a in range(1, n_actions):
        v = values[a]
        if v > best:
            best = v
            count = 1
        elif v == best:
            count += 1
    if count == 1:
        for a in range(n_actions):
            if values[a] == best:
                return a
    k = rng_int(state, lane, count)
    for a in range(n_actions):
        if values[a] == best:
            if k == 0:
                return a
            k -= 1
    return n_actions - 1  # unreachable


@njit(inline="always")
def epsilon_greedy(
    values: np.ndarray, n_actions: int, epsilon: float, state: np.ndarray, lane: int
) -> int:
    """One uniform decides exploration; exploring draws a uniform action, else greedy."""
    if rng_uniform(state, lane) < epsilon:
        return rng_int(state, lane, n_actions)
    return greedy_random_ties(values, n_actions, state, lane)


@njit(inline="always")
def behaviour_values(
    per_member: np.ndarray, n_actions: int, mode: int, current: int, out: np.ndarray
) -> None:
    """Values eps-greedy acts on, from one state's member values ``per_member`` (M, >= A):
    min or mean over the members, or the newest table ``current`` (see module docstring)."""
    n_members = per_member.shape[0]
    for a in range(n_actions):
        if mode == BEHAVE_CURRENT:
            out[a] = per_member[current, a]
        elif mode == BEHAVE_MIN:
            v = per_member[0, a]
            for m in range(1, n_members):
                v = min(v, per_member[m, a])
            out[a] = v
        else:
            v = 0.0
            for m in range(n_members):
                v += per_member[m, a]
            out[a] = v / n_members


@njit(inline="always")
def choose_table(kind: int, n_members: int, state: np.ndarray, lane: int) -> int:
    """The table an update trains: one drawn uniformly (one draw) for the estimator and double
    kinds with M > 1, else 0 (snapshot kinds pick their slot in the update)."""
    if (kind == KIND_ESTIMATORS or kind == KIND_DOUBLE) and n_members > 1:  # noqa: SIM109
        return rng_int(state, lane, n_members)
    return 0


def update_arrays(
    n_lanes: int, batch: int, extra: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed per-lane arrays of the replay ring and the update draws (int64): buffer size
    and ring position (:func:`ring_push`), the chosen table and the ``batch`` mini-batch
    indices (:func:`draw_update`), and the update subset's ``extra`` other members and their
    ``extra * batch`` indices (:func:`draw_more_members`)."""
    buf_size = np.zeros(n_lanes, dtype=np.int64)
    buf_pos = np.zeros(n_lanes, dtype=np.int64)
    chosen = np.zeros(n_lanes, dtype=np.int64)
    idx = np.zeros((n_lanes, batch), dtype=np.int64)
    more = np.zeros((n_lanes, extra), dtype=np.int64)
    idx_more = np.zeros((n_lanes, extra * batch), dtype=np.int64)
    return buf_size, buf_pos, chosen, idx, more, idx_more


@njit(inline="always")
def ring_push(buf_pos: np.ndarray, buf_size: np.ndarray, lane: int, capacity: int) -> int:
    """The replay slot for lane ``lane``'s new transition (the oldest once the buffer is
    full); advances the lane's ring position and size."""
    p = buf_pos[lane]
    buf_pos[lane] = (p + 1) % capacity
    buf_size[lane] = min(buf_size[lane] + 1, capacity)
    return p


@njit(inline="always")
def draw_update(
    kind: int, n_members: int, state: np.ndarray, lane: int, size: int, idx: np.ndarray
) -> int:
    """The draws of one update, in the documented order: the table to train
    (:func:`choose_table`), then the mini-batch's buffer indices, uniform with replacement
    in [0, size), into ``idx[lane]``. Returns the table."""
    i = choose_table(kind, n_members, state, lane)
    for b in range(idx.shape[1]):
        idx[lane, b] = rng_int(state, lane, size)
    return i


@njit(inline="always")
def draw_more_members(
    n_members: int, state: np.ndarray, lane: int, first: int, size: int, more: np.ndarray,
    idx_more: np.ndarray,
) -> None:  # fmt: skip
    """The rest of a step's update subset (Algorithm 1's S) after ``first``, for
    ``update_members`` u > 1: members 2..u uniformly without replacement (one draw each: the
    r-th, counting up, of those not yet chosen), each followed by its own mini-batch's buffer
    indices, into ``more[lane]`` (u - 1) and ``idx_more[lane]`` (u - 1 blocks of B)."""
    extra = more.shape[1]
    if extra == 0:
        return
    batch = idx_more.shape[1] // extra
    for j in range(extra):
        r = rng_int(state, lane, n_members - 1 - j)
        for m in range(n_members):
            taken = m == first
            for k in range(j):
                taken = taken or more[lane, k] == m
            if not taken:
                if r == 0:
                    more[lane, j] = m
                    break
                r -= 1
        for b in range(batch):
            idx_more[lane, j * batch + b] = rng_int(state, lane, size)


@njit(inline="always")
def member_order(kind: int, m: int, n_members: int, chosen: int, current: int) -> int:
    """Table index stacked at position ``m`` of the operator input (see module docstring)."""
    if kind == KIND_DOUBLE:
        return chosen if m == 0 else 1 - chosen
    if kind == KIND_SNAPSHOTS:
        return (current - m) % n_members
    return m
