"""The paper's figures for the deep experiments, and the driver that writes every figure.

Deep figures (this module): Fig. 4 learning curves per environment (best hyper-parameters per
agent, one-standard-error shading), Fig. 4(h)/(i) Maxmin DQN with varying N, the appendix's
step-size sensitivity curves, and, beyond the paper, the estimation bias measured during
training for each deep agent. Tabular and Mountain Car figures come from
:mod:`maxminq.analysis.classic_plots` and the Theorem 1 figures from
:mod:`maxminq.analysis.theory_plots`; :func:`make_figures` calls whichever apply.

Every figure is written as PNG and SVG, atomically, with colours and labels from
:mod:`maxminq.analysis.style`.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, NullFormatter
from matplotlib.typing import ColorType

from maxminq.analysis import style
from maxminq.analysis import tables as T
from maxminq.deep.config import BIAS_TAIL  # torch-free
from maxminq.experiments.store import atomic_write

FORMATS = ("png", "svg")
EMA_WEIGHT = 0.6  # display smoothing of the grid curves (100 points per run)


@dataclass
class FigureFile:
    """One written figure: its stem name, title, caption and the files written."""

    name: str
    title: str
    caption: str
    paths: list[Path] = field(default_factory=list)
    section: str = "deep"

    @property
    def png(self) -> Path | None:
        """The PNG file, if one was written."""
        return next((p for p in self.paths if p.suffix == ".png"), None)


def save_figure(fig: Figure, out_dir: Path, name: str) -> list[Path]:
    """Write ``fig`` as ``name.png`` and ``name.svg`` in ``out_dir`` atomically."""
    paths = []
    for fmt in FORMATS:
        final = out_dir / f"{name}.{fmt}"
        atomic_write(final, partial(fig.savefig, format=fmt, dpi=120, bbox_inches="tight"))
        paths.append(final)
    return paths


def _grid(
    n_panels: int, ncols: int = 3, size: tuple[float, float] = (4.2, 3.2)
) -> tuple[Figure, list[Axes]]:
    """A figure with ``n_panels`` axes in rows of ``ncols`` (extra axes hidden)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig, axes = style.subplots(
        nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False
    )
    flat = list(axes.ravel())
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return fig, flat[:n_panels]


def _shared_legend(fig: Figure, axes: Sequence[Axes]) -> None:
    """One legend for the whole figure, from the union of the panels' labelled lines.

    It goes into the first unused grid cell when there is one (e.g. 7 panels in a 3 x 3
    grid), else below the panels, in rows of five entries.
    """
    handles = style.legend_handles(axes)
    spare = [ax for ax in fig.axes if not ax.get_visible()]
    if not handles:
        fig.tight_layout()
    elif spare:
        fig.tight_layout()
        box = spare[0].get_position()
        fig.legend(list(handles.values()), list(handles.keys()), loc="center",
                   bbox_to_anchor=(box.x0, box.y0, box.width, box.height), frameon=False,
                   fontsize="large")  # fmt: skip
    else:
        legend = fig.legend(
            list(handles.values()),
            list(handles.keys()),
            loc="lower center",
            ncol=min(len(handles), 5),
            frameon=False,
            bbox_to_anchor=(0.5, 0.0),
        )
        # Room for all its rows (more than five entries wrap), measured as drawn.
        box = legend.get_window_extent()  # the figure's renderer
        fig.tight_layout(rect=(0, box.height / fig.bbox.height + 0.01, 1, 1))


def _band(
    ax: Axes,
    x: Any,
    mean: Any,
    se: Any,
    *,
    color: ColorType,
    label: str,
    smooth: bool = True,
    **kw: Any,
) -> None:
    """A mean line with a one-standard-error band, EMA-smoothed for display when asked."""
    x = np.asarray(x, dtype=float)
    m = np.asarray(mean, dtype=float)
    s = np.nan_to_num(np.asarray(se, dtype=float), nan=0.0)
    if smooth:
        m, s = T.ema(m, EMA_WEIGHT), T.ema(s, EMA_WEIGHT)
    sparse = kw.pop("sparse_marker", "o")  # a G's parameter setting's own (_deep_look)
    if x.size < 20:  # few points (e.g. sparse bias probes): show where they are
        kw.setdefault("marker", sparse)
        kw.setdefault("ms", 3)
    ax.plot(x, m, color=color, label=label, lw=1.6, **kw)
    ax.fill_between(x, m - s, m + s, color=color, alpha=0.2, lw=0)


def _best_agent_bands(
    ax: Axes,
    best_env: pd.DataFrame,
    curves: pd.DataFrame,
    keys: list[str],
    looks: _Looks,
    **kw: Any,
) -> str:
    """One band per agent: the curve of that agent's best setting (rows of ``best_env``),
    labelled with the agent's name (one legend entry per agent across panels). Returns the
    panel's best N / K, e.g. ``'Averaged K=2, Maxmin N=6'``, for its title: they differ
    from panel to panel, and Maxmin's bias depends on N (Theorem 1). generalized-dqn's Gs
    at one N read ``'Generalized N=3'``; at several, each G is named with its N. ``looks``:
    the figure's colours and line styles of its Gs (:func:`_looks`)."""
    settings: list[tuple[str, str, str, int]] = []  # (agent, name, 'N' or 'K', its value)
    for _, row in _in_order(best_env).iterrows():
        c = T.select_setting(curves, row, keys).sort_values("step")
        if c.empty:
            continue
        agent, n = row["agent"], row.get("n")
        name, look = _deep_look(row, *looks)
        _band(ax, c["step"], c["mean"], c["se"], label=name, **look, **kw)
        size = style.size_name(agent)  # N, K or None
        if size and isinstance(n, (int, float, np.number)) and np.isfinite(n):
            settings.append((agent, name, size, int(n)))
    texts = []
    for agent, name, size, n in settings:
        short = style.LABELS.get(agent, agent).removesuffix(" DQN")
        if agent == "generalized-dqn" and len({m for a, *_, m in settings if a == agent}) > 1:
            short += " " + name.removeprefix(style.LABELS[agent] + ", ")  # which G
        texts.append(f"{short} {size}={n}")
    return ", ".join(dict.fromkeys(texts))  # Gs at one N: 'Generalized N=3' once


