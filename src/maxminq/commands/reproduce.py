"""``maxminq reproduce``: every shipped sweep config, the theory figures, then the report.

The main job of the project: ``maxminq reproduce --scale quick`` runs a reduced version of
every paper experiment on this machine (about 5 minutes on 2 idle cores) and writes
``OUT/report.html``; ``--scale paper`` is the full reproduction (see docs/report.md for its cost
and for running it on a Ray cluster with ``--backend ray --address auto``).

Everything is validated before the first run starts: the options, and every config at the
chosen scale. The runs of all selected configs go through the sweep runner as one sweep (each
run still registered under its own config), so the worker pool never idles between configs.
Sweeps are resumable: rerunning the same command skips finished runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxminq.cli import stdout_to_devnull
from maxminq.commands.report import add_published, caution_lines
from maxminq.commands.sweep import RESUME_HINT, parse_workers, stale_run_ids
from maxminq.errors import UsageError, closest
from maxminq.experiments.software import software_versions  # sweeps record them too

if TYPE_CHECKING:
    from maxminq.analysis.report import PublishedRuns
    from maxminq.experiments.config import RunSpec, SweepConfig

# What cli.main adds to "interrupted" after Ctrl-C: a sweep's, as the store is the same.
__all__ = ["RESUME_HINT", "add_arguments", "run"]

SCALES = ("quick", "paper")
THEORY = "theory"
# Cheap, claim-bearing experiments first so a cut-short run still reports them.
KIND_ORDER = {"toy_mdp": 0, "mountain_car": 1}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq reproduce``."""
    parser.add_argument(
        "--scale",
        default="quick",
        metavar="quick|paper",
        help="quick (default, about 5 min on 2 idle cores) or paper",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="results folder (default: results/<scale>)",
    )
    parser.add_argument(
        "--backend", default="local", metavar="local|ray", help="local (default) or ray"
    )
    parser.add_argument(
        "--workers",
        default=None,
        metavar="K",
        help="parallel runs (default: cores, or the Ray cluster's)",
    )
    parser.add_argument(
        "--address",
        default=None,
        metavar="ADDR",
        help="Ray cluster address with --backend ray, e.g. auto (default: a new Ray "
        "instance on this machine)",
    )
    folder, names = default_config_names()
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAMES",
        help=f"comma-separated names of configs to run and/or {THEORY} (default: all)"
        + (f"; those of the default --configs ({folder}): {', '.join(names)}" if names else ""),
    )
    parser.add_argument(
        "--configs",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of sweep configs (default: ./configs, else the installed ones)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--shard",
        default=None,
        metavar="K/M",
        help="run only shard K of M of the configs' runs (one machine of M; no theory, no "
        "report): merge the machines' folders with 'maxminq merge', then the same reproduce "
        "without --shard into the merged folder writes the theory and the report (default: "
        "all runs, then the theory and the report)",
    )
    add_published(parser)


def default_config_names() -> tuple[Path | None, list[str]]:
    """The folder ``--only`` reads without ``--configs`` (:func:`find_configs_dir`:
    ``./configs`` first, else the installed configs) and the names of its configs (each
    file is named after its config), sorted; ``(None, [])`` when there is none. Not the
    installed configs alone: in a folder with a ``configs`` folder of its own, ``--only``
    takes those names, and the installed ones are unknown names."""
    try:
        folder = find_configs_dir(None)
    except UsageError:
        return None, []
    return folder, sorted(p.stem for p in folder.glob("*.yaml"))


def package_configs_dir() -> Path:
    """The configs installed with the package (``maxminq/configs``)."""
    import maxminq

    return Path(maxminq.__file__).resolve().parent / "configs"


def run_shipped_command(name: str) -> str:
    """The command that runs the shipped config ``name`` from this folder: ``maxminq
    reproduce --only NAME``, with ``--configs <the installed configs>`` where a
    ``./configs`` of one's own would be read instead (it lacks NAME, or holds a config of
    one's own by that name)."""
    package = package_configs_dir()
    try:
        default = find_configs_dir(None).resolve()
    except UsageError:
        default = package.resolve()
    # a copy of the shipped file (the source tree's configs/, read from any folder by an
    # editable install, or a clone's ./configs) runs the shipped config as it is
    try:
        same = (default / f"{name}.yaml").read_bytes() == (package / f"{name}.yaml").read_bytes()
    except OSError:  # NAME missing from either
        same = default == package.resolve()
    configs = "" if same else f" --configs {shlex.quote(str(package))}"
    return f"maxminq reproduce --only {name}{configs}"


