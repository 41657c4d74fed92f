"""``maxminq sweep CONFIG``: run or resume a sweep config into a results folder."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maxminq.cli import hangup_as_terminate
from maxminq.errors import UsageError, ascii_int, closest

# What cli.main adds to "interrupted" after Ctrl-C: the store keeps every finished run.
RESUME_HINT = "finished runs are kept: the same command resumes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq sweep``."""
    parser.add_argument(
        "config", metavar="CONFIG", help="sweep config file (YAML), e.g. configs/toy_mdp.yaml"
    )
    parser.add_argument(
        "--scale",
        default="quick",
        help="scale defined in the config: quick (default), paper, or one of its own (the "
        "feature-environment configs: best, each agent at its posted setting, full length)",
    )
    parser.add_argument("--backend", default="local", help="local (process pool, default) or ray")
    parser.add_argument(
        "--workers", type=str, default=None, help="parallel runs (default: number of cores)"
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster address (with --backend ray), e.g. auto (default: a Ray of its own)",
    )
    parser.add_argument(
        "--out", default=None, help="results folder (default: results/<config name>)"
    )
    parser.add_argument(
        "--keep-work", action="store_true", help="keep each finished run's checkpoint folder"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--shard",
        default=None,
        metavar="K/M",
        help="run only shard K of M of the config's runs (the same split on every "
        "machine), e.g. --shard 1/2 here and --shard 2/2 on another machine; then "
        "'maxminq merge' brings their folders together (default: all runs; docs/sweeps.md)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the config and print what would run (runs, how many are already done "
        "in --out, total work), then stop",
    )


