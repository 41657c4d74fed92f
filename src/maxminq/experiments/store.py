"""The results store of a sweep folder: a SQLite run registry plus verified CSV tables.

Layout of an output folder ``OUT``::

    OUT/results.sqlite                 run registry (tables ``runs``, ``events``, ``members``)
    OUT/tables/<run_id>/<table>.csv    one file per result table of a finished run
    OUT/tables/<run_id>/manifest.json  row counts, columns and SHA-256 of every table file
    OUT/work/<run_id>/                 scratch space and checkpoints of a run in progress
    OUT/.sweep.lock                    held (``flock``) by the sweep currently writing here

A run counts as finished only when its manifest verifies: every table file exists with the
recorded size and checksum (and its registry row says ``done`` or ``diverged``, or a sweep
brings the row in line: one left ``running`` or ``pending`` by an interrupted sweep or a
lost registry gets the final status its manifest records). Table files
and the manifest are written to a temporary name in the same folder and renamed
(``os.replace``) when complete, manifest last, so a crash at any moment leaves either a
verifiable run or one that is detected as incomplete and re-run; never a half-written file
that is read as a result.

Every check reads the whole file and compares its SHA-256 (no shortcut by size and mtime,
which would miss a file damaged below the filesystem): a resumed sweep checks all its
runs' tables, about 0.3 s for 3,000 runs of 20 KB and 0.6-0.9 s for 600 runs of 1.5 MB
(908 MiB; 1.7 s from a cold page cache) on this project's 2-core machine
(``benchmarks/bench_sweep_resume.py``, 2026-11-23).

Only the sweep driver writes here (workers return their tables to it), so one writer holds
the folder lock; readers (``maxminq status``, :func:`load_results`) may run at any time
because the database is in WAL mode and every write is a short transaction. (A reader that
may not write the folder reads a database no sweep holds from a copy in memory, made with
the folder lock held shared, which a sweep starting meanwhile waits for; see
``ResultsStore._connect``.)
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import socket
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from maxminq._progress import PROGRESS_FILE, read_progress_report
from maxminq.errors import MaxminqError, MaxminqWarning, closest

STATUSES = ("pending", "running", "done", "failed", "diverged")
FINISHED = ("done", "diverged")
INTERRUPTED = "interrupted (the sweep stopped during this run)"  # why a run was requeued
DB_NAME = "results.sqlite"
TABLES_DIR = "tables"
WORK_DIR = "work"
WORK_KEPT = "work kept"  # the event of a run finished by a sweep with --keep-work
KEEP_WORK_DETAIL = "--keep-work"  # the detail of a 'started' event of such a sweep's attempt
# Meta key: the id of the last event logged before a maxminq that logs WORK_KEPT first
# opened the folder to write it. Runs finished before then (an older maxminq's) have no
# such event either way: their scratch folders are taken as kept (ResultsStore.work_kept).
WORK_KEPT_AFTER = "work_kept_after_event"
LOCK_NAME = ".sweep.lock"
# Seconds a sweep waits for readers that may not write its folder to copy its database
# (ResultsStore._snapshot: milliseconds for thousands of runs) before it gives up.
READER_WAIT = 30.0
MANIFEST = "manifest.json"
SCHEMA_VERSION = 1
_TABLES = ("meta", "runs", "members", "events")  # those _SCHEMA creates

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs (
    run_id   TEXT PRIMARY KEY,
    config   TEXT NOT NULL,
    kind     TEXT NOT NULL,
    settings TEXT NOT NULL,
    status   TEXT NOT NULL DEFAULT 'pending'
             CHECK (status IN ('pending', 'running', 'done', 'failed', 'diverged')),
    attempts INTEGER NOT NULL DEFAULT 0,
    created  TEXT NOT NULL,
    started  TEXT,
    finished TEXT,
    host     TEXT,
    pid      INTEGER,
    error    TEXT
);
CREATE TABLE IF NOT EXISTS members (
    config TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    PRIMARY KEY (config, run_id)
);
CREATE TABLE IF NOT EXISTS events (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    event  TEXT NOT NULL,
    time   TEXT NOT NULL,
    host   TEXT,
    pid    INTEGER,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
"""


class StoreWarning(MaxminqWarning):
    """A stored run left out of what is read (its tables fail verification)."""


class StoreError(MaxminqError):
    """The output folder cannot be used (locked by another sweep, unreadable database)."""


class RunLike(Protocol):
    """Anything with the fields of :class:`maxminq.experiments.config.RunSpec` (read-only:
    a frozen RunSpec fits)."""

    @property
    def run_id(self) -> str:
        """``<kind>-`` and 12 hex digits of a digest of kind and settings."""

    @property
    def kind(self) -> str:
        """The run kind's registered name (see ``maxminq.experiments.registry``)."""

    @property
    def settings(self) -> Mapping[str, Any]:
        """The run's settings, as the runner passes them to its kind."""

    @property
    def config(self) -> str:
        """The name of the sweep config the run belongs to."""


@dataclass(frozen=True)
class RunRecord:
    """One row of the ``runs`` table."""

    run_id: str
    config: str
    kind: str
    settings: dict[str, Any]
    status: str
    attempts: int
    created: str
    started: str | None
    finished: str | None
    host: str | None
    pid: int | None
    error: str | None


