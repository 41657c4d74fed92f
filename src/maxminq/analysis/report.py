"""The reproduction report: one self-contained HTML file and the same as Markdown.

``build_report(DIR)`` reads the results store in ``DIR``, writes every figure the data allow
to ``DIR/figures`` (PNG and SVG), summary CSVs to ``DIR/summary``, checks the paper's claims
and writes ``DIR/report.html`` (figures embedded as base64, opens anywhere) and
``DIR/report.md`` (relative image links). Theorem 1 figures are taken from ``DIR/theory``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import html
import json
import math
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from maxminq.analysis import claims as C
from maxminq.analysis import figures as F
from maxminq.analysis import style
from maxminq.analysis import tables as T
from maxminq.experiments.store import atomic_write_bytes

META_FILE = "reproduce.json"  # written by `maxminq reproduce`: scale, command, timings
THEORY_FIGURES = {
    "bias_heatmap": (
        "Theorem 1: bias control (Fig. 5a)",
        "Expected estimation bias of Maxmin's estimate for M actions and N "
        "estimators (closed form, γ·τ = 1).",
    ),
    "variance_ratio": (
        "Corollary 1: variance reduction (Fig. 5b)",
        "Var[Q^min] / Var[Q] as N grows.",
    ),
    "operator_bias": (
        "Beyond the paper: every operator in Theorem 1's setting",
        "Bias (left) and standard deviation (right) of each operator's target against N: "
        "M equal true action values, errors uniform on [−τ, τ], γ = τ = 1. Lines are the "
        "exact mean bias (closed forms; Theorem 1's for Maxmin), points the Monte-Carlo "
        "estimates ± 2 standard errors, so the points check the lines; the spread is "
        "simulated. Dashed: the operators of fixed N (Q-learning, Double Q, Weighted "
        "Double Q, Bias-corrected Q), each with its simulated point at its own N.",
    ),
}
#: The caption of operator_bias.png drawn with normal errors (``maxminq theory --noise
#: normal``): its points then sample another law than the lines' closed forms.
OPERATOR_NORMAL_CAPTION = (
    "Bias (left) and standard deviation (right) of each operator's target against N: M equal "
    "true action values, γ = τ = 1. Lines are the exact mean bias for errors uniform on "
    "[−τ, τ] (closed forms; Theorem 1's for Maxmin); the points are Monte-Carlo estimates "
    "± 2 standard errors with normal errors of the same variance ('maxminq theory "
    "--noise normal'), so they show how far the closed forms carry beyond their assumption "
    "and do not check them; the spread is simulated. Dashed: the operators of fixed N "
    "(Q-learning, Double Q, Weighted Double Q, Bias-corrected Q), each with its simulated "
    "point at its own N."
)


def theory_caption(theory_dir: Path, name: str) -> str:
    """The report's caption of the theory figure ``name`` (:data:`THEORY_FIGURES`), for the
    error law its table names: operator_bias.png of normal errors gets
    :data:`OPERATOR_NORMAL_CAPTION` (the default one says the errors are uniform and that the
    points check the lines), and rows of ``maxminq theory --operator`` are named and said
    how they are drawn (:func:`_added_operators_text`). An unreadable table keeps the default
    caption."""
    caption = THEORY_FIGURES[name][1]
    if name != "operator_bias":
        return caption
    try:
        table = pd.read_csv(theory_dir / "operator_bias.csv", usecols=["operator", "noise"])
    except (OSError, ValueError):  # missing, damaged or another program's table
        return caption
    laws = set(table["noise"])
    return (OPERATOR_NORMAL_CAPTION if laws == {"normal"} else caption) + _added_operators_text(
        [str(n) for n in table["operator"].unique()]
    )


def _added_operators_text(names: list[str]) -> str:
    """The caption's sentence on the rows ``maxminq theory --operator`` added to
    operator_bias.png (none: empty), drawn unlike the library's own: a library operator with
    other parameters dotted on its closed form, a G of one's own without one."""
    from maxminq.analysis.theory_plots import OPERATOR_SETTINGS, operator_row_setting

    added = [n for n in names if n not in OPERATOR_SETTINGS]
    if not added:
        return ""
    library = any(operator_row_setting(n)[0] is not None for n in added)
    own = any(operator_row_setting(n)[0] is None for n in added)
    text = f" Added with 'maxminq theory --operator': {', '.join(added)}."
    if library:
        text += " A library operator with other parameters is dotted, on its closed form."
    if own:
        text += (
            " A G of one's own has no closed form: its points are joined (one run at a "
            "single N is a dashed level at its simulated mean), and nothing checks them."
        )
    return text


# The claim sections quick_note's arguments stand for, in its order.
QUICK_PARTS = ("Toy MDP", "Mountain Car", "Deep RL", "Theory")


def quick_note(toy: bool, mountain_car: bool, deep: bool, theory: bool, paper: bool = True) -> str:
    """The quick-scale report's note, of the parts a folder has (a ``reproduce --only
    toy_mdp,theory`` report spoke of deep runs it did not have); :data:`QUICK_NOTE` is
    that of all four. ``paper`` False: none of the folder's configs has a paper scale
    (``reproduce --configs`` of one's own), so ``--scale paper`` is not what runs them in
    full."""
    tabular = {
        (True, True): "the toy MDP and Mountain Car results use fewer runs than the paper "
        "(Mountain Car also fewer episodes and settings)",
        (True, False): "the toy MDP results are reduced-scale (fewer runs than the paper)",
        (False, True): "the Mountain Car results are reduced-scale (fewer runs, episodes and "
        "settings than the paper)",
    }.get((toy, mountain_car))
    deep_part = (
        "the deep-RL panels are reduced-scale runs (far fewer steps, seeds and settings than "
        "the paper)"
    )
    parts = [p for p in (tabular, deep_part if deep else None) if p]
    text = "This report was produced at **quick scale**" + (
        ": " + ", and ".join(parts) + "." if parts else "."
    )
    if deep:
        text += (
            " The deep runs check that every agent trains end to end: a few thousand steps "
            "are too few for most of them to learn much, so their curves, final-performance "
            "numbers and deep claims are not a reproduction of Fig. 4."
        )
    if theory:
        text += " The theory part is the same at both scales."
    if not paper:
        return text + (
            " Its configs have no `paper` scale, so `maxminq reproduce --scale paper` does "
            "not run them: add one to run them at the paper's size."
        )
    return text + " Run `maxminq reproduce --scale paper` for the full reproduction."


QUICK_NOTE = quick_note(True, True, True, True)  # make demo's report: every part


# What would decide a check left undecided for want of runs (a quick-scale folder's deep
# settings have 2 seeds each; the shipped configs' paper scale has 20).
RUNS_HINT = (
    f" Those marked 'need {C.MIN_RUNS}' are decided by at least {C.MIN_RUNS} runs (seeds) of "
    "each setting compared, e.g. `maxminq reproduce --scale paper` ({runs}), or the same "
    "configs swept with more seeds into this folder."
)


def _wants_seeds(claim: C.Claim) -> bool:
    """Whether ``claim`` is undecided for want of runs that more seeds would give ('need
    3'), as the check that judged it says (``Claim.undecided``); not when the runs it lacks
    are seeds that ran all their steps without a bias probe in the second half
    (``RAN_ALL``: its evidence names the fix, e.g. bias_every): more seeds of the same runs
    would be left out alike."""
    return claim.undecided is C.Undecided.FEW_RUNS


# The shipped configs' run counts per setting at paper scale, by claim section.
PAPER_RUNS = {
    "Toy MDP": "5,000 runs per setting",
    "Mountain Car": "100 runs per setting",
    "Deep RL": "20 seeds per deep setting",
}

# The claims at each agent's best setting inherit the paper's protocol: chosen and judged on
# the same runs (docs/report.md, "Statistics").
SELECTION_NOTE = (
    "Claims at each agent's best setting (Mountain Car: step size and N; deep RL: step size "
    "and N) pick it on the same runs they then judge, as the paper does: the more settings "
    "an agent has (Maxmin's N multiplies them), the more its best is flattered by luck, so "
    "such a 'supported' is optimistic; to remove this, run the chosen settings again with "
    "new seeds into another folder and report that one."
)

# A folder with deep runs on environments the paper did not study (a study of one's own):
# the deep checks then carry the paper's statements over to them.
OUTSIDE_NOTE = (
    "**Environments outside the paper:** {envs}. The deep checks below carry the paper's "
    "statements about its games (Sec. 6: Maxmin DQN as well as or better than the "
    "baselines) over to {them}: findings of this study, not a reproduction of the paper."
)

# A folder (not a quick-scale reproduction, whose note says as much) with deep runs on the
# paper's games shorter than the paper trains them: e.g. a study's own config at a few
# thousand steps, or a shipped config swept at its quick scale by 'maxminq sweep'.
SHORT_NOTE = (
    "**Deep runs shorter than the paper's:** {runs}. Their curves, final performance and "
    "deep claims describe runs of this length, not the paper's Fig. 4 (the shipped "
    "configs' `--scale paper` trains at its length, as does `--scale best` of those that "
    "have it: catcher, lunarlander, pixelcopter)."
)


#: The settings table's column of how each config's paper scale differs from the runs here
#: (``reproduce.json``'s ``paper`` per config, written by ``maxminq reproduce``), and the
#: sentence under the table that says what it is.
PAPER_COLUMN = "at --scale paper, where it differs"
PAPER_NOTE = (
    f"'{PAPER_COLUMN}': the number of settings and of seeds (deep) or runs (tabular) per "
    "setting, and each setting whose values differ, as the same config runs them at "
    "`--scale paper` (the paper's protocol as the shipped configs read it; where even that "
    "departs from the paper, see maxminq's docs/deviations.md). The 'settings' "
    "column lists the values of all of a config's runs together (e.g. the N of every agent)."
)

UNFINISHED_NOTE = (
    "**Caution: the reproduction in this folder did not finish** (started {started}; "
    "`reproduce.json` has no end time: interrupted, failed or still running). Runs it did not "
    "finish are missing from this report; rerun the same `maxminq reproduce` command to "
    "complete them (finished runs are kept)."
)


@dataclass(repr=False)
class Report:
    """What :func:`build_report` wrote; shown (``repr``, a notebook cell) in one line, its
    path, the claims' verdicts and how many figures (:meth:`__repr__`), not every field."""

    html: Path
    markdown: Path
    figures: list[F.FigureFile] = field(default_factory=list)
    claims: list[C.Claim] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # claim sections with no data here
    pooled: list[str] = field(default_factory=list)  # rows pooling different experiments
    restricted: list[str] = field(default_factory=list)  # claims on the default settings only
    unfinished: bool = False  # the folder's 'maxminq reproduce' did not finish
    without_results: dict[str, int] = field(default_factory=dict)  # by status
    unreadable: list[str] = field(default_factory=list)  # finished runs failing verification
    published: list[str] = field(default_factory=list)  # one line per environment shown
    # ``pooled`` with the rows that pool alike in one line (:func:`pooled_summary`)
    pooled_alike: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # deep environments the paper did not study
    short: list[str] = field(default_factory=list)  # paper's games trained shorter than it did
    # classic runs gone non-finite, one line per setting ('toy MDP: Q-learning: 2 of 3 runs
    # at mu = +0.1 went non-finite, ...', 'Mountain Car, weights gone non-finite: ...')
    nonfinite: list[str] = field(default_factory=list)

    @property
    def verdicts(self) -> str:
        """How many claims have each verdict, in the order they first come in the report:
        ``'15 supported, 32 insufficient data'`` (``''`` without claims)."""
        counts: dict[str, int] = {}
        for claim in self.claims:
            counts[claim.status] = counts.get(claim.status, 0) + 1
        return ", ".join(f"{n} {status}" for status, n in counts.items())

    def __repr__(self) -> str:
        """``Report('OUT/report.html': 15 supported, 32 insufficient data; 23 figures)``:
        the dataclass's own repr printed every claim's evidence and figure's caption."""
        figures = style.count(len(self.figures), "figure")
        return f"Report({str(self.html)!r}: {self.verdicts or 'no claims'}; {figures})"


