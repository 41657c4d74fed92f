"""``maxminq sweep CONFIG``: run or resume a sweep config into a results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from maxminq.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq sweep``."""
    parser.add_argument("config", help="sweep config file (YAML), e.g. configs/toy_mdp.yaml")
    parser.add_argument(
        "--scale", default="quick", help="scale defined in the config: quick (default) or paper"
    )
    parser.add_argument("--backend", default="local", help="local (process pool, default) or ray")
    parser.add_argument(
        "--workers", type=str, default=None, help="parallel runs (default: number of cores)"
    )
    parser.add_argument(
        "--address", default=None, help="Ray cluster address (with --backend ray), e.g. auto"
    )
    parser.add_argument(
        "--out", default=None, help="results folder (default: results/<config name>)"
    )
    parser.add_argument(
        "--keep-work", action="store_true", help="keep each finished run's checkpoint folder"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def parse_workers(text: str | None) -> int | None:
    """``--workers`` as an integer >= 1 (None: one per core)."""
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--workers: expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise UsageError(f"--workers: expected an integer >= 1, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Validate everything (options, config, every run's settings), then run the sweep."""
    from maxminq.experiments.config import load_config
    from maxminq.experiments.runner import check_options, run_sweep

    workers = parse_workers(args.workers)
    check_options(args.backend, workers, args.address)
    config = load_config(args.config, args.scale)
    out = Path(args.out) if args.out else Path("results") / config.name
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    summary = run_sweep(
        config,
        out,
        backend=args.backend,
        workers=workers,
        address=args.address,
        progress=not args.no_progress,
        keep_work=args.keep_work,
    )
    print(summary.line())
    for run_id, error in summary.failures.items():
        print(f"  failed {run_id}: {error}")
    return 0 if summary.ok else 1