def parse_workers(text: str | None) -> int | None:
    """``--workers`` as an integer >= 1 (None: one per core)."""
    if text is None:
        return None
    try:  # worded as 'maxminq experiment --workers' words it
        value = ascii_int(text)
    except ValueError:
        raise UsageError(f"--workers: expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise UsageError(f"--workers: expected a whole number >= 1, got {text!r}")
    return value


def warn_many_workers(command: str, workers: int | None) -> None:
    """Warn on stderr of more local ``workers`` than this machine has cores: each is a
    process of its own (numpy, numba, torch: hundreds of MB), started as work needs one, so
    a typo such as --workers 200 would start 200 of them, and more than the cores slow each
    other down. For ``sweep``, ``reproduce`` (local backend) and ``experiment``."""
    cores = os.cpu_count() or 1
    if workers is not None and workers > cores:
        print(
            f"maxminq {command}: warning: --workers {workers} is more than this machine's "
            f"{cores} cores: each worker is a process with its own memory, and they slow each "
            "other down",
            file=sys.stderr,
        )


def work_units(runs: Sequence[Any]) -> str:
    """The total work of ``runs`` in the units that set its cost: seed-steps for deep runs
    (all seeds of a run train together), episodes (runs x episodes) for tabular ones."""
    steps = sum(r.settings["steps"] * len(r.settings["seeds"]) for r in runs if r.kind == "deep")
    episodes = sum(
        r.settings["runs"] * r.settings["episodes"]
        for r in runs
        if r.kind != "deep" and "runs" in r.settings and "episodes" in r.settings
    )
    parts = [f"{steps:,} seed-steps"] if steps else []
    parts += [f"{episodes:,} episodes"] if episodes else []
    return " and ".join(parts) or "nothing"


def dry_run(config: Any, out: Path, shard: Any = None) -> str:
    """What ``maxminq sweep`` would do, without writing anything: run counts (finished ones
    in ``out`` are skipped, as the sweep decides: :meth:`ResultsStore.finished`) and the
    total work left; with a ``shard`` (:class:`maxminq.experiments.shard.Shard`) those of
    its runs, then one line per run of the shard (id, the settings that vary in the
    config, done or to run)."""
    from maxminq.experiments.runner import adopt_stored_ids
    from maxminq.experiments.shard import check_folder_shard, shard_runs
    from maxminq.experiments.store import (
        TABLES_DIR,
        WORK_DIR,
        ResultsStore,
        holds_progress,
        verify_run_tables,
    )

    finished: set[str] = set()
    registered: set[str] = set()
    every = list(config.runs)
    mine = {run.run_id for run in shard_runs(every, shard)}
    runs = every
    db = out / "results.sqlite"
    if db.is_file() and db.stat().st_size:  # emptied (0 bytes): the sweep sets it up anew
        with ResultsStore(out, create=False) as store:
            check_folder_shard(store, config.name, shard, every)  # as the sweep will
            runs = adopt_stored_ids(store, runs)  # as the sweep will
            for run in runs:
                rec = store.get(run.run_id)
                registered.update([run.run_id] if rec else [])
                finished.update([run.run_id] if store.finished(rec)[0] else [])
    # the shard's runs, under the ids the folder holds them by (as the sweep takes them)
    runs = [a for a, run in zip(runs, every, strict=True) if run.run_id in mine]
    # A run without a row (a lost registry) is registered pending by the sweep, which takes
    # it as finished when its tables verify (ResultsStore.finished).
    finished.update(
        run.run_id
        for run in runs
        if run.run_id not in registered
        and verify_run_tables(out / TABLES_DIR / run.run_id, run.run_id) is None
    )
    todo = [r for r in runs if r.run_id not in finished]
    # of this shard's runs only (a merged folder, which takes any --shard, has the other
    # shards' runs finished too: they were counted, '3 of its 6 runs, 6 already done')
    done = len(runs) - len(todo)
    total = len(runs)
    head = f"{config.name} [{config.scale}]: {total} run{'s' if total != 1 else ''}"
    if shard is not None:
        head = (
            f"{config.name} [{config.scale}] shard {shard.text}: {total} of its {len(every)} runs"
        )
    # After Ctrl-C (or a kill): runs that continue from their scratch folder (a checkpoint)
    # rather than start over; the work counted is still their whole length.
    resumed = sum(holds_progress(out / WORK_DIR / r.run_id) for r in todo)
    resume = f", {resumed} of them from a checkpoint in {out / WORK_DIR}" if resumed else ""
    line = (
        f"{head}, {done} already done in {out}, {len(todo)} to run{resume}: "
        f"{work_units(todo)} (dry run: nothing started)"
    )
    if shard is None:
        return line
    from maxminq.commands.status import _text, varying_keys

    keys = varying_keys([run.settings for run in every])
    lines = [line]
    for run in runs:
        shown = " ".join(f"{k}={_text(run.settings[k])}" for k in keys if k in run.settings)
        state = "done" if run.run_id in finished else "to run"
        lines.append(f"  {run.run_id}  {shown}  ({state})".replace("    (", "  ("))
    return "\n".join(lines)


def stale_run_ids(out: Path, configs: list[Any]) -> set[str]:
    """Runs ``out`` holds under these configs' names that none of them makes (at its scale):
    swept before an edit, at another scale, or by an older maxminq that resolved the
    config's settings otherwise (a default filled in since). They stay in the folder and
    are listed under that name by ``maxminq status``, ``load_results`` and the report
    (``maxminq reproduce``'s report leaves them out). None without a readable store: a
    first sweep sets it up, and refuses a damaged one in one line."""
    return set(stale_runs(out, configs))


def stale_runs(out: Path, configs: list[Any]) -> dict[str, dict[str, Any]]:
    """:func:`stale_run_ids` with each run's stored settings."""
    if not (out / "results.sqlite").is_file():
        return {}
    from maxminq.experiments.runner import adopt_stored_ids
    from maxminq.experiments.store import ResultsStore, StoreError

    try:
        store = ResultsStore(out, create=False)
    except StoreError:  # e.g. a first sweep killed before its schema was written
        return {}
    with store:
        # a run stored under its older id is the config's (as the sweep takes it)
        made = {run.run_id for config in configs for run in config.runs}
        made |= {
            run.run_id for config in configs for run in adopt_stored_ids(store, list(config.runs))
        }
        return {
            rec.run_id: rec.settings
            for config in configs
            for rec in store.records(config.name)
            if rec.run_id not in made
        }


def _value_text(value: Any) -> str:
    """A setting's value as the config writes it (JSON: numbers, lists, mappings, true),
    whole numbers stored as floats without their ``.0`` (``op_kwargs: {c: 10}`` is stored
    as ``{"c": 10.0}``: shown ``{"c": 10}``)."""
    if value is _UNSET:
        return "unset"
    return value if isinstance(value, str) else json.dumps(_as_written(value), sort_keys=True)


def _as_written(value: Any) -> Any:
    """``value`` with every whole float (``10.0``, below 1e15) an int, in lists and mappings."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if isinstance(value, dict):
        return {k: _as_written(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_written(v) for v in value]
    return value


_UNSET = object()  # a setting a run does not store (left at its run function's default)


def edit_differences(
    old: Sequence[dict[str, Any]],
    new: Sequence[dict[str, Any]],
    most: int = 4,
    label: str = "this config",
) -> list[str]:
    """What the runs a config no longer makes (``old``, e.g. swept before an edit) have that
    its runs (``new``) do not: per setting, the values only the old runs take, then the
    config's values (``episodes 20 (this config: 30)``; a value removed from a list:
    ``step_size 0.04 (this config: 0.02, 0.08)``). Settings that cannot change a run's
    results (a deep run's ``checkpoint_every``, ``tensorboard``) are left out; at most
    ``most`` settings, then how many more. ``label`` names the runs ``new`` are (``this
    config``; ``maxminq merge``: the folder they are in)."""
    from maxminq.experiments.registry import RESULT_NEUTRAL_DEEP

    names = sorted(set().union(*old, *new) - set(RESULT_NEUTRAL_DEEP))
    lines = []
    for name in names:
        before = {_value_text(s.get(name, _UNSET)) for s in old}
        now = {_value_text(s.get(name, _UNSET)) for s in new}
        if before - now:
            lines.append(
                f"{name} {', '.join(sorted(before - now))} ({label}: "
                f"{', '.join(sorted(now)) or 'none'})"
            )
    if len(lines) > most:
        lines = [*lines[:most], f"{len(lines) - most} more setting(s)"]
    return lines


def stale_note(out: Path, config: Any) -> str | None:
    """The note a sweep prints when ``out`` holds runs of this config's name that it does not
    make (an edited config, another scale, settings an older maxminq resolved otherwise),
    naming the settings they differ in; None if
    there are none."""
    old = stale_runs(out, [config])
    if not old:
        return None
    new = [run.settings for run in config.runs]
    differs = edit_differences(list(old.values()), new)
    seeds = any(line.startswith("seeds ") for line in differs)
    if len(differs) == 1 and differs[0].startswith(("seeds ", "seed ")):

        def seeds_of(runs: Any) -> set[Any]:
            return {x for s in runs for x in s.get("seeds") or [s.get("seed")]}

        if seeds_of(old.values()).isdisjoint(seeds_of(new)):
            # more seeds of finished settings (docs/sweeps.md): no edit to warn of
            return (
                f"maxminq sweep: note: {out} also holds {len(old)} run(s) of config "
                f"{config.name} with other seeds, {differs[0]}: the report pools the seeds "
                "of each setting"
            )
    return (
        f"maxminq sweep: note: {out} also holds {len(old)} run(s) of config {config.name} "
        "that it does not make (swept before an edit, at another scale, or by an older "
        "maxminq that resolved its settings otherwise"
        + (f"; they differ in {'; '.join(differs)}" if differs else "")
        + "); status and the report list them with these: use another --out to keep them "
        "apart"
        + (
            "; a deep run trains all its seeds together, so a new seed list is a new run: to "
            "add seeds to finished runs, sweep a config with only the new seeds into this "
            "folder (the report pools the seeds of one setting)"
            if seeds
            else ""
        )
    )


def shard_moves_note(out: Path, config: Any, shard: Any) -> str | None:
    """The note a sharded sweep prints when ``out`` swept its shard of an earlier version of
    the config, whose split moves runs between the shards
    (:func:`maxminq.experiments.shard.moved_by_edit`); None otherwise (also without a
    readable store: a first sweep sets one up, and refuses a damaged one in one line)."""
    if shard is None or not (out / "results.sqlite").is_file():
        return None
    from maxminq.experiments.shard import moved_by_edit
    from maxminq.experiments.store import ResultsStore, StoreError

    try:
        store = ResultsStore(out, create=False)
    except StoreError:
        return None
    with store:
        text = moved_by_edit(store, config.name, shard, list(config.runs))
    return None if text is None else f"maxminq sweep: note: {text}"


def never_learning(config: Any) -> list[str]:
    """Deep runs whose steps do not exceed learning_starts: only random steps, so their
    agents never learn (as ``maxminq train`` warns)."""
    return [
        r.run_id
        for r in config.runs
        if r.kind == "deep" and r.settings["steps"] <= r.settings["learning_starts"]
    ]


def refuse_missing_shipped_config(path: Path) -> None:
    """A CONFIG that does not exist but names a config maxminq ships (``configs/toy_mdp.yaml``
    typed outside the checkout, or ``toy_mdp``): say where the shipped one is, instead of
    the config reader's bare "no such file"."""
    if path.exists():
        return
    from maxminq.commands.reproduce import package_configs_dir, run_shipped_command

    name = path.stem
    shipped = package_configs_dir() / f"{name}.yaml"
    if shipped.is_file():
        raise UsageError(
            f"{path}: no such file; maxminq ships a config {name!r}: "
            f"'{run_shipped_command(name)}' runs it from any folder, or give its path, "
            f"{shipped}"
        )
    # A slip of the name ('catchr', 'configs/toy_mpd.yaml'): a config beside it, or shipped.
    beside = sorted(p.stem for p in path.parent.glob("*.yaml")) if path.parent.is_dir() else []
    near = closest(name, beside)
    if near is not None:
        raise UsageError(f"{path}: no such file (did you mean {path.parent / near}.yaml?)")
    near = closest(name, sorted(p.stem for p in package_configs_dir().glob("*.yaml")))
    if near is not None:
        raise UsageError(
            f"{path}: no such file (did you mean the shipped config {near!r}? "
            f"'{run_shipped_command(near)}' runs it)"
        )


def refuse_other_shard(out: Path, name: str, shard: Any, runs: Any = ()) -> None:
    """Raise :class:`UsageError` when ``out`` records that its sweeps of config ``name``
    (or of a config of ``runs``) ran another ``--shard`` than ``shard`` (None: no --shard);
    read-only, before anything is written or warned of
    (:func:`maxminq.experiments.shard.check_folder_shard`)."""
    if not (out / "results.sqlite").is_file():
        return
    from maxminq.experiments.shard import check_folder_shard
    from maxminq.experiments.store import ResultsStore, StoreError

    try:
        store = ResultsStore(out, create=False)
    except StoreError:  # damaged: the sweep says so in its own line
        return
    with store:
        check_folder_shard(store, name, shard, list(runs))


def run(args: argparse.Namespace) -> int:
    """Validate everything (options, config, every run's settings), then run the sweep."""
    from maxminq.cli import check_out_folder
    from maxminq.commands.status import failures_hint
    from maxminq.experiments.config import load_config
    from maxminq.experiments.runner import check_options, run_sweep
    from maxminq.experiments.shard import parse_shard
    from maxminq.experiments.store import refuse_if_in_use

    workers = parse_workers(args.workers)
    check_options(args.backend, workers, args.address)
    shard = parse_shard(args.shard)
    if shard is not None and shard.m == 1:  # shard 1 of 1: all runs, as without --shard
        shard = None
    if args.backend == "local":
        warn_many_workers("sweep", workers)
    refuse_missing_shipped_config(Path(args.config))
    config = load_config(args.config, args.scale)
    out = check_out_folder(
        Path(args.out) if args.out else Path("results") / config.name, "--out", writes="sweep"
    )
    # Before the store is read (stale_run_ids, --dry-run): a sweep there is told at once.
    refuse_if_in_use(out)
    refuse_other_shard(out, config.name, shard, config.runs)
    idle = never_learning(config)
    if idle:
        more = f" and {len(idle) - 3} more" if len(idle) > 3 else ""
        print(
            f"maxminq sweep: warning: {len(idle)} deep run(s) with steps <= learning_starts "
            f"never learn (only random steps): {', '.join(idle[:3])}{more}",
            file=sys.stderr,
        )
    note = stale_note(out, config)
    if note:  # an edited config: its old runs are neither reused nor gone
        print(note, file=sys.stderr)
    moved = shard_moves_note(out, config, shard)
    if moved:  # an edited config of a sharded sweep: runs change shards
        print(moved, file=sys.stderr)
    if args.dry_run:
        print(dry_run(config, out, shard))
        return 0
    with hangup_as_terminate(), warnings.catch_warnings():
        if idle:  # said above, before they run: not again as each run warns (run_training)
            from maxminq.deep.config import NeverLearnsWarning

            warnings.filterwarnings("ignore", category=NeverLearnsWarning)
        summary = run_sweep(
            config,
            out,
            backend=args.backend,
            workers=workers,
            address=args.address,
            progress=not args.no_progress,
            keep_work=args.keep_work,
            shard=shard.text if shard else None,
        )
    print("\n".join([summary.line(), *summary.run_lines()]))
    if summary.failures:
        print(failures_hint(out))
    return 0 if summary.ok else 1
