"""Errors that the command line turns into a one-line message and exit status 2, and
warnings it shows as one line."""

from __future__ import annotations

import numbers
import os
import re
import sys
from types import FrameType

# What ``from maxminq.errors import *`` binds: the error and warning classes and the helpers
# the commands share (not ``numbers``, ``re``, nor ``__future__.annotations``, which it
# brought along).
__all__ = [
    "INT64_MAX",
    "ascii_float",
    "ascii_int",
    "CannotResumeError",
    "MaxminqError",
    "MaxminqWarning",
    "UsageError",
    "closest",
    "is_digits",
    "is_whole",
    "meant_whole",
    "one_line",
    "outside_stacklevel",
]


class MaxminqError(Exception):
    """Base class for errors the user can fix (bad option, bad config, bad data)."""


def one_line(text: object) -> str:
    """``str(text)`` with every run of whitespace (newlines too) as one space: an error's
    message inside a one-line error."""
    return " ".join(str(text).split())


def is_whole(value: object) -> bool:
    """Whether ``value`` is a whole number: a Python or NumPy integer, not a bool (``True``
    where a count or seed belongs is a slip, not 1)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


#: The largest int64: the integers of NumPy arrays, of the tables' columns and of the compiled
#: kernels; a count, seed or step above it fails (or reads as text) further down.
INT64_MAX = 2**63 - 1


def is_digits(text: str) -> bool:
    """Whether ``text``, spaces aside, is a whole number written in ASCII digits, as an N or a
    count is typed: ``str.isdigit`` is also true of '²' (``int`` fails on it) and of other
    scripts' digits (``int('١')`` is 1, a number nobody typed)."""
    text = text.strip()
    return text.isascii() and text.isdigit()


def ascii_int(text: object) -> int:
    """``int(text)`` for a count or seed typed as text, refusing digits of other scripts with
    a ValueError as for any text ``int`` cannot read: ``int`` reads '١٠٠' as 100 and '٠-٤'
    parts as 0 and 4, numbers nobody typed at a keyboard writing ASCII. Every parser of
    maxminq's options reads integers through it (argparse's ``type=int`` included)."""
    if isinstance(text, str) and not text.isascii():
        raise ValueError(text)
    return int(text)  # type: ignore[call-overload]


def ascii_float(value: object) -> float:
    """``float(value)``, refusing text with digits of other scripts as :func:`ascii_int` does
    ('١.٥' read as 1.5); numbers pass as they are."""
    if isinstance(value, str) and not value.isascii():
        raise ValueError(value)
    return float(value)  # type: ignore[arg-type]


def meant_whole(text: str) -> int | None:
    """The whole number that ``text``, refused as an integer, was meant as where that is
    clear: ``'1e5'`` 100000, ``'7.0'`` 7, ``'1,500,000'`` 1500000 (commas only as thousands
    separators: ``'2,4'`` is two numbers, not 24, and ``'1,5'`` no number); None otherwise
    (``'1.5'``, ``'inf'``, ``'abc'``). Quotes around ``text`` (argparse's ``'1e5'``) are
    ignored."""
    text = text.strip().strip("'\"")
    if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?", text):
        text = text.replace(",", "")
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def closest(word: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
    """The candidate ``word`` was most likely meant as (a case slip first, then the one
    candidate that ``word``, of three letters or more, begins, then the closest spelling by
    :func:`difflib.get_close_matches` at ``cutoff``), or None when none is close: what
    every "did you mean" of maxminq names (options, config keys, settings, ``TrainConfig``
    keywords, agents). Without the second step ``--only toy`` was 'did you mean theory?'
    beside toy_mdp."""
    import difflib

    same_case = [c for c in candidates if c.lower() == word.lower()]
    begun = [c for c in candidates if len(word) >= 3 and c.lower().startswith(word.lower())]
    close = same_case or (begun if len(begun) == 1 else [])
    close = close or difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
    return close[0] if close else None


class UsageError(MaxminqError, ValueError):
    """A bad option or argument value; the message names the option and what it expects."""


class CannotResumeError(UsageError):
    """A run that cannot be continued (a damaged checkpoint, an environment that does not
    replay): only training it again from the start helps. ``reason`` says why, ``remedy``
    how to start again where the error is raised (``--overwrite`` for ``maxminq train``,
    deleting the run's work folder in a sweep)."""

    def __init__(self, reason: str, remedy: str = "--overwrite starts the run again") -> None:
        super().__init__(reason, remedy)  # both in args: the error pickles (Ray, pools)
        self.reason = reason
        self.remedy = remedy

    def __str__(self) -> str:
        return f"{self.reason}; {self.remedy}"


# maxminq's own source folder: a frame whose file lies in it is not the user's code.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def outside_stacklevel(*also: str) -> int:
    """The ``stacklevel`` with which the function calling this one makes a warning point
    at the first frame outside maxminq (and outside the folders ``also``, e.g. numba's, whose
    dispatcher calls back into maxminq): the user's line that called ``run_training``,
    ``evaluate_agent`` or ``generalized_q_learning``, however deep in maxminq the warning
    arises (a fixed stacklevel named a line of ``deep/train.py`` for some warnings, and
    showed its source). 1 when there is no frame outside."""
    inside = (_PACKAGE_DIR, *(os.path.join(os.path.abspath(a), "") for a in also))
    frame: FrameType | None = sys._getframe(1)  # the caller, which warns: stacklevel 1
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1


class MaxminqWarning(UserWarning):
    """Base class for warnings meant for the user: ``maxminq`` prints each as one line,
    ``maxminq COMMAND: warning: ...``; from Python they are ordinary warnings."""

    #: A later warning of this class in the same run says all that an earlier one did (a
    #: running count, then the whole run's): a sweep, which shows a run's warnings when the
    #: run ends, shows only its last.
    last_of_run_only = False
