"""``maxminq sweep --shard K/M --dry-run`` counts the runs of its shard only.

Its line said ``3 of its 6 runs, 6 already done in OUT, 0 to run`` in a folder swept whole
(a merged folder, which takes any ``--shard``): the done count was of every run of the
config, while the runs and those to run were the shard's. The sweep itself says ``3 runs
(of 6), 3 already done``.
"""

from __future__ import annotations

from pathlib import Path

from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.commands.sweep import dry_run
from maxminq.experiments.config import load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.shard import parse_shard, shard_runs


def test_dry_run_of_a_shard_counts_its_own_finished_runs(tmp_path: Path) -> None:
    path = tmp_path / "toy.yaml"
    path.write_text(TOY.format(runs=2, episodes=5))
    out = tmp_path / "out"
    summary = run_sweep(path, out, workers=1, progress=False)  # all 4 runs, no --shard
    assert (summary.done, summary.failed) == (4, 0)
    config = load_config(path, "quick")
    shard = parse_shard("1/2")
    assert shard is not None
    ours = shard_runs(list(config.runs), shard)
    assert len(ours) == 2  # 4 runs of equal cost: 2 per shard
    head = dry_run(config, out, shard).splitlines()[0]
    assert "2 of its 4 runs, 2 already done in" in head, head
    assert ", 0 to run" in head, head
    # the sweep itself agrees
    again = run_sweep(path, out, workers=1, progress=False, shard="1/2")
    assert (again.total, again.skipped, again.done) == (2, 2, 0)
