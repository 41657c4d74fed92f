"""Paper fidelity of the deep agents: what ``maxminq train`` does with its defaults, pinned
against the paper's text.

Every expected value is transcribed by hand from one of these sources (cited at each
assertion), never read from maxminq:

* the paper: Lan et al., "Maxmin Q-learning", ICLR 2020 -- Algorithm 1, Sec. 5 "Results on
  Benchmark Environments" (the deep settings) and Sec. 6 (the G of Averaged Q-learning);
* MinAtar's DQN (Young and Tian 2019), whose hyper-parameters and network the paper reuses
  for MinAtar ("we reused the hyper-parameters and settings of neural networks in Young and
  Tian", Sec. 5);
* the authors' public code as of the paper (qlan3/Explorer, commit 55171d5, Sep. 2019):
  ``agents/MaxminDQN.py``, ``agents/AveragedDQN.py``, ``agents/DDQN.py``,
  ``agents/VanillaDQN.py``, ``components/replay.py`` and ``configs/*.json``;
* the PLE games' and MinAtar's sources, as summarised in the project's reference notes.

The registry's numbers themselves (sweeps, lengths, caps, best settings) are pinned in
``tests/envs/test_paper_settings.py``; this file checks that the agents, the training loop, the
optimisers and the environments *behave* as those settings say.
"""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from maxminq.deep.agents import Learner
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.optim import MemberOptimizer, member_grad_norm_clip
from maxminq.deep.train import Trainer, run_training
from maxminq.envs import make

CATCHER = "maxminq/Catcher-v0"


PIXELCOPTER = "maxminq/Pixelcopter-v0"


BREAKOUT = "maxminq/MinAtar-Breakout-v0"


def _learner(agent: str, n: int, seed: int = 0, **kw) -> Learner:
    """A one-seed learner on Catcher-sized inputs (4 features, 3 actions)."""
    return Learner(
        agent, n, [torch.Generator().manual_seed(seed)], "mlp", (4,), 3, "rmsprop", 1e-3, **kw
    )


def _outputs(modules: list[nn.Module], x: torch.Tensor) -> torch.Tensor:
    """Q-values (members, B, A) of plain ``nn.Module`` copies of the nets."""
    with torch.no_grad():
        return torch.stack([m(x) for m in modules])


def _shake_targets(learner: Learner, seed: int = 1) -> None:
    """Move the target nets away from the online nets, so a value that reads the wrong
    stack gives another number."""
    g = torch.Generator().manual_seed(seed)
    learner.target.flat.add_(0.3 * torch.randn(learner.target.flat.shape, generator=g))


def _maxmin_trainer(**kw) -> Trainer:
    """Maxmin DQN, N = 4, on the paper's Catcher with its registry settings, shortened."""
    options = dict(
        env_id=CATCHER,
        agent="maxmin-dqn",
        n=4,
        lr=3e-4,
        steps=10_000,
        learning_starts=50,
        eval_episodes=0,
        checkpoint_every=0,
    )
    options.update(kw)
    return Trainer(TrainConfig(**options).resolve())


def _rmsprop_steps(optimizer: str, kwargs: dict, torch_kwargs: dict) -> None:
    """Our per-member optimiser with a run's resolved options vs torch.optim.RMSprop built
    with the literal options of the source, on the same 25 gradients."""
    g = torch.Generator().manual_seed(7)
    p0 = torch.randn(1, 50, generator=g)
    ours = p0.clone()
    opt = MemberOptimizer(ours, optimizer, 1e-3, **kwargs)
    ref = nn.Parameter(p0[0].clone())
    ref_opt = torch.optim.RMSprop([ref], lr=1e-3, **torch_kwargs)
    for _ in range(25):
        grad = torch.randn(1, 50, generator=g)
        opt.step(None, grad.clone())
        ref.grad = grad[0].clone()
        ref_opt.step()
    torch.testing.assert_close(ours[0], ref.detach(), rtol=1e-5, atol=1e-6)


