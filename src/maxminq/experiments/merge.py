"""Bring the results folders of one sweep, run on several machines, together into one.

``maxminq merge DIR1 DIR2 ... --out OUT`` (:func:`merge_folders`): each ``DIR`` is the
``--out`` of a sweep of the same config(s) (typically one ``--shard K/M`` per machine,
:mod:`maxminq.experiments.shard`), copied to this machine. The merged ``OUT`` reads as if
one machine had run the whole sweep (``maxminq status``, ``maxminq report``,
:func:`maxminq.experiments.store.load_results`).

Nothing is lost and nothing mixed:

- Folders of different configs (another set of config names, or a config edited between
  the machines' sweeps: another grid, another scale, as their recorded plans tell) are
  refused in one line naming the difference.
- A run finished (done or diverged, its tables verifying) in one folder is taken from it,
  its table files (and TensorBoard logs) copied and verified again in ``OUT``. A run left
  pending or failed in one folder and finished in another is taken finished.
- A run finished in several folders with the same results (status and every table's
  SHA-256, or the tables' values but for :data:`WALL_CLOCK`'s columns, a deep run's
  ``steps_per_s``) is taken once; with different results it is a conflict: refused, naming the
  run, the folders and what differs (the same settings gave other numbers there: another
  machine's floating point, another version of the code). ``keep_first`` keeps the first
  folder's instead (``OUT`` first when it exists, then the folders in the order given),
  and names each such run.
- A run finished nowhere keeps its most telling row (failed, with its error, before
  pending); the next sweep into ``OUT`` runs it. Its scratch folder (``work/<run_id>``:
  the checkpoints a deep run continues from) comes with the row, so that the next sweep
  continues it rather than starting over (:func:`_unfinished_source`): the row is taken
  from the folder whose scratch holds something to continue from
  (:func:`~maxminq.experiments.store.holds_progress`), the furthest on
  (``progress.json``) of several, the failed row on a tie, then the first folder. The
  dead worker's ``worker.json`` is left behind; the files are hard-linked where possible
  (a deep run replaces its files by a rename, never rewrites one in place, so the folders
  do not change each other). A run finished in some folder takes no scratch from any but
  the one ``--keep-work`` kept where it is taken from (its ``model.pt``), which stays kept.

``OUT`` may be new (or empty), or a results folder already: a second merge when a third
machine finishes takes ``OUT``'s own runs as the first folder's. The merged folder is built
beside ``OUT`` under a hidden temporary name (``.OUT.merge-XXXXXXXX.tmp``) and put in place
with one atomic rename (``renameat2(RENAME_EXCHANGE)`` for an existing ``OUT``): a merge
interrupted (Ctrl-C, kill -9, a full disk) leaves ``OUT`` absent or as it was, never half
merged; the next merge removes the temporary folder a killed one left. (Where folders
cannot be exchanged, e.g. on NFS, an existing ``OUT`` is moved aside for the moment of two
renames: a kill -9 just then leaves it as ``.OUT.merge-previous``, which the next merge puts
back first.) ``OUT``'s sweep lock is held throughout, so no sweep writes it meanwhile; a
folder a sweep is writing is refused.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from maxminq.errors import CannotResumeError, UsageError
from maxminq.experiments.shard import PLAN_PREFIX, SHARD_PREFIX, read_plans
from maxminq.experiments.software import (
    SOFTWARE_PREFIX,
    differences,
    folder_software,
    merged_entries,
)
from maxminq.experiments.store import (
    DB_NAME,
    FINISHED,
    INTERRUPTED,
    LOCK_NAME,
    MANIFEST,
    TABLES_DIR,
    WORK_DIR,
    WORK_KEPT,
    WORKER_FILE,
    ResultsStore,
    RunRecord,
    StoreError,
    _fsync_dir,
    _read_manifest,
    holds_progress,
    in_use_message,
    last_line,
    now,
    read_progress,
    read_run_tables,
    sweep_owner,
    verify_run_tables,
)

LOGS_DIR = "tensorboard"  # runner.LOGS: OUT/tensorboard/<run_id>
# What the store itself holds in OUT; everything else there (a report, reproduce.json,
# theory/) is carried over from an existing OUT as it is.
_STORE_ENTRIES = {
    DB_NAME,
    DB_NAME + "-wal",
    DB_NAME + "-shm",
    DB_NAME + "-journal",
    TABLES_DIR,
    WORK_DIR,
    LOGS_DIR,
    LOCK_NAME,
}
RENAME_EXCHANGE = 2  # linux/fs.h
# Columns that measure the machine a run ran on, not the run: a run finished in two folders
# whose tables differ only in these has the same results (the first folder's are taken).
WALL_CLOCK = {"metrics": ("steps_per_s",)}


@dataclass
class MergeSummary:
    """What :func:`merge_folders` did."""

    out: Path
    folders: list[Path]
    runs: int = 0
    finished: int = 0
    taken: dict[str, int] = field(default_factory=dict)  # folder -> finished runs taken
    same_twice: int = 0  # finished in several folders with the same results
    kept_first: list[str] = field(default_factory=list)  # conflicts settled by keep_first
    unverified: list[str] = field(default_factory=list)  # "done" but tables do not verify
    # folder -> runs left to run here that were running there (copied mid-sweep)
    in_flight: dict[str, int] = field(default_factory=dict)
    # runs left to run whose scratch folder (a checkpoint to continue from) came with them
    resumable: int = 0
    # name -> [(version, folders that ran with it)] for the versions that differ
    software: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    shards: list[str] = field(default_factory=list)  # shards that do not make one split

    def line(self) -> str:
        """A one-line human summary."""
        taken = ", ".join(f"{n} from {folder}" for folder, n in self.taken.items() if n)
        left = self.runs - self.finished
        twice = (
            f"; {self.same_twice} finished in several folders with the same results, taken once"
            if self.same_twice
            else ""
        )
        resume = (
            f", {self.resumable} of them from a checkpoint in {self.out / WORK_DIR}"
            if self.resumable
            else ""
        )
        return (
            f"merged {len(self.folders)} folder(s) into {self.out}: {self.runs} runs, "
            f"{self.finished} finished ({taken or 'none'}){twice}; {left} left to run{resume}"
        )

    def note_lines(self) -> list[str]:
        """The lines under :meth:`line`: conflicts kept from the first folder, and runs
        recorded finished whose tables failed verification (left to run again)."""
        return (
            [f"  kept first: {text}" for text in self.kept_first]
            + [f"  not taken: {text}" for text in self.unverified]
            + [
                f"  {n} run(s) were running in {folder} (copied while its sweep ran, or that "
                "sweep was stopped): left to run here; let that sweep finish and copy its "
                "folder again before merging, or sweep into --out"
                for folder, n in self.in_flight.items()
            ]
            + self.shards
            + self._software_lines()
        )

    def _software_lines(self) -> list[str]:
        """The line saying which folders ran other versions (maxminq's git revision,
        numpy, ...), if any did."""
        if not self.software:
            return []
        said = "; ".join(
            f"{name} " + ", ".join(f"{value} in {', '.join(where)}" for value, where in seen)
            for name, seen in self.software.items()
        )
        return [
            f"  the folders' runs were computed with other software ({said}): each run is "
            "merged as its folder computed it; sweep the runs again with one version to "
            "compare like with like"
        ]


@dataclass
class _Run:
    """One run as a folder holds it."""

    rec: RunRecord
    finished: bool
    status: str  # the final status of a finished run; else the row's
    note: str | None
    fingerprint: tuple[str, tuple[tuple[str, str], ...]] | None  # status and table digests


@dataclass
class _Folder:
    """What :func:`merge_folders` reads of one results folder."""

    path: Path
    runs: dict[str, _Run]
    members: list[tuple[str, str]]
    events: dict[str, list[dict[str, Any]]]
    plans: dict[str, dict[str, Any]]
    configs: list[str]
    software: dict[str, str] = field(default_factory=dict)  # its software:<config> entries
    shards: dict[str, str] = field(default_factory=dict)  # config -> its --shard (K/M)
    is_out: bool = False
    # finished runs whose scratch folder --keep-work kept (ResultsStore.work_kept)
    kept: set[str] = field(default_factory=set)


def _read_folder(store: ResultsStore, is_out: bool = False) -> _Folder:
    """Everything the merge needs of ``store``'s folder, read once."""
    runs: dict[str, _Run] = {}
    for rec in store.records():
        done, _ = store.finished(rec)
        status, note, fingerprint = rec.status, rec.error, None
        if done:
            if rec.status not in FINISHED:  # left running or pending with stored tables
                status, note = store.stored_status(rec.run_id)
            manifest = _read_manifest(store.run_tables_dir(rec.run_id), rec.run_id)
            digests = tuple(
                sorted((str(k), str(v.get("sha256"))) for k, v in manifest["tables"].items())
            )
            fingerprint = (status, digests)
        runs[rec.run_id] = _Run(rec, done, status, note, fingerprint)
    events: dict[str, list[dict[str, Any]]] = {}
    for event in store.events():
        events.setdefault(event["run_id"], []).append(event)
    members = store.members()
    plans = read_plans(store.meta_items(PLAN_PREFIX))
    for name in {c for c, _ in members} - set(plans):  # a folder swept before plans were kept:
        # its runs of the config (those of its sweeps, and of earlier versions of it)
        plans[name] = {"runs": sorted(r for c, r in members if c == name), "members": True}
    software = store.meta_items(SOFTWARE_PREFIX)
    shards = {k[len(SHARD_PREFIX) :]: v for k, v in store.meta_items(SHARD_PREFIX).items()}
    # and, of a run a killed sweep stored but did not mark finished, the folder that sweep
    # kept (--keep-work, ResultsStore.attempt_keeps_work), as the next sweep there keeps it
    kept = {
        run_id
        for run_id, run in runs.items()
        if run.finished
        and store.work_dir(run_id).is_dir()
        and (
            store.work_kept(run_id)
            or (run.rec.status not in FINISHED and store.attempt_keeps_work(run_id))
        )
    }
    return _Folder(
        store.out_dir,
        runs,
        members,
        events,
        plans,
        store.configs(),
        software,
        shards,
        is_out=is_out,
        kept=kept,
    )


