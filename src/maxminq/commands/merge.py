"""``maxminq merge DIR... --out OUT``: the results folders of one sweep run on several
machines (``maxminq sweep --shard K/M``) brought together into one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from maxminq.errors import UsageError

# What cli.main adds to "interrupted" after Ctrl-C.
RESUME_HINT = (
    "--out is as it was, or merged whole if the merge had got as far as putting it in place "
    "(never half merged): the same command merges again"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq merge``."""
    parser.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="results folders of the same sweep config (each machine's --out, e.g. one per "
        "--shard K/M), copied to this machine whole: their work/ holds the checkpoints "
        "unfinished runs continue from",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="the merged folder: new, or a results folder already (its runs are kept and "
        "the DIRs' added: a second merge when another machine finishes)",
    )
    parser.add_argument(
        "--keep-first",
        action="store_true",
        help="a run finished with different results in two folders: keep the first "
        "folder's (--out's when it exists, then the DIRs in order) instead of refusing",
    )


def run(args: argparse.Namespace) -> int:
    """Merge; print what was taken from where. Exit 0 (2 for folders it refuses)."""
    from maxminq.cli import check_out_folder
    from maxminq.experiments.merge import merge_folders

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    check_out_folder(out, "--out")
    summary = merge_folders([Path(d) for d in args.dirs], out, keep_first=args.keep_first)
    print(summary.line(), flush=True)
    for line in summary.note_lines():  # under it (they were printed above it)
        print(line, file=sys.stderr)
    return 0
