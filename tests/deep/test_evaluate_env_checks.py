"""``evaluate_agent`` / ``maxminq evaluate`` check the environment as training does: a NaN
or inf observation or reward is the one-line ``--env`` error of training's test episodes (a
NaN observation was played as action 0, the argmax of NaN values, and a NaN return
recorded), and the "no time limit" warning counts a ``TimeLimit`` the environment's entry
point adds, as training's does.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from line_env import NonFiniteEnv, StepsEnv
from steps_env_runs import _model_run, _register

from maxminq.cli import main
from maxminq.deep.config import EnvWarning
from maxminq.deep.policy import evaluate_agent, load_agent
from maxminq.errors import UsageError


def _capped_later(**kwargs):
    """No registered cap; a TimeLimit of the entry point's own once ``cap`` is set (the
    environment as changed after a run trained on it without one)."""
    env = StepsEnv(**kwargs)
    return env if _capped_later.cap is None else gym.wrappers.TimeLimit(env, _capped_later.cap)


_capped_later.cap = None


@pytest.mark.parametrize(
    "bad,needle",
    [
        ("reset", r"an observation of a test or evaluation episode \(seed 0's episode 1, "
                  r"reset\(\)\) is inf as float32; observations must be finite numbers"),
        ("obs", r"an observation of a test or evaluation episode \(seed 0's episode 1, "
                r"step\(\)\) is nan as float32"),
        ("reward", r"a reward of a test or evaluation episode \(seed 0's episode 1, "
                   r"step\(\)\) is nan as float32; rewards must be finite numbers"),
        ("huge", r"a reward of a test or evaluation episode .* is inf as float32"),
    ],
)  # fmt: skip
def test_evaluate_refuses_a_non_finite_value_as_training_does(bad, needle, tmp_path) -> None:
    """evaluate_agent played a NaN observation as action 0 and recorded NaN or inf returns;
    training's test episodes refuse them (the same check, the same words)."""
    run = _model_run(tmp_path / "run", _register(NonFiniteEnv))
    agent = load_agent(run)
    NonFiniteEnv.bad = bad
    try:
        with pytest.raises(UsageError, match=f"^--env: {needle}"):
            evaluate_agent(agent, [0], episodes=2)
        argv = ["evaluate", str(run), "--episodes", "2", "--no-progress"]
        csv = tmp_path / "episodes.csv"
        assert main([*argv, "--csv", str(csv)]) == 2
    finally:
        NonFiniteEnv.bad = None
    assert not csv.exists()
    # Finite values play as before: 2 episodes of 6 steps each.
    table = evaluate_agent(agent, [0], episodes=2)
    assert table["length"].tolist() == [6, 6] and np.isfinite(table["return"]).all()


def test_the_command_gives_the_non_finite_error_in_one_line(tmp_path, capsys) -> None:
    run = _model_run(tmp_path / "run", _register(NonFiniteEnv))
    NonFiniteEnv.bad = "obs"
    try:
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 2
    finally:
        NonFiniteEnv.bad = None
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("maxminq evaluate: error: --env: an observation of a test or "), err


def test_evaluate_counts_a_time_limit_of_the_entry_points_own(tmp_path, capsys) -> None:
    """Training counts the environment's own TimeLimit; evaluate went by the run's recorded
    cap alone and said an environment whose entry point now adds one 'has no time limit'."""
    run = _model_run(tmp_path / "run", _register(_capped_later, cap=None))
    assert load_agent(run).config.max_episode_steps is None  # trained without a cap
    _capped_later.cap = 4
    try:
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 0
        assert "time limit" not in capsys.readouterr().err
        with warnings.catch_warnings():
            warnings.simplefilter("error", EnvWarning)
            table = evaluate_agent(load_agent(run), [0], 1)
    finally:
        _capped_later.cap = None
    assert table["truncated"].tolist() == [True] and table["length"].tolist() == [4]
