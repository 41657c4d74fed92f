"""Findings of session 22's own-environment journey in the deep path: training's own test
episodes say how they ended (``tests.csv``'s terminated, truncated, as ``maxminq evaluate``'s
CSV); ``run_training`` from Python warns of a run that never learns as the command does; an
environment whose reset skips ``super().reset(seed=seed)`` is told so; ``--network mlp`` on
an image gets a hint that works."""

from __future__ import annotations

import dataclasses
import warnings

import pandas as pd
import pytest
from test_own_operator_deep import _small  # a tiny two-seed generalized-dqn run

from maxminq.deep import read_tables, run_training

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_tests_table_says_how_each_test_episode_ended(tmp_path):
    # CartPole's cap at 12 steps: the untrained agent's test episodes end either way.
    cfg = _small(agent="dqn", n=1, steps=80, eval_episodes=3, max_episode_steps=12)
    tables = run_training(cfg, tmp_path / "run", progress=False)
    tests = tables["tests"]
    assert list(tests.columns) == ["seed", "episode", "return", "length", "terminated", "truncated"]
    # every episode ended one way: the cap (length 12, truncated) or a fall (terminated)
    assert (tests["terminated"] != tests["truncated"]).all()
    assert (tests["truncated"] == (tests["length"] == 12)).all()
    assert tests["terminated"].any() and tests["truncated"].any()  # both kinds here
    read = read_tables(tmp_path / "run")["tests"]
    assert read["terminated"].tolist() == tests["terminated"].tolist()
    assert read["truncated"].tolist() == tests["truncated"].tolist()


def test_published_tests_tables_still_read_without_the_flags():
    tests = read_tables("docs/runs/lunarlander/dqn")["tests"]
    assert list(tests.columns) == ["seed", "episode", "return", "length"]
    assert len(tests) > 0
    assert isinstance(tests, pd.DataFrame)


def test_run_training_warns_of_a_run_that_never_learns(tmp_path, capsys):
    from maxminq.cli import main
    from maxminq.deep.config import NeverLearnsWarning

    cfg = _small(agent="dqn", n=1, steps=60, learning_starts=60, eval_episodes=0)
    with pytest.warns(NeverLearnsWarning) as caught:
        run_training(cfg, tmp_path / "py", progress=False)
    said = [str(w.message) for w in caught if w.category is NeverLearnsWarning]
    assert said == ["--steps 60 <= --learning-starts 60: only random steps, the agents never learn"]
    # one step more learns: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NeverLearnsWarning)
        run_training(dataclasses.replace(cfg, steps=61), tmp_path / "learns", progress=False)
    # The command shows the same warning, once, as its one line.
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "60"]
    argv += ["--learning-starts", "60", "--eval-episodes", "0", "--hidden", "8"]
    assert main([*argv, "--no-progress", "--no-plot", "--out", str(tmp_path / "cli")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "never learn" in line]
    assert err == ["maxminq train: warning: " + said[0]]
