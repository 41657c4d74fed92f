"""``maxminq report DIR``: figures, tables and the claims checked, as HTML and Markdown."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from maxminq.errors import UsageError

if TYPE_CHECKING:  # the analysis imports pandas and matplotlib: not for every option error
    from maxminq.analysis.report import Report

MAX_REPS = 100_000  # the bootstrap draws reps x runs indices (held in blocks: T.BOOTSTRAP_BLOCK)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq report``."""
    parser.add_argument(
        "dir",
        type=Path,
        metavar="DIR",
        help="results folder (holds results.sqlite and/or theory/), or the folder of "
        "'maxminq theory'",
    )
    parser.add_argument(
        "--theory-dir",
        type=Path,
        default=None,
        help="folder written by 'maxminq theory' (default: DIR/theory, or DIR itself if it "
        "is such a folder)",
    )
    parser.add_argument(
        "--reps",
        default="2000",
        help=f"bootstrap replicates for the IQM confidence intervals, 100..{MAX_REPS} "
        "(default 2000)",
    )
    add_published(parser)


def add_published(parser: argparse.ArgumentParser) -> None:
    """``--published DIR``, shared with ``maxminq reproduce``."""
    parser.add_argument(
        "--published",
        type=Path,
        default=None,
        metavar="DIR",
        help="also report finished 'maxminq train' runs from DIR (laid out as "
        "DIR/<env>/<run>/, e.g. docs/runs), in a section of their own: per environment "
        "the 'maxminq compare' table against DQN and their learning curves; they are not "
        "re-run and enter no claim (default: none)",
    )


def _whole(path: Path, option: str) -> None:
    """Raise UsageError if the table ``path`` (when present) is empty or cut short: its
    claims would otherwise be checked on the rows that happen to be left."""
    if path.is_file() and not path.read_bytes().endswith(b"\n"):  # writers end with a newline
        raise UsageError(f"{option}: {path} is empty or cut short; rerun 'maxminq theory'")


def refuse_lost_store(folder: Path) -> None:
    """A UsageError when ``folder`` holds a sweep's run tables (``tables/<run_id>/`` with
    their manifests) but no ``results.sqlite``: a lost or moved store, which the same sweep
    rebuilds from the tables that verify. ``report`` and ``status`` called such a folder
    one of 'maxminq train' runs and offered ``--published`` (or, with ``theory/`` beside
    it, reported the theory alone without a word of the runs)."""
    if (folder / "results.sqlite").is_file() or not any(
        (folder / "tables").glob("*/manifest.json")
    ):
        return
    from maxminq.analysis.report import read_meta

    command = read_meta(folder).get("command")
    again = (
        f"run '{command}' again"
        if isinstance(command, str)
        else f"run the same sweep (or 'maxminq reproduce') into {folder} again"
    )
    raise UsageError(
        f"DIR: {folder} holds a sweep's run tables (tables/) but no results.sqlite (lost or "
        f"moved): {again}; it takes the runs whose tables verify as done and runs only the "
        "others"
    )


def sweep_of(folder: Path) -> Path | None:
    """The sweep folder (with ``results.sqlite``) whose ``tables/`` ``folder`` is, or one of
    whose runs ``folder`` is (``tables/<run_id>``); None otherwise."""
    for sweep in (folder.parent, folder.parent.parent):
        tables = folder if sweep == folder.parent else folder.parent
        if tables.name == "tables" and (sweep / "results.sqlite").is_file():
            return sweep
    return None


def refuse_sweep_parts(folder: Path, command: str) -> None:
    """A UsageError naming the sweep when ``folder`` (DIR of ``command``: ``report``,
    ``status``) is a sweep's ``tables/`` or one run in it: they were told to hold
    'maxminq train' runs, with two runs to compare picked from any environments (compare
    refused them), or to be 'one maxminq train run, no sweep'."""
    sweep = sweep_of(folder)
    if sweep is None:
        return
    reads = f"'maxminq {command} {sweep}' reads the sweep"
    if folder.parent == sweep:
        raise UsageError(f"DIR: {folder} is the tables/ folder of the sweep in {sweep}; {reads}")
    deep = (folder / "runs.csv").is_file()  # a tabular run's figures are the sweep's
    raise UsageError(
        f"DIR: {folder} is one run of the sweep in {sweep}; {reads}"
        + (
            f", 'maxminq plot {folder}' draws the run, 'maxminq compare {folder}' scores it"
            if deep
            else ""
        )
    )