def find_configs_dir(explicit: Path | None) -> Path:
    """The folder of shipped configs: ``--configs``, ``./configs``, the source tree's, or the
    package data's, whichever exists first."""
    if explicit is not None:
        if not explicit.is_dir():
            raise UsageError(f"--configs: {explicit} is not a folder")
        return explicit
    package = package_configs_dir()
    for cand in (Path("configs"), package.parents[2] / "configs", package):
        if cand.is_dir() and any(cand.glob("*.yaml")):
            return cand
    raise UsageError("--configs: no configs/*.yaml found; pass the folder with --configs")


def _load_configs(
    paths: list[Path], scale: str, wanted: list[str] | None
) -> tuple[list[SweepConfig], list[str]]:
    """The configs of ``paths`` at ``scale``, and the errors of those not read. Without
    ``--only`` (``wanted`` None) every config must load (a ConfigError ends the command).
    With it, the files named by ``wanted`` must load; the folder's other configs are read
    only to find names that are no file's (a config's name may differ from its file's), and
    one that does not load there (a study's own config without this scale) is left out
    instead of stopping a run that does not use it."""
    from maxminq.experiments.config import ConfigError, load_config

    if wanted is None:
        return [load_config(p, scale) for p in paths], []
    configs = [load_config(p, scale) for p in paths if p.stem in wanted]
    stems = {p.stem for p in paths}
    if all(w in stems or w == THEORY for w in wanted):
        return configs, []
    unread: list[str] = []
    for path in paths:
        if path.stem not in wanted:
            try:
                configs.append(load_config(path, scale))
            except ConfigError as err:
                unread.append(str(err))
    configs.sort(key=lambda c: paths.index(c.path) if c.path in paths else len(paths))
    return configs, unread


def _unknown_only(
    unknown: list[str], names: set[str], folder: Path, default: bool, unread: list[str], scale: str
) -> str:
    """``--only``'s error for names that no config of ``folder`` has. Where the folder was
    chosen by default (``./configs``, which holds configs of its own) and a name is of a
    config maxminq ships, it says so and how to run that one: the folder's names alone read
    as if the shipped config did not exist. ``unread``: the folder's configs that did not
    load at ``scale`` (one of them may be a name's config, in a file named otherwise)."""
    known = sorted(names | {THEORY})
    guessed = [(w, closest(w, known)) for w in unknown]  # 'catchr' (did you mean catcher?)
    text = (
        "--only: unknown name(s) "
        + ", ".join(w + (f" (did you mean {g}?)" if g else "") for w, g in guessed)
        + f"; expected comma-separated names from: {', '.join(known)}"
    )
    package = package_configs_dir()
    shipped = [w for w in unknown if (package / f"{w}.yaml").is_file()]
    if default and shipped and folder.resolve() != package:
        text += (
            f"; without --configs, {folder}/ is read instead of the shipped configs because "
            f"it holds *.yaml files: add --configs {package} to run the shipped "
            f"{', '.join(shipped)}"
        )
    if unread and len(shipped) < len(unknown):
        text += f"; not read at --scale {scale}: {unread[0]}"
    return text


