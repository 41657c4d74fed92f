"""Errors that the command line turns into a one-line message and exit status 2, and
warnings it shows as one line."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


class MaxminqError(Exception):
    """Base class for errors the user can fix (bad option, bad config, bad data)."""


class UsageError(MaxminqError, ValueError):
    """A bad option or argument value; the message names the option and what it expects."""


class MaxminqWarning(UserWarning):
    """Base class for warnings meant for the user: ``maxminq`` prints each as one line,
    ``maxminq COMMAND: warning: ...``; from Python they are ordinary warnings."""


@contextlib.contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Within, an OSError that names no file (a full disk while matplotlib, pyarrow or
    ``torch.save`` writes through a temporary file: just 'File too large') is raised again
    naming ``path``, so that the command's one-line error says which output failed."""
    try:
        yield
    except OSError as err:
        if err.filename is None and err.filename2 is None:
            raise OSError(err.errno, err.strerror or str(err), str(path)) from err
        raise