def _in_order(df: pd.DataFrame) -> pd.DataFrame:
    """``df``'s rows in legend order: by agent (the paper's order), a generalized-dqn's by
    its G and then its parameters by value (``T.setting_order``: beta 5, 20, 100; the same
    order in every figure and table)."""
    by = T.present_keys(df, ["agent", *T.DEEP_OPERATOR_KEYS])

    def key(s: pd.Series) -> pd.Series:
        if s.name == "agent":
            return s.map(T.agent_rank)
        return T.setting_order(s) if s.name == "op_kwargs" else s.fillna("").astype(str)

    return df.sort_values(by, key=key, kind="stable")


#: What :func:`_deep_look` needs of a whole figure: the Gs of one's own drawn in it (each its
#: own colour, ``style.color``'s ``among``), and per G drawn with several parameter
#: settings, each setting's place k of m (``(operator, style.params_key(op_kwargs))`` ->
#: ``(k, m)``).
_Looks = tuple[list[str], dict[tuple[str, tuple], tuple[int, int]]]


def _looks(df: pd.DataFrame) -> _Looks:
    """The :data:`_Looks` of the settings (rows) of ``df``, all the figure draws, so that a G
    and each of its parameter settings look alike in every panel."""
    if "operator" not in df.columns:
        return [], {}
    gen = df[df["agent"] == "generalized-dqn"] if "agent" in df.columns else df
    kwargs = gen["op_kwargs"] if "op_kwargs" in gen.columns else pd.Series(None, index=gen.index)
    places: dict[tuple[str, tuple], tuple[int, int]] = {}
    for operator, given in kwargs.groupby(gen["operator"].astype(str), sort=True):
        keys = sorted({style.params_key(v) for v in given})
        for k, key in enumerate(keys):
            places[str(operator), key] = (k, len(keys))
    return _operators(df), places


def _operators(df: pd.DataFrame) -> list[str]:
    """The Gs (``operator``) of ``df``'s generalized-dqn rows, for their colours."""
    if "operator" not in df.columns:
        return []
    return sorted({str(g) for g in df["operator"].dropna()})


def _deep_look(
    row: pd.Series,
    among: Sequence[str] = (),
    places: dict[tuple[str, tuple], tuple[int, int]] | None = None,
) -> tuple[str, dict[str, Any]]:
    """A deep setting's legend name and line style: the agent's (``Maxmin DQN``, its
    family's colour); a generalized-dqn run's names its G and parameters (``Generalized
    DQN, median_q [my_ops] (w=0.7)``), coloured as its G (a G of one's own, one of
    ``style.OWN_COLORS`` per G of ``among``; a library G its family's), dashed. A G drawn
    with several parameter settings (``places``, :func:`_looks`) gives the k-th of m (by
    value) a shade of its colour, lighter to darker (``style.shade``), its own dashes
    (``style.PARAM_LINESTYLES``) and marker where points are drawn (``sparse_marker``,
    ``style.PARAM_MARKERS``): beta=5 and beta=20 were one colour and one dash."""
    agent = row["agent"]
    operator, kwargs = row.get("operator"), row.get("op_kwargs")
    key = style.colour_key(agent, operator)
    if key == agent:
        return style.LABELS.get(agent, agent), {"color": style.color(agent)}
    k, m = (places or {}).get((str(operator), style.params_key(kwargs)), (0, 1))
    colour = style.shade(style.color(key, among), k, m)
    dashes = style.PARAM_LINESTYLES[k % len(style.PARAM_LINESTYLES)]
    look: dict[str, Any] = {"color": colour, "ls": dashes}
    if m > 1:  # and its marker where points are drawn (sparse bias probes, step sizes)
        look["sparse_marker"] = style.PARAM_MARKERS[k % len(style.PARAM_MARKERS)]
    return style.label(agent, None, operator, kwargs), look


def _panel_title(ax: Axes, env: str, settings: str, among: Sequence[str] = ()) -> None:
    """The environment (in full where its short name is another's of ``among``), and under
    it the panel's best N / K (smaller) when there are any."""
    ax.set_title(T.env_title(env, among) + (f"\n{settings}" if settings else ""),
                 fontsize=None if not settings else 10)  # fmt: skip


def _best_agent_figure(
    best: pd.DataFrame,
    curves: pd.DataFrame,
    xlabel: str,
    ylabel: str,
    *,
    smooth: bool = True,
    zero_line: bool = False,
) -> Figure | None:
    """A panel per environment of ``best`` that ``curves`` has (columns env_id, the setting
    keys, step, mean, se): each agent's best setting as a band (:func:`_best_agent_bands`,
    EMA-smoothed when ``smooth``), titled with the panel's best N / K, a dashed line at 0
    when ``zero_line``, one shared legend. None when no environment of ``best`` has curves."""
    envs = [e for e in _envs(best) if e in set(curves["env_id"])]
    if not envs:
        return None
    fig, axes = _grid(len(envs))
    keys = T.present_keys(curves, T.DEEP_KEYS)
    looks = _looks(best[best["env_id"].isin(envs)])  # one look per G across the panels
    for ax, env in zip(axes, envs, strict=True):
        at = best[best["env_id"] == env]
        settings = _best_agent_bands(ax, at, curves, keys, looks, smooth=smooth)
        if zero_line:
            ax.axhline(0.0, color="black", lw=0.8, ls="--")
        _panel_title(ax, env, settings, envs)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    _shared_legend(fig, axes)
    return fig


def _range_text(values: Sequence[float] | np.ndarray, noun: str) -> str:
    """``2 seeds``, ``2 to 4 seeds``, ``2,000 to 3,000 steps``."""
    low, high = int(min(values)), int(max(values))
    return f"{low:,}{f' to {high:,}' * (low != high)} {noun}{'s' * (high != 1)}"


def runs_text(episodes: pd.DataFrame) -> str:
    """What the deep figures' means are over, for their captions: ``' 2 seeds per setting,
    3,000 steps each.'`` (ranges where settings differ; the steps a run was set to train,
    else the last step it logged). A figure copied out of the report then still says how
    few runs a curve is, e.g. at quick scale."""
    keys = T.present_keys(episodes, T.DEEP_KEYS)
    runs = episodes[[*keys, *(T.run_cols(episodes) or ["seed"])]].drop_duplicates()
    seeds = runs.groupby(keys, dropna=False).size().to_numpy() if keys else [len(runs)]
    if "steps" in episodes.columns and episodes["steps"].notna().all():
        steps = pd.to_numeric(episodes["steps"]).to_numpy(dtype=float)
    else:
        by = T.run_cols(episodes) or keys or ["seed"]
        steps = episodes.groupby(by)["step"].max().to_numpy(dtype=float)
    return f" {_range_text(seeds, 'seed')} per setting, {_range_text(steps, 'step')} each."