def plan(
    args: argparse.Namespace,
) -> tuple[Path, int | None, list[SweepConfig], bool, PublishedRuns | None]:
    """Validate every option and load every selected config; nothing runs or is written
    here.

    Returns ``(out_dir, workers, configs, with_theory, published)`` with configs in run
    order and ``published`` the runs of ``--published`` (read and checked), or None.
    """
    from maxminq.analysis.report import check_store, published_runs
    from maxminq.cli import check_out_folder
    from maxminq.experiments.runner import check_options

    if args.scale not in SCALES:
        raise UsageError(f"--scale: expected one of {', '.join(SCALES)}, got {args.scale!r}")
    workers = parse_workers(args.workers)
    check_options(args.backend, workers, args.address)
    out = args.out if args.out is not None else Path("results") / args.scale
    folder = find_configs_dir(args.configs)
    paths = sorted(folder.glob("*.yaml"))
    if not paths:
        raise UsageError(f"--configs: {folder} holds no *.yaml configs")
    wanted: list[str] | None = None
    if args.only is not None:
        wanted = [w.strip() for w in str(args.only).split(",") if w.strip()]
        if not wanted:
            raise UsageError(f"--only: expected comma-separated names, got {args.only!r}")
    configs, unread = _load_configs(paths, args.scale, wanted)
    first: dict[str, Path] = {}
    for config in configs:  # runs are stored under their config's name: two would merge
        other = first.setdefault(config.name, config.path)
        if other != config.path:
            raise UsageError(
                f"--configs: {other.name} and {config.path.name} are both named "
                f"{config.name!r}; give each config its own name"
            )
    names = {c.name for c in configs} | {p.stem for p in paths}
    with_theory = True
    if wanted is not None:
        unknown = [w for w in wanted if w not in names and w != THEORY]
        if unknown:
            default = args.configs is None
            raise UsageError(_unknown_only(unknown, names, folder, default, unread, args.scale))
        configs = [c for c in configs if c.name in wanted or c.path.stem in wanted]
        with_theory = THEORY in wanted
    configs.sort(key=lambda c: (KIND_ORDER.get(c.kind, 2), c.name))
    from maxminq.experiments.store import StoreError, refuse_if_in_use

    refuse_if_in_use(out)  # at once, before the store is read (a stopped sweep's waits)
    try:  # a damaged store would fail only once the runs or the theory are done
        check_store(out)
    except StoreError as err:  # named by its option, as 'maxminq status DIR' names DIR
        raise UsageError(f"--out: {err}") from None
    check_out_folder(out, "--out", writes="reproduce")
    published = published_runs(args.published) if args.published is not None else None
    return out, workers, configs, with_theory, published


def _theory_args(out: Path, no_progress: bool) -> argparse.Namespace:
    """Default options of ``maxminq theory`` (parsed, so its defaults live in one place)."""
    from maxminq.commands import theory

    parser = argparse.ArgumentParser()
    theory.add_arguments(parser)
    argv = ["--out", str(out)] + (["--no-progress"] if no_progress else [])
    return parser.parse_args(argv)


def _write_meta(path: Path, meta: dict) -> None:
    from maxminq.experiments.store import atomic_write_bytes

    atomic_write_bytes(path, json.dumps(meta, indent=2, default=str).encode())


def _say(text: str) -> None:
    """Print ``text`` now; a reader that left ends the printing, not the work."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        stdout_to_devnull()


def _machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, load average {load} (1/5/15 min) at the end"


def runs_software(out: Path) -> dict[str, str]:
    """The versions the runs of ``out`` were computed with and this machine's (the theory
    and the report): this machine's alone when all are the same, else each name with all
    its versions (``git: abc1234 / def5678``): a folder merged from machines with other
    versions (``maxminq merge``), or resumed after an upgrade, is not reported as computed
    with this machine's versions only."""
    from maxminq.experiments.software import SOFTWARE_PREFIX, combined, folder_software
    from maxminq.experiments.store import ResultsStore

    here = software_versions()
    with ResultsStore(out, create=False) as store:
        recorded = folder_software(store.meta_items(SOFTWARE_PREFIX))
    sets = [here]
    for versions in recorded.values():
        sets += [v for v in versions if v not in sets]
    return here if len(sets) == 1 else combined(sets)


def combined_sweep(configs: list[SweepConfig], scale: str) -> SweepConfig:
    """All runs of ``configs`` as one sweep, so the worker pool stays full across configs.

    A run shared by two configs (same settings, same id) is executed once. Order: tabular
    kinds first (cheap, they carry most claims), then deep runs by decreasing size (steps x
    seeds x members), which keeps the pool busy until the end.
    """
    from maxminq.experiments.config import SweepConfig

    def size(run: RunSpec) -> float:
        st = run.settings
        seeds = st.get("seeds") or [0]
        return float(st.get("steps") or 0) * len(seeds) * (1 + 0.1 * float(st.get("n") or 1))

    seen: dict[str, RunSpec] = {}
    for config in configs:
        for run in config.runs:
            seen.setdefault(run.run_id, run)
    runs = sorted(seen.values(), key=lambda r: (KIND_ORDER.get(r.kind, 2), -size(r)))
    names = ", ".join(c.name for c in configs)
    return SweepConfig(
        name=f"reproduce ({names})" if len(configs) < 4 else "reproduce",
        kind="mixed",
        scale=scale,
        path=Path("."),
        runs=runs,
    )


