"""An entry point that wraps its environment in a ``TimeLimit`` of its own cuts every
episode there, whatever ``--max-episode-steps`` says: a larger cap trained and evaluated
silently with the shorter episodes, while the run recorded (and its bias warning named) the
cap given. Training and ``evaluate_agent`` now warn (an ``EnvWarning``)."""

from __future__ import annotations

import textwrap
import warnings

import pandas as pd
from user_modules import user_module

from maxminq.deep import TrainConfig, evaluate_agent, load_agent, run_training
from maxminq.deep.config import EnvWarning

MODULE = "own_envs_inner_time_limit"

SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    class Drift(gym.Env):  # never ends an episode itself
        observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action):
            return np.full(2, float(action), np.float32), 0.0, False, False, {}


    def drift_cut_at_6(**kwargs):
        return gym.wrappers.TimeLimit(Drift(**kwargs), 6)


    gym.register("DriftCut-v0", entry_point=drift_cut_at_6)
    """
)

SAID = (
    f"{MODULE}:DriftCut-v0 cuts its episodes at 6 steps itself (a TimeLimit its entry point "
    "adds), so --max-episode-steps 9 cannot lengthen them: they end at 6 steps; register the "
    "id with max_episode_steps instead of that TimeLimit to choose the cap with "
    "--max-episode-steps"
)


def _config(**kwargs) -> TrainConfig:
    return TrainConfig(
        env_id=f"{MODULE}:DriftCut-v0", agent="dqn", steps=60, learning_starts=20,
        buffer_size=60, batch_size=4, bias_every=30, eval_episodes=1, checkpoint_every=0,
        seeds=[0], **kwargs,
    )  # fmt: skip


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, EnvWarning)]


def test_a_cap_longer_than_the_entry_points_time_limit_is_warned_of(tmp_path) -> None:
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tables = run_training(_config(max_episode_steps=9), tmp_path / "run", progress=False)
        assert SAID in _said(caught)
        # what it says: every episode (10 of 6 steps in 60) ends at 6, none at 9
        episodes = tables["episodes"]
        assert len(episodes) == 10 and (episodes.length == 6).all() and episodes.truncated.all()
        assert (tables["tests"].length == 6).all()
        agent = load_agent(tmp_path / "run")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            played = evaluate_agent(agent, episodes=1)
        assert SAID in _said(caught)
        assert played.length.tolist() == [6]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            played = evaluate_agent(agent, episodes=1, max_episode_steps=4)  # cuts first
        assert not [s for s in _said(caught) if "cannot lengthen" in s]
        assert played.length.tolist() == [4]


def test_no_warning_where_the_cap_is_the_entry_points_or_shorter(tmp_path) -> None:
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        for k, cap in enumerate((None, 6, 4)):  # None: the run takes the entry point's 6
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cfg = _config(max_episode_steps=cap)
                tables = run_training(cfg, tmp_path / f"run{k}", progress=False)
            assert not [s for s in _said(caught) if "cannot lengthen" in s], cap
            assert isinstance(tables["episodes"], pd.DataFrame)
            assert (tables["episodes"].length == (cap or 6)).all()
