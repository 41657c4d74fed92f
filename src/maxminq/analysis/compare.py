"""The comparison of finished deep runs on one environment behind ``maxminq compare``: per
seed the final score (``tables.deep_final_scores``: the mean return of the test episodes
after training, else the training return averaged over the last 100 episodes), per run its
mean, SE, IQM with a bootstrap CI and measured bias, and tests against a baseline run.

From Python::

    from maxminq.analysis.compare import compare_runs

    table = compare_runs(["runs/lunar-maxmin", "runs/lunar-dqn"], baseline=2)
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from maxminq.analysis.runs import (
    as_folders,
    check_run_dirs,
    load_runs,
    require_numeric_columns,
    run_labels,
)
from maxminq.analysis.style import count
from maxminq.errors import MaxminqWarning, UsageError, is_whole

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

REPS = 2000  # bootstrap resamples of the IQM's confidence interval
SOURCES = {"test": "test", "train_last100": "last-100"}  # deep_final_scores' source: shown
# Columns each table must hold as numbers (the bias columns are read only when present).
_COLUMNS = {"tests": ("seed", "return"), "episodes": ("seed", "step", "return"), "runs": ()}
_BIAS_COLUMNS = ("seed", "step", "bias_mean", "bias_std", "bias_abs")
# Settings that change what a score or the bias measures: runs that differ in one are warned
# about (a final score after 3,000 steps against one after 5,000 is no test of the agents; a
# bias against returns discounted by 0.9 is not on the scale of one against 0.99).
_MEASURE = {
    "max_episode_steps": "episode cap",
    "eval_eps": "test eps",
    "steps": "training length",
    "gamma": "discount of the returns the bias is measured against",
}


class CompareWarning(MaxminqWarning):
    """The compared runs are not scored alike: a seed without a score (left out), scores
    from tests beside training returns, or runs with another episode cap, test eps,
    training length or discount."""


@contextlib.contextmanager
def compare_warnings() -> Iterator[list[str]]:
    """Within, each :class:`CompareWarning` is collected (its text, in order, into the list
    given, filled on leaving) instead of shown, for the caller to say in its own way; any
    other warning is shown as Python shows it."""
    texts: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompareWarning)
        yield texts
    for w in caught:
        if issubclass(w.category, CompareWarning):
            texts.append(str(w.message))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def check_tables(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    """Raise UsageError unless the tables hold, as numbers, the columns the scores and the
    bias are computed from (a table of another program, or edited by hand)."""
    needs = {**_COLUMNS, "metrics": ()}
    if {"bias_mean", "step"} <= set(tables["metrics"].columns):
        needs["metrics"] = _BIAS_COLUMNS
    require_numeric_columns(folder, tables, needs)


#: A value no setting has: a keyword whose default cannot be told.
_UNKNOWN = object()


def environment_defaults(env_id: str) -> dict[str, object] | None:
    """The keywords ``env_id`` is built with where a run gives none: its registered spec's
    ``kwargs`` over the defaults of its entry point's signature (e.g. LunarLander-v3's
    ``gravity`` -10.0, FrozenLake-v1's ``map_name`` '4x4'), as ``gymnasium.make`` merges
    them. Read only where that has no effect the user would not expect: an id already in
    Gymnasium's registry (Gymnasium's own, maxminq's, those of installed plugins), whose
    entry point is loaded as ``make`` loads it. None when it cannot be told so: an id of
    the form ``module:Name-v0`` (telling would import the user's module), an id not
    registered, an entry point that does not load or cannot be inspected; a keyword the
    answer lacks (an entry point taking ``**kwargs``) has no known default. They are the
    installed packages' defaults (a run's folder does not record the versions it trained
    under): Gymnasium gives an id a new version (``-v1`` to ``-v2``) when a change may
    alter results, so a run on the same id left a keyword at these."""
    import inspect

    from maxminq.envs.api import creator_parameters  # registers maxminq's ids too

    if not isinstance(env_id, str) or ":" in env_id:
        return None
    found = creator_parameters(env_id)
    if found is None:  # not told: the runs' keywords are compared as given
        return None
    spec, params = found
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    defaults: dict[str, object] = {
        p.name: p.default
        for p in params
        if p.kind in named and p.default is not inspect.Parameter.empty
    }
    return {**defaults, **dict(spec.kwargs or {})}


def _equal(a: object, b: object) -> bool | None:
    """Whether two keyword values are the same setting (a run's JSON beside a Python
    default: 10 and 10.0 alike, a list and a tuple alike, True and 1 not); None when that
    cannot be told (e.g. an array default)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        each = [_equal(x, y) for x, y in zip(a, b, strict=True)]
        return None if None in each else all(each)
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return False
        each = [_equal(a[k], b[k]) for k in a]
        return None if None in each else all(each)
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    return None