def _seconds(start: str | None, end: str | None) -> float:
    if not start or not end:
        return 0.0
    a, b = dt.datetime.fromisoformat(start), dt.datetime.fromisoformat(end)
    return max(0.0, (b - a).total_seconds())


def config_rows(out: Path, configs: list) -> list[dict]:
    """Per config: runs, statuses and the summed run time, read back from the store."""
    from maxminq.experiments.store import ResultsStore

    rows = []
    with ResultsStore(out) as store:
        for config in configs:
            recs = store.records(config.name)
            count = {s: sum(r.status == s for r in recs) for s in ("done", "diverged", "failed")}
            rows.append(
                {
                    "name": config.name,
                    "kind": config.kind,
                    "figure": config.figure,
                    "runs": len(config.runs),
                    **count,
                    "run_seconds": round(sum(_seconds(r.started, r.finished) for r in recs), 1),
                }
            )
    return rows


def _values_text(values: list[object], key: str) -> str:
    """The distinct ``values`` of setting ``key`` as the report's settings table prints them
    (``maxminq.analysis.report.setting_texts``: numbers in numeric order, ``unset`` for a
    run that leaves the setting at its default); more than 8 as a range with their count
    (``1e-05 .. 0.001 (5 values)`` reads worse than the list, so only long lists are cut)."""
    from maxminq.analysis.report import setting_texts

    texts = setting_texts(values, key)
    if len(texts) > 8:
        return f"{texts[0]} .. {texts[-1]} ({len(texts)} values)"
    return ", ".join(texts)


def paper_difference(here: SweepConfig, paper: SweepConfig) -> str:
    """How a config's paper scale differs from the runs of ``here`` (another scale of it):
    its number of settings and of seeds (deep) or runs (tabular) per setting, then each
    setting whose values differ, with the paper scale's values, e.g. ``90 settings x 20
    seeds (here 4 x 2); steps: 3,500,000; lr: 1e-05, 3e-05, 0.0001, 0.0003, 0.001``. A
    setting a run leaves out reads ``unset``. '' when the two scales run the same."""

    def per_setting(config: SweepConfig) -> int:
        return max(
            (len(r.settings.get("seeds") or []) or int(r.settings.get("runs") or 0))
            for r in config.runs
        )

    def values(config: SweepConfig, key: str) -> list[object]:
        return [r.settings.get(key) for r in config.runs]

    unit = "seeds" if any("seeds" in r.settings for r in paper.runs) else "runs"
    size_here = (len(here.runs), per_setting(here))
    size_paper = (len(paper.runs), per_setting(paper))
    parts = []
    if size_here != size_paper:
        parts.append(
            f"{size_paper[0]:,} settings x {size_paper[1]:,} {unit} "
            f"(here {size_here[0]:,} x {size_here[1]:,})"
        )
    # Not the settings the report pools over (replicates, or no change to what a run computes)
    from maxminq.analysis.report import POOLABLE

    keys = sorted({k for c in (here, paper) for r in c.runs for k in r.settings} - POOLABLE)
    for key in keys:
        text = _values_text(values(paper, key), key)
        if text != _values_text(values(here, key), key):
            parts.append(f"{key}: {text}")
    return "; ".join(parts)


def paper_notes(configs: list[SweepConfig]) -> dict[str, str]:
    """Per config (by name) run at a scale other than paper, :func:`paper_difference` from
    its paper scale; configs without a paper scale (one's own) are left out."""
    from maxminq.experiments.config import ConfigError, load_config

    notes = {}
    for config in configs:
        if config.scale == "paper":
            continue
        try:
            paper = load_config(config.path, "paper")
        except (ConfigError, OSError):  # no paper scale, or the file changed since
            continue
        notes[config.name] = paper_difference(config, paper) or "the same"
    return notes


