"""How long a finished sweep takes to resume, and ``maxminq status`` to answer, on a large store.

A resumed ``maxminq sweep`` decides for every run of its config whether it is finished,
which means checking the run's stored tables against their manifest. This script builds a
results folder of many finished runs through the store's own API (a toy-MDP config whose
grid is ``seed``, so that every run has its own id; the tables are synthetic numeric CSVs of
about ``--table-kb`` KB per run, since only their bytes matter here), then times, each as a
fresh process as a user would run it:

* ``maxminq sweep CONFIG --out DIR`` with every run already done (the resume check: every
  table file is read and its SHA-256 compared with the manifest's), twice;
* the same sweep with the folder's files dropped from the page cache first (as after a
  reboot, or on another node of a shared filesystem: the tables are read from disk);
* the same sweep, twice, on a copy of the folder (``cp -r``: new inodes and times; the
  numbers show that nothing is cached by file identity);
* ``maxminq sweep ... --dry-run``, ``maxminq status DIR`` and ``maxminq status DIR --verify``
  (which always hashes every file).

Each line prints the command's wall and CPU time (Python start-up included, about 1-2 s
here) and, for the sweep, the seconds its own summary reports (``run_sweep``: the resume
check; the rest is start-up and loading the config, validating each of its runs). Other
than the cold-cache line, the page cache is warm: the folder was just written or read.

Usage: ``python benchmarks/bench_sweep_resume.py [--runs 3000] [--table-kb 20]
[--dir /tmp/bench_sweep_resume] [--keep] [--reuse] [--smoke]`` (``--dir`` must be new, empty
or this script's: an earlier run's files in it are deleted first, and this run's at the
end unless ``--keep``, with the folder if the script made it; ``--reuse`` times the store an
earlier ``--keep`` run left there and keeps it, removing only the copy it makes; ``--smoke``:
a check that it works); the numbers in docs/sweeps.md: ``--runs 3000 --table-kb 20`` (Mountain-Car-
sized runs) and ``--runs 600 --table-kb 1500`` (paper-scale deep runs).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from _cli import Parser, positive_float, positive_int  # this folder (_cli.py)

from maxminq.experiments.config import load_config
from maxminq.experiments.store import ResultsStore


def write_config(path: Path, runs: int) -> None:
    """A toy-MDP sweep config of ``runs`` runs (one per seed), tiny settings."""
    seeds = ", ".join(str(s) for s in range(runs))
    path.write_text(
        "name: bench_resume\n"
        "kind: toy_mdp\n"
        "fixed: {step_size: 0.01, epsilon: 0.1, buffer_size: 100, mu: 0.1, algorithm: maxmin,"
        " n: 2}\n"
        f"grid:\n  seed: [{seeds}]\n"
        "scales:\n  quick:\n    fixed: {runs: 2, episodes: 10}\n"
        "  paper:\n    fixed: {runs: 2, episodes: 10}\n"
    )


def build_store(config_path: Path, out: Path, table_kb: float) -> float:
    """Register every run of the config in ``out`` and store synthetic tables of about
    ``table_kb`` KB for each, marked done; returns the seconds it took."""
    start = time.perf_counter()
    config = load_config(config_path)
    rng = np.random.default_rng(0)
    rows = max(1, int(table_kb * 1024 / 76))  # 4 float columns: ~76 bytes a row as CSV
    frame = pd.DataFrame(rng.normal(size=(rows, 4)), columns=["episode", "a", "b", "c"])
    with ResultsStore(out, lock=True) as store:
        store.register(config.runs)
        for run in config.runs:
            store.save_tables(run, {"toy_mdp": frame})
            store.mark_finished(run.run_id, "done")
    return time.perf_counter() - start


def evict(folder: Path) -> None:
    """Drop ``folder``'s files from the page cache (``posix_fadvise DONTNEED``; they were
    synced when written), as after a reboot or on another node of a shared filesystem."""
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)  # a dirty page cannot be dropped
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def timed(args: list[str]) -> tuple[float, float, str]:
    """Run a ``maxminq`` command; its wall and CPU seconds (user + system: steadier than
    wall time on a loaded machine) and last output line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "maxminq", *args], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no error output)"])[-1]
        raise SystemExit(f"maxminq {' '.join(args)} exited {proc.returncode}: {last}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return seconds, cpu, lines[-1] if lines else ""


OURS = {"bench.yaml", "out", "copy"}  # what this script writes in --dir


def check_dir(parser: argparse.ArgumentParser, root: Path, reuse: bool) -> None:
    """Refuse a ``--dir`` holding files this script did not write (it deletes an earlier
    run's first and its own at the end), or, with ``--reuse``, one that holds no store of an
    earlier ``--keep`` run."""
    config = root / "bench.yaml"
    ours = config.is_file() and config.read_text().startswith("name: bench_resume\n")
    if reuse:
        if not (ours and (root / "out" / "results.sqlite").is_file()):
            parser.error(f"--reuse: {root} holds no store of an earlier --keep run")
        return
    if root.exists() and not root.is_dir():
        parser.error(f"--dir: {root} is a file, not a folder")
    if root.is_dir() and any(root.iterdir()):
        others = sorted(p.name for p in root.iterdir() if p.name not in OURS)
        if others or not ours:
            what = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            parser.error(
                f"--dir: {root} holds files this script did not write ({what or 'no bench.yaml'}"
                ") and would delete them; give a new or empty folder"
            )


def main(argv: list[str] | None = None) -> None:
    """Build the store, time the commands, print one line each."""
    parser = Parser(description=__doc__.splitlines()[0])
    # None: not given (--reuse times the store as it is, and refuses them)
    parser.add_argument(
        "--runs", type=positive_int, default=None, help="finished runs in the store (3000)"
    )
    parser.add_argument(
        "--table-kb", type=positive_float, default=None, help="table bytes per run (KB; 20)"
    )
    parser.add_argument(
        "--dir",
        default="/tmp/bench_sweep_resume",
        help="scratch folder (new, empty or one this script wrote; default "
        "/tmp/bench_sweep_resume): an earlier run's files in it are deleted first, and this "
        "run's at the end unless --keep, with the folder if the script made it; with --reuse "
        "only the copy the run makes in it is removed",
    )
    parser.add_argument("--keep", action="store_true", help="keep the folders afterwards")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="check that the script works: each kind of timing once (no repeats, --dry-run "
        "or plain status)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time the store --dir holds from an earlier --keep run (e.g. to compare two "
        "versions of maxminq on the same files: PYTHONPATH=OTHER/src; add --keep to keep it "
        "for the next)",
    )
    args = parser.parse_args(argv)
    for option, value in (("--runs", args.runs), ("--table-kb", args.table_kb)):
        if args.reuse and value is not None:  # else silently not what was asked for
            parser.error(f"{option}: not with --reuse, which times the store --dir holds")
    args.runs = 3000 if args.runs is None else args.runs
    args.table_kb = 20.0 if args.table_kb is None else args.table_kb
    root = Path(args.dir)
    check_dir(parser, root, args.reuse)
    config = root / "bench.yaml"
    out, copy = root / "out", root / "copy"
    made = [p for p in (root, *root.parents) if not p.exists()]  # deepest first
    if args.reuse:
        args.runs = len(load_config(config).runs)
        remove(copy)
    else:
        for path in (config, out, copy):  # an earlier run's; the folder itself may be the user's
            remove(path)
        root.mkdir(parents=True, exist_ok=True)
    try:
        measure(args, config, out, copy)
    finally:  # also on an error or Ctrl-C: a paper-scale store is about 1 GB
        if not args.keep:
            # A reused store is an earlier run's (perhaps the only copy of it): only the
            # copy this run made goes; a store this run built goes, and the folders it made.
            for path in (copy,) if args.reuse else (config, out, copy):
                remove(path)
            for folder in made:
                try:
                    folder.rmdir()
                except OSError:  # not empty: someone else's files are in it
                    break


