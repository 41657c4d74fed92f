"""A sweep config that names one setting in both ``fixed`` and ``grid`` of the same level.

The grid's values were taken and the fixed one dropped without a word: a user who wrote
``fixed: {seed: 7}`` beside ``grid: {seed: [1, 2]}`` got runs of seeds 1 and 2 only. A scale
may still move a key from the top level's fixed to its own grid (and back): that is what a
scale is for.
"""

from __future__ import annotations

import pytest

from maxminq.cli import main
from maxminq.experiments.config import ConfigError, config_from_document

TOP = {
    "name": "twice",
    "kind": "toy_mdp",
    "fixed": {"seed": 7, "episodes": 10, "runs": 2},
    "grid": {"mu": [0.1]},
    "variants": [{"algorithm": "q_learning", "n": 1}],
    "scales": {"quick": {}},
}


def test_a_key_in_fixed_and_grid_of_the_top_level_is_refused_naming_it():
    doc = {**TOP, "grid": {"seed": [1, 2], "mu": [0.1]}}
    with pytest.raises(ConfigError, match=r"grid\.seed: also in fixed; give it in one of them"):
        config_from_document(doc, "<doc>", "quick")


def test_a_key_in_fixed_and_grid_of_one_scale_is_refused_naming_the_scale():
    scale = {"fixed": {"mu": 0.2}, "grid": {"mu": [0.1, 0.3]}}
    doc = {**TOP, "scales": {"quick": scale}}
    with pytest.raises(ConfigError, match=r"scales\.quick\.grid\.mu: also in scales\.quick\.fixed"):
        config_from_document(doc, "<doc>", "quick")


def test_a_scale_may_still_move_a_key_between_fixed_and_grid():
    doc = {**TOP, "scales": {"quick": {"grid": {"seed": [1, 2]}}}}
    config = config_from_document(doc, "<doc>", "quick")
    assert sorted(run.settings["seed"] for run in config.runs) == [1, 2]
    assert "seed" not in config.fixed


def test_the_command_says_it_in_one_line_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "twice.yaml"
    path.write_text(
        "name: twice\nkind: toy_mdp\nfixed: {seed: 7, episodes: 10, runs: 2}\n"
        "grid: {seed: [1, 2], mu: [0.1]}\nvariants:\n  - {algorithm: q_learning, n: 1}\n"
        "scales: {quick: {}}\n"
    )
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "grid.seed: also in fixed" in err[0]
    assert not out.exists()
