"""Reading finished deep runs: the settings and tables of run folders (written by ``maxminq
train``, or a sweep's ``OUT/tables/<run_id>``) and the labels that tell them apart, shared by
``maxminq plot``, ``maxminq compare`` and :func:`maxminq.analysis.compare.compare_runs`; and
:func:`plot_runs`, ``maxminq plot`` from Python::

    from maxminq.analysis import compare_runs, plot_runs

    plot_runs(["runs/lunar-maxmin", "runs/lunar-dqn"], "runs/lunar.png", panels=["return", "bias"])

A bad folder is a one-line :class:`~maxminq.errors.UsageError` starting ``RUN_DIR:``."""

from __future__ import annotations

import json
import os
import shlex
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxminq.errors import MaxminqWarning, UsageError, closest

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

# Image formats asked for by an --out suffix that figures are not written in.
_OTHER_FORMATS = (".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".gif")

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


def run_settings(folder: Path) -> dict:
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


def not_a_run(folder: Path, command: str) -> str | None:
    """Why ``folder``, given as RUN_DIR to ``maxminq COMMAND``, cannot be a run folder (it
    does not exist, is a file, holds the output of ``maxminq experiment`` or ``maxminq
    theory``, a tabular run of a sweep, a run that has not finished training, or is a run's
    ``checkpoint/``, or holds only run folders, in it or in its subfolders), for a one-line
    error that says what to give instead; None when it may be one (the readers then check
    its files)."""
    from maxminq.analysis.style import count

    if not folder.exists():
        return f"{folder} does not exist"
    if not folder.is_dir():
        return f"{folder} is a file; give the folder 'maxminq train --out' wrote"
    if (folder / "runs.csv").is_file() or (folder / "results.sqlite").is_file():
        return None  # a run, or a sweep folder (the readers point to its tables/<run_id>)
    what = "the runs of 'maxminq train' (deep agents)"
    kind = _field(folder / "settings.json", "experiment")
    if kind is not None:
        return (
            f"{folder} holds the output of 'maxminq experiment {kind}' (tabular runs, its "
            f"figures already drawn there); 'maxminq {command}' reads {what}"
        )
    if (folder / "bias.csv").is_file() and (folder / "variance.csv").is_file():
        return f"{folder} holds the output of 'maxminq theory'; 'maxminq {command}' reads {what}"
    kind = _field(folder / "manifest.json", "kind")
    if kind is not None and kind != "deep":  # a deep run's tables have runs.csv
        sweep = folder.parent.parent if folder.parent.name == "tables" else Path("SWEEP_DIR")
        return (
            f"{folder} holds a sweep's {kind} run, not a deep agent's ('maxminq report "
            f"{sweep}' draws the sweep's figures); 'maxminq {command}' reads {what}"
        )
    if has_train_config(folder):  # written as a run starts; runs.csv as it ends
        in_sweep = folder.parent.name == "work" and (folder.parents[1] / "results.sqlite").is_file()
        again = "'maxminq sweep' command" if in_sweep else "'maxminq train' command with --resume"
        return (
            f"{folder} holds a run that has not finished training (no runs.csv yet: it is "
            f"training, or was stopped); the same {again} continues a stopped one (from its "
            "checkpoint, if it has one)"
        )
    if folder.name == "checkpoint" and (folder / "state.pt").is_file():
        return f"{folder} is a run's checkpoint; give the run's folder, {folder.parent}"
    # Run folders inside it, or one level further down (docs/runs/<env>/<agent>).
    inside = sorted(p.parent for p in folder.glob("*/runs.csv") if p.is_file())
    inside = inside or sorted(p.parent for p in folder.glob("*/*/runs.csv") if p.is_file())
    if inside:
        shown = " ".join(str(p) for p in inside[:4]) + " ..." * (len(inside) > 4)
        held = f"{folder} holds no run itself but {count(len(inside), 'run folder')}: {shown}"
        return f"{held}; {_give_runs(folder, inside, command)}"
    return None


def _give_runs(folder: Path, inside: list[Path], command: str) -> str:
    """What to type instead of ``maxminq COMMAND folder`` when ``folder`` holds the run
    folders ``inside`` (one or two levels down): ``evaluate`` plays one run, so one of them;
    ``plot`` and ``compare`` take several, so them all, as a shell pattern when it matches
    exactly those folders (every folder at their depth is a run), else by name."""
    if command == "evaluate":
        return f"evaluate one of them, e.g. 'maxminq evaluate {shlex.quote(str(inside[0]))}'"
    depth = len(inside[0].relative_to(folder).parts)
    pattern = "/".join(["*"] * depth)
    level = [p for p in folder.glob(pattern) if p.is_dir() and not p.name.startswith(".")]
    if len(inside) > 4 and sorted(level) == inside:  # a pattern short of naming them all
        given = f"{shlex.quote(str(folder))}/{pattern}"
    else:
        given = " ".join(shlex.quote(str(p)) for p in inside[:4]) + " ..." * (len(inside) > 4)
    return f"give them as RUN_DIRs: 'maxminq {command} {given}'"


def has_train_config(folder: Path) -> bool:
    """Whether ``folder`` holds the ``config.json`` of a 'maxminq train' run (written as the
    run starts): one naming its ``env_id`` and ``agent``. Another program's config.json is
    no run of ours, stopped or finished (``not_a_run``, ``maxminq status``)."""
    return all(_field(folder / "config.json", key) for key in ("env_id", "agent"))


def _field(path: Path, key: str) -> str | None:
    """The text ``key`` of the JSON object in ``path``; None if the file is missing or
    unreadable, or the value is not a string."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def check_run_dirs(folders: Sequence[Path], command: str) -> None:
    """A one-line UsageError starting ``RUN_DIR:`` for the first folder that
    :func:`not_a_run` tells apart from a run folder (given to ``maxminq COMMAND``)."""
    for folder in folders:
        why = not_a_run(folder, command)
        if why is not None:
            raise UsageError(f"RUN_DIR: {why}")


def as_folders(folders: Iterable[str | Path] | str | Path) -> list[Path]:
    """The RUN_DIRs given to :func:`plot_runs` or ``compare_runs`` as paths (a list, or any
    iterable of them, e.g. a glob's generator): one folder (a ``str`` or path) is one run,
    not a sequence of one-letter folders (``"runs/a"`` was read as ``r``, ``u``, ... and a
    ``Path`` raised a TypeError). No folder at all is a UsageError (it read as "no episode
    finished" or a bad ``--baseline``), and so is a folder that is not a ``str`` or path
    (a TypeError naming nothing) or an empty ``str`` (the current folder, which the command
    line refuses as ``''``)."""
    if isinstance(folders, (str, os.PathLike)):
        folders = [folders]
    elif not isinstance(folders, Iterable) or isinstance(folders, bytes):
        raise UsageError(f"RUN_DIR: expected a run folder or a list of them, got {folders!r}")
    paths = [as_path(f, "RUN_DIR") for f in folders]  # any iterable: a glob's generator too
    if not paths:
        raise UsageError("RUN_DIR: give at least one run folder")
    return paths


def as_path(value: object, option: str) -> Path:
    """``value`` (a ``str`` or path) as a path, else a UsageError naming ``option``: a
    bytes path, None or a number raised a TypeError, and ``''`` meant the current folder."""
    if not isinstance(value, (str, os.PathLike)) or not isinstance(os.fspath(value), str):
        raise UsageError(f"{option}: expected a path (a str or pathlib.Path), got {value!r}")
    if os.fspath(value) == "":
        raise UsageError(f"{option}: expected a path, got an empty string")
    return Path(value)


def check_distinct(folders: Sequence[Path]) -> None:
    """Raise UsageError if a folder is given twice, also under another path (``runs/a`` and
    ``runs/../runs/a``): a run against itself prints identical rows and p = 1 in ``maxminq
    compare`` and draws every curve twice in ``maxminq plot``, which looks like a finding."""
    seen: dict[Path, Path] = {}  # resolved -> as first given
    for folder in folders:
        key = folder.resolve()
        if key in seen:  # by key: the same Path object may also come twice
            first = seen[key]
            also = f" (also as {first})" if str(first) != str(folder) else ""
            raise UsageError(f"RUN_DIR: {folder} is given twice{also}")
        seen[key] = folder


def load_runs(folders: list[Path]) -> tuple[list[dict], list[dict[str, pd.DataFrame]]]:
    """The settings (:func:`run_settings`) of every folder, then the tables of every folder
    (``read_tables``, checked whole): what ``maxminq plot`` and ``maxminq compare`` read of
    their RUN_DIRs, each bad folder (or one given twice, :func:`check_distinct`) a one-line
    UsageError starting ``RUN_DIR:``."""
    from maxminq.deep.run_folder import read_tables

    check_distinct(folders)
    cfgs = [run_settings(folder) for folder in folders]
    return cfgs, [read_tables(folder, "RUN_DIR") for folder in folders]


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
    """A setting's value in a label: a float as ``style.number_text`` gives it (``-5.0`` as
    ``-5``; all the digits it needs, ``0.12345678``: ``:g`` wrote 0.123457 for two gammas),
    an integer as ``style.integer`` gives it (``1,200``, ``2,000,000``), a string bare,
    others as JSON."""
    from maxminq.analysis import style

    if isinstance(v, float):
        return style.number_text(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return style.integer(v)
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


# Settings a label never names: the label's own (agent, N, env), those with their own turn
# in _differences, and the seeds (two sets of seeds of one setting: told by folder).
_NOT_NAMED = {"agent", "n", "env_id", "lr", "hidden", "env_kwargs", "seeds"}


def _differences(cfgs: list[dict]) -> list:
    """What may tell runs of one agent and N apart, in the order labels name it, each a
    function of a run's settings giving its text ('' for nothing to add): the step size,
    the hidden layers (left out of config.json at the paper's), each environment keyword
    (e.g. ``gravity=-5``; a run without it says nothing), then any other setting (e.g.
    ``gamma 0.9``; the optimizer's options in full, torch's defaults filled in)."""
    from maxminq.envs.registry import NETWORK_HIDDEN

    def hidden(c: dict) -> str:
        sizes = c.get("hidden") or NETWORK_HIDDEN.get(c.get("network", ""), ())
        return "hidden " + ",".join(map(str, sizes)) if sizes else ""

    def keyword(name: str) -> Callable[[dict], str]:
        def text(c: dict) -> str:
            kwargs = c.get("env_kwargs") or {}
            return f"{name}={_value(kwargs[name])}" if name in kwargs else ""

        return text

    def setting(name: str) -> Callable[[dict], str]:
        if name == "optimizer_kwargs":  # in full: what a saved {"alpha": 0.9} meant then
            from maxminq.deep.config import optimizer_options_in_full

            return lambda c: (
                f"{name} {_value(optimizer_options_in_full(c.get('optimizer'), c[name]))}"
                if name in c
                else ""
            )
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

    def lr(c: dict) -> str:
        return f"lr {_value(float(c['lr']))}"

    return [lr, hidden, *map(keyword, names), *map(setting, others)]


def colour_key(cfg: dict) -> str:
    """What colours a run in ``plot``'s figure (``style.colour_key`` of its config)."""
    from maxminq.analysis import style

    return style.colour_key(str(cfg["agent"]), cfg.get("operator"))


def param_order(cfgs: list[dict]) -> list[int]:
    """The order ``maxminq plot`` draws and lists runs in (positions in ``cfgs``): as given,
    except that runs of one G (``colour_key``) with several parameter settings
    (``op_kwargs``) take the places of that G's runs by value (``style.params_key``:
    beta 5, 20, 100, where a shell's ``runs/*`` gave them as 100, 20, 5)."""
    from maxminq.analysis import style

    order = list(range(len(cfgs)))
    for key in dict.fromkeys(colour_key(c) for c in cfgs):
        places = [i for i, c in enumerate(cfgs) if colour_key(c) == key]
        ranked = sorted(places, key=lambda i: style.params_key(cfgs[i].get("op_kwargs")))
        for place, i in zip(places, ranked, strict=True):
            order[place] = i
    return order


def param_shades(cfgs: list[dict]) -> list[tuple[int, int]]:
    """Per run, the place k of m of its parameters (``op_kwargs``, by value) among the
    settings of its G's runs (``colour_key``): a G run with several keeps its colour family,
    each setting a shade (``style.shade``). Runs of one colour that differ in N alone (Maxmin
    DQN at N = 2, 4, 6, 8, as the report's varying-N figure draws them) take a shade per N
    likewise, lighter to darker as N grows: one green told apart by dashes alone read as one
    tangle of noisy lines. (0, 1), its colour, for every other run."""
    from maxminq.analysis import style

    out = []
    for c in cfgs:
        same = [o for o in cfgs if colour_key(o) == colour_key(c)]
        keys = sorted({style.params_key(o.get("op_kwargs")) for o in same})
        sizes = sorted({o["n"] for o in same if isinstance(o.get("n"), int)})
        if len(keys) == 1 and len(sizes) > 1 and c.get("n") in sizes:
            out.append((sizes.index(c["n"]), len(sizes)))
        else:
            out.append((keys.index(style.params_key(c.get("op_kwargs"))), len(keys)))
    return out


def run_labels(cfgs: list[dict], folders: list[Path]) -> list[str]:
    """Legend labels, e.g. ``Maxmin DQN (N=4)``: with runs on several environments each label
    names its environment; runs that still share a label get what differs between them, in
    turn: their step sizes, hidden layers, environment keywords (``--env-kwargs``), other
    settings (``gamma 0.9``), then their folders (e.g. two sets of seeds of one setting),
    by name or, for folders of one name, by as many trailing parts as tell them apart."""
    from maxminq.analysis import style

    labels = [style.label(c["agent"], c["n"], c.get("operator"), c.get("op_kwargs")) for c in cfgs]
    if len({c["env_id"] for c in cfgs}) > 1:
        labels = [f"{label}, {c['env_id']}" for label, c in zip(labels, cfgs, strict=True)]
    # Folders of one name (runs/a/dqn, runs/b/dqn): as many trailing parts as tell them apart.
    paths = [Path(f).resolve().parts for f in folders]
    depth = next(
        k
        for k in range(1, max(map(len, paths), default=1) + 1)
        if len({p[-k:] for p in paths}) == len(set(paths))
    )
    folder = [str(Path(*p[-depth:])) for p in paths]
    texts = [[text(c) for c in cfgs] for text in _differences(cfgs)] + [folder]
    for text in texts:
        shared = [[j for j, other in enumerate(labels) if other == label] for label in labels]
        labels = [
            f"{label}, {text[i]}" if text[i] and len({text[j] for j in same}) > 1 else label
            for i, (label, same) in enumerate(zip(labels, shared, strict=True))
        ]
    return labels


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


def _panels(given: str | Iterable[str]) -> list[str]:
    """The panel names of ``--panels`` (comma-separated, or a list or other iterable of
    names), checked: known, each once."""
    from maxminq.analysis.figures import TRAINING_PANELS

    ok = isinstance(given, Iterable) and not isinstance(given, bytes)
    names = [given] if isinstance(given, str) else list(given) if ok else None
    if names is None or not all(isinstance(p, str) for p in names):
        raise UsageError(  # a number or a list of them: a TypeError in str.join
            f"--panels: expected names from {', '.join(TRAINING_PANELS)}, got {given!r}"
        )
    text = ",".join(names)
    panels = [p.strip() for p in text.split(",") if p.strip()]
    bad = [p for p in panels if p not in TRAINING_PANELS]
    if bad:  # each named, with a guess ('RETURN', 'biass' in 'return,biass' were not)
        guesses = [(p, closest(p, list(TRAINING_PANELS))) for p in bad]
        named = ", ".join(f"{p!r}" + (f" (did you mean {g}?)" if g else "") for p, g in guesses)
        raise UsageError(
            f"--panels: unknown {named}; expected names from {', '.join(TRAINING_PANELS)}"
        )
    if not panels:
        raise UsageError(
            f"--panels: expected names from {', '.join(TRAINING_PANELS)}, got {text!r}"
        )
    twice = sorted({p for p in panels if panels.count(p) > 1})
    if twice:
        raise UsageError(f"--panels: {', '.join(twice)} given twice; give each panel once")
    return panels


def _no_bias_text(folders: Sequence[Path], tables: list[dict], panels: list[str]) -> str:
    """The sentence naming the runs whose bias columns hold no number (every probe dropped,
    e.g. MountainCar-v0's cut episodes), or for ``bias_dist`` whose probes table has no row
    to draw, when a bias panel is drawn ('' if none): the panel says so too, but a run
    missing from a comparison is easy to overlook."""
    import numpy as np

    from maxminq.analysis.figures import BIAS_COLUMNS, NO_BIAS_WHY, TRAINING_PANELS, probe_intervals

    columns = [TRAINING_PANELS[p][1] for p in panels if TRAINING_PANELS[p][1] in BIAS_COLUMNS]
    dist = "bias_dist" in panels
    if not columns and not dist:
        return ""

    def none(t: dict) -> bool:
        if columns and not np.isfinite(t["metrics"][columns].to_numpy(dtype=float)).any():
            return True
        return dist and probe_intervals(t["probes"], t["metrics"]).empty

    empty = [str(folder) for folder, t in zip(folders, tables, strict=True) if none(t)]
    if not empty:
        return ""
    missing = (
        "the bias panel is empty"
        if len(empty) == len(folders)
        else f"{'its' if len(empty) == 1 else 'their'} curves are missing from the bias panel"
    )
    return f"no bias measured in {', '.join(empty)}: no probe was scored ({NO_BIAS_WHY}); {missing}"


def figure_title(cfgs: list[dict], labels: list[str], tables: list[dict]) -> str:
    """One run (no legend): what ``maxminq train`` titles its figure, agent and N included;
    several: their environments and seeds per run (the legend names each run)."""
    from maxminq.analysis.figures import run_title

    if len(cfgs) == 1:
        return run_title(labels[0], cfgs[0]["env_id"], len(cfgs[0]["seeds"]), tables[0]["tests"])
    title = " vs ".join(dict.fromkeys(cfg["env_id"] for cfg in cfgs))
    seeds = sorted({len(cfg["seeds"]) for cfg in cfgs})
    return title + f", {'/'.join(map(str, seeds))} seed{'s' * (seeds != [1])} per run"


def _diverged_note(runs: pd.DataFrame) -> str:
    """`` (1 of 4 seeds diverged)`` for a run's ``runs`` table with diverged seeds, else ''
    (a diverged seed's curves stop, or hold the return it reached, which looks like a seed
    that learned nothing more; ``(1 of 1 seed diverged)`` for a run of one seed)."""
    from maxminq.analysis.style import count

    if "status" not in runs.columns or runs.empty:
        return ""
    gone = int((runs["status"] == "diverged").sum())
    return f" ({gone} of {count(len(runs), 'seed')} diverged)" if gone else ""


class PlotWarning(MaxminqWarning):
    """A run drawn by :func:`plot_runs` is missing from a panel (no bias measured in it)."""


class FigurePaths(list[Path]):
    """What :func:`plot_runs` returns: the files it wrote, ``[<out>.png, <out>.svg]``, a
    list of paths as before, that also carries the figure drawn, ``.figure`` (a matplotlib
    ``Figure``, made without pyplot: change it, ``.savefig`` it in another format, or let
    a notebook show it), and shows as its PNG where IPython displays it (a notebook cell
    ending in ``plot_runs(...)``; ``print`` and ``python -i`` give the paths)."""

    def __init__(self, paths: Iterable[Path] = (), figure: Figure | None = None) -> None:
        super().__init__(paths)
        self.figure = figure

    def _repr_png_(self) -> bytes | None:
        """The written PNG's bytes, for IPython's display (None, the paths' text, where the
        file is gone)."""
        png = next((p for p in self if Path(p).suffix == ".png"), None)
        try:
            return None if png is None else Path(png).read_bytes()
        except OSError:
            return None


def plot_runs(
    folders: Iterable[str | Path] | str | Path,
    out: str | Path | None = None,
    *,
    panels: str | Iterable[str] | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
) -> FigurePaths:
    """Draw the training curves of finished deep runs (folders of ``maxminq train``, or a
    sweep's ``OUT/tables/<run_id>``; one folder alone may be given as a ``str`` or path) in
    one figure, one colour per run (runs of one G with several ``op_kwargs``: shades of its
    colour, in the places of its runs by value, :func:`param_order`), as ``maxminq plot
    FOLDER ... --out OUT --panels PANELS`` does (the command calls this); returns the
    written files, ``[<out>.png, <out>.svg]``, as a :class:`FigurePaths`: a list of the two
    paths that also holds the figure, ``.figure`` (a matplotlib ``Figure``), and that a
    notebook shows as the PNG (a cell ending in ``plot_runs(...)`` draws it; no
    ``IPython.display.Image`` needed).

    ``out``: the figure's path, with or without ``.png``; an existing folder, or a path
    ending in ``/`` (a folder, created if needed), gets the default name inside it
    (default: ``FOLDER/curves`` for one run, ``./compare`` for several). ``panels``: names
    from ``figures.TRAINING_PANELS`` (a list, or the command's
    comma-separated text; default ``figures.DEFAULT_PANELS``: return, bias, q). ``labels``:
    the legend's names of the runs (default: what tells them apart, ``run_labels``, and
    how many seeds diverged, if any); ``title``: the figure's (default: the command's). Bad
    input is the UsageError the command prints (naming its option: ``--out``, ``--panels``,
    ``RUN_DIR``); a run without a measured bias in a bias panel is a :class:`PlotWarning`.
    """
    from maxminq.analysis.figures import DEFAULT_PANELS, save_figure, training_runs_figure
    from maxminq.cli import check_out_folder

    given = as_folders(folders)
    check_run_dirs(given, "plot")  # what the folder is, when it is no run (the command's)
    chosen = _panels(DEFAULT_PANELS if panels is None else panels)
    cfgs, tables = load_runs(given)
    # a G's parameter settings by value (beta 5, 20, 100), the other runs as given
    order = param_order(cfgs)
    paths = [given[i] for i in order]
    cfgs, tables = [cfgs[i] for i in order], [tables[i] for i in order]
    for folder, t in zip(paths, tables, strict=True):
        _check_columns(folder, t, chosen)
    if labels is None:  # and what a curve alone does not show: seeds that diverged
        labels = [
            label + _diverged_note(t["runs"])
            for label, t in zip(run_labels(cfgs, paths), tables, strict=True)
        ]
    elif (
        isinstance(labels, str)  # "ab" for two runs: labels "a" and "b"
        or len(labels) != len(paths)
        or not all(isinstance(x, str) for x in labels)
    ):
        raise UsageError(f"labels: expected {len(paths)} strings, one per run, got {labels!r}")
    else:  # given in the order of the folders: drawn in the runs' order
        labels = [labels[i] for i in order]
    runs = [(label, colour_key(cfg), t) for label, cfg, t in zip(labels, cfgs, tables, strict=True)]
    default = paths[0] / "curves" if len(runs) == 1 else Path("compare")
    target = (default if out is None else as_path(out, "--out")).resolve()
    # "--out figs/" names a folder, also one that does not exist yet (Path drops the slash:
    # it wrote figs.png): the default name inside it, the folder created as for a file's.
    if target.is_dir() or os.fspath(out or "").endswith(("/", os.sep)):
        target = target / default.name
    if target.suffix.lower() in _OTHER_FORMATS:
        raise UsageError(f"--out: figures are written as .png and .svg, not {target.suffix}")
    if target.suffix.lower() in (".png", ".svg"):  # "a.png" -> a.png, a.svg; "run.v2" stays
        target = target.with_suffix("")
    check_out_folder(target.parent, "--out")
    for fmt in (".png", ".svg"):
        if target.with_name(target.name + fmt).is_dir():
            raise UsageError(
                f"--out: {target.name + fmt} in {target.parent} is a folder, not a figure"
            )
    if title is None:
        title = figure_title(cfgs, list(labels), tables)
    from maxminq.experiments.store import remove_stale_temporaries

    # What a plot killed while writing (kill -9) left: this figure's temporaries only.
    remove_stale_temporaries(target.with_name(target.name + fmt) for fmt in (".png", ".svg"))
    steps = max((c["steps"] for c in cfgs if isinstance(c.get("steps"), int)), default=None)
    # as figures.fig_training_runs draws and writes it, the Figure kept for the caller
    figure = training_runs_figure(runs, title, chosen, steps, param_shades(cfgs))
    if figure is None:
        raise UsageError("RUN_DIR: no episode finished in these runs; nothing to plot")
    written = FigurePaths(save_figure(figure, target.parent, target.name), figure)
    text = _no_bias_text(paths, tables, chosen)
    if text:
        warnings.warn(text, PlotWarning, stacklevel=2)
    return written
