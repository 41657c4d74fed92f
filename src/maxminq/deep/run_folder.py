"""A deep training run's folder: the tables it writes (``TABLE_COLUMNS``; ``read_tables``
reads a finished run's back, each checked whole), its other files (``RUN_FILES``), its
checkpoint (``_read_checkpoint`` checks one, ``check_resumable`` whether it continues
under the options given), its options (``config.json``), its lock (``folder_lock``) and
``clear_run``. ``deep.train`` writes them."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import shutil
import threading
import time
import warnings
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pandas as pd
import torch

from maxminq.deep.config import options_in_full, outside_stacklevel
from maxminq.deep.policy import DAMAGED_FILE_ERRORS, MODEL_FILE, describe_error, state_digest
from maxminq.errors import CannotResumeError, MaxminqWarning, UsageError, one_line
from maxminq.experiments.store import PROGRESS_FILE, atomic_write, remove_stale_temporaries

if TYPE_CHECKING:
    from maxminq.deep.config import ResolvedTrainConfig

TABLE_COLUMNS: dict[str, list[str]] = {
    "episodes": [
        "seed",
        "episode",
        "step",
        "return",
        "length",
        "return_avg100",
        "terminated",
        "truncated",
    ],
    "tests": ["seed", "episode", "return", "length", "terminated", "truncated"],
    "metrics": [
        "seed",
        "step",
        "loss",
        "q_mean",
        "bias_mean",
        "bias_std",
        "bias_abs",
        "bias_n",
        "epsilon",
        "steps_per_s",
    ],
    "runs": ["seed", "status", "diverged_step", "diverged_cause"],
    "probes": [
        "seed",
        "episode",
        "step",
        "episode_step",
        "end_step",
        "terminated",
        "estimate",
        "return",
        "bias",
    ],
    "evals": ["seed", "step", "episode", "return", "length", "terminated", "truncated"],
}
# Tables a run writes only when asked for (``save_probes``, ``eval_every``); ``read_tables``
# reads each one that is there, and requires it when the run's config.json asks for it.
OPTIONAL_TABLES = {"probes": "save_probes", "evals": "eval_every"}
_CKPT = "state.pt"
# The figure ``maxminq train`` (and ``maxminq plot RUN_DIR``) draws from the tables.
FIGURE_FILES = ("curves.png", "curves.svg")
# What a finished run was computed with: per stretch of steps, the versions of maxminq (and
# its git revision), Python, NumPy, torch, Gymnasium, ... and the torch thread count
# (``Trainer.note_software``), as JSON: the tables repeat bit for bit under the same ones.
SOFTWARE_FILE = "software.json"
# Every file a run writes in its folder besides checkpoint/ (and tensorboard/): what
# ``maxminq train --overwrite`` deletes, and whose temporaries a continuing run removes.
RUN_FILES = (
    *(f"{name}.csv" for name in TABLE_COLUMNS),
    "config.json",
    MODEL_FILE,
    PROGRESS_FILE,
    SOFTWARE_FILE,
    *FIGURE_FILES,
)


def read_tables(
    out_dir: str | os.PathLike[str], option: str = "out_dir"
) -> dict[str, pd.DataFrame]:
    """The tables a finished ``run_training`` wrote to ``out_dir``, each checked to be
    whole: a file cut short (a copy that did not finish, a full disk) would otherwise read
    as a shorter run. A damaged or missing file is a one-line UsageError starting with
    ``option`` and naming the file; so is a ``runs.csv`` of a header alone (it read as a
    finished run of no seeds). An optional table (``probes``) is read when it is there or
    the run's ``config.json`` asks for it. ``out_dir`` a ``str`` or path (None, a number,
    bytes or ``''``: a UsageError starting with ``option`` too)."""
    from maxminq.analysis.runs import as_path

    out_dir = as_path(out_dir, option)
    tables = {}
    try:
        options = json.loads((out_dir / "config.json").read_text())
    except (OSError, ValueError):  # none (a sweep's table folder) or unreadable
        options = {}
    asked = {
        k for k, opt in OPTIONAL_TABLES.items() if isinstance(options, dict) and options.get(opt)
    }
    for name in TABLE_COLUMNS:
        path = pathlib.Path(out_dir) / f"{name}.csv"
        if name in OPTIONAL_TABLES and name not in asked and not path.exists():
            continue
        try:
            data = path.read_bytes()
        except OSError as err:
            raise UsageError(f"{option}: {path} is unreadable ({err.strerror})") from None
        if not data.endswith(b"\n"):  # the writers end every table with a line end
            what = "empty" if not data else "cut short (its last line is incomplete)"
            raise UsageError(f"{option}: {path} is {what}; {_remedy(pathlib.Path(out_dir))}")
        try:
            tables[name] = pd.read_csv(io.BytesIO(data))
        except (ValueError, pd.errors.ParserError) as err:
            why = one_line(err)
            raise UsageError(f"{option}: {path} is not a table ({why})") from None
    _check_runs_rows(pathlib.Path(out_dir) / "runs.csv", tables["runs"], option)
    tables["runs"] = _with_causes(tables["runs"])
    return tables


def _with_causes(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` as training returns it: ``diverged_cause`` text, '' for a seed that did not
    diverge (the CSV's empty cell, NaN as read), and '' for every seed of a run written
    before the causes were recorded (no such column: the published runs')."""
    causes = runs["diverged_cause"] if "diverged_cause" in runs else pd.Series("", runs.index)
    runs = runs.copy()
    runs["diverged_cause"] = [text if isinstance(text, str) else "" for text in causes]
    return runs


