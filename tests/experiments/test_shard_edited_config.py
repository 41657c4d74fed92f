"""A sharded sweep resumed after an edit of its config says which runs change shards.

The split is of the runs a config makes: a step size or a mu added between two sweeps of
one machine's shard deals the runs of both versions to other shards. A run the folder
finished that is now another shard's then runs again on that machine, and a run another
machine finished that is now this shard's runs again here; the sweep said nothing (no run
was "no longer made", so not even the note of an edited config), and two machines' results
of one run that differ in floating point make the merge refuse. Counted here by hand: runs
of equal cost go round the shards in run id order.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.cli import main
from maxminq.commands.reproduce import combined_sweep
from maxminq.experiments.config import load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.shard import parse_shard, record_sweep, shard_runs
from maxminq.experiments.store import ResultsStore

EDITED = TOY.replace("mu: [0.1, -0.1]", "mu: [0.1, -0.1, -0.2]")


def _round_robin(ids: set[str], k: int, m: int) -> set[str]:
    """The ids of shard k of m for runs of equal cost: every m-th in sorted order."""
    return {run_id for i, run_id in enumerate(sorted(ids)) if i % m == k - 1}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of shard 1/2 of the tiny sweep (2 of its 4 runs finished), with its config
    (``toy.yaml``) and the edited one (``edited.yaml``) beside it; copy before writing."""
    root = tmp_path_factory.mktemp("shard_edit")
    (root / "toy.yaml").write_text(TOY.format(runs=2, episodes=5))
    (root / "edited.yaml").write_text(EDITED.format(runs=2, episodes=5))
    summary = run_sweep(root / "toy.yaml", root / "out", workers=1, progress=False, shard="1/2")
    assert (summary.total, summary.done, summary.failed) == (2, 2, 0)
    return root


def test_an_edit_that_moves_runs_between_shards_is_told(swept: Path, capsys) -> None:
    path, edited, out = swept / "toy.yaml", swept / "edited.yaml", swept / "out"
    old = {run.run_id for run in load_config(path, "quick").runs}
    new = {run.run_id for run in load_config(edited, "quick").runs}
    assert len(old) == 4 and len(new) == 6 and old <= new
    finished_here = _round_robin(old, 1, 2)
    came = _round_robin(new, 1, 2) - finished_here  # the old runs among them were shard 2's
    came &= old
    went = finished_here - _round_robin(new, 1, 2)
    assert came or went  # this edit moves runs (else the test proves nothing)

    assert main(["sweep", str(edited), "--out", str(out), "--shard", "1/2", "--dry-run"]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "split otherwise" in line]
    assert len(notes) == 1, err
    note = notes[0]
    assert note.startswith("maxminq sweep: note: config tiny_toy makes other runs than when")
    assert "(2 added, 0 no longer made)" in note
    found_came = re.search(r"(\d+) run\(s\) of shard 1/2 were other shards'", note)
    found_went = re.search(r"(\d+) run\(s\) finished here are now other shards'", note)
    assert (int(found_came.group(1)) if found_came else 0) == len(came), note
    assert (int(found_went.group(1)) if found_went else 0) == len(went), note
    with ResultsStore(out, create=False) as store:  # the dry run wrote nothing
        assert {rec.run_id for rec in store.records()} == old


def test_no_note_without_an_edit_or_without_a_shard(swept: Path, tmp_path: Path, capsys) -> None:
    path, edited, sharded = swept / "toy.yaml", swept / "edited.yaml", swept / "out"
    assert main(["sweep", str(path), "--out", str(sharded), "--shard", "1/2", "--dry-run"]) == 0
    # a merged folder takes any --shard: it split nothing before
    whole = tmp_path / "whole"
    shutil.copytree(sharded, tmp_path / "copy")
    assert main(["merge", str(tmp_path / "copy"), "--out", str(whole)]) == 0
    assert main(["sweep", str(edited), "--out", str(whole), "--shard", "1/2", "--dry-run"]) == 0
    assert "split otherwise" not in capsys.readouterr().err


def test_reproduce_with_a_shard_tells_it_too(tmp_path: Path, capsys) -> None:
    """``maxminq reproduce --shard K/M`` splits the runs of its configs together: an edit of
    one of them moves runs as well. The folder is the one a ``reproduce --shard 1/2`` of
    the first version leaves before its runs end (its plan and shard recorded)."""
    configs = tmp_path / "configs"
    configs.mkdir()
    config = configs / "tiny_toy.yaml"
    config.write_text(TOY.format(runs=2, episodes=5))
    out = tmp_path / "out"
    first = combined_sweep([load_config(config, "quick")], "quick")
    config.write_text(EDITED.format(runs=2, episodes=5))
    edited = combined_sweep([load_config(config, "quick")], "quick")
    with ResultsStore(out, lock=True) as store:
        store.register(first.runs)
        record_sweep(store, first.name, "quick", list(first.runs), parse_shard("1/2"))
        # the edited shard's runs stored (a stand-in table): the reproduce runs none
        store.register(edited.runs)
        for run in shard_runs(list(edited.runs), parse_shard("1/2")):
            store.save_tables(run, {"toy_mdp": pd.DataFrame({"episode": [1]})})
            store.mark_finished(run.run_id)
    argv = ["reproduce", "--configs", str(configs), "--only", "tiny_toy", "--shard", "1/2"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "split otherwise" in line]
    assert len(notes) == 1, err
    assert notes[0].startswith(
        "maxminq reproduce: note: reproduce (tiny_toy) make other runs than when"
    ), notes[0]
    assert "(2 added, 0 no longer made)" in notes[0]