def _grads_in_flat_order(module: nn.Module) -> list[torch.Tensor]:
    """The module's parameter gradients in the stack's flat layout (a linear weight is
    stored (in, out), the transpose of ``nn.Linear``'s)."""
    out = []
    for layer in module:
        if isinstance(layer, nn.Linear):
            out += [layer.weight.grad.t(), layer.bias.grad]
        elif isinstance(layer, nn.Conv2d):
            out += [layer.weight.grad, layer.bias.grad]
    return out


# MinAtar: 10 x 10 x C states (asterix 4, breakout 4, seaquest 10, space_invaders 6, freeway
# 7), all 6 actions (the v0 set, used by MinAtar's DQN), sticky_action_prob 0.1 and
# difficulty_ramping True by default; the authors' code caps Seaquest at 10,000 steps only.
MINATAR = {"Asterix": 4, "Breakout": 4, "Seaquest": 10, "SpaceInvaders": 6, "Freeway": 7}


def test_maxmin_acts_on_the_min_over_its_n_online_nets() -> None:
    """Algorithm 1: "Q^min(s, a) <- min_k Q^k(s, a) for all a; choose action a by
    eps-greedy based on Q^min" -- the online nets, not the target nets (authors' code:
    ``MaxminDQN.get_action_selection_q_values`` takes the min over ``Q_net``)."""
    learner = _learner("maxmin-dqn", 3)
    _shake_targets(learner)
    obs = torch.randn(7, 4, generator=torch.Generator().manual_seed(2))
    online = _outputs(learner.online.to_modules(), obs)  # (3, 7, 3)
    target = _outputs(learner.target.to_modules(), obs)
    got = torch.stack([learner.greedy_values(o[None])[0] for o in obs])
    torch.testing.assert_close(got, online.min(0).values, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(got, target.min(0).values, atol=1e-3)
    # The min over N nets is not any one of them: each net is the minimum somewhere.
    assert len(set(online.argmin(0).flatten().tolist())) == 3


def test_maxmin_target_is_max_over_actions_of_the_min_over_the_n_target_nets() -> None:
    """Algorithm 1: Y^MQ = r + gamma max_a' Q^min(s', a'); with target networks (Sec. 4:
    "maintaining a target network for each estimator"), Q^min is the min over the N
    *target* nets (authors' code: ``MaxminDQN.compute_q_target``)."""
    learner = _learner("maxmin-dqn", 4)
    _shake_targets(learner)
    next_obs = torch.randn(1, 16, 4, generator=torch.Generator().manual_seed(3))
    target = _outputs(learner.target.to_modules(), next_obs[0])  # (4, 16, 3)
    want = target.min(0).values.max(-1).values
    torch.testing.assert_close(learner.bootstrap(next_obs)[0], want, rtol=1e-5, atol=1e-6)
    online = _outputs(learner.online.to_modules(), next_obs[0])
    assert not torch.allclose(want, online.min(0).values.max(-1).values, atol=1e-3)


def test_maxmin_updates_one_uniformly_chosen_net_per_step() -> None:
    """Algorithm 1: "Select a subset S ... (e.g., randomly select one i to update)"; Sec. 5:
    "we randomly chose one action-value function to update at each step" and "we simply do
    one update per step". Nothing learns before the random steps end (authors' code:
    ``time_to_learn`` waits for ``exploration_steps``)."""
    tr = _maxmin_trainer(target_update=10**6)
    chosen = []
    for _ in range(450):
        before = tr.learner.online.flat.clone()
        learning = tr.step >= tr.cfg.learning_starts
        tr.train_step()
        changed = (tr.learner.online.flat != before).any(1).nonzero().flatten().tolist()
        assert len(changed) == (1 if learning else 0), tr.step
        chosen += changed
    tr.close()
    counts = np.bincount(chosen, minlength=4)
    # 400 uniform draws over 4 nets: 100 each, sd 8.7; 40 off is 4.6 sd.
    assert len(chosen) == 400 and counts.min() > 60 and counts.max() < 140, counts


def test_all_n_target_nets_are_copied_together_every_c_steps() -> None:
    """Sec. 5: "The target network was updated every 200 frames" (here C = 25 to see it
    often); for Maxmin every target net at once (authors' code: ``MaxminDQN.learn`` loads
    all ``Q_net_target[i]`` from ``Q_net[i]``), in between they stay frozen."""
    c = 25
    tr = _maxmin_trainer(target_update=c)
    assert torch.equal(tr.learner.target.flat, tr.learner.online.flat)  # start as copies
    synced = 0
    for _ in range(200):
        before = tr.learner.target.flat.clone()
        tr.train_step()
        if tr.step % c == 0:
            assert torch.equal(tr.learner.target.flat, tr.learner.online.flat), tr.step
            synced += tr.step > tr.cfg.learning_starts  # online nets had moved since
        else:
            assert torch.equal(tr.learner.target.flat, before), tr.step
    tr.close()
    assert synced == 6  # steps 75, 100, ..., 200


def test_averaged_dqn_bootstraps_from_the_mean_of_its_last_k_snapshots() -> None:
    """Sec. 6: Averaged Q-learning is Generalized Q-learning with N = 1 and G = max_a
    (1/K) sum_j Q(s', a; t - j) over K earlier versions of its one estimator (Anschel et
    al. 2017); authors' code (``AveragedDQN``): K target nets, each refresh copies the
    online net into the next one round-robin, the target is the max of their mean; the
    agent acts on its online net (``VanillaDQN.get_action_selection_q_values``)."""
    k = 3
    learner = _learner("averaged-dqn", k)
    g = torch.Generator().manual_seed(4)
    versions = [learner.online.flat.clone()]
    for _ in range(4):  # four refreshes: the last three versions remain
        learner.online.flat.add_(0.3 * torch.randn(learner.online.flat.shape, generator=g))
        learner.sync_targets()
        versions.append(learner.online.flat.clone())
    snapshot = build_net("mlp", 1, (4,), 3)
    x = torch.randn(1, 10, 4, generator=torch.Generator().manual_seed(5))
    values = []
    for v in versions[-k:]:
        snapshot.flat.copy_(v)
        values.append(_outputs(snapshot.to_modules(), x[0])[0])
    want = torch.stack(values).mean(0).max(-1).values
    torch.testing.assert_close(learner.bootstrap(x)[0], want, rtol=1e-5, atol=1e-6)
    # Not the newest version alone (DQN), nor a mean that still holds the oldest two.
    assert not torch.allclose(want, values[-1].max(-1).values, atol=1e-3)
    acting = _outputs(learner.online.to_modules(), x[0])[0]
    torch.testing.assert_close(learner.greedy_values(x[0, :1])[0], acting[0], rtol=1e-5, atol=1e-6)


def test_double_dqn_selects_with_the_online_net_and_evaluates_with_the_target() -> None:
    """Double DQN (van Hasselt et al. 2016; authors' ``DDQN.compute_q_target``):
    G = Q_target(s', argmax_a Q_online(s', a)). DQN: G = max_a Q_target(s', a)."""
    x = torch.randn(1, 32, 4, generator=torch.Generator().manual_seed(6))
    ddqn = _learner("ddqn", 1)
    _shake_targets(ddqn)
    online = _outputs(ddqn.online.to_modules(), x[0])[0]
    target = _outputs(ddqn.target.to_modules(), x[0])[0]
    want = target.gather(1, online.argmax(1, keepdim=True))[:, 0]
    torch.testing.assert_close(ddqn.bootstrap(x)[0], want, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(want, target.max(1).values)  # the selection matters here
    dqn = _learner("dqn", 1)
    _shake_targets(dqn)
    target = _outputs(dqn.target.to_modules(), x[0])[0]
    torch.testing.assert_close(dqn.bootstrap(x)[0], target.max(1).values, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("agent", ["maxmin-dqn", "averaged-dqn", "ensemble-dqn"])
def test_one_estimator_is_dqn(agent: str) -> None:
    """Sec. 4: "For N = 1, the update is simply Q-learning"; Sec. 6: Generalized Q-learning
    "can be reduced to Q-learning simply by setting K = 1, N = 1" (Averaged with K = 1,
    Ensemble with N = 1 alike). With one estimator each agent trains exactly as DQN: the
    same networks and the same episodes, step for step."""

    def train(name: str) -> tuple[torch.Tensor, list]:
        options = dict(lr=3e-4, steps=900, learning_starts=200, target_update=100)
        tr = _maxmin_trainer(agent=name, n=1, **options)
        while tr.step < 900:
            tr.train_step()
        tr.close()
        return tr.learner.online.flat.clone(), tr.rows["episodes"]

    net, episodes = train(agent)
    dqn_net, dqn_episodes = train("dqn")
    assert torch.equal(net, dqn_net) and episodes == dqn_episodes and len(episodes) > 3


def test_epsilon_on_the_feature_environments() -> None:
    """Sec. 5: eps "decreasing linearly from 1.0 to 0.01 in 1,000 steps ... then fixed to
    0.01"; the authors' code acts purely at random for its first 1,000 steps
    (``exploration_steps``). maxminq starts the 1,000-step decay when those random steps
    end (README, "Deviations from the paper": eps reaches 0.01 at step 2,000)."""
    tr = Trainer(TrainConfig(env_id=CATCHER, agent="dqn").resolve())
    eps = tr.epsilon
    tr.close()
    assert [eps(t) for t in (0, 500, 999, 1000)] == [1.0, 1.0, 1.0, 1.0]
    assert eps(1500) == pytest.approx(1.0 + (0.01 - 1.0) * 0.5)
    assert [eps(t) for t in (2000, 2001, 3_499_999)] == [0.01, 0.01, 0.01]


def test_epsilon_on_minatar_is_minatar_dqns() -> None:
    """MinAtar's DQN (reused by the paper): 5,000 random frames, then eps falls linearly
    from 1.0 to 0.1 over 100,000 frames, then stays at 0.1."""
    tr = Trainer(TrainConfig(env_id=BREAKOUT, agent="dqn").resolve())
    eps = tr.epsilon
    tr.close()
    assert [eps(t) for t in (0, 4999, 5000)] == [1.0, 1.0, 1.0]
    assert eps(5000 + 50_000) == pytest.approx(1.0 + (0.1 - 1.0) * 0.5)
    assert [eps(t) for t in (105_000, 4_999_999)] == [0.1, 0.1]


@pytest.mark.parametrize(("env_id", "random_steps"), [(CATCHER, 1000), (BREAKOUT, 5000)])
def test_learning_starts_after_the_random_steps_with_one_update_per_step(
    env_id: str, random_steps: int
) -> None:
    """Learning starts after 1,000 purely random steps on the feature environments and
    5,000 on MinAtar (authors' code ``exploration_steps``; MinAtar's DQN's replay start),
    then one gradient step per environment step (Sec. 5: "we simply do one update per
    step"; MinAtar's DQN: one update per frame)."""
    tr = Trainer(TrainConfig(env_id=env_id, agent="dqn", eval_episodes=0).resolve())
    start = tr.learner.online.flat.clone()
    while tr.step < random_steps:
        tr.train_step()
    assert torch.equal(tr.learner.online.flat, start)
    assert int(tr.learner.opt.step_count.sum()) == 0
    for _ in range(30):
        tr.train_step()
    tr.close()
    assert not torch.equal(tr.learner.online.flat, start)
    assert int(tr.learner.opt.step_count.sum()) == 30


def test_replay_is_sampled_uniformly_with_replacement() -> None:
    """Authors' code (``components/replay.py``, ``Replay.sample``): batch_size indices, each
    ``np.random.randint(0, len(memory))``: uniform over what is stored, with replacement."""
    tr = _maxmin_trainer(n=1, agent="dqn", learning_starts=40, buffer_size=64)
    real_gather, batches = tr.replay.gather, []

    def gather(live: np.ndarray, idx: np.ndarray):  # a spy: the real gather still runs
        batches.append((tr.replay.size, idx.copy()))
        return real_gather(live, idx)

    tr.replay.gather = gather
    for _ in range(640):
        tr.train_step()
    tr.close()
    assert len(batches) == 600 and all(idx.shape == (1, 32) for _, idx in batches)
    assert all(idx.min() >= 0 and idx.max() < size for size, idx in batches)
    # From the first 24 (41..64 stored) a batch of 32 must repeat one; without
    # replacement none would.
    assert all(len(set(idx[0].tolist())) < 32 for _, idx in batches[:24])
    # Full buffer (64 slots): 576 batches x 32 = 18,432 draws, 288 per slot, sd about 17.
    counts = np.bincount(np.concatenate([idx[0] for _, idx in batches[24:]]), minlength=64)
    assert counts.min() > 200 and counts.max() < 380, counts


def test_the_test_protocol_is_100_episodes_at_eps_001_on_the_min_over_the_online_nets() -> None:
    """Sec. 5: "each algorithm was tested by running 100 test episodes with eps-greedy
    where eps = 0.01" after training; the authors' code tests greedy on the same Q^min the
    behaviour uses (``get_action_selection_q_values``)."""
    cfg = TrainConfig(
        env_id=PIXELCOPTER, agent="maxmin-dqn", n=3, lr=3e-4, steps=1100, checkpoint_every=0
    ).resolve()
    assert (cfg.eval_episodes, cfg.eval_eps) == (100, 0.01)
    tr = Trainer(cfg)
    while tr.step < cfg.steps:
        tr.train_step()
    tr.evaluate()
    tests = tr.tables()["tests"]
    assert len(tests) == 100 and tests["episode"].tolist() == list(range(1, 101))

    # With eps = 0, every test action is argmax_a min_i Q^i(s, a) of the online nets.
    seen: list[tuple[np.ndarray, int]] = []

    class Record(gym.Wrapper):
        def step(self, action):  # the real environment steps; only the pair is noted
            seen.append((self._obs, int(action)))
            out = self.env.step(action)
            self._obs = out[0]
            return out

        def reset(self, **kw):
            out = self.env.reset(**kw)
            self._obs = out[0]
            return out

    tr.cfg.eval_eps = 0.0
    envs = [Record(cfg.make_env())]
    tr.play_episodes(envs, [np.random.default_rng(0)], 5)
    tr.close()
    obs = torch.as_tensor(np.array([o for o, _ in seen]), dtype=torch.float32)
    q_min = _outputs(tr.learner.online.to_modules(), obs).min(0).values
    assert len(seen) >= 5 and [a for _, a in seen] == q_min.argmax(1).tolist()


def test_minatar_optimizer_is_minatar_dqns_centered_rmsprop() -> None:
    """MinAtar's DQN: RMSprop(alpha = 0.95, centered = True, eps = 0.01); the authors'
    ``configs/minatar.json`` passes the same ({"alpha": 0.95, "centered": true, "eps": 0.01})."""
    cfg = TrainConfig(env_id=BREAKOUT, agent="dqn").resolve()
    _rmsprop_steps(
        cfg.optimizer, cfg.optimizer_kwargs, {"alpha": 0.95, "eps": 0.01, "centered": True}
    )


@pytest.mark.parametrize("env_id", [CATCHER, PIXELCOPTER, "LunarLander-v3"])
def test_feature_env_optimizer_is_torchs_rmsprop_with_its_defaults(env_id: str) -> None:
    """Sec. 5: "optimized by RMSprop"; the authors' ``configs/catcher.json`` (and copter,
    lunar) give ``"kwargs": {"lr": ...}`` only: torch's defaults for everything else."""
    cfg = TrainConfig(env_id=env_id, agent="dqn").resolve()
    _rmsprop_steps(cfg.optimizer, cfg.optimizer_kwargs, {})


def test_gradient_clip_5_bounds_each_networks_norm_on_its_own() -> None:
    """Sec. 5: "RMSprop with gradient clip 5"; authors' code: ``clip_grad_norm_(Q_net[i]
    .parameters(), 5)`` per network -- a large gradient of one Maxmin net does not shrink
    another's."""
    assert TrainConfig(env_id=CATCHER, agent="maxmin-dqn").resolve().grad_clip == 5.0
    assert TrainConfig(env_id=BREAKOUT, agent="dqn").resolve().grad_clip is None  # MinAtar
    g = torch.Generator().manual_seed(8)
    grads = torch.randn(2, 40, generator=g)
    grads[0] *= 10.0 / grads[0].norm()  # above the bound
    grads[1] *= 2.0 / grads[1].norm()  # below it
    want = []
    for row in grads:
        p = nn.Parameter(torch.zeros(40))
        p.grad = row.clone()
        nn.utils.clip_grad_norm_([p], 5.0)
        want.append(p.grad)
    ours = grads.clone()
    member_grad_norm_clip(ours, 5.0)
    torch.testing.assert_close(ours, torch.stack(want))
    assert ours[0].norm() == pytest.approx(5.0, rel=1e-5) and torch.equal(ours[1], grads[1])


@pytest.mark.parametrize(
    ("env_id", "obs_shape", "torch_loss"),
    [
        (CATCHER, (4,), nn.functional.mse_loss),  # authors' feature configs: "MSELoss"
        (BREAKOUT, (4, 10, 10), nn.functional.smooth_l1_loss),  # MinAtar DQN: Huber
    ],
)
def test_the_loss_is_the_one_of_the_source(env_id: str, obs_shape: tuple, torch_loss) -> None:
    """MSE on the feature environments (authors' configs: ``"loss": ["MSELoss"]``), Huber
    (``SmoothL1Loss``, beta 1) on MinAtar (MinAtar's DQN; authors' ``configs/minatar.json``);
    mean over the mini-batch. Loss and gradient against autograd on ``nn.Module`` copies."""
    cfg = TrainConfig(env_id=env_id, agent="dqn").resolve()
    net = build_net(cfg.network, 1, obs_shape, 6 if len(obs_shape) == 3 else 3, cfg.hidden)
    net.init_members([torch.Generator().manual_seed(9)], 1)
    g = torch.Generator().manual_seed(10)
    x = (torch.rand(1, 32, *obs_shape, generator=g) < 0.3).float()
    action = torch.randint(0, net.n_actions, (1, 32), generator=g)
    y = 3.0 * torch.randn(1, 32, generator=g)  # errors both below and above 1 (Huber's kink)
    loss, _, grad = net.loss_and_grad(net.flat, x, action, y, cfg.loss)
    module = net.to_modules()[0]
    q = module(x[0]).gather(1, action[0][:, None])[:, 0]
    want = torch_loss(q, y[0])
    want.backward()
    want_grad = torch.cat([g.reshape(-1) for g in _grads_in_flat_order(module)])
    torch.testing.assert_close(loss[0], want.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grad[0], want_grad, rtol=1e-4, atol=1e-6)


def test_networks_are_the_papers() -> None:
    """Sec. 5: feature environments use "a multi-layer perceptron with hidden layers fixed
    to [64, 64]" (ReLU between, as the authors' ``MLP``); MinAtar's DQN: one conv layer of
    16 3x3 filters, stride 1, ReLU, a fully connected layer of 128 ReLU units, one linear
    output per action (10 x 10 input: 16 * 8 * 8 = 1,024 features)."""
    cfg = TrainConfig(env_id=CATCHER, agent="dqn").resolve()
    mlp = build_net(cfg.network, 1, (4,), 3, cfg.hidden).to_modules()[0]
    linear = [(m.in_features, m.out_features) for m in mlp if isinstance(m, nn.Linear)]
    assert linear == [(4, 64), (64, 64), (64, 3)]
    assert sum(isinstance(m, nn.ReLU) for m in mlp) == 2
    cfg = TrainConfig(env_id=BREAKOUT, agent="dqn").resolve()
    cnn = build_net(cfg.network, 1, (4, 10, 10), 6, cfg.hidden).to_modules()[0]
    (conv,) = [m for m in cnn if isinstance(m, nn.Conv2d)]
    assert (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride) == (
        4,
        16,
        (3, 3),
        (1, 1),
    )
    linear = [(m.in_features, m.out_features) for m in cnn if isinstance(m, nn.Linear)]
    assert linear == [(1024, 128), (128, 6)]
    assert sum(isinstance(m, nn.ReLU) for m in cnn) == 2


@pytest.mark.parametrize("game", list(MINATAR))
def test_minatar_environments_have_minatars_defaults(game: str) -> None:
    env = make(f"maxminq/MinAtar-{game}-v0")
    raw = env.unwrapped.game  # the minatar.Environment underneath
    assert env.observation_space.shape == (MINATAR[game], 10, 10)  # channels first
    assert env.action_space.n == 6
    assert raw.sticky_action_prob == 0.1
    # Breakout and Freeway take no ramping option; the other three keep it as .ramping,
    # read by name so that a renamed or missing attribute fails instead of passing.
    if game in ("Asterix", "Seaquest", "SpaceInvaders"):
        assert raw.env.ramping is True
    assert env.spec.max_episode_steps == (10_000 if game == "Seaquest" else None)
    obs, _ = env.reset(seed=0)
    assert set(np.unique(obs).tolist()) <= {0, 1}
    env.close()


@pytest.mark.parametrize(
    ("env_id", "obs_dim", "actions", "cap"),
    [(CATCHER, 4, 3, 2000), (PIXELCOPTER, 7, 2, 500), ("LunarLander-v3", 8, 4, 1000)],
)
def test_feature_environments_spaces_and_caps(env_id: str, obs_dim: int, actions: int, cap: int):
    """PLE: Catcher's state has 4 values and 3 actions (left, right, noop), Pixelcopter's 7
    and 2 (up, noop); LunarLander 8 and 4. Caps of the authors' configs: Catcher 2,000,
    Pixelcopter 500, LunarLander 1,000 (truncation)."""
    env = make(env_id)
    assert (env.observation_space.shape, env.action_space.n) == ((obs_dim,), actions)
    assert env.spec.max_episode_steps == cap
    assert TrainConfig(env_id=env_id, agent="dqn").resolve().max_episode_steps == cap
    env.close()


def test_catcher_has_three_lives_and_scores_minus_five_at_game_over() -> None:
    """PLE Catcher: 3 lives; a miss scores -1 and costs a life, a catch +1; the episode ends
    when the lives reach 0, and that step also scores -5."""
    env = make(CATCHER, max_episode_steps=10_000)
    env.reset(seed=0)
    rewards, done = [], False
    while not done:
        _, r, term, trunc, _ = env.step(2)  # noop
        rewards.append(r)
        done = term or trunc
    env.close()
    assert term and not trunc
    misses = [r for r in rewards[:-1] if r < 0]
    assert misses == [-1.0, -1.0] and rewards[-1] == -1.0 - 5.0
    assert set(rewards) <= {0.0, 1.0, -1.0, -6.0}


def test_pixelcopter_has_one_life_and_scores_minus_five_at_death() -> None:
    """PLE Pixelcopter: one life; death scores -5 and ends the episode (a block passed or a
    terrain segment scrolled off scores +1, possibly in the same frame)."""
    env = make(PIXELCOPTER)
    for seed in range(5):
        env.reset(seed=seed)
        rewards, done = [], False
        while not done:
            _, r, term, trunc, _ = env.step(1)  # noop: the copter falls
            rewards.append(r)
            done = term or trunc
        assert term and not trunc
        assert all(r >= 0 for r in rewards[:-1]) and -5.0 <= rewards[-1] <= -4.0
    env.close()


def test_a_default_run_trains_and_tests_as_the_paper_says(tmp_path) -> None:
    """One short run through the public entry point with the registry's defaults: the run
    records the paper's settings (Sec. 5) in its config.json and plays the 100 test
    episodes."""
    cfg = TrainConfig(env_id=PIXELCOPTER, agent="maxmin-dqn", steps=1200, checkpoint_every=0)
    tables = run_training(cfg, tmp_path / "run", progress=False)
    assert len(tables["tests"]) == 100
    # What the run wrote, not cfg.resolve() again: the saved file is what the record holds.
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    want = dict(
        n=6,  # authors' posted best for Maxmin on Pixelcopter: 3e-4 / N = 6
        lr=3e-4,
        buffer_size=10_000,
        batch_size=32,
        gamma=0.99,
        target_update=200,
        eps_start=1.0,
        eps_end=0.01,
        eps_decay_steps=1000,
        learning_starts=1000,
        grad_clip=5.0,
        loss="mse",
        optimizer="rmsprop",
        update_members=1,
        timeout_as_terminal=False,  # documented deviation: truncation bootstraps
    )
    assert {k: saved.get(k) for k in want} == want
