"""The progress bars of the library's long calls (``run_training``, ``evaluate_agent``, the
classic experiments' run functions, ``FiniteMDP.learn``, the theory's tables), and
:func:`describe_progress`, the line another shell reads a training run's progress as.

One rule for all of them, in a terminal, a notebook and a log file alike:

- ``tqdm.auto``: a widget in a Jupyter notebook (with ipywidgets; without, text, as tqdm
  itself falls back), a text bar elsewhere. ``from tqdm import tqdm`` printed text bars
  into a notebook's cell output.
- Written to a file or a pipe (``maxminq train ... 2> log``, ``python - <<EOF`` with its
  output captured) rather than a terminal or a notebook, a bar redraws at most every
  :data:`LOG_INTERVAL` seconds (and at its end), not ten times a second: an hour's run left
  some 36,000 carriage-return updates in its log.
- No monitor thread: tqdm starts one for every bar, a disabled one too (``progress=False``),
  and it outlived the call, as did a bar an interrupt left open. Callers close their bars
  on every way out (``with`` or ``finally``); a KeyboardInterrupt (a notebook's kernel
  interrupt) then leaves no bar behind to push the next call's bar onto a second line.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
import time
from typing import Any, TypeGuard

from maxminq.errors import INT64_MAX

#: Seconds between the redraws of a bar whose stream is neither a terminal nor a notebook's.
LOG_INTERVAL = 60.0

_BAR_CLASS: Any = None


def _bar_class() -> Any:
    """``tqdm.auto.tqdm`` (the notebook's or the text bar) without the monitor thread."""
    global _BAR_CLASS
    if _BAR_CLASS is None:
        from tqdm.auto import tqdm as auto_tqdm

        class Bar(auto_tqdm):  # tqdm.auto picks its base: the notebook's bar or the text one
            """A ``tqdm.auto`` bar that starts no monitor thread."""

            monitor_interval = 0

        _BAR_CLASS = Bar
    return _BAR_CLASS


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (its output goes to a notebook's cells)."""
    return "ipykernel" in sys.modules


def writes_to_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (default: ``sys.stderr``, where bars go) is a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or closed
        return False


def progress_bar(
    *, total: int | None, desc: str, unit: str = "it", enabled: bool = True, **kwargs: Any
) -> Any:
    """A progress bar of ``total`` steps (:mod:`maxminq._progress`'s rule); ``enabled=False``
    gives a bar that shows nothing (its ``update`` and ``close`` may be called; tqdm's ``n``
    then stays at ``initial``: count elsewhere what the code needs).
    ``kwargs`` go to tqdm (``initial``, ``unit_scale``)."""
    if enabled and not (in_notebook() or writes_to_terminal(kwargs.get("file"))):
        kwargs.setdefault("mininterval", LOG_INTERVAL)
    # The clock read at every update, not every ``miniters`` updates guessed from the rate so
    # far: without the monitor thread nothing else redraws a bar whose steps slowed down (a
    # run's first steps, before learning starts, are many times faster than the rest).
    kwargs.setdefault("miniters", 1)
    return _bar_class()(total=total, desc=desc, unit=unit, disable=not enabled, **kwargs)


def _duration(seconds: float) -> str:
    """``3 h 05 min``, ``12 min``, ``40 s``: a time left, to the minute past an hour."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    h, m = divmod(s // 60, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"


#: The file a training run reports its progress in (``deep.run_folder.ProgressReport``).
PROGRESS_FILE = "progress.json"


def _whole(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` (read from JSON) is a whole number: an int, or a float such as
    ``40.0`` (not a bool, NaN or infinity)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def read_progress_report(folder: pathlib.Path) -> dict[str, Any] | None:
    """The progress a training run in ``folder`` reports in its ``progress.json`` (written
    by ``maxminq.deep.run_folder.ProgressReport``): the file's fields, ``step`` and
    ``steps`` as ints. None where there is no report, or it is not one of a run: torn,
    foreign (no ``step`` or ``steps``, not whole numbers, ``steps`` below 1, ``step``
    below 0, either past int64). The one reader of the file, for :func:`describe_progress`
    and a sweep's percentages (``maxminq.experiments.store.read_progress``); no more than
    the file (no torch)."""
    try:
        report = json.loads((pathlib.Path(folder) / PROGRESS_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(report, dict):
        return None
    step, steps = report.get("step"), report.get("steps")
    # a run counts from 0 in int64: a step of 400 digits was an OverflowError in maxminq
    # status and in a sweep's bar (step / steps), a step of -5 'step -5 of 100 (-5%)'
    if not (_whole(step) and _whole(steps)):
        return None
    if not (0 <= step <= INT64_MAX and 1 <= steps <= INT64_MAX):
        return None
    return {**report, "step": int(step), "steps": int(steps)}


def describe_progress(folder: pathlib.Path, training: bool = True) -> str | None:
    """How far the run training in ``folder`` is, from its ``progress.json``: ``step
    1,250,000 of 5,000,000 (25%), 172 steps/s, about 6 h 03 min left as of 14:31 UTC,
    training return 7.31 (last 100 episodes)`` (and ``, evaluation return 9.2 at step N`` with
    ``eval_every``); for a run not ``training`` (stopped or killed) the step and returns
    alone (a speed it no longer has is no time left; so for a report whose time of writing
    no clock shows). None: no report, or not one of a run (a file torn or foreign,
    :func:`read_progress_report`). Reads no more than the file (no torch: ``maxminq
    status``)."""
    p = read_progress_report(folder)
    if p is None:
        return None
    step, steps = p["step"], p["steps"]
    # floored: a run 99.6% through is not 100% (rounded) until it is
    where = f"step {step:,} of {steps:,} ({math.floor(100 * step / steps)}%)"

    def number(key: str) -> float | None:
        value = p.get(key)
        return float(value) if isinstance(value, int | float) and math.isfinite(value) else None

    rate, left, updated = number("steps_per_s"), number("seconds_left"), number("updated")
    if training and rate is not None and left is not None and updated is not None:
        try:  # the local clock, its zone named; a time no clock shows (1e300, a foreign
            # file's) was an OverflowError or OSError out of 'maxminq status'
            then = time.localtime(updated)
        except (OverflowError, OSError, ValueError):
            then = None
        if then is not None:
            same_day = then[:3] == time.localtime()[:3]  # the date too if not today (a
            # laptop asleep since)
            at = time.strftime("%H:%M %Z" if same_day else "%Y-%m-%d %H:%M %Z", then)
            where += f", {rate:,.0f} steps/s, about {_duration(left)} left as of {at}"
    train, evaluated = number("return_avg100"), number("eval_return")
    eval_step = number("eval_step")
    if train is not None:
        where += f", training return {train:.3g} (last 100 episodes)"
    if evaluated is not None and eval_step is not None:
        where += f", evaluation return {evaluated:.3g} at step {int(eval_step):,}"
    return where