def same_environment(env_id: str, kwargs: dict, other: dict) -> tuple[bool | None, list[str]]:
    """Whether runs on ``env_id`` with the keywords ``kwargs`` and ``other`` (their
    ``--env-kwargs``) play one environment: True, False or None (cannot be told without
    importing a module of the user's, :func:`environment_defaults`); with False, each
    keyword that differs once the defaults are filled in, as ``other``'s value vs
    ``kwargs``' (``gravity -5 vs -10 (default)``)."""
    if json.dumps(kwargs, sort_keys=True) == json.dumps(other, sort_keys=True):
        return True, []
    defaults = environment_defaults(env_id)
    if defaults is None:
        return None, []

    def value(given: dict, key: str) -> tuple[object, str]:
        if key in given:
            return given[key], json.dumps(given[key], default=repr)
        if key in defaults:
            return defaults[key], f"{json.dumps(defaults[key], default=repr)} (default)"
        return _UNKNOWN, ""

    differ, unknown = [], False
    for key in sorted(set(kwargs) | set(other)):
        (a, a_text), (b, b_text) = value(other, key), value(kwargs, key)
        same = None if a is _UNKNOWN or b is _UNKNOWN else _equal(a, b)
        if same is None:
            unknown = True
        elif not same:
            differ.append(f"{key} {a_text} vs {b_text}")
    if differ:
        return False, differ
    return (None if unknown else True), []


def environment_kwargs(env_id: str, kwargs: dict) -> dict:
    """``kwargs`` (a run's ``--env-kwargs``) less the keywords given at their default value
    (:func:`environment_defaults`), as one environment is told by: ``{}`` and
    ``{"sutton_barto_reward": false}`` on CartPole-v1 alike. As given where the defaults
    cannot be read without importing a module of the user's."""
    defaults = environment_defaults(env_id) if kwargs else None
    if defaults is None:
        return dict(kwargs)
    return {k: v for k, v in kwargs.items() if not (k in defaults and _equal(v, defaults[k]))}


def check_same_environment(folders: list[Path], cfgs: list[dict]) -> None:
    """Raise UsageError naming the first RUN_DIR on another environment (or with other
    environment keywords) than the first: their returns are not on one scale. A keyword
    given at its default value is the same environment where the defaults can be read
    without importing a module of the user's (:func:`same_environment`)."""
    env, kwargs = cfgs[0]["env_id"], cfgs[0].get("env_kwargs") or {}
    for folder, cfg in zip(folders[1:], cfgs[1:], strict=True):
        if cfg["env_id"] != env:
            raise UsageError(
                f"RUN_DIR: {folder} is a run on {cfg['env_id']}, {folders[0]} on {env}; "
                "returns on different environments cannot be compared"
            )
        other = cfg.get("env_kwargs") or {}
        same, differ = same_environment(env, kwargs, other)
        if same:
            continue

        def shown(k: dict) -> str:
            return json.dumps(k) if k else "none"

        told = (
            "a keyword given at its default value counts as another environment too: train "
            "the runs to compare with the same --env-kwargs"
            if same is None
            else "they differ in " + "; ".join(differ)
        )
        raise UsageError(
            f"RUN_DIR: {folder} ran {env} with --env-kwargs {shown(other)}, {folders[0]} "
            f"with {shown(kwargs)}; returns of different environments cannot be compared "
            f"({told})"
        )


