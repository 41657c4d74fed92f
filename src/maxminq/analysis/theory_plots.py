"""Figures for Theorem 1 and Corollary 1 (the appendix figure pair of Lan et al. 2020).

The figure functions take the tidy tables written by ``maxminq theory`` (``bias.csv`` and
``variance.csv``, see :func:`bias_table` and :func:`variance_table`; ``operator_bias.csv``)
so the report can redraw them from files, and return a matplotlib ``Figure`` built without
pyplot (no global figure state; save it with ``fig.savefig``): the heat map and
:func:`plot_bias_against_n` (Theorem 1 against its simulation) from ``bias.csv``, the
variance ratio from ``variance.csv``, every operator's bias from ``operator_bias.csv``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, MaxNLocator

from maxminq.analysis import style
from maxminq.errors import is_whole
from maxminq.theory import (
    choose_n,
    expected_bias,
    min_variance,
    monte_carlo_bias,
    operator_bias,
    operator_expected_bias,
    t_mn,
    target_variance,
    variance_ratio,
    zero_bias_n,
)

BIAS_COLUMNS = [
    "M",
    "N",
    "t_mn",
    "expected_bias",
    "target_variance",
    "chosen_n",
    "mc_bias",
    "mc_bias_se",
    "mc_target_variance",
    "mc_target_variance_se",
    "mc_samples",
    "mc_noise",
]
VARIANCE_COLUMNS = [
    "N",
    "min_variance",
    "variance_ratio",
    "mc_min_variance",
    "mc_min_variance_se",
    "mc_variance_ratio",
    "mc_variance_ratio_se",
    "mc_samples",
    "mc_noise",
]


def _size(value: Any, name: str) -> int:
    """``value`` as an int if it is a whole number >= 1, else a one-line ValueError naming
    ``name`` (0 gave empty tables no plot takes, or numpy's 'cannot call vectorize')."""
    if not is_whole(value) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def _root_seed(seed: Any) -> np.random.SeedSequence:
    """``seed`` of a table, a whole number >= 0 or a ``numpy.random.SeedSequence``, as the
    SeedSequence its rows' child streams come from; else a one-line ValueError naming
    ``seed`` (a Generator, as ``variance_table`` and ``maxminq.theory`` take, was NumPy's
    TypeError 'SeedSequence expects int or sequence of ints', and -1 'expected non-negative
    integer', neither naming the argument)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if not is_whole(seed) or seed < 0:
        raise ValueError(
            "seed must be a whole number >= 0 or a numpy.random.SeedSequence (each row set "
            f"draws from its own child stream of it), got {seed!r}"
        )
    return np.random.SeedSequence(int(seed))


def bias_table(
    m_max: int,
    n_max: int,
    mc_m: Sequence[int],
    samples: int,
    seed: int | np.random.SeedSequence,
    progress: bool = False,
    noise: str = "uniform",
    bar: Any = None,
) -> pd.DataFrame:
    """Tidy table of Theorem 1 (i) over M = 1..m_max, N = 1..n_max with gamma * tau = 1.

    One row per (M, N); ``target_variance`` is ``Var[Z_MN]`` (see ``maxminq.theory``).
    ``chosen_n`` is True on ``choose_n(M, n_max=n_max)``. The Monte-Carlo columns
    (``mc_bias``, ``mc_target_variance`` and their ``_se``) are filled for the rows whose M is
    in ``mc_m`` (simulating all 2,000 cells would cost far more than it shows) and NaN
    elsewhere; they sample errors of the law ``noise`` (see ``monte_carlo_bias``), named in
    ``mc_noise``.
    The rows of M draw from their own stream, child M of ``seed``, so they do not depend on
    which other M are simulated. ``progress`` shows a bar of the errors drawn; ``bar``, a
    tqdm bar the caller shares with other tables, is advanced instead (and left open).
    """
    from maxminq._progress import progress_bar

    m_max, n_max = _size(m_max, "m_max"), _size(n_max, "n_max")
    root = _root_seed(seed)
    # An M beyond m_max has no row: it was skipped without a word (every Monte-Carlo cell
    # left empty); a single M was "'int' object is not iterable".
    within = f"whole numbers in 1..m_max ({m_max})"
    if isinstance(mc_m, str) or not isinstance(mc_m, Iterable):
        raise ValueError(f"mc_m must be a sequence of M values, {within}, got {mc_m!r}")
    mc_m = list(mc_m)  # once: an iterator read by the check was empty below (no Monte Carlo)
    bad = [v for v in mc_m if not (is_whole(v) and 1 <= v <= m_max)]
    if bad:
        raise ValueError(f"mc_m must hold {within}, got {bad[0]!r}")
    ms, ns = np.meshgrid(np.arange(1, m_max + 1), np.arange(1, n_max + 1), indexing="ij")
    frame = pd.DataFrame({"M": ms.ravel(), "N": ns.ravel()})
    frame["t_mn"] = t_mn(frame["M"].to_numpy(), frame["N"].to_numpy())
    frame["expected_bias"] = expected_bias(frame["M"].to_numpy(), frame["N"].to_numpy())
    frame["target_variance"] = target_variance(frame["M"].to_numpy(), frame["N"].to_numpy())
    best = choose_n(np.arange(1, m_max + 1), n_max=n_max)
    frame["chosen_n"] = frame["N"].to_numpy() == best[frame["M"].to_numpy() - 1]
    frame["mc_bias"] = np.nan
    frame["mc_bias_se"] = np.nan
    frame["mc_target_variance"] = np.nan
    frame["mc_target_variance_se"] = np.nan
    frame["mc_samples"] = 0
    sum_n = n_max * (n_max + 1) // 2  # errors per sample for one M, over N = 1..n_max: M sum_n
    own_bar = bar is None
    if own_bar:
        bar = progress_bar(
            total=samples * sum_n * sum(set(mc_m)),
            desc="Monte Carlo bias",
            unit=" errors",
            unit_scale=True,
            enabled=progress,
        )
    try:  # an own bar closed on every way out (a KeyboardInterrupt too)
        for m in sorted(set(mc_m)):
            rows = frame["M"] == m
            child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(m)))
            rng = np.random.default_rng(child)
            est = monte_carlo_bias(
                m, frame.loc[rows, "N"].to_numpy(), 1.0, 1.0, samples, rng, noise=noise
            )
            frame.loc[rows, "mc_bias"] = est.bias
            frame.loc[rows, "mc_bias_se"] = est.bias_se
            frame.loc[rows, "mc_target_variance"] = est.target_variance
            frame.loc[rows, "mc_target_variance_se"] = est.target_variance_se
            frame.loc[rows, "mc_samples"] = samples
            bar.update(samples * sum_n * m)  # weighted by work: large M dominate the wait
    finally:
        if own_bar:
            bar.close()
    frame["mc_noise"] = noise
    return frame[BIAS_COLUMNS]


def variance_table(
    n_max: int,
    samples: int,
    rng: np.random.Generator,
    noise: str = "uniform",
    bar: Any = None,
) -> pd.DataFrame:
    """Tidy table of Theorem 1 (ii) (tau = 1) and Corollary 1 for N = 1..n_max, with
    Monte-Carlo estimates (``monte_carlo_bias`` with M = 1, errors of the law ``noise``,
    named in ``mc_noise``) and their standard errors. ``bar``: a tqdm bar to advance by the
    errors drawn, N + 1 a sample for each N."""
    ns = np.arange(1, _size(n_max, "n_max") + 1)
    ests = []
    for n in ns:  # one N at a time (the draws of one call over all N), so a bar can follow
        ests.append(monte_carlo_bias(1, n, 1.0, 1.0, samples, rng, noise=noise))
        if bar is not None:
            bar.update(samples * (int(n) + 1))

    def column(name: str) -> np.ndarray:
        return np.concatenate([np.atleast_1d(getattr(est, name)) for est in ests])

    return pd.DataFrame(
        {
            "N": ns,
            "min_variance": min_variance(ns),
            "variance_ratio": variance_ratio(ns),
            "mc_min_variance": column("min_variance"),
            "mc_min_variance_se": column("min_variance_se"),
            "mc_variance_ratio": column("variance_ratio"),
            "mc_variance_ratio_se": column("variance_ratio_se"),
            "mc_samples": samples,
            "mc_noise": noise,
        }
    )[VARIANCE_COLUMNS]


OPERATOR_BIAS_COLUMNS = [
    "operator",
    "M",
    "N",
    "expected_bias",
    "bias",
    "bias_se",
    "variance",
    "variance_se",
    "samples",
    "noise",
]
#: The operators of ``operator_bias_table`` with their fixed member count (None: N = 1..n_max)
#: and parameters. Averaged Q is Ensemble Q here (independent members), so it is left out.
OPERATOR_SETTINGS: dict[str, tuple[int | None, dict[str, float]]] = {
    "q_learning": (1, {}),
    "double_q": (2, {}),
    "weighted_double_q": (2, {"c": 1.0}),
    "bias_corrected": (1, {"sigma": 1.0 / np.sqrt(3.0)}),  # the errors' standard deviation
    "maxmin": (None, {}),
    "ensemble": (None, {}),
    "historical_best": (None, {}),
}


def operator_row_setting(name: str) -> tuple[str | None, int | None, dict[str, float]]:
    """How ``operator_bias_table`` ran the rows of operator ``name``: the library operator
    (None for a G of one's own), its fixed member count (None: N = 1..n_max) and the
    parameters of ``OPERATOR_SETTINGS`` (an added row, ``'weighted_double_q:c=10'``, says
    its own in its name)."""
    if name in OPERATOR_SETTINGS:
        return name, *OPERATOR_SETTINGS[name]
    head, _, rest = name.partition(":")
    # a library operator added with other parameters ('c=10'); not a G of one's own in a
    # module named like one ('double_q:my_g', 'double_q:my_g:k=1')
    if head in OPERATOR_SETTINGS and "=" in rest and ":" not in rest:
        return head, OPERATOR_SETTINGS[head][0], {}
    return None, None, {}


def operator_row_name(reference: str, params: Mapping[str, Any]) -> str:
    """The ``operator`` column of an operator added to ``operator_bias_table``: its reference
    with its parameters in the ``--algorithms`` spelling, ``'my_ops:softmin_q:beta=20'``,
    ``'weighted_double_q:c=10'`` (a row set per setting; the reference alone without any).
    A float as ``style.number_text`` writes it, every digit where six would round it
    (``beta=0.1234567``): ``:g`` made two settings one name, refused by ``maxminq theory``
    as one given twice."""
    text = ",".join(f"{k}={style.number_text(v)}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in sorted(params.items()))  # fmt: skip
    return f"{reference}:{text}" if text else reference


def _split_row_name(name: str) -> tuple[str, str]:
    """``('my_ops:softmin_q', 'beta=20')`` for the row name ``'my_ops:softmin_q:beta=20'``
    (:func:`operator_row_name`); the parameters part is empty when there is none."""
    head, _, last = name.rpartition(":")
    return (head, last) if head and "=" in last else (name, "")


def operator_bias_table(
    m: int,
    n_max: int,
    samples: int,
    seed: int | np.random.SeedSequence,
    noise: str = "uniform",
    bar: Any = None,
    extra: Sequence[
        tuple[str, Any, Mapping[str, Any]] | tuple[str, Any, Mapping[str, Any], int | None]
    ] = (),
) -> pd.DataFrame:
    """Every operator's target bias and variance in Theorem 1's setting, by Monte Carlo.

    ``maxminq.theory.operator_bias`` with M = ``m`` actions, tau = gamma = 1 and the errors of
    law ``noise``, for the operators and parameters of ``OPERATOR_SETTINGS``: Maxmin, Ensemble
    and Historical Best for N = 1..n_max members, the others at their own member count. One row
    per (operator, N); operator i draws from child i of ``seed``. ``expected_bias`` is the
    exact mean for uniform errors (``operator_expected_bias``), whatever ``noise`` is.
    ``bar``: a tqdm bar to advance by the errors drawn (``samples x m x N`` a row), operator
    by operator.

    ``extra``: operators to add after these, each ``(reference, g, params)``: a library
    name (``g`` that name; its own member count, its closed form) or a G of one's own
    (``g`` the function, as ``operator_bias`` takes it; N = 1..n_max; ``expected_bias`` NaN,
    there is no closed form), run with ``params``; ``(reference, g, params, n)`` runs it
    at N = ``n`` members alone (a G of one's own that takes a fixed count, as Double Q's
    two tables, and fails on any other; None: as without it). Their rows are named
    ``operator_row_name(reference, params)``; added operator k draws from child
    ``len(OPERATOR_SETTINGS) + k`` of ``seed``, so the library's rows keep their numbers.
    """
    m, n_max = _size(m, "m"), _size(n_max, "n_max")
    root = _root_seed(seed)
    runs: list[tuple[str, Any, int | None, Mapping[str, Any]]] = [
        (name, name, members, params) for name, (members, params) in OPERATOR_SETTINGS.items()
    ]
    for reference, g, params, *fixed in extra:
        library = g if isinstance(g, str) and g in OPERATOR_SETTINGS else None
        members = None if library is None else OPERATOR_SETTINGS[library][0]
        if fixed and fixed[0] is not None:
            members = _size(fixed[0], f"the member count of {reference!r}")
        runs.append((operator_row_name(reference, params), g, members, params))
    frames = []
    for i, (name, g, members, params) in enumerate(runs):
        child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, i))
        ns = np.arange(1, n_max + 1) if members is None else np.array([members])
        # op_kwargs: a G's own tau or gamma is its parameter, not operator_bias's
        est = operator_bias(
            g, m, ns, 1.0, 1.0, samples, np.random.default_rng(child), noise, op_kwargs=params
        )
        closed = (
            operator_expected_bias(g, m, ns, op_kwargs=params)
            if isinstance(g, str)
            else np.full(ns.shape, np.nan)  # a G of one's own: no closed form
        )
        frames.append(
            pd.DataFrame(
                {
                    "operator": name,
                    "M": m,
                    "N": ns,
                    "expected_bias": closed,
                    "bias": est.bias,
                    "bias_se": est.bias_se,
                    "variance": est.variance,
                    "variance_se": est.variance_se,
                    "samples": samples,
                    "noise": noise,
                }
            )
        )
        if bar is not None:
            bar.update(samples * m * int(ns.sum()))
    return pd.concat(frames, ignore_index=True)[OPERATOR_BIAS_COLUMNS]


def plot_operator_bias(table: pd.DataFrame) -> Figure:
    """The bias (left) and standard deviation (right) of each operator's target against N, from
    ``operator_bias_table``: the operators with N members as points with 2-s.e. bars, their
    exact mean for uniform errors (column ``expected_bias``, when the table has it) as a line
    under the bias points, the others as horizontal lines at their value (their member count
    is fixed; in the bias panel the exact mean, with the simulated point at their N). A G of
    one's own run at one N alone (``operator_bias_table``'s ``extra`` with a member count,
    a weighted double of one's own at N = 2) is such a line too, at its simulated mean."""
    style.check_table(table, "plot_operator_bias", ["operator", "M", "N", "bias", "bias_se",
                                               "variance", "variance_se", "noise"])  # fmt: skip
    fig = Figure(figsize=(10.0, 5.0), layout="constrained")
    ax_bias, ax_sd = fig.subplots(1, 2)
    n_max = int(table["N"].max())
    closed = "expected_bias" in table.columns
    groups = cast("Iterable[tuple[str, pd.DataFrame]]", table.groupby("operator", sort=False))
    names = [str(name) for name in table["operator"].unique()]
    # the settings of Gs of one's own, each its colour: two of one G ('beta=5', 'beta=20')
    # were one colour, told apart by a legend text alone
    own_settings = [n for n in names if operator_row_setting(n)[0] is None]
    several_n = table["N"].nunique() > 1
    for name, rows in groups:  # operator names
        library, members, params = operator_row_setting(name)
        if library is None and len(rows) == 1 and several_n:  # one's own at its own N
            members = int(rows["N"].iloc[0])
        added = library is not None and library != name  # 'weighted_double_q:c=10'
        if library is None:  # a G of one's own, 'my_ops:softmin_q:beta=20': its colour
            reference, given = _split_row_name(name)  # among the figure's own settings
            colour = style.color(name, own_settings)
            text = style.label(reference) + (f" ({given})" if given else "")
        else:
            colour = style.color(library)
            text = style.LABELS.get(library, library) + "".join(
                f" ({k}={v:.3g})" for k, v in params.items()
            )
            if added:
                text += f" ({name.partition(':')[2]})"
        exact = closed and bool(np.isfinite(rows["expected_bias"].to_numpy()).any())
        sd = np.sqrt(rows["variance"].to_numpy())
        sd_se = rows["variance_se"].to_numpy() / (2 * sd)  # delta method
        if members is None:
            ns = rows["N"].to_numpy()
            if exact:  # the exact curve, so the points check it (Theorem 1 for Maxmin)
                ax_bias.plot(ns, rows["expected_bias"], color=colour, linewidth=1.2)
            for ax, y, err, fmt in ((ax_bias, rows["bias"], rows["bias_se"], "o" if exact
                                     else "o-"), (ax_sd, sd, sd_se, "o-")):  # fmt: skip
                dotted = {"linestyle": ":"} if added and fmt == "o-" else {}
                ax.errorbar(ns, y, yerr=2 * np.asarray(err), fmt=fmt, color=colour,
                            markersize=3, capsize=2, label=text, **dotted)  # fmt: skip
        else:
            n = int(rows["N"].iloc[0])
            text += f", N={n}"
            line = rows["expected_bias" if exact else "bias"].iloc[0]  # one's own: simulated
            for ax, y in ((ax_bias, line), (ax_sd, sd[0])):
                ax.axhline(y, color=colour, linestyle=":" if added else "--", linewidth=1.2,
                           label=text)  # fmt: skip
            if closed:  # the simulation at the operator's own N, on its exact line
                ax_bias.errorbar([n], rows["bias"].iloc[:1], yerr=2 * rows["bias_se"].iloc[:1],
                                 fmt="o", color=colour, markersize=3, capsize=2)  # fmt: skip
    # under the curves (zorder 1.5 < 2): drawn over them, it hid Double Q's line at its exact 0
    ax_bias.axhline(0.0, color="black", linewidth=0.8, zorder=1.5)
    m, noise = int(table["M"].iloc[0]), str(table["noise"].iloc[0])
    law = "U(-1, 1)" if noise == "uniform" else "N(0, 1/3)"
    ax_bias.set_ylabel(r"bias $E[G] - \max_a Q^*$ ($\gamma = \tau = 1$)")
    ax_sd.set_ylabel("standard deviation of the target")
    for ax in (ax_bias, ax_sd):
        ax.set_xlabel("N (estimators, or snapshots for Historical Best)")
        ax.set_xticks(range(1, n_max + 1, max(1, n_max // 10)))
    ax_bias.set_title(f"Target bias, M = {m} equal actions, errors {law}")
    if closed:  # say what the lines under the points are (exact for uniform errors only)
        parts = ["lines: exact mean" + (" for uniform errors" if noise != "uniform" else "")]
        parts.append("points: Monte Carlo ± 2 s.e.")
        by_operator = table.groupby("operator")["expected_bias"]
        no_closed = by_operator.apply(lambda e: e.isna().all())  # a G of one's own
        level = (by_operator.size() == 1) & several_n  # drawn as a level at its one N
        if (no_closed & ~level).any():
            parts.append("joined points: no closed form")
        if (no_closed & level).any():  # the level is the simulation's there
            parts.append("a level without closed form: simulated")
        # one line while it fits the panel; else a line each (it ran over the y tick labels)
        note = ("; " if len(parts) == 2 and noise == "uniform" else "\n").join(parts)
        (x, ha), (y, va) = _emptiest_corner(ax_bias, len(note.splitlines()))
        ax_bias.text(x, y, note, fontsize="small", transform=ax_bias.transAxes,
                     ha=ha, va=va)  # fmt: skip
    ax_sd.set_title("Target spread")
    handles, labels = ax_bias.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize="small")
    return fig


def _emptiest_corner(ax: Any, lines: int) -> tuple[tuple[float, str], tuple[float, str]]:
    """Where a note of ``lines`` lines covers the fewest of the curves already drawn on
    ``ax``: ``((x, ha), (y, va))`` in axes units, for the corner with the least of every
    line's path inside a note-sized box (bottom right first on a tie). The note sat at the
    bottom right always, over Maxmin's falling tail and the curves of Gs of one's own."""
    to_axes = ax.transAxes.inverted()
    ax.get_ylim()  # the limits, autoscaled from everything drawn
    points = []
    for line in ax.get_lines():
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = to_axes.transform(xy)
        if len(xy) > 1:  # each segment as points along it (a level is two points only)
            t = np.linspace(0.0, 1.0, 50)[:, None, None]
            xy = (xy[:-1] + t * (xy[1:] - xy[:-1])).reshape(-1, 2)
        points.append(xy)
    at = np.concatenate(points) if points else np.zeros((0, 2))
    width, height = 0.5, 0.06 + 0.06 * lines
    corners = [((0.98, "right"), (0.02, "bottom")), ((0.02, "left"), (0.02, "bottom")),
               ((0.98, "right"), (0.98, "top")), ((0.02, "left"), (0.98, "top"))]  # fmt: skip

    def covered(corner: tuple[tuple[float, str], tuple[float, str]]) -> int:
        (_, ha), (_, va) = corner
        inside_x = at[:, 0] >= 1 - width if ha == "right" else at[:, 0] <= width
        inside_y = at[:, 1] <= height if va == "bottom" else at[:, 1] >= 1 - height
        return int(np.sum(inside_x & inside_y & np.isfinite(at).all(axis=1)))

    return min(corners, key=covered)  # min keeps the first of equals


def _edges(centres: np.ndarray) -> np.ndarray:
    """Cell edges around sorted integer centres: midway between neighbours, +-0.5 at the ends."""
    c = np.asarray(centres, dtype=float)
    return np.concatenate([[c[0] - 0.5], (c[:-1] + c[1:]) / 2, [c[-1] + 0.5]])


def plot_bias_heatmap(bias: pd.DataFrame) -> Figure:
    """Heat map of E[Z_MN] (gamma * tau = 1) over M (x) and N (y), Theorem 1 (i).

    Diverging colours centred at zero bias (red: over-, blue: underestimation), the real N of
    zero bias (``zero_bias_n``), and the N chosen by ``choose_n`` for every M.
    """
    style.check_table(bias, "plot_bias_heatmap", ["M", "N", "expected_bias", "chosen_n"])
    grid = bias.pivot(index="N", columns="M", values="expected_bias").sort_index()
    ms, ns = grid.columns.to_numpy(), grid.index.to_numpy()
    fig = Figure(figsize=(7.0, 4.2), layout="constrained")  # no pyplot: no global state
    ax = fig.subplots()
    # Cell edges given explicitly: "nearest" shading infers a cell's width from its neighbours,
    # so a single M (or N) gave zero-width cells and a blank map.
    mesh = ax.pcolormesh(
        _edges(ms),
        _edges(ns),
        grid.to_numpy(),
        shading="flat",
        cmap="RdBu_r",
        norm=TwoSlopeNorm(vmin=-1.0, vcenter=0.0, vmax=1.0),
    )
    fig.colorbar(mesh, ax=ax, label=r"$E[Z_{MN}]$ ($\gamma\tau = 1$)")
    # The exact zero-bias N (a contour of the grid interpolated linearly between whole N, and
    # drew N = 1.84 for M = 2 where the bias vanishes at 1.78).
    root = np.asarray(zero_bias_n(ms), dtype=float)
    ax.plot(ms, np.where(root <= ns[-1] + 0.5, root, np.nan), color="black", linewidth=1.2)
    chosen = bias.loc[bias["chosen_n"]].sort_values("M")
    ax.stairs(
        chosen["N"].to_numpy(),
        _edges(chosen["M"].to_numpy()),
        baseline=None,
        color=style.color("maxmin"),
        linewidth=2.0,
        label=r"choose_n: $\arg\min_N |E[Z_{MN}]|$",
    )
    ax.plot([], [], color="black", linewidth=1.2, label="zero bias (zero_bias_n)")
    for axis, values in ((ax.xaxis, ms), (ax.yaxis, ns)):
        # Few values: a tick on each (MaxNLocator falls back to fractions on a span of 1).
        axis.set_major_locator(
            FixedLocator(values) if len(values) <= 10 else MaxNLocator(integer=True)
        )
    ax.set_xlabel("M (number of actions)")
    ax.set_ylabel(f"N ({style.label('maxmin')} estimators)")
    ax.set_title("Theorem 1: expected estimation bias of Maxmin Q-learning")
    ax.legend(loc="upper right", fontsize="small", framealpha=0.9)
    return fig


def plot_variance_ratio(variance: pd.DataFrame) -> Figure:
    """Corollary 1: Var[Q^min] / Var[Q] = 12 N^2 / ((N+1)^2 (N+2)) against N, with the
    Monte-Carlo estimates (error bars: 2 standard errors; their error law named when it is
    not the uniform one of the closed form) and the line ratio = 1."""
    style.check_table(variance, "plot_variance_ratio",
                 ["N", "mc_variance_ratio", "mc_variance_ratio_se", "mc_noise"])  # fmt: skip
    colour = style.color("maxmin")
    n_max = int(variance["N"].max())
    fine = np.linspace(1.0, n_max, 400)
    curve = 12 * fine**2 / ((fine + 1) ** 2 * (fine + 2))
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.subplots()
    closed, mc = r"$12N^2 / ((N+1)^2 (N+2))$", "Monte Carlo (±2 s.e.)"
    laws = sorted(set(variance["mc_noise"]))
    if set(laws) - {"uniform"}:  # other errors simulated: name them; the curve is uniform's
        closed += " (uniform errors)"
        mc = f"Monte Carlo, {'/'.join(laws)} errors (±2 s.e.)"
    ax.plot(fine, curve, color=colour, label=closed)
    ax.errorbar(
        variance["N"],
        variance["mc_variance_ratio"],
        yerr=2 * variance["mc_variance_ratio_se"],
        fmt="o",
        color="black",
        markersize=4,
        capsize=2,
        label=mc,
    )
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="Var[Q] (single estimator)")
    ax.set_xlabel("N (number of estimators)")
    ax.set_ylabel(r"$Var[Q^{min}_{sa}] / Var[Q_{sa}]$")
    ax.set_title("Corollary 1: variance ratio")
    ax.set_xticks(range(1, n_max + 1, max(1, n_max // 10)))
    ax.legend(fontsize="small")
    return fig


def plot_bias_against_n(bias: pd.DataFrame) -> Figure:
    """Theorem 1 (i) against its simulation: ``E[Z_MN]`` (gamma * tau = 1) against N for each
    simulated M of a ``bias_table`` (``maxminq theory``'s ``bias.csv``, the M of ``--mc-m``),
    the closed form as a line and the Monte Carlo (``mc_bias``) as points with 2-s.e. bars.

    ``bias_table`` simulates these cells but neither figure drew them: the heat map is the
    closed form alone. One call from the CSV: ``plot_bias_against_n(pd.read_csv(
    "out/bias.csv"))``. With ``mc_noise`` normal the lines stay the uniform closed form and
    the note under them says so. ValueError naming what is missing for a table without simulated
    cells.
    """
    style.check_table(bias, "plot_bias_against_n",
                      ["M", "N", "expected_bias", "mc_bias", "mc_bias_se", "mc_noise"])  # fmt: skip
    simulated = bias[np.isfinite(bias["mc_bias"].to_numpy(dtype=float))]
    if simulated.empty:
        raise ValueError(
            "plot_bias_against_n: the table has no simulated cells (mc_bias is empty in every "
            "row): give bias_table an mc_m (maxminq theory: --mc-m)"
        )
    ms = sorted(int(m) for m in simulated["M"].unique())
    colours = [_sequential_colour(k, len(ms)) for k in range(len(ms))]
    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    ax = fig.subplots()
    for m, colour in zip(ms, colours, strict=True):
        rows = simulated[simulated["M"] == m].sort_values("N")
        ns = rows["N"].to_numpy()
        ax.plot(ns, rows["expected_bias"], color=colour, linewidth=1.2, label=f"M = {m}")
        ax.errorbar(ns, rows["mc_bias"], yerr=2 * rows["mc_bias_se"].to_numpy(), fmt="o",
                    color=colour, markersize=3, capsize=2)  # fmt: skip
    ax.axhline(0.0, color="black", linewidth=0.8)
    laws = sorted(set(simulated["mc_noise"]))
    uniform = laws == ["uniform"]
    note = "lines: closed form" + ("" if uniform else " for uniform errors")
    note += "\npoints: Monte Carlo ± 2 s.e." + ("" if uniform else f", {'/'.join(laws)} errors")
    ax.text(0.02, 0.02, note, fontsize="small", transform=ax.transAxes, ha="left", va="bottom")
    ax.set_title("Theorem 1 (i): expected bias of Maxmin's target against N")
    ax.set_xlabel(f"N ({style.label('maxmin')} estimators)")
    ax.set_ylabel(r"$E[Z_{MN}]$ ($\gamma\tau = 1$)")
    n_max = int(simulated["N"].max())
    ax.set_xticks(range(1, n_max + 1, max(1, n_max // 10)))
    ax.legend(fontsize="small", ncol=2)
    return fig


def _sequential_colour(k: int, count: int) -> Any:
    """The k-th of ``count`` colours along viridis (dark to light as M grows)."""
    from matplotlib import colormaps

    return colormaps["viridis"](k / max(count - 1, 1) * 0.9)