def _other_machines(folders: Sequence[_Folder]) -> bool:
    """Whether ``folders`` (two or more) ran their runs on different machines: no host ran
    runs in two of them (two copies of one machine's folder share its host)."""
    hosts = [{r.rec.host for r in f.runs.values() if r.finished and r.rec.host} for f in folders]
    if len(hosts) < 2 or not all(hosts):
        return False
    return all(not (a & b) for i, a in enumerate(hosts) for b in hosts[i + 1 :])


def _shard_notes(folders: Sequence[_Folder]) -> list[str]:
    """Per sharded config (as its plan names it) whose folders' shards do not make one
    split: shards of splits into another number of machines (``--shard 1/2`` here, ``2/3``
    there), or the same shard in two folders (a command copied from another machine
    unedited). Either way some runs ran twice and others nowhere: the merge is right, but
    its 'left to run' needs saying why."""
    notes = []
    for name in sorted({n for f in folders for n in f.shards if n in f.plans}):
        held = [(f.shards[name], str(f.path)) for f in folders if name in f.shards]
        splits = {value.partition("/")[2] for value, _ in held}
        values = [value for value, _ in held]
        if len(splits) > 1:
            why = "shards of different splits: some runs ran in two folders, others in none"
        elif any(_other_machines([f for f in folders if f.shards.get(name) == v]) for v in values):
            why = (
                "the same shard on two machines (a command copied from another machine?): "
                "its runs ran twice, another shard's nowhere"
            )
        else:  # one split; or two copies of one machine's folder (copied again later)
            continue
        said = ", ".join(f"{value} in {path}" for value, path in held)
        notes.append(
            f"  {name}: the folders ran --shard {said}: {why}; a plain 'maxminq sweep' (or "
            "'reproduce') into --out runs what no folder finished"
        )
    return notes