def _envs(df: pd.DataFrame) -> list[str]:
    return sorted(df["env_id"].dropna().unique(), key=T.env_rank)


def _agents(df: pd.DataFrame) -> list[str]:
    return sorted(df["agent"].dropna().unique(), key=T.agent_rank)


# ----------------------------------------------------------------------------- deep figures
def fig_learning_curves(tables: T.Tables, best: pd.DataFrame, out_dir: Path) -> FigureFile | None:
    """Fig. 4(a)-(g): per environment, each agent's best setting, mean +- 1 SE over seeds."""
    if not tables.has_deep or best.empty:
        return None
    assert tables.episodes is not None  # has_deep
    curves = T.deep_curves(tables.episodes)
    fig = _best_agent_figure(best, curves, "steps", "return (avg. last 100 ep.)")
    if fig is None:
        return None
    name = "deep_learning_curves"
    caption = (
        "Learning curves (Fig. 4): training return averaged over the last 100 episodes, "
        "mean over seeds with one standard error shaded, both exponentially smoothed for "
        "display (the band: the smoothed standard errors, not the standard error of the "
        "smoothed mean); each agent at its best step size (and N) by final performance."
    )
    return FigureFile(
        name, "Learning curves per environment (Fig. 4)", caption, save_figure(fig, out_dir, name)
    )


