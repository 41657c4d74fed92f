"""Leftovers of session 19 in deep training: the warning that episodes cut by the time limit
leave the bias unmeasured comes while training as soon as it is sure, not only at the end."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

from maxminq.cli import main
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.train import run_training

pytestmark = pytest.mark.usefixtures("torch_one_thread")

_OBS = np.array([1.0, 0.0], np.float32)


class _Endless(gym.Env):
    """No episode ends by itself: the registered time limit (10 steps) cuts every one."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return _OBS.copy(), {}

    def step(self, action):
        return _OBS.copy(), 0.0, False, False, {}


class _Settling(_Endless):
    """The first three episodes of an instance never end (the 10-step limit cuts them:
    steps 1-30 of a run); every later one terminates at its second step."""

    def reset(self, *, seed=None, options=None):
        self.episodes = getattr(self, "episodes", 0) + 1
        self.t = 0
        return super().reset(seed=seed)

    def step(self, action):
        self.t += 1
        return _OBS.copy(), 0.0, self.episodes > 3 and self.t == 2, False, {}


def _register(entry) -> str:
    env_id = f"mmq-leftovers19/{entry.__name__.strip('_')}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=10)
    return env_id


def _config(env_id: str, steps: int, learning_starts: int = 20) -> TrainConfig:
    return TrainConfig(
        env_id=env_id,
        agent="dqn",
        steps=steps,
        seeds=[0],
        gamma=0.99,  # a cut probe counts 299+ steps before the cut: none of a 10-step cap
        learning_starts=learning_starts,
        bias_every=20,
        buffer_size=200,
        batch_size=8,
        eval_episodes=0,
        checkpoint_every=0,
    )


def _cut_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "only episodes that terminate" in str(w.message)]


def test_the_cut_episodes_warning_comes_at_the_first_interval_that_settles_it(tmp_path) -> None:
    """200 steps, learning from step 20, every episode cut at 10 steps: the run's episodes
    can hold at most 180 steps since learning started, 20% of which is 36. By step 40 the
    cut episodes hold 20 (those ending at 30 and 40), by step 60 40 >= 36: the warning comes
    at the interval of step 60 with the numbers so far (6 episodes ended, 100%), and the
    end adds the whole run's (20 episodes). Before, run_training never warned (only
    maxminq train, after the run)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = run_training(_config(_register(_Endless), 200), tmp_path / "run", progress=False)
    early, end = _cut_warnings(caught)
    assert "; by step 60 of 200 it cut 6 of the 6 training episodes, which held 100% of " in early
    assert "no bias probe counted; bias_mean, bias_std and bias_abs leave them out" in early
    assert "20% or more of the run's steps since learning started" in early
    assert end.startswith("--max-episode-steps 10 with --gamma 0.99: only episodes that ")
    assert end.endswith(
        "; in all it cut 20 of the 20 training episodes, which held 100% of the steps since "
        "learning started: no bias probe counted"
    )
    assert [w.category.__name__ for w in caught if str(w.message) in (early, end)] == [
        "CutEpisodesWarning"
    ] * 2
    assert all(issubclass(w.category, EnvWarning) for w in caught if str(w.message) == end)
    assert (tables["metrics"]["bias_n"] == 0).all()  # as said: no probe counted


def test_the_end_says_nothing_the_early_warning_said(tmp_path) -> None:
    """45 steps: settled at step 40 (20 cut steps of at most 25 since learning started),
    and no episode ends after it (the next would at 50): one warning, not the same twice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_training(_config(_register(_Endless), 45), tmp_path / "run", progress=False)
    (only,) = _cut_warnings(caught)
    assert "; by step 40 of 45 it cut 4 of the 4 training episodes, which held 100%" in only


def test_no_cut_episodes_warning_where_the_cut_ones_are_the_first_few(tmp_path) -> None:
    """The first 30 of 200 steps are in three cut episodes, then every episode terminates:
    15% in all, under 20%, so no warning, neither at the end nor early, although the share
    so far was 100% at step 20 and 75% at step 40 (the first episodes, of a random policy,
    are the ones a cap cuts: the README's Corridor)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = _config(_register(_Settling), 200, learning_starts=0)
        tables = run_training(cfg, tmp_path / "run", progress=False)
    episodes = tables["episodes"]
    assert episodes["truncated"].sum() == 3 and episodes["terminated"].sum() == 85
    assert _cut_warnings(caught) == []


def test_maxminq_train_warns_early_once_then_in_all_and_reading_back_once(tmp_path, capsys) -> None:
    """The command shows the early warning on a line of its own (the progress bar cleared
    first, not ``...step/s]maxminq train: warning``), the end's once (it printed its own
    besides before), and a finished run read back (--resume) its summary once."""
    out = tmp_path / "run"
    argv = ["train", "--env", _register(_Endless), "--agent", "dqn", "--steps", "200"]
    argv += ["--seeds", "0", "--gamma", "0.99", "--learning-starts", "20", "--bias-every", "20"]
    argv += ["--buffer-size", "200", "--batch-size", "8", "--eval-episodes", "0"]
    argv += ["--checkpoint-every", "0", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    said = "maxminq train: warning: --max-episode-steps 10 with --gamma 0.99: only episodes"
    assert err.count(said) == 2
    first = err.index(said)
    assert err[first - 1] in "\r\n", err[first - 40 : first + 10]  # not after the bar
    assert "by step 60 of 200 it cut 6 of the 6" in err[first:].splitlines()[0]
    assert "; in all it cut 20 of the 20 training episodes" in err[first + 1 :]
    assert main([*argv, "--resume", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count(said) == 1
    assert "; it cut 20 of the 20 training episodes, which held 100% of the steps" in err
