"""How each test and evaluation episode ended (terminated, truncated) in tests.csv and
evals.csv."""

from __future__ import annotations

import pytest
from deep_runs import _cfg
from generalized_runs import _small

from maxminq.deep import read_tables, run_training


@pytest.mark.usefixtures("torch_one_thread")
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


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_evals_table_says_how_each_evaluation_episode_ended(tmp_path):
    evals = run_training(_cfg(), tmp_path / "run", progress=False)["evals"]
    assert list(evals.columns)[-2:] == ["terminated", "truncated"]
    assert len(evals) == 3 * 2 * 2  # steps 60 and 120, two episodes, three seeds
    # cut at the 12-step limit exactly when it lasted 12 steps; shorter ones ended
    assert evals["truncated"].tolist() == (evals["length"] == 12).tolist()
    assert evals.loc[evals["length"] < 12, "terminated"].all()
    assert evals["truncated"].any() and evals["terminated"].any()
    read = read_tables(tmp_path / "run")["evals"]
    assert read["truncated"].tolist() == evals["truncated"].tolist()