def refuse_other_outputs(folder: Path, command: str = "report") -> None:
    """A UsageError saying what to run instead when ``folder``, given as DIR with nothing
    for ``command`` (``report``, ``status``) to read, holds what another command wrote: the
    output of ``maxminq experiment`` (its figures are there already) or ``maxminq train``
    runs (``compare`` and ``plot`` read them), and for ``status`` the tables of ``maxminq
    theory`` (``report`` reads those). They got "holds neither results.sqlite ...;
    nothing to report" (status: "no results.sqlite here"), which named no command that
    reads them."""
    import json

    try:
        kind = json.loads((folder / "settings.json").read_text(encoding="utf-8"))["experiment"]
    except (OSError, ValueError, KeyError, TypeError):
        kind = None
    if kind in ("toy-mdp", "mountain-car"):
        from maxminq.commands.reproduce import run_shipped_command

        runs_it = run_shipped_command(kind.replace("-", "_"))
        raise UsageError(
            f"DIR: {folder} holds the output of 'maxminq experiment {kind}', whose figures "
            f"are drawn there already; {command} reads the folder of 'maxminq sweep' or "
            f"'maxminq reproduce' ('{runs_it}' runs it into one)"
        )
    refuse_lost_store(folder)
    if command != "report" and (folder / "bias.csv").is_file():
        raise UsageError(
            f"DIR: {folder} holds the tables of 'maxminq theory', no sweep's runs; 'maxminq "
            f"report {folder}' reads them"
        )
    flat = sorted(p.parent for p in folder.glob("*/runs.csv"))
    runs = flat or sorted(p.parent for p in folder.glob("*/*/runs.csv"))
    if runs:
        parents = [p.parent for p in runs]  # the example: two runs of one environment
        most = max(parents, key=parents.count)
        shown = " ".join(str(p) for p in [p for p in runs if p.parent == most][:2])
        published = (
            ""
            if flat  # --published takes DIR/<env>/<run>/ only
            else f"; 'maxminq report RESULTS --published {folder}' adds them to a report"
        )
        raise UsageError(
            f"DIR: {folder} holds 'maxminq train' runs, not a results folder: 'maxminq "
            f"compare' and 'maxminq plot' read them (e.g. 'maxminq compare {shown}')" + published
        )


def validate(args: argparse.Namespace) -> Path:
    """Check the options and the input files before any work; returns the theory folder."""
    from maxminq.analysis.report import check_store, published_runs

    if not args.dir.is_dir():
        raise UsageError(f"DIR: {args.dir} is not a folder (expected a results folder)")
    theory = args.theory_dir if args.theory_dir is not None else args.dir / "theory"
    option = "--theory-dir" if args.theory_dir is not None else "DIR"
    if args.theory_dir is not None and not theory.is_dir():
        raise UsageError(f"--theory-dir: {theory} is not a folder")
    if args.theory_dir is not None and not (theory / "bias.csv").is_file():
        raise UsageError(f"--theory-dir: {theory} holds no bias.csv (from 'maxminq theory')")
    if args.theory_dir is None and not theory.is_dir() and (args.dir / "bias.csv").is_file():
        theory = args.dir  # 'maxminq report OUT' on the folder 'maxminq theory --out OUT' wrote
    refuse_lost_store(args.dir)  # before the theory alone is reported without the runs
    nothing = not (args.dir / "results.sqlite").is_file() and not (theory / "bias.csv").is_file()
    if nothing:
        refuse_sweep_parts(args.dir, "report")
    if nothing and (args.dir / "runs.csv").is_file():
        raise UsageError(
            f"DIR: {args.dir} is the folder of one 'maxminq train' run; its curves are drawn "
            f"by 'maxminq plot {args.dir}' (report reads the folder of a sweep or reproduce)"
        )
    if nothing:
        refuse_other_outputs(args.dir)
        raise UsageError(
            f"DIR: {args.dir} holds neither results.sqlite (from 'maxminq sweep') nor "
            "theory/bias.csv (from 'maxminq theory'); nothing to report"
        )
    store = args.dir / "results.sqlite"
    if store.is_file() and store.stat().st_size == 0:  # read as none, the report was of nothing
        theory_too = (theory / "bias.csv").is_file()
        rest = "; or move it aside to report the theory alone" if theory_too else ""
        raise UsageError(
            f"DIR: {store} is empty (a sweep stopped before setting it up, or a lost "
            f"registry): no runs to report; run the sweep into {args.dir} again (the runs "
            f"whose tables verify are kept, the others run again){rest}"
        )
    for name in ("bias.csv", "variance.csv"):
        _whole(theory / name, option)
    from maxminq.experiments.store import StoreError

    try:
        check_store(args.dir)
    except StoreError as err:  # named like 'maxminq status DIR' names it
        raise UsageError(f"DIR: {err}") from None
    try:  # parsed here, not by argparse, so that a bad value is one line like the others
        reps = int(str(args.reps))
    except ValueError:
        reps = None
    if reps is None or not 100 <= reps <= MAX_REPS:
        raise UsageError(f"--reps: expected an integer in 100..{MAX_REPS}, got {args.reps!r}")
    args.reps = reps
    args.published_runs = None if args.published is None else published_runs(args.published)
    _check_outputs(args.dir)
    return theory


