"""The deep agents' RL logic: invariances that hold whatever the numbers are, checked between
independent configurations of the real code.

- A seed's one-observation Q-values (acting, bias probes, test episodes) are the same
  bitwise whatever its position among other seeds, also for MinAtar's 6 actions, whose
  batched one-row product rounded by position (fixed in ``nets.linear``).
- Agents that must coincide do: Maxmin / Ensemble / Averaged DQN with one net are DQN, and
  Double DQN with the target synced every step is DQN (its online argmax is then the
  target's).
- ``--update-members`` > 1 keeps a seed's run independent of the other seeds.
- RMSprop / Adam eps = 0 is refused (0 / 0 where a gradient is zero: every seed NaN).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest
import torch

from maxminq.deep.agents import Learner
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.run_folder import TABLE_COLUMNS
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import UsageError

MINATAR = (4, 10, 10)  # Breakout's / Asterix's channels; every MinAtar game has 6 actions


def _stack_values(network: str, shape, n_actions: int, n: int, seeds: int, pos: int, seed: int):
    """Q-values (n, 1, A) of the seed at ``pos`` among ``seeds`` seeds, one observation
    per seed, from the stacked forward that acting and probing use."""
    net = build_net(network, seeds * n, shape, n_actions)
    gens = [torch.Generator().manual_seed(seed if s == pos else 1000 + s) for s in range(seeds)]
    net.init_members(gens, n)
    with torch.no_grad():
        for p in net.params:
            p.mul_(3.0)  # weights of a trained size, not only the initial scale
    x = torch.zeros((seeds, 1, *shape))
    x[pos] = (torch.rand((1, *shape), generator=torch.Generator().manual_seed(seed)) < 0.3).float()
    with torch.no_grad():
        return net.forward_shared(x, n)[pos * n : (pos + 1) * n]


def _cartpole(agent: str, n: int, **kw) -> TrainConfig:
    base = dict(
        env_id="CartPole-v1", agent=agent, n=n, lr=1e-3, steps=500, seeds=[4, 7],
        eval_episodes=2, bias_every=250, learning_starts=100, checkpoint_every=0,
        target_update=50, buffer_size=300, batch_size=16, eps_decay_steps=100,
        max_episode_steps=60,
    )  # fmt: skip
    base.update(kw)
    return TrainConfig(**base)  # type: ignore[arg-type]


def _train(cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor, dict[str, list]]:
    tr = Trainer(cfg.resolve())
    while tr.step < tr.cfg.steps:
        tr.train_step()
    tr.evaluate()
    rows = {k: [r[:-1] if k == "metrics" else r for r in v] for k, v in tr.rows.items()}
    out = (tr.learner.online.flat.clone(), tr.learner.target.flat.clone(), rows)
    tr.close()
    return out  # metrics rows without the wall-clock steps_per_s


@pytest.mark.parametrize(
    "network,shape,n_actions",
    [("minatar_cnn", MINATAR, 6), ("minatar_cnn", (10, 10, 10), 6), ("mlp", (8,), 7)],
)
@pytest.mark.parametrize("n", [1, 3])
def test_one_observation_values_do_not_depend_on_the_seeds_position(
    network: str, shape, n_actions: int, n: int
) -> None:
    """Before the fix, a 6-action MinAtar seed at position 1 of 2 got Q-values one float
    ulp away from its values alone (so its bias probes differed, and an argmax could flip)."""
    for seed in range(3):
        alone = _stack_values(network, shape, n_actions, n, 1, 0, seed)
        for seeds, pos in ((2, 1), (3, 1), (4, 3), (5, 2)):
            among = _stack_values(network, shape, n_actions, n, seeds, pos, seed)
            assert torch.equal(alone, among), (seeds, pos, seed)


@pytest.mark.parametrize("agent,n", [("maxmin-dqn", 3), ("ddqn", 1), ("averaged-dqn", 2)])
def test_minatar_probe_and_greedy_values_of_a_seed_are_its_values_alone(agent: str, n: int):
    """The learner's target-side estimate (the bias probe) and behaviour values of one seed,
    with 6 actions, are bitwise those of a learner of that seed alone."""
    gen = torch.Generator().manual_seed(5)
    obs = (torch.rand((3, *MINATAR), generator=gen) < 0.3).float()
    action = torch.tensor([4, 5, 1])

    def learner(seeds: list[int]) -> Learner:
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        lr = Learner(agent, n, gens, "minatar_cnn", MINATAR, 6, "rmsprop", 1e-3)
        with torch.no_grad():
            lr.online.flat.mul_(3.0)
            lr.target.flat.copy_(lr.target.flat * 3.0 + 0.01)  # target differs from online
        return lr

    many = learner([7, 8, 9])
    est, greedy = many.estimate(obs, action), many.greedy_values(obs)
    for pos, seed in enumerate([7, 8, 9]):
        one = learner([seed])
        assert torch.equal(one.estimate(obs[pos : pos + 1], action[pos : pos + 1])[0], est[pos])
        assert torch.equal(one.greedy_values(obs[pos : pos + 1])[0], greedy[pos])


@pytest.mark.parametrize(
    "agent,n,period",
    [("maxmin-dqn", 1, 50), ("ensemble-dqn", 1, 50), ("averaged-dqn", 1, 50), ("ddqn", 1, 1)],
)
def test_agents_that_must_coincide_with_dqn_do(agent: str, n: int, period: int) -> None:
    """min / mean over one net is that net, one snapshot refreshed every C steps is DQN's
    target, and Double DQN's online argmax is the target's when the target is synced every
    step: whole runs (weights, episodes, bias probes, tests) are DQN's bitwise."""
    online, target, rows = _train(_cartpole(agent, n, target_update=period))
    d_online, d_target, d_rows = _train(_cartpole("dqn", 1, target_update=period))
    assert torch.equal(online, d_online) and torch.equal(target, d_target)
    assert rows == d_rows
    bias_mean = TABLE_COLUMNS["metrics"].index("bias_mean")  # by name, not a position
    assert len(rows["episodes"]) > 10 and not np.isnan(rows["metrics"][-1][bias_mean])


