"""The deep bias probes, checked from outside the learner: each probe's estimate is the
target side's value of (s, a) for its agent, computed here from each target network as an
ordinary ``nn.Module`` (min over the N target nets for Maxmin, mean for Ensemble and over
the K snapshots for Averaged, the target net for DQN and Double DQN); each probe's return is
the discounted return at the run's gamma from the rewards the environment paid, worked out
by hand; an episode the environment cuts itself (``truncated=True``, no time limit) keeps
only the probes at least ``bias_horizon(gamma)`` steps before the cut, with the return up to
the cut, flagged not terminated.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from deep_runs import _small

from maxminq.deep.config import EnvWarning
from maxminq.deep.train import Trainer

ENV_ID = "mmq-test/S26RewardSteps-v0"
TERMINATES_AT, CUT_AT = 5, 9  # episodes alternate: terminated after 5 steps, cut after 9


class RewardStepsEnv(gym.Env):
    """Reward t + 1 on step t (t = 0, 1, ...) whatever the action; episodes alternate
    between terminating after 5 steps and being cut by the environment itself after 9
    (``truncated=True``); the observation is the step, one-hot."""

    observation_space = gym.spaces.Box(0.0, 1.0, (10,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self) -> None:
        self.episodes = 0

    def _obs(self) -> np.ndarray:
        return np.eye(10, dtype=np.float32)[self.t]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episodes += 1
        self.t = 0
        self.length = TERMINATES_AT if self.episodes % 2 else CUT_AT
        return self._obs(), {}

    def step(self, action):
        reward = float(self.t + 1)
        self.t += 1
        end = self.t == self.length
        return (
            self._obs(),
            reward,
            end and self.length == TERMINATES_AT,
            end and self.length == CUT_AT,
            {},
        )


if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point=RewardStepsEnv)


def _by_hand(agent: str, q: torch.Tensor) -> float:
    """The target side's estimate from the target nets' values of the probed action."""
    return float(
        {"maxmin-dqn": q.min(), "ensemble-dqn": q.mean(), "averaged-dqn": q.mean()}.get(agent, q[0])
    )


def _trained(agent: str, n: int, gamma: float) -> tuple[Trainer, list[float]]:
    """A short run probing every 2 steps, each probe's estimate checked as it is taken."""
    cfg = _small(env_id=ENV_ID, agent=agent, n=n, gamma=gamma, steps=160, learning_starts=40,
                 bias_probe_every=2, bias_every=40, target_update=20, seeds=[0, 1], hidden=8,
                 save_probes=True, eval_episodes=1).resolve()  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EnvWarning)  # no time limit: it cuts its own
        tr = Trainer(cfg)
    probed = tr.learner.estimate
    checked: list[float] = []

    def estimate(obs, action, seeds=None):
        got = probed(obs, action, seeds)
        nets = tr.learner.target.to_modules()  # seed s's target nets: s * K .. s * K + K - 1
        k = tr.learner.n_target
        for s in range(tr.S):
            with torch.no_grad():
                q = torch.stack([nets[s * k + i](obs[s : s + 1])[0, int(action[s])]
                                 for i in range(k)])  # fmt: skip
            assert float(got[s]) == pytest.approx(_by_hand(agent, q), abs=1e-5)
            checked.append(float(got[s]))
        return got

    tr.learner.estimate = estimate
    while tr.step < cfg.steps:
        tr.train_step()
    return tr, checked


def _return_from(t: int, length: int, gamma: float) -> float:
    """sum_{k=t}^{length-1} gamma^(k-t) (k + 1): the rewards from step t to the episode's end."""
    return sum(gamma ** (k - t) * (k + 1) for k in range(t, length))


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    ("agent", "n"),
    [("dqn", 1), ("ddqn", 1), ("maxmin-dqn", 3), ("ensemble-dqn", 3), ("averaged-dqn", 3)],
)
def test_each_probe_is_the_target_estimate_against_the_discounted_return(agent, n) -> None:
    gamma = 0.6  # bias_horizon 6: 0.6^5 = 0.078 > 0.05 >= 0.6^6 = 0.047
    tr, checked = _trained(agent, n, gamma)
    try:
        probes = tr.tables()["probes"]
    finally:
        tr.close()
    assert len(checked) > 100  # 60 probe steps x 2 seeds
    done, cut = probes[probes["terminated"]], probes[~probes["terminated"]]
    assert len(done) > 10 and len(cut) > 5
    # an episode's length tells how it ended: 5 steps terminated, 9 cut
    assert set(done["end_step"] - done["step"] + done["episode_step"]) <= {TERMINATES_AT}
    assert set(cut["end_step"] - cut["step"] + cut["episode_step"]) == {CUT_AT}
    # a cut episode's probes count only 6+ steps before the cut: episode steps 0 .. 3
    assert cut["episode_step"].max() <= CUT_AT - 6 and (cut["end_step"] - cut["step"] >= 6).all()
    columns = (probes["episode_step"], probes["terminated"], probes["return"])
    for t, terminated, ret in zip(*columns, strict=True):
        length = TERMINATES_AT if terminated else CUT_AT
        assert ret == pytest.approx(_return_from(int(t), length, gamma), rel=1e-12)
    assert (probes["bias"] == probes["estimate"] - probes["return"]).all()
    # every checked estimate that was scored is in the table (the others: dropped probes)
    assert set(probes["estimate"]) <= set(np.float64(checked))
