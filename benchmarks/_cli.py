"""Command-line helpers shared by the benchmark scripts (not a benchmark itself).

The scripts import this module from their own folder (Python puts a script's folder first
on ``sys.path``). It gives them the package CLI's convention for bad options: one line,
``prog: error: message`` naming the option, exit status 2, instead of argparse's usage
text or a traceback from deep inside a measurement. The message is the package's own
(:func:`maxminq.cli.explain_parse_error`: the option first, a did-you-mean for a mistyped
option or choice), and an empty value (``--dir ''``, an unset shell variable) is refused as
the package refuses it (:func:`maxminq.cli.reject_empty_values`: ``Path('')`` is the
working folder). Only the number types below are the scripts' own, as the package checks
its numbers after parsing.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from maxminq.cli import explain_parse_error, reject_empty_values
from maxminq.errors import UsageError


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line (``prog: error: message``, exit 2), worded
    as the ``maxminq`` command's are; it refuses empty values as ``maxminq`` does."""

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's ``parse_args``, after refusing an empty value (one line, exit 2)."""
        argv = list(sys.argv[1:] if args is None else args)
        if "-h" not in argv and "--help" not in argv:
            try:
                reject_empty_values(self, argv)
            except UsageError as err:
                self.error(str(err))
        return super().parse_args(argv, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print ``message`` on one line (:func:`maxminq.cli.explain_parse_error`) and exit
        with status 2."""
        self.exit(2, f"{self.prog}: error: {explain_parse_error(self, message)}\n")


def positive_int(text: str) -> int:
    """An integer >= 1 (argparse ``type``; its error names the option)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (argparse ``type``; its error names the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value
