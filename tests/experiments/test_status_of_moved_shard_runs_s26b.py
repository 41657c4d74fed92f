"""``maxminq status`` of a shard's folder says how many of the other shards' runs are pending
there, as the report counts them: after an edit that moved a run this folder finished to
another shard, it said "the other 3 run(s) are other shards' (pending here ...)" of 3 runs
of which one was done here.

Worked out by hand: the 4 runs of the tiny sweep (equal cost) go round the 2 shards in run
id order; the edit adds a mu (6 runs), after which one run that shard 1 finished is shard
2's (checked below from the ids alone).
"""

from __future__ import annotations

from pathlib import Path

from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.cli import main
from maxminq.experiments.config import load_config
from maxminq.experiments.runner import run_sweep

EDITED = TOY.replace("mu: [0.1, -0.1]", "mu: [0.1, -0.1, -0.2]")


def _first(ids: set[str]) -> set[str]:
    """Shard 1 of 2 of runs of equal cost: every second id in sorted order."""
    return {run_id for i, run_id in enumerate(sorted(ids)) if i % 2 == 0}


def test_status_counts_the_other_shards_runs_pending_here(tmp_path: Path, capsys) -> None:
    (tmp_path / "toy.yaml").write_text(TOY.format(runs=2, episodes=5))
    (tmp_path / "edited.yaml").write_text(EDITED.format(runs=2, episodes=5))
    old = {r.run_id for r in load_config(tmp_path / "toy.yaml", "quick").runs}
    new = {r.run_id for r in load_config(tmp_path / "edited.yaml", "quick").runs}
    went = _first(old) - _first(new)  # finished by the first sweep, now shard 2's
    assert len(went) == 1 and went <= new
    out = tmp_path / "out"
    for path in ("toy.yaml", "edited.yaml"):
        run_sweep(tmp_path / path, out, workers=1, progress=False, shard="1/2")
    main(["status", str(out)])
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "shard 1/2 here" in x]
    assert "3 of its 3 run(s) finished; the other 3 run(s) are other shards' " in line, line
    assert "(2 of them pending here; 'maxminq merge'" in line, line
