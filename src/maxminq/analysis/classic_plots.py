"""Figures of the paper's tabular and tile-coding experiments, from the tidy DataFrames.

* ``toy_distance_figure``: Fig. 2, distance of the learned eps-greedy policy to the optimal one
  over episodes, one panel per mu (input: ``run_toy_mdp`` rows).
* ``toy_q_left_figure``: appendix C.1, Q(A, Left) over episodes with the true value mu.
* ``toy_bias_vs_n_figure``: beyond the paper, the final bias of Q(A, Left) against N.
* ``mc_best_step_sizes``: the step size each (algorithm, n, sigma^2) is shown with (the one with
  the fewest mean steps in the last episode, the paper's metric).
* ``mc_sensitivity_figure``: Fig. 3(a), last-episode steps vs sigma^2 at the best step size,
  one standard error.
* ``mc_learning_curve_figure``: Fig. 3(b) (sigma^2 = 10) and, with several sigma^2, the
  appendix C.2 panels: steps per episode at the best step size, one standard error.

All functions take the DataFrames exactly as the experiment runners return them (or as read
back from their CSV) and return a ``matplotlib.figure.Figure``; ``save_figure`` writes one
atomically. Colours and labels come from ``maxminq.analysis.style``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import (
    LogFormatter,
    MaxNLocator,
    NullLocator,
    ScalarFormatter,
)

from maxminq.analysis import style
from maxminq.analysis import tables as T
from maxminq.experiments.store import atomic_write

__all__ = [
    "mc_best_step_sizes",
    "mc_learning_curve_figure",
    "mc_sensitivity_figure",
    "save_figure",
    "toy_bias_vs_n_figure",
    "toy_distance_figure",
    "toy_q_left_figure",
]

_LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1))]


def _series_style(
    algorithm: str,
    n: int,
    rank: int,
    params: str = "",
    among: Iterable[str] = (),
    place: tuple[int, int] = (0, 1),
) -> dict:
    """Family colour; settings of one operator (Maxmin with different N, Bias-corrected Q with
    different sigma) share the colour and vary the line style. ``among``: the figure's
    algorithms, so that its Gs of one's own get distinct colours (``style.color``).
    ``place``: the setting's parameters, k-th of the operator's m (:func:`_places`), shade
    the colour (``style.shade``; one setting: the colour itself)."""
    text = style.label(algorithm, int(n))
    return {
        "color": style.shade(style.color(algorithm, among), *place),
        "label": f"{text} ({params})" if params else text,
        "linestyle": _LINESTYLES[rank % len(_LINESTYLES)],
    }


def _params_text(value: object) -> str:
    """``'{"sigma":0.5}'`` (a stored run's ``op_kwargs``, JSON) or ``{"sigma": 0.5}`` ->
    ``"sigma=0.5"``; no parameters (NaN, None, ``{}``) -> ``""`` (``style.params_text``)."""
    return style.params_text(value)


def _with_params(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``df`` with a column ``op_params`` (``"sigma=0.5"``, ``""`` for none) when it records
    the operators' parameters (``op_kwargs``, as stored sweeps do), and the setting columns
    to add for it: settings that differ only in a parameter are separate curves, not pooled.
    A table holding both step-size readings (``step_size_per``: two Mountain Car CSVs side by
    side) adds the reading too (``"step per total"``): Fig. 3 drew one line through both and
    pooled their runs. One reading alone changes nothing (the titles name it). The column
    is categorical, its categories in the one order of parameters (``style.params_key``:
    by value, ``beta=5`` before ``beta=20``; then the reading), which legends follow."""
    per = df["step_size_per"] if "step_size_per" in df.columns else None
    if per is not None and per.nunique(dropna=False) < 2:
        per = None
    if "op_kwargs" not in df.columns and per is None:
        return df, []
    kwargs = df["op_kwargs"] if "op_kwargs" in df.columns else pd.Series("", index=df.index)
    codes, uniques = pd.factorize(kwargs, use_na_sentinel=False)
    texts = [_params_text(u) for u in uniques]
    keys: list[tuple] = [(style.params_key(u),) for u in uniques]
    if per is not None:  # one code per (parameters, reading) pair
        per_codes, readings = pd.factorize(per, use_na_sentinel=False)
        pairs, codes = np.unique(codes * len(readings) + per_codes, return_inverse=True)
        pair_texts, pair_keys = [], []
        for pair in pairs:
            kw, reading = divmod(int(pair), len(readings))
            pair_texts.append(
                ", ".join(t for t in (texts[kw], f"step per {readings[reading]}") if t)
            )
            pair_keys.append((*keys[kw], str(readings[reading])))
        texts, keys = pair_texts, pair_keys
    # categorical: one byte a row on a full run's 10^7 rows; a text's place: its first key
    first = {t: min(k for t2, k in zip(texts, keys, strict=True) if t2 == t) for t in texts}
    labels = sorted(first, key=lambda t: (first[t], t))
    lookup = np.array([labels.index(t) for t in texts], dtype=np.int64)
    # pandas-stubs want categories as an Index; pandas takes any list-like
    params = pd.Categorical.from_codes(lookup[codes], categories=labels)  # type: ignore[call-overload]
    return df.assign(op_params=params), ["op_params"]


_TOY_COLUMNS = ("mu", "algorithm", "n", "run", "episode")
_MC_COLUMNS = ("algorithm", "n", "sigma2", "step_size", "run", "episode", "steps")


def _groups(df: pd.DataFrame) -> list[tuple[str, int, str, int]]:
    """(algorithm, n, operator parameters, rank), in the legend order the report's tables
    also follow: algorithms by ``T.agent_rank`` (the paper's, then by name), N, then the
    parameters in ``op_params``' category order (by value, :func:`_with_params`). The rank
    (a curve's dashes): of N among the algorithm's N when it has several (its parameters
    are then told apart by shade, :func:`_places`), else of the setting among the
    algorithm's."""
    cols = ["algorithm", "n", *(["op_params"] if "op_params" in df.columns else [])]
    rows = df[cols].drop_duplicates().itertuples(index=False)
    place = _params_order(df)
    triples = sorted(
        {(r[0], int(r[1]), r[2] if len(r) > 2 else "") for r in rows},
        key=lambda p: (T.agent_rank(p[0]), p[0], p[1], place(p[2])),
    )
    ns: dict[str, list[int]] = {}
    for a, n, _ in triples:
        if n not in ns.setdefault(a, []):
            ns[a].append(n)
    out: list[tuple[str, int, str, int]] = []
    seen: dict[str, int] = {}
    for a, n, params in triples:
        # several N: the rank of N (its dashes), the parameters then tell apart by shade;
        # one N: the rank of the setting (N = 2, 4, ... or sigma = 0.5, 1 as before)
        out.append((a, n, params, ns[a].index(n) if len(ns[a]) > 1 else seen.get(a, 0)))
        seen[a] = seen.get(a, 0) + 1
    return out


def _params_order(df: pd.DataFrame) -> Callable[[str], tuple]:
    """A sort key of ``df``'s ``op_params`` texts: their place among the categories
    (:func:`_with_params` orders them by value); for a column of plain text, the text."""
    column = df["op_params"] if "op_params" in df.columns else None
    if column is not None and isinstance(column.dtype, pd.CategoricalDtype):
        place = {text: i for i, text in enumerate(column.cat.categories)}
        return lambda text: (place.get(text, len(place)), text)
    return lambda text: (0, text)


def _places(df: pd.DataFrame) -> dict[tuple[str, str], tuple[int, int]]:
    """(algorithm, parameters) -> (k, m): the place of the parameters among the m
    parameter settings of that algorithm in ``df`` (by value, :func:`_params_order`), for
    their shades, markers and dashes; (0, 1) for an algorithm with one."""
    order = _params_order(df)
    settings: dict[str, set[str]] = {}
    for a, _, params, _ in _groups(df):
        settings.setdefault(a, set()).add(params)
    return {
        (a, p): (k, len(ps))
        for a, ps in settings.items()
        for k, p in enumerate(sorted(ps, key=order))
    }


def _select(df: pd.DataFrame, algorithm: str, n: int, params: str) -> pd.Series:
    """Rows of one setting (``_groups``' algorithm, n and parameters)."""
    mask = (df.algorithm == algorithm) & (df.n == n)
    return mask & (df.op_params == params) if "op_params" in df.columns else mask


def _mean_se(df: pd.DataFrame, value: str, keys: list[str]) -> pd.DataFrame:
    """Mean, count and standard error of the finite ``value``s per ``keys`` (one pass over
    the rows): a run gone non-finite (:func:`nonfinite_note`) leaves the mean from there on;
    an inf made it inf (no point drawn)."""
    values = df[value].to_numpy(dtype=float)
    if not np.isfinite(values[~np.isnan(values)]).all():  # an inf: NaN, as pandas skips NaN
        df = df.assign(**{value: np.where(np.isinf(values), np.nan, values)})
    g = df.groupby(keys, observed=True)[value]
    out = pd.DataFrame({"mean": g.mean(), "count": g.count(), "std": g.std(ddof=1)})
    out["se"] = (out["std"] / np.sqrt(out["count"])).fillna(0.0)
    return out


def count_runs(df: pd.DataFrame, keys: Sequence[str]) -> int:
    """The fewest independent runs of any setting (``keys``) in ``df``: distinct (run_id,
    run) pairs, as two stored run ids of one setting (pooled by the report) each number
    their runs from 0."""
    setting = T.present_keys(df, list(keys))
    runs = df[[*setting, *T.tabular_run_cols(df)]].drop_duplicates()
    return int(runs.groupby(setting, observed=True).size().min())


def _smooth(y: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average (shorter at the start), for readable learning curves."""
    if window <= 1:
        return y
    c = np.cumsum(np.insert(y, 0, 0.0))
    idx = np.arange(1, len(y) + 1)
    lo = np.maximum(idx - window, 0)
    return (c[idx] - c[lo]) / (idx - lo)


#: A toy figure's note lines of settings with non-finite runs at most (then "and k more").
NONFINITE_LINES = 4


def nonfinite_note(df: pd.DataFrame, left_out: str, value: str | Sequence[str] = "q_a_left") -> str:
    """The note a toy MDP figure carries when some runs went non-finite (NaN or inf in
    Q(A, Left): a G of one's own that diverges, too large a step size), so that its means
    over the finite runs are never silent: per setting (mu, operator, N, parameters) how many
    of its runs, from which episode (:func:`maxminq.analysis.tables.nonfinite_runs`);
    ``left_out`` says what the figure does with them. ``''`` when every value is finite
    (the figure is as without the note). ``df``: the toy rows (``op_kwargs`` JSON or
    ``op_params`` text name the parameters). ``value``: the column the figure draws
    (``"distance"``: Fig. 2, whose P(Left | A) goes NaN when Q(A, Right) does, while
    Q(A, Left) may stay finite), or several: a run non-finite in any of them."""
    values = [value] if isinstance(value, str) else list(value)
    if not {*values, *_TOY_COLUMNS} <= set(df.columns):
        return ""
    finite = np.isfinite(df[values].to_numpy(dtype=float)).all(axis=1)
    df = df.assign(_finite=np.where(finite, 0.0, np.nan))
    keyed, extra = (df, ["op_params"]) if "op_params" in df.columns else _with_params(df)
    table = T.nonfinite_runs(keyed, ["mu", "algorithm", "n", *extra], "_finite")
    if table.empty:
        return ""
    place = _params_order(keyed)  # the legend's order; a setting's mus on one line
    table = table.assign(
        _rank=table["algorithm"].map(T.agent_rank),
        _params=table["op_params"].map(place) if extra else 0,
    ).sort_values(["_rank", "algorithm", "n", "_params", "mu"], ascending=[*[True] * 4, False])
    texts: dict[str, list[str]] = {}
    for _, r in table.iterrows():
        params = str(r["op_params"]) if extra and isinstance(r["op_params"], str) else ""
        name = style.label(r["algorithm"], int(r["n"])) + (f" ({params})" if params else "")
        first, last = int(r["first"]), int(r["last"])
        when = f"episode {first:,}" if first == last else f"episodes {first:,} to {last:,}"
        runs = f"{r['nonfinite']} of {style.count(r['runs'], 'run')}"
        texts.setdefault(f"{name}: {runs} at {{}} went non-finite, at {when}", []).append(
            f"mu = {r['mu']:+g}"
        )
    lines = [text.format(" and at ".join(mus)) for text, mus in texts.items()]
    if len(lines) > NONFINITE_LINES:
        more = len(lines) - NONFINITE_LINES + 1
        lines = [*lines[: NONFINITE_LINES - 1], f"and {more} settings more"]
    return f"Runs that went non-finite (NaN or inf), {left_out}:\n" + "\n".join(lines)


def _add_note(fig: Figure, note: str) -> None:
    """``note`` (lines) above the figure's panels, in dark red, in room made for it (the
    figure grows by its height); nothing for an empty note."""
    if not note:
        return
    fig.suptitle(note, x=0.01, ha="left", fontsize=8, color="#8b0000", linespacing=1.3)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + 0.16 * (note.count("\n") + 1))


def _toy_panels(
    df: pd.DataFrame, value: str, ylabel: str, gamma: float | None, what: str
) -> Figure:
    """One panel per mu; with a discount ``gamma``, a dotted line at the true value gamma * mu.
    ``what``: the public function, named in errors."""
    style.check_table(df, what, [*_TOY_COLUMNS, value])
    df, extra = _with_params(df)
    keys = ["mu", "algorithm", "n", *extra, "episode"]
    stats_all = _mean_se(df, value, keys).reset_index()
    runs = {
        mu: count_runs(part, [*T.TOY_KEYS, *extra]) for mu, part in df.groupby("mu", observed=True)
    }
    mus = sorted(stats_all["mu"].unique(), reverse=True)
    # constrained layout: the curves' legend goes below the panels (:func:`_curve_legend`)
    fig, axes = style.subplots(
        1, len(mus), figsize=(5.2 * len(mus), 3.8), squeeze=False, layout="constrained"
    )
    places = _places(stats_all)  # a setting's shade alike in every panel
    for ax, mu in zip(axes[0], mus, strict=True):
        sub = stats_all[stats_all["mu"] == mu]
        for algorithm, n, params, rank in _groups(sub):
            stats = sub[_select(sub, algorithm, n, params)].sort_values("episode")
            kw = _series_style(algorithm, n, rank, params, stats_all.algorithm.astype(str),
                               places[algorithm, params])  # fmt: skip
            ax.plot(stats.episode, stats["mean"], lw=1.4, **kw)
            ax.fill_between(
                stats.episode,
                stats["mean"] - stats["se"],
                stats["mean"] + stats["se"],
                color=kw["color"],
                alpha=0.15,
                lw=0,
            )
        if gamma is not None:
            what = f"{gamma * mu:+g}" if gamma == 1 else f"γ·μ = {gamma * mu:+g}"
            line = ax.axhline(gamma * mu, color="black", lw=1, ls=":", label=f"true value {what}")
            ax.legend(handles=[line], fontsize=8)  # each panel's own; the curves' goes below
        ax.set_title(f"μ = {mu:+g}  ({style.count(runs[mu], 'run')})")
        ax.set_xlabel("episode")
        ax.xaxis.set_major_locator(_episode_ticks())
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    _curve_legend(fig, axes[0])
    _add_note(
        fig, nonfinite_note(df, "the means are over the other runs from that episode on", value)
    )
    return fig


#: Legend entries the row below the toy panels holds at most; more (a G's parameter sweep at
#: several N) go beside the last panel, in columns of at most 20.
LEGEND_BELOW = 10


def _curve_legend(fig: Figure, axes: Sequence[Axes]) -> None:
    """The toy curves' legend, outside the panels, where it hides no curve: below them, or
    with more than :data:`LEGEND_BELOW` entries right of the last panel (the figure grows by
    its width). Inside the first panel, as the paper has it, it hid the ends of Maxmin's
    curves (N = 6 and 8 at episodes 550 to 1,000 in Q(A, Left), the early episodes of
    Fig. 2). Each panel keeps its own legend of its true value line."""
    pairs = [
        (h, label)
        for h, label in zip(*axes[0].get_legend_handles_labels(), strict=True)
        if not label.startswith("true value")
    ]
    handles, labels = [h for h, _ in pairs], [label for _, label in pairs]
    if len(labels) <= LEGEND_BELOW:
        ncol = min(len(labels), 3 * len(axes))
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=8)
        return
    ncol = -(-len(labels) // 20)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width + 2.6 * ncol, height)
    fig.legend(handles, labels, loc="outside right upper", ncol=ncol, fontsize=8)


def toy_distance_figure(df: pd.DataFrame) -> Figure:
    """Fig. 2: |P(Left | A) - P*(Left | A)| over episodes, mean and one standard error."""
    return _toy_panels(
        df, "distance", "distance to optimal ε-greedy policy", None, "toy_distance_figure"
    )


def toy_q_left_figure(df: pd.DataFrame, gamma: float = 1.0) -> Figure:
    """Appendix C.1: the learned Q(A, Left) over episodes; the dotted line is its true value
    gamma * mu (``gamma``: the discount the runs used; the paper's and the command's is 1)."""
    return _toy_panels(df, "q_a_left", "Q(A, Left)", float(gamma), "toy_q_left_figure")


def toy_bias_vs_n_figure(df: pd.DataFrame, gamma: float = 1.0) -> Figure:
    """Beyond the paper: the final bias of Q(A, Left) (its average over the last 10% of each
    run's episodes, minus the true value ``gamma`` * mu) against N, mean and one standard
    error over runs, one panel per mu. Q-learning is the point at N = 1 (Maxmin with one
    table). The update at A bootstraps from max_a min_i Q^i(B, a) over B's 8 equal-valued
    actions: Theorem 1's zero-bias N for M = 8 is marked for reference (its uniform errors
    are an idealisation of the tables' errors)."""
    from maxminq.theory import zero_bias_n

    style.check_table(df, "toy_bias_vs_n_figure", [*_TOY_COLUMNS, "q_a_left"])
    df, extra = _with_params(df)
    final = T.toy_final(df, "q_a_left", extra=extra)
    final["bias"] = final["q_a_left"] - gamma * final["mu"]
    stats_all = _mean_se(final, "bias", ["mu", "algorithm", "n", *extra]).reset_index()
    mus = sorted(stats_all["mu"].unique(), reverse=True)
    # constrained layout: the legend goes below the panels, where it hides no point (inside
    # the first panel it covered Maxmin's points once the other families were plotted)
    fig, axes = style.subplots(
        1, len(mus), figsize=(5.2 * len(mus), 4.4), squeeze=False, layout="constrained"
    )
    n_zero = zero_bias_n(8)
    places = _places(stats_all)  # a setting's look alike in every panel
    for ax, mu in zip(axes[0], mus, strict=True):
        sub = stats_all[stats_all["mu"] == mu]
        # a line per operator and parameters, by value (not by the N of its first point)
        families = sorted(
            dict.fromkeys((a, params) for a, _, params, _ in _groups(sub)),
            key=lambda f: (T.agent_rank(f[0]), f[0], places[f][0]),
        )
        for algorithm, params in families:
            mask = sub.algorithm == algorithm
            stats = sub[mask & (sub.op_params == params) if extra else mask].sort_values("n")
            label = style.label(algorithm) + (f" ({params})" if params else "")
            # an operator's parameter settings (beta=5, beta=20): shades, markers, dashes
            k, m = places[algorithm, params]
            ax.errorbar(
                stats.n,
                stats["mean"],
                yerr=stats["se"],
                marker=style.PARAM_MARKERS[k % len(style.PARAM_MARKERS)],
                linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                capsize=3,
                color=style.shade(style.color(algorithm, stats_all.algorithm.astype(str)), k, m),
                label=label,
            )
        ax.axhline(0.0, color="black", lw=1, ls=":")
        zero = f"Theorem 1, M = 8: zero bias at N = {n_zero:.2f}"
        ax.axvline(n_zero, color="grey", lw=1, ls="--", label=zero)
        runs = count_runs(final[final["mu"] == mu], [*T.TOY_KEYS, *extra])
        ax.set_title(f"μ = {mu:+g}  ({style.count(runs, 'run')})")
        ax.set_xlabel("N (estimators; K snapshots for Averaged and Historical Best)")
        truth = "μ" if gamma == 1 else f"γ·μ, γ = {gamma:g}"
        ax.set_ylabel(f"final Q(A, Left) - {truth}")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    legend = style.legend_handles(axes[0])
    fig.legend(
        list(legend.values()),
        list(legend),
        loc="outside lower center",
        ncol=2 * len(mus),
        fontsize=8,
    )
    _add_note(fig, nonfinite_note(df, "left out of the points (their final values are not"
                                  " finite)"))  # fmt: skip
    return fig


def mc_best_step_sizes(df: pd.DataFrame, max_steps: int | None = None) -> pd.DataFrame:
    """Per (algorithm, n, sigma2): mean/SE of last-episode steps for every step size, and the
    best one (fewest mean steps; the paper picks the step size per algorithm and sigma^2).
    With an ``op_kwargs`` column (stored sweeps), its parameters (column ``op_params``) are
    part of the setting, and so is ``step_size_per`` (the command's CSV) when present: the
    table then says how its step sizes are read. With ``max_steps`` (the episode cap the runs
    used), column ``capped`` is the fraction of runs whose last episode hit the cap, i.e. did
    not reach the goal (the paper's "fail to reach the goal within 5,000 steps"): with a
    ``reached_goal`` column (``run_mountain_car_grid(reached_goal=True)``, as the command
    runs it) an episode that reached the goal on the cap's own step is not counted; without
    one, or where it is missing (NaN), every last episode of ``max_steps`` steps is."""
    style.check_table(df, "mc_best_step_sizes", _MC_COLUMNS)
    df, extra = _with_params(df)
    per = ["step_size_per"] if "step_size_per" in df.columns else []
    setting = ["algorithm", "n", *extra, *per, "sigma2"]
    # each run's own last episode (as tables.mountain_car_final): the table's last episode
    # dropped every setting that ran fewer episodes than the longest
    last = df[df.episode == _last_episodes(df, [*setting, "step_size"])]
    g = last.groupby([*setting, "step_size"], observed=True).steps
    table = pd.DataFrame({"mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count())})
    if max_steps is not None:
        cut = last.steps >= max_steps
        if "reached_goal" in last.columns:  # the goal on the cap's step is no truncation
            # a row without it (a frame of run_mountain_car_grid() without reached_goal
            # concatenated with one with it) is read by its steps: astype(bool) made its NaN
            # True, a goal, so such runs at the cap were never counted
            cut &= ~last.reached_goal.astype("boolean").fillna(False).astype(bool)
        at_cap = last.assign(_cut=cut.astype(float)).groupby([*setting, "step_size"], observed=True)
        table["capped"] = at_cap["_cut"].mean()
    table = table.reset_index()
    best = table.loc[table.groupby(setting, observed=True)["mean"].idxmin()]
    table["best"] = table.index.isin(best.index)
    return table


def _last_episodes(df: pd.DataFrame, setting: list[str]) -> pd.Series:
    """Each row's run's last episode (a run: ``setting`` plus its run columns)."""
    by = [*setting, *T.tabular_run_cols(df)]
    # sort=False: 2.6x faster on a full Fig. 3 table (8 million rows: 1.1 s)
    return df.groupby(by, observed=True, dropna=False, sort=False)["episode"].transform("max")


def _episodes_text(df: pd.DataFrame, extra: list[str]) -> str:
    """'1000 episodes', or '300-1000 episodes' when the runs' lengths differ (``df`` and
    ``extra`` from :func:`_with_params`)."""
    lengths = _last_episodes(
        df, T.present_keys(df, [*T.MOUNTAIN_CAR_KEYS, *extra, "step_size_per"])
    )
    low, high = int(lengths.min()), int(lengths.max())
    return style.count(high, "episode") if low == high else f"{low}-{high} episodes"


def mc_sensitivity_figure(df: pd.DataFrame, max_steps: int | None = None) -> Figure:
    """Fig. 3(a): steps in the last episode vs sigma^2, best step size per algorithm and
    sigma^2, one standard error; ``max_steps`` (the runs' episode cap) is named in the
    title."""
    style.check_table(df, "mc_sensitivity_figure", _MC_COLUMNS)
    table = mc_best_step_sizes(df)
    best = table[table.best]
    fig, ax = style.subplots(figsize=(5.4, 3.9))
    places = _places(best)
    for algorithm, n, params, rank in _groups(best):
        sub = best[_select(best, algorithm, n, params)].sort_values("sigma2")
        kw = _series_style(algorithm, n, rank, params, best.algorithm.astype(str),
                           places[algorithm, params])  # fmt: skip
        ax.errorbar(sub.sigma2, sub["mean"], yerr=sub["se"].fillna(0), marker="o", capsize=3,
                    lw=1.4, **kw)  # fmt: skip
    # The paper's 0, 1, 10, 50 on a linear axis put 0 and 1 on top of each other; symlog
    # (linear up to 1) spaces them, and the ticks are the variances run.
    ax.set_xscale("symlog", linthresh=1.0)
    levels = sorted(float(v) for v in best.sigma2.unique())
    ax.set_xticks(levels, labels=[f"{v:g}" for v in levels])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("reward variance σ² (symmetric log scale)")
    ax.set_ylabel("steps in the last episode")
    keyed, extra = _with_params(df)
    runs = count_runs(keyed, [*T.MOUNTAIN_CAR_KEYS, *extra])
    title = f"Mountain Car, {style.count(runs, 'run')}, {_episodes_text(keyed, extra)}"
    # "" for tables without the column and no cap: the report's figure is unchanged
    more = (_cap_text(max_steps) + _per_text(df)).removeprefix(", ")
    ax.set_title(title + ("\n" + more if more else ""))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def mc_learning_curve_figure(
    df: pd.DataFrame,
    sigma2: Sequence[float] | None = None,
    smooth: int = 10,
    title: str | None = None,
    max_steps: int | None = None,
) -> Figure:
    """Fig. 3(b) for ``sigma2=[10]``; appendix C.2 for all four: steps per episode at the best
    step size, mean over runs with one standard error, each a trailing ``smooth``-episode
    average (the band: the average of the episodes' standard errors, never narrower than the
    standard error of the averaged mean).
    ``title`` goes above the panels, followed by the episode cap ``max_steps`` if given (a
    curve at the cap is one that never reaches the goal) and the step-size reading when
    ``df`` records it (``step_size_per``); without a title, those two alone."""
    style.check_table(df, "mc_learning_curve_figure", _MC_COLUMNS)
    present = sorted(float(v) for v in df.sigma2.unique())
    levels = present if sigma2 is None else [float(v) for v in sigma2]
    for level in levels:  # else an empty panel titled with it
        if level not in present:  # exact: the rows are selected by equality below
            raise ValueError(
                f"mc_learning_curve_figure: sigma2 {level:g} is not in the table (it has "
                f"{', '.join(f'{v:g}' for v in present)})"
            )
    best = mc_best_step_sizes(df)
    best = best[best.best]
    df, extra = _with_params(df)
    keys = ["algorithm", "n", *extra, "sigma2", "step_size", "episode"]
    curves = _mean_se(df[df.sigma2.isin(levels)], "steps", keys).reset_index()
    cols = min(len(levels), 2)
    rows = int(np.ceil(len(levels) / cols))
    fig, axes = style.subplots(rows, cols, figsize=(5.4 * cols, 3.8 * rows), squeeze=False)
    places = _places(best)  # a setting's shade alike in every panel
    for ax, s2 in zip(axes.ravel(), levels, strict=False):
        for algorithm, n, params, rank in _groups(best):
            pick = best[_select(best, algorithm, n, params) & (best.sigma2 == s2)]
            if pick.empty:
                continue
            alpha = float(pick.step_size.iloc[0])
            stats = curves[
                _select(curves, algorithm, n, params) & (curves.sigma2 == s2)
                & (curves.step_size == alpha)
            ].sort_values("episode")  # fmt: skip
            kw = _series_style(algorithm, n, rank, params, best.algorithm.astype(str),
                               places[algorithm, params])  # fmt: skip
            kw["label"] = f"{kw['label']}, step {alpha:g}"
            mean = _smooth(stats["mean"].to_numpy(), smooth)
            se = _smooth(stats["se"].to_numpy(), smooth)
            ax.plot(stats.episode, mean, lw=1.3, **kw)
            ax.fill_between(stats.episode, mean - se, mean + se, color=kw["color"], alpha=0.15,
                            lw=0)  # fmt: skip
        ax.set_yscale("log")
        # Plain step counts (300, not 3 x 10^2), on major and minor ticks alike: over a narrow
        # range only minor ticks are labelled.
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        ax.set_title(f"reward ~ N(-1, {s2:g})")
        ax.set_xlabel("episode")
        ax.xaxis.set_major_locator(_episode_ticks())
        ax.set_ylabel("steps per episode")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(levels) :]:
        ax.set_visible(False)
    # Without a title the cap and the reading still head the panels (as Fig. 3(a)'s title
    # names them): max_steps alone was dropped without a word.
    more = _cap_text(max_steps) + _per_text(df)
    more = more if title else more.removeprefix(", ")
    heading = title + more if title else more[:1].upper() + more[1:]
    if heading:
        fig.suptitle(heading, fontsize=10, wrap=True)
    fig.tight_layout()
    return fig


def _episode_ticks() -> MaxNLocator:
    """Ticks of an episode axis: matplotlib's default ones (its ``AutoLocator``'s steps),
    whole numbers only (a run of 4 episodes was ticked 1.0, 1.5, 2.0, ...)."""
    return MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True)


def _cap_text(max_steps: int | None) -> str:
    """', at most 5,000 steps per episode' for an episode cap, '' without one."""
    return "" if max_steps is None else f", at most {int(max_steps):,} steps per episode"


def _per_text(df: pd.DataFrame) -> str:
    """', step sizes per tiling' when ``df`` records it (the command's ``step_size_per``)."""
    if "step_size_per" not in df or df.empty:
        return ""
    return f", step sizes per {', '.join(str(v) for v in pd.unique(df.step_size_per))}"


def remove_stale(folder: Path, names: Iterable[str]) -> None:
    """Remove ``names`` from ``folder`` where an earlier run left them. Called once a command's
    first new output is in place: a failure (full disk, Ctrl-C) while the rest is written
    must not leave figures and tables of another setting beside the new ones."""
    for name in names:
        (folder / name).unlink(missing_ok=True)


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: int = 130) -> Path:
    """Write ``fig`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    atomic_write(path, partial(fig.savefig, format=path.suffix[1:], dpi=dpi))
    return path
