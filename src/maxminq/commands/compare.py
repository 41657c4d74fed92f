"""``maxminq compare RUN_DIR [RUN_DIR ...]``: the final performance of finished deep runs
(folders of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``) on one environment,
one row per run, with tests against a baseline run: what to read before writing "agent A
beats agent B".

Per seed, the final score is ``tables.deep_final_scores``'s: the mean return of the test
episodes after training, else the training return averaged over the last 100 episodes.

Example::

    maxminq compare runs/lunar-maxmin runs/lunar-dqn --baseline 2 --csv runs/compare.csv
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from maxminq.analysis.style import count
from maxminq.errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

REPS = 2000  # bootstrap resamples of the IQM's confidence interval
FEW_SEEDS = 20  # fewer seeds per run than this: the footer says p-values are rough
SOURCES = {"test": "test", "train_last100": "last-100"}  # deep_final_scores' source: shown
# Columns each table must hold as numbers (the bias columns are read only when present).
_COLUMNS = {"tests": ("seed", "return"), "episodes": ("seed", "step", "return"), "runs": ()}
_BIAS_COLUMNS = ("seed", "step", "bias_mean", "bias_std", "bias_abs")
# Settings that change what a return measures: runs that differ in one are warned about.
_MEASURE = {"max_episode_steps": "episode cap", "eval_eps": "test eps"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq compare``."""
    parser.epilog = (
        "Per seed, the score is the mean return of its test episodes after training (a run "
        "without them: its training return over the last 100 episodes). Each run: mean +- SE "
        "over seeds, IQM with a 95% stratified bootstrap CI, and the measured bias (estimate - "
        "MC return) in the second half of training. Against the baseline: the difference of "
        "means, Welch's two-sided t-test p and P(improve) = P(X>Y) + 0.5 P(X=Y) over seed "
        "pairs (n/a, with the reason, when a run has fewer than 2 seeds)."
    )
    parser.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="folders written by 'maxminq train', or a sweep's OUT/tables/<run_id>, all on "
        "one environment (with the same --env-kwargs)",
    )
    parser.add_argument(
        "--baseline",
        type=int,
        default=1,
        metavar="K",
        help="the run the others are tested against: its position among the RUN_DIRs, "
        "from 1 (default 1)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help=f"seed of the bootstrap of the IQM's confidence interval ({REPS} resamples); "
        "the same seed prints the same table (default 0)",
    )
    parser.add_argument(
        "--csv",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the table here as CSV (one row per run, numbers unrounded)",
    )


def _check(args: argparse.Namespace) -> None:
    """The options, before any folder is read."""
    k = len(args.runs)
    if not 1 <= args.baseline <= k:
        where = "1" if k == 1 else f"1 to {k}"
        raise UsageError(
            f"--baseline: expected a position among the {count(k, 'RUN_DIR')} ({where}), "
            f"got {args.baseline}"
        )
    if args.seed < 0:
        raise UsageError(f"--seed: expected a whole number >= 0, got {args.seed}")
    if args.csv is not None:
        if args.csv.suffix.lower() != ".csv":
            raise UsageError(f"--csv: expected a file name ending in .csv, got {args.csv}")
        if args.csv.is_dir():
            raise UsageError(f"--csv: {args.csv} is a folder; give a file name")
        if not args.csv.resolve().parent.is_dir():
            raise UsageError(f"--csv: the folder {args.csv.resolve().parent} does not exist")
        from maxminq.deep.train import TABLE_COLUMNS

        target = args.csv.resolve()
        for folder in args.runs:  # the table would replace one the runs are read from
            if target.parent == folder.resolve() and target.stem in TABLE_COLUMNS:
                raise UsageError(
                    f"--csv: {args.csv} is the {target.stem} table of the RUN_DIR {folder}; "
                    "give another file name"
                )


