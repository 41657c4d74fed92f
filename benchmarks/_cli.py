"""Command-line helpers shared by the benchmark scripts (not a benchmark itself).

The scripts import this module from their own folder (Python puts a script's folder first
on ``sys.path``). It gives them the package CLI's convention for bad options: one line,
``prog: error: message`` naming the option, exit status 2, instead of argparse's usage
text or a traceback from deep inside a measurement: the parser is the package's own
:class:`maxminq.cli.OneLineParser` (the option first, a did-you-mean for a mistyped option
or choice; an empty value such as ``--dir ''`` refused, as ``Path('')`` is the working
folder). Only the number types below are the scripts' own, as the package checks its
numbers after parsing.
"""

from __future__ import annotations

import argparse
import math

from maxminq.cli import OneLineParser
from maxminq.errors import ascii_float, ascii_int


class Parser(OneLineParser):
    """The ``maxminq`` command's parser for scripts (:class:`maxminq.cli.OneLineParser`):
    errors are one line (``prog: error: message``, exit 2), an empty value is refused."""


def positive_int(text: str) -> int:
    """An integer >= 1 (argparse ``type``; its error names the option)."""
    try:
        value = ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (argparse ``type``; its error names the option)."""
    try:
        value = ascii_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value