def _check_runs_rows(path: pathlib.Path, runs: pd.DataFrame, option: str) -> None:
    """UsageError starting with ``option`` when ``runs`` (read from ``path``, runs.csv) has
    no row: a run writes a row for every seed as it finishes, so a header alone is a table
    cut at a line end (a copy that stopped there) or edited, never a finished run
    (``compare`` and ``plot`` went on with no seeds)."""
    if runs.empty:
        raise UsageError(
            f"{option}: {path} has a header but no rows (one per seed): the run did not "
            "finish writing it, or the file is damaged (e.g. a copy cut short); "
            + _remedy(path.parent)
        )


def _remedy(out_dir: pathlib.Path) -> str:
    """What to do about a damaged table of the run in ``out_dir``: copy it again, or make
    it again: ``maxminq train --overwrite`` with the run's options (its config.json), or,
    for a sweep's table folder (no config.json), the sweep, which reruns a run whose
    tables do not verify."""
    if (out_dir / "config.json").is_file() or out_dir.parent.name != "tables":
        return (
            "copy it again from the original, or train the run again ('maxminq train' with "
            f"the options in {out_dir / 'config.json'}, and --overwrite)"
        )
    return (  # the sweep reruns a run whose tables do not match their manifest
        "copy it again from the original, or run the sweep again ('maxminq sweep' with its "
        f"config and --out {out_dir.parent.parent}: it reruns this run)"
    )


def same_options(saved: dict[str, Any], now: dict[str, Any]) -> bool:
    """Whether two runs' options (``result_key`` dicts) are the same run's: equal once the
    optimizer's options not given are filled in with torch's (``config.options_in_full``)."""
    return options_in_full(saved) == options_in_full(now)


def check_resumable(saved: dict[str, Any], cfg: ResolvedTrainConfig, step: int) -> None:
    """A checkpoint written at ``step`` with options ``saved`` (a ``result_key``) can be
    continued under ``cfg`` if every option is the same, except a larger ``steps``
    (extending the run); raise UsageError naming what differs otherwise. The optimizer's
    options are compared as the optimizer takes them (``config.options_in_full``)."""
    saved = options_in_full(saved)
    now = options_in_full(json.loads(cfg.result_key()))
    differ = sorted(k for k in set(saved) | set(now) if saved.get(k) != now.get(k))
    if [k for k in differ if k != "steps"]:

        def value(options: dict[str, Any], k: str) -> str:
            # A mapping or list as JSON, as --env-kwargs and --optimizer-kwargs take them
            # (Python's {'x': True} cannot be given back); absent: at its default.
            v = options.get(k, "default")
            return json.dumps(v) if isinstance(v, dict | list) else str(v)

        options = "; ".join(  # as the command's options, with the run's values
            f"{'--env' if k == 'env_id' else '--' + k.replace('_', '-')} "
            f"{value(saved, k)} (now {value(now, k)})"
            for k in differ
            if k != "steps"
        )
        raise UsageError(
            f"--resume: the run in --out was made with other options: {options}; use its "
            "options (only --steps may grow, to extend it), --overwrite (in Python: "
            "overwrite=True), or another --out"
        )
    if cfg.steps < step:
        raise UsageError(f"--steps: the run in --out is at step {step}; give at least that")