def test_ddqn_differs_from_dqn_when_the_target_lags() -> None:
    """The check above means something: with C = 50 Double DQN is not DQN."""
    assert not torch.equal(_train(_cartpole("ddqn", 1))[0], _train(_cartpole("dqn", 1))[0])


def test_update_members_runs_do_not_depend_on_other_seeds(tmp_path: pathlib.Path) -> None:
    """Each member's own mini-batch and the member subset come from the seed's generator
    (drawn between the blocks of per-step uniforms): alone or among others, the same run."""
    kw = dict(agent="maxmin-dqn", n=3, update_members=2, steps=400, bias_every=200)
    alone = run_training(_cartpole(seeds=[0], **kw), tmp_path / "alone", progress=False)
    among = run_training(_cartpole(seeds=[7, 0], **kw), tmp_path / "among", progress=False)
    for name in ("episodes", "tests", "metrics", "runs"):
        a, b = (
            t[name][t[name]["seed"] == 0].drop(columns=["steps_per_s"], errors="ignore")
            for t in (alone, among)
        )
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    assert len(alone["episodes"]) > 5


@pytest.mark.parametrize("optimizer", ["rmsprop", "centered_rmsprop", "adam"])
def test_optimizer_eps_zero_is_refused(optimizer: str) -> None:
    """torch accepts eps = 0, and its first update turns every seed NaN (0 / 0 where a
    gradient is zero): before this check every seed was recorded as diverged."""
    cfg = _cartpole("dqn", 1, optimizer=optimizer, optimizer_kwargs={"eps": 0})
    with pytest.raises(UsageError, match=r"--optimizer-kwargs: .*eps must be > 0"):
        cfg.resolve()
    cfg = _cartpole("dqn", 1, optimizer=optimizer, optimizer_kwargs={"eps": 1e-30})
    assert cfg.resolve().optimizer_kwargs["eps"] == 1e-30  # tiny but positive: allowed
