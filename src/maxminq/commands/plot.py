"""``maxminq plot RUN_DIR [RUN_DIR ...]``: the training curves of finished deep runs (folders
of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``) in one figure (return, measured
estimation bias, Q estimates), one colour per run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from maxminq.analysis.runs import load_runs, require_numeric_columns, run_labels
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
        help="comma-separated panels, from: return, eval (mean return per evaluation during "
        "training, per seed; runs trained with --eval-every), bias (mean of estimate - MC "
        "return), bias_abs (its mean absolute value), bias_std (its spread), q (mean Q(s, a) "
        "of the updated net on replayed batches), loss, bias_dist (median and 10-90%% "
        "quantiles of the bias per probe, seeds pooled; runs trained with --save-probes); "
        "default return,bias,q",
    )


def _check_columns(folder: Path, tables: dict, panels: list[str]) -> None:
    """Raise UsageError unless every table a panel draws from has the panel's column and
    ``seed`` and ``step``, as numbers (a table of another program, or edited by hand);
    ``bias_dist`` needs the probes (``--save-probes``) and the metrics steps binning them,
    ``eval`` the evaluations during training (``--eval-every``)."""
    from maxminq.analysis.figures import TRAINING_PANELS

    if "bias_dist" in panels and "probes" not in tables:
        raise UsageError(
            f"--panels: bias_dist draws each probe's bias, and {folder} has no probes.csv "
            "(trained without --save-probes): train it with --save-probes (a sweep: "
            "save_probes: true), or leave bias_dist out"
        )
    if "eval" in panels and "evals" not in tables:
        raise UsageError(
            f"--panels: eval draws the evaluations during training, and {folder} has no "
            "evals.csv (trained without --eval-every): train it with --eval-every K (a "
            "sweep: eval_every: K), or leave eval out"
        )
    needs: dict[str, list[str]] = {}
    for p in panels:
        table, column = TRAINING_PANELS[p][:2]
        if table == "probes":
            needs.setdefault("metrics", ["seed", "step"])
            needs["probes"] = ["seed", "end_step", column]
        else:
            needs[table] = list(dict.fromkeys([*needs.get(table, ["seed", "step"]), column]))
    require_numeric_columns(folder, tables, needs)


def _panels(text: str) -> list[str]:
    from maxminq.analysis.figures import TRAINING_PANELS

    panels = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in panels if p not in TRAINING_PANELS]
    if bad or not panels:
        raise UsageError(
            f"--panels: expected names from {', '.join(TRAINING_PANELS)}, got {text!r}"
        )
    twice = sorted({p for p in panels if panels.count(p) > 1})
    if twice:
        raise UsageError(f"--panels: {', '.join(twice)} given twice; give each panel once")
    return panels


def _warn_if_no_bias(folders: list[Path], tables: list[dict], panels: list[str]) -> None:
    """One warning line (stderr) naming the runs whose bias columns hold no number (every
    probe dropped, e.g. MountainCar-v0's cut episodes), or for ``bias_dist`` whose probes
    table has no row to draw, when a bias panel is drawn: the panel says so too, but a run
    missing from a comparison is easy to overlook."""
    import numpy as np

    from maxminq.analysis.figures import BIAS_COLUMNS, NO_BIAS_WHY, TRAINING_PANELS, probe_intervals

    columns = [TRAINING_PANELS[p][1] for p in panels if TRAINING_PANELS[p][1] in BIAS_COLUMNS]
    dist = "bias_dist" in panels
    if not columns and not dist:
        return

    def none(t: dict) -> bool:
        if columns and not np.isfinite(t["metrics"][columns].to_numpy(dtype=float)).any():
            return True
        return dist and probe_intervals(t["probes"], t["metrics"]).empty

    empty = [str(folder) for folder, t in zip(folders, tables, strict=True) if none(t)]
    if empty:
        missing = (
            "the bias panel is empty"
            if len(empty) == len(folders)
            else f"{'its' if len(empty) == 1 else 'their'} curves are missing from the bias panel"
        )
        print(
            f"maxminq plot: warning: no bias measured in {', '.join(empty)}: no probe was scored "
            f"({NO_BIAS_WHY}); {missing}",
            file=sys.stderr,
        )


def figure_title(cfgs: list[dict], labels: list[str], tables: list[dict]) -> str:
    """One run (no legend): what ``maxminq train`` titles its figure, agent and N included;
    several: their environments and seeds per run (the legend names each run)."""
    from maxminq.analysis.figures import run_title

    if len(cfgs) == 1:
        return run_title(labels[0], cfgs[0]["env_id"], len(cfgs[0]["seeds"]), tables[0]["tests"])
    title = " vs ".join(dict.fromkeys(cfg["env_id"] for cfg in cfgs))
    seeds = sorted({len(cfg["seeds"]) for cfg in cfgs})
    return title + f", {'/'.join(map(str, seeds))} seed{'s' * (seeds != [1])} per run"


def run(args: argparse.Namespace) -> int:
    """Check every folder first, then draw one figure."""
    from maxminq.analysis.figures import fig_training_runs
    from maxminq.cli import check_out_folder

    panels = _panels(args.panels)
    cfgs, tables = load_runs(args.runs)
    for folder, t in zip(args.runs, tables, strict=True):
        _check_columns(folder, t, panels)
    labels = run_labels(cfgs, args.runs)
    runs = [(label, cfg["agent"], t) for label, cfg, t in zip(labels, cfgs, tables, strict=True)]
    default = args.runs[0] / "curves" if len(runs) == 1 else Path("compare")
    out = (default if args.out is None else args.out).resolve()
    if out.is_dir():  # "--out figs/": the default name inside it
        out = out / default.name
    if out.suffix.lower() in _OTHER_FORMATS:
        raise UsageError(f"--out: figures are written as .png and .svg, not {out.suffix}")
    if out.suffix.lower() in (".png", ".svg"):  # "a.png" -> a.png, a.svg; "run.v2" stays whole
        out = out.with_suffix("")
    check_out_folder(out.parent, "--out")
    for fmt in (".png", ".svg"):
        if out.with_name(out.name + fmt).is_dir():
            raise UsageError(f"--out: {out.name + fmt} in {out.parent} is a folder, not a figure")
    title = figure_title(cfgs, labels, tables)
    steps = max((c["steps"] for c in cfgs if isinstance(c.get("steps"), int)), default=None)
    figure = fig_training_runs(runs, title, out.parent, out.name, panels=panels, steps=steps)
    if figure is None:
        raise UsageError("RUN_DIR: no episode finished in these runs; nothing to plot")
    _warn_if_no_bias(args.runs, tables, panels)
    print(f"figure written to {figure.png}")
    return 0
