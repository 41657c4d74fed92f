"""``maxminq status DIR``: run counts per config and status, failures (with ``--errors``
their tracebacks), runs in progress; with ``--runs`` one line per run (id, kind, status, the
settings that vary in its config and, for a finished deep run, the tables folder that
``maxminq plot`` reads)."""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maxminq.errors import UsageError

MISSING = "-"  # a setting the run does not have (another kind), or no tables folder yet
#: The options that read a sweep's runs (not one 'maxminq train' run's folder).
SWEEP_OPTIONS = ("config", "verify", "errors", "runs")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq status``."""
    parser.add_argument(
        "dir",
        metavar="DIR",
        help="a sweep output folder (holds results.sqlite), or one 'maxminq train' run's --out",
    )
    parser.add_argument(
        "--config", default=None, help="only the runs of this config name (default: all)"
    )
    parser.add_argument(
        "--verify", action="store_true", help="also check every finished run's files"
    )
    parser.add_argument(
        "--errors",
        action="store_true",
        help="print each failed run's whole error (its traceback), not only the last line",
    )
    parser.add_argument(
        "--runs",
        action="store_true",
        help="list every run: id, kind, status, the settings that vary in its config, and "
        "for finished deep runs the folder to pass to 'maxminq plot'",
    )


def failures_hint(out: Path) -> str:
    """The line a sweep (or reproduce) prints after its failed runs: what to do next (the
    folder quoted for the shell where it needs it, so that the command can be copied)."""
    return (
        f"  the same command runs the failed run(s) again; 'maxminq status "
        f"{shlex.quote(str(out))} --errors' shows their tracebacks"
    )


def _text(value: Any) -> str:
    """A setting value as one short cell (lists/mappings as compact JSON)."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, dict)) or value is None:
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def varying_keys(settings: Sequence[dict[str, Any]]) -> list[str]:
    """The setting keys whose value is not the same in every run (a key some runs lack
    counts as varying), in first-seen order: what tells the runs of a sweep apart."""
    keys = list(dict.fromkeys(k for s in settings for k in s))
    return [k for k in keys if len({_text(s.get(k, MISSING)) for s in settings}) > 1]


def shown_settings(rec: Any) -> dict[str, Any]:
    """A run's stored settings as ``--runs`` shows them: a deep run's ``optimizer_kwargs``
    in full (``deep.config.optimizer_options_in_full``: torch's defaults filled in for the
    options not given), as ``maxminq compare`` and ``plot`` label them. A run swept before
    --optimizer-kwargs was merged over the registry's stored MinAtar's ``{"alpha": 0.9}``
    (torch's eps 1e-8), shown beside a run of today's ``{"alpha": 0.9, "eps": 0.01}`` as
    if only alpha were set; and ``{}`` and torch's own values spelled out were shown as two
    settings."""
    if rec.kind != "deep":
        return rec.settings
    from maxminq.deep.config import options_in_full

    return options_in_full(rec.settings)


def run_table(records: Sequence[Any], store: Any) -> list[list[str]]:
    """Rows (with a header row) for ``--runs``: run id, kind, status, the varying settings
    (:func:`shown_settings`), and the plot folder ``DIR/tables/<run_id>``
    (``store.run_tables_dir``) of each finished deep run."""
    shown = [shown_settings(r) for r in records]
    keys = varying_keys(shown)
    rows = [["run id", "kind", "status", *keys, "tables (maxminq plot)"]]
    for rec, settings in zip(records, shown, strict=True):
        tables = store.run_tables_dir(rec.run_id)
        # 'maxminq plot' reads a deep run's runs.csv; other kinds and unfinished runs have none
        plot = str(tables) if rec.kind == "deep" and (tables / "runs.csv").is_file() else MISSING
        cells = [_text(settings[k]) if k in settings else MISSING for k in keys]
        rows.append([rec.run_id, rec.kind, rec.status, *cells, plot])
    return rows


