"""The progress bars of the library's long calls (``run_training``, ``evaluate_agent``, the
classic experiments' run functions, ``FiniteMDP.learn``, the theory's tables).

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

import sys
from typing import Any

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
    gives a bar that shows nothing (its ``update``, ``n`` and ``close`` still work).
    ``kwargs`` go to tqdm (``initial``, ``unit_scale``)."""
    if enabled and not (in_notebook() or writes_to_terminal(kwargs.get("file"))):
        kwargs.setdefault("mininterval", LOG_INTERVAL)
    # The clock read at every update, not every ``miniters`` updates guessed from the rate so
    # far: without the monitor thread nothing else redraws a bar whose steps slowed down (a
    # run's first steps, before learning starts, are many times faster than the rest).
    kwargs.setdefault("miniters", 1)
    return _bar_class()(total=total, desc=desc, unit=unit, disable=not enabled, **kwargs)