def final_scores(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per seed of a run (``read_tables`` of its folder): ``seed``, ``score``,
    ``source`` ('test' or 'train_last100'), ``diverged``; as ``tables.deep_final_scores``,
    seeds without a finite score left out."""
    import numpy as np

    from maxminq.analysis.tables import Tables, deep_final_scores

    t = Tables(episodes=tables["episodes"], tests=tables["tests"], runs=tables["runs"])
    scores = deep_final_scores(t)
    return scores[np.isfinite(scores["score"].to_numpy(dtype=float))].reset_index(drop=True)


def run_bias(metrics: pd.DataFrame, steps: int | None = None) -> np.ndarray:
    """The measured bias (estimate - MC return) over the second half of training of each
    seed with a probe there, as an array: the finite ``bias_mean`` values of
    ``tables.pooled_bias(metrics, second_half=True, steps=steps)`` (which gives them per
    seed, labelled; ``steps``: the run's length as trained, whose midpoint counts even when
    every seed diverged before the end); empty without bias columns or probes."""
    import numpy as np

    from maxminq.analysis.tables import pooled_bias

    if "bias_mean" not in metrics.columns or metrics.empty:
        return np.array([])
    out = pooled_bias(metrics, second_half=True, steps=steps)["bias_mean"].to_numpy(dtype=float)
    return out[np.isfinite(out)]


def _length(cfg: dict) -> int | None:
    """A run's ``steps`` as trained (None if its settings lack a whole number)."""
    steps = cfg.get("steps")
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else None


def compare_table(
    labels: list[str],
    scores: list[pd.DataFrame],
    biases: list[np.ndarray],
    baseline: int,
    seed: int = 0,
) -> pd.DataFrame:
    """The comparison as numbers, one row per run: ``run`` (label), ``seeds``, ``diverged``,
    ``score`` (where the scores come from), ``mean``, ``se``, ``iqm``, ``iqm_low``,
    ``iqm_high`` (95% stratified bootstrap, ``REPS`` resamples, the run at position i drawing
    from ``default_rng([seed, i])``), ``bias_mean``, ``bias_se``, ``bias_seeds`` and, against
    the run at index ``baseline`` (0-based), ``diff`` (mean - its mean), Welch's ``t``,
    ``df``, ``p`` and ``p_improve`` (P(X > Y) + 0.5 P(X = Y), X this run's seeds, Y the
    baseline's), with ``why_na`` saying why they are missing (NaN) where they are."""
    import numpy as np
    import pandas as pd

    from maxminq.analysis.tables import (
        mean_se,
        probability_of_improvement,
        summarize,
        welch_t_test,
    )

    pooled = pd.concat(
        [s.assign(position=i) for i, s in enumerate(scores)], ignore_index=True
    )  # one summarize call: run i's bootstrap draws from default_rng([seed, i])
    summary = summarize(pooled, ["position"], "score", reps=REPS, seed=seed)
    base = scores[baseline]["score"].to_numpy(dtype=float)
    rows = []
    for i, (label, s, bias) in enumerate(zip(labels, scores, biases, strict=True)):
        x = s["score"].to_numpy(dtype=float)
        row = summary.iloc[i]
        named = {SOURCES.get(str(k), str(k)): n for k, n in s["source"].value_counts().items()}
        bias_mean, bias_se = mean_se(bias) if bias.size else (math.nan, math.nan)
        t, df, p = welch_t_test(x, base)
        improve = probability_of_improvement(x, base)
        few = [n for n in (x.size, base.size) if n < 2]
        if i == baseline:
            why = "baseline"
        elif few:
            why = f"{count(min(few), 'seed')}; a test needs 2 per run"
        elif not math.isfinite(p):
            why = "no spread: in each run every seed scored the same"
        else:
            why = ""
        if few or i == baseline:
            improve = math.nan
        rows.append({
            "run": label,
            "seeds": int(x.size),
            "diverged": int(s["diverged"].astype(bool).sum()),
            "score": " + ".join(k if len(named) == 1 else f"{n} {k}" for k, n in named.items()),
            "mean": row["mean"],
            "se": row["se"],
            "iqm": row["iqm"],
            "iqm_low": row["iqm_low"],
            "iqm_high": row["iqm_high"],
            "bias_mean": bias_mean,
            "bias_se": bias_se,
            "bias_seeds": int(bias.size),
            "diff": math.nan if i == baseline else float(np.mean(x) - np.mean(base)),
            "t": math.nan if i == baseline else t,
            "df": math.nan if i == baseline else df,
            "p": math.nan if i == baseline else p,
            "p_improve": improve,
            "why_na": why,
        })  # fmt: skip
    return pd.DataFrame(rows)


def pm(mean: float, se: float, fmt: str = ".2f", sign: str = "+-") -> str:
    """``mean +- SE`` (``sign`` between them); a single value alone (it has no standard
    error, not one of 0); ``n/a`` without a value."""
    if not math.isfinite(mean):
        return "n/a"
    return f"{mean:{fmt}}" + (f" {sign} {se:.2f}" if math.isfinite(se) else "")


def row_texts(r: dict, sign: str = "+-") -> dict[str, str]:
    """The cells of one :func:`compare_table` row (a dict) as ``maxminq compare`` prints them
    (and the report's published section, with ``sign`` "±"): ``seeds``, ``mean``, ``iqm``,
    ``bias`` (how many seeds, if not all), and the test against the baseline, ``diff``, ``p``
    and ``p_improve`` (``baseline`` and two empty cells in the baseline's row)."""
    partial = 0 < r["bias_seeds"] < r["seeds"]
    texts = {
        "seeds": str(r["seeds"]) + (f" ({r['diverged']} diverged)" if r["diverged"] else ""),
        "mean": pm(r["mean"], r["se"], sign=sign),
        "iqm": f"{r['iqm']:.2f}"
        + (f" [{r['iqm_low']:.2f}, {r['iqm_high']:.2f}]" if r["seeds"] > 1 else ""),
        "bias": pm(r["bias_mean"], r["bias_se"], "+.2f", sign)
        + f" ({count(r['bias_seeds'], 'seed')})" * partial,
    }
    if r["why_na"] == "baseline":
        return {**texts, "diff": "baseline", "p": "", "p_improve": ""}
    p = r["p"]
    return {
        **texts,
        "diff": f"{r['diff']:+.2f}",
        "p": (f"{p:.3f}" if p >= 0.001 else "< 0.001")
        if math.isfinite(p)
        else f"n/a ({r['why_na']})",
        "p_improve": f"{r['p_improve']:.2f}" if math.isfinite(r["p_improve"]) else "n/a",
    }


def check_options(folders: Sequence[Path], baseline: int, seed: int) -> None:
    """Raise UsageError unless ``baseline`` is a position (from 1) among the ``folders`` and
    ``seed`` is >= 0 (before any folder is read; ``load_runs`` refuses a folder given twice)."""
    runs = len(folders)
    if not is_whole(baseline) or not 1 <= baseline <= runs:
        where = "1" if runs == 1 else f"1 to {runs}"
        raise UsageError(
            f"--baseline: expected a position among the {count(runs, 'RUN_DIR')} ({where}), "
            f"got {baseline!r}"
        )
    if not is_whole(seed) or seed < 0:
        raise UsageError(f"--seed: expected a whole number >= 0, got {seed!r}")


def score_runs(
    folders: Sequence[Path], cfgs: list[dict], tables: list[dict[str, pd.DataFrame]]
) -> list[pd.DataFrame]:
    """Per run (``load_runs`` of ``folders``), its :func:`final_scores`, after checking the
    columns they and the bias are computed from, that the runs share one environment, and
    that each run has a score (UsageErrors naming RUN_DIR)."""
    for folder, t in zip(folders, tables, strict=True):
        check_tables(folder, t)
    check_same_environment(list(folders), cfgs)
    scores = [final_scores(t) for t in tables]
    for folder, s in zip(folders, scores, strict=True):
        if s.empty:
            raise UsageError(f"RUN_DIR: no episode finished in {folder}; it has no score")
    return scores


def _unalike(
    folders: Sequence[Path], cfgs: list[dict], labels: list[str], scores: list[pd.DataFrame]
) -> list[str]:
    """What keeps the runs' scores (:func:`score_runs`) from being one measure, a sentence
    each: seeds of a run's settings without a score, scores from tests beside training
    returns, and settings of the return (``_MEASURE``) that differ between runs."""
    texts = []
    for folder, cfg, s in zip(folders, cfgs, scores, strict=True):
        unscored = sorted(set(cfg["seeds"]) - set(s["seed"].astype(int)))
        if unscored:  # e.g. diverged before its first episode ended
            texts.append(
                f"{folder}: no score for {count(len(unscored), 'seed')} "
                f"({', '.join(map(str, unscored))}: no episode finished), left out"
            )
    if len({source for s in scores for source in s["source"]}) > 1:
        texts.append(
            "some scores are test returns, others training returns (last-100: seeds without "
            "test episodes, e.g. diverged); they are not the same measure"
        )
    for key, name in _MEASURE.items():
        if len({json.dumps(c.get(key)) for c in cfgs if key in c}) > 1:
            each = ", ".join(  # a label that names the setting already ('DQN, steps 300')
                label
                if any(part.startswith(f"{key} ") for part in label.split(", "))
                else f"{label} {json.dumps(c.get(key))}"
                for label, c in zip(labels, cfgs, strict=True)
            )
            texts.append(f"the runs differ in {key} ({name}): {each}")
    return texts


def comparison_table(
    folders: Sequence[Path],
    cfgs: list[dict],
    tables: list[dict[str, pd.DataFrame]],
    scores: list[pd.DataFrame],
    baseline: int,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`compare_table` of the runs (labelled by ``run_labels``, tested against the run
    at position ``baseline``, from 1), after ``run``: ``folder``, ``env_id``, ``agent``,
    ``n``, ``lr``, (generalized-dqn runs: ``operator`` and ``op_kwargs``, JSON, ``""`` for
    none) ``steps`` (NaN if not set) and ``baseline`` (True for the baseline).
    Each sentence of :func:`_unalike` is a :class:`CompareWarning` (located at the caller of
    :func:`compare_runs`)."""
    b = baseline - 1
    labels = run_labels(cfgs, list(folders))
    for text in _unalike(folders, cfgs, labels, scores):
        warnings.warn(text, CompareWarning, stacklevel=3)
    biases = [run_bias(t["metrics"], _length(c)) for c, t in zip(cfgs, tables, strict=True)]
    table = compare_table(labels, scores, biases, b, seed)
    table = table.assign(
        folder=[str(f) for f in folders],
        env_id=[c["env_id"] for c in cfgs],
        agent=[c["agent"] for c in cfgs],
        n=[c["n"] for c in cfgs],
        lr=[c["lr"] for c in cfgs],
        steps=[c.get("steps", math.nan) for c in cfgs],
        baseline=[i == b for i in range(len(cfgs))],
    )
    first = ["run", "folder", "env_id", "agent", "n", "lr", "steps", "baseline"]
    if any(c.get("operator") for c in cfgs):  # generalized-dqn: its G, as a sweep's tables
        table["operator"] = [c.get("operator") or "" for c in cfgs]
        table["op_kwargs"] = [  # a sweep's text (store.canonical_json): the tables join on it
            json.dumps(c["op_kwargs"], sort_keys=True, separators=(",", ":"))
            if c.get("op_kwargs")
            else ""
            for c in cfgs
        ]
        first[first.index("lr") + 1 : first.index("lr") + 1] = ["operator", "op_kwargs"]
    return table[[*first, *(c for c in table.columns if c not in first)]]


def compare_runs(
    folders: Iterable[str | Path] | str | Path, baseline: int = 1, seed: int = 0
) -> pd.DataFrame:
    """The table ``maxminq compare FOLDER ... --baseline BASELINE --seed SEED --csv`` writes:
    one row per run folder (of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``, all on
    one environment; one folder alone may be given as a ``str`` or path), the columns of
    :func:`comparison_table`, tested against the run at position ``baseline`` (from 1);
    ``seed`` seeds the IQM's bootstrap. Bad input (options or folders) raises the UsageError
    the command prints; what it warns about (a seed without a score, scores that are not one
    measure) is a :class:`CompareWarning`. With few seeds per run (under 20) the p-values and
    intervals are rough, as the command's footer says. The DataFrame is a
    :class:`maxminq.analysis.tables.WholeTable`: a notebook shows all its columns (pandas
    shows 20 there, which hid ``mean``, ``se`` and ``iqm``)."""
    from maxminq.analysis.tables import WholeTable

    paths = as_folders(folders)  # one folder alone: one run
    check_options(paths, baseline, seed)
    check_run_dirs(paths, "compare")  # what the folder is, when it is no run (the command's)
    cfgs, tables = load_runs(paths)
    scores = score_runs(paths, cfgs, tables)
    return WholeTable(comparison_table(paths, cfgs, tables, scores, baseline, seed))
