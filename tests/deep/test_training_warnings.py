"""Warnings of training: a run that never learns, evaluations rarer than the run, no time
limit, an unguarded script; each pointing at the caller's line."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from deep_runs import _cfg
from generalized_runs import _small
from line_env import StepsEnv
from steps_env_runs import _model_run, _register

import maxminq.deep.train as train
from maxminq.cli import main
from maxminq.deep import TrainConfig, load_agent, run_training
from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import EnvWarning, NoEvaluationWarning
from maxminq.deep.policy import evaluate_agent


class _Endless(gym.Env):
    """No episode ends by itself: the registered time limit (10 steps) cuts every one."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([1.0, 0.0], np.float32), {}

    def step(self, action):
        return np.array([1.0, 0.0], np.float32), 0.0, False, False, {}


_ENDLESS = "mmq-second-read19/Endless-v0"


if _ENDLESS not in gym.registry:
    gym.register(_ENDLESS, entry_point=_Endless, max_episode_steps=10)


@pytest.mark.usefixtures("torch_one_thread")
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


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_run_training_warns_of_evaluations_rarer_than_the_run_is_long(tmp_path, capsys):
    from maxminq.cli import main

    cfg = _cfg(seeds=[0], steps=50, eval_every=60, eval_episodes=0)
    with pytest.warns(NoEvaluationWarning) as caught:
        tables = run_training(cfg, tmp_path / "py", progress=False)
    assert tables["evals"].empty
    said = [str(w.message) for w in caught if w.category is NoEvaluationWarning]
    text = "--eval-every 60 > --steps 50: no evaluation runs (evals.csv holds only its header)"
    assert said == [text]
    with warnings.catch_warnings():  # an evaluation at the last step: no warning
        warnings.simplefilter("error", NoEvaluationWarning)
        run_training(dataclasses.replace(cfg, steps=60), tmp_path / "at_end", progress=False)
    # the command shows it once, as its one line
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "50", "--hidden", "8"]
    argv += ["--learning-starts", "40", "--eval-every", "60", "--eval-episodes", "0"]
    assert main([*argv, "--no-progress", "--no-plot", "--out", str(tmp_path / "cli")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "--eval-every" in line]
    assert err == ["maxminq train: warning: " + text]


@pytest.mark.usefixtures("torch_one_thread")
def test_no_time_limit_is_an_env_warning_from_python_and_once_from_the_command(
    tmp_path, capsys
) -> None:
    """Only the command warned (a print); evaluate_agent said nothing."""
    uncapped = _model_run(tmp_path / "uncapped", _register(StepsEnv, cap=None))
    agent = load_agent(uncapped)
    with pytest.warns(EnvWarning, match="has no time limit: an episode the policy never ends"):
        evaluate_agent(agent, [0], 1)
    with warnings.catch_warnings():  # a cap given here is one
        warnings.simplefilter("error", EnvWarning)
        evaluate_agent(agent, [0], 1, max_episode_steps=10)
    assert main(["evaluate", str(uncapped), "--episodes", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("has no time limit") == 1, err
    assert "maxminq evaluate: warning: " in err and "--max-episode-steps sets one" in err, err
    argv = ["evaluate", str(uncapped), "--episodes", "1", "--no-progress"]
    assert main([*argv, "--max-episode-steps", "10"]) == 0
    assert "time limit" not in capsys.readouterr().err


@pytest.mark.usefixtures("torch_one_thread")
def test_an_error_filter_on_the_early_cut_warning_does_not_stop_the_run_midway(
    tmp_path: Path,
) -> None:
    """200 steps of episodes all cut at 10 steps, learning from step 20, metrics every 20:
    the early warning is due at step 60 (40 cut steps >= 20% of 180). With the warning an
    error, the run still trains to its end, writes its tables, and then raises it, with
    the whole run's 20 episodes."""
    out = tmp_path / "run"
    cfg = TrainConfig(
        env_id=_ENDLESS,
        agent="dqn",
        steps=200,
        seeds=[0],
        gamma=0.99,  # a cut probe counts 299+ steps before the cut: none of a 10-step cap
        learning_starts=20,
        bias_every=20,
        buffer_size=200,
        batch_size=8,
        eval_episodes=0,
        checkpoint_every=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", CutEpisodesWarning)
        with pytest.raises(CutEpisodesWarning) as raised:
            train.run_training(cfg, out, progress=False)
    assert "it cut 20 of the 20 training episodes" in str(raised.value)
    assert "by step" not in str(raised.value)
    tables = train.read_tables(out, "--out")  # the run finished: runs.csv is there
    assert tables["episodes"]["step"].max() == 200
    assert len(tables["episodes"]) == 20
