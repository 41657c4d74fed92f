"""Ctrl-C, SIGTERM and SIGHUP during training take effect at the end of the step under way
(:class:`StepBoundary`), so that the run's checkpoint of that step resumes exactly."""

from __future__ import annotations

import signal
import threading
from typing import Any

from maxminq.experiments.workers import STOP_SIGNALS


class StepBoundary:
    """Within (a context manager), Ctrl-C (SIGINT) and SIGTERM only mark the run as to stop:
    the training loop asks :meth:`requested` once per step, for all seeds at once, writes a
    checkpoint of that step, then :meth:`deliver` hands the signal to the handler that was
    there before, which stops the run as it would have (``KeyboardInterrupt``, maxminq's
    ``Terminated``, or death by SIGTERM). A signal raised at once could land anywhere in a
    step (after the environments stepped but before the replay write, within the optimiser
    update), and a checkpoint of that state would not resume to the uninterrupted run.

    Until the signal is delivered (a step that takes long, then the checkpoint's write), a
    second Ctrl-C delivers it at once, mid-step or mid-write, leaving the previous
    checkpoint as it was (the write is atomic); a second SIGTERM changes nothing: schedulers
    and process pools send it again with the same meaning (a local sweep's pool sends it to
    every worker when one dies), and insist with SIGKILL. A signal that is ignored (SIG_IGN,
    as SIGINT in a sweep's workers) or whose handler was not set from Python is left alone;
    outside the main thread, where Python cannot set handlers, nothing changes. On leaving,
    the previous handlers are back, and a signal still pending is delivered (unless a
    KeyboardInterrupt is already on its way)."""

    SIGNALS = STOP_SIGNALS  # SIGHUP too: maxminq train stops on it as on SIGTERM

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}
        self.pending: int | None = None

    def __enter__(self) -> StepBoundary:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                handler = signal.getsignal(signum)
                if handler not in (signal.SIG_IGN, None):
                    self.previous[signum] = handler
        self._arm()
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.restore()
        if self.pending is not None and not (kind and issubclass(kind, KeyboardInterrupt)):
            # Not deferring again after a handler that returns: its handlers stay the
            # caller's (a deferring one left behind would swallow every later signal).
            self.deliver(rearm=False)
        self.pending = None

    def _arm(self) -> None:
        for signum in self.previous:
            signal.signal(signum, self._defer)

    def _defer(self, signum: int, frame: object) -> None:
        """The handler while deferring: remember the signal; a second Ctrl-C delivers it."""
        if signum == getattr(signal, "SIGHUP", None):
            # The terminal closed: the rest of the step (a progress bar) and the checkpoint
            # must not fail writing to it (EIO).
            from maxminq.cli import _output_to_devnull_if_hung_up

            _output_to_devnull_if_hung_up()
        if self.pending is None:
            self.pending = signum
        elif signum == signal.SIGINT:
            self.deliver()

    @property
    def requested(self) -> bool:
        """Whether a signal waits for the end of the step."""
        return self.pending is not None

    def restore(self) -> None:
        """Put the previous handlers back: a signal now acts as it did before."""
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def deliver(self, *, rearm: bool = True) -> None:
        """Give the pending signal to the previous handler (raised again, as the kernel
        would have delivered it). A handler that returns (neither raises nor ends the
        process) lets the run go on, deferring signals again (``rearm``; not on leaving)."""
        signum, self.pending = self.pending, None
        if signum is None:
            return
        self.restore()
        signal.raise_signal(signum)  # runs the Python handler before it returns
        if rearm:
            self._arm()