def remove(path: Path) -> None:
    """Delete the file or folder ``path`` if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def measure(args: argparse.Namespace, config: Path, out: Path, copy: Path) -> None:
    """Build the store (unless ``--reuse``), then time the commands, one line each."""
    if args.reuse:
        built = 0.0
    else:
        write_config(config, args.runs)
        built = build_store(config, out, args.table_kb)
    size = sum(f.stat().st_size for f in (out / "tables").rglob("*.csv")) / 2**20
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"{stamp}, {platform.node()}: {args.runs} finished runs, {size:.0f} MiB of tables "
        f"({'reused' if args.reuse else f'built in {built:.0f} s'}); per command: wall and "
        "CPU seconds"
    )

    def sweep(folder: Path, label: str, repeat: bool = False) -> None:
        if repeat and args.smoke:
            return
        wall, cpu, line = timed(["sweep", str(config), "--out", str(folder), "--no-progress"])
        inner = re.search(r" in ([0-9.]+) s ->", line)
        if not (inner and f"{args.runs} already done" in line):
            raise SystemExit(f"unexpected summary of maxminq sweep: {line!r}")
        print(f"  {label:<46} {wall:6.2f} s  {cpu:6.2f} s CPU  (run_sweep: {inner.group(1)} s)")

    sweep(out, "sweep, all done (folder as written)")
    sweep(out, "sweep, all done, again", repeat=True)
    evict(out)
    sweep(out, "sweep, all done, cold page cache")
    shutil.copytree(out, copy)  # new inodes and times
    sweep(copy, "sweep, all done, on a cp -r copy (first time)")
    sweep(copy, "sweep, all done, on the copy again", repeat=True)
    for label, cmd in (
        ("sweep --dry-run", ["sweep", str(config), "--out", str(out), "--dry-run"]),
        ("status", ["status", str(out)]),
        ("status --verify (hashes every file)", ["status", str(out), "--verify"]),
    ):
        if args.smoke and "--verify" not in cmd:
            continue
        wall, cpu, _ = timed(cmd)
        print(f"  {label:<46} {wall:6.2f} s  {cpu:6.2f} s CPU")


if __name__ == "__main__":
    main()