def _check_outputs(folder: Path) -> None:
    """UsageError, before any work, when what the report writes into ``folder`` cannot be
    written: ``figures/`` or ``summary/`` a file (each figure was 'not drawn' in the report,
    with exit 0), ``report.md`` or ``report.html`` a folder (a bare 'Is a directory' after
    the figures and tables were written)."""
    from maxminq.cli import check_out_folder

    for name in ("figures", "summary"):
        check_out_folder(folder / name, "DIR")
    for name in ("report.md", "report.html"):
        if (folder / name).is_dir():
            raise UsageError(f"DIR: {folder / name} is a folder; the report writes a file there")


def caution_lines(report: Report) -> list[str]:
    """The cautions of a written report that the command prints after it (claims restricted
    to a setting's default, runs without results, finished runs failing verification, an
    unfinished reproduction), each one line: shared by ``maxminq report`` and ``maxminq
    reproduce``, so that neither keeps them to report.md alone."""
    lines = [f"caution: {line}" for line in report.restricted]
    if report.short:  # a study's own few-thousand-step runs: claims of those, not of Fig. 4
        lines.append(
            "caution, deep runs shorter than the paper's (the deep claims describe runs of "
            f"this length): {'; '.join(report.short)}"
        )
    if report.outside:
        lines.append(
            "note, environments outside the paper (the deep checks carry its statements over "
            f"to them): {', '.join(report.outside)}"
        )
    if report.without_results:
        counts = ", ".join(f"{n} {status}" for status, n in report.without_results.items())
        lines.append(f"caution, runs without results (not in this report): {counts}")
    if report.unreadable:
        ids = ", ".join(report.unreadable)
        lines.append(f"caution, finished runs failing verification (not in this report): {ids}")
    if report.unfinished:
        lines.append(
            "caution: the 'maxminq reproduce' of this folder did not finish; its report "
            "lacks the runs it did not complete (rerun the command to complete them)"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    """Write DIR/report.html, DIR/report.md, DIR/figures/ and DIR/summary/."""
    theory = validate(args)
    from maxminq.analysis.report import build_report

    report = build_report(
        args.dir, theory_dir=theory, reps=args.reps, published=args.published_runs
    )
    print(report.html)
    print(report.markdown)
    for claim in report.claims:
        # why an undecided one is (no runs of an algorithm, too few seeds), as report.md
        # says: a sweep of one's own that left out Double Q is not told to run more seeds
        why = f" ({claim.evidence})" if claim.undecided is not None and claim.evidence else ""
        print(f"  {claim.status:<17} {claim.text}{why}")
    for line in report.nonfinite:  # 'maxminq sweep' and 'reproduce' list them as they run
        print(f"  note, {line}")
    for line in report.published:
        print(f"  published (not re-run, no claims): {line}")
    if report.unchecked:
        print(f"  not checked (no data in this folder): {', '.join(report.unchecked)}")
    for line in report.pooled_alike:
        print(f"  caution, runs of different experiments pooled: {line}")
    for line in caution_lines(report):
        print(f"  {line}")
    return 0
