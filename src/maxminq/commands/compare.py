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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from maxminq.analysis.compare import (
    REPS,
    check_options,
    compare_warnings,
    comparison_table,
    row_texts,
    score_runs,
)
from maxminq.analysis.runs import check_run_dirs, load_runs
from maxminq.analysis.style import count
from maxminq.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

FEW_SEEDS = 20  # fewer seeds per run than this: the footer says p-values are rough


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq compare``."""
    parser.epilog = (
        "Per seed, the score is the mean return of its test episodes after training (a run "
        "without them: its training return over the last 100 episodes). Each run: mean +- SE "
        "over seeds, IQM with a 95% stratified bootstrap CI, and the measured bias (estimate - "
        "MC return) in the second half of training. Against the baseline: the difference of "
        "means, Welch's two-sided t-test p and P(improve) = P(X>Y) + 0.5 P(X=Y) over seed "
        "pairs (n/a, with the reason, when a run has one seed, or when in each run every "
        "seed scored the same)."
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
        metavar="S",
        help=f"seed of the bootstrap of the IQM's confidence interval ({REPS} resamples); "
        "the same seed prints the same table (default 0)",
    )
    parser.add_argument(
        "--csv",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the table to FILE, a name ending in .csv (one row per run, numbers "
        "unrounded; its folder is created if needed)",
    )


def _check(args: argparse.Namespace) -> None:
    """The options, before any folder is read."""
    check_options(args.runs, args.baseline, args.seed)
    if args.csv is not None:
        if args.csv.suffix.lower() != ".csv":
            raise UsageError(f"--csv: expected a file name ending in .csv, got {args.csv}")
        if args.csv.is_dir():
            raise UsageError(f"--csv: {args.csv} is a folder; give a file name")
        from maxminq.cli import check_out_folder

        # Created when missing, as evaluate's --csv and plot's --out do.
        check_out_folder(args.csv.parent, "--csv")
        refuse_run_table(args.csv, args.runs)


def refuse_run_table(csv: Path, run_dirs: Sequence[Path]) -> None:
    """A UsageError naming ``--csv`` when ``csv`` is a run's own table (``tests.csv``,
    ``episodes.csv``, ...) in one of ``run_dirs`` or in any other run's folder (one holding
    ``runs.csv``): writing there would replace what ``compare`` scores. Shared by
    ``compare`` and ``evaluate``."""
    from maxminq.deep.run_folder import TABLE_COLUMNS

    target = csv.resolve()
    runs = {Path(d).resolve() for d in run_dirs}
    if target.stem in TABLE_COLUMNS and (
        target.parent in runs or (target.parent / "runs.csv").is_file()
    ):
        raise UsageError(
            f"--csv: {csv} is the {target.stem} table of the run in {csv.parent}; "
            "give another file name"
        )


def format_table(table: pd.DataFrame, steps: list[str], compare: bool) -> list[str]:
    """The lines of the printed table: a header, then one aligned row per run; the bias
    column only if some run measured a bias, the comparison columns only if ``compare``."""
    header = ["run", "steps", "seeds", "score", "mean +- SE", "IQM [95% CI]"]
    bias = bool((table["bias_seeds"] > 0).any())
    header += ["bias +- SE"] * bias + ["diff", "p", "P(improve)"] * compare
    lines = [header]
    for r, step in zip(table.to_dict("records"), steps, strict=True):
        t = row_texts(r)
        cells = [r["run"], step, t["seeds"], r["score"], t["mean"], t["iqm"]]
        cells += [t["bias"]] * bias + [t["diff"], t["p"], t["p_improve"]] * compare
        lines.append(cells)
    widths = [max(len(line[j]) for line in lines) for j in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    ]


def _footer(
    table: pd.DataFrame, sources: set[str], baseline: str, seed: int, compare: bool
) -> list[str]:
    """What the numbers are (``sources``: the scores' ``source`` values), and how far to
    trust the tests, wrapped at 100 characters."""
    what = {
        "test": "test = the mean return of the seed's test episodes after training",
        "train_last100": "last-100 = its training return averaged over its last 100 episodes "
        "(the seed has no test episodes: it diverged, or the run was trained without tests)",
    }
    paragraphs = [
        "score: " + "; ".join(text for key, text in what.items() if key in sources),
        "mean +- SE over seeds; IQM: interquartile mean over seeds, [95% CI] stratified "
        f"bootstrap ({REPS} resamples, --seed {seed})"
        + (
            "; with fewer than 4 seeds the IQM trims none (a quarter of 3 seeds is no whole "
            "seed): it is the mean"
        )
        * bool((table["seeds"] < 4).any())
        + (
            "; bias: estimate - MC return of the probes in the metrics intervals starting at or "
            "after the midpoint of training, "
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
    return [line for text in paragraphs for line in _wrap(text)]


def _wrap(text: str | None) -> list[str]:
    """A footer paragraph as lines of at most 100 characters, the later ones indented."""
    import textwrap

    if not text:
        return []
    return textwrap.wrap(text, 100, subsequent_indent="  ", break_on_hyphens=False)


def no_bias_note(table: pd.DataFrame, cfgs: list[dict]) -> str | None:
    """Why a run has no measured bias (its cell ``n/a``, or the column left out when no run
    has one), for the footer; None when every run has one. The bias is that of the probes
    scored in the metrics intervals starting at or after the midpoint (``pooled_bias``), so
    a run has none when it never passed ``--learning-starts`` (where probing starts), when
    no interval of ``--bias-every`` steps starts in its second half (a short run), or when
    no probe there counted (a probe counts when its episode terminates, or when the time
    limit cuts it ``bias_probes.bias_horizon`` steps after it or later: 299 at gamma 0.99)."""
    from maxminq.analysis.style import integer
    from maxminq.deep.bias_probes import bias_horizon

    def why(cfg: dict) -> str:
        steps, starts, every = (cfg.get(k) for k in ("steps", "learning_starts", "bias_every"))
        if isinstance(steps, int) and isinstance(starts, int) and steps <= starts:
            return (
                f"its {integer(steps)} steps never passed --learning-starts, where probing starts"
            )
        if isinstance(steps, int) and isinstance(every, int) and every > 0:
            half = steps // 2
            first = -(-half // every) * every  # the first interval starting at or after it
            if first == 0:  # a step-0 start is the run's first interval, not its second half
                first = every
            if first >= steps:
                return (
                    f"no metrics interval (--bias-every {integer(every)}) starts in the second "
                    f"half of its {integer(steps)} steps; a smaller --bias-every gives some"
                )
        gamma = cfg.get("gamma")
        k = bias_horizon(gamma) if isinstance(gamma, int | float) else None
        cut = "never, at gamma 1" if k is None else f"{integer(k)}+ steps after the probe"
        return (
            "no probe counted there: a probe counts when its episode terminates, or when the "
            f"time limit cuts it {cut} (training warns when the cut episodes hide the bias)"
        )

    lacking = [i for i, n in enumerate(table["bias_seeds"]) if n == 0]
    if not lacking:
        return None
    reasons: dict[str, list[str]] = {}
    for i in lacking:
        reasons.setdefault(why(cfgs[i]), []).append(str(table["run"].iloc[i]))
    if len(reasons) == 1 and len(lacking) == len(table):
        return f"bias: none measured in the second half of training: {next(iter(reasons))}"
    return "bias: none measured in the second half of training of " + "; of ".join(
        f"{', '.join(runs)}: {text}" for text, runs in reasons.items()
    )


def _steps(cfg: dict, tables: dict[str, pd.DataFrame]) -> str:
    """The run's length as printed: its ``steps`` setting, else its last logged step."""
    from maxminq.analysis.style import integer  # the labels' format of steps

    if isinstance(cfg.get("steps"), int):
        return integer(cfg["steps"])
    last = max(
        (
            float(tables[k]["step"].max())
            for k in ("metrics", "episodes")
            if "step" in tables[k] and len(tables[k])
        ),
        default=math.nan,
    )
    return integer(int(last)) if math.isfinite(last) else "?"


def run(args: argparse.Namespace) -> int:
    """Check the options and every folder first, then print (and write) the table."""
    from maxminq.experiments.store import atomic_write, remove_stale_temporaries

    _check(args)
    check_run_dirs(args.runs, "compare")
    cfgs, tables = load_runs(args.runs)
    scores = score_runs(args.runs, cfgs, tables)
    with compare_warnings() as cautions:
        table = comparison_table(args.runs, cfgs, tables, scores, args.baseline, args.seed)
    labels = list(table["run"])
    b = args.baseline - 1
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
        *_footer(table, {k for s in scores for k in s["source"]}, labels[b], args.seed, compare),
        *_wrap(no_bias_note(table, cfgs)),
    ]:
        print(line)
    for text in cautions:
        print(f"maxminq compare: warning: {text}", file=sys.stderr)
    if args.csv is not None:
        remove_stale_temporaries([args.csv])  # what a compare killed while writing left
        atomic_write(args.csv, lambda tmp: table.to_csv(tmp, index=False))
        print(f"table written to {args.csv}")
    return 0