def report_stale_runs(out: Path, configs: list[SweepConfig]) -> set[str]:
    """The stored runs the report leaves out: those of ``configs`` that none of them makes
    (:func:`~maxminq.commands.sweep.stale_run_ids`: of an earlier version), less the runs
    that a config not selected here (``--only``) also registered, which are that config's
    runs too (as ``maxminq report`` shows them): after an edit of config A that drops a
    setting config B shares, ``--only A`` left B's run of it out of the report."""
    stale = stale_run_ids(out, configs)
    if not stale:
        return stale
    from maxminq.experiments.store import ResultsStore

    names = {config.name for config in configs}
    with ResultsStore(out, create=False) as store:
        others = {run_id for config, run_id in store.members() if config not in names}
    return stale - others


def register_runs(out: Path, configs: list[SweepConfig]) -> None:
    """Register every config's runs under its own name (membership), to be run as one
    sweep so that no core idles between configs. A run the folder holds under an older id
    (a deep run swept before its id left out ``checkpoint_every`` and ``tensorboard``) is
    registered under that id, as the sweep takes it: under today's id it stayed pending
    for ever beside the stored run the sweep finished."""
    from maxminq.experiments.runner import adopt_stored_ids
    from maxminq.experiments.store import ResultsStore

    with ResultsStore(out, lock=True) as store:
        store.register(
            [run for config in configs for run in adopt_stored_ids(store, list(config.runs))]
        )


def _run_shard(
    args: argparse.Namespace,
    out: Path,
    workers: int | None,
    configs: list,
    shard: Any,
    with_theory: bool,
) -> int:
    """``--shard K/M``: run this shard's runs of every selected config (one sweep, as
    without it) and say how to finish: merge the folders, then reproduce into the merged
    one (its runs done, that writes the theory figures and the report)."""
    from maxminq.commands.sweep import refuse_other_shard, warn_many_workers
    from maxminq.experiments.runner import run_sweep

    if not configs:
        raise UsageError(
            "--shard: splits the configs' runs, and --only selects none (the theory is not "
            "sharded: the reproduce into the merged folder runs it)"
        )
    combined = combined_sweep(configs, args.scale)
    refuse_other_shard(out, combined.name, shard, combined.runs)  # before any write
    from maxminq.commands.sweep import shard_moves_note

    moved = shard_moves_note(out, combined, shard)
    if moved:  # a config edited since this machine's last sweep: runs change shards
        print(moved.replace("maxminq sweep:", "maxminq reproduce:", 1), file=sys.stderr)
    if args.backend == "local":
        warn_many_workers("reproduce", workers)
    register_runs(out, configs)
    summary = run_sweep(
        combined,
        out,
        backend=args.backend,
        workers=workers,
        address=args.address,
        progress=not args.no_progress,
        shard=shard.text,
    )
    for line in [summary.line(), *summary.run_lines()]:
        _say(line)
    if summary.failures:
        from maxminq.commands.status import failures_hint

        _say(failures_hint(out))
    again = shlex.join(
        ["maxminq", "reproduce", "--scale", args.scale]
        + (["--only", str(args.only)] if args.only is not None else [])
        + (["--configs", str(args.configs)] if args.configs is not None else [])
        + ["--out", "MERGED"]
    )
    what = "the theory figures and the report" if with_theory else "the report"
    print(
        f"shard {shard.text} of the sweep is in {out} (no theory, no report); once every "
        f"shard is done: 'maxminq merge FOLDER1 FOLDER2 ... --out MERGED', then '{again}' "
        f"writes {what}"
    )
    return 1 if summary.failed else 0


