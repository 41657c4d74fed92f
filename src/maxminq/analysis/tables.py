"""Tidy summary tables computed from a results folder.

Statistics follow the paper and rliable (Agarwal et al., 2021):

* mean and standard error over independent runs (the paper's shaded "one standard error");
* interquartile mean (IQM, the mean of the middle 50% of runs, ``scipy.stats.trim_mean`` with
  0.25 cut from each end, as rliable computes it) with a percentile bootstrap 95% confidence
  interval whose resampling is *stratified*: runs are resampled with replacement within each
  stratum (e.g. each environment), never across strata;
* best hyper-parameters per algorithm chosen by final performance, as in the paper (Sec. 5:
  "the best step-size was chosen ... separately for each reward setting"; Sec. 6: "learning
  curves shown for the best hyper-parameter setting");
* the paper's smoothing: training return averaged over the last 100 episodes, then an
  exponential moving average for display (Fig. 4 caption).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from maxminq.analysis import style

# Columns that describe a run's settings (not its measurements), per kind of experiment.
#: A deep run's G (``generalized-dqn``'s ``operator`` and ``op_kwargs``): runs of two Gs are
#: two settings. Keys like the others, present only in tables of runs that set them (the
#: paper's agents do not), so tables of those alone key and read as before.
DEEP_OPERATOR_KEYS = ["operator", "op_kwargs"]
DEEP_KEYS = ["env_id", "agent", "n", "lr", *DEEP_OPERATOR_KEYS]
TOY_KEYS = ["mu", "algorithm", "n"]
MOUNTAIN_CAR_KEYS = ["algorithm", "n", "sigma2", "step_size"]

# The paper's panel order for the deep environments (Fig. 4), matched by substring.
ENV_ORDER = ["catcher", "lunar", "space", "breakout", "pixelcopter", "asterix", "seaquest"]
DEEP_AGENT_ORDER = ["dqn", "ddqn", "averaged-dqn", "ensemble-dqn", "maxmin-dqn"]
TABULAR_ORDER = ["q_learning", "double_q", "averaged", "ensemble", "maxmin"]


# ----------------------------------------------------------------------------- statistics
class WholeTable(pd.DataFrame):
    """A DataFrame that a notebook shows with all its columns: ``compare_runs``' table has
    25 or more, of which pandas shows 20 there, hiding the middle ones (``score``,
    ``mean``, ``se``, ``iqm``, ``iqm_low``). Otherwise a DataFrame as any other; what is
    made of it (a selection, a copy) is a plain ``pd.DataFrame``."""

    def _repr_html_(self) -> str | None:
        """The HTML of IPython's display, every column shown (rows as pandas' options say)."""
        with pd.option_context("display.max_columns", None):
            return super()._repr_html_()  # type: ignore[misc]  # not in pandas-stubs


def iqm(values: np.ndarray, axis: int | None = -1) -> np.ndarray | float:
    """Interquartile mean: the mean after cutting 25% of the values from each end.

    Same definition as rliable's ``aggregate_iqm`` (``scipy.stats.trim_mean(x, 0.25)``), which
    cuts ``floor(0.25 * n)`` values from each end.
    """
    return stats.trim_mean(np.asarray(values, dtype=float), 0.25, axis=axis)


def mean_se(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Sample mean and its standard error ``std(ddof=1) / sqrt(n)`` (SE is NaN for n < 2)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan")
    se = float(np.std(x, ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
    return float(np.mean(x)), se


#: Most resampled values :func:`stratified_bootstrap_ci` holds at once (reps x runs, each
#: held about three times over: indices, values, the IQM's partition): 2**24, ~400 MB.
BOOTSTRAP_BLOCK = 2**24


def stratified_bootstrap_ci(
    strata: Sequence[np.ndarray] | np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray | float] = iqm,
    *,
    reps: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator | int | None = 0,
    block: int = BOOTSTRAP_BLOCK,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval with resampling stratified by group.

    Each bootstrap replicate draws, *within every stratum separately*, as many runs as the
    stratum holds (with replacement), concatenates the strata and evaluates ``statistic``
    along the last axis. This is rliable's stratified bootstrap (strata = tasks); with a single
    stratum it is the ordinary percentile bootstrap.

    Args:
        strata: one 1-D array of per-run scores per stratum (or a single 1-D array).
        statistic: maps an array of shape ``(reps, n_total)`` to ``(reps,)``; defaults to IQM.
        reps: number of bootstrap replicates.
        level: confidence level, e.g. 0.95.
        rng: a ``np.random.Generator`` or a seed; the interval is reproducible for a fixed seed.
        block: with one stratum, the replicates are drawn and evaluated in blocks of at
            most ``block`` resampled values (the same draws and interval as in one go): a
            toy MDP table of 5,000 runs at ``maxminq report --reps 100000`` held 5e8 of
            them, 4 GB per copy.

    Returns:
        ``(low, high)``; NaNs if there is no data, the point value twice for a single run.
    """
    if isinstance(strata, np.ndarray) and strata.ndim == 1:
        strata = [strata]
    groups = [np.asarray(s, dtype=float) for s in strata]
    groups = [g[np.isfinite(g)] for g in groups]
    groups = [g for g in groups if g.size > 0]
    if not groups:
        return float("nan"), float("nan")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    alpha = (1.0 - level) / 2.0
    if len(groups) == 1 and reps * groups[0].size > block:
        # Row after row of the same stream: the draws of one (reps, n) call, in blocks.
        g = groups[0]
        rows = max(1, block // g.size)
        parts = [
            np.atleast_1d(statistic(g[gen.integers(0, g.size, size=(min(rows, reps - r), g.size))]))
            for r in range(0, reps, rows)
        ]
        low, high = np.quantile(np.concatenate(parts).astype(float), [alpha, 1.0 - alpha])
        return float(low), float(high)
    pieces = []
    for g in groups:
        idx = gen.integers(0, g.size, size=(reps, g.size))
        pieces.append(g[idx])
    sample = np.concatenate(pieces, axis=1)
    replicates = np.asarray(statistic(sample), dtype=float)
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha])
    return float(low), float(high)


