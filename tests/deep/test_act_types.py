"""What ``TrainedAgent.act`` returns, as docs/deep-agents.md says: a Python int for one
observation (what ``env.step`` takes), an int64 array of shape (B,) for a batch of B,
empty too, greedy or eps-greedy, and it plays a Gymnasium vector environment as it is."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from deep_runs import TINY

from maxminq.deep import TrainConfig, load_agent, run_training


def test_one_observation_gives_an_int_a_batch_an_int64_array(tmp_path) -> None:
    run_training(TrainConfig(**TINY, agent="dqn"), tmp_path / "run", progress=False)
    agent = load_agent(tmp_path / "run")
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