def run(args: argparse.Namespace) -> int:
    """Run the selected configs, the theory command and the report; exit 1 if runs failed."""
    from maxminq.experiments.shard import parse_shard

    shard = parse_shard(getattr(args, "shard", None))
    if shard is not None and shard.m == 1:  # shard 1 of 1: all runs, as without --shard
        shard = None
    if shard is not None and args.published is not None:
        raise UsageError(
            "--published: goes in the report, which a --shard does not write: give it to "
            "the reproduce into the merged folder"
        )
    out, workers, configs, with_theory, published = plan(args)
    if shard is not None:
        return _run_shard(args, out, workers, configs, shard, with_theory)
    from maxminq.commands.sweep import warn_many_workers
    from maxminq.experiments.runner import run_sweep

    if configs:  # a folder of one machine's --shard: before anything is written
        from maxminq.commands.sweep import refuse_other_shard

        combined = combined_sweep(configs, args.scale)
        refuse_other_shard(out, combined.name, None, combined.runs)
    if args.backend == "local" and configs:
        warn_many_workers("reproduce", workers)
    from maxminq.experiments.store import remove_stale_temporaries

    out.mkdir(parents=True, exist_ok=True)
    meta_path = out / "reproduce.json"
    # A reproduce killed while writing its metadata left a hidden temporary (the theory
    # stage and the report remove their own outputs' ones).
    remove_stale_temporaries([meta_path])
    command = "maxminq reproduce " + shlex.join(sys.argv[2:] if len(sys.argv) > 2 else [])
    if len(sys.argv) < 2 or sys.argv[1:2] != ["reproduce"]:
        command = f"maxminq reproduce --scale {args.scale} --out {out}" + (
            f" --published {args.published}" if args.published is not None else ""
        )
    start = time.perf_counter()
    meta = {
        "scale": args.scale,
        "command": command.strip(),
        "backend": args.backend,
        "started": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "software": software_versions(),  # the report's header names them
        "configs": [],
    }
    _write_meta(meta_path, meta)
    failed = 0
    if configs:
        register_runs(out, configs)
        summary = run_sweep(
            combined_sweep(configs, args.scale),
            out,
            backend=args.backend,
            workers=workers,
            address=args.address,
            progress=not args.no_progress,
        )
        for line in [summary.line(), *summary.run_lines()]:  # as maxminq sweep prints them
            _say(line)
        if summary.failures:
            from maxminq.commands.status import failures_hint

            _say(failures_hint(out))
        failed = summary.failed
        meta["software"] = runs_software(out)
        meta["sweep_seconds"] = round(summary.seconds, 1)
        meta["configs"] = config_rows(out, configs)
        notes = paper_notes(configs)  # the report's column: how the paper scale differs
        for row in meta["configs"]:
            if row["name"] in notes:
                row["paper"] = notes[row["name"]]
        _write_meta(meta_path, meta)
    if with_theory:
        from maxminq.commands import theory

        t0 = time.perf_counter()
        try:
            theory.run(_theory_args(out / "theory", args.no_progress))
            sys.stdout.flush()  # here, not in the report stage: the reader may have left
        except BrokenPipeError:  # raised by a print after theory's writes: they are done
            stdout_to_devnull()
        meta["configs"].append(
            {"name": THEORY, "kind": THEORY, "run_seconds": round(time.perf_counter() - t0, 1)}
        )
    meta["seconds"] = round(time.perf_counter() - start, 1)
    meta["finished"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta["machine"] = _machine()
    _write_meta(meta_path, meta)

    from maxminq.analysis.report import build_report, load_store

    results = load_store(out)
    stale = report_stale_runs(out, configs) if configs else set()
    if stale:
        where = out / "results.sqlite"
        _say(f"note: {len(stale)} stored run(s) of an earlier version of these configs are "
             f"left out of the report (still in {where})")  # fmt: skip
        results = {name: df[~df["run_id"].isin(stale)] for name, df in results.items()}
    report = build_report(out, results=results, published=published)
    meta["seconds_with_report"] = round(time.perf_counter() - start, 1)
    _write_meta(meta_path, meta)
    print(f"report: {report.html}  ({report.verdicts})")
    print(f"        {report.markdown}")  # beside the .html, before the lines about the report
    if report.unchecked:  # e.g. --only toy_mdp: say which claims this folder cannot check
        print(f"        not checked (no data in this folder): {', '.join(report.unchecked)}")
    if report.pooled:  # e.g. configs of one's own sweeping update_members or gamma
        print(f"        caution: {len(report.pooled)} row(s) pool runs that differ in other "
              f"settings (listed in the report; 'maxminq report {out}' prints them)")  # fmt: skip
    for line in caution_lines(report):  # as 'maxminq report' prints them
        print(f"        {line}")
    for line in report.published:
        print(f"        published (not re-run, no claims): {line}")
    # The report's 'Total wall time' is meta['seconds'], written before the report was: say
    # what the difference is (a reader saw 'total 14.1 min' beside the report's 13.5).
    whole, runs = meta["seconds_with_report"] / 60, meta["seconds"] / 60
    print(f"total {whole:.1f} min ({runs:.1f} min before the report, as the report says)")
    return 1 if failed else 0
