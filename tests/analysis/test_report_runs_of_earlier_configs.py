"""The report's caution on runs without results tells apart the runs of an earlier version
of a config (edited between two sweeps, or swept at another scale), which no sweep of the
config as it is now runs.

A sweep stopped early, then its config edited (``episodes: 300`` to ``50``) and swept to
the end, left the first version's runs pending for ever; the report said "8 pending ...
rerunning the sweep completes pending and failed runs", which rerunning never did. Each
sweep records its config's runs (its plan); the runs in no plan are counted apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_results import mc_results, write_store

from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.shard import record_sweep
from maxminq.experiments.store import ResultsStore


def _folder(out: Path) -> list[str]:
    """A folder of Mountain Car results of config ``c`` (finished, its plan recorded), and
    two runs of an earlier version of ``c`` that its sweep left pending and failed; returns
    the finished runs' ids."""
    write_store(out, {"mountain_car": mc_results(runs=4)})
    with ResultsStore(out) as store:
        done = list(store.records())
        earlier = [
            RunSpec(f"mountain_car-00000000000{i}", "mountain_car", {"episodes": 300}, "c")
            for i in (1, 2)
        ]
        store.register(earlier)
        store.mark_running(earlier[1].run_id)
        store.mark_finished(earlier[1].run_id, "failed", error="boom")
        record_sweep(store, "c", "quick", done, None)  # the config as swept last
    return [rec.run_id for rec in done]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_runs_no_config_makes_now_are_counted_apart(tmp_path: Path, capsys) -> None:
    _folder(tmp_path)
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert (
        "caution, runs without results (not in this report): 2 of an earlier version of "
        "their config (pending or failed)"
    ) in out
    md = (tmp_path / "report.md").read_text()
    assert "has results:** 2 of an earlier version of their config (pending or failed)." in md
    assert "rerunning the sweep completes" not in md
    assert "which rerunning the sweep does not run" in md


@pytest.mark.usefixtures("unrendered_figures")
def test_runs_of_the_config_as_swept_last_are_counted_by_status(tmp_path: Path, capsys) -> None:
    """A run of the plan still pending (a sweep stopped early) is one rerunning completes."""
    ids = _folder(tmp_path)
    with ResultsStore(tmp_path) as store:
        store.mark_pending(ids[0], "interrupted")
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert (
        "(not in this report): 1 pending, 2 of an earlier version of their config "
        "(pending or failed)"
    ) in out
    md = (tmp_path / "report.md").read_text()
    assert "rerunning the sweep completes pending and failed runs; those of an earlier" in md