def _software_differences(folders: Sequence[_Folder]) -> dict[str, list[tuple[str, list[str]]]]:
    """Name -> [(version, the folders whose sweeps ran with it)] for the versions
    (:mod:`maxminq.experiments.software`) that differ between the folders' sweeps; folders
    that recorded none (an older maxminq) are left out."""
    per = [
        (str(f.path), [v for sets in folder_software(f.software).values() for v in sets])
        for f in folders
    ]
    differ = differences([v for _, sets in per for v in sets])
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for name, values in differ.items():
        out[name] = [
            (value, [path for path, sets in per if any(v.get(name, "none") == value for v in sets)])
            for value in values
        ]
    return out


def _check_same_sweep(folders: Sequence[_Folder]) -> None:
    """Refuse folders that do not hold the same config(s) at the same plan."""
    first = folders[0]
    for other in folders[1:]:
        only = sorted(set(other.configs) ^ set(first.configs))
        if only:
            where = {c: (other.path if c in other.configs else first.path) for c in only}
            said = ", ".join(f"{c} (only in {where[c]})" for c in only)
            raise UsageError(
                f"DIR: {first.path} and {other.path} hold different configs: {said}; merge "
                "brings together the folders of one sweep (each machine's --shard of the "
                "same config)"
            )
    for name in sorted({name for f in folders for name in f.plans}):
        holders = [f for f in folders if name in f.plans]
        recorded = [f for f in holders if not f.plans[name].get("members")]
        for b in recorded[1:]:
            if set(recorded[0].plans[name]["runs"]) != set(b.plans[name]["runs"]):
                raise UsageError(f"DIR: {_plan_difference(name, recorded[0], b)}")
        if not recorded:  # no plan anywhere (folders of an older maxminq): the runs decide
            continue
        plan = set(recorded[0].plans[name]["runs"])
        for b in holders:  # an older folder registered every run of its config's sweep
            if b.plans[name].get("members") and not plan <= set(b.plans[name]["runs"]):
                raise UsageError(f"DIR: {_plan_difference(name, recorded[0], b)}")