def now() -> str:
    """The current UTC time as an ISO 8601 string (microseconds, ``+00:00``)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


def short_times(text: str | None) -> str:
    """The registry's and the lock's ISO times in ``text`` (:func:`now`:
    ``2026-11-24T01:15:04.406328+00:00``) as ``2026-11-24 01:15:04 UTC``, for people: to
    the second, in UTC, the zone said. Anything else in ``text`` is left as it is."""

    def short(match: re.Match[str]) -> str:
        try:
            moment = datetime.fromisoformat(match.group(0).replace("Z", "+00:00"))
        except ValueError:
            return match.group(0)
        if moment.tzinfo is None:
            return moment.strftime("%Y-%m-%d %H:%M:%S")
        return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    return _ISO_TIME.sub(short, text or "")


def last_line(text: str | None) -> str:
    """The last non-empty line of ``text``, stripped (of a traceback: the exception itself)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal settings give equal text (and run ids)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)


def _fsync_dir(path: Path) -> None:
    """Persist a rename in ``path`` (best effort; not every filesystem supports it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary file next to ``path``, then rename it into place.

    The one atomic-write mechanism of the package (results, report, figures, theory files):
    an error or a crash leaves ``path`` as it was, and no temporary file is left behind on
    an error. The file is made readable by all (0644): results are meant to be shared.
    An OSError that names no file or the temporary one (a full disk under matplotlib,
    pyarrow or ``torch.save`` says just 'File too large') is raised again naming ``path``,
    so that a command's one-line error says which output failed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = ""
    try:  # from mkstemp on: a Ctrl-C just after it must not leave the temporary behind
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        write(Path(name))
        os.chmod(name, 0o644)  # mkstemp makes 0600
        os.replace(name, path)
    except OSError as err:
        if err.filename2 is None and err.filename in (None, name):
            raise OSError(err.errno, err.strerror or str(err), str(path)) from err
        raise
    finally:
        if name:
            Path(name).unlink(missing_ok=True)


def remove_stale_temporaries(paths: Iterable[Path]) -> None:
    """Delete the temporary files that :func:`atomic_write` calls to ``paths`` left behind
    in a process that was killed (kill -9, the OOM killer, a power cut) before renaming
    them: ``.<name>.<random>.tmp`` beside each path, the random part made of the characters
    ``tempfile.mkstemp`` uses. A file of another name stays: the user's (``.<name>.tmp``,
    ``.<name>.backup-1.tmp``) and other outputs' temporaries. A killed run's temporary of
    a table or checkpoint is as large as the file itself (GBs for a MinAtar checkpoint or a
    full ``experiment`` CSV), and each kill would leave one more.

    Only for a caller that alone writes ``paths`` (``run_training`` under its folder lock;
    a command replacing its own outputs): a temporary another process is writing now would
    be deleted under it.
    """
    import glob
    import re

    for path in paths:
        path = Path(path)
        ours = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]+\.tmp")
        for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            if ours.fullmatch(tmp.name):
                tmp.unlink(missing_ok=True)


def read_progress(folder: Path) -> float | None:
    """The fraction of its steps the run in ``folder`` reports done (its ``progress.json``,
    read by :func:`maxminq._progress.read_progress_report`), or None."""
    p = read_progress_report(folder)
    return None if p is None else min(1.0, max(0.0, p["step"] / p["steps"]))


WORKER_FILE = "worker.json"


def write_worker(folder: Path) -> None:
    """``folder/worker.json``: the host and pid of the worker process running the run whose
    scratch folder ``folder`` is (``maxminq status`` shows them; the registry has the
    sweep's until the run ends). Best effort: a folder that cannot be written is the run's
    own problem, reported by the run."""
    text = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "since": now()})
    with contextlib.suppress(OSError):
        atomic_write(Path(folder) / WORKER_FILE, lambda tmp: tmp.write_text(text))


def read_worker(folder: Path) -> tuple[str, int] | None:
    """(host, pid) of the worker that :func:`write_worker` recorded in ``folder``, or None;
    None too for one on this host whose process is gone (:func:`process_alive`): a worker
    killed before it could remove its file (:func:`clear_worker`) must not be shown as the
    one running the run."""
    try:
        w = json.loads((Path(folder) / WORKER_FILE).read_text())
        host, pid = w["host"], w["pid"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(host, str) or not isinstance(pid, int) or isinstance(pid, bool):
        return None
    if host == socket.gethostname() and not process_alive(pid):
        return None
    return host, pid


def clear_worker(folder: Path, pid: int | None = None, drop_empty: bool = False) -> None:
    """Remove ``folder/worker.json`` once its run has ended (a finished or failed run's
    scratch folder can stay: ``--keep-work``, a checkpoint to continue from); with ``pid``,
    only a file that this host's process ``pid`` wrote (a worker clears its own). With
    ``drop_empty``, ``folder`` too when nothing else is in it (a failed run that left no
    checkpoint: nothing to continue from)."""
    path = Path(folder) / WORKER_FILE
    if pid is not None and read_worker(folder) != (socket.gethostname(), pid):
        return
    with contextlib.suppress(OSError):
        path.unlink()
    if drop_empty:
        with contextlib.suppress(OSError):  # not empty, or gone
            Path(folder).rmdir()


# What a run's scratch folder may hold that its next attempt cannot continue from: the
# worker's file, the progress a watcher reads and the options a deep run writes first (a
# run without a checkpoint starts over).
_NO_PROGRESS = (WORKER_FILE, PROGRESS_FILE, "config.json")
# A deep run's TensorBoard folder (``tensorboard: true``; runner.LOGS), whose event files
# it opens as it starts, before its first checkpoint: logs, not something to continue from.
_LOGS_DIR = "tensorboard"


def holds_progress(folder: Path) -> bool:
    """Whether the scratch folder ``folder`` holds something a run's next attempt continues
    from (a checkpoint, a finished run's tables): any file but those of ``_NO_PROGRESS`` at
    its top, a deep run's TensorBoard logs (``_LOGS_DIR``, opened before its first
    checkpoint) and the temporary files of writes killed before their rename
    (:func:`atomic_write`'s ``.NAME.XXXXXXXX.tmp``), which the next attempt deletes. False
    when the folder is gone, also while it is being listed (a sweep removes a run's scratch
    as the run ends)."""
    import re

    temporary = re.compile(r"\..+\.[a-z0-9_]+\.tmp")
    folder = Path(folder)
    try:
        for path in folder.rglob("*"):
            if path.is_dir() or temporary.fullmatch(path.name):
                continue
            if path.parent == folder and path.name in _NO_PROGRESS:
                continue
            if path.relative_to(folder).parts[0] == _LOGS_DIR:
                continue
            return True
    except OSError:  # not there (any more), or not a folder
        return False
    return False


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (one of another user counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; beyond any pid (a file
        # edited or damaged: status must not end in a traceback over it)
        return False
    except OSError:  # PermissionError: it exists, another user's
        return True
    return True


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write`), synced to disk first."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    atomic_write(path, write)


def _table_bytes(frame: pd.DataFrame) -> bytes:
    """CSV encoding of a table (floats as shortest round-trip repr, no index)."""
    if frame.shape[1] == 0:
        return b""
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")


def _parse_table(data: bytes) -> pd.DataFrame:
    """Inverse of :func:`_table_bytes` (floats parsed exactly)."""
    if not data.strip():
        return pd.DataFrame()
    return pd.read_csv(io.BytesIO(data))


class ResultsStore:
    """The run registry and table files of one output folder (see the module docstring).

    Use one instance per process; only the sweep driver should call the writing methods,
    inside :meth:`lock`. Every write is one SQLite transaction.
    """

    def __init__(
        self, out_dir: str | os.PathLike[str], *, create: bool = True, lock: bool = False
    ) -> None:
        """Open (``create``: and set up) the store; ``lock``: take the writer lock first, so
        that a second writer is turned away before it touches the database (it would
        otherwise wait on a transaction of the lock holder)."""
        self.out_dir = Path(out_dir)
        self.db_path = self.out_dir / DB_NAME
        self.tables_dir = self.out_dir / TABLES_DIR
        self.work_root = self.out_dir / WORK_DIR
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._lock_fh: Any = None
        self._read_lock_fh: Any = None  # a reader's shared lock: see _connect
        if not create and not self.db_path.is_file():
            raise StoreError(f"{self.out_dir}: no {DB_NAME} here; is this a sweep output folder?")
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            if lock:
                self.lock()
            self._conn = self._connect(create)
            self._conn.row_factory = sqlite3.Row
            if create:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=FULL")
                with self._transaction() as cur:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            cur.execute(statement)
                    cur.execute(
                        "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )
            # A damaged or foreign file is refused here, in one line, also by the writer:
            # otherwise the first write to a damaged page (perhaps hours into a sweep) raised.
            rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            missing = sorted(set(_TABLES) - {r[0] for r in rows})
            if missing:
                raise sqlite3.DatabaseError(f"no {', '.join(missing)} table(s)")
            # Read through: damage past the schema. The writer also appends to the events log.
            for table in ("runs", "members", *(("events",) if create else ())):
                for _ in self._conn.execute(f"SELECT * FROM {table}"):
                    pass
            if create:  # after the read-through: a damaged events page is 'cannot open'
                with self._transaction() as cur:  # at the first open here: WORK_KEPT_AFTER
                    cur.execute(
                        "INSERT OR IGNORE INTO meta "
                        "SELECT ?, CAST(COALESCE(MAX(id), 0) AS TEXT) FROM events",
                        (WORK_KEPT_AFTER,),
                    )
        except StoreError:  # locked by another sweep, or the schema could not be written
            self.close()
            raise
        except (sqlite3.DatabaseError, OSError) as err:
            self.close()
            # Damaged or not ours (not a file SQLite cannot open, e.g. for want of rights):
            # the tables can stand in for it, which the message says (it named no remedy,
            # and every later sweep stopped the same way).
            remedy = (
                "; move it aside and run the sweep again: the runs whose tables verify are "
                "kept, the others run again"
                if type(err) is sqlite3.DatabaseError
                else ""
            )
            raise StoreError(
                f"{self.db_path}: cannot open the results database: {err}{remedy}"
            ) from err

    # ------------------------------------------------------------------ plumbing
    def _connect(self, create: bool) -> sqlite3.Connection:
        """The database connection; for a reader (not ``create``) also where this process
        may not write the folder: results shared read-only, or another user's.

        Reading the write-ahead log needs its index (``results.sqlite-shm``), which SQLite
        creates beside the database (a sweep that closed it cleanly left neither); in a
        folder it cannot write it failed ('attempt to write a readonly database'), so
        ``maxminq status`` and :func:`load_results` refused such results. Opened read-only
        then, and without the index (``immutable``) when there is no log to read. SQLite
        takes an immutable file as one nobody changes: a sweep starting meanwhile (the
        folder's owner) made the reader fail ('database disk image is malformed') or read
        torn pages. Such a reader therefore reads a copy in memory (:meth:`_snapshot`),
        made with the folder lock held shared, which :meth:`lock` waits for: the copy is
        whole, and the owner's sweep starts once it is made (it was turned away for as
        long as the reader kept the store open: a notebook's, for hours). While a sweep
        holds the lock, the reader waits for the log that its first transaction creates."""
        conn = sqlite3.connect(self.db_path, timeout=60.0, isolation_level=None)
        if create or os.access(self.out_dir, os.W_OK):
            return conn
        conn.close()
        from urllib.parse import quote

        uri = f"file:{quote(str(self.db_path.absolute()))}?mode=ro"
        wal = self.db_path.with_name(DB_NAME + "-wal")
        for _ in range(200):
            conn = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.OperationalError:
                conn.close()
                try:
                    logged = wal.stat().st_size > 0
                except FileNotFoundError:  # none, or a sweep closing has just removed it
                    logged = False
                if logged:  # a log to read, which SQLite could not: its error says why
                    raise
            if self._hold_read_lock():
                try:
                    return self._snapshot(f"{uri}&immutable=1")
                finally:
                    self._release_read_lock()
            time.sleep(0.05)  # a sweep is starting here: its log appears in a moment
        raise StoreError(
            f"{self.out_dir}: a sweep holds this folder but its database has no write-ahead "
            "log to read; try again in a moment"
        )

    @staticmethod
    def _snapshot(uri: str) -> sqlite3.Connection:
        """An in-memory copy of the database at ``uri`` (SQLite's backup), made while the
        folder lock is held shared: no sweep writes it meanwhile, so the copy is whole."""
        source = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            copy = sqlite3.connect(":memory:", isolation_level=None)
            source.backup(copy)
        finally:
            source.close()
        return copy

    def _release_read_lock(self) -> None:
        """Release the shared folder lock :meth:`_hold_read_lock` took (if it took one)."""
        if self._read_lock_fh is not None:
            with contextlib.suppress(Exception):
                self._read_lock_fh.close()
            self._read_lock_fh = None

    def _hold_read_lock(self) -> bool:
        """Take the folder lock shared, for an immutable reader, unless a sweep holds it
        (then False). True also where there is no lock file or the file system has no
        locks: no sweep can run there."""
        import fcntl

        try:
            fh = open(self.out_dir / LOCK_NAME)  # noqa: SIM115 - kept open while held
        except OSError:
            return True
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as err:
            fh.close()
            return not _held(err)
        self._read_lock_fh = fh
        return True

    def close(self) -> None:
        """Close the database connection and release the folder lock if held."""
        self.unlock()
        self._release_read_lock()
        with contextlib.suppress(Exception):
            self._conn.close()

    def close_database(self) -> None:
        """Close the database connection but keep the folder lock (``maxminq merge`` puts
        the folder it built in place while it holds it); :meth:`close` releases it."""
        with contextlib.suppress(Exception):
            self._conn.close()

    def __enter__(self) -> ResultsStore:
        """Use as a context manager; closes on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store."""
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any exception). A database
        that cannot be written (a full disk, an I/O error) is a one-line StoreError, not a
        traceback; a failed COMMIT is rolled back too, so the next write can begin."""
        cur = self._conn.cursor()
        try:
            try:  # BEGIN inside: a signal's exception raised as it returns rolls back too
                cur.execute("BEGIN IMMEDIATE")
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    cur.execute("ROLLBACK")
                raise
        except sqlite3.Error as err:
            raise StoreError(f"{self.db_path}: cannot write the results database: {err}") from err

    def _event(
        self, cur: sqlite3.Cursor, run_id: str, event: str, detail: str | None = None
    ) -> None:
        """Append to the event log (inside the caller's transaction)."""
        cur.execute(
            "INSERT INTO events (run_id, event, time, host, pid, detail) VALUES (?,?,?,?,?,?)",
            (run_id, event, now(), self.host, self.pid, detail),
        )

    # ------------------------------------------------------------------ locking
    def lock(self) -> None:
        """Take the folder's exclusive writer lock or raise :class:`StoreError` at once.

        The lock is an ``flock`` on ``OUT/.sweep.lock``: the kernel releases it when the
        holder dies (even by SIGKILL), so a stale lock cannot block a resumed sweep.
        """
        import fcntl

        if self._lock_fh is not None:
            return
        path = self.out_dir / LOCK_NAME
        fh = open(path, "a+")  # noqa: SIM115 - kept open while the lock is held
        # Retry briefly: `maxminq status` may hold a shared lock for a few microseconds;
        # a reader that may not write the folder holds it while it copies the database
        # (_snapshot): waited for up to READER_WAIT s.
        start = time.monotonic()
        taken = readers = False
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                taken = True
                break
            except OSError as err:
                if not _held(err):
                    # e.g. Lustre mounted without flock (ENOSYS): reported as "in use by
                    # another sweep", which no waiting or other sweep could change
                    fh.close()
                    raise StoreError(
                        f"{path}: cannot lock it ({err.strerror or err}): the file system "
                        "of this folder does not support file locks (flock), which keep "
                        "two sweeps from writing one folder; choose an --out on one that "
                        "does"
                    ) from None
            waited = time.monotonic() - start
            if waited >= 1.0:
                readers = _only_shared(fh)  # only readers hold it (_connect)
                if not readers or waited >= READER_WAIT:
                    break
            time.sleep(0.05)
        if not taken:
            if readers:
                fh.close()
                raise StoreError(
                    f"{self.out_dir} is being read by a process that may not write it "
                    "(maxminq status or load_results of another user, copying its database "
                    f"for more than {READER_WAIT:.0f} s); run the sweep again in a moment"
                ) from None
            fh.seek(0)
            owner = fh.read().strip() or "another process"
            fh.close()
            raise StoreError(in_use_message(self.out_dir, owner)) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {self.pid} on {self.host} since {now()}")
        fh.flush()
        self._lock_fh = fh

    def unlock(self) -> None:
        """Release the folder lock (no-op when not held)."""
        if self._lock_fh is not None:
            with contextlib.suppress(Exception):
                self._lock_fh.close()
            self._lock_fh = None

    # ------------------------------------------------------------------ registry
    def register(self, runs: Iterable[RunLike]) -> int:
        """Add runs as ``pending`` (runs already known keep their status); returns #new.

        A known run that is not finished takes the settings given now, which it runs
        with: they differ only in settings its id leaves out (a deep run's
        ``checkpoint_every`` or ``tensorboard``); a finished run keeps those it ran with."""
        added = 0
        stamp = now()
        with self._transaction() as cur:
            for run in runs:
                settings = canonical_json(dict(run.settings))
                cur.execute(
                    "INSERT OR IGNORE INTO runs (run_id, config, kind, settings, status, "
                    "attempts, created) VALUES (?,?,?,?, 'pending', 0, ?)",
                    (run.run_id, run.config, run.kind, settings, stamp),
                )
                if cur.rowcount:
                    added += 1
                    self._event(cur, run.run_id, "registered", run.config)
                else:
                    cur.execute(
                        "UPDATE runs SET settings=? WHERE run_id=? AND settings<>? "
                        "AND status NOT IN ('done', 'diverged')",
                        (settings, run.run_id, settings),
                    )
                cur.execute(
                    "INSERT OR IGNORE INTO members (config, run_id) VALUES (?, ?)",
                    (run.config, run.run_id),
                )
        return added

    def mark_running(
        self,
        run_id: str,
        *,
        host: str | None = None,
        pid: int | None = None,
        keep_work: bool = False,
    ) -> None:
        """Record that an attempt of ``run_id`` starts now (``attempts`` += 1); with
        ``keep_work``, that its sweep keeps its scratch folder (``--keep-work``), which
        :meth:`attempt_keeps_work` tells the sweep that settles the run after a kill."""
        with self._transaction() as cur:
            cur.execute(
                "UPDATE runs SET status='running', attempts=attempts+1, started=?, finished=NULL,"
                " host=?, pid=?, error=NULL WHERE run_id=?",
                (now(), host or self.host, pid or self.pid, run_id),
            )
            self._event(cur, run_id, "started", KEEP_WORK_DETAIL if keep_work else None)

    def attempt_keeps_work(self, run_id: str) -> bool:
        """Whether the sweep of the run's last attempt kept its scratch folder
        (``--keep-work``, :meth:`mark_running`). A sweep killed after it stored the run's
        tables and before it marked the run finished leaves the row ``running`` (or
        ``pending`` after Ctrl-C); the next sweep into the folder, maybe of another config
        sharing it and without ``--keep-work``, gives it its final status and must keep
        the mark the killed sweep would have given. False for an attempt an older maxminq
        started (it recorded nothing)."""
        row = self._conn.execute(
            "SELECT detail FROM events WHERE run_id=? AND event='started' ORDER BY id DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        return row is not None and row[0] == KEEP_WORK_DETAIL

    def mark_finished(
        self,
        run_id: str,
        status: str = "done",
        error: str | None = None,
        *,
        host: str | None = None,
        pid: int | None = None,
        work_kept: bool = False,
    ) -> None:
        """Record the end of an attempt: ``done``, ``diverged`` or ``failed`` (with error).

        ``host``/``pid`` name the worker that executed the attempt, when known;
        ``work_kept`` logs (in the same transaction) that ``--keep-work`` keeps its scratch
        folder, which a later sweep without it must not take for one left by a kill.
        """
        if status not in ("done", "diverged", "failed"):
            raise ValueError(f"not a final status: {status!r}")
        with self._transaction() as cur:
            cur.execute(
                "UPDATE runs SET status=?, finished=?, error=?, host=COALESCE(?, host),"
                " pid=COALESCE(?, pid) WHERE run_id=?",
                (status, now(), error, host, pid, run_id),
            )
            self._event(cur, run_id, status, error)
            if work_kept:
                self._event(cur, run_id, WORK_KEPT)

    def work_kept(self, run_id: str) -> bool:
        """Whether ``--keep-work`` kept the run's scratch folder when it last finished: its
        last event is :data:`WORK_KEPT`, or was logged by a maxminq from before that event
        (:data:`WORK_KEPT_AFTER`; such a maxminq never removed a finished run's folder that
        a sweep left, so one there is taken as kept)."""
        row = self._conn.execute(
            "SELECT id, event FROM events WHERE run_id=? ORDER BY id DESC LIMIT 1", (run_id,)
        ).fetchone()
        if row is None:
            return False
        if row[1] == WORK_KEPT:
            return True
        after = self.meta(WORK_KEPT_AFTER)
        return after is None or (after.isdigit() and int(row[0]) <= int(after))

    def mark_pending(self, run_id: str, reason: str) -> None:
        """Put a run back in the queue (interrupted attempt, corrupt tables, ...)."""
        with self._transaction() as cur:
            cur.execute(
                "UPDATE runs SET status='pending', finished=NULL, error=? WHERE run_id=?",
                (reason, run_id),
            )
            self._event(cur, run_id, "requeued", reason)

    def meta(self, key: str) -> str | None:
        """The value of ``key`` in the ``meta`` table (``schema_version``; a sweep's plan of
        each config and its ``--shard``: :mod:`maxminq.experiments.shard`), or None."""
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def meta_items(self, prefix: str = "") -> dict[str, str]:
        """Every ``meta`` entry whose key starts with ``prefix``."""
        rows = self._conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        return {str(k): str(v) for k, v in rows if str(k).startswith(prefix)}

    def set_meta(self, items: Mapping[str, str | None]) -> None:
        """Set (a value) or remove (None) ``meta`` entries, in one transaction."""
        with self._transaction() as cur:
            for key, value in items.items():
                if value is None:
                    cur.execute("DELETE FROM meta WHERE key=?", (key,))
                else:
                    cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def members(self) -> list[tuple[str, str]]:
        """Every (config, run id) membership, sorted."""
        rows = self._conn.execute("SELECT config, run_id FROM members ORDER BY config, run_id")
        return [(str(c), str(r)) for c, r in rows]

    def import_runs(
        self,
        rows: Iterable[RunRecord],
        members: Iterable[tuple[str, str]],
        events: Iterable[Mapping[str, Any]],
    ) -> None:
        """Write whole registry rows, memberships and events as they are (``maxminq merge``
        builds a new store from those of several folders), in one transaction: a kill
        leaves none of them. A row whose run id is here already is replaced."""
        with self._transaction() as cur:
            for rec in rows:
                cur.execute(
                    "INSERT OR REPLACE INTO runs (run_id, config, kind, settings, status, "
                    "attempts, created, started, finished, host, pid, error) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        rec.run_id,
                        rec.config,
                        rec.kind,
                        canonical_json(dict(rec.settings)),
                        rec.status,
                        rec.attempts,
                        rec.created,
                        rec.started,
                        rec.finished,
                        rec.host,
                        rec.pid,
                        rec.error,
                    ),
                )
            cur.executemany("INSERT OR IGNORE INTO members (config, run_id) VALUES (?, ?)", members)
            for e in events:
                cur.execute(
                    "INSERT INTO events (run_id, event, time, host, pid, detail) "
                    "VALUES (?,?,?,?,?,?)",
                    (
                        e["run_id"],
                        e["event"],
                        e["time"],
                        e.get("host"),
                        e.get("pid"),
                        e.get("detail"),
                    ),
                )

    def get(self, run_id: str) -> RunRecord | None:
        """The registry row of ``run_id``, or ``None``."""
        row = self._conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else _record(row)

    def records(self, config: str | None = None) -> list[RunRecord]:
        """All registry rows (of one config's members when ``config`` is given)."""
        if config is None:
            rows = self._conn.execute("SELECT * FROM runs ORDER BY created, run_id").fetchall()
        else:
            rows = self._conn.execute(
                "SELECT runs.* FROM runs JOIN members USING (run_id) WHERE members.config=? "
                "ORDER BY created, run_id",
                (config,),
            ).fetchall()
        return [_record(r) for r in rows]

    def counts(self, config: str | None = None) -> dict[str, int]:
        """Number of runs per status (every status present, zeros included)."""
        out = dict.fromkeys(STATUSES, 0)
        for rec in self.records(config):
            out[rec.status] += 1
        return out

    def configs(self) -> list[str]:
        """Names of the configs that registered runs here."""
        rows = self._conn.execute("SELECT DISTINCT config FROM members ORDER BY config")
        return [r[0] for r in rows]

    def events(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The append-only event log (registered, started, done, failed, requeued, ...)."""
        if run_id is None:
            rows = self._conn.execute("SELECT * FROM events ORDER BY id").fetchall()
        else:
            rows = self._conn.execute(
                "SELECT * FROM events WHERE run_id=? ORDER BY id", (run_id,)
            ).fetchall()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------------ tables
    def run_tables_dir(self, run_id: str) -> Path:
        """``OUT/tables/<run_id>``."""
        return self.tables_dir / run_id

    def work_dir(self, run_id: str) -> Path:
        """``OUT/work/<run_id>``: scratch space and checkpoints of a run (created lazily)."""
        return self.work_root / run_id

    def save_tables(
        self,
        run: RunLike,
        tables: Mapping[str, pd.DataFrame],
        status: str = "done",
        note: str | None = None,
    ) -> dict[str, Any]:
        """Write a finished run's tables atomically, then its manifest; returns the manifest.

        Each ``<table>.csv`` is written to a temporary name and renamed; the manifest
        (row counts, columns, sizes, SHA-256, and the run's final ``status`` and ``note``,
        which a sweep killed before it wrote them to the registry takes from here) is
        renamed into place last, so it exists only when every file it lists is complete.
        """
        folder = self.run_tables_dir(run.run_id)
        folder.mkdir(parents=True, exist_ok=True)
        # An older manifest must not vouch for the files being replaced.
        with contextlib.suppress(FileNotFoundError):
            (folder / MANIFEST).unlink()
        entries: dict[str, Any] = {}
        for name, frame in tables.items():
            if not name.isidentifier():
                raise ValueError(f"table name must be an identifier, got {name!r}")
            data = _table_bytes(frame)
            atomic_write_bytes(folder / f"{name}.csv", data)
            entries[name] = {
                "file": f"{name}.csv",
                "rows": int(len(frame)),
                "columns": [str(c) for c in frame.columns],
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        manifest = {
            "run_id": run.run_id,
            "kind": run.kind,
            "settings": dict(run.settings),
            "written": now(),
            "status": status,
            "note": note,
            "tables": entries,
        }
        atomic_write_bytes(folder / MANIFEST, json.dumps(manifest, indent=1).encode())
        _fsync_dir(folder)
        return manifest

    def verify_tables(self, run_id: str) -> str | None:
        """``None`` when the run's manifest and every table file check out, else the problem."""
        return verify_run_tables(self.run_tables_dir(run_id), run_id)

    def finished(self, rec: RunRecord | None) -> tuple[bool, str | None]:
        """Whether a run counts as finished (a sweep skips it, its dry run counts it done),
        and if not, why its row must go back to ``pending``.

        Finished: the row says done or diverged, running (left by a sweep killed after
        it stored the run's tables) or pending (a registry lost and rebuilt, or a sweep
        interrupted between storing the tables and the status), and the tables verify: a
        manifest is written last, only by a sweep that stored the run's complete tables.
        Otherwise the reason is ``None`` for a pending or failed row (or no row), else the
        reason to discard the run's tables and requeue it.
        """
        if rec is None or rec.status not in (*FINISHED, "running", "pending"):
            return False, None
        problem = self.verify_tables(rec.run_id)
        if problem is None:
            return True, None
        if rec.status == "pending":
            return False, None
        if rec.status == "running":
            return False, INTERRUPTED
        return False, f"results failed verification: {problem}"

    def stored_status(self, run_id: str) -> tuple[str, str | None]:
        """The final status and note that a run's manifest records (``done`` for a manifest
        written before they were recorded); for a run whose tables verify."""
        manifest = _read_manifest(self.run_tables_dir(run_id), run_id)
        status = manifest.get("status")
        return (status if status in FINISHED else "done"), manifest.get("note")

    def read_tables(self, run_id: str) -> dict[str, pd.DataFrame]:
        """The verified tables of a run; raises :class:`StoreError` if anything is off."""
        return read_run_tables(self.run_tables_dir(run_id), run_id)

    def discard_tables(self, run_id: str) -> None:
        """Delete a run's table folder (before a re-run of corrupt or partial results)."""
        shutil.rmtree(self.run_tables_dir(run_id), ignore_errors=True)

    def discard_work(self, run_id: str) -> None:
        """Delete a run's scratch/checkpoint folder (after its tables are safely stored)."""
        shutil.rmtree(self.work_dir(run_id), ignore_errors=True)


def _record(row: sqlite3.Row) -> RunRecord:
    """A database row as a :class:`RunRecord` (settings decoded)."""
    data = dict(row)
    data["settings"] = json.loads(data["settings"])
    return RunRecord(**data)


def _read_manifest(folder: Path, run_id: str) -> dict[str, Any]:
    """The parsed manifest of a run (StoreError if missing, unreadable or foreign)."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise StoreError(f"{path}: missing (tables incomplete)") from None
    except (OSError, ValueError) as err:
        raise StoreError(f"{path}: unreadable manifest ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("run_id") != run_id:
        raise StoreError(f"{path}: manifest is not for run {run_id}")
    if not isinstance(manifest.get("tables"), dict):
        raise StoreError(f"{path}: manifest lists no tables")
    return manifest


def _checked_bytes(folder: Path, name: str, entry: Mapping[str, Any]) -> bytes:
    path = folder / str(entry.get("file", f"{name}.csv"))
    try:
        data = path.read_bytes()
    except OSError as err:
        raise StoreError(f"{path}: unreadable ({err.strerror or err})") from None
    if len(data) != entry.get("bytes") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise StoreError(f"{path}: size or checksum differs from the manifest (corrupt)")
    return data


def verify_run_tables(folder: Path, run_id: str) -> str | None:
    """Check a run's table folder against its manifest; ``None`` if sound, else the problem."""
    try:
        manifest = _read_manifest(folder, run_id)
        for name, entry in manifest["tables"].items():
            _checked_bytes(folder, name, entry)
    except StoreError as err:
        return str(err)
    return None


def read_run_tables(
    folder: Path, run_id: str, names: set[str] | None = None
) -> dict[str, pd.DataFrame]:
    """Read and verify a run's tables (all, or those in ``names``); checksums are checked
    on the very bytes that are parsed."""
    manifest = _read_manifest(folder, run_id)
    out: dict[str, pd.DataFrame] = {}
    for name, entry in manifest["tables"].items():
        if names is not None and name not in names:
            continue
        frame = _parse_table(_checked_bytes(folder, name, entry))
        if len(frame) != entry.get("rows"):
            raise StoreError(f"{folder / entry['file']}: row count differs from the manifest")
        out[name] = frame
    return out


def _setting_value(value: Any) -> Any:
    """Settings as table cells: scalars as they are, lists/dicts as canonical JSON text."""
    if isinstance(value, (list, tuple, dict)):
        return canonical_json(value)
    return value


def unknown_config_text(config: str, names: list[str]) -> str:
    """``no config 'toy' here (did you mean toy_mdp?); known: mountain_car, toy_mdp``: what
    :func:`load_results` and ``maxminq status --config`` say of a config name that
    registered no runs in a folder whose configs are ``names``."""
    meant = closest(config, names)
    guess = f" (did you mean {meant}?)" if meant else ""
    return f"no config {config!r} here{guess}; known: {', '.join(names) or 'none'}"


def load_results(
    out_dir: str | os.PathLike[str],
    *,
    config: str | None = None,
    kind: str | None = None,
    include_diverged: bool = True,
    tables: Iterable[str] | None = None,
    settings: bool | Iterable[str] = True,
) -> dict[str, pd.DataFrame]:
    """All finished runs' tables of a sweep folder, one DataFrame per table name.

    Each row carries ``run_id``, ``config``, ``kind`` and ``run_status``, then the run's
    settings as columns (list-valued settings such as ``seeds`` as JSON text), then the
    table's own columns; where a table already has a column of the same name (e.g. ``n`` or
    the deep ``runs`` table's per-seed ``status``), the table's column is kept.
    Runs are included when their status is ``done`` (and ``diverged``, which also finished
    with complete tables, unless ``include_diverged=False``) and their files verify against
    the manifest; a run whose files do not verify is left out with a warning, never read.
    ``config`` selects the runs belonging to that config (:class:`StoreError` for a name
    that registered no runs here; a run shared by two configs is
    stored once; its ``config`` column then shows the requested config, and otherwise the
    first config that registered it); ``kind`` filters by run kind. For large sweeps,
    ``tables`` limits the table names read and ``settings`` the settings turned into columns
    (``False``: none, or an iterable of names); a single name may be given as a string
    (``tables="metrics"``).
    """
    import warnings

    store = ResultsStore(out_dir, create=False)
    try:
        if config is not None and config not in store.configs():
            # An unknown name (a typo, the file name for the config's name) gave {}, and
            # the caller's ``[table]`` then failed with a bare KeyError.
            raise StoreError(f"{out_dir}: {unknown_config_text(config, store.configs())}")
        statuses = FINISHED if include_diverged else ("done",)
        records = [
            r
            for r in store.records(config)
            if r.status in statuses and (kind is None or r.kind == kind)
        ]
        # One name given as a string is that table / setting, not its letters (tables=
        # "metrics" read as {'m', 'e', ...} matched no table and returned {} silently).
        wanted = None if tables is None else {tables} if isinstance(tables, str) else set(tables)
        keep: set[str] | None
        if isinstance(settings, bool):
            keep = None if settings else set()
        else:
            keep = {settings} if isinstance(settings, str) else set(settings)
        pieces: dict[str, list[pd.DataFrame]] = {}
        for rec in sorted(records, key=lambda r: r.run_id):
            try:
                run_tables = read_run_tables(store.run_tables_dir(rec.run_id), rec.run_id, wanted)
            except StoreError as err:
                warnings.warn(f"skipping run {rec.run_id}: {err}", StoreWarning, stacklevel=2)
                continue
            for name, frame in run_tables.items():
                front = {
                    "run_id": rec.run_id,
                    "config": config or rec.config,
                    "kind": rec.kind,
                    "run_status": rec.status,
                }
                for key, value in rec.settings.items():
                    if keep is None or key in keep:
                        front.setdefault(key, _setting_value(value))
                # A table's own column wins over a run column or setting of the same name.
                front = {k: v for k, v in front.items() if k not in frame.columns}
                frame = pd.concat([pd.DataFrame(front, index=frame.index), frame], axis=1)
                pieces.setdefault(name, []).append(frame)
        return {
            name: pd.concat(frames, ignore_index=True, sort=False)
            for name, frames in sorted(pieces.items())
        }
    finally:
        store.close()


def _held(err: OSError) -> bool:
    """Whether a non-blocking ``flock`` failed because another process holds the lock (not
    because the file system has no locks: ENOSYS, ENOLCK, EINVAL, EOPNOTSUPP)."""
    import errno

    return err.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)


def _only_shared(fh: Any) -> bool:
    """Whether the lock of open file ``fh`` is held shared only (by readers), not by a
    sweep: tested with a shared, non-blocking ``flock`` released at once."""
    import fcntl

    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return False
    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return True


def in_use_message(out_dir: str | os.PathLike[str], owner: str) -> str:
    """The one line that turns a sweep away from ``out_dir``, whose lock ``owner`` holds (the
    status command quoted for the shell, so that it can be copied for a folder with spaces)."""
    import shlex

    return (
        f"{out_dir} is in use by another sweep ({short_times(owner)}); wait for it to finish "
        f"(maxminq status {shlex.quote(str(out_dir))} shows its progress) or choose another --out"
    )


def refuse_if_in_use(out_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`StoreError` (:func:`in_use_message`) at once if a sweep holds
    ``out_dir``'s lock (:func:`sweep_owner`, a non-blocking probe). For commands that read
    the store before they take the lock: a sweep stopped (Ctrl-Z) while it sets up its
    database holds SQLite's lock too, and a reader waited its 60 s busy timeout first."""
    owner = sweep_owner(out_dir)
    if owner is not None:
        raise StoreError(in_use_message(out_dir, owner))


def sweep_owner(out_dir: str | os.PathLike[str]) -> str | None:
    """Who holds ``out_dir``'s sweep lock (``"pid N on HOST since T"``), or ``None``.

    Read-only: tests the lock with a shared, non-blocking ``flock`` that is released at once.
    """
    import fcntl

    path = Path(out_dir) / LOCK_NAME
    try:
        fh = open(path)  # noqa: SIM115
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as err:  # held; or no locks here (then no sweep can run here)
            return (fh.read().strip() or "another process") if _held(err) else None
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return None
