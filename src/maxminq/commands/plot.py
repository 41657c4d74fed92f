"""``maxminq plot RUN_DIR [RUN_DIR ...]``: the training curves of finished deep runs (folders
of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``) in one figure (return, measured
estimation bias, Q estimates), one colour per run, in the order given (runs of one G with
several ``--op-kwargs``: shades of its colour, in its runs' places by value, beta 5, 20, 100)."""

from __future__ import annotations

import argparse
from pathlib import Path

from maxminq.analysis.runs import figure_title, plot_runs

__all__ = ["add_arguments", "figure_title", "run"]  # figure_title: now in analysis.runs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq plot``."""
    parser.add_argument(
        "runs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="folders written by 'maxminq train', or a sweep's OUT/tables/<run_id>",
    )
    parser.add_argument(
        "--out",
        default=None,  # a str: a trailing "/" (a folder) would be lost in a Path
        help="figure path, with or without .png; .png and .svg are written; an existing "
        "folder, or a path ending in /, gets the default name inside it (default: "
        "RUN_DIR/curves for one run, ./compare for several)",
    )
    parser.add_argument(
        "--panels",
        default=None,
        help="comma-separated panels, from: return, eval (mean return per evaluation during "
        "training, per seed; runs trained with --eval-every), bias (mean of estimate - MC "
        "return), bias_abs (its mean absolute value), bias_std (its spread), q (mean Q(s, a) "
        "of the updated net on replayed batches), loss, bias_dist (median and 10-90%% "
        "quantiles of the bias per probe, seeds pooled; runs trained with --save-probes); "
        "default return,bias,q",
    )


def run(args: argparse.Namespace) -> int:
    """Draw one figure (:func:`~maxminq.analysis.runs.plot_runs`, which checks every folder
    first); its warning (a run missing from the bias panel) is one line on stderr
    (``cli.main``)."""
    paths = plot_runs(args.runs, args.out, panels=args.panels)
    png = next(p for p in paths if p.suffix == ".png")
    # both files: "--out fig.svg" was answered with the .png alone
    print(f"figure written to {png} and {png.with_suffix('.svg').name}")
    return 0
