"""The report of one machine's ``maxminq sweep --shard K/M`` folder counts the other shards'
runs apart from those a rerun completes.

Every machine's folder registers all the config's runs, the other shards' pending there.
The report's caution said "2 pending ... rerunning the sweep completes pending and failed
runs", which rerunning this machine's sweep never does (they are other machines' runs,
which ``maxminq merge`` brings together). Runs of equal cost go round the shards: shard
1 of 2 of the 4 runs is 2 runs, the other 2 are pending here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import main
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

TOY = """
name: tiny_toy
kind: toy_mdp
fixed: {seed: 7, episodes: 5, runs: 2}
grid: {mu: [0.1, -0.1]}
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: 2}
scales: {quick: {}}
"""


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_other_shards_runs_are_counted_apart(tmp_path: Path, capsys) -> None:
    (tmp_path / "toy.yaml").write_text(TOY)
    out = tmp_path / "out"
    summary = run_sweep(tmp_path / "toy.yaml", out, workers=1, progress=False, shard="1/2")
    assert (summary.total, summary.done, summary.failed) == (2, 2, 0)
    with ResultsStore(out, create=False) as store:
        statuses = sorted(rec.status for rec in store.records())
    assert statuses == ["done", "done", "pending", "pending"]
    main(["report", str(out), "--reps", "100"])
    printed = capsys.readouterr().out
    assert "caution, runs without results (not in this report): 2 of other shards" in printed
    md = " ".join((out / "report.md").read_text().split())
    assert "has results:** 2 of other shards (pending here)." in md
    assert "rerunning the sweep completes" not in md
    assert "which 'maxminq merge' brings together with this folder" in md
    # a run of this shard left pending (Ctrl-C): one that rerunning completes
    with ResultsStore(out) as store:
        ours = next(r.run_id for r in store.records() if r.status == "done")
        store.mark_pending(ours, "interrupted")
    main(["report", str(out), "--reps", "100"])
    capsys.readouterr()
    md = " ".join((out / "report.md").read_text().split())
    assert "has results:** 1 pending, 2 of other shards (pending here)." in md
    assert "rerunning the sweep completes pending and failed runs; those of other shards" in md