def _check_tables(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    """Raise UsageError unless the tables hold, as numbers, the columns the scores and the
    bias are computed from (a table of another program, or edited by hand)."""
    from maxminq.commands.plot import require_numeric_columns

    needs = {**_COLUMNS, "metrics": ()}
    if {"bias_mean", "step"} <= set(tables["metrics"].columns):
        needs["metrics"] = _BIAS_COLUMNS
    require_numeric_columns(folder, tables, needs)


def _check_same_environment(folders: list[Path], cfgs: list[dict]) -> None:
    """Raise UsageError naming the first RUN_DIR on another environment (or with other
    environment keywords) than the first: their returns are not on one scale."""
    env, kwargs = cfgs[0]["env_id"], cfgs[0].get("env_kwargs") or {}
    for folder, cfg in zip(folders[1:], cfgs[1:], strict=True):
        if cfg["env_id"] != env:
            raise UsageError(
                f"RUN_DIR: {folder} is a run on {cfg['env_id']}, {folders[0]} on {env}; "
                "returns on different environments cannot be compared"
            )
        other = cfg.get("env_kwargs") or {}
        if json.dumps(other, sort_keys=True) != json.dumps(kwargs, sort_keys=True):
            raise UsageError(
                f"RUN_DIR: {folder} ran {env} with env_kwargs {json.dumps(other)}, {folders[0]} "
                f"with {json.dumps(kwargs)}; returns of different environments cannot be compared"
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


def run_bias(metrics: pd.DataFrame) -> np.ndarray:
    """Per seed, the measured bias (estimate - MC return) of its probes in the second half
    of training (``tables.second_half_bias``); empty without bias columns or probes."""
    import numpy as np
    import pandas as pd

    from maxminq.analysis.tables import second_half_bias

    if "bias_mean" not in metrics.columns or metrics.empty:
        return np.array([])
    return second_half_bias(metrics, pd.Series(dtype=object), ())  # keys (): the whole table


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


def _pm(mean: float, se: float, fmt: str = ".2f") -> str:
    """``mean +- SE``; a single value alone (it has no standard error, not one of 0)."""
    if not math.isfinite(mean):
        return "n/a"
    return f"{mean:{fmt}}" + (f" +- {se:.2f}" if math.isfinite(se) else "")


def _p_text(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else "< 0.001"


def format_table(table: pd.DataFrame, steps: list[str], compare: bool) -> list[str]:
    """The lines of the printed table: a header, then one aligned row per run; the bias
    column only if some run measured a bias, the comparison columns only if ``compare``."""
    header = ["run", "steps", "seeds", "score", "mean +- SE", "IQM [95% CI]"]
    bias = bool((table["bias_seeds"] > 0).any())
    header += ["bias +- SE"] * bias + ["diff", "p", "P(improve)"] * compare
    lines = [header]
    for r, step in zip(table.to_dict("records"), steps, strict=True):
        seeds = str(r["seeds"]) + (f" ({r['diverged']} diverged)" if r["diverged"] else "")
        iqm = f"{r['iqm']:.2f}" + (
            f" [{r['iqm_low']:.2f}, {r['iqm_high']:.2f}]" if r["seeds"] > 1 else ""
        )
        cells = [r["run"], step, seeds, r["score"], _pm(r["mean"], r["se"]), iqm]
        if bias:
            b = _pm(r["bias_mean"], r["bias_se"], "+.2f")
            cells.append(
                b + (f" ({count(r['bias_seeds'], 'seed')})" * (0 < r["bias_seeds"] < r["seeds"]))
            )
        if compare and r["why_na"] == "baseline":
            cells += ["baseline", "", ""]
        elif compare:
            tested = math.isfinite(r["p"])
            cells += [
                f"{r['diff']:+.2f}",
                _p_text(r["p"]) if tested else f"n/a ({r['why_na']})",
                f"{r['p_improve']:.2f}" if math.isfinite(r["p_improve"]) else "n/a",
            ]
        lines.append(cells)
    widths = [max(len(line[j]) for line in lines) for j in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    ]


def _footer(table: pd.DataFrame, baseline: str, seed: int, compare: bool) -> list[str]:
    """What the numbers are, and how far to trust the tests, wrapped at 100 characters."""
    import textwrap

    sources = set(" ".join(table["score"]).split())
    what = {
        "test": "test = the mean return of the seed's test episodes after training",
        "last-100": "last-100 = its training return averaged over its last 100 episodes "
        "(the run has no test episodes)",
    }
    paragraphs = [
        "score: " + "; ".join(text for key, text in what.items() if key in sources),
        "mean +- SE over seeds; IQM: interquartile mean over seeds, [95% CI] stratified "
        f"bootstrap ({REPS} resamples, --seed {seed})"
        + (
            "; bias: estimate - MC return of the probes in the second half of training, "
            "mean +- SE over seeds"
        )
        * bool((table["bias_seeds"] > 0).any()),
    ]
    if compare:
        others = len(table) - 1
        paragraphs.append(
            f"vs {baseline}: diff = difference of means; p: Welch's t-test, two-sided; "
            "P(improve) = P(X>Y) + 0.5 P(X=Y), X a seed's score of the run, Y one of the "
            "baseline, over all n m pairs (Mann-Whitney U / nm)"
            + f"; not corrected for {others} comparisons"
            * (others > 1)
        )
        fewest = int(table["seeds"].min())
        if fewest < FEW_SEEDS:
            paragraphs.append(
                f"with {count(fewest, 'seed')} (the fewest per run) p-values and intervals are "
                "rough: Welch's test assumes normal per-seed scores and has little power at "
                "this size, and a bootstrap over so few seeds gives intervals narrower than "
                "their 95%"
            )
    return [
        line
        for text in paragraphs
        for line in textwrap.wrap(text, 100, subsequent_indent="  ", break_on_hyphens=False)
    ]


def _warn_measures(labels: list[str], cfgs: list[dict], table: pd.DataFrame) -> None:
    """Warning lines (stderr) when the scores are not the same measure in every run: some
    from tests, some from training returns, or another episode cap or test eps."""
    sources = {s for text in table["score"] for s in text.split() if s in SOURCES.values()}
    if len(sources) > 1:
        print(
            "maxminq compare: warning: some scores are test returns, others training "
            "returns (last-100: runs without test episodes); they are not the same measure",
            file=sys.stderr,
        )
    for key, name in _MEASURE.items():
        values = {json.dumps(c.get(key)) for c in cfgs if key in c}
        if len(values) > 1:
            each = ", ".join(
                f"{label} {json.dumps(c.get(key))}" for label, c in zip(labels, cfgs, strict=True)
            )
            print(
                f"maxminq compare: warning: the runs differ in {key} ({name}): {each}",
                file=sys.stderr,
            )


def _steps(cfg: dict, tables: dict[str, pd.DataFrame]) -> str:
    """The run's length as printed: its ``steps`` setting, else its last logged step."""
    if isinstance(cfg.get("steps"), int):
        return f"{cfg['steps']:,}"
    last = max(
        (
            float(tables[k]["step"].max())
            for k in ("metrics", "episodes")
            if "step" in tables[k] and len(tables[k])
        ),
        default=math.nan,
    )
    return f"{int(last):,}" if math.isfinite(last) else "?"


def run(args: argparse.Namespace) -> int:
    """Check the options and every folder first, then print (and write) the table."""
    from maxminq.commands.plot import load_runs, run_labels
    from maxminq.experiments.store import atomic_write

    _check(args)
    cfgs, tables = load_runs(args.runs)
    for folder, t in zip(args.runs, tables, strict=True):
        _check_tables(folder, t)
    _check_same_environment(args.runs, cfgs)
    scores = [final_scores(t) for t in tables]
    for folder, s in zip(args.runs, scores, strict=True):
        if s.empty:
            raise UsageError(f"RUN_DIR: no episode finished in {folder}; it has no score")
    for folder, cfg, s in zip(args.runs, cfgs, scores, strict=True):
        unscored = sorted(set(cfg["seeds"]) - set(s["seed"].astype(int)))
        if unscored:  # e.g. diverged before its first episode ended
            print(
                f"maxminq compare: warning: {folder}: no score for {count(len(unscored), 'seed')} "
                f"({', '.join(map(str, unscored))}: no episode finished), left out",
                file=sys.stderr,
            )
    labels = run_labels(cfgs, args.runs)
    b = args.baseline - 1
    table = compare_table(labels, scores, [run_bias(t["metrics"]) for t in tables], b, args.seed)
    steps = [_steps(c, t) for c, t in zip(cfgs, tables, strict=True)]
    compare = len(args.runs) > 1
    env = cfgs[0]["env_id"] + (
        f" {json.dumps(cfgs[0]['env_kwargs'])}" if cfgs[0].get("env_kwargs") else ""
    )
    print(
        f"{env}, final score per seed"
        + (f", against {labels[b]} (--baseline {args.baseline})" if compare else "")
        + ":"
    )
    for line in [
        *format_table(table, steps, compare),
        *_footer(table, labels[b], args.seed, compare),
    ]:
        print(line)
    _warn_measures(labels, cfgs, table)
    if args.csv is not None:
        out = table.assign(
            folder=[str(f) for f in args.runs],
            env_id=[c["env_id"] for c in cfgs],
            agent=[c["agent"] for c in cfgs],
            n=[c["n"] for c in cfgs],
            lr=[c["lr"] for c in cfgs],
            steps=[c.get("steps", math.nan) for c in cfgs],
            baseline=[i == b for i in range(len(cfgs))],
        )
        first = ["run", "folder", "env_id", "agent", "n", "lr", "steps", "baseline"]
        out = out[[*first, *(c for c in out.columns if c not in first)]]
        atomic_write(args.csv, lambda tmp: out.to_csv(tmp, index=False))
        print(f"table written to {args.csv}")
    return 0
