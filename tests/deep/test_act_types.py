"""What ``TrainedAgent.act`` returns, as docs/deep-agents.md says: a Python int for one
observation (what ``env.step`` takes), an int64 array of shape (B,) for a batch of B,
empty too, greedy or eps-greedy, and it plays a Gymnasium vector environment as it is.
And what it refuses, naming itself: ``act``'s shape error named ``q_values``, and the
``(obs, info)`` pair of ``env.reset()`` given as obs (a common slip) was NumPy's
"setting an array element with a sequence. The requested array has an inhomogeneous
shape..." without a word of what to give."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from deep_runs import TINY

from maxminq.deep import TrainConfig, load_agent, run_training


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    out = tmp_path_factory.mktemp("act") / "run"
    run_training(TrainConfig(**TINY, agent="dqn"), out, progress=False)
    return load_agent(out)


def test_one_observation_gives_an_int_a_batch_an_int64_array(agent) -> None:
    env = agent.config.make_env()
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for eps in (0.0, 1.0):  # the greedy and the random branch
        action = agent.act(obs, eps=eps, rng=rng)
        assert type(action) is int and env.action_space.contains(action)
        for batch in (obs[None], np.stack([obs] * 3), np.zeros((0, *obs.shape), np.float32)):
            actions = agent.act(batch, eps=eps, rng=rng)
            assert isinstance(actions, np.ndarray)
            assert actions.dtype == np.int64 and actions.shape == (len(batch),)
    greedy = int(np.argmax(agent.q_values(obs)))  # ties to the lowest action, as np.argmax
    assert agent.act(obs) == greedy and agent.act(np.stack([obs] * 2)).tolist() == [greedy] * 2
    envs = gym.vector.SyncVectorEnv([agent.config.make_env for _ in range(3)])
    observations, _ = envs.reset(seed=0)
    actions = agent.act(observations)
    assert envs.action_space.contains(actions)
    envs.step(actions)
    envs.close()
    env.close()


def test_what_act_refuses_it_says_in_its_own_name(agent) -> None:
    env = agent.config.make_env()
    pair = env.reset(seed=0)
    for method in (agent.act, agent.q_values):
        name = method.__name__
        with pytest.raises(ValueError) as info:
            method(pair)
        assert str(info.value) == (
            f"{name}: obs is the (observation, info) pair env.reset() returns; give the "
            "observation: obs, info = env.reset(...)"
        )
        with pytest.raises(ValueError) as info:
            method(np.zeros(5))
        assert str(info.value) == (
            f"{name}: obs has shape (5,); expected (4,) (one observation) or (B, 4) (a batch)"
        )
        with pytest.raises(ValueError) as info:
            method({"position": pair[0]})
        assert str(info.value).startswith(f"{name}: obs is not an array of numbers (")
        assert str(info.value).endswith(
            "); expected shape (4,) (one observation) or (B, 4) (a batch)"
        )
        with pytest.raises(ValueError) as info:
            method([pair[0], pair[0][:2]])  # rows of other lengths
        assert str(info.value).startswith(f"{name}: obs is not an array of numbers (")
        assert "\n" not in str(info.value)
    env.close()