def _plan_difference(name: str, a: _Folder, b: _Folder) -> str:
    """Why config ``name`` of folder ``b`` is not that of ``a``: another scale, or the
    settings only ``b``'s runs take (with ``a``'s values), as ``maxminq sweep`` names an
    edited config's."""
    from maxminq.commands.sweep import edit_differences

    pa, pb = a.plans[name], b.plans[name]
    head = f"{b.path} holds another version of config {name} than {a.path}"
    tail = "; merge only the folders of one config file swept at one --scale"
    sa, sb = pa.get("scale"), pb.get("scale")
    if sa and sb and sa != sb:
        return f"{head}: scale {sb} (in {a.path}: {sa}){tail}"

    def settings(folder: _Folder, ids: set[str]) -> list[dict[str, Any]]:
        return [folder.runs[r].rec.settings for r in sorted(ids) if r in folder.runs]

    ia, ib = set(pa["runs"]), set(pb["runs"])
    differs = edit_differences(settings(b, ib - ia), settings(a, ia), label=f"in {a.path}")
    if not differs:
        differs = edit_differences(settings(a, ia - ib), settings(b, ib), label=f"in {b.path}")
    said = "; ".join(differs) if differs else f"{len(ia ^ ib)} run(s) only in one of them"
    code = {k: v for k, v in _software_differences([a, b]).items() if k in ("maxminq", "git")}
    if code:  # the same config file may make other runs (ids) under another maxminq
        versions = "; ".join(
            f"{name} " + ", ".join(f"{value} in {', '.join(where)}" for value, where in seen)
            for name, seen in code.items()
        )
        tail = (
            f"; their sweeps ran other versions of maxminq ({versions}), which may make "
            "other runs of one config file: sweep every shard with one version"
        )
    return f"{head}: {said}{tail}"


def _same_results(run_id: str, a: _Folder, b: _Folder) -> bool:
    """Whether run ``run_id`` finished with the same results in folders ``a`` and ``b``:
    the same status and tables, byte for byte or but for the columns of
    :data:`WALL_CLOCK` (a deep run's ``steps_per_s``: each machine's own speed)."""
    fa, fb = a.runs[run_id].fingerprint, b.runs[run_id].fingerprint
    if fa == fb:
        return True
    assert fa is not None and fb is not None
    if fa[0] != fb[0] or [k for k, _ in fa[1]] != [k for k, _ in fb[1]]:
        return False
    return not _differing_tables(run_id, a, b)


def _differing_tables(run_id: str, a: _Folder, b: _Folder) -> list[str]:
    """The tables of run ``run_id`` whose contents differ between folders ``a`` and ``b``
    (a table only one has included), leaving out the columns of :data:`WALL_CLOCK`."""
    fa, fb = a.runs[run_id].fingerprint, b.runs[run_id].fingerprint
    assert fa is not None and fb is not None
    ta, tb = dict(fa[1]), dict(fb[1])
    names = sorted(k for k in set(ta) | set(tb) if ta.get(k) != tb.get(k))
    differ = []
    for name in names:
        drop = WALL_CLOCK.get(name)
        if drop is None or name not in ta or name not in tb:
            differ.append(name)
            continue
        x, y = (read_run_tables(f.path / TABLES_DIR / run_id, run_id, {name})[name] for f in (a, b))
        x, y = (t.drop(columns=[c for c in drop if c in t.columns]) for t in (x, y))
        if not x.equals(y):
            differ.append(name)
    return differ


def _conflict_text(run_id: str, a: _Folder, b: _Folder) -> str:
    """What differs between a run finished in folders ``a`` and ``b``."""
    fa, fb = a.runs[run_id].fingerprint, b.runs[run_id].fingerprint
    assert fa is not None and fb is not None
    if fa[0] != fb[0]:
        what = f"{fa[0]} in {a.path}, {fb[0]} in {b.path}"
    else:
        names = _differing_tables(run_id, a, b)
        plural = len(names) > 1
        what = f"table{'s' if plural else ''} {', '.join(names)} differ{'' if plural else 's'}"
    return f"run {run_id} finished with different results in {a.path} and {b.path} ({what})"