def _damaged_checkpoint(path: pathlib.Path, err: BaseException) -> CannotResumeError:
    """The one-line error for a checkpoint that cannot be read or restored."""
    why = describe_error(err)
    return CannotResumeError(
        f"--resume: {path} is damaged or not a checkpoint of this version of maxminq ({why})"
    )


class CheckpointWarning(MaxminqWarning):
    """A checkpoint that is resumed although its contents cannot be checked."""


def _read_checkpoint(path: pathlib.Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checkpoint at ``path`` (without its ``sha256``) and its saved options; a file
    cut short, not a torch file, without the run's options, or whose contents do not match
    their SHA-256 (a byte flipped on disk or in a copy) is a one-line UsageError naming it.

    A checkpoint without a SHA-256 (written before checkpoints had one, e.g. by a run under
    way across an upgrade of maxminq) is resumed after a :class:`CheckpointWarning` naming
    it, not refused: refusing would throw away the run, and its options and environment
    states are still checked on loading (``check_resumable``, the replayed episodes)."""
    try:
        state = torch.load(path, weights_only=True)
        if not isinstance(state, dict):
            raise TypeError(f"it holds a {type(state).__name__}, not a checkpoint")
        digest = state.pop("sha256", None)
        if digest is not None and digest != state_digest(state):
            raise ValueError("its contents do not match their checksum")
        saved = json.loads(state["config"])
        int(state["step"])
        if not isinstance(saved, dict) or not isinstance(saved.get("bias_every"), int):
            raise TypeError("its options are not a run's")
    except UsageError:
        raise
    except DAMAGED_FILE_ERRORS as err:
        raise _damaged_checkpoint(path, err) from None
    if digest is None:
        warnings.warn(
            f"{path} has no checksum (written by an earlier maxminq): resumed without "
            "checking its contents; --overwrite starts the run again",
            CheckpointWarning,
            stacklevel=outside_stacklevel(),  # the user's line (stacklevel 2 named train.py)
        )
    return state, saved


def _read_options(path: pathlib.Path) -> dict[str, Any]:
    """The options a finished run saved in ``path`` (its config.json); unreadable, not JSON,
    or without the run's ``steps`` and ``bias_every`` (edited by hand) is a one-line
    UsageError naming it."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        saved = err
    if not (
        isinstance(saved, dict)
        and isinstance(saved.get("steps"), int)
        and isinstance(saved.get("bias_every"), int)
    ):
        why = one_line(saved)[:120] if isinstance(saved, Exception) else "edited?"
        raise UsageError(
            f"--out: {path} does not hold the finished run's options ({why}); restore it, or "
            "give --overwrite to train the run again"
        )
    return saved


def _remove_stale_temporaries(out_dir: pathlib.Path) -> None:
    """Delete the temporary files of atomic writes that a killed run left in ``out_dir``
    (``atomic_write`` names them ``.<name>.<random>.tmp``): a checkpoint's is as large as
    the replay buffers (GBs for MinAtar), and every kill during a write would leave one.
    Called under the folder's lock (``folder_lock``): no other run writes there."""
    files = [*(out_dir / name for name in RUN_FILES), out_dir / "checkpoint" / _CKPT]
    remove_stale_temporaries(files)


_LOCKED: set[tuple[int, str]] = set()  # (thread, folder) held: re-entrant in one thread


@contextlib.contextmanager
def folder_lock(folder: pathlib.Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the existing folder ``folder`` while a run writes
    there: a second run into it (another ``maxminq train``, or ``run_training``, also in
    another thread) is a one-line UsageError instead of two runs mixing their files.
    Released on exit (or when the process dies); a file system without locks runs
    unlocked."""
    import fcntl

    key = (threading.get_ident(), str(pathlib.Path(folder).resolve()))
    if key in _LOCKED:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"--out: {folder} is in use by another training run (maxminq train or "
                "run_training) still running; wait for it to end, or choose another folder"
            ) from None
        except OSError:  # no locks here (e.g. some network file systems)
            pass
        _LOCKED.add(key)
        yield
    finally:
        _LOCKED.discard(key)
        os.close(fd)


def clear_run(out_dir: pathlib.Path) -> None:
    """Delete the run in ``out_dir``: every file a run writes there (``RUN_FILES``), its
    ``checkpoint/`` and ``tensorboard/`` folders, so no stale table, figure or checkpoint is
    left beside a new run's; other files stay. What ``run_training(..., overwrite=True)``
    does under the folder's lock (``folder_lock``: never while another run trains there)."""
    out_dir = pathlib.Path(out_dir)
    # runs.csv first: it marks a finished run, which a clear cut short must not leave
    # beside a missing table.
    for name in sorted(RUN_FILES, key=lambda n: n != "runs.csv"):
        (out_dir / name).unlink(missing_ok=True)
    for name in ("checkpoint", "tensorboard"):
        shutil.rmtree(out_dir / name, ignore_errors=True)


class ProgressReport:
    """``OUT/progress.json`` of a training run, for whoever watches it from another shell
    (``maxminq status OUT``, a sweep): ``step`` and ``steps`` (what a sweep reads), and
    beside them the speed over the last report's interval (``steps_per_s``, on the
    monotonic clock: a laptop's sleep is no slow step), the ``seconds_left`` at that speed,
    when it was written (``updated``, Unix time), the training return (``return_avg100``:
    each live seed's mean return over its last 100 episodes, averaged over the seeds; null
    before an episode ended) and, with ``eval_every``, the last evaluation's mean return
    (``eval_return`` at ``eval_step``); ``maxminq._progress.describe_progress`` reads it
    back as one line. The bar (``bar``) shows the same returns after its speed and ETA."""

    def __init__(self, out_dir: pathlib.Path, steps: int, step: int, bar: Any) -> None:
        self.path, self.steps, self.bar = out_dir / PROGRESS_FILE, steps, bar
        self.mark = (step, time.monotonic())  # the last report's step and time
        self.recent: dict[int, deque[float]] = {}  # each seed's last 100 returns
        self.read = 0  # the episode rows already in ``recent``

    def returns(
        self, rows: dict[str, list[list[Any]]], active: list[bool], seeds: list[int]
    ) -> tuple[float | None, float | None, int | None]:
        """(training return, evaluation return, its step) from a run's ``rows``."""
        episodes = rows["episodes"]
        for row in episodes[self.read :]:  # seed, episode, step, return, ...
            self.recent.setdefault(row[0], deque(maxlen=100)).append(float(row[3]))
        self.read = len(episodes)
        means = [
            sum(r) / len(r)
            for seed, live in zip(seeds, active, strict=True)
            if live and (r := self.recent.get(seed))
        ]
        train = sum(means) / len(means) if means else None
        evals = rows.get("evals") or []
        if not evals:
            return train, None, None
        last = evals[-1][1]  # seed, step, episode, return, ...
        at_last = [float(r[3]) for r in evals if r[1] == last]
        return train, sum(at_last) / len(at_last), int(last)

    def write(
        self, step: int, rows: dict[str, list[list[Any]]], active: list[bool], seeds: list[int]
    ) -> None:
        """Report ``step`` (``rows``: the trainer's table rows so far; ``active``: which of
        ``seeds`` are live)."""
        now = time.monotonic()
        done, then = self.mark
        rate = (step - done) / (now - then) if step > done and now > then else None
        self.mark = (step, now)
        train, evaluated, at = self.returns(rows, active, seeds)
        report = {
            "step": int(step),
            "steps": int(self.steps),
            "steps_per_s": None if rate is None else round(rate, 3),
            "seconds_left": None if rate is None else round((self.steps - step) / rate, 1),
            "updated": round(time.time(), 3),
            "return_avg100": train,
            "eval_return": evaluated,
            "eval_step": at,
        }
        text = json.dumps(report)
        atomic_write(self.path, lambda tmp: tmp.write_text(text))
        shown = [] if train is None else [f"return {train:.3g}"]
        shown += [] if evaluated is None else [f"eval {evaluated:.3g}"]
        if shown:
            self.bar.set_postfix_str(", ".join(shown), refresh=False)
