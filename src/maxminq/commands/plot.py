"""``maxminq plot RUN_DIR [RUN_DIR ...]``: the training curves of finished deep runs (folders
of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``) in one figure (return, measured
estimation bias, Q estimates), one colour per run."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxminq.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

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


# What the labels and the title use, with the type each must have.
_SETTINGS = {
    "env_id": lambda v: isinstance(v, str),
    "agent": lambda v: isinstance(v, str),
    "n": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
    "lr": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "seeds": lambda v: isinstance(v, list) and all(isinstance(s, int) for s in v),
}


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:  # ValueError: bad JSON or not UTF-8
        raise UsageError(f"RUN_DIR: {path} is unreadable ({' '.join(str(err).split())})") from None


def _settings(folder: Path) -> dict:
    """The run's settings: ``config.json`` of a ``maxminq train`` folder, or the settings in
    ``manifest.json`` of a deep run in a sweep's ``OUT/tables/<run_id>``."""
    settings: Any = None
    if (folder / "runs.csv").is_file():
        if (folder / "config.json").is_file():
            path = folder / "config.json"
            settings = _json(path)
        elif (folder / "manifest.json").is_file():
            path = folder / "manifest.json"
            manifest = _json(path)
            if isinstance(manifest, dict) and manifest.get("kind") == "deep":
                settings = manifest.get("settings")
    if settings is None and (folder / "results.sqlite").is_file():
        raise UsageError(
            f"RUN_DIR: {folder} is a sweep folder; give the folders of its deep runs, "
            f"{folder}/tables/<run_id> ('maxminq status {folder} --runs' lists them)"
        )
    if settings is None:
        raise UsageError(
            f"RUN_DIR: {folder} holds no finished deep run (runs.csv with the config.json of "
            "'maxminq train' or the manifest.json of a sweep's tables/<run_id>)"
        )
    missing = [k for k in _SETTINGS if not isinstance(settings, dict) or k not in settings]
    if missing:
        raise UsageError(f"RUN_DIR: {path} lacks the run's {', '.join(missing)}")
    bad = [k for k, fits in _SETTINGS.items() if not fits(settings[k])]
    if bad:
        raise UsageError(
            f"RUN_DIR: {path} is damaged: "
            + ", ".join(f"{k} = {json.dumps(settings[k])}" for k in bad)
        )
    return settings


def load_runs(folders: list[Path]) -> tuple[list[dict], list[dict[str, pd.DataFrame]]]:
    """The settings (:func:`_settings`) of every folder, then the tables of every folder
    (``read_tables``, checked whole): what ``maxminq plot`` and ``maxminq compare`` read of
    their RUN_DIRs, each bad folder a one-line UsageError starting ``RUN_DIR:``."""
    from maxminq.deep.train import read_tables

    cfgs = [_settings(folder) for folder in folders]
    return cfgs, [read_tables(folder, "RUN_DIR") for folder in folders]


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


def require_numeric_columns(folder: Path, tables: dict, needs: Mapping[str, Sequence[str]]) -> None:
    """Raise UsageError naming the first of ``needs`` (table -> columns) missing from a run's
    ``tables`` or holding text (a table of another program, or edited by hand)."""
    import pandas as pd

    for table, columns in needs.items():
        df = tables[table]
        for col in columns:
            if col not in df.columns:
                raise UsageError(f"RUN_DIR: {folder}/{table}.csv has no column {col!r}")
            if len(df) and not pd.api.types.is_numeric_dtype(df[col]):  # header only: object
                raise UsageError(f"RUN_DIR: {folder}/{table}.csv: column {col!r} holds text")


def _value(v: object) -> str:
    """A setting's value in a label: ``-5.0`` as ``-5``, ``2000000`` as ``2,000,000``, a
    string bare, others as JSON."""
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10_000:
        return f"{v:,}"
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


# Settings a label never names: the label's own (agent, N, env), those with their own turn
# in _differences, and the seeds (two sets of seeds of one setting: told by folder).
_NOT_NAMED = {"agent", "n", "env_id", "lr", "hidden", "env_kwargs", "seeds"}


def _differences(cfgs: list[dict]) -> list:
    """What may tell runs of one agent and N apart, in the order labels name it, each a
    function of a run's settings giving its text ('' for nothing to add): the step size,
    the hidden layers (left out of config.json at the paper's), each environment keyword
    (e.g. ``gravity=-5``; a run without it says nothing), then any other setting (e.g.
    ``gamma 0.9``)."""
    from maxminq.envs.registry import NETWORK_HIDDEN

    def hidden(c: dict) -> str:
        sizes = c.get("hidden") or NETWORK_HIDDEN.get(c.get("network", ""), ())
        return "hidden " + ",".join(map(str, sizes)) if sizes else ""

    def keyword(name: str):
        def text(c: dict) -> str:
            kwargs = c.get("env_kwargs") or {}
            return f"{name}={_value(kwargs[name])}" if name in kwargs else ""

        return text

    def setting(name: str):
        return lambda c: f"{name} {_value(c[name])}" if name in c else ""

    names = dict.fromkeys(k for c in cfgs for k in c.get("env_kwargs") or {})
    # What is measured after settings that change training (bias_every follows steps).
    late = {
        "bias_every",
        "bias_probe_every",
        "eval_episodes",
        "eval_eps",
        "eval_every",
        "eval_every_episodes",
    }
    others = sorted({k for c in cfgs for k in c} - _NOT_NAMED, key=lambda k: (k in late, k))
    return [lambda c: f"lr {c['lr']:g}", hidden, *map(keyword, names), *map(setting, others)]


def run_labels(cfgs: list[dict], folders: list[Path]) -> list[str]:
    """Legend labels, e.g. ``Maxmin DQN (N=4)``: with runs on several environments each label
    names its environment; runs that still share a label get what differs between them, in
    turn: their step sizes, hidden layers, environment keywords (``--env-kwargs``), other
    settings (``gamma 0.9``), then their folder names (e.g. two sets of seeds of one
    setting)."""
    from maxminq.analysis import style

    labels = [style.label(c["agent"], c["n"]) for c in cfgs]
    if len({c["env_id"] for c in cfgs}) > 1:
        labels = [f"{label}, {c['env_id']}" for label, c in zip(labels, cfgs, strict=True)]
    folder = [Path(f).resolve().name for f in folders]
    texts = [[text(c) for c in cfgs] for text in _differences(cfgs)] + [folder]
    for text in texts:
        shared = [[j for j, other in enumerate(labels) if other == label] for label in labels]
        labels = [
            f"{label}, {text[i]}" if text[i] and len({text[j] for j in same}) > 1 else label
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