def welch_t_test(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[float, float, float]:
    """Welch's two-sided t-test of equal means without assuming equal variances
    (``scipy.stats.ttest_ind(x, y, equal_var=False)``): ``(t, df, p)``, NaNs where it is
    undefined (fewer than 2 values on a side, or no spread on both sides)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 2 or b.size < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return math.nan, math.nan, math.nan  # no spread: t is 0/0 or +-inf, p meaningless
    with warnings.catch_warnings():  # scipy's 'nearly identical data' note; the p stands
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_ind(a, b, equal_var=False)
    return float(r.statistic), float(r.df), float(r.pvalue)


def probability_of_improvement(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> float:
    """P(X > Y) + 0.5 P(X = Y) for X drawn from ``x`` and Y from ``y``: the share of the
    n m pairs (x_i, y_j) with x_i > y_j, ties counting half, i.e. the Mann-Whitney U of ``x``
    divided by n m (rliable's probability of improvement on one task); NaN if a side is
    empty."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size == 0 or b.size == 0:
        return math.nan
    u = stats.mannwhitneyu(a, b, method="asymptotic").statistic  # U of x (method: p only)
    return float(u) / (a.size * b.size)


def ema(values: Sequence[float] | np.ndarray, weight: float = 0.9) -> np.ndarray:
    """Debiased exponential moving average for display (leading/inner NaNs are skipped).

    ``s_t = weight * s_{t-1} + (1 - weight) * x_t``, divided by ``1 - weight^k`` after ``k``
    finite values so that the curve starts at the first value instead of at zero.
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"weight must be in [0, 1), got {weight}")
    x = np.asarray(values, dtype=float)
    out = np.full_like(x, np.nan)
    acc, norm = 0.0, 0.0
    for i, v in enumerate(x):
        if np.isfinite(v):
            acc = weight * acc + (1.0 - weight) * v
            norm = weight * norm + (1.0 - weight)
        if norm > 0:
            out[i] = acc / norm
    return out


def last_k_average(values: Sequence[float] | np.ndarray, k: int = 100) -> np.ndarray:
    """Average of the last ``k`` values at each position (fewer at the start), as in Fig. 4."""
    x = pd.Series(np.asarray(values, dtype=float))
    return x.rolling(k, min_periods=1).mean().to_numpy()


# ----------------------------------------------------------------------------- table lookup
@dataclass
class Tables:
    """The results tables sorted by kind; any of them may be ``None`` when absent."""

    toy: pd.DataFrame | None = None
    mountain_car: pd.DataFrame | None = None
    episodes: pd.DataFrame | None = None
    tests: pd.DataFrame | None = None
    metrics: pd.DataFrame | None = None
    runs: pd.DataFrame | None = None

    @property
    def has_deep(self) -> bool:
        """Whether any deep training episodes are present."""
        return self.episodes is not None and not self.episodes.empty


#: The deep tables ``classify`` recognises by name, and every run table the report reads
#: (``maxminq train``'s optional ``probes`` is not one: millions of rows it has no use for).
DEEP_TABLES = ("episodes", "tests", "metrics", "runs")
REPORT_TABLES = ("toy_mdp", "mountain_car", *DEEP_TABLES)


def classify(results: dict[str, pd.DataFrame]) -> Tables:
    """Sort the store's tables by their columns (robust to how the sweep names them).

    A table with ``q_a_left`` is the toy MDP; one with ``sigma2`` and ``steps`` is Mountain
    Car; the deep tables are recognised by name (``episodes``, ``tests``, ``metrics``,
    ``runs``) and must carry an ``agent`` column. Tables of the same kind are concatenated.
    """
    found: dict[str, list[pd.DataFrame]] = {}
    for name, df in results.items():
        if df is None or df.empty:
            continue
        cols = set(df.columns)
        if "q_a_left" in cols:
            kind = "toy"
        elif {"sigma2", "steps", "episode"} <= cols:
            kind = "mountain_car"
        elif name in DEEP_TABLES and "agent" in cols:
            kind = name
        else:
            continue
        found.setdefault(kind, []).append(df)
    merged = {k: pd.concat(v, ignore_index=True) for k, v in found.items()}
    return Tables(**merged)


def present_keys(df: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    """The subset of ``keys`` that ``df`` has as columns, in order."""
    return [k for k in keys if k in df.columns]


def env_rank(env_id: str) -> tuple[int, str]:
    """Sort key placing environments in the paper's panel order."""
    low = str(env_id).lower()
    for i, token in enumerate(ENV_ORDER):
        if token in low:
            return i, low
    return len(ENV_ORDER), low


def agent_rank(agent: str) -> int:
    """Sort key placing algorithms in a fixed legend order (Maxmin last, drawn on top)."""
    order = DEEP_AGENT_ORDER + TABULAR_ORDER
    return order.index(agent) if agent in order else len(order)


_VERSION = re.compile(r"-v\d+$")


def _short_title(env_id: str) -> str:
    """'MinAtar/Asterix-v1' -> 'Asterix', 'LunarLander-v3' -> 'LunarLander'."""
    return _VERSION.sub("", str(env_id).split("/")[-1])


def env_title(env_id: str, among: Iterable[str] = ()) -> str:
    """A short panel title: 'MinAtar/Asterix-v1' -> 'Asterix', 'LunarLander-v3' ->
    'LunarLander'; the full id where another id of ``among`` (the environments shown
    together) has the same short title, e.g. two versions of one's own environment,
    'mymod:MyEnv-v0' and 'mymod:MyEnv-v1', whose rows and verdicts read alike otherwise."""
    short = _short_title(env_id)
    if any(str(o) != str(env_id) and _short_title(o) == short for o in among):
        return str(env_id)
    return short


def setting_order(column: pd.Series) -> pd.Series:
    """A ``sort_values`` key (``df.sort_values(keys, key=setting_order)``): an ``op_kwargs``
    column (an operator's parameters, JSON or mappings) by value, as
    :func:`maxminq.analysis.style.params_key` orders them (none first, then ``beta=5``,
    ``20``, ``100``: as text ``'{"beta":100}'`` came first); other columns as they are. The
    one order of a G's parameter settings in tables, legends and panels."""
    if column.name != "op_kwargs":
        return column
    return pd.Series(style.params_ranks(column), index=column.index, dtype="int64")


def in_setting_order(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``df`` (rows in ``groupby(keys, sort=True)``'s order, e.g. a summary) with rows that
    differ in ``op_kwargs`` in :func:`setting_order`'s order; unchanged (the same object)
    without such a column or with one setting of it."""
    if "op_kwargs" not in keys or "op_kwargs" not in df.columns:
        return df
    if len(set(style.params_ranks(df["op_kwargs"]))) < 2:
        return df
    return df.sort_values(list(keys), key=setting_order, kind="stable").reset_index(drop=True)


def select_setting(df: pd.DataFrame, row: pd.Series | dict, keys: Sequence[str]) -> pd.DataFrame:
    """Rows of ``df`` whose ``keys`` equal those of ``row`` (floats compared with a relative
    tolerance, NaN equal to NaN, e.g. an unset N of DQN)."""
    mask = np.ones(len(df), dtype=bool)
    for k in keys:
        if k not in df.columns or k not in row:
            continue
        col, val = df[k], row[k]
        if pd.api.types.is_numeric_dtype(col) and (
            val is None or isinstance(val, (int, float, np.number))
        ):
            v = np.nan if val is None else float(val)
            mask &= np.isclose(col.to_numpy(dtype=float), v, rtol=1e-9, atol=0.0, equal_nan=True)
        elif val is None or (isinstance(val, float) and np.isnan(val)):
            mask &= col.isna().to_numpy()
        else:
            mask &= (col == val).to_numpy()
    return df[mask]


# ----------------------------------------------------------------------------- summaries
def summarize(
    df: pd.DataFrame,
    keys: Sequence[str],
    value: str = "score",
    *,
    reps: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Per-setting ``runs, mean, se, iqm, iqm_low, iqm_high`` of per-run ``value``, rows in
    the keys' sorted order (an operator's parameters, ``op_kwargs``, by value:
    :func:`setting_order`).

    ``df`` holds one row per run (e.g. from :func:`deep_final_scores`). The bootstrap for each
    setting uses its own generator derived from ``seed`` and the setting's position, so the
    table is reproducible.
    """
    keys = list(keys)
    rows = []
    groups = df.groupby(keys, sort=True, dropna=False) if keys else [((), df)]
    for i, (key, sub) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        x = sub[value].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        mean, se = mean_se(x)
        point = float(iqm(x)) if x.size else float("nan")
        low, high = stratified_bootstrap_ci(
            x, reps=reps, level=level, rng=np.random.default_rng([seed, i])
        )
        rows.append(
            dict(zip(keys, key, strict=True), runs=int(x.size), mean=mean, se=se, iqm=point)
            | {"iqm_low": low, "iqm_high": high}
        )
    out = pd.DataFrame(rows, columns=[*keys, "runs", "mean", "se", "iqm", "iqm_low", "iqm_high"])
    return in_setting_order(out, keys)  # after the bootstrap: its generators keep their i


def best_settings(
    summary: pd.DataFrame,
    group: Sequence[str],
    *,
    score: str = "mean",
    higher_is_better: bool = True,
) -> pd.DataFrame:
    """One row per ``group`` (e.g. env and algorithm): the setting with the best ``score``,
    in the group's sorted order (``op_kwargs`` by value, :func:`setting_order`).

    Ties are broken by the first row in the summary's order (sorted keys), so the choice is
    deterministic. Rows whose score is NaN are never chosen.
    """
    valid = summary[np.isfinite(summary[score].to_numpy(dtype=float))]
    if valid.empty:
        return valid.copy()
    pick = valid.groupby(list(group), sort=True, dropna=False)[score]
    idx = pick.idxmax() if higher_is_better else pick.idxmin()
    return in_setting_order(valid.loc[idx.to_numpy()].reset_index(drop=True), list(group))


# ----------------------------------------------------------------------------- deep RL
def run_cols(df: pd.DataFrame) -> list[str]:
    """Columns identifying one independent run of a deep setting (a seed within a run id)."""
    return present_keys(df, ["run_id", "seed"])


def deep_final_scores(tables: Tables, keys: Sequence[str] = DEEP_KEYS) -> pd.DataFrame:
    """One row per (setting, seed) with its final performance ``score``.

    Final performance as in the paper's evaluation protocol: the mean return of the test
    episodes run after training (100 episodes with eps = 0.01). Runs without test episodes
    (e.g. reduced-scale runs that skipped testing) fall back to the training return averaged
    over the last 100 episodes at the end of training; column ``source`` says which was used.
    Diverged seeds (``runs`` table) are kept with the score they reached, marked ``diverged``.
    """
    scores: list[pd.DataFrame] = []
    tested: pd.DataFrame | None = None  # the key columns of the runs scored by tests
    if tables.tests is not None and not tables.tests.empty:
        t = tables.tests
        k = present_keys(t, keys)
        by = [*k, *run_cols(t)]
        s = t.groupby(by, sort=True, dropna=False)["return"].mean().rename("score").reset_index()
        s["source"] = "test"
        scores.append(s)
        tested = s[by].drop_duplicates()
    if tables.episodes is not None and not tables.episodes.empty:
        e = tables.episodes
        k = present_keys(e, keys)
        by = [*k, *run_cols(e)]
        e = _with_avg100(e, by)
        last = e.sort_values("step").groupby(by, sort=True, dropna=False).tail(1)
        s = last[[*by, "return_avg100"]].rename(columns={"return_avg100": "score"})
        if tested is not None:
            # A merge, whose keys match NaN to NaN (an unset N of DQN): tuples with NaN never
            # compare equal, which scored every tested run a second time by its training.
            on = [c for c in by if c in tested.columns]
            found = s[on].merge(tested[on].drop_duplicates(), on=on, how="left", indicator=True)
            s = s[(found["_merge"] == "left_only").to_numpy()]
        s = s.copy()
        s["source"] = "train_last100"
        scores.append(s)
    if not scores:
        return pd.DataFrame(columns=[*keys, "seed", "score", "source"])
    out = pd.concat(scores, ignore_index=True)
    if tables.runs is not None and "status" in tables.runs.columns:
        r = tables.runs
        on = [c for c in run_cols(r) if c in out.columns]
        if on:
            status = r[[*on, "status"]].drop_duplicates(on)
            out = out.merge(status, on=on, how="left")
            out["diverged"] = out["status"].eq("diverged")
            out = out.drop(columns="status")
    if "diverged" not in out.columns:
        out["diverged"] = False
    return out


def _with_avg100(episodes: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Ensure a ``return_avg100`` column (last-100-episode average within each run)."""
    if "return_avg100" in episodes.columns and episodes["return_avg100"].notna().all():
        return episodes
    e = episodes.sort_values([*by, "step"]).copy()
    e["return_avg100"] = e.groupby(list(by), sort=False, dropna=False)["return"].transform(
        lambda s: s.rolling(100, min_periods=1).mean()
    )
    return e


def deep_summary(
    tables: Tables, *, reps: int = 2000, seed: int = 0, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Final performance per deep setting: runs, mean, SE, IQM and its bootstrap 95% CI.
    ``extra`` settings (e.g. ``update_members``) split the settings further."""
    keys = list(dict.fromkeys([*DEEP_KEYS, *extra]))
    scores = deep_final_scores(tables, keys)
    if scores.empty:
        return pd.DataFrame()
    return summarize(scores, present_keys(scores, keys), "score", reps=reps, seed=seed)


def deep_best(
    summary: pd.DataFrame, *, score: str = "mean", extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Best (lr, N) per environment and agent (and ``extra`` settings), by mean final
    performance (the paper's rule); a ``generalized-dqn`` run's G (:data:`DEEP_OPERATOR_KEYS`)
    is part of its agent: one best setting per G."""
    if summary.empty:
        return summary
    group = list(dict.fromkeys(["env_id", "agent", *DEEP_OPERATOR_KEYS, *extra]))
    return best_settings(summary, present_keys(summary, group), score=score)


BIAS_STATS = ["bias_mean", "bias_std", "bias_abs", "bias_n"]  # what pooled_bias gives


def _pool(g: pd.DataFrame) -> list[float]:
    """``bias_mean, bias_std, bias_abs, bias_n`` of all the probes of the metrics rows ``g``
    (one run's intervals), pooled exactly from the intervals' aggregates; NaNs and 0
    without a probe."""
    n_i = g["bias_n"].to_numpy(dtype=float) if "bias_n" in g else np.ones(len(g))
    used = (n_i > 0) & np.isfinite(g["bias_mean"].to_numpy(float))  # NaN: no probes
    n = float(n_i[used].sum())
    if n == 0:
        return [math.nan, math.nan, math.nan, 0]
    w = n_i[used] / n
    mean_i, std_i = g["bias_mean"].to_numpy(float)[used], g["bias_std"].to_numpy(float)[used]
    mean = float(w @ mean_i)
    second = float(w @ (std_i**2 + mean_i**2))  # E[bias^2] over all the probes
    std = math.sqrt(max(second - mean**2, 0.0))
    return [mean, std, float(w @ g["bias_abs"].to_numpy(float)[used]), int(n)]


def pooled_bias(
    metrics: pd.DataFrame, after: int = 0, *, second_half: bool = False, steps: int | None = None
) -> pd.DataFrame:
    """Per seed, the statistics of the bias probes scored in some of its metrics intervals,
    pooled exactly from the intervals' aggregates (an unweighted mean of ``bias_mean`` over
    intervals would weigh an interval of 3 probes like one of 100): ``bias_n`` = sum n_i,
    ``bias_mean`` = sum n_i m_i / n, ``bias_abs`` likewise, ``bias_std`` (ddof 0, as per
    interval) from sum n_i (s_i^2 + m_i^2) / n - mean^2.

    Which intervals: those that end after step ``after`` (default: all); or, with
    ``second_half=True``, the second half of training as ``maxminq compare``, the report's
    bias claims and the bias-against-N figure count it (the one place that rule lives): the
    intervals that *start* at or after the midpoint ``steps // 2``: ``steps`` the run's
    length as trained (its ``config.json``'s, or a sweep's ``steps`` column), by default
    the last metrics step of the table's longest run (so a seed that diverged early does
    not move it; give ``steps`` where every seed may have stopped early: the midpoint of a
    run whose seeds all diverged at 60% would otherwise fall at 30%). An interval holds the
    probes whose episodes ended in it, so one straddling the midpoint (in a run of one
    interval, that interval) is left out: it would reach back up to ``bias_every`` steps
    into the first half.

    ``metrics`` is a run's metrics table (``read_tables(OUT)["metrics"]``, or a sweep's
    rows of one setting); one row per seed (``run_id`` too when the table has it): seed,
    bias_mean, bias_std, bias_abs, bias_n; NaN statistics and bias_n 0 where no probe
    counted (e.g. a seed that diverged before the midpoint). Without ``bias_n`` (tables
    made before it was logged) every interval weighs the same.
    """
    if not isinstance(metrics, pd.DataFrame):  # a folder's path was an AttributeError
        raise TypeError(
            f"pooled_bias: metrics must be a run's metrics table (a DataFrame: "
            f"read_tables(OUT)['metrics']), got {type(metrics).__name__}"
        )
    if second_half and after:
        raise ValueError("pooled_bias: give after or second_half=True, not both")
    if steps is not None and not second_half:
        raise ValueError("pooled_bias: steps sets the midpoint of second_half=True")
    by = run_cols(metrics) or ["seed"]
    if metrics.empty:
        return pd.DataFrame(columns=[*by, *BIAS_STATS])
    if steps is None and "steps" in metrics.columns:  # a sweep's rows carry their setting
        longest = pd.to_numeric(metrics["steps"], errors="coerce").max()
        steps = int(longest) if np.isfinite(longest) else None
    # Of the run as trained; else of the longest run logged (a diverged seed stops early).
    half = (int(metrics["step"].max()) if steps is None else int(steps)) // 2
    rows = []
    for key, g in metrics.groupby(by, sort=True):
        start: int | None = after
        if second_half:  # intervals end at the logged steps: those ending after the first
            # logged step at or past the midpoint are exactly those starting there or later
            later = g["step"].to_numpy(dtype=int)
            later = later[later >= half]
            start = int(later.min()) if later.size else None
        stats_ = [math.nan, math.nan, math.nan, 0] if start is None else _pool(g[g["step"] > start])
        rows.append([*(key if isinstance(key, tuple) else (key,)), *stats_])
    return pd.DataFrame(rows, columns=[*by, *BIAS_STATS])


def second_half_bias(metrics: pd.DataFrame, setting: pd.Series, keys: Sequence[str]) -> np.ndarray:
    """The measured bias of each run (seed) of ``setting`` in a metrics table, those with a
    probe in the second half of training: :func:`pooled_bias` with ``second_half=True`` of
    the setting's rows (its midpoint that of the setting's longest run). The bias claims,
    the bias-against-N figure and ``maxminq compare`` judge a run by these values."""
    runs = select_setting(metrics, setting, keys)
    if runs.empty:
        return np.array([])
    out = pooled_bias(runs, second_half=True)["bias_mean"].to_numpy(dtype=float)
    return out[np.isfinite(out)]


def deep_curves(
    episodes: pd.DataFrame,
    keys: Sequence[str] = DEEP_KEYS,
    *,
    points: int = 100,
) -> pd.DataFrame:
    """Learning curves on a common step grid: per setting, mean and SE over seeds.

    Each seed's curve is its last-100-episode average return, read at each grid step as the
    value after the last episode that ended at or before that step (a step function, so no
    value is invented between episodes; a diverged seed keeps the value it reached, as in
    ``deep_final_scores``). The grid spans 0 .. the largest step of the setting. With no
    ``keys`` present (one ``maxminq train`` run) the whole table is one setting.
    Returns columns ``*keys, step, mean, se, runs``, settings in the keys' order
    (``op_kwargs`` by value, :func:`setting_order`).
    """
    k = present_keys(episodes, keys)
    by_run = [*k, *run_cols(episodes)]
    e = _with_avg100(episodes, by_run)
    rows = []
    settings = e.groupby(k, sort=True, dropna=False) if k else [((), e)]  # no keys: one run
    for key, sub in settings:
        key = key if isinstance(key, tuple) else (key,)
        grid = np.linspace(0, float(sub["step"].max()), points + 1)[1:]
        curves = []
        for _, run in sub.groupby(run_cols(sub) or k, sort=True, dropna=False):
            run = run.sort_values("step")
            steps = run["step"].to_numpy(dtype=float)
            vals = run["return_avg100"].to_numpy(dtype=float)
            pos = np.searchsorted(steps, grid, side="right") - 1
            curve = np.where(pos >= 0, vals[np.clip(pos, 0, None)], np.nan)
            curves.append(curve)
        mat = np.vstack(curves)
        count = np.isfinite(mat).sum(axis=0)
        mean = np.full(points, np.nan)
        se = np.full(points, np.nan)
        for j in np.flatnonzero(count > 0):
            mean[j], se[j] = mean_se(mat[:, j])
        for s, m, d, c in zip(grid, mean, se, count, strict=True):
            rows.append(
                dict(zip(k, key, strict=True)) | {"step": s, "mean": m, "se": d, "runs": int(c)}
            )
    return in_setting_order(pd.DataFrame(rows, columns=[*k, "step", "mean", "se", "runs"]), k)


def metric_curves(
    metrics: pd.DataFrame, value: str, keys: Sequence[str] = DEEP_KEYS
) -> pd.DataFrame:
    """Mean and SE over seeds of a logged metric (e.g. ``bias_mean``) at each logged step,
    settings in the keys' order (``op_kwargs`` by value, :func:`setting_order`)."""
    k = present_keys(metrics, keys)
    m = metrics[np.isfinite(metrics[value].to_numpy(dtype=float))]
    g = m.groupby([*k, "step"], sort=True, dropna=False)[value]
    out = g.agg(mean="mean", sd="std", runs="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["runs"].clip(lower=1))
    return in_setting_order(out.drop(columns="sd"), [*k, "step"])


# ----------------------------------------------------------------------------- tabular
def tabular_run_cols(df: pd.DataFrame) -> list[str]:
    """Columns identifying one independent tabular run: its index within a stored run id.

    Two run ids with the same keys (e.g. two configs differing only in ``seed``) number their
    runs 0, 1, ... each; without ``run_id`` their run 0s would be merged into one.
    """
    return present_keys(df, ["run_id", "run"])


def toy_final(
    toy: pd.DataFrame, value: str, *, last_fraction: float = 0.1, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Per run, the average of ``value`` over the last ``last_fraction`` of its episodes;
    ``extra`` settings are kept as key columns beside :data:`TOY_KEYS`. NaN for a run with
    a non-finite ``value`` there (a run that went non-finite, :func:`nonfinite_runs`: the
    mean of the episodes before was counted as a run's final value, an inf made the
    setting's mean inf)."""
    k = present_keys(toy, [*TOY_KEYS, *extra])
    by = [*k, *tabular_run_cols(toy)]
    last_ep = toy.groupby(by, dropna=False)["episode"].transform("max")
    first_ep = toy.groupby(by, dropna=False)["episode"].transform("min")
    cut = last_ep - (last_ep - first_ep) * last_fraction
    tail = toy[toy["episode"] >= cut]
    finite = np.isfinite(tail[value].to_numpy(dtype=float))
    groups = tail.assign(_finite=finite).groupby(by, sort=True, dropna=False)
    out = groups[value].mean()
    gone = ~groups["_finite"].all()
    out[gone.to_numpy()] = np.nan
    return out.reset_index()


def nonfinite_runs(df: pd.DataFrame, keys: Sequence[str], value: str) -> pd.DataFrame:
    """The settings (``keys`` present in ``df``) with runs whose ``value`` went non-finite
    (NaN or inf: e.g. a G of one's own that diverges, or too large a step size): columns
    ``*keys, runs`` (the setting's runs), ``nonfinite`` (how many of them went non-finite),
    ``first`` and ``last`` (the earliest and the latest episode at which one of them did).
    A run: its :func:`tabular_run_cols` within a setting. No rows when every value is
    finite. The figures and the report average the finite runs, and name these."""
    k = present_keys(df, keys)
    by = [*k, *tabular_run_cols(df)]
    columns = [*k, "runs", "nonfinite", "first", "last"]
    bad = ~np.isfinite(df[value].to_numpy(dtype=float))
    if not bad.any():
        return pd.DataFrame(columns=columns)
    runs = df[by].drop_duplicates().groupby(k, sort=True, dropna=False, observed=True).size()
    first = df[bad].groupby(by, sort=True, dropna=False, observed=True)["episode"].min()
    per = first.reset_index().groupby(k, sort=True, dropna=False, observed=True)["episode"]
    out = per.agg(nonfinite="size", first="min", last="max")
    out.insert(0, "runs", runs.reindex(out.index).to_numpy())
    return in_setting_order(out.reset_index()[columns], k)


def without_nonfinite_runs(toy: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """``toy`` with both values of every run that went non-finite in either (distance or
    Q(A, Left), at any episode; a run: its :data:`TOY_KEYS`, ``extra`` settings and
    :func:`tabular_run_cols`) made NaN at every episode, so that each of its measures
    (:func:`toy_final`, :func:`toy_auc`) is NaN and the run is left out of the means and
    counts of the report's toy table and claims alike: a run whose Q(A, Right) diverged
    kept a finite Q(A, Left) of 1e300, and one gone NaN at episode k an average distance
    over its first k episodes (pandas skips NaN). ``toy`` itself where every value is
    finite."""
    columns = present_keys(toy, ["distance", "q_a_left"])
    values = toy[columns].to_numpy(dtype=float)
    finite = pd.Series(np.isfinite(values).all(axis=1), index=toy.index)
    if finite.all():
        return toy
    by = [*present_keys(toy, [*TOY_KEYS, *extra]), *tabular_run_cols(toy)]
    keys = [toy[c].astype(str) for c in by]  # NaN op_kwargs: one key, as text
    whole = finite.groupby(keys, sort=False).transform("all").to_numpy(dtype=bool)
    return toy.assign(**{c: toy[c].where(whole) for c in columns})


def toy_gammas(toy: pd.DataFrame) -> np.ndarray:
    """Each toy-MDP row's discount: its ``gamma`` column (a sweep may set one), else the
    paper's 1. The true Q(A, Left) of a row is ``gamma * mu``."""
    if "gamma" not in toy.columns:
        return np.ones(len(toy))
    return toy["gamma"].fillna(1.0).to_numpy(dtype=float)


def toy_auc(toy: pd.DataFrame, value: str = "distance") -> pd.DataFrame:
    """Per run, the average of ``value`` over all episodes (area under the learning curve)."""
    k = present_keys(toy, TOY_KEYS)
    by = [*k, *tabular_run_cols(toy)]
    return toy.groupby(by, sort=True, dropna=False)[value].mean().reset_index()


def mountain_car_final(mc: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Per run, the steps of the last training episode (the paper's Fig. 3(a) measure);
    ``extra`` settings are kept as key columns beside :data:`MOUNTAIN_CAR_KEYS`."""
    k = present_keys(mc, [*MOUNTAIN_CAR_KEYS, *extra])
    by = [*k, *tabular_run_cols(mc)]
    last = mc.sort_values("episode").groupby(by, sort=True, dropna=False).tail(1)
    return last[[*by, "steps"]].reset_index(drop=True)


def mountain_car_summary(
    mc: pd.DataFrame, *, reps: int = 2000, seed: int = 0, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """Last-episode steps per (algorithm, N, sigma^2, step size, ``extra`` settings): mean,
    SE, IQM [CI]."""
    final = mountain_car_final(mc, extra)
    keys = present_keys(final, [*MOUNTAIN_CAR_KEYS, *extra])
    return summarize(final, keys, "steps", reps=reps, seed=seed)


def mountain_car_best(summary: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Best step size per algorithm and sigma^2 (and ``extra`` settings; fewest last-episode
    steps), as in Sec. 5."""
    if summary.empty:
        return summary
    group = present_keys(summary, ["algorithm", "n", "sigma2", *extra])
    return best_settings(summary, group, score="mean", higher_is_better=False)