def _print_table(rows: list[list[str]]) -> None:
    """Left-aligned columns, two spaces apart; the last column is not padded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=False)) + "  " + r[-1])


def training_now(folder: Path) -> bool:
    """Whether a run is training in ``folder`` now: the lock a training run holds on its
    folder while it lives (``deep.run_folder.folder_lock``) is taken; probed with a shared
    lock, released at once (False where the file system has no locks)."""
    import fcntl
    import os

    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # not readable: nothing to tell
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # no locks here
        return False
    finally:
        os.close(fd)  # closing releases the probe's lock
    return False


def train_run_status(folder: Path) -> str | None:
    """What ``folder`` is when it holds one 'maxminq train' run (its ``config.json`` is
    written as it starts, ``runs.csv`` as it ends): finished, training now and how far (its
    ``progress.json``), or stopped and how to continue it; None for another folder.
    UsageError for a run in a sweep's ``work/`` folder: the sweep's status is the one to read.
    The command printed this as an error (exit 2), though a training run's own message sends
    the user here to see how far it is."""
    from maxminq._progress import describe_progress
    from maxminq.analysis.runs import has_train_config
    from maxminq.experiments.store import PROGRESS_FILE

    if not (folder / "config.json").is_file():
        return None
    # a sweep's run, also one whose runs.csv is written (a --keep-work folder)
    sweep = folder.parents[1] if len(folder.parents) > 1 else folder
    if folder.parent.name == "work" and (sweep / "results.sqlite").is_file():
        raise UsageError(
            f"DIR: {folder} holds a run of the sweep in {sweep}: 'maxminq status {sweep}' shows it"
        )
    a_run = has_train_config(folder)  # another program's config.json is no run of ours
    later = f"'maxminq plot {folder}' and 'maxminq compare {folder}' read it"
    if (folder / "runs.csv").is_file() and a_run:  # another program's runs.csv: no run of ours
        return f"{folder}: one 'maxminq train' run, finished; {later}"
    checkpoint = folder / "checkpoint" / "state.pt"
    progress = folder / PROGRESS_FILE
    if not (a_run or checkpoint.is_file() or progress.is_file()):
        return None  # a config.json of something else
    training = training_now(folder)
    # how far (its step; training: its speed and time left too), and its returns
    where = describe_progress(folder, training=training)
    head = f"{folder}: one 'maxminq train' run"
    later += " once it has finished"
    if training:
        how_far = f", at {where}" if where else ""
        return f"{head}, training now{how_far}; {later}"
    last = f"last at {where}" if where else "early, before its first progress.json"
    resume = (
        "continues it from its checkpoint"
        if checkpoint.is_file()
        else "trains it (it has no checkpoint to continue from)"
    )
    return (
        f"{head}, not training (stopped or killed, {last}); the same 'maxminq train' "
        f"command with --resume {resume}; {later}"
    )


def software_lines(store: Any, config: str | None = None) -> list[str]:
    """One line when the runs here (of ``config`` only, when given) were computed with other
    versions (:mod:`maxminq.experiments.software`: the machines of a merged folder, or a
    folder resumed after an upgrade): each name whose versions differ, with all of them."""
    from maxminq.experiments.software import SOFTWARE_PREFIX, differences, folder_software

    recorded = folder_software(store.meta_items(SOFTWARE_PREFIX))
    sets: list[dict[str, str]] = []
    for name, versions in recorded.items():
        if config is None or name == config:
            sets += [v for v in versions if v not in sets]
    differ = differences(sets)
    if not differ:
        return []
    said = "; ".join(f"{name} {' / '.join(values)}" for name, values in differ.items())
    return [
        f"versions: the runs here were computed with other software ({said}): machines "
        "merged with other versions, or a sweep resumed after an upgrade"
    ]


def shard_lines(store: Any, config: str | None = None) -> list[str]:
    """For a folder of one machine's ``maxminq sweep --shard K/M`` (or ``reproduce``'s):
    per sharded sweep (of ``config`` only, when given), how many of its runs are this
    shard's and finished, and that the pending runs of the other shards are theirs
    (``maxminq merge`` brings the folders together)."""
    from maxminq.experiments.shard import shard_splits

    records = {rec.run_id: rec for rec in store.records()}
    lines = []
    for name, shard, ids, part in shard_splits(store):
        if config is not None and name != config:
            continue
        done = sum(r.status in ("done", "diverged") for r in part)
        others = len(ids) - len(part)
        # pending here, as the report counts them; not all after an edit that moved runs
        # this folder finished to other shards (or in a merged folder swept with --shard)
        ours = {r.run_id for r in part}
        waiting = sum(r.status == "pending" for r in records.values() if r.run_id in ids - ours)
        said = "pending here" if waiting == others else f"{waiting} of them pending here"
        lines.append(
            f"{name}: shard {shard.text} here (--shard {shard.text}): {done} of its "
            f"{len(part)} run(s) finished; the other {others} run(s) are other shards' "
            f"({said}; 'maxminq merge' brings the machines' folders together)"
        )
    return lines


#: How a run of an earlier version of its config is marked in the lists
#: (:func:`maxminq.experiments.shard.earlier_version_runs`).
EARLIER = "not in the configs as last swept here"


def earlier_version_lines(store: Any, config: str | None = None) -> list[str]:
    """Per config (``config`` only, when given), its pending or failed runs of an earlier
    version of the config (:func:`~maxminq.experiments.shard.earlier_version_runs`), which
    the counts above show as still to run though no sweep of the config as it is runs
    them."""
    from maxminq.experiments.shard import earlier_version_runs

    earlier = earlier_version_runs(store)
    if not earlier:
        return []
    lines = []
    for name in [config] if config else store.configs():
        old = [rec for rec in store.records(name) if rec.run_id in earlier]
        if old:
            lines.append(
                f"{name}: {len(old)} of its pending or failed run(s) are of an earlier version "
                "of the config (edited, at another scale, or resolved otherwise by an older "
                "maxminq): a sweep of it as last swept here "
                "does not run them"
            )
    return lines


def run(args: argparse.Namespace) -> int:
    """Print the folder's counts; exit 0 when nothing a sweep of the configs as last swept
    here runs failed and ``--verify`` found no bad files (a failed run of an earlier
    version of its config, which none runs again, is listed but does not count, nor do the
    bad files of such a finished run), 1 otherwise. Of one 'maxminq train' run: whether it
    finished, or how far it is (exit 0)."""
    from maxminq.experiments.shard import earlier_version_runs
    from maxminq.experiments.store import (
        MANIFEST,
        STATUSES,
        ResultsStore,
        StoreError,
        holds_progress,
        last_line,
        read_progress,
        read_worker,
        short_times,
        sweep_owner,
        unknown_config_text,
    )

    folder = Path(args.dir)
    if not folder.exists():  # e.g. a sweep that has not got as far as making it
        raise UsageError(f"DIR: {folder}: no such folder; give the --out of a sweep")
    if not folder.is_dir():
        raise UsageError(f"DIR: {folder} is not a folder; give the --out of a sweep")
    if not (folder / "results.sqlite").is_file():  # what another command wrote: say which
        from maxminq.commands.report import refuse_other_outputs, refuse_sweep_parts

        refuse_sweep_parts(folder, "status")
        train_run = train_run_status(folder)
        if train_run:  # one 'maxminq train' run: how far it is (what train points here for)
            # The sweep's options have nothing to read in it: named, not passed over (a
            # 'status RUN --verify' ended with exit 0 without checking a file).
            given = [f"--{name}" for name in SWEEP_OPTIONS if getattr(args, name)]
            if given:
                raise UsageError(
                    f"{given[0]}: reads the runs of a sweep; {folder} is one 'maxminq train' "
                    f"run: 'maxminq status {folder}' says how far it is"
                )
            print(train_run)
            return 0

        refuse_other_outputs(folder, "status")
    try:
        store = ResultsStore(folder, create=False)
    except StoreError as err:
        raise UsageError(f"DIR: {err}") from None
    with store:
        configs = store.configs()
        if args.config is not None and args.config not in configs:
            raise UsageError(f"--config: {unknown_config_text(args.config, configs)}")
        owner = sweep_owner(folder)
        print(
            f"{folder}: {'sweep running, ' + short_times(owner) if owner else 'no sweep running'}"
        )
        width = max([len(c) for c in configs] + [6])
        print(f"{'config':<{width}}  " + "  ".join(f"{s:>8}" for s in STATUSES) + "     total")

        def row(label: str, counts: dict[str, int]) -> None:
            cells = "  ".join(f"{counts[s]:>8}" for s in STATUSES)
            print(f"{label:<{width}}  {cells}  {sum(counts.values()):>8}")

        for name in [args.config] if args.config else configs:
            row(name, store.counts(name))
        records = store.records(args.config)
        if not args.config and len(configs) > 1:
            row("all", store.counts())
        for line in [
            *shard_lines(store, args.config),
            *earlier_version_lines(store, args.config),
            *software_lines(store, args.config),
        ]:
            print(line)
        failed = [r for r in records if r.status == "failed"]
        # no sweep of its config as last swept here runs it again (the line above says so)
        earlier = earlier_version_runs(store)
        for rec in failed:
            of = f"; {EARLIER}" if rec.run_id in earlier else ""
            print(f"failed   {rec.run_id} (attempts {rec.attempts}{of}): {last_line(rec.error)}")
            if args.errors:  # the traceback the worker sent, which the line above ends
                for line in (rec.error or "").strip().splitlines():
                    print(f"    {line}")
        for rec in records:
            if rec.status == "running" and owner:
                # deep runs report their progress in their scratch folder (local or shared)
                done = read_progress(store.work_dir(rec.run_id))
                how_far = f": {done:.0%} of its steps" if done is not None else ""
                # The registry names the sweep until the run ends; its worker says who it is
                # in its scratch folder (not seen: starting, or on a Ray node of its own).
                worker = read_worker(store.work_dir(rec.run_id))
                where = (
                    f"{worker[0]}, worker pid {worker[1]}"
                    if worker
                    else f"{rec.host}, sweep pid {rec.pid}"
                )
                print(f"running  {rec.run_id} since {short_times(rec.started)} ({where})" + how_far)
            elif rec.status == "running":  # its sweep was killed
                kept = store.finished(rec)[0]  # as the next sweep decides
                work = store.work_dir(rec.run_id)
                fate = (
                    "its tables are stored: the next sweep marks it "
                    + store.stored_status(rec.run_id)[0]
                    if kept
                    else "will be re-run"
                    + (f"; {work} is kept for its next attempt" if holds_progress(work) else "")
                )
                print(
                    f"stale    {rec.run_id} since {short_times(rec.started)} (interrupted; {fate})"
                )
            elif rec.status == "diverged":
                print(f"diverged {rec.run_id}: {last_line(rec.error)}")
            elif rec.status == "done" and rec.error:  # a classic run's non-finite runs
                print(f"nonfinite {rec.run_id}: {last_line(rec.error)}")
            elif (  # e.g. Ctrl-C after its tables were stored: not to be run again
                rec.status == "pending"
                and (store.run_tables_dir(rec.run_id) / MANIFEST).exists()
                and store.finished(rec)[0]
            ):
                final = store.stored_status(rec.run_id)[0]
                print(f"stored   {rec.run_id} (pending; its tables are stored: the next sweep "
                      f"marks it {final})")  # fmt: skip
            elif rec.status == "pending" and rec.error:  # queued again: say why
                work = store.work_dir(rec.run_id)
                keeps = ""
                if holds_progress(work):
                    keeps = (  # no next attempt unless a config makes the run again
                        f"; {work} is kept, should a config make this run again"
                        if rec.run_id in earlier
                        else f"; {work} is kept for its next attempt"
                    )
                of = f"; {EARLIER}" if rec.run_id in earlier else ""
                print(
                    f"pending  {rec.run_id} (attempts {rec.attempts}{of}): "
                    f"{last_line(rec.error)}{keeps}"
                )
        bad = 0
        if args.verify:
            # bad files of a run of an earlier version of its config: no sweep of the configs
            # as last swept here settles it again (load_results leaves it out); listed, as
            # such a failed run is, and not counted
            stale = earlier_version_runs(store, ("done", "diverged"))
            left = 0
            for rec in records:
                if rec.status in ("done", "diverged"):
                    problem = store.verify_tables(rec.run_id)
                    if problem and rec.run_id in stale:
                        left += 1
                        print(f"corrupt  {rec.run_id} ({EARLIER}): {problem}")
                    elif problem:
                        bad += 1
                        print(f"corrupt  {rec.run_id}: {problem}")
            fates = "re-run by the next sweep"
            if left:
                older = (f"{left} of an earlier version of their config, which no sweep runs "
                         "again: left out of the report")  # fmt: skip
                fates = f"{bad} {fates}; {older}" if bad else older
            print(f"verified: {bad + left} finished run(s) with bad files ({fates})")
        if args.runs:
            # One table per config: the settings that vary are those of that config's sweep.
            for name in [args.config] if args.config else configs:
                mine = store.records(name)
                print(f"\nruns of {name} ({len(mine)}):")
                _print_table(run_table(mine, store))
    return 1 if any(r.run_id not in earlier for r in failed) or bad else 0
