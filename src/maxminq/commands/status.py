"""``maxminq status DIR``: run counts per config and status, failures, runs in progress."""

from __future__ import annotations

import argparse
from pathlib import Path

from maxminq.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq status``."""
    parser.add_argument("dir", help="a sweep output folder (holds results.sqlite)")
    parser.add_argument("--config", default=None, help="only the runs of this config name")
    parser.add_argument(
        "--verify", action="store_true", help="also check every finished run's files"
    )


def run(args: argparse.Namespace) -> int:
    """Print the folder's counts; exit 0 when nothing failed, 1 otherwise."""
    from maxminq.experiments.store import (
        STATUSES,
        ResultsStore,
        StoreError,
        last_line,
        sweep_owner,
    )

    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"DIR: {folder} is not a folder")
    try:
        store = ResultsStore(folder, create=False)
    except StoreError as err:
        raise UsageError(f"DIR: {err}") from None
    with store:
        configs = store.configs()
        if args.config is not None and args.config not in configs:
            known = ", ".join(configs) or "none"
            raise UsageError(f"--config: no config {args.config!r} here; known: {known}")
        owner = sweep_owner(folder)
        print(f"{folder}: {'sweep running, ' + owner if owner else 'no sweep running'}")
        width = max([len(c) for c in configs] + [6])
        print(f"{'config':<{width}}  " + "  ".join(f"{s:>8}" for s in STATUSES) + "     total")

        def row(label: str, counts: dict[str, int]) -> None:
            cells = "  ".join(f"{counts[s]:>8}" for s in STATUSES)
            print(f"{label:<{width}}  {cells}  {sum(counts.values()):>8}")

        for name in [args.config] if args.config else configs:
            row(name, store.counts(name))
        records = store.records(args.config)
        if not args.config and len(configs) > 1:
            row("all", store.counts())
        failed = [r for r in records if r.status == "failed"]
        for rec in failed:
            print(f"failed   {rec.run_id} (attempts {rec.attempts}): {last_line(rec.error)}")
        for rec in records:
            if rec.status == "running" and owner:
                print(f"running  {rec.run_id} since {rec.started} ({rec.host}, pid {rec.pid})")
            elif rec.status == "running":  # its sweep was killed: the next sweep re-runs it
                print(f"stale    {rec.run_id} since {rec.started} (interrupted; will be re-run)")
            elif rec.status == "diverged":
                print(f"diverged {rec.run_id}: {last_line(rec.error)}")
        bad = 0
        if args.verify:
            for rec in records:
                if rec.status in ("done", "diverged"):
                    problem = store.verify_tables(rec.run_id)
                    if problem:
                        bad += 1
                        print(f"corrupt  {rec.run_id}: {problem}")
            print(f"verified: {bad} finished run(s) with bad files (re-run by the next sweep)")
    return 1 if failed or bad else 0
