"""``maxminq plot RUN_DIR [RUN_DIR ...]``: the training curves of finished deep runs (folders
of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``) in one figure (return, measured
estimation bias, Q estimates), one colour per run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from maxminq.errors import UsageError

_OTHER_FORMATS = (".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".gif")


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
        type=Path,
        default=None,
        help="figure path, with or without .png; .png and .svg are written; an existing "
        "folder gets the default name inside it (default: RUN_DIR/curves for one run, "
        "./compare for several)",
    )


def _settings(folder: Path) -> dict:
    """The run's settings: ``config.json`` of a ``maxminq train`` folder, or the settings in
    ``manifest.json`` of a deep run in a sweep's ``OUT/tables/<run_id>``."""
    if (folder / "runs.csv").is_file():
        if (folder / "config.json").is_file():
            return json.loads((folder / "config.json").read_text())
        if (folder / "manifest.json").is_file():
            manifest = json.loads((folder / "manifest.json").read_text())
            if manifest.get("kind") == "deep":
                return manifest["settings"]
    raise UsageError(
        f"RUN_DIR: {folder} holds no finished deep run (runs.csv with the config.json of "
        "'maxminq train' or the manifest.json of a sweep's tables/<run_id>)"
    )


def run(args: argparse.Namespace) -> int:
    """Check every folder first, then draw one figure."""
    from maxminq.analysis.figures import fig_training_runs, run_label
    from maxminq.deep.train import read_tables

    runs, envs = [], []
    for folder in args.runs:
        cfg = _settings(folder)
        runs.append([run_label(cfg["agent"], cfg["n"]), cfg["agent"], read_tables(folder), cfg])
        envs.append(cfg["env_id"])
    if len({r[0] for r in runs}) < len(runs):  # same agent and N twice: tell them apart
        for r in runs:
            r[0] = run_label(r[1], r[3]["n"], r[3]["lr"])
    if len({r[0] for r in runs}) < len(runs):  # same lr too (other env, seeds): the folders
        for r, folder in zip(runs, args.runs, strict=True):
            r[0] = f"{r[0]} ({folder.resolve().name})"
    default = args.runs[0] / "curves" if len(runs) == 1 else Path("compare")
    out = (default if args.out is None else args.out).resolve()
    if out.is_dir():  # "--out figs/": the default name inside it
        out = out / default.name
    if out.suffix.lower() in _OTHER_FORMATS:
        raise UsageError(f"--out: figures are written as .png and .svg, not {out.suffix}")
    if out.suffix in (".png", ".svg"):  # "a.png" -> a.png and a.svg; "run.v2" stays whole
        out = out.with_suffix("")
    out.parent.mkdir(parents=True, exist_ok=True)
    title = " vs ".join(dict.fromkeys(envs))
    seeds = sorted({len(r[3]["seeds"]) for r in runs})
    title += f", {'/'.join(map(str, seeds))} seed(s) per run"
    figure = fig_training_runs([(r[0], r[1], r[2]) for r in runs], title, out.parent, out.name)
    if figure is None:
        raise UsageError("RUN_DIR: no episode finished in these runs; nothing to plot")
    print(f"figure written to {figure.png}")
    return 0
