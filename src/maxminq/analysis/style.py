"""One colour and label per algorithm family, shared by every figure in maxminq."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Tabular names are the operator names; deep agents map onto the same family so that,
# e.g., Q-learning and DQN share a colour across all figures.
FAMILY: dict[str, str] = {
    "q_learning": "q_learning",
    "dqn": "q_learning",
    "double_q": "double_q",
    "ddqn": "double_q",
    "maxmin": "maxmin",
    "maxmin-dqn": "maxmin",
    "generalized-dqn": "generalized",
    "averaged": "averaged",
    "averaged-dqn": "averaged",
    "ensemble": "ensemble",
    "ensemble-dqn": "ensemble",
    "historical_best": "historical_best",
    "weighted_double_q": "weighted_double_q",
    "bias_corrected": "bias_corrected",
}

COLORS: dict[str, str] = {
    "q_learning": "#1f77b4",
    "double_q": "#d62728",
    "maxmin": "#2ca02c",
    "averaged": "#ff7f0e",
    "ensemble": "#9467bd",
    "historical_best": "#8c564b",
    "weighted_double_q": "#e377c2",
    "bias_corrected": "#7f7f7f",
}

LABELS: dict[str, str] = {
    "q_learning": "Q-learning",
    "dqn": "DQN",
    "double_q": "Double Q",
    "ddqn": "Double DQN",
    "maxmin": "Maxmin Q",
    "maxmin-dqn": "Maxmin DQN",
    "generalized-dqn": "Generalized DQN",
    "averaged": "Averaged Q",
    "averaged-dqn": "Averaged DQN",
    "ensemble": "Ensemble Q",
    "ensemble-dqn": "Ensemble DQN",
    "historical_best": "Historical Best Q",
    "weighted_double_q": "Weighted Double Q",
    "bias_corrected": "Bias-corrected Q",
}


#: Colours of G functions of one's own (``'module:function'``), none a family's: one each,
#: chosen by the name's CRC-32, so a name keeps its colour from run to run.
OWN_COLORS = ("#17becf", "#bcbd22", "#393b79", "#637939", "#843c39", "#7b4173")


def _own_parts(algorithm: str) -> tuple[str, str] | None:
    """``('my_ops', 'median_q')`` for a G of one's own named ``'my_ops:median_q'``, else None."""
    if ":" not in algorithm or algorithm in FAMILY or algorithm in LABELS:
        return None
    module, _, function = algorithm.partition(":")
    return module, function


def color(algorithm: str, among: Iterable[str] | None = None) -> str:
    """The colour of an algorithm's family (grey for unknown names; a G of one's own,
    ``'module:function'``, one of ``OWN_COLORS``). ``among``, the algorithms of one figure:
    its Gs of one's own take ``OWN_COLORS`` in sorted order, so up to six of them differ
    (by the name's hash alone two collide one time in six); without it, or for a G not in it,
    the hash picks."""
    if _own_parts(algorithm) is not None:
        own = sorted({str(a) for a in (() if among is None else among) if _own_parts(str(a))})
        if algorithm in own:
            return OWN_COLORS[own.index(algorithm) % len(OWN_COLORS)]
        return OWN_COLORS[zlib.crc32(algorithm.encode()) % len(OWN_COLORS)]
    return COLORS.get(FAMILY.get(algorithm, algorithm), "#333333")


#: What ``n`` counts for the families that have one: estimators (N) or snapshots (K).
SIZE_NAME: dict[str, str] = {
    "maxmin": "N",
    "ensemble": "N",
    "generalized": "N",
    "averaged": "K",
    "historical_best": "K",
}


def size_name(algorithm: str) -> str | None:
    """What ``n`` is called for ``algorithm``, as :func:`label` writes it: ``"N"``
    (estimators: Maxmin, Ensemble, a G of one's own ``'module:function'``), ``"K"``
    (snapshots: Averaged, Historical Best), None for a family without one (Q-learning,
    Double Q, ...). The one rule of legends, tables and claims."""
    if _own_parts(algorithm) is not None:
        return "N"
    return SIZE_NAME.get(FAMILY.get(algorithm, algorithm))


