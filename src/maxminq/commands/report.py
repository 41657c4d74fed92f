"""``maxminq report DIR``: figures, tables and the claims checked, as HTML and Markdown."""

from __future__ import annotations

import argparse
from pathlib import Path

from maxminq.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq report``."""
    parser.add_argument(
        "dir", type=Path, help="results folder (holds results.sqlite and/or theory/)"
    )
    parser.add_argument(
        "--theory-dir",
        type=Path,
        default=None,
        help="folder written by 'maxminq theory' (default: DIR/theory)",
    )
    parser.add_argument(
        "--reps", default="2000", help="bootstrap replicates for IQM CIs (default 2000)"
    )


def validate(args: argparse.Namespace) -> Path:
    """Check the options before any work; returns the theory folder to use."""
    if not args.dir.is_dir():
        raise UsageError(f"DIR: {args.dir} is not a folder (expected a results folder)")
    theory = args.theory_dir if args.theory_dir is not None else args.dir / "theory"
    if args.theory_dir is not None and not theory.is_dir():
        raise UsageError(f"--theory-dir: {theory} is not a folder")
    if not (args.dir / "results.sqlite").is_file() and not (theory / "bias.csv").is_file():
        raise UsageError(
            f"DIR: {args.dir} holds neither results.sqlite (from 'maxminq sweep') nor "
            "theory/bias.csv (from 'maxminq theory'); nothing to report"
        )
    try:  # parsed here, not by argparse, so that a bad value is one line like the others
        reps = int(str(args.reps))
    except ValueError:
        raise UsageError(f"--reps: expected an integer >= 100, got {args.reps!r}") from None
    if reps < 100:
        raise UsageError(f"--reps: expected an integer >= 100, got {reps}")
    args.reps = reps
    return theory


def run(args: argparse.Namespace) -> int:
    """Write DIR/report.html, DIR/report.md, DIR/figures/ and DIR/summary/."""
    theory = validate(args)
    from maxminq.analysis.report import build_report

    report = build_report(args.dir, theory_dir=theory, reps=args.reps)
    print(report.html)
    print(report.markdown)
    for claim in report.claims:
        print(f"  {claim.status:<17} {claim.text}")
    if report.unchecked:
        print(f"  not checked (no data in this folder): {', '.join(report.unchecked)}")
    for line in report.pooled:
        print(f"  caution, runs of different experiments pooled: {line}")
    return 0
