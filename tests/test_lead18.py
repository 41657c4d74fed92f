"""Leftovers the lead settled after the second readings of session 18: ``maxminq reproduce``
registers a run the folder holds under its older id (a deep run swept with other
checkpoint settings, before its id left them out) under that id, as the sweep runs it;
SIGHUP's default is back when the resource tracker cannot start. (A Ray sweep given
SIGHUP: tests/test_leftovers18_sweeps.py.)"""

from __future__ import annotations

from pathlib import Path

from test_leftovers18_sweeps import _config, _hash_id, _store_finished

from maxminq.commands.reproduce import combined_sweep, register_runs
from maxminq.experiments.config import RunSpec
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore


def test_reproduce_leaves_no_run_pending_beside_the_one_stored_under_its_older_id(
    tmp_path: Path,
) -> None:
    """A folder holding a finished run under its older id (checkpoint_every 50): reproduce's
    registration and sweep find it done and register nothing else, so no run is left
    pending (the report's caution would say a rerun completes it; it never would)."""
    config = _config(tmp_path, ", checkpoint_every: 50")
    (run,) = config.runs
    legacy = RunSpec(_hash_id("deep", run.settings), run.kind, run.settings, run.config)
    assert legacy.run_id != run.run_id
    out = tmp_path / "out"
    _store_finished(out, legacy)
    register_runs(out, [config])
    summary = run_sweep(combined_sweep([config], "quick"), out, workers=1, progress=False)
    assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0)
    with ResultsStore(out, create=False) as store:
        records = store.records()
    assert [(r.run_id, r.status) for r in records] == [(legacy.run_id, "done")]


def test_a_tracker_that_cannot_start_leaves_sighup_at_its_default(
    monkeypatch, sighup_default
) -> None:
    """hangup_as_terminate puts SIGHUP's default back when starting multiprocessing's
    resource tracker fails (e.g. no process can be started): the handler it had set for
    the command stayed installed after the error."""
    import signal

    import pytest

    from maxminq import cli
    from maxminq.experiments import workers

    def cannot_start() -> None:
        raise OSError("no more processes")

    monkeypatch.setattr(workers, "start_resource_tracker", cannot_start)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
    with pytest.raises(OSError, match="no more processes"), cli.hangup_as_terminate():
        pass
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