def colour_key(agent: str, operator: object = None) -> str:
    """What a deep setting is coloured by (:func:`color`): its agent's family; a
    generalized-dqn run, its G (``operator``: a library G its family's colour, one of one's
    own its own), so that runs of two Gs are told apart by colour as other agents are."""
    if agent == "generalized-dqn" and isinstance(operator, str) and operator:
        return operator
    return agent


def params(op_kwargs: object) -> Mapping[str, Any] | None:
    """An operator's parameters as a mapping, from a mapping or a stored run's JSON text
    (``'{"beta":20}'``); None for none (None, NaN, ``{}``, ``""``)."""
    if isinstance(op_kwargs, str):
        try:  # a table cell's placeholder ('–') is none
            op_kwargs = json.loads(op_kwargs) if op_kwargs.strip() else None
        except ValueError:
            return None
    return op_kwargs if isinstance(op_kwargs, Mapping) and op_kwargs else None


def params_text(op_kwargs: object) -> str:
    """An operator's parameters as labels give them, ``"c=10"``, ``"k=1,w=0.7"``, from a
    mapping or a stored run's JSON text; ``""`` for none (None, NaN, ``{}``, ``""``)."""
    given = params(op_kwargs)
    if given is None:
        return ""
    return ",".join(f"{k}={_value_text(v)}" for k, v in sorted(given.items()))


def _value_text(value: object) -> str:
    """A parameter's value as :func:`params_text` writes it: numbers by
    :func:`number_text`; text as it is (``mode=hard``) unless it reads as another value
    (``"5"``, ``"True"``, ``"[1, 2]"``: quoted, ``beta='5'``, not the number's ``beta=5``,
    under which the toy figures pooled the two)."""
    if _is_number(value):
        return number_text(value)  # type: ignore[arg-type]  # a real number (_is_number)
    if isinstance(value, str):
        import ast

        try:
            ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return value
        return repr(value)
    return str(value)


def number_text(value: float) -> str:
    """A number as a label or a table cell gives it (a parameter, a setting): 6
    significant digits (``1e-05``, ``0.7``) where they are the number, else all of its
    digits (``1234567``, ``0.12345678``: two settings 1234567 and 1234568 were both
    ``1.23457e+06``)."""
    short = f"{value:g}"
    if float(short) == value:
        return short
    return str(value) if isinstance(value, int) else repr(float(value))


def _is_number(value: object) -> bool:
    """Whether ``value`` is a real number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def params_key(op_kwargs: object) -> tuple[tuple[str, tuple[int, Any]], ...]:
    """The one order of operators' parameters in tables, legends and panels: none first,
    then by name and, per name, by value, numbers as numbers (``beta=5`` before
    ``beta=20`` before ``beta=100``; as text ``'{"beta":100}'`` came first), other values
    (text, lists) after the numbers, as their JSON. ``op_kwargs`` as :func:`params`
    takes it; ``sorted(settings, key=params_key)``."""
    given = params(op_kwargs)
    if given is None:
        return ()

    def value(v: object) -> tuple[int, Any]:
        if _is_number(v) and v == v:  # v == v: not NaN, which orders with nothing
            return (0, float(v))  # type: ignore[arg-type]  # a real number (_is_number)
        return (1, json.dumps(v, sort_keys=True, default=str))

    return tuple((str(k), value(v)) for k, v in sorted(given.items(), key=lambda kv: str(kv[0])))


def params_ranks(values: Iterable[object]) -> list[int]:
    """The place of each of ``values`` (operators' parameters as :func:`params` takes them)
    in :func:`params_key`'s order of their distinct keys, from 0 (equal keys, equal
    places): a sort key for a table's ``op_kwargs`` column."""
    keys = [params_key(v) for v in values]
    order = {key: i for i, key in enumerate(sorted(set(keys)))}
    return [order[key] for key in keys]


