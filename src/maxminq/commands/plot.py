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
    parser.add_argument(
        "--panels",
        default="return,bias,q",
        help="comma-separated panels, from: return, bias (mean of estimate - MC return), "
        "bias_abs (its mean absolute value), bias_std (its spread), q (mean Q(s, a) of the "
        "updated net on replayed batches), loss; default return,bias,q",
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


def run_labels(cfgs: list[dict], folders: list[Path]) -> list[str]:
    """Legend labels, e.g. ``Maxmin DQN (N=4)``: with runs on several environments each label
    names its environment; runs that still share a label get their step sizes if those
    differ, then their folder names (e.g. two sets of seeds of one setting)."""
    from maxminq.analysis import style

    labels = [style.label(c["agent"], c["n"]) for c in cfgs]
    if len({c["env_id"] for c in cfgs}) > 1:
        labels = [f"{label}, {c['env_id']}" for label, c in zip(labels, cfgs, strict=True)]
    for text in (lambda i: f"lr {cfgs[i]['lr']:g}", lambda i: Path(folders[i]).resolve().name):
        shared = [[j for j, other in enumerate(labels) if other == label] for label in labels]
        labels = [
            f"{label}, {text(i)}" if len({text(j) for j in same}) > 1 else label
            for i, (label, same) in enumerate(zip(labels, shared, strict=True))
        ]
    return labels


def _panels(text: str) -> list[str]:
    from maxminq.analysis.figures import TRAINING_PANELS

    panels = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in panels if p not in TRAINING_PANELS]
    if bad or not panels:
        raise UsageError(
            f"--panels: expected names from {', '.join(TRAINING_PANELS)}, got {text!r}"
        )
    return panels


def run(args: argparse.Namespace) -> int:
    """Check every folder first, then draw one figure."""
    from maxminq.analysis.figures import fig_training_runs

    panels = _panels(args.panels)
    from maxminq.deep.train import read_tables

    cfgs = [_settings(folder) for folder in args.runs]
    labels = run_labels(cfgs, args.runs)
    runs = [
        (label, cfg["agent"], read_tables(folder))
        for label, cfg, folder in zip(labels, cfgs, args.runs, strict=True)
    ]
    default = args.runs[0] / "curves" if len(runs) == 1 else Path("compare")
    out = (default if args.out is None else args.out).resolve()
    if out.is_dir():  # "--out figs/": the default name inside it
        out = out / default.name
    if out.suffix.lower() in _OTHER_FORMATS:
        raise UsageError(f"--out: figures are written as .png and .svg, not {out.suffix}")
    if out.suffix in (".png", ".svg"):  # "a.png" -> a.png and a.svg; "run.v2" stays whole
        out = out.with_suffix("")
    out.parent.mkdir(parents=True, exist_ok=True)
    title = " vs ".join(dict.fromkeys(cfg["env_id"] for cfg in cfgs))
    seeds = sorted({len(cfg["seeds"]) for cfg in cfgs})
    title += f", {'/'.join(map(str, seeds))} seed(s) per run"
    figure = fig_training_runs(runs, title, out.parent, out.name, panels=panels)
    if figure is None:
        raise UsageError("RUN_DIR: no episode finished in these runs; nothing to plot")
    print(f"figure written to {figure.png}")
    return 0
