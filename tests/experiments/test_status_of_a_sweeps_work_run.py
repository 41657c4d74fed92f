"""``maxminq status OUT/work/RUN``: a deep run a sweep is training in its scratch folder is
the sweep's to report. Since status tells of one 'maxminq train' run with exit 0, that
case stays the one-line error (exit 2) naming the sweep's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import error_line

from maxminq.experiments.store import ResultsStore


@pytest.mark.parametrize("finished", [False, True])
def test_a_run_in_a_sweeps_work_folder_points_to_the_sweep(
    tmp_path: Path, capsys, finished: bool
) -> None:
    # finished: its runs.csv written, as a folder 'maxminq sweep --keep-work' keeps (or one a
    # sweep killed before it stored the run leaves); it was 'one maxminq train run, finished'
    out = tmp_path / "out"
    with ResultsStore(out):  # a real sweep store: results.sqlite
        pass
    run = out / "work" / "deep-1"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"env_id": "CartPole-v1", "agent": "dqn"}))
    if finished:
        (run / "runs.csv").write_text("seed,status\n0,done\n")
    line = error_line(capsys, ["status", str(run)])
    assert line == (
        f"maxminq status: error: DIR: {run} holds a run of the sweep in {out}: "
        f"'maxminq status {out}' shows it"
    )