def fig_varying_n(
    tables: T.Tables,
    summary: pd.DataFrame,
    out_dir: Path,
    envs: Sequence[str] = ("pixelcopter", "asterix"),
) -> list[FigureFile]:
    """Fig. 4(h)/(i): Maxmin DQN with each N (its best step size per N) on the given envs."""
    if not tables.has_deep or summary.empty:
        return []
    assert tables.episodes is not None  # has_deep
    mm = summary[summary["agent"] == "maxmin-dqn"]
    among = _envs(mm)
    out = []
    for token in envs:
        env_ids = [e for e in _envs(mm) if token in str(e).lower()]
        for env in env_ids:
            sub = mm[mm["env_id"] == env]
            if sub["n"].nunique() < 2:
                continue
            best_n = T.best_settings(sub, ["n"])
            curves = T.deep_curves(
                tables.episodes[
                    (tables.episodes["env_id"] == env) & (tables.episodes["agent"] == "maxmin-dqn")
                ]
            )
            keys = T.present_keys(curves, T.DEEP_KEYS)
            ns = sorted(best_n["n"].astype(int))
            cmap = matplotlib.colormaps["Greens"]
            fig, ax = style.subplots(figsize=(5.2, 3.6))
            for i, (_, row) in enumerate(best_n.sort_values("n").iterrows()):
                c = T.select_setting(curves, row, keys).sort_values("step")
                shade = cmap(0.45 + 0.55 * i / max(1, len(ns) - 1))
                _band(
                    ax,
                    c["step"],
                    c["mean"],
                    c["se"],
                    color=shade,
                    label=f"N={int(row['n'])} (lr={row['lr']:g})",
                )
            title = T.env_title(env, among)
            ax.set_title(f"{title}: Maxmin DQN with varying N")
            ax.set_xlabel("steps")
            ax.set_ylabel("return (avg. last 100 ep.)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, frameon=False)
            fig.tight_layout()
            # a file name: an id of one's own in full holds ':' or '/'
            name = "deep_varying_n_" + re.sub(r"[^a-z0-9._-]+", "_", title.lower())
            panel = {"pixelcopter": "Fig. 4(h)", "asterix": "Fig. 4(i)"}.get(token, "Fig. 4")
            caption = (
                f"Maxmin DQN on {title} with N in {ns} ({panel}); each N at its "
                "best step size; mean over seeds, one standard error shaded, both "
                "exponentially smoothed for display, as in Fig. 4."
            )
            out.append(
                FigureFile(
                    name,
                    f"Varying N on {title} ({panel})",
                    caption,
                    save_figure(fig, out_dir, name),
                )
            )
    return out


def _single_step_size_note(summary: pd.DataFrame) -> str:
    """For the sensitivity caption: which agents ran at a single step size (a lone point:
    no sensitivity to see), e.g. every agent at quick scale, which runs each at the
    authors' best step size only; '' when every agent ran at several."""
    # a series per agent, generalized-dqn's per G (T.DEEP_OPERATOR_KEYS), as drawn
    by = T.present_keys(summary, ["env_id", "agent", *T.DEEP_OPERATOR_KEYS])
    counts = summary.groupby(by, dropna=False)["lr"].nunique()
    single = counts[counts < 2]
    if single.empty:
        return ""
    if len(single) == len(counts):
        return (
            " Every agent here ran at a single step size per environment, so each panel "
            "shows one point per agent and no sensitivity (the shipped configs sweep the step "
            "size at --scale paper)."
        )
    rows = _in_order(single.index.to_frame(index=False))
    rows = rows.sort_values("env_id", key=lambda s: s.map(T.env_rank), kind="stable")
    names = ", ".join(
        f"{_deep_look(r)[0]} on {T.env_title(r['env_id'], _envs(summary))}"
        for _, r in rows.iterrows()
    )
    return f" A single step size (one point, no sensitivity shown): {names}."


def fig_sensitivity(summary: pd.DataFrame, out_dir: Path) -> FigureFile | None:
    """Appendix sensitivity: final performance vs step size per env (best N at each step size)."""
    if summary.empty or "lr" not in summary.columns:
        return None
    envs = _envs(summary)
    fig, axes = _grid(len(envs))
    looks = _looks(summary)  # one look per G across the panels
    for ax, env in zip(axes, envs, strict=True):
        sub = summary[summary["env_id"] == env]
        # an agent per series; generalized-dqn one per G (operator, op_kwargs)
        series = _in_order(
            sub[T.present_keys(sub, ["agent", *T.DEEP_OPERATOR_KEYS])].drop_duplicates()
        )
        for k, (_, which) in enumerate(series.iterrows()):
            name, look = _deep_look(which, *looks)
            mine = T.select_setting(sub, which, list(which.index))
            per_lr = T.best_settings(mine, ["lr"]).sort_values("lr")
            se = per_lr["se"].fillna(0.0).to_numpy()
            dodge = 10 ** (0.02 * (k - (len(series) - 1) / 2))  # keep error bars apart
            ax.errorbar(
                per_lr["lr"].to_numpy(dtype=float) * dodge,
                per_lr["mean"],
                yerr=se,
                marker=look.pop("sparse_marker", "o"),
                ms=4,
                capsize=2,
                label=name,
                **look,
            )
        ax.set_xscale("log")
        lrs = sorted(float(v) for v in sub["lr"].dropna().unique())
        ax.set_xticks(lrs, [f"{v:g}" for v in lrs], rotation=30 if len(lrs) > 3 else 0)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(T.env_title(env, envs))
        ax.set_xlabel("step size")
        ax.set_ylabel("final return")
        ax.grid(alpha=0.3)
    _shared_legend(fig, axes)
    name = "deep_sensitivity"
    caption = (
        "Sensitivity to the step size (appendix): final performance (mean of the test "
        "episodes, or the last-100-episode training average where no test was run), mean ± "
        "one standard error over seeds; for Maxmin and Averaged DQN the best N at each step size."
    )
    caption += _single_step_size_note(summary)
    return FigureFile(
        name, "Step-size sensitivity (appendix)", caption, save_figure(fig, out_dir, name)
    )


def fig_bias(tables: T.Tables, best: pd.DataFrame, out_dir: Path) -> FigureFile | None:
    """Beyond the paper: measured estimation bias during training, per env and deep agent."""
    m = tables.metrics
    if m is None or m.empty or "bias_mean" not in m.columns or best.empty:
        return None
    if not np.isfinite(m["bias_mean"].to_numpy(dtype=float)).any():
        return None
    curves = T.metric_curves(m, "bias_mean")
    fig = _best_agent_figure(
        best, curves, "environment steps", "estimate - MC return", smooth=False, zero_line=True
    )
    if fig is None:
        return None
    name = "deep_estimation_bias"
    caption = (
        "Estimation bias measured during training (not in the paper): the agent's value "
        "estimate for visited state-action pairs (the quantity its target uses, e.g. the min "
        "over members for Maxmin) minus the discounted Monte Carlo return the ε-greedy "
        "behaviour policy obtained from there (a probe in an episode cut by the time limit "
        f"only if γ^(steps to the cut) ≤ {BIAS_TAIL}), per metrics interval; mean over "
        "seeds ± one standard error; each agent at its best setting (by return), so the bias "
        "also follows how fast its returns grew. Above zero = overestimation."
    )
    return FigureFile(
        name, "Measured estimation bias during training", caption, save_figure(fig, out_dir, name)
    )


def bias_by_n(tables: T.Tables, summary: pd.DataFrame, env: str) -> pd.DataFrame:
    """Measured bias against N on ``env``: for Maxmin DQN at each N (its best step size by
    return) and DQN (N = 1), each seed's bias over the second half of training
    (``T.second_half_bias``), then mean and standard error over seeds. Columns
    ``agent, n, lr, mean, se, seeds``; empty without bias data or without two N."""
    m = tables.metrics
    cols = ["agent", "n", "lr", "mean", "se", "seeds"]
    if m is None or m.empty or "bias_mean" not in m.columns or summary.empty:
        return pd.DataFrame(columns=cols)
    keys = T.present_keys(m, T.DEEP_KEYS)
    at = summary[summary["env_id"] == env]
    mm = at[at["agent"] == "maxmin-dqn"]
    if mm["n"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    picks = [T.best_settings(mm, ["n"]), T.best_settings(at[at["agent"] == "dqn"], ["agent"])]
    rows = []
    for _, setting in pd.concat(picks, ignore_index=True).iterrows():
        per_seed = T.second_half_bias(m, setting, keys)
        if per_seed.size:
            n = 1 if setting["agent"] == "dqn" else int(setting["n"])
            rows.append([setting["agent"], n, setting["lr"], *T.mean_se(per_seed), per_seed.size])
    return pd.DataFrame(rows, columns=cols)


def fig_bias_vs_n(tables: T.Tables, summary: pd.DataFrame, out_dir: Path) -> FigureFile | None:
    """Beyond the paper: the measured bias of Maxmin DQN against N (Theorem 1 in practice),
    one panel per environment run with several N, DQN at N = 1 for reference."""
    if not tables.has_deep or summary.empty:
        return None
    data = {env: bias_by_n(tables, summary, env) for env in _envs(summary)}
    data = {env: d for env, d in data.items() if (d["agent"] == "maxmin-dqn").sum() >= 2}
    if not data:
        return None
    fig, axes = _grid(len(data))
    for ax, (env, d) in zip(axes, data.items(), strict=True):
        for agent, marker in (("maxmin-dqn", "o-"), ("dqn", "s")):
            sub = d[d["agent"] == agent].sort_values("n")
            if not sub.empty:
                label = style.LABELS.get(agent, agent)
                ax.errorbar(sub["n"], sub["mean"], yerr=sub["se"], fmt=marker, capsize=3,
                            color=style.color(agent), label=label)  # fmt: skip
        ax.axhline(0.0, color="black", lw=0.8, ls="--")
        ax.set_xticks(sorted(d["n"].astype(int).unique()))
        ax.set_title(T.env_title(env, list(data)))
        ax.set_xlabel("N (DQN: 1)")
        ax.set_ylabel("estimate - MC return")
        ax.grid(alpha=0.3)
    _shared_legend(fig, axes)
    name = "deep_bias_vs_n"
    caption = (
        "Measured estimation bias against N (not in the paper; Theorem 1 predicts it falls "
        "as N grows): each seed's bias pooled over all probes of the second half of training "
        "(the estimate its target uses minus the discounted return of the ε-greedy "
        "behaviour policy), mean ± one standard error over seeds; Maxmin DQN at its best step "
        "size for each N, DQN at N = 1. Above zero = overestimation."
    )
    return FigureFile(
        name, "Measured estimation bias against N", caption, save_figure(fig, out_dir, name)
    )


#: Panels of ``fig_training_runs`` (``maxminq plot --panels``): table, column, title, y label.
#: The bias columns come from ``maxminq train``'s probes: per seed and metrics interval, the
#: mean, mean absolute value and standard deviation of ``estimate - discounted MC return``;
#: ``bias_dist`` draws its distribution from the probes table itself (``--save-probes``),
#: ``eval`` each seed's mean return per evaluation from the evals table (``--eval-every``).
TRAINING_PANELS: dict[str, tuple[str, str, str, str]] = {
    "return": ("episodes", "return_avg100", "training return", "return (100-episode average)"),
    "eval": ("evals", "return", "evaluation return", "mean return per evaluation"),
    "bias": ("metrics", "bias_mean", "estimation bias (above 0: over)", "estimate - MC return"),
    "bias_abs": (
        "metrics",
        "bias_abs",
        "absolute estimation error",
        "mean |estimate - MC return|",
    ),
    "bias_std": (
        "metrics",
        "bias_std",
        "spread of the estimation error",
        "sd of estimate - MC return",
    ),
    "q": ("metrics", "q_mean", "Q estimates (updated net)", "mean Q(s, a) of replayed batches"),
    "loss": ("metrics", "loss", "training loss", "mean loss of the updates"),
    # Needs the probes table (--save-probes); binned by the metrics rows: bias_quantiles.
    "bias_dist": (
        "probes",
        "bias",
        "bias per probe, all seeds pooled",
        "estimate - MC return: median, 10-90%",
    ),
}
DEFAULT_PANELS = ("return", "bias", "q")
#: One marker per run of ``training_runs_figure`` (runs of one family share a colour, and a
#: run with one metrics row is a lone point, whose dashes do not show).
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
BIAS_COLUMNS = ("bias_mean", "bias_abs", "bias_std")
#: For the caption of ``fig_training_runs``: each panel's short name and what it shows.
PANEL_NOTES: dict[str, tuple[str, str]] = {
    "return": (
        "return",
        "100-episode moving average; a diverged seed keeps the return it reached, as in the report",
    ),
    "eval": (
        "evaluation return",
        "every eval_every steps, each seed's mean return over its eval_every_episodes "
        "episodes with eps = eval_eps, played beside training; a diverged seed is not "
        "evaluated after it diverged, so later means are over the other seeds",
    ),
    "bias": (
        "estimation bias",
        "the agent's estimate for a visited (s, a) minus the discounted return obtained from "
        "there, averaged over the probes",
    ),
    "bias_abs": ("absolute error", "the mean of |estimate - discounted return| over the probes"),
    "bias_std": (
        "spread",
        "the standard deviation of estimate - discounted return over the probes",
    ),
    "q": ("Q", "the updated network's mean Q(s, a) on its replayed mini-batches"),
    "loss": ("loss", "the mean loss of the updates"),
    "bias_dist": (
        "bias per probe",
        "per metrics interval, the median (line) and 10-90% quantiles (band) of estimate - "
        "MC return over the probes of all seeds pooled",
    ),
}
#: Points per seed of a metrics panel at most (as the return panel's grid): longer runs are
#: drawn as means over windows of metrics intervals (:func:`window_means`).
METRIC_POINTS = 100
#: Why a run's bias columns can be empty (the trainer's rule; e.g. never met by
#: MountainCar-v0's 200-step limit at gamma 0.99, which cuts every early episode).
NO_BIAS_WHY = (
    "a probe, taken every bias_probe_every steps from learning_starts on, counts once its "
    f"episode terminates, or is cut by the time limit with gamma^(steps to the cut) <= {BIAS_TAIL}"
)


#: The quantiles of the ``bias_dist`` panel: band, line, band.
BIAS_QUANTILES = (0.1, 0.5, 0.9)


def probe_intervals(probes: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """Columns seed, step, bias: each probe with a finite bias at the ``step`` of the metrics
    row its seed counts it in, the first of that seed's metrics steps at or after the
    probe's ``end_step`` (a probe counts in the interval its episode ended in). A probe past
    its seed's last metrics row (a diverged seed's last interval, which ``metrics`` leaves
    out) is left out, so per seed and step these are the probes of that row's ``bias_mean``."""
    parts = []
    for seed, rows in probes.groupby("seed", sort=True):
        steps = np.sort(metrics.loc[metrics["seed"] == seed, "step"].to_numpy(dtype=float))
        at = np.searchsorted(steps, rows["end_step"].to_numpy(dtype=float), side="left")
        bias = rows["bias"].to_numpy(dtype=float)
        keep = (at < len(steps)) & np.isfinite(bias)
        parts.append(pd.DataFrame({"seed": seed, "step": steps[at[keep]], "bias": bias[keep]}))
    if not parts:  # no probe scored (a header-only probes.csv)
        return pd.DataFrame({"seed": [], "step": [], "bias": []})
    return pd.concat(parts, ignore_index=True)


def bias_quantiles(binned: pd.DataFrame) -> pd.DataFrame:
    """Per ``step`` of :func:`probe_intervals`' rows, the ``BIAS_QUANTILES`` of their bias
    (numpy's linear interpolation), all seeds' probes pooled: columns step, q10, q50, q90, n.
    Pooled rather than per-seed quantiles averaged: the band is then the spread of the
    per-probe bias itself (within and between seeds); probes come on a fixed step schedule,
    so each seed weighs about alike (less where its cut episodes drop probes)."""
    names = [f"q{round(100 * q)}" for q in BIAS_QUANTILES]
    if binned.empty:
        return pd.DataFrame(columns=["step", *names, "n"])
    by_step = binned.groupby("step", sort=True)["bias"]
    out = by_step.quantile(np.array(BIAS_QUANTILES)).unstack()
    out.columns = pd.Index(names)
    out["n"] = by_step.size()
    return out.reset_index()


def _bias_dist(ax: Axes, tables: dict[str, pd.DataFrame], *, color: ColorType, label: str,
               ls: str, run: int, runs: int) -> float | None:  # fmt: skip
    """Draw one run's ``bias_dist`` curve (median line, 10-90% band; one run of several
    seeds: a thin median line per seed too); its last step, or None when it has no probe."""
    binned = probe_intervals(tables["probes"], tables["metrics"])
    if binned.empty:
        return None
    q = bias_quantiles(binned)
    if runs == 1 and binned["seed"].nunique() > 1:
        for _, rows in binned.groupby("seed"):
            median = rows.groupby("step", sort=True)["bias"].median()
            ax.plot(median.index, median.to_numpy(), color=color, lw=0.7, alpha=0.35)
    x = q["step"].to_numpy(dtype=float)
    low, high = q["q10"].to_numpy(dtype=float), q["q90"].to_numpy(dtype=float)
    if len(q) == 1:  # a band of one point does not show
        ax.vlines(x, low, high, color=color, lw=4, alpha=0.3)
    ax.fill_between(x, low, high, color=color, alpha=0.2, lw=0)
    ax.plot(x, q["q50"], color=color, label=label, lw=1.6, ls=ls, **_marks(len(q), run, runs))
    return float(x.max())


def window_means(
    df: pd.DataFrame, value: str, points: int = METRIC_POINTS
) -> tuple[pd.DataFrame, set[int]]:
    """``df`` (columns seed, step, ``value``; finite values) as at most ``points`` points
    per seed, and the numbers of logged steps per point: with more logged steps than that,
    each seed's mean of ``value`` over ``ceil(steps / ceil(steps / points))`` windows of
    consecutive logged steps as equal as can be, at the mean of their steps (a 2M-step run
    logging every 1,500 steps: 1,333 noisy points, 96 windows of 13-14; equal windows, so
    no short, noisy window at the end). With ``points`` or fewer, ``df`` itself and {1}:
    every logged value of a short run is drawn."""
    steps = np.sort(df["step"].unique())
    if len(steps) <= points:
        return df, {1}
    n_windows = math.ceil(len(steps) / math.ceil(len(steps) / points))
    sizes = [len(w) for w in np.array_split(steps, n_windows)]
    of_step = np.repeat(np.arange(n_windows), sizes)  # the window of each logged step
    window = of_step[np.searchsorted(steps, df["step"].to_numpy())]
    centre = pd.Series(steps).groupby(of_step).mean().to_numpy()
    binned = df.assign(step=centre[window]).groupby(["seed", "step"], as_index=False)
    return binned[[value]].mean(), set(sizes)


def _marks(n_points: int, run: int, runs: int) -> dict:
    """Marker keywords for a curve of ``n_points`` of run ``run`` of ``runs``: every point of
    a sparse curve (e.g. bias probes), larger for a lone point; with several runs about eight
    on a dense curve (staggered from run to run, so curves on top of each other show all
    theirs), so the marker in the legend is found in every panel."""
    marker = RUN_MARKERS[run % len(RUN_MARKERS)] if runs > 1 else "o"
    if n_points < 20:
        return {"marker": marker, "ms": 7 if n_points == 1 else 4}
    if runs == 1:
        return {}
    every = n_points // 8
    return {"marker": marker, "ms": 4, "markevery": (run * every // runs, every)}


PANELS_PER_ROW = 4  # training_runs_figure: more panels than this wrap into rows of three


def _has_episodes(run: tuple[str, str, dict[str, pd.DataFrame]]) -> bool:
    """Whether a run of :func:`training_runs_figure` has an episode to draw."""
    episodes = run[2].get("episodes")
    return episodes is not None and not episodes.empty


def training_runs_figure(
    runs: Sequence[tuple[str, str, dict[str, pd.DataFrame]]],
    title: str,
    panels: Sequence[str] = DEFAULT_PANELS,
    steps: int | None = None,
    shades: Sequence[tuple[int, int]] | None = None,
) -> Figure | None:
    """The figure of :func:`fig_training_runs`, not yet saved (None if no run has an
    episode): one panel per name of ``TRAINING_PANELS`` in ``panels``, all on one step axis
    from 0 to ``steps`` (default: the largest step in the tables); a panel no run has a value
    for says so. ``shades``: per run, its parameter setting's place k of m among the runs
    of its G (``style.shade`` of its colour; ``maxminq plot``'s runs of one G with several
    ``op_kwargs``); default: every run its colour."""
    if shades is not None:
        shades = [s for s, r in zip(shades, runs, strict=True) if _has_episodes(r)]
    runs = [r for r in runs if _has_episodes(r)]
    if not runs:
        return None
    unknown = [p for p in panels if p not in TRAINING_PANELS]
    if unknown or not panels:
        raise ValueError(f"panels: choose from {', '.join(TRAINING_PANELS)}, got {panels!r}")
    chosen = [TRAINING_PANELS[p] for p in panels]
    for panel, table, option in (("bias_dist", "probes", "save_probes=True"),
                                 ("eval", "evals", "eval_every > 0")):  # fmt: skip
        none = [label for label, _, tables in runs if tables.get(table) is None]
        if panel in panels and none:
            raise ValueError(
                f"panels: {panel} needs each run's {table} table (train with {option}); none "
                f"in {', '.join(map(repr, none))}"
            )
    # Up to PANELS_PER_ROW panels side by side; more wrap into rows of three (six panels in
    # one row made a 32-inch strip whose labels could not be read); a spare cell takes the
    # legend.
    cols = len(chosen) if len(chosen) <= PANELS_PER_ROW else 3
    rows = math.ceil(len(chosen) / cols)
    fig, grid = style.subplots(
        rows, cols, figsize=(4.5 * cols, 3.6 * rows), squeeze=False, sharex=True
    )
    axes = list(grid.flat[: len(chosen)])
    for ax in grid.flat[len(chosen) :]:
        ax.set_visible(False)
    for ax in axes:  # sharex hides the labels of all rows but the last: keep each panel's
        ax.xaxis.set_tick_params(labelbottom=True)
    styles = ("-", "--", ":", "-.")
    seen: dict[str, int] = {}
    drawn = [False] * len(chosen)
    windows: list[set[int]] = [set() for _ in chosen]  # metrics rows per point, per panel
    last = float(steps or 0)
    for i, (label, agent, tables) in enumerate(runs):
        colour = style.color(agent, [a for _, a, _ in runs])  # Gs of one's own: apart
        ls = styles[seen.get(colour, 0) % len(styles)]  # same family twice: another dash
        seen[colour] = seen.get(colour, 0) + 1
        if shades is not None:  # a G's parameter settings: shades of its colour
            colour = style.shade(colour, *shades[i])
        for k, (ax, (table, value, _, _)) in enumerate(zip(axes, chosen, strict=True)):
            if table == "probes":
                end = _bias_dist(ax, tables, color=colour, label=label, ls=ls, run=i,
                                 runs=len(runs))  # fmt: skip
                drawn[k] = drawn[k] or end is not None
                last = max(last, end or 0.0)
                continue
            df = tables.get(table)
            if df is None or df.empty:
                continue
            if table == "evals":  # a seed's point: its mean return at that evaluation
                df = df.groupby(["seed", "step"], as_index=False, sort=True)[[value]].mean()
            last = max(last, float(df["step"].max()))
            df = df[np.isfinite(df[value].to_numpy(dtype=float))]
            if df.empty:
                continue
            if table == "metrics":  # a long run's 1,000s of noisy points: window means
                df, per_point = window_means(df, value)
                windows[k] |= per_point
            drawn[k] = True
            several = df["seed"].nunique() > 1
            if len(runs) == 1:  # faint per-seed lines under the band; one seed: its curve
                for _, seed_rows in df.groupby("seed"):
                    marks = {} if several else _marks(len(seed_rows), i, 1)
                    ax.plot(seed_rows["step"], seed_rows[value], color=colour, lw=0.7,
                            alpha=0.35 if several else 1.0, **marks)  # fmt: skip
            if len(runs) > 1 or several:
                band = (
                    T.deep_curves(df, keys=()) if table == "episodes"
                    else T.metric_curves(df, value, keys=())
                )  # fmt: skip
                _band(ax, band["step"], band["mean"], band["se"], color=colour, label=label,
                      smooth=False, ls=ls, **_marks(len(band), i, len(runs)))  # fmt: skip
    for ax, shown, sizes, (table, value, panel_title, ylabel) in zip(
        axes, drawn, windows, chosen, strict=True
    ):
        if max(sizes, default=1) > 1:  # say the points are not single metrics rows
            counts = sorted(sizes)
            many = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
            ylabel += f"\n(means of {many} metrics rows)"
        if not shown:  # say why the panel is empty rather than leave it blank
            if value in BIAS_COLUMNS or table == "probes":
                note = "no bias measured: no probe was scored\n" + textwrap.fill(
                    f"({NO_BIAS_WHY})", 40
                )
            elif table == "evals":
                note = "no evaluation ran\n(one every eval_every steps)"
            else:
                note = f"no {value} values logged"
            ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center",
                    fontsize=9, color="#555555")  # fmt: skip
            ax.set_yticks([])  # matplotlib's default 0..1 would read as values
        elif value == "bias_mean" or table == "probes":
            ax.axhline(0.0, color="black", lw=0.8, ls="--")
        ax.set_title(panel_title)
        ax.set_xlabel("environment steps")
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 50k, 1.5M: no crowded digits
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if last > 0:  # one step axis for all panels, the runs' whole length (+ room for markers)
        axes[0].set_xlim(0, 1.03 * last)
    fig.suptitle(title)
    if len(runs) > 1:
        _shared_legend(fig, axes)
    else:
        fig.tight_layout()
    return fig


def run_title(label: str, env_id: str, n_seeds: int, tests: pd.DataFrame | None) -> str:
    """The title of one run's curves figure (``maxminq train``'s, and ``maxminq plot`` of a
    single run, which has no legend): agent and N, environment, seeds and the mean test
    return (+- SE over seeds, with two or more) when the run has test episodes."""
    title = f"{label} on {env_id}, {style.count(n_seeds, 'seed')}"
    if tests is None or "return" not in tests.columns or "seed" not in tests.columns:
        return title
    returns = pd.to_numeric(tests["return"], errors="coerce")
    per_seed = returns.groupby(tests["seed"]).mean().dropna()
    if len(per_seed) > 1:
        se = per_seed.std() / len(per_seed) ** 0.5
        title += f"; test return {per_seed.mean():.1f} +- {se:.1f}"
    elif len(per_seed):  # one seed has no standard error (not a spread of 0)
        title += f"; test return {per_seed.mean():.1f}"
    return title


def training_runs_caption(panels: Sequence[str], runs: int) -> str:
    """The caption of :func:`fig_training_runs` with ``panels`` (names of
    ``TRAINING_PANELS``) of ``runs`` runs: the panels drawn, and a sentence on each."""
    shown = ", ".join(TRAINING_PANELS[p][2] for p in panels)
    caption = f"{shown[0].upper()}{shown[1:]} against environment steps."
    if any(p != "bias_dist" for p in panels):  # bias_dist draws quantiles, said below
        caption += " Per run the mean over seeds ± one standard error"
        caption += " (thin lines: single seeds)." if runs == 1 else "."
    for p in panels:
        short, note = PANEL_NOTES[p]
        caption += f" {short[0].upper()}{short[1:]}: {note}."
    if "bias_dist" in panels and runs == 1:
        caption += " Thin lines in the bias-per-probe panel: single seeds' medians."
    metrics = [PANEL_NOTES[p][0] for p in panels if TRAINING_PANELS[p][0] == "metrics"]
    if metrics:
        caption += (
            f" Panels of logged metrics ({', '.join(metrics)}): one value per seed and metrics "
            f"interval; a run of more than {METRIC_POINTS} intervals is drawn as each seed's "
            "means over windows of consecutive intervals (how many: in the axis label)."
        )
    return caption


def fig_training_runs(
    runs: Sequence[tuple[str, str, dict[str, pd.DataFrame]]],
    title: str,
    out_dir: Path,
    name: str = "curves",
    panels: Sequence[str] = DEFAULT_PANELS,
    steps: int | None = None,
    shades: Sequence[tuple[int, int]] | None = None,
) -> FigureFile | None:
    """Training curves of ``maxminq train`` runs, each given as ``(label, agent, tables)``
    (``agent`` picks the colour: a generalized-dqn run's G, ``runs.colour_key``),
    against environment steps; by default the 100-episode average training return, the
    measured estimation bias and the mean Q(s, a) the updated network predicted for its
    replayed mini-batches (``q_mean``: one member for Maxmin and Ensemble, not their min or
    mean); ``panels`` picks others from ``TRAINING_PANELS``. Per run, the mean over seeds
    with a one-standard-error band; with a single run also a thin line per seed. A metrics
    panel of a run with more than ``METRIC_POINTS`` metrics rows per seed draws each seed's
    means over windows of rows (:func:`window_means`; the y label says how many). The
    ``bias_dist`` panel (runs with a ``probes`` table) draws instead, per metrics interval,
    the median and 10-90% quantiles of the per-probe bias, seeds pooled (``bias_quantiles``).
    Every panel spans steps 0 .. ``steps`` (default: the largest step in the tables).
    ``shades``: as :func:`training_runs_figure` takes them."""
    fig = training_runs_figure(runs, title, panels, steps, shades)
    if fig is None:
        return None
    caption = training_runs_caption(panels, len(runs))
    return FigureFile(name, title, caption, save_figure(fig, out_dir, name))


# ----------------------------------------------------------------------------- driver
def _one_setting(df: pd.DataFrame, column: str, default: Any) -> Any:
    """The value of setting ``column`` shared by every run of ``df`` (a sweep's tables carry
    their settings as columns), or ``default`` if absent or not one value."""
    values: Any = df[column].dropna().unique() if column in df.columns else []
    return float(values[0]) if len(values) == 1 else default


def classic_figures(tables: T.Tables, out_dir: Path) -> list[FigureFile]:
    """Fig. 2, appendix Q(A, Left), Fig. 3(a)/(b) and the appendix Mountain Car panels.

    The plotting functions are :mod:`maxminq.analysis.classic_plots` (shared with
    ``maxminq experiment``); this only picks the data and writes PNG + SVG.
    """
    from maxminq.analysis import classic_plots as cp

    out: list[FigureFile] = []

    def add(fig: Figure, name: str, title: str, caption: str, section: str) -> None:
        out.append(FigureFile(name, title, caption, save_figure(fig, out_dir, name), section))

    toy = tables.toy
    if toy is not None and not toy.empty:
        runs = cp.count_runs(toy, T.TOY_KEYS)

        def gone(left_out: str, value: str = "q_a_left") -> str:  # as the figure names them
            note = cp.nonfinite_note(toy, left_out, value)
            return " " + note.replace(":\n", ": ").replace("\n", "; ") + "." if note else ""

        own_g = sorted({a for a in toy.algorithm.astype(str).unique() if ":" in a})
        own_g_text = (  # 'module:function': the mean over its N tables (tabular.agent)
            f"; a G of your own ({', '.join(own_g)}): the mean over its N tables" if own_g else ""
        )
        add(
            cp.toy_distance_figure(toy),
            "toy_mdp_distance",
            "Toy MDP: distance to the optimal policy (Fig. 2)",
            "Absolute difference between P(Left | A) under the learned ε-greedy policy and "
            f"under the optimal one, mean over {runs} runs with one standard error."
            + gone("the means are over the other runs from that episode on", "distance"),
            "toy",
        )
        # The true Q(A, Left) is gamma * mu: the runs' discount (a sweep may set one; the
        # paper's is 1). Runs of several discounts have no one true line: drawn at mu.
        gammas = np.unique(T.toy_gammas(toy))
        gamma = float(gammas[0]) if len(gammas) == 1 else 1.0
        add(
            cp.toy_q_left_figure(toy, gamma=gamma),
            "toy_mdp_q_left",
            "Toy MDP: Q(A, Left) (appendix C.1)",
            "Learned Q(A, Left) over episodes; the dotted line is its true value "
            + ("μ" if gamma == 1 else f"γ·μ (γ = {gamma:g})")
            + " (above it: overestimation)."
            + gone("the means are over the other runs from that episode on"),
            "toy",
        )
        add(
            cp.toy_bias_vs_n_figure(toy, gamma=gamma),
            "toy_mdp_bias_vs_n",
            "Beyond the paper: toy MDP, bias of Q(A, Left) against N",
            "Q(A, Left) as the agent acts on it (Maxmin: the min over its N tables; Double Q, "
            "Weighted Double Q and Ensemble: their mean; Averaged and Historical Best: the "
            f"newest table{own_g_text}) averaged over the last 10% of each run's episodes "
            f"minus its true value, mean over {runs} runs with one standard error; Q-learning "
            "is N = 1, and for Averaged and Historical Best N is K, their snapshots. The dashed "
            "line is Theorem 1's zero-bias N for B's M = 8 actions."
            + gone("left out of the points (their final values are not finite)"),
            "toy",
        )
    mc = tables.mountain_car
    if mc is not None and not mc.empty:
        # The runs' episode cap, named in the titles (a flat curve at it is failing runs).
        cap = _one_setting(mc, "max_steps", None)
        cap = None if cap is None else int(cap)
        capped = "" if cap is None else f" An episode ends at {cap:,} steps at most."
        mc_runs = cp.count_runs(mc, T.MOUNTAIN_CAR_KEYS)  # the fewest of any setting
        add(
            cp.mc_sensitivity_figure(mc, cap),
            "mountain_car_last_episode",
            "Mountain Car: robustness to reward variance (Fig. 3a)",
            "Steps in the last training episode against the reward variance σ², at the "
            "best step size per algorithm and σ², mean with one standard error.",
            "mountain_car",
        )
        levels = sorted(float(v) for v in mc["sigma2"].unique())
        s2 = 10.0 if 10.0 in levels else levels[len(levels) // 2]
        add(
            cp.mc_learning_curve_figure(mc, sigma2=[s2], max_steps=cap),
            f"mountain_car_curves_sigma2_{s2:g}",
            f"Mountain Car learning curves, σ² = {s2:g} (Fig. 3b)",
            f"Steps per episode at the best step size, mean over {mc_runs} runs with one "
            "standard error, each a trailing 10-episode average (the band: the average of "
            "the 10 episodes' standard errors, never narrower than the standard error of "
            "the averaged mean)." + capped,
            "mountain_car",
        )
        if len(levels) > 1:
            add(
                cp.mc_learning_curve_figure(mc, max_steps=cap),
                "mountain_car_curves_all",
                "Mountain Car learning curves for every σ² (appendix C.2)",
                f"As Fig. 3b, one panel per reward variance; mean over {mc_runs} runs." + capped,
                "mountain_car",
            )
    return out


def make_figures(
    tables: T.Tables,
    out_dir: str | Path,
    *,
    deep_summary: pd.DataFrame | None = None,
    errors: list[str] | None = None,
) -> list[FigureFile]:
    """Write every figure the data allow into ``out_dir``; return what was written.

    A figure that fails to draw does not stop the others: its error is appended to
    ``errors`` (the report lists them) and re-raised only when ``errors`` is ``None``.
    """
    out_dir = Path(out_dir)
    figures: list[FigureFile] = []

    def attempt(name: str, make: Callable[[], Any]) -> None:
        try:
            made = make()
        except Exception as err:  # reported in the report, not hidden
            if errors is None:
                raise
            errors.append(f"{name}: {type(err).__name__}: {err}")
            return
        figures.extend(f for f in (made if isinstance(made, list) else [made]) if f is not None)

    attempt("classic figures", lambda: classic_figures(tables, out_dir))
    if tables.has_deep:
        assert tables.episodes is not None  # has_deep
        classic = len(figures)
        summary = deep_summary if deep_summary is not None else T.deep_summary(tables, reps=500)
        best = T.deep_best(summary)
        attempt("deep learning curves", lambda: fig_learning_curves(tables, best, out_dir))
        attempt("deep varying N", lambda: fig_varying_n(tables, summary, out_dir))
        attempt("deep sensitivity", lambda: fig_sensitivity(summary, out_dir))
        attempt("deep estimation bias", lambda: fig_bias(tables, best, out_dir))
        attempt("deep bias against N", lambda: fig_bias_vs_n(tables, summary, out_dir))
        counted = runs_text(tables.episodes)  # how many seeds a deep curve or point is over
        for figure in figures[classic:]:
            figure.caption += counted
    return figures
