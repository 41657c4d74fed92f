"""Reading finished deep runs: the settings and tables of run folders (written by ``maxminq
train``, or a sweep's ``OUT/tables/<run_id>``) and the labels that tell them apart, shared by
``maxminq plot``, ``maxminq compare`` and :func:`maxminq.analysis.compare.compare_runs`.

A bad folder is a one-line :class:`~maxminq.errors.UsageError` starting ``RUN_DIR:``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxminq.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

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
    from maxminq.deep.train import read_tables

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
    settings (``gamma 0.9``), then their folders (e.g. two sets of seeds of one setting),
    by name or, for folders of one name, by as many trailing parts as tell them apart."""
    from maxminq.analysis import style

    labels = [style.label(c["agent"], c["n"]) for c in cfgs]
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
