"""Errors that the command line turns into a one-line message and exit status 2, and
warnings it shows as one line."""

from __future__ import annotations


class MaxminqError(Exception):
    """Base class for errors the user can fix (bad option, bad config, bad data)."""


class UsageError(MaxminqError, ValueError):
    """A bad option or argument value; the message names the option and what it expects."""


class MaxminqWarning(UserWarning):
    """Base class for warnings meant for the user: ``maxminq`` prints each as one line,
    ``maxminq COMMAND: warning: ...``; from Python they are ordinary warnings."""