#: Line styles of a G's parameter settings (its first setting's is the style it has alone).
PARAM_LINESTYLES: tuple[Any, ...] = ("--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), "-")
#: Markers of an operator's parameter settings (its first setting's is the one it has alone).
PARAM_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def shade(colour: str, k: int, m: int) -> str:
    """The colour of the ``k``-th of ``m`` parameter settings of one operator (in
    :func:`params_key`'s order): ``colour`` itself when it has one setting; with several,
    from lighter (``k`` = 0: mixed 30% with white) to darker (``k`` = m - 1: 50% with
    black), so that a sweep over beta reads as a gradient within the operator's colour."""
    if m <= 1:
        return colour
    from matplotlib.colors import to_hex, to_rgb

    t = -0.3 + 0.8 * k / (m - 1)  # < 0: towards white, > 0: towards black
    target = (1.0, 1.0, 1.0) if t < 0 else (0.0, 0.0, 0.0)
    r, g, b = (c + abs(t) * (end - c) for c, end in zip(to_rgb(colour), target, strict=True))
    return to_hex((r, g, b))


def label(
    algorithm: str,
    n: int | float | None = None,
    operator: object = None,
    op_kwargs: object = None,
) -> str:
    """A legend label, e.g. ``label("maxmin", 4) == "Maxmin Q (N=4)"``,
    ``label("averaged", 3) == "Averaged Q (K=3)"``; ``n`` None or NaN, or a family without
    one (Q-learning, Double Q, ...), gives the plain name. A G of one's own,
    ``'my_ops:median_q'``, reads ``"median_q [my_ops] (N=4)"`` (N estimators).
    ``generalized-dqn`` names its G, ``operator`` (its reference: a library name or
    ``'module:function'``; None or NaN: not known) with ``op_kwargs`` (a mapping or JSON):
    ``"Generalized DQN, median_q [my_ops] (N=4) (w=0.7)"``."""
    own = _own_parts(algorithm)
    text = f"{own[1]} [{own[0]}]" if own else LABELS.get(algorithm, algorithm)
    if algorithm == "generalized-dqn" and isinstance(operator, str) and operator:
        g = _own_parts(operator)
        text += ", " + (f"{g[1]} [{g[0]}]" if g else operator)
    params = params_text(op_kwargs) if algorithm == "generalized-dqn" else ""
    size = size_name(algorithm)
    if not (size is None or n is None or n != n):  # n != n: NaN (an unset N in a table)
        text = f"{text} ({size}={int(n)})"
    return f"{text} ({params})" if params else text


def integer(n: int) -> str:
    """An integer as labels and tables print it, thousands separated at every size
    (``1,200``, ``300,000``, ``500``): one format, so that runs of 1200 and 300000 steps
    side by side read alike (labels once wrote ``steps 1200`` beside ``steps 300,000``)."""
    return f"{int(n):,}"


def count(n: int, noun: str) -> str:
    """``1 seed``, ``4 seeds``: ``n`` and ``noun``, plural unless ``n`` is 1."""
    return f"{n} {noun}{'s' * (n != 1)}"


def legend_handles(axes: Iterable[Axes]) -> dict[str, Artist]:
    """The labelled artists of all ``axes``, one per label (the first), in order: a figure's
    one legend for the curves its panels share."""
    handles: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    return handles


def subplots(
    *grid: int,
    figsize: tuple[float, float],
    layout: Literal["constrained", "tight"] | None = None,
    **kw: Any,
) -> tuple[Figure, Any]:
    """``(figure, axes)`` as ``pyplot.subplots`` gives them, without pyplot: no global
    figure registry and no backend switch, so drawing a figure leaves a user's session (a
    notebook's inline backend, their open figures) as it was."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(*grid, **kw)


def check_table(table: Any, what: str, columns: Iterable[str]) -> None:
    """One-line ValueError naming ``what`` (the public figure function) if the DataFrame
    ``table`` lacks one of ``columns`` or has no rows (an empty table gave ZeroDivisionError,
    IndexError or 'cannot convert float NaN to integer' tracebacks)."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{what}: the table has no column {missing[0]!r}")
    if table.empty:
        raise ValueError(f"{what}: the table has no rows")
