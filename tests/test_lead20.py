"""Lead's fixes of session 20."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

from maxminq.envs import make
from maxminq.errors import UsageError


def test_a_class_is_told_the_id_named_after_it_not_a_scripts_own_id_of_it() -> None:
    """A script (or another test in the same process) registering CartPoleEnv under an id of
    its own that sorts first ('AaaMine-v0') made ``make(CartPoleEnv)`` advise that id,
    which no other process knows, instead of 'CartPole-v1' (seen in CI under -n 2)."""
    assert "AaaMine-v0" not in gym.registry
    gym.register("AaaMine-v0", entry_point=CartPoleEnv, max_episode_steps=50)
    try:
        advice = r"the class CartPoleEnv; .* give its id, 'CartPole-v1'$"
        with pytest.raises(UsageError, match=advice):
            make(CartPoleEnv)
    finally:
        del gym.registry["AaaMine-v0"]


def test_every_did_you_mean_takes_a_case_slip_first() -> None:
    """One helper (errors.closest) behind every "did you mean": the agent check had its own
    difflib call, which found nothing for 'DQN' (no letter in common with 'dqn')."""
    from maxminq.deep import TrainConfig

    with pytest.raises(UsageError, match=r"unknown agent 'DQN'; did you mean dqn\?"):
        TrainConfig(env_id="CartPole-v1", agent="DQN").resolve()