def _atomic_write(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    _atomic_write(path, df.to_csv(index=False))


def _has_store(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a results.sqlite to read: an empty file is a store that was
    never set up, and reads as none."""
    path = out_dir / "results.sqlite"
    return path.is_file() and path.stat().st_size > 0


def check_store(out_dir: Path) -> None:
    """Raise StoreError (one line) if ``out_dir/results.sqlite`` is not a readable results
    store (damaged, or another program's file), as opening it checks."""
    from maxminq.experiments.store import ResultsStore

    if _has_store(out_dir):
        ResultsStore(out_dir, create=False).close()


def load_store(out_dir: Path) -> dict[str, pd.DataFrame]:
    """The done runs' tables the report reads (``tables.REPORT_TABLES``) from the results store
    in ``out_dir`` (empty if none)."""
    if not _has_store(out_dir):
        return {}
    from maxminq.experiments.store import load_results

    return load_results(out_dir, tables=T.REPORT_TABLES)


_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "scale": str,
    "command": str,
    "started": str,
    "finished": str,
    "machine": str,
    "seconds": (int, float),
    "configs": list,
    "software": dict,
}


def read_meta(out_dir: Path) -> dict:
    """The reproduce metadata (scale, command, timings), or ``{}`` when absent/unreadable;
    entries of the wrong type (a hand-edited or damaged file) are left out."""
    try:
        meta = json.loads((out_dir / META_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict):
        return {}

    def fits(value: object, kind: type | tuple[type, ...]) -> bool:
        return isinstance(value, kind) and not isinstance(value, bool)

    meta = {k: v for k, v in meta.items() if k not in _META_TYPES or fits(v, _META_TYPES[k])}
    if "software" in meta:  # name -> version text, as 'maxminq reproduce' records them
        meta["software"] = {
            k: v for k, v in meta["software"].items() if isinstance(k, str) and isinstance(v, str)
        }
    if "configs" in meta:
        meta["configs"] = [
            {k: v for k, v in c.items() if k != "run_seconds" or fits(v, (int, float))}
            for c in meta["configs"]
            if isinstance(c, dict)
        ]
    return meta


def software_line(software: dict[str, str]) -> str:
    """The header's line of the versions ``maxminq reproduce`` ran with (``reproduce.json``'s
    ``software``): 'Software: maxminq 0.1.0 (git abc1234), Python 3.11.7, numpy 2.4.6, ...'."""
    parts = []
    for name, version in software.items():
        if name == "git":
            continue
        git = f" (git {software['git']})" if name == "maxminq" and software.get("git") else ""
        parts.append(f"{'Python' if name == 'python' else name} {version}{git}")
    return "Software (as the reproduction recorded it): " + ", ".join(parts) + "."


CUSTOM_SCALE = "custom sweep"


def infer_scale(results: dict[str, pd.DataFrame], meta: dict) -> str:
    """The sweep scale: from reproduce metadata, else a ``scale`` column, else
    :data:`CUSTOM_SCALE` (a folder written by ``maxminq sweep`` records no scale)."""
    if meta.get("scale"):
        return str(meta["scale"])
    scales: set[str] = set()
    for df in results.values():
        if df is not None and "scale" in df.columns:
            scales.update(map(str, df["scale"].dropna().unique()))
    return ", ".join(sorted(scales)) if scales else CUSTOM_SCALE


# ----------------------------------------------------------------------------- formatting
def _f(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    return f"{x:.0f}" if 10**digits <= abs(x) < C.HUGE else f"{x:.{digits}g}"


def _mean_se(r: pd.Series) -> str:
    return f"{_f(r['mean'])} ± {_f(r['se'])}"


def _iqm_ci(r: pd.Series) -> str:
    return f"{_f(r['iqm'])} [{_f(r['iqm_low'])}, {_f(r['iqm_high'])}]"


def _run_ids(results: dict[str, pd.DataFrame]) -> set[str]:
    """The run ids present in any of ``results``' tables."""
    return {i for df in results.values() if df is not None and "run_id" in df for i in df["run_id"]}


def _result_records(out_dir: Path, results: dict[str, pd.DataFrame]) -> list:
    """The store's records of the runs present in ``results`` (none without a store)."""
    ids = _run_ids(results)
    if not ids or not _has_store(out_dir):
        return []
    from maxminq.experiments.store import ResultsStore

    with ResultsStore(out_dir, create=False) as store:
        return [r for r in store.records() if r.run_id in ids]


def _unreadable_runs(out_dir: Path, results: dict[str, pd.DataFrame]) -> list[str]:
    """Finished runs of the store whose tables fail verification, which ``load_results``
    left out of ``results`` (with a warning). Only the finished runs absent from
    ``results`` are verified again (a run present was verified as it was read), also those
    absent for another reason (e.g. the stale runs ``maxminq reproduce`` leaves out): they
    are named only if their files fail."""
    if not _has_store(out_dir):
        return []
    from maxminq.experiments.store import FINISHED, ResultsStore

    present = _run_ids(results)
    with ResultsStore(out_dir, create=False) as store:
        return [
            r.run_id
            for r in store.records()
            if r.status in FINISHED
            and r.run_id not in present
            and store.verify_tables(r.run_id) is not None
        ]


#: What :func:`_runs_without_results` counts the runs under that no config as last swept
#: in the folder makes (pending or failed runs of a config's earlier version).
EARLIER_VERSION = "of an earlier version of their config (pending or failed)"
#: ... and the pending runs that other machines' shards run (a folder of ``--shard K/M``).
OTHER_SHARDS = "of other shards (pending here)"


def _runs_without_results(out_dir: Path) -> dict[str, int]:
    """Runs registered in the store that the report cannot show (pending, running, failed),
    counted by status; those that no config as last swept here makes (its plan, recorded by
    each sweep: :mod:`maxminq.experiments.shard`), left pending or failed by a sweep of an
    earlier version of the config (edited, at another scale, or resolved otherwise by an
    older maxminq), counted apart under
    :data:`EARLIER_VERSION`: rerunning the sweep does not run them. A folder without plans
    (an older maxminq's) counts every run by its status. In a folder of one machine's
    ``--shard K/M``, the pending runs of the other shards are counted apart under
    :data:`OTHER_SHARDS`: its sweep never runs them (``maxminq merge`` brings them)."""
    if not _has_store(out_dir):
        return {}
    from maxminq.experiments.shard import earlier_version_runs, other_shards_runs
    from maxminq.experiments.store import FINISHED, STATUSES, ResultsStore

    with ResultsStore(out_dir, create=False) as store:
        records = store.records()
        earlier = earlier_version_runs(store)  # pending or failed, as maxminq status has it
        others = other_shards_runs(store)
    counts = dict.fromkeys([*STATUSES, EARLIER_VERSION, OTHER_SHARDS], 0)
    for rec in records:
        if rec.status in FINISHED:
            continue
        if rec.run_id in earlier:
            counts[EARLIER_VERSION] += 1
        elif rec.status == "pending" and rec.run_id in others:
            counts[OTHER_SHARDS] += 1
        else:
            counts[rec.status] += 1
    return {status: n for status, n in counts.items() if n}


#: Settings that are an operator's parameters (a mapping): the report writes them as the
#: labels do (``c=10``, ``k=2,w=0.5``; :func:`maxminq.analysis.style.params_text`), not as
#: JSON (``{"c": 10.0}``), so a table row, the settings list and a legend name them alike.
PARAM_SETTINGS = frozenset({"op_kwargs"})


def setting_text(value: object, key: str | None = None) -> str:
    """One setting value as the report prints it, in the settings table and in ``maxminq
    reproduce``'s paper column: ``3,500,000``, ``1e-05``, ``unset`` for a setting a run
    leaves at its default, a float in full when its short form would round it (0.1234567,
    not 0.123457), an operator's parameters (``key`` in :data:`PARAM_SETTINGS`) as the
    labels give them (``c=10``; ``none`` for no parameters), other lists and mappings as
    JSON. A table's cells are these texts too (:func:`_cell_text`): a NumPy scalar is
    written as the number it holds."""
    if isinstance(value, np.generic):  # a table's cell: np.int64, np.float64, np.bool_
        value = value.item()
    if value is None:
        return "unset"
    if key in PARAM_SETTINGS and isinstance(value, (dict, str)):
        return style.params_text(value) or "none"
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 1000:
            return f"{value:,.0f}"
        return style.number_text(value)  # 1e-05; every digit where it rounds: 0.1234567
    return json.dumps(value, sort_keys=True, default=str)


def setting_texts(values: Sequence[object], key: str | None = None) -> list[str]:
    """The distinct ``values`` of a setting (named ``key``, if given) as
    :func:`setting_text`, numbers in numeric order (as text, 10 came before 2), operators'
    parameters by value (``c=1`` before ``c=10``, :func:`maxminq.analysis.style.params_key`),
    then anything else (``unset``, a list) in the order of its text: a setting some runs
    leave unset still lists its numbers in order."""
    unique = list({json.dumps(v, sort_keys=True): v for v in values}.values())

    def order(v: object) -> tuple[int, float, str]:
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
            return (0, float(v), "")
        if isinstance(v, dict):  # op_kwargs: by value (beta 5, 20, 100), style.params_key
            return (2, style.params_key(v), "")  # type: ignore[return-value]
        return (1, 0.0, setting_text(v, key))  # NaN too: it has no place among numbers

    unique.sort(key=order)
    return list(dict.fromkeys(setting_text(v, key) for v in unique))  # 1 and 1.0 read alike


def _settings_rows(records: Sequence) -> list[list[str]]:
    """One row per config: its run ids, seeds (deep) or runs per setting (tabular), and the
    values each setting takes, read from the store's ``records`` of the reported runs (so no
    table column can pass for a setting), as :func:`setting_texts` gives them."""
    rows = []
    for cfg in sorted({r.config for r in records}):
        mine = [r for r in records if r.config == cfg]
        values: dict[str, list] = {}
        for r in mine:
            for key, value in r.settings.items():
                values.setdefault(key, []).append(value)
        seeds = {s for r in mine for s in r.settings.get("seeds") or []}
        per_setting = len(seeds) or max(int(r.settings.get("runs") or 0) for r in mine)
        texts = {key: setting_texts(vals, key) for key, vals in sorted(values.items())}
        parts = [
            f"{key}: " + ", ".join(text)
            for key, text in texts.items()
            if len(text) <= 12 and key not in ("seeds", "runs")
        ]
        rows.append([str(cfg), str(len(mine)), str(per_setting), "; ".join(parts)])
    return rows


# The settings that identify a row of the report's tables, per run kind; runs that agree on
# these are pooled as one setting. Seeds and run counts are replicates (pooling them is the
# point); checkpoint_every, tensorboard, save_probes and the evaluations during training
# (their own environments and random stream) do not change what a run computes.
TABLE_KEYS = {"deep": T.DEEP_KEYS, "toy_mdp": T.TOY_KEYS, "mountain_car": T.MOUNTAIN_CAR_KEYS}
POOLABLE = frozenset(
    {"seed", "seeds", "runs", "checkpoint_every", "tensorboard", "save_probes"}
    | {"eval_every", "eval_every_episodes"}
)


def _keys_named(records: Sequence) -> dict[str, list[str]]:
    """:data:`TABLE_KEYS` as the pooling caution names them: the deep G's keys
    (``T.DEEP_OPERATOR_KEYS``) only where a deep run sets them (a generalized-dqn run)."""
    set_ = {k for r in records if r.kind == "deep" for k in r.settings}
    return {
        kind: [k for k in keys if kind != "deep" or k not in T.DEEP_OPERATOR_KEYS or k in set_]
        for kind, keys in TABLE_KEYS.items()
    }


def _pooling_groups(records: Sequence) -> dict[tuple, list[dict]]:
    """The records' settings grouped by run kind and table keys (:data:`TABLE_KEYS`)."""
    groups: dict[tuple, list[dict]] = {}
    for rec in records:
        keys = TABLE_KEYS.get(rec.kind)
        if keys is None:
            continue
        ident = tuple((k, json.dumps(rec.settings.get(k))) for k in keys if k in rec.settings)
        groups.setdefault((rec.kind, ident), []).append(rec.settings)
    return groups


def _differing(members: Sequence[dict], ident: Sequence[tuple[str, str]]) -> dict[str, list]:
    """The settings outside the table keys and :data:`POOLABLE` on which ``members`` differ,
    each with its values as sorted JSON texts ('unset (default)' where a run did not set it,
    e.g. ``update_members`` left at 1)."""
    names = sorted(set().union(*members) - POOLABLE - {k for k, _ in ident})
    out = {}
    for name in names:
        values = {json.dumps(m[name], sort_keys=True) if name in m else None for m in members}
        if len(values) > 1:
            out[name] = sorted(cast("set[str]", values - {None})) + ["unset (default)"] * (
                None in values
            )
    return out


def split_settings(records: Sequence) -> dict[str, list[str]]:
    """Per run kind, the settings that tell apart runs the table keys would pool (e.g. two
    ``update_members`` or two ``gamma`` of one algorithm): the final-performance tables show
    them as columns, one row per value."""
    out: dict[str, set[str]] = {}
    for (kind, ident), members in _pooling_groups(records).items():
        out.setdefault(kind, set()).update(_differing(members, ident))
    return {kind: sorted(names) for kind, names in out.items() if names}


#: The default of a deep run's ``env_kwargs``: what the environment registry passes (Catcher's
#: ``normalize``), unset for the environments it passes nothing.
REGISTRY_ENV_KWARGS = "as the environment registry sets them"


def _outside_paper(tables: T.Tables) -> list[str]:
    """The deep environment ids of ``tables`` that the paper did not study (the registry's
    paper ids less Freeway, which it offers beyond the paper), in panel order."""
    from maxminq.envs.registry import PAPER_ENVS

    if not tables.has_deep or tables.episodes is None:
        return []
    paper = {e for e in PAPER_ENVS if "Freeway" not in e}
    ids = {str(e) for e in tables.episodes["env_id"].dropna().unique()}
    return sorted(ids - paper, key=T.env_rank)


def _shorter_than_paper(tables: T.Tables) -> list[str]:
    """Per paper environment whose deep runs all train fewer steps than the paper's (the
    registry's ``train_steps``): 'Pixelcopter 6,000 steps (the paper: 2,000,000)', in panel
    order; the longest run's steps are named."""
    from maxminq.envs.registry import PAPER_ENVS

    if not tables.has_deep or tables.runs is None or "steps" not in tables.runs:
        return []
    longest = tables.runs.groupby("env_id")["steps"].max()
    ids = [e for e in longest.index if e in PAPER_ENVS and "Freeway" not in str(e)]
    among = [str(e) for e in longest.index]
    return [
        f"{T.env_title(str(e), among)} {int(longest[e]):,} steps (the paper: "
        f"{PAPER_ENVS[e].train_steps:,})"
        for e in sorted(ids, key=T.env_rank)
        if longest[e] < PAPER_ENVS[e].train_steps
    ]


def _at_registry_env_kwargs(df: pd.DataFrame) -> np.ndarray:
    """Per row of a deep table, whether its ``env_kwargs`` (canonical JSON text, NaN where
    unset) are the ones the registry gives its ``env_id``."""
    from maxminq.envs.registry import PAPER_ENVS
    from maxminq.experiments.store import canonical_json

    want = {}
    for env_id in df["env_id"].unique():
        kwargs = PAPER_ENVS[env_id].env_kwargs if env_id in PAPER_ENVS else {}
        want[env_id] = canonical_json(kwargs) if kwargs else None
    return np.array(
        [
            pd.isna(v) if want[e] is None else v == want[e]
            for e, v in zip(df["env_id"], df["env_kwargs"], strict=True)
        ],
        dtype=bool,
    )


def _defaults(kind: str) -> dict[str, object]:
    """A run kind's fixed defaults (the paper's settings), None for settings whose default
    is to be unset (stored runs leave them out): tabular, the run function's defaults and
    ``update_members`` / ``op_kwargs``; deep, the fixed ``TrainConfig`` defaults (e.g.
    ``update_members`` 1), ``hidden`` unset and ``env_kwargs`` as the environment registry
    sets them (its other settings, e.g. ``steps``, differ by environment and are not
    listed)."""
    if kind == "deep":
        from maxminq.deep.config import TrainConfig

        fixed = {
            f.name: f.default
            for f in dataclasses.fields(TrainConfig)
            if f.default is not dataclasses.MISSING and f.default is not None
        }
        return {**fixed, "hidden": None, "env_kwargs": REGISTRY_ENV_KWARGS}
    from maxminq.linear.mountain_car import MC_DEFAULTS
    from maxminq.tabular.agent import OPTIONAL_PARAMS
    from maxminq.tabular.toy_mdp import TOY_DEFAULTS

    defaults = {"toy_mdp": TOY_DEFAULTS, "mountain_car": MC_DEFAULTS}.get(kind)
    return {} if defaults is None else {**dict.fromkeys(OPTIONAL_PARAMS), **defaults}


def at_defaults(
    df: pd.DataFrame, kind: str, names: Sequence[str], used: dict | None = None
) -> tuple[pd.DataFrame, dict]:
    """The rows of a ``kind``'s table whose settings ``names`` (those the table splits) are
    at their default (:func:`_defaults`), for the claims: the paper's claims are about its
    settings, not a mean over u = 1 and u = 2 or two gammas. Returns the rows and the
    defaults used (settings without a default, e.g. ``episodes``, or with no run at it are
    not filtered); given ``used``, exactly those are applied (another table of the runs)."""
    defaults = _defaults(kind) if used is None else used
    given, used = used is not None, {}
    keep = np.ones(len(df), dtype=bool)
    for name in (k for k in (defaults if given else names) if k in defaults and k in df.columns):
        col, value = df[name], defaults[name]
        if value == REGISTRY_ENV_KWARGS and "env_id" in df.columns:
            at = _at_registry_env_kwargs(df)
        elif value is None:
            at = col.isna().to_numpy()
        elif isinstance(value, (int, float)) and pd.api.types.is_numeric_dtype(col):
            at = np.isclose(col.to_numpy(dtype=float), float(value), rtol=1e-12, atol=0.0)
        else:
            at = (col == value).to_numpy()
        if given or (keep & at).any():
            keep &= at
            used[name] = value
    return df[keep], used


#: Settings whose runs the figures draw as series of their own (an operator's parameters,
#: named in the legend: ``Weighted Double Q (c=10)``), so that only the claims keep to
#: their default (none: the paper's operators take no parameters).
DRAWN_APART = ("op_kwargs",)


def _without(used: dict | None, names: Sequence[str]) -> dict | None:
    """``used`` (the defaults :func:`at_defaults` applied) less ``names``."""
    return None if used is None else {k: v for k, v in used.items() if k not in names}


def claim_restrictions(used: dict[str, dict]) -> list[str]:
    """One sentence per run kind whose claims :func:`at_defaults` restricted (and its
    figures, but for :data:`DRAWN_APART`)."""
    lines = []
    for kind, settings in used.items():
        text = {k: f"{k} {'unset' if v is None else v}" for k, v in settings.items()}
        both = [t for k, t in text.items() if k not in DRAWN_APART]
        claims_only = [k for k in text if k in DRAWN_APART]
        if both:
            lines.append(
                f"the {kind} claims and figures use only the runs at the default (the "
                "paper's setting) of " + ", ".join(both)
            )
        if claims_only:
            lines.append(
                f"the {kind} claims use only the runs without "
                + ", ".join(claims_only)
                + " (the paper's operators take no parameters; the tables and figures show "
                "each operator's parameters apart)"
            )
    return lines


def _apart(groups: dict[tuple, list[dict]]) -> list[tuple[tuple, list[dict]]]:
    """``groups`` (:func:`_pooling_groups`) split by the settings the tables and figures
    draw apart (:data:`DRAWN_APART`: an operator's parameters), each such setting added to
    its group's keys, sorted: the rows that do pool runs (c = 1 at 20 episodes beside
    c = 10 at 30 read as one row pooling 'episodes 20 vs 30')."""
    out: dict[tuple, list[dict]] = {}
    for (kind, ident), members in groups.items():
        for m in members:
            apart = tuple((k, json.dumps(m[k], sort_keys=True)) for k in DRAWN_APART if k in m)
            out.setdefault((kind, ident, apart), []).append(m)

    def order(key: tuple) -> tuple:  # parameters by value (style.params_key): c = 1, 10
        kind, ident, apart = key
        return kind, ident, tuple((k, style.params_key(json.loads(v))) for k, v in apart)

    return [((key[0], (*key[1], *key[2])), out[key]) for key in sorted(out, key=order)]


def _pooled_rows(records: Sequence) -> list[tuple[str, str, int, str]]:
    """Each table row that pools runs differing in more than their seeds: its run kind, its
    keys as text, how many run ids it pools and what they differ in (see
    :func:`pooled_differences`)."""
    lines: list[tuple[str, str, int, str]] = []
    for (kind, ident), members in _apart(_pooling_groups(records)):
        if len(members) < 2:
            continue
        differing = _differing(members, ident).items()
        # runs apart in an operator's parameters are not pooled: the tables split them, the
        # figures draw them apart, the claims keep to the paper's operators (none has any)
        parts = [f"{k} {' vs '.join(v)}" for k, v in differing if k not in DRAWN_APART]
        # A deep run trains its list of seeds; a tabular run's runs are the streams
        # (seed, 0), (seed, 1), ...: a seed in two run ids of the same experiment repeats
        # those runs (in two experiments, e.g. two gammas, it is a different run).
        experiments: dict[str, list] = {}
        for m in members:
            same = {k: v for k, v in m.items() if k not in POOLABLE}
            seeds = experiments.setdefault(json.dumps(same, sort_keys=True, default=str), [])
            seeds += [s for s in (m.get("seeds") or [m.get("seed")]) if s is not None]
        repeated = sorted({s for v in experiments.values() for s in v if v.count(s) > 1})
        if repeated:
            parts.append(
                f"seed{'s' * (len(repeated) > 1)} {', '.join(map(str, repeated))} in more "
                "than one run id (the same runs counted twice)"
            )
        if parts:
            where = ", ".join(
                f"{k} {setting_text(json.loads(v), k)}"
                if k in DRAWN_APART
                else f"{k} {json.loads(v)}"
                for k, v in ident
            )
            lines.append((kind, where, len(members), "; ".join(parts)))
    return lines


def pooled_differences(records: Sequence) -> list[str]:
    """One line per table row that pools runs differing in more than their seeds.

    ``records`` are the store's run records (``kind``, ``settings``). Runs whose table keys
    (:data:`TABLE_KEYS`) agree are pooled as one setting by the summaries, claims and figures;
    when they differ in another setting (e.g. ``steps`` after a config was edited and re-run
    into the same folder), or two of them repeat a seed (e.g. a toy config re-run with more
    ``runs``: its runs 0, 1, ... are the earlier ones again), the pooled numbers mislead.
    """
    rows = _pooled_rows(records)
    return [f"{kind} ({where}): {n} run ids pooled; {why}" for kind, where, n, why in rows]


def pooled_summary(records: Sequence, shown: int = 3) -> list[str]:
    """:func:`pooled_differences` with the rows that pool alike (same run kind, as many run
    ids, the same differences) in one line: a config edited and swept again into its folder
    (``episodes`` 20, then 30) makes every row of it pool, and one line per row buried what
    they all said. Such a line counts its rows and names the first ``shown``."""
    alike: dict[tuple[str, int, str], list[str]] = {}
    for kind, where, n, why in _pooled_rows(records):
        alike.setdefault((kind, n, why), []).append(where)
    lines = []
    for (kind, n, why), wheres in alike.items():
        if len(wheres) == 1:
            lines.append(f"{kind} ({wheres[0]}): {n} run ids pooled; {why}")
            continue
        named = "; ".join(wheres[:shown])
        more = f"; and {len(wheres) - shown} more" if len(wheres) > shown else ""
        lines.append(
            f"{kind}, {len(wheres)} rows ({named}{more}): {n} run ids pooled in each; {why}"
        )
    return lines


def _test_counts(tests: pd.DataFrame | None) -> str:
    """How many test episodes each seed played here, and at which ε, beside the paper's 100
    at ε = 0.01 (a study of one's own at 3 was told '100 in the paper, fewer at quick
    scale')."""

    def span(values: list, fmt: str) -> str:
        return " to ".join(format(v, fmt) for v in dict.fromkeys((values[0], values[-1])))

    if tests is None or tests.empty or not {"run_id", "seed"} <= set(tests.columns):
        return "ε = 0.01; 100 in the paper"
    counts = sorted(set(tests.groupby(["run_id", "seed"]).size()))
    eps = sorted(set(tests["eval_eps"].dropna())) if "eval_eps" in tests.columns else []
    at = span(eps, "g") if eps else "0.01"  # the store's tables carry the run's setting
    return f"ε = {at}; {span(counts, ',')} per seed here, 100 at ε = 0.01 in the paper"


def _cell_text(value: object, key: str | None = None) -> str:
    """A split setting's value in a table cell, as the settings list writes it
    (:func:`setting_text`: ``1,500,000``, ``0.9999999``), but '–' where a run did not set
    it (None, or the table's NaN: the run function's default, e.g. ``update_members`` of
    Q-learning) and for an operator without parameters (``key`` in
    :data:`PARAM_SETTINGS`, stored as JSON, ``""`` for none)."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "–"
    if key in PARAM_SETTINGS:
        return style.params_text(value) or "–"
    return setting_text(value, key)


def _cells(column: pd.Series) -> pd.Series:
    """A table column's cells as :func:`_cell_text` writes them."""
    return column.map(lambda v: _cell_text(v, str(column.name)))


def _cell_order(column: pd.Series) -> pd.Series:
    """A ``sort_values`` key for a split setting's column: an operator's parameters by
    value (``T.setting_order`` of the stored JSON: c = 1 before c = 10), numbers as numbers
    (unset last), others by their cell text."""
    if column.name in PARAM_SETTINGS:
        return T.setting_order(column)
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column  # as text, update_members 10 came before 2
    return _cells(column)


def _size_head(algorithms: Iterable[object]) -> str:
    """The header of a final-performance table's ``n`` column, as the legends name ``n``
    (:func:`maxminq.analysis.style.size_name`): ``N`` (estimators), ``K`` where every
    algorithm with a size counts snapshots (Averaged, Historical Best), ``N / K`` where
    both are in the table (then each cell names its own, :func:`_size_cell`)."""
    names = {style.size_name(str(a)) for a in algorithms} - {None}
    return "N / K" if names == {"N", "K"} else "K" if names == {"K"} else "N"


def _size_cell(algorithm: object, n: object, head: str) -> str:
    """A row's ``n`` under the header ``head`` (:func:`_size_head`): the number, named
    (``K=4``, ``N=2``) under ``N / K`` for an algorithm with a size, as its legend label
    writes it; ``''`` where unset."""
    if not isinstance(n, (int, float, np.number)) or n != n:
        return ""
    name = style.size_name(str(algorithm))
    return f"{name}={int(n)}" if head == "N / K" and name else str(int(n))


def _deep_score_sources(scores: pd.DataFrame, runs: pd.DataFrame | None = None) -> str:
    """A sentence on the runs (of every setting, not only the table's best) that the deep
    scores mix: runs scored by their training average beside runs scored by tests, and
    diverged runs; and the runs of ``runs`` (the store's per-seed table) without a score,
    no episode having finished (e.g. diverged first), which no table or claim counts ('' when
    every run was tested, none diverged and each has a score)."""
    parts = []
    unscored = 0
    on = [c for c in T.run_cols(runs) if c in scores.columns] if runs is not None else []
    if runs is not None and on:
        found = (
            runs[on]
            .drop_duplicates()
            .merge(scores[on].drop_duplicates(), on=on, how="left", indicator=True)
        )
        unscored = int((found["_merge"] == "left_only").sum())
    if unscored:
        parts.append(
            f"{unscored} without a finished episode (no score: left out of the tables, "
            "their runs column and the claims)"
        )
    by_training = int((scores["source"] == "train_last100").sum())
    if by_training and by_training < len(scores):
        parts.append(
            f"{by_training} without test episodes (scored by the training average, beside "
            "test returns)"
        )
    diverged = int(scores["diverged"].sum())
    if diverged:
        parts.append(f"{diverged} diverged (kept with the score reached)")
    if not parts:
        return ""
    return f"Of the {len(scores) + unscored} runs of all settings, " + "; ".join(parts) + ". "


def _span(values: Iterable[int]) -> str:
    """``4`` or ``1 to 4``: the smallest and largest of ``values``."""
    v = sorted(set(values))
    return (
        style.integer(v[0]) if v[0] == v[-1] else f"{style.integer(v[0])} to {style.integer(v[-1])}"
    )


def _iqm_of_few(runs: pd.Series) -> str:
    """A sentence for tables whose rows have fewer than 4 runs: their IQM trims nothing
    (``trim_mean(x, 0.25)`` cuts int(n / 4) runs from each end), so it equals the mean, which
    a reader saw in every quick-scale row without a word why."""
    if not (pd.to_numeric(runs) < 4).any():
        return ""
    return "A row of fewer than 4 runs has no quarter to trim: its IQM is its mean. "


def deep_best_rule(summary: pd.DataFrame, extra: Sequence[str] = ()) -> str:
    """How the deep table's best settings were chosen (:func:`tables.deep_best`'s rule) and
    among how many settings per agent and environment in this folder, so that a 'best' picked
    from one setting (each agent at one step size, as at quick scale) does not read as the
    outcome of a sweep."""
    valid = summary[np.isfinite(summary["mean"].to_numpy(dtype=float))]
    if valid.empty:  # no setting scored: none chosen, the table is empty
        return ""
    group = T.present_keys(valid, ["env_id", "agent", *T.DEEP_OPERATOR_KEYS, *extra])
    sizes = valid.groupby(group, sort=False, dropna=False).size().reset_index(name="k")
    counts: dict[str, list[int]] = {}
    for agent in sorted(sizes["agent"].unique(), key=T.agent_rank):
        counts[agent] = sizes.loc[sizes["agent"] == agent, "k"].astype(int).tolist()
    rule = (
        "Best setting: per environment and agent, the step size and N / K whose runs have the "
        "highest mean final performance, among that agent's settings in this folder (the "
        "paper's rule; picked and judged on the same runs). "
    )
    if all(k == 1 for ks in counts.values() for k in ks):
        return rule + "Here each agent ran one setting per environment: nothing was chosen. "
    per = ", ".join(f"{style.LABELS.get(a, a)} {_span(ks)}" for a, ks in counts.items())
    return rule + f"Settings per agent and environment here: {per}. "


def mountain_car_best_rule(summary: pd.DataFrame) -> str:
    """How the Mountain Car table's best step sizes were chosen
    (:func:`tables.mountain_car_best`'s rule) and among which step sizes of this folder."""
    sizes = sorted(set(summary["step_size"].dropna().astype(float)))
    among = ", ".join(style.number_text(v) for v in sizes)
    one = len(sizes) == 1
    return (
        "Best step size: per algorithm, N / K and σ², the step size whose runs have the fewest "
        "mean last-episode steps (the paper's rule; picked and judged on the same runs), "
        + (
            f"here the only one this folder ran, {among}: nothing was chosen."
            if one
            else f"among the step sizes this folder ran: {among}."
        )
    )


def _deep_table(best: pd.DataFrame, extra: Sequence[str] = ()) -> tuple[list[str], list[list[str]]]:
    extra = T.present_keys(best, extra)
    size = _size_head(best["agent"])
    head = ["environment", "algorithm", size, "step size", *extra, "runs", "mean ± SE"]
    head.append("IQM [95% CI]")
    rows = []
    among = list(best["env_id"].unique())  # named in full where short names collide
    for _, r in best.sort_values(
        ["env_id", "agent", *extra],
        key=lambda s: (
            s.map(T.env_rank)
            if s.name == "env_id"
            else s.map(T.agent_rank)
            if s.name == "agent"
            else _cell_order(s)  # op_kwargs by value
        ),
    ).iterrows():
        rows.append(
            [
                T.env_title(r["env_id"], among),
                style.LABELS.get(r["agent"], r["agent"]),
                _size_cell(r["agent"], r.get("n"), size),
                f"{r['lr']:g}" if "lr" in r else "",
                *(_cell_text(r[k], k) for k in extra),
                str(int(r["runs"])),
                _mean_se(r),
                _iqm_ci(r),
            ]
        )
    return head, rows


def _mc_table(best: pd.DataFrame, extra: Sequence[str] = ()) -> tuple[list[str], list[list[str]]]:
    extra = T.present_keys(best, extra)
    size = _size_head(best["algorithm"])
    head = [
        "σ²",
        "algorithm",
        size,
        "best step size",
        *extra,
        "runs",
        "last-episode steps mean ± SE",
        "IQM [95% CI]",
    ]
    rows = []
    order = best.assign(**{k: _cell_order(best[k]) for k in extra})
    order["_legend_rank"] = order["algorithm"].map(T.agent_rank)  # the figures' legend order
    for i in order.sort_values(["sigma2", "_legend_rank", "algorithm", "n", *extra]).index:
        r = best.loc[i]
        rows.append(
            [
                f"{r['sigma2']:g}",
                style.label(r["algorithm"]),
                _size_cell(r["algorithm"], r.get("n"), size),
                f"{r['step_size']:g}",
                *(_cell_text(r[k], k) for k in extra),
                str(int(r["runs"])),
                _mean_se(r),
                _iqm_ci(r),
            ]
        )
    return head, rows


#: What the toy table does with runs gone non-finite (:func:`toy_nonfinite_note`).
TOY_LEFT_OUT = "left out of these means and of the runs column"


#: What the toy claims do with runs gone non-finite (the note under their section).
TOY_CLAIMS_LEFT_OUT = "left out of these checks (every episode of each; as from the toy table)"


def toy_nonfinite_note(toy: pd.DataFrame, left_out: str = TOY_LEFT_OUT) -> str:
    """The note under the report's toy table naming its runs that went non-finite (NaN or
    inf in distance or Q(A, Left)), left out of its means and runs, as the figures name
    theirs (:func:`maxminq.analysis.classic_plots.nonfinite_note`), on one line; ``''``
    when every value is finite. ``left_out``: what the reader does with them (the toy
    claims' section: :data:`TOY_CLAIMS_LEFT_OUT`, of the runs they read)."""
    from maxminq.analysis import classic_plots as cp

    note = cp.nonfinite_note(toy, left_out, ("distance", "q_a_left"))
    return note.replace(":\n", ": ").replace("\n", "; ") + "." if note else ""


#: What the Mountain Car table and its best step sizes do with runs whose weights went
#: non-finite (:func:`mountain_car_nonfinite_note`); docs/report.md says the same.
MC_NONFINITE_RULE = (
    "Their last-episode steps count as recorded (what an agent acting on NaN or inf values "
    "did, often running to the step cap): the best step size per algorithm "
    "and σ² is chosen with them in, so a step size whose weights diverge is scored on all "
    "its runs, not on those that survived; a claim comparing such a setting counts them "
    "too (they are named under the claims)."
)


def _is_mc_nonfinite(rec: object) -> bool:
    """Whether the store record ``rec`` is a finished Mountain Car run whose registry note
    says some of its runs' weights went non-finite (the note a sweep writes from the final
    weights; a done run has no other note)."""
    from maxminq.experiments.registry import nonfinite_count

    return (
        getattr(rec, "kind", None) == "mountain_car"
        and getattr(rec, "status", None) == "done"
        and nonfinite_count(getattr(rec, "error", None)) is not None
    )


def _mc_run_ids(mc: pd.DataFrame, best: pd.DataFrame, keys: Sequence[str]) -> set[str]:
    """The run ids of ``mc`` (the Mountain Car rows) that make up the rows of ``best``."""
    if "run_id" not in mc.columns:
        return set()
    ids: set[str] = set()
    for _, row in best.iterrows():
        ids.update(T.select_setting(mc, row, keys)["run_id"].astype(str))
    return ids


def mountain_car_nonfinite_items(
    records: Sequence,
    mc: pd.DataFrame | None = None,
    best: pd.DataFrame | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """One text per Mountain Car run (a store record) some of whose runs' weights went
    non-finite (NaN or inf), which the steps table cannot show (an agent acting on NaN
    values keeps running its episodes, mostly to the step cap), read from the registry
    note the sweep wrote from the runs' final weights (as ``maxminq status`` and the
    sweep's summary name them): ``Q-learning at σ² = 10, step size 0.08: 50 of 50 runs
    (last episode at the 5,000-step cap in 47 of 50)``, in the table's order. The cap count
    comes from ``mc`` (the stored rows); a run among ``best`` (the table's rows, keyed by
    the Mountain Car keys and the ``extra`` settings the table splits) is marked. None for
    runs stored before sweeps wrote these notes."""
    from maxminq.experiments.registry import nonfinite_count

    gone = [r for r in records if _is_mc_nonfinite(r)]
    in_best: set[str] = set()
    if gone and mc is not None and best is not None and not best.empty:
        in_best = _mc_run_ids(mc, best, T.present_keys(best, [*T.MOUNTAIN_CAR_KEYS, *extra]))

    def order(rec: object) -> tuple:  # the table's: sigma^2, then the legend's order
        s = getattr(rec, "settings", {})
        return (
            float(s.get("sigma2") or 0),
            T.agent_rank(str(s.get("algorithm"))),
            str(s.get("algorithm")),
            float(s.get("n") or 0),
            style.params_key(s.get("op_kwargs")),
            float(s.get("step_size") or 0),
        )

    items = []
    for rec in sorted(gone, key=order):
        s = rec.settings
        name = style.label(str(s.get("algorithm")), s.get("n"))
        params = style.params_text(s.get("op_kwargs"))
        name += f" ({params})" if params else ""
        where = ", ".join(
            f"{text} {style.number_text(s[key])}"
            for key, text in (("sigma2", "σ² ="), ("step_size", "step size"))
            if isinstance(s.get(key), (int, float))
        )
        found = nonfinite_count(rec.error)
        runs = f"{found[0]} of {found[1]} run{'s' * (found[1] != '1')}" if found else rec.error
        capped = _runs_at_cap(mc, rec.run_id) if mc is not None else None
        if capped is not None:
            at, of, cap = capped
            runs += f" (last episode at the {style.integer(cap)}-step cap in {at} of {of})"
        best_mark = " (a best step size in the table)" if rec.run_id in in_best else ""
        items.append(f"{name} at {where}: {runs}{best_mark}")
    return items


def mountain_car_nonfinite_note(
    records: Sequence,
    mc: pd.DataFrame | None = None,
    best: pd.DataFrame | None = None,
    extra: Sequence[str] = (),
) -> str:
    """The note under the report's Mountain Car table naming its runs whose weights went
    non-finite (:func:`mountain_car_nonfinite_items`) and what the table and its best step
    sizes do with them (:data:`MC_NONFINITE_RULE`); ``''`` when none did."""
    items = mountain_car_nonfinite_items(records, mc, best, extra)
    if not items:
        return ""
    return (
        "**Runs whose weights went non-finite (NaN or inf)**, as the sweep noted them from "
        "their final weights (the step counts cannot show it): "
        + "; ".join(items)
        + ". "
        + MC_NONFINITE_RULE
    )


def _mc_claims_nonfinite(records: Sequence, tables: T.Tables) -> str:
    """The note under the Mountain Car claims naming the runs they compare (each
    algorithm's best at the highest σ², overall and at the largest step size:
    :func:`maxminq.analysis.claims.mountain_car_compared`) whose weights went non-finite;
    ``''`` when none did."""
    mc = tables.mountain_car
    if mc is None or mc.empty or "run_id" not in mc.columns:
        return ""
    compared = C.mountain_car_compared(mc)
    ids = _mc_run_ids(mc, compared, T.present_keys(compared, T.MOUNTAIN_CAR_KEYS))
    items = mountain_car_nonfinite_items([r for r in records if r.run_id in ids], mc)
    if not items:
        return ""
    return (
        "Runs compared here whose weights went non-finite (NaN or inf): "
        + "; ".join(items)
        + ". Their last-episode steps count as recorded (see the note under the Mountain "
        "Car table)."
    )


def _runs_at_cap(mc: pd.DataFrame, run_id: str) -> tuple[int, int, int] | None:
    """(runs whose last episode ran to the step cap, runs, the cap) of the stored run
    ``run_id`` in the Mountain Car rows ``mc``; None without its rows or a ``max_steps``
    column."""
    if "run_id" not in mc.columns or "max_steps" not in mc.columns:
        return None
    rows = mc[mc["run_id"].astype(str) == str(run_id)]
    if rows.empty or rows["max_steps"].isna().any():
        return None
    last = T.mountain_car_final(rows)  # the table's measure: each run's last episode
    cap = int(rows["max_steps"].iloc[0])
    return int((last["steps"] >= cap).sum()), len(last), cap


def _toy_nonfinite_lines(toy: pd.DataFrame) -> list[str]:
    """The settings :func:`toy_nonfinite_note` names, one text each."""
    from maxminq.analysis import classic_plots as cp

    note = cp.nonfinite_note(toy, TOY_LEFT_OUT, ("distance", "q_a_left"))
    return note.splitlines()[1:]


def _toy_table(
    toy: pd.DataFrame, extra: Sequence[str] = (), reps: int = 2000
) -> tuple[list[str], list[list[str]], pd.DataFrame]:
    """The toy MDP's final-performance table (head, rows) and its numbers (the summary CSV:
    per setting, each value's runs, mean, SE, IQM and IQM CI of ``reps`` bootstrap
    replicates, ``maxminq report --reps``, as the other tables; it drew 200 whatever
    ``--reps`` said)."""
    extra = T.present_keys(toy, extra)
    # from both columns, the runs its note (toy_nonfinite_note) names, as the claims do
    toy = T.without_nonfinite_runs(toy, extra)
    dist = T.toy_final(toy, "distance", extra=extra)
    qv = T.toy_final(toy, "q_a_left", extra=extra)
    keys = T.present_keys(dist, [*T.TOY_KEYS, *extra])
    sd = T.summarize(dist, keys, "distance", reps=reps)
    sq = T.summarize(qv, keys, "q_a_left", reps=reps)
    merged = sd.merge(sq, on=[*keys], suffixes=("_distance", "_q"))
    # Q(A, Left)'s true value is gamma * mu: mu at the paper's gamma = 1.
    other_gamma = not np.allclose(T.toy_gammas(toy), 1.0)
    size = _size_head(merged["algorithm"])
    head = [
        "μ",
        "algorithm",
        size,
        *extra,
        "runs",
        "final distance mean ± SE",
        f"final Q(A,Left) mean ± SE (true = {'γ·μ' if other_gamma else 'μ'})",
    ]
    rows = []
    order = merged.assign(**{k: _cell_order(merged[k]) for k in extra})
    order["_legend_rank"] = order["algorithm"].map(T.agent_rank)  # the figures' legend order
    order = order.sort_values(
        ["mu", "_legend_rank", "algorithm", "n", *extra],
        ascending=[False, True, True, True, *[True] * len(extra)],
    )
    for i in order.index:
        r = merged.loc[i]
        rows.append(
            [
                f"{r['mu']:+g}",
                style.label(r["algorithm"]),
                _size_cell(r["algorithm"], r.get("n"), size),
                *(_cell_text(r[k], k) for k in extra),
                str(int(r["runs_distance"])),
                f"{_f(r['mean_distance'])} ± {_f(r['se_distance'])}",
                f"{_f(r['mean_q'])} ± {_f(r['se_q'])}",
            ]
        )
    return head, rows, merged


# ----------------------------------------------------------------------------- rendering
def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out)


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def _md_inline(text: str) -> str:
    """Escape text for HTML, turning `code` and **bold** markers into tags."""
    import re

    t = html.escape(text)
    t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", t)


STATUS_CLASS = {C.SUPPORTED: "ok", C.NOT_SUPPORTED: "no", C.INSUFFICIENT: "na"}
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.92em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}
.note{background:#fff6d6;border-left:4px solid #e0a800;padding:0.6em 1em}
.ok{color:#1b7f1b;font-weight:600}.no{color:#b00020;font-weight:600}.na{color:#777;font-weight:600}
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:0.9em;color:#444}code{background:#f4f4f4;padding:0 3px}
li{margin:0.3em 0}.rule{color:#777;font-size:0.85em}
"""


class _Doc:
    """Builds the HTML and Markdown documents side by side from the same calls."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.md: list[str] = []
        self.html: list[str] = []

    def heading(self, text: str, level: int = 2) -> None:
        self.md.append(f"{'#' * level} {text}\n")
        self.html.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def para(self, text: str, cls: str | None = None) -> None:
        self.md.append(f"{'> ' if cls == 'note' else ''}{text}\n")
        c = f' class="{cls}"' if cls else ""
        self.html.append(f"<p{c}>{_md_inline(text)}</p>")

    def table(self, head: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.md.append(_md_table(head, rows) + "\n")
        self.html.append(_html_table(head, rows))

    def claims(self, claims: Sequence[C.Claim]) -> None:
        md, items = [], []
        for c in claims:
            md.append(
                f"- **{c.status}** — {c.text}"
                + (f": {c.evidence}" if c.evidence else "")
                + (f" *(rule: {c.rule})*" if c.rule else "")
            )
            items.append(
                f"<li><span class='{STATUS_CLASS.get(c.status, 'na')}'>"
                f"{html.escape(c.status)}</span> — {html.escape(c.text)}"
                + (f": {html.escape(c.evidence)}" if c.evidence else "")
                + (f" <span class='rule'>(rule: {html.escape(c.rule)})</span>" if c.rule else "")
                + "</li>"
            )
        self.md.append("\n".join(md) + "\n")
        self.html.append("<ul>" + "".join(items) + "</ul>")

    def figure(self, png: Path, title: str, caption: str) -> None:
        rel = os.path.relpath(png, self.out_dir).replace(os.sep, "/")
        self.md.append(f"**{title}**\n\n![{title}]({rel})\n\n{caption}\n")
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        self.html.append(
            f"<figure><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"
            f"<figcaption><strong>{html.escape(title)}.</strong> {html.escape(caption)}"
            "</figcaption></figure>"
        )

    def render_html(self, title: str) -> str:
        return (
            f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            + "\n".join(self.html)
            + "</body></html>\n"
        )


# ----------------------------------------------------------------------------- published runs
PUBLISHED_TITLE = "Published full-length runs (not re-run by this command)"
PUBLISHED_PANELS = ("return", "bias")  # as `maxminq plot --panels return,bias` draws them
PUBLISHED_CSV = "published_runs.csv"


@dataclass
class PublishedRuns:
    """The runs of ``--published`` (:func:`published_runs`): the folder given and its run
    folders, one list per environment."""

    root: Path
    groups: list[list[Path]]


def published_runs(root: Path) -> PublishedRuns:
    """The run folders of ``--published root`` (laid out as ``docs/runs/<env>/<run>/``, or
    ``<run>/`` directly in ``root``), grouped by environment (``env_id`` and ``env_kwargs``,
    a keyword at its default value as none, :func:`maxminq.analysis.compare.environment_kwargs`) in
    the paper's order, each group's runs in legend order (DQN, the baseline, first).

    Every run is read and scored as ``maxminq compare`` would, so a missing folder, a folder
    without runs or a damaged run is a one-line UsageError naming ``--published`` before
    any work; nothing is kept in memory or written.
    """
    from maxminq.analysis.compare import environment_kwargs, same_environment, score_runs
    from maxminq.analysis.runs import load_runs, run_settings
    from maxminq.errors import UsageError
    from maxminq.experiments.store import canonical_json

    expected = "a folder of 'maxminq train' run folders, as docs/runs"
    if not root.is_dir():
        raise UsageError(f"--published: {root} is not a folder (expected {expected})")
    if (root / "runs.csv").is_file():
        raise UsageError(f"--published: {root} is one run folder (expected {expected})")
    if (root / "results.sqlite").is_file():  # its runs are the report's own, not published
        raise UsageError(
            f"--published: {root} is a results folder of 'maxminq sweep' or 'reproduce' "
            f"(its runs are reported by 'maxminq report {root}'; expected {expected})"
        )
    folders = sorted(
        p.parent
        for pattern in ("*/runs.csv", "*/*/runs.csv")
        for p in root.glob(pattern)
        if p.is_file() and not (p.parent.parent / "runs.csv").is_file()  # not inside a run
    )
    if not folders:
        raise UsageError(
            f"--published: {root} holds no run folders (<env>/<run>/ with the runs.csv and "
            "config.json 'maxminq train' writes)"
        )
    for folder in folders:  # a sweep's stored run (manifest.json): not a run of its own
        if not (folder / "config.json").is_file() and (folder / "manifest.json").is_file():
            raise UsageError(
                f"--published: {folder} is a run stored by a sweep (manifest.json, no "
                "config.json), not a 'maxminq train' run (a sweep's runs are reported by "
                f"'maxminq report' of the sweep's folder; expected {expected})"
            )
    try:
        # one environment as compare tells it (same_environment: a keyword given at its
        # default value is none; -5 and -5.0 alike), keyed by its keywords not at defaults
        groups: dict[str, list[tuple[dict, Path]]] = {}
        for folder in folders:
            cfg = run_settings(folder)
            env, kwargs = cfg["env_id"], cfg.get("env_kwargs") or {}
            key = next(
                (
                    k
                    for k, members in groups.items()
                    if members[0][0]["env_id"] == env
                    and same_environment(env, members[0][0].get("env_kwargs") or {}, kwargs)[0]
                ),
                canonical_json([env, environment_kwargs(env, kwargs)]),
            )
            groups.setdefault(key, []).append((cfg, folder))
        out = []
        for key in sorted(groups, key=lambda k: (T.env_rank(json.loads(k)[0]), k)):
            runs = sorted(
                groups[key],
                key=lambda cf: (T.agent_rank(cf[0]["agent"]), cf[0]["n"], cf[0]["lr"], cf[1]),
            )
            paths = [folder for _, folder in runs]
            cfgs, tables = load_runs(paths)
            score_runs(paths, cfgs, tables)  # checks the columns and that every run has a score
            out.append(paths)
    except UsageError as err:  # the runs' own errors start 'RUN_DIR: '
        raise UsageError(f"--published: {str(err).removeprefix('RUN_DIR: ')}") from None
    return PublishedRuns(root, out)


def _published_rows(
    table: pd.DataFrame, root: Path, compare: bool
) -> tuple[list[str], list[list[str]]]:
    """The head and rows of one environment's table from :func:`compare_runs`'s numbers."""
    from maxminq.analysis.compare import row_texts

    scored = set(table["score"]) != {"test"}  # a run without test episodes: say so per row
    head = ["run", "folder", "step size", "steps", "seeds", *["score"] * scored]
    head += ["mean ± SE", "IQM [95% CI]", "bias ± SE (2nd half)"]
    head += ["diff vs DQN", "Welch p", "P(improve)"] * compare
    rows = []
    for r in table.to_dict("records"):
        t = row_texts(r, "±")
        row = [r["run"], Path(r["folder"]).relative_to(root).as_posix(), f"{r['lr']:g}"]
        row += [style.integer(r["steps"]) if np.isfinite(r["steps"]) else "?", t["seeds"]]
        row += [*[r["score"]] * scored, t["mean"], t["iqm"], t["bias"]]
        row += [t["diff"], t["p"], t["p_improve"]] * compare
        rows.append(row)
    return head, rows


def _range(values: Sequence[int], noun: str) -> str:
    """``1 seed``, ``3 to 4 seeds``, ``? steps`` without a value."""
    if not values:
        return f"? {noun}s"
    low, high = min(values), max(values)
    return f"{low:,}{f' to {high:,}' * (low != high)} {noun}{'s' * (high != 1)}"


def _published_section(
    doc: _Doc, published: PublishedRuns, fig_dir: Path, summary_dir: Path
) -> list[str]:
    """The section of the ``--published`` runs: per environment
    the table of :func:`maxminq.analysis.compare.compare_runs` against DQN where DQN is among
    them, and the runs' training return and bias as ``maxminq plot`` draws them (figures in
    ``fig_dir/published``). Returns one line per environment."""

    from maxminq.analysis.compare import (
        REPS,
        compare_warnings,
        comparison_table,
        environment_kwargs,
        score_runs,
    )
    from maxminq.analysis.runs import colour_key, load_runs, param_shades, run_settings
    from maxminq.analysis.style import count
    from maxminq.errors import UsageError

    root, groups = published.root, published.groups
    doc.heading(PUBLISHED_TITLE)
    cfgs = [[run_settings(folder) for folder in folders] for folders in groups]
    every = [c for group in cfgs for c in group]
    lengths = [c["steps"] for c in every if isinstance(c.get("steps"), int)]
    doc.para(
        f"The {count(len(every), 'run')} on {count(len(groups), 'environment')} below were "
        f"**not trained by this command**: they are finished `maxminq train` runs read from "
        f"`{root}`, {_range(lengths, 'step')} and "
        f"{_range([len(c['seeds']) for c in every], 'seed')} each (each table gives its "
        "runs'), shown to judge the deep agents at full length beside this folder's runs. "
        "**The paper's protocol differs**: it swept the step size of every agent and "
        "averaged 20 runs per setting; these are one step size per run with a few seeds, so "
        "the intervals are wide and a p-value near 0.05 is suggestive, not conclusive. The "
        "claims above are checked on this folder's runs only, not on these.",
        cls="note",
    )
    doc.para(
        "Per seed, the score is the mean return of its test episodes after training (a run "
        "without them: its last-100-episode training average). Per run: mean ± SE over "
        f"seeds; IQM with a 95% stratified bootstrap CI ({REPS} resamples, seed 0; with a few "
        "seeds it is narrower than its 95%"
        + (
            "; with fewer than 4 seeds it trims none: the mean"
            if any(len(c["seeds"]) < 4 for group in cfgs for c in group)
            else ""
        )
        + "); bias: measured estimate − MC return of the "
        "probes in the metrics intervals starting at or after the midpoint of training, "
        "mean ± SE over seeds. Against DQN (where a DQN run is among them): difference of "
        "means, Welch's two-sided t-test p and P(improve) = P(X > Y) + 0.5 P(X = Y) over "
        "seed pairs, not corrected for multiple comparisons. These are the numbers of "
        "`maxminq compare` on the same folders (unrounded in "
        f"`summary/{PUBLISHED_CSV}`); the figures draw the runs as `maxminq plot --panels "
        "return,bias` does."
    )
    lines: list[str] = []
    frames: list[pd.DataFrame] = []
    names: set[str] = set()
    for folders, group in zip(groups, cfgs, strict=True):
        # the group's keywords as it is told by (published_runs): none given at its default
        kwargs = environment_kwargs(group[0]["env_id"], group[0].get("env_kwargs") or {})
        env = group[0]["env_id"] + (f" {json.dumps(kwargs)}" if kwargs else "")
        doc.heading(env, 3)
        compare = len(folders) > 1 and group[0]["agent"] == "dqn"  # sorted: DQN first
        try:
            # compare_runs's table, from the one reading the figure draws too
            read, tables = load_runs(list(folders))
            with compare_warnings() as cautions:
                scores = score_runs(folders, read, tables)
                table = comparison_table(folders, read, tables, scores, baseline=1)
            loaded = zip(table["run"], read, tables, strict=True)
            # coloured as maxminq plot colours them: a G by its own colour (runs.colour_key),
            # its parameter settings in shades of it (runs.param_shades)
            runs = [(label, colour_key(cfg), t) for label, cfg, t in loaded]
            shades = param_shades(read)
        except UsageError as err:  # read at the start; changed since (e.g. during a sweep)
            doc.para(f"Not shown, its runs no longer read: {err}", cls="note")
            continue
        frames.append(table)
        if compare:
            doc.para(f"Against DQN (`{Path(folders[0]).relative_to(root).as_posix()}`).")
        else:
            doc.para("One run: no tests." if len(folders) == 1 else "No DQN run: no tests.")
        doc.table(*_published_rows(table, root, compare))
        for text in cautions:
            doc.para(f"Caution: {text}.", cls="note")
        steps = sorted({c["steps"] for c in group if isinstance(c.get("steps"), int)})
        seeds = sorted({len(c["seeds"]) for c in group})
        title = (
            f"{T.env_title(group[0]['env_id'])}, published runs: "
            f"{'/'.join(f'{s:,}' for s in steps)} steps, "
            f"{'/'.join(map(str, seeds))} seeds per run"
        )
        # a file name on every system: 'my_envs:Corridor-v0' has a colon
        base = name = re.sub(r"[^a-z0-9._-]+", "_", T.env_title(group[0]["env_id"]).lower())
        while name in names:  # one environment with two sets of env_kwargs
            name = f"{base}_{len(names)}"
        names.add(name)
        figure = F.fig_training_runs(
            runs,
            title,
            fig_dir / "published",
            name,
            PUBLISHED_PANELS,
            max(steps, default=None),
            shades,
        )
        if figure is not None and figure.png is not None:
            doc.figure(figure.png, title, figure.caption)
        runs_text = style.count(len(folders), "run")
        lines.append(f"{env}: {runs_text}" + (", against DQN" if compare else ""))
    if frames:
        _write_csv(pd.concat(frames, ignore_index=True), summary_dir / PUBLISHED_CSV)
    return lines


#: The names of the figures the report draws itself begin with these (``make_figures``).
REPORT_FIGURE_PREFIXES = ("deep_", "toy_mdp_", "mountain_car_")


def _remove_stale_figures(fig_dir: Path, figures: Sequence[F.FigureFile]) -> None:
    """Delete the report's own figures (by :data:`REPORT_FIGURE_PREFIXES`) that an earlier
    report wrote and this one did not (its data no longer allow them, or drawing failed):
    they would be listed as 'Additional figure found in the results folder' and pass for
    figures of these results. Other files in ``fig_dir`` (a user's own) are kept."""
    written = {p.name for f in figures for p in f.paths}
    if not fig_dir.is_dir():
        return
    for path in fig_dir.iterdir():
        if (
            path.is_file()
            and path.suffix in (".png", ".svg")
            and path.name.startswith(REPORT_FIGURE_PREFIXES)
            and path.name not in written
        ):
            path.unlink(missing_ok=True)


#: The summary tables the report writes (``summary/``), the published runs' one included.
SUMMARY_TABLES = ("toy_mdp_final.csv", "mountain_car_final.csv", "deep_final.csv", PUBLISHED_CSV)


def remove_killed_report_writes(out_dir: Path) -> None:
    """Delete the hidden temporaries (``.NAME.XXXXXXXX.tmp``) of the report's own outputs
    that a report killed while writing them (kill -9) left: report.md and report.html, the
    summary tables, and the figures named by :data:`REPORT_FIGURE_PREFIXES` (those in
    ``figures/published`` go with the folder). A user's files and other commands'
    temporaries stay (``store.remove_stale_temporaries``)."""
    from maxminq.experiments.store import remove_stale_temporaries

    paths = [out_dir / "report.md", out_dir / "report.html"]
    paths += [out_dir / "summary" / name for name in SUMMARY_TABLES]
    fig_dir = out_dir / "figures"
    if fig_dir.is_dir():  # figure names vary with the data: read them off the temporaries
        for tmp in fig_dir.glob(".*.tmp"):
            name = tmp.name[1:].rsplit(".", 2)[0]  # .deep_x.png.k2j4_a9z.tmp -> deep_x.png
            if name.startswith(REPORT_FIGURE_PREFIXES) and name.endswith((".png", ".svg")):
                paths.append(fig_dir / name)
    remove_stale_temporaries(paths)


# ----------------------------------------------------------------------------- main entry
def build_report(
    out_dir: str | Path,
    *,
    results: dict[str, pd.DataFrame] | None = None,
    theory_dir: str | Path | None = None,
    reps: int = 2000,
    published: PublishedRuns | None = None,
) -> Report:
    """Write figures, summary CSVs, ``report.html`` and ``report.md`` for ``out_dir``.

    Args:
        out_dir: the results folder (holds ``results.sqlite``); outputs go here too.
        results: the store's tables (default: read with ``load_results(out_dir)``).
        theory_dir: where the theory command wrote its files (default ``out_dir/theory``).
        reps: bootstrap replicates for the IQM confidence intervals.
        published: finished runs trained elsewhere (:func:`published_runs`), given their own
            section; they enter no claim, table or figure of ``out_dir``'s runs.
    """
    out_dir = Path(out_dir)
    remove_killed_report_writes(out_dir)
    results = load_store(out_dir) if results is None else results
    theory_dir = Path(theory_dir) if theory_dir is not None else out_dir / "theory"
    meta = read_meta(out_dir)
    tables = T.classify(results)
    fig_dir = out_dir / "figures"
    summary_dir = out_dir / "summary"

    deep_summary = T.deep_summary(tables, reps=reps) if tables.has_deep else pd.DataFrame()
    unchecked = C.sections_without_data(tables, theory_dir)
    records = _result_records(out_dir, results)  # read once: cautions, claims, settings
    split = split_settings(records)
    claim_tables, claim_defaults = tables, {}
    figure_tables = tables
    parts = {"toy_mdp": ["toy"], "mountain_car": ["mountain_car"]}
    parts["deep"] = ["episodes", "tests", "metrics", "runs"]  # the first decides, as scored
    for kind, attrs in parts.items():
        used = None
        drawn = [k for k in split.get(kind, []) if k not in DRAWN_APART]
        for attr in attrs:
            df = getattr(tables, attr)
            if df is not None and split.get(kind):
                kept, used = at_defaults(df, kind, split[kind], used)
                claim_tables = dataclasses.replace(claim_tables, **{attr: kept})
                figure_tables = dataclasses.replace(
                    figure_tables,
                    **{attr: at_defaults(df, kind, drawn, _without(used, DRAWN_APART))[0]},
                )
        if used is not None:
            claim_defaults[kind] = used
    # The figures show what the claims check: the runs at the default of a split setting
    # (a curve of u = 1 and u = 2 pooled, or of two gammas, is no experiment's); not of an
    # operator's parameters, which the figures draw apart (Weighted Double Q c = 1 and 10).
    figure_summary = deep_summary
    if figure_tables is not tables and figure_tables.has_deep:
        figure_summary = T.deep_summary(figure_tables, reps=reps)
    figure_errors: list[str] = []
    figures = F.make_figures(
        figure_tables, fig_dir, deep_summary=figure_summary, errors=figure_errors
    )
    _remove_stale_figures(fig_dir, figures)
    # The deep table: a row per setting and value of a setting that tells runs apart
    # (split), whose intervals the deep claims quote for the same runs.
    split_extra: list[str] = []
    split_summary = deep_summary
    if not deep_summary.empty and tables.episodes is not None:
        split_extra = T.present_keys(tables.episodes, split.get("deep", ()))
        if split_extra:
            split_summary = T.deep_summary(tables, reps=reps, extra=split_extra)
    claims = [
        c
        for c in C.all_claims(claim_tables, theory_dir, reps=reps, deep_table=split_summary)
        if c.section not in unchecked
    ]
    scale = infer_scale(results, meta)

    configs_meta = [c for c in meta.get("configs", []) if isinstance(c, dict) and "name" in c]
    has_paper = any(isinstance(c.get("paper"), str) for c in configs_meta)
    doc = _Doc(out_dir)
    title = "maxminq reproduction report"
    doc.heading(title, 1)
    # The reproduction's end and this report's writing: 'maxminq report DIR' rewrites the
    # report of an old reproduction (e.g. with --published), which 'Written <its end>' hid.
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stamp = f"Written {now}" + (
        f"; the reproduction finished {meta['finished']}" if meta.get("finished") else ""
    )
    doc.para(
        f"Maxmin Q-learning (Lan, Pan, Fyshe and White, ICLR 2020), reproduced with "
        f"`maxminq`. Results folder: `{out_dir}`. Scale: **{scale}**. {stamp}."
    )
    if meta.get("command"):
        doc.para(f"Command: `{meta['command']}`")
    if meta.get("software"):  # what the runs computed with: a reader's first question
        doc.para(software_line(meta["software"]))
    if scale == "quick":
        toy, mountain_car, deep, theory = (part not in unchecked for part in QUICK_PARTS)
        doc.para(
            quick_note(toy, mountain_car, deep, theory, paper=has_paper or not configs_meta)
            + (" 'Settings and scale' lists how each config's paper scale differs." * has_paper)
            + (
                f" Full-length deep runs trained elsewhere: '{PUBLISHED_TITLE}' below."
                * bool(published)
            ),
            cls="note",
        )
    outside = _outside_paper(tables)
    if outside:
        them = "it" if len(outside) == 1 else "them"
        doc.para(OUTSIDE_NOTE.format(envs=", ".join(outside), them=them), cls="note")
    short = _shorter_than_paper(tables) if scale != "quick" else []
    if short:
        doc.para(SHORT_NOTE.format(runs="; ".join(short)), cls="note")
    unfinished = bool(meta.get("started")) and not meta.get("finished")
    if unfinished:  # e.g. Ctrl-C: this report must not pass for the complete one
        doc.para(UNFINISHED_NOTE.format(started=meta["started"]), cls="note")
    without_results = _runs_without_results(out_dir)
    if without_results:
        doc.para(
            "**Caution: not every run registered in this folder has results:** "
            + ", ".join(f"{n} {status}" for status, n in without_results.items())
            + ". They are missing from the tables, claims and figures below (`maxminq status "
            "DIR` lists them; "
            + "; ".join(
                text
                for text, shown in [
                    (
                        "rerunning the sweep completes pending and failed runs",
                        set(without_results) - {EARLIER_VERSION, OTHER_SHARDS},
                    ),
                    (
                        "those of an earlier version are runs that no config as last swept "
                        "here makes (edited, at another scale, or resolved otherwise by an "
                        "older maxminq), which rerunning the sweep does not run",
                        EARLIER_VERSION in without_results,
                    ),
                    (
                        "those of other shards are the runs of the other machines of a sweep "
                        "split with --shard, which 'maxminq merge' brings together with "
                        "this folder",
                        OTHER_SHARDS in without_results,
                    ),
                ]
                if shown
            )
            + ").",
            cls="note",
        )
    unreadable = _unreadable_runs(out_dir, results)
    if unreadable:
        doc.para(
            f"**Caution: {style.count(len(unreadable), 'finished run')} of this folder failed "
            "verification and "
            + ("is" if len(unreadable) == 1 else "are")
            + " left out** of the tables, claims and figures below ("
            + ", ".join(unreadable[:5])
            + (", ..." if len(unreadable) > 5 else "")
            + "): their files differ from their manifests. `maxminq status DIR --verify` "
            "says why; rerunning the sweep runs them again.",
            cls="note",
        )
    pooled = pooled_differences(records)
    pooled_alike = pooled_summary(records)
    restricted = claim_restrictions(claim_defaults)
    if pooled:
        doc.para(
            "**Caution: runs of different experiments are pooled.** The tables, claims and "
            "figures key their rows by "
            + "; ".join(f"{k} ({', '.join(v)})" for k, v in _keys_named(records).items())
            + ", but this folder holds runs with the same keys that differ in other settings: "
            + " | ".join(pooled_alike)
            + ". "
            + (
                "The final-performance tables give each value of "
                + "; ".join(f"{k}: {', '.join(v)}" for k, v in split.items())
                + " its own rows. "
                if split
                else "The tables, claims and figures pool such runs. "
            )
            + "".join(f"{line[0].upper()}{line[1:]}. " for line in restricted)
            + (
                "Where no run is at a setting's default, the claims and figures pool its values. "
                if split
                else ""
            )
            + "Write each configuration to its own `--out` folder for numbers that "
            "describe one experiment.",
            cls="note",
        )
    elif restricted:  # an operator's parameters alone: nothing pooled, the claims kept apart
        doc.para("".join(f"{line[0].upper()}{line[1:]}. " for line in restricted), cls="note")

    doc.heading("Claims checked against these results")
    doc.para(
        "Each verdict is computed from the data below by the stated rule; "
        "'insufficient data' means the results needed for the check are missing or have "
        f"fewer than {C.MIN_RUNS} runs"
        + (
            ""
            if "Theory" in unchecked
            else f" (the theory checks: fewer than {C.MIN_MC_SAMPLES:,} Monte-Carlo samples "
            f"per bias cell or {C.MIN_MC_VARIANCE_SAMPLES:,} for the variance ratio)"
        )
        + ". A claim 'A ≥ B' (deep RL) "
        "is supported only when A's IQM is at least B's and A's 95% CI does not lie "
        "entirely below B's; overlapping CIs alone are no support, so a lower IQM is "
        "'not supported' even within noise. "
        "'A below B' needs the 95% interval of the difference of means (Welch's, Student's t "
        "quantile) on the claimed side. " + SELECTION_NOTE
    )
    counts = {s: sum(c.status == s for c in claims) for s in STATUS_CLASS}
    doc.para("In total: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + ".")
    if unchecked:
        doc.para(
            f"Not checked, no data in this folder: {', '.join(unchecked)} "
            "(run the matching configs or `maxminq theory` into it to check them)."
        )
    for section in dict.fromkeys(c.section for c in claims):
        part = [c for c in claims if c.section == section]
        n_ok = sum(c.status == C.SUPPORTED for c in part)
        n_na = sum(c.status == C.INSUFFICIENT for c in part)
        # '0 of 32 supported' alone reads as 32 failures where none was decided (quick scale)
        undecided = f", {n_na} with insufficient data" if n_na else ""
        doc.heading(f"{section} ({n_ok} of {len(part)} supported{undecided})", 3)
        decided = [c for c in part if c.status != C.INSUFFICIENT]
        if decided:
            doc.claims(decided)
        if section == "Toy MDP" and claim_tables.toy is not None:
            # their run counts alone ('5 vs 6 runs') did not say why runs were missing
            toy_gone = toy_nonfinite_note(claim_tables.toy, TOY_CLAIMS_LEFT_OUT)
            if toy_gone:
                doc.para(toy_gone, cls="note")
        if section == "Mountain Car":  # the runs compared at the highest sigma^2
            compared = _mc_claims_nonfinite(records, claim_tables)
            if compared:
                doc.para(compared, cls="note")
        missing = [c for c in part if c.status == C.INSUFFICIENT]
        if missing:
            # One line for all undecidable checks keeps quick-scale reports readable.
            doc.para(
                f"**{C.INSUFFICIENT}** for {len(missing)} check(s): "
                + "; ".join(f"{c.text} ({c.evidence})" for c in missing)
                + "."
                + (
                    RUNS_HINT.format(runs=PAPER_RUNS.get(section, "more runs per setting"))
                    if any(_wants_seeds(c) for c in missing)
                    else ""
                )
            )

    doc.heading("Settings and scale")
    rows = _settings_rows(records)
    if meta.get("configs"):
        timing = {c["name"]: c for c in meta["configs"] if isinstance(c, dict) and "name" in c}
        head = ["config", "run ids", "seeds/runs", "settings", "run time (sum)"]
        for r in rows:
            t = timing.get(r[0])
            r.append(f"{t['run_seconds']:.0f} s" if t and "run_seconds" in t else "")
        papers = {name: t["paper"] for name, t in timing.items() if isinstance(t.get("paper"), str)}
        if papers:  # a scale other than paper: how the config's paper scale differs
            head.append(PAPER_COLUMN)
            for r in rows:
                r.append(papers.get(r[0], ""))
        doc.table(head, rows)
        if papers:
            doc.para(PAPER_NOTE)
    elif rows:
        doc.table(["config", "run ids", "seeds/runs", "settings"], rows)
    else:
        doc.para("No results found in the store.")
    if meta.get("seconds") is not None:
        doc.para(
            f"Total wall time: {meta['seconds'] / 60:.1f} min"
            + (f" on {meta['machine']}" if meta.get("machine") else "")
            + "."
        )

    doc.heading("Final performance")
    nonfinite: list[str] = []
    if tables.toy is not None and not tables.toy.empty:
        head, rows, merged = _toy_table(tables.toy, split.get("toy_mdp", ()), reps)
        _write_csv(merged, summary_dir / SUMMARY_TABLES[0])
        doc.heading("Toy MDP (average over the last 10% of episodes)", 3)
        doc.table(head, rows)
        gone = toy_nonfinite_note(tables.toy)
        if gone:
            doc.para(gone, cls="note")
            nonfinite += [f"toy MDP: {line}" for line in _toy_nonfinite_lines(tables.toy)]
    if tables.mountain_car is not None and not tables.mountain_car.empty:
        mc_extra = T.present_keys(tables.mountain_car, split.get("mountain_car", ()))
        mcs = T.mountain_car_summary(tables.mountain_car, reps=reps, extra=mc_extra)
        _write_csv(mcs, summary_dir / SUMMARY_TABLES[1])
        doc.heading("Mountain Car (steps in the last training episode; fewer is better)", 3)
        mc_best = T.mountain_car_best(mcs, mc_extra)
        doc.table(*_mc_table(mc_best, mc_extra))
        doc.para(mountain_car_best_rule(mcs))
        mc_gone = mountain_car_nonfinite_note(records, tables.mountain_car, mc_best, mc_extra)
        if mc_gone:
            doc.para(mc_gone, cls="note")
            items = mountain_car_nonfinite_items(records, tables.mountain_car, mc_best, mc_extra)
            nonfinite += [f"Mountain Car, weights gone non-finite: {item}" for item in items]
    if not deep_summary.empty:
        assert tables.episodes is not None  # a deep summary comes from them
        # a generalized-dqn run's G keys its rows (T.DEEP_KEYS): its columns name it
        ops = [
            k
            for k in T.present_keys(tables.episodes, T.DEEP_OPERATOR_KEYS)
            if tables.episodes[k].notna().any()
        ]
        deep_extra = list(dict.fromkeys([*ops, *split_extra]))
        _write_csv(split_summary, summary_dir / SUMMARY_TABLES[2])
        doc.heading("Deep RL (best setting per agent; test return, higher is better)", 3)
        deep_best = T.deep_best(split_summary, extra=deep_extra)
        doc.table(*_deep_table(deep_best, deep_extra))
        doc.para(
            f"Final performance = mean return of the test episodes ({_test_counts(tables.tests)}) "
            "after training, or the last-100-episode training average where no test was run. "
            "IQM = interquartile mean over runs with a stratified percentile bootstrap "
            "95% CI; with few runs (under about 10) such an interval is narrower than its 95% "
            "(it cannot reach past the runs observed): read it as a rough range. "
            + _iqm_of_few(deep_best["runs"])
            + deep_best_rule(split_summary, deep_extra)
            + _deep_score_sources(T.deep_final_scores(tables), tables.runs)
            + "All settings: `summary/deep_final.csv`."
        )

    # An earlier report's published-runs files would otherwise outlive a report without them.
    shutil.rmtree(fig_dir / "published", ignore_errors=True)
    (summary_dir / PUBLISHED_CSV).unlink(missing_ok=True)
    published_lines = _published_section(doc, published, fig_dir, summary_dir) if published else []

    doc.heading("Figures")
    shown = {f.png for f in figures if f.png is not None}
    for name, (ftitle, _) in THEORY_FIGURES.items():
        p = theory_dir / f"{name}.png"
        if p.is_file():
            doc.figure(p, ftitle, theory_caption(theory_dir, name))
            shown.add(p)
    for f in figures:
        if f.png is not None:
            doc.figure(f.png, f.title, f.caption)
    extra = sorted(
        p for d in (fig_dir, theory_dir) if d.is_dir() for p in d.glob("*.png") if p not in shown
    )
    for p in extra:
        doc.figure(p, p.stem.replace("_", " "), "Additional figure found in the results folder.")
    for err in figure_errors:
        doc.para(f"Figure not drawn: {err}", cls="note")
    if not shown and not extra:
        doc.para("No figures: the results folder holds no data to plot.")

    html_path, md_path = out_dir / "report.html", out_dir / "report.md"
    _atomic_write(md_path, "\n".join(doc.md))
    _atomic_write(html_path, doc.render_html(title))
    return Report(
        html_path,
        md_path,
        figures,
        claims,
        unchecked,
        pooled,
        restricted,
        unfinished,
        without_results,
        unreadable,
        published_lines,
        pooled_alike,
        outside,
        short,
        nonfinite,
    )