def _link_or_copy(src: str, dst: str) -> None:
    """Hard-link ``src`` to ``dst`` (the store never rewrites a file in place: it renames
    a new one over it), else copy it: a symlink as a symlink (copying what it points to
    failed a merge for a symlink to a folder, or a dangling one, in ``OUT``)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def _copy_tree(src: Path, dst: Path, copy: Callable[[str, str], object]) -> None:
    """``src`` copied to ``dst`` (made) with ``copy`` for each file, its folders writable
    by their owner: ``copytree`` gives each folder its source's mode, and a source the user
    may not write (read-only results: an archive, a colleague's folder) left read-only
    folders in ``OUT`` (a finished run's TensorBoard logs) that its owner could not delete,
    nor a later merge into ``OUT`` remove with the old ``OUT`` (left beside it)."""
    shutil.copytree(src, dst, copy_function=copy, symlinks=True, dirs_exist_ok=True)
    for where, _, _ in os.walk(dst):  # symlinked folders are not walked into
        mode = os.stat(where).st_mode
        if not mode & stat.S_IWUSR:
            os.chmod(where, stat.S_IMODE(mode) | stat.S_IWUSR)


def _remove_tree(path: Path) -> None:
    """Remove the folder ``path`` (an old ``OUT`` a merge replaced, or a merge's temporary)
    as far as its owner may, also the folders in it its owner made read-only (logs that a
    maxminq before d27e903 copied read-only from read-only results; one of the user's):
    ``rmtree`` cannot empty those, and left the old ``OUT`` beside the new one for good.
    Only real folders are opened to their owner (u+rwx), never a symlink's target."""

    def opened(folder: str) -> None:
        try:
            mode = os.lstat(folder).st_mode
            if stat.S_ISDIR(mode) and stat.S_IMODE(mode) & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(folder, stat.S_IMODE(mode) | stat.S_IRWXU)
        except OSError:  # not its owner's: rmtree leaves what it cannot remove
            pass

    opened(str(path))
    for where, dirs, _ in os.walk(path):  # symlinked folders are not walked into
        for name in dirs:  # before os.walk reads it, and before rmtree empties it
            opened(os.path.join(where, name))
    shutil.rmtree(path, ignore_errors=True)


def _copy_tables(folder: _Folder, run_id: str, dest_root: Path) -> None:
    """Copy one finished run's table files and manifest (manifest last), then verify them
    where they now are."""
    src = folder.path / TABLES_DIR / run_id
    dst = dest_root / TABLES_DIR / run_id
    dst.mkdir(parents=True, exist_ok=True)
    copy: Callable[[str, str], object] = _link_or_copy if folder.is_out else shutil.copy2
    manifest = _read_manifest(src, run_id)
    for entry in manifest["tables"].values():
        name = str(entry.get("file"))
        copy(str(src / name), str(dst / name))
    copy(str(src / MANIFEST), str(dst / MANIFEST))
    problem = verify_run_tables(dst, run_id)
    if problem is not None:  # changed under the merge (a sweep started there meanwhile?)
        raise UsageError(
            f"DIR: {folder.path}: the tables of run {run_id} changed while they were copied "
            f"({problem}); run the merge again"
        )
    logs = folder.path / LOGS_DIR / run_id
    if logs.is_dir():
        _copy_tree(logs, dest_root / LOGS_DIR / run_id, copy)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step (Linux ``renameat2`` with
    ``RENAME_EXCHANGE``); False where that is not supported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def temporary_prefix(out: Path) -> str:
    """The prefix of the temporary folders a merge into ``out`` builds beside it."""
    return f".{out.name}.merge-"


def remove_killed_merges(out: Path) -> None:
    """Delete the temporary folders of merges into ``out`` that were killed (kill -9, a
    power cut) before they finished: those whose lock no merge holds any more."""
    parent = out.parent
    if not parent.is_dir():
        return
    for tmp in parent.glob(f"{temporary_prefix(out)}*.tmp"):
        if tmp.is_dir() and sweep_owner(tmp) is None:
            _remove_tree(tmp)


def _check_folder(path: Path) -> None:
    """A results folder to merge: one line naming it when it is none, or a sweep is
    writing it now."""
    if not path.is_dir():
        raise UsageError(f"DIR: {path}: no such folder; give the --out folders of the sweeps")
    if not (path / DB_NAME).is_file():
        raise UsageError(
            f"DIR: {path}: no {DB_NAME} here; give the --out folders of the sweeps to merge"
        )
    owner = sweep_owner(path)
    if owner is not None:
        raise UsageError(f"DIR: {in_use_message(path, owner)}")


def merge_folders(
    folders: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    keep_first: bool = False,
) -> MergeSummary:
    """Merge the results folders ``folders`` (and ``out``'s own runs, when it is one
    already) into ``out``; see the module docstring. Raises :class:`UsageError` in one
    line for folders that cannot be merged (nothing written then)."""
    out = Path(out)
    recover_aside(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a folder")
    existing = out.is_dir() and (out / DB_NAME).is_file()
    if out.is_dir() and not existing and any(out.iterdir()):
        raise UsageError(
            f"--out: {out} holds files but no {DB_NAME}: give a new folder, or a results "
            "folder to merge into"
        )
    paths: list[Path] = []
    seen = {out.resolve()} if existing else set()
    for folder in folders:
        path = Path(folder)
        _check_folder(path)
        if path.resolve() not in seen:
            seen.add(path.resolve())
            paths.append(path)
    if not paths:
        raise UsageError("DIR: give at least one results folder other than --out to merge")
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_killed_merges(out)

    out_store: ResultsStore | None = None
    stores: list[ResultsStore] = []
    tmp: Path | None = None
    try:
        if existing:
            try:  # held to the end: no sweep writes OUT while it is merged
                out_store = ResultsStore(out, create=False, lock=True)
            except StoreError as err:
                raise UsageError(f"--out: {err}") from None
        read: list[_Folder] = [_read_folder(out_store, is_out=True)] if out_store else []
        for path in paths:
            try:
                store = ResultsStore(path, create=False)
            except StoreError as err:
                raise UsageError(f"DIR: {err}") from None
            stores.append(store)
            read.append(_read_folder(store))
        _check_same_sweep(read)
        summary = MergeSummary(out, [f.path for f in read])
        summary.software = _software_differences(read)
        summary.shards = _shard_notes(read)
        summary.taken = {str(f.path): 0 for f in read}
        rows, members, events, copies, scratch = _decide(read, summary, keep_first)

        tmp = Path(tempfile.mkdtemp(prefix=temporary_prefix(out), suffix=".tmp", dir=out.parent))
        # mkdtemp makes it 0700: OUT's own mode, or a new folder's (results are shared)
        os.chmod(tmp, out.stat().st_mode & 0o7777 if existing else _folder_mode())
        # Its lock is held until it is in place: remove_killed_merges (another merge into
        # OUT) deletes only temporary folders whose lock no merge holds.
        merged = ResultsStore(tmp, lock=True)
        try:
            merged.import_runs(rows, members, events)
            plans: dict[str, str | None] = {}
            for held in reversed(read):  # the first folder's plan of a config wins
                for name, plan in held.plans.items():
                    if not plan.get("members"):  # recorded by a sweep, not made up here
                        plans[PLAN_PREFIX + name] = json.dumps(plan, separators=(",", ":"))
            merged.set_meta(plans)  # no shard (shard:<config>): any sweep may go on here
            merged.set_meta(merged_entries([f.software for f in read]))  # every version
            for source, run_id in copies:
                _copy_tables(source, run_id, tmp)
            for source, run_id in scratch:
                _copy_scratch(source, run_id, tmp)
            if existing:
                _carry_over(out, tmp)
            # Closed before the rename: SQLite removes its side files by their path.
            merged.close_database()
            _fsync_dir(tmp / TABLES_DIR)
            _fsync_dir(tmp)
            if existing:
                if not _exchange(tmp, out):
                    _swap_by_two_renames(tmp, out)
                old, tmp = tmp, None  # the old OUT now (a merge killed while it is
                _remove_tree(old)  # removed: the next one removes it)
            else:
                os.rename(tmp, out)  # onto nothing or an empty folder; atomic
                tmp = None
        finally:
            merged.close()
        _fsync_dir(out.parent)
        summary.runs = len(rows)
        return summary
    finally:
        for store in stores:
            store.close()
        if out_store is not None:
            out_store.close()
        if tmp is not None:  # an error or an interrupt before the rename: OUT as it was
            _remove_tree(tmp)


def _folder_mode() -> int:
    """The mode a new folder gets here (0777 less the umask)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


def _aside(out: Path) -> Path:
    """Where :func:`_swap_by_two_renames` moves an existing ``out`` for a moment."""
    return out.with_name(f"{temporary_prefix(out)}previous")


def _swap_by_two_renames(tmp: Path, out: Path) -> None:
    """Put ``tmp`` in ``out``'s place where folders cannot be exchanged atomically (a file
    system without ``RENAME_EXCHANGE``, e.g. NFS): ``out`` moves aside first, then ``tmp``
    takes its name, then the old one goes to ``tmp``'s (removed by the caller). A merge
    killed between the first two renames leaves ``out`` aside (``.OUT.merge-previous``):
    :func:`recover_aside` puts it back before anything else (the next merge calls it)."""
    aside = _aside(out)
    os.rename(out, aside)
    try:
        os.rename(tmp, out)
    except BaseException:  # Ctrl-C or an error between the two: OUT back as it was
        os.rename(aside, out)
        raise
    os.rename(aside, tmp)


def recover_aside(out: Path) -> None:
    """Undo what a merge killed during :func:`_swap_by_two_renames` left: ``out`` moved
    aside and not replaced is put back. With an ``out`` beside it (the merge was killed
    after the second rename, or a sweep made a new ``out`` since), which one to keep is
    not known: a UsageError says so, and nothing is deleted."""
    aside = _aside(out)
    if not aside.is_dir():
        return
    if not out.exists():
        os.rename(aside, out)
        return
    raise UsageError(
        f"--out: {aside} is the folder {out} was before a merge that was killed while it "
        f"replaced it; {out} exists too (that merge's result, or made since): keep the one "
        "you want as --out, remove the other, then merge again"
    )


def _carry_over(out: Path, tmp: Path) -> None:
    """Into the merged folder ``tmp``: what an existing ``out`` holds beside its store (a
    report, ``reproduce.json``, ``theory/``), hard-linked where possible. (The scratch
    folders of its runs still to run come as any folder's: :func:`_copy_scratch`.)"""
    for entry in out.iterdir():
        if entry.name in _STORE_ENTRIES or entry.name.startswith(temporary_prefix(out)):
            continue
        if entry.is_dir() and not entry.is_symlink():
            _copy_tree(entry, tmp / entry.name, _link_or_copy)
        else:
            _link_or_copy(str(entry), str(tmp / entry.name))


def _unfinished_source(run_id: str, holders: Sequence[_Folder]) -> tuple[_Folder, bool]:
    """The folder to take run ``run_id``'s row from when no folder finished it, and
    whether its scratch folder comes too (it holds something to continue from: a
    checkpoint, :func:`~maxminq.experiments.store.holds_progress`).

    A folder whose scratch holds progress is taken before any without: its row and its
    checkpoint go together, so the next sweep continues the run instead of training it
    from the start. Of several, the one whose run got furthest (the step its
    ``progress.json`` reports, a deep run's; a checkpoint is at most ``checkpoint_every``
    steps behind it), then the failed row (the most telling, as without scratch), then
    the first folder (``OUT``, then the ``DIR``s in the order given); a scratch folder
    its run failed to continue from there (:class:`CannotResumeError`: a damaged
    checkpoint) only after every other. Without scratch anywhere: the failed row, else
    the first folder's."""
    ranked = []
    for order, folder in enumerate(holders):
        work = folder.path / WORK_DIR / run_id
        if holds_progress(work):
            rec = folder.runs[run_id].rec
            done = read_progress(work)
            failed = rec.status == "failed"
            stuck = failed and f"{CannotResumeError.__name__}:" in last_line(rec.error)
            key = (not stuck, -1.0 if done is None else done, failed, -order)
            ranked.append((key, folder))
    if ranked:
        return max(ranked, key=lambda item: item[0])[1], True
    failed_first = (f for f in holders if f.runs[run_id].rec.status == "failed")
    return next(failed_first, holders[0]), False


def _copy_scratch(folder: _Folder, run_id: str, dest_root: Path) -> None:
    """Copy a run's scratch folder (an unfinished run's checkpoints) from ``folder`` into the
    merged folder ``dest_root``, hard-linked where possible, without its ``worker.json``:
    the worker that wrote it is gone (the sweep was killed, or ran on another machine), and
    no process runs the run here. A file that cannot be copied (a full disk) raises its
    OSError at once, naming the file (``shutil.copytree`` gathers every file's error into
    one exception whose text is a list of them); one that went while it was copied (a
    sweep started in ``folder`` meanwhile) is a UsageError saying to merge again, as is
    the whole folder gone (that sweep finished the run: its row here is stale)."""
    src = folder.path / WORK_DIR / run_id
    dst = dest_root / WORK_DIR / run_id
    changed = UsageError(
        f"DIR: {folder.path}: the scratch folder of run {run_id} changed while it was "
        "copied (a sweep started there meanwhile?); run the merge again"
    )
    if not src.is_dir():  # os.walk of a folder not there finds nothing, silently
        raise changed
    for where, dirs, files in os.walk(src):
        here = Path(where)
        into = dst / here.relative_to(src)
        into.mkdir(parents=True, exist_ok=True)
        links = [name for name in dirs if (here / name).is_symlink()]
        dirs[:] = [name for name in dirs if name not in links]  # not walked into
        for name in links + files:
            if here == src and name == WORKER_FILE:
                continue
            source, target = here / name, into / name
            try:
                if source.is_symlink():
                    os.symlink(os.readlink(source), target)
                else:
                    _link_or_copy(str(source), str(target))
            except FileNotFoundError:
                raise changed from None
            except OSError as err:
                if err.filename is None:  # e.g. a full disk in the copy's write
                    raise OSError(err.errno, err.strerror or str(err), str(target)) from err
                raise


def _decide(
    read: Sequence[_Folder], summary: MergeSummary, keep_first: bool
) -> tuple[
    list[RunRecord],
    list[tuple[str, str]],
    list[dict[str, Any]],
    list[tuple[_Folder, str]],
    list[tuple[_Folder, str]],
]:
    """Per run: the folder it is taken from, its row, memberships and events; the table
    folders to copy; the scratch folders to copy (from the folder each row is taken from:
    of runs still to run, and of finished ones that ``--keep-work`` kept there)."""
    ids = sorted({r for f in read for r in f.runs})
    rows: list[RunRecord] = []
    copies: list[tuple[_Folder, str]] = []
    events: list[dict[str, Any]] = []
    scratch: list[tuple[_Folder, str]] = []
    conflicts: list[str] = []
    for run_id in ids:
        holders = [f for f in read if run_id in f.runs]
        done = [f for f in holders if f.runs[run_id].finished]
        for f in holders:
            r = f.runs[run_id]
            if r.rec.status in FINISHED and not r.finished:
                problem = verify_run_tables(f.path / TABLES_DIR / run_id, run_id)
                summary.unverified.append(f"{run_id} in {f.path}: {problem}")
        with_scratch = False  # its scratch folder comes too
        if done:
            src = done[0]
            same = [other for other in done[1:] if _same_results(run_id, src, other)]
            summary.same_twice += bool(same)
            for other in done[1:]:
                if other not in same:
                    text = _conflict_text(run_id, src, other)
                    (summary.kept_first if keep_first else conflicts).append(
                        f"{text}: kept {src.path}'s" if keep_first else text
                    )
            r = src.runs[run_id]
            rec = replace(r.rec, status=r.status, error=r.note, finished=r.rec.finished or now())
            copies.append((src, run_id))
            # a scratch folder that --keep-work kept (model.pt for maxminq evaluate)
            if run_id in src.kept:
                scratch.append((src, run_id))
                with_scratch = True
            summary.finished += 1
            summary.taken[str(src.path)] += 1
        else:
            src, with_scratch = _unfinished_source(run_id, holders)
            rec = src.runs[run_id].rec
            if rec.status != "failed" and rec.status != "pending":  # running, or "done"
                why = INTERRUPTED if rec.status == "running" else "results failed verification"
                rec = replace(rec, status="pending", error=why)
            running = [f for f in holders if f.runs[run_id].rec.status == "running"]
            for f in running[:1]:  # a folder copied mid-sweep (or whose sweep was killed)
                summary.in_flight[str(f.path)] = summary.in_flight.get(str(f.path), 0) + 1
            if with_scratch:
                scratch.append((src, run_id))
                summary.resumable += 1
        # registered first where it was registered first: each machine registered all the
        # config's runs at once, so the merged rows list as one machine's (created, run id)
        rec = replace(rec, created=min(f.runs[run_id].rec.created for f in holders))
        rows.append(rec)
        for f in holders:
            events.extend(f.events.get(run_id, []))
        if not with_scratch:
            how = f"from {src.path}"
        elif done:  # still kept here: the next sweep leaves it, as in src
            how = f"from {src.path}, with the scratch folder --keep-work kept"
        else:
            how = f"from {src.path}, with its checkpoint"
        events.append({"run_id": run_id, "event": "merged", "time": now(), "detail": how})
        if with_scratch and done:
            events.append({"run_id": run_id, "event": WORK_KEPT, "time": now(), "detail": how})
    if conflicts:
        more = f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else ""
        raise UsageError(
            f"DIR: {conflicts[0]}{more}: the same settings gave other numbers there (another "
            "machine's floating point, or another version of maxminq); nothing was merged: "
            "--keep-first keeps the first folder's (--out's when it exists, then the DIRs in "
            "the order given)"
        )
    known = set(ids)
    members = sorted({m for f in read for m in f.members if m[1] in known})
    return rows, members, events, copies, scratch
