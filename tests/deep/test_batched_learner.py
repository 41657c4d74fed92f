"""The batched learner equals N separate nn.Modules with N separate torch.optim optimisers,
and each seed's values and gradients in a multi-seed update are its own (at odd batch
sizes, on two threads, on MinAtar's network)."""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from line_env import StepsEnv
from torch import nn
from wrapped_env_runs import _register

from maxminq.deep.agents import Learner
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.optim import _denominator_sqrt
from maxminq.deep.policy import torch_threads
from maxminq.deep.train import run_training

OBS, A, B, GAMMA, CLIP = 6, 3, 16, 0.9, 5.0


def _torch_opt(kind: str, params, lr: float) -> torch.optim.Optimizer:
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr)
    return torch.optim.RMSprop(params, lr=lr, alpha=0.95, eps=0.01, centered=kind != "rmsprop")


def _opt_kwargs(kind: str) -> dict:
    return {} if kind == "adam" else {"alpha": 0.95, "eps": 0.01}


def _batch(rng: torch.Generator, s: int, obs_shape=(OBS,)) -> dict[str, torch.Tensor]:
    return {
        "obs": torch.randn((s, B, *obs_shape), generator=rng),
        "next_obs": torch.randn((s, B, *obs_shape), generator=rng),
        "action": torch.randint(0, A, (s, B), generator=rng),
        "reward": torch.randn((s, B), generator=rng),
        "terminated": (torch.rand((s, B), generator=rng) < 0.2).float(),
    }


def _reference_target(agent: str, online, targets, next_obs) -> torch.Tensor:
    """Hand-written targets, independent of maxminq.operators (naive per-net loops)."""
    with torch.no_grad():
        qs = [t(next_obs) for t in targets]  # each (B, A)
        if agent == "maxmin-dqn":
            m = qs[0]
            for q in qs[1:]:
                m = torch.minimum(m, q)
            return m.max(dim=1).values
        if agent in ("averaged-dqn", "ensemble-dqn"):
            return (sum(qs) / len(qs)).max(dim=1).values
        if agent == "ddqn":
            a_star = online[0](next_obs).argmax(dim=1)
            return qs[0][torch.arange(len(a_star)), a_star]
        return qs[0].max(dim=1).values


class _FiveActions(StepsEnv):
    """StepsEnv with five actions (reward 1 for action 1): an output layer of 5 units."""

    action_space = gym.spaces.Discrete(5)


def _grads_alone_and_among(
    network: str, obs: tuple[int, ...], rows: int, threads: int, nets_per_seed: int
) -> None:
    """Each seed's loss_and_grad among 3 seeds (``nets_per_seed`` nets each) equals the
    seed's alone, the alone net's parameters and batch in tensors of their own (as in a run
    of that seed)."""
    seeds, actions = 3, 6
    gens = [torch.Generator().manual_seed(40 + s) for s in range(seeds)]
    many = build_net(network, seeds * nets_per_seed, obs, actions)
    many.init_members(gens, nets_per_seed)
    data = torch.Generator().manual_seed(3)
    m = seeds * nets_per_seed
    x = torch.rand((m, rows, *obs), generator=data)
    act = torch.randint(0, actions, (m, rows), generator=data)
    y = torch.rand((m, rows), generator=data) * 4.0
    with torch_threads(threads):
        per, q_sa, grad = many.loss_and_grad(many.flat.clone(), x, act, y, "huber", seeds)
        for s in range(seeds):
            own = slice(s * nets_per_seed, (s + 1) * nets_per_seed)
            alone = build_net(network, nets_per_seed, obs, actions)
            alone.init_members([torch.Generator().manual_seed(40 + s)], nets_per_seed)
            p1, q1, g1 = alone.loss_and_grad(
                alone.flat.clone(), x[own].clone(), act[own].clone(), y[own].clone(), "huber"
            )
            assert torch.equal(per[own], p1) and torch.equal(q_sa[own], q1), s
            assert torch.equal(grad[own], g1), (s, (grad[own] != g1).sum().item())


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "agent,n,kind,loss,network,seeds,hidden,u",
    [
        ("maxmin-dqn", 3, "rmsprop", "mse", "mlp", 2, None, 1),
        ("maxmin-dqn", 4, "adam", "huber", "mlp", 1, None, 1),  # one seed: the in-place row path
        ("averaged-dqn", 3, "centered_rmsprop", "mse", "mlp", 2, None, 1),
        ("ensemble-dqn", 3, "adam", "mse", "mlp", 2, None, 1),
        ("dqn", 1, "rmsprop", "mse", "mlp", 2, None, 1),
        ("ddqn", 1, "rmsprop", "huber", "mlp", 2, None, 1),
        ("maxmin-dqn", 2, "centered_rmsprop", "huber", "minatar_cnn", 2, None, 1),
        ("maxmin-dqn", 2, "rmsprop", "mse", "mlp", 2, (16, 8, 4), 1),  # --hidden 16,8,4
        ("dqn", 1, "adam", "huber", "minatar_cnn", 1, (24,), 1),  # --hidden 24
        # --update-members: each of the u members trains on its own mini-batch (Algorithm 1)
        ("maxmin-dqn", 3, "rmsprop", "mse", "mlp", 2, None, 2),
        ("ensemble-dqn", 4, "adam", "huber", "mlp", 1, None, 3),
    ],
)
def test_batched_learner_matches_separate_modules(
    agent: str, n: int, kind: str, loss: str, network: str, seeds: int, hidden, u: int
) -> None:
    lr, c = 1e-3, 7
    obs_shape = (OBS,) if network == "mlp" else (2, 5, 5)
    gens = [torch.Generator().manual_seed(100 + s) for s in range(seeds)]
    learner = Learner(
        agent, n, gens, network, obs_shape, A, kind, lr, _opt_kwargs(kind), loss, CLIP, GAMMA,
        update_members=u, hidden=hidden,
    )  # fmt: skip
    n_on = learner.n_online
    # Reference: per seed, separate online modules + optimisers and target modules.
    mods = learner.online.to_modules()
    linear = [tuple(m.weight.shape) for m in mods[0] if isinstance(m, nn.Linear)]
    widths = hidden or ((64, 64) if network == "mlp" else (128,))  # the paper's by default
    first = OBS if network == "mlp" else 16 * 3 * 3  # 16 filters on 3 x 3 positions
    assert linear == list(zip((*widths, A), (first, *widths), strict=True))  # (out, in)
    ref_online = [mods[s * n_on : (s + 1) * n_on] for s in range(seeds)]
    ref_opts = [[_torch_opt(kind, m.parameters(), lr) for m in ons] for ons in ref_online]
    k = learner.n_target
    ref_targets = [
        [copy.deepcopy(ref_online[s][0 if n_on == 1 else j]) for j in range(k)]
        for s in range(seeds)
    ]
    slot = 0
    rng = np.random.default_rng(5)
    data = torch.Generator().manual_seed(9)
    for step in range(120):
        blocks = [_batch(data, seeds, obs_shape) for _ in range(u)]  # one per member
        batch = {key: torch.cat([bl[key] for bl in blocks], dim=1) for key in blocks[0]}
        if u == 1:
            members = np.array([[rng.integers(n_on)] for _ in range(seeds)])
        else:
            members = np.array([np.sort(rng.choice(n_on, u, replace=False)) for _ in range(seeds)])
        learner.update(np.arange(seeds), members, batch)
        for s, j in np.ndindex(seeds, u):
            i, bl = int(members[s, j]), blocks[j]
            y_next = _reference_target(agent, ref_online[s], ref_targets[s], bl["next_obs"][s])
            y = bl["reward"][s] + GAMMA * (1 - bl["terminated"][s]) * y_next
            net, opt = ref_online[s][i], ref_opts[s][i]
            q = net(bl["obs"][s]).gather(1, bl["action"][s][:, None]).squeeze(1)
            d = q - y
            if loss == "huber":  # Huber / SmoothL1 with beta 1, written out
                err = torch.where(d.abs() < 1, 0.5 * d**2, d.abs() - 0.5).mean()
            else:
                err = (d**2).mean()
            opt.zero_grad()
            err.backward()
            nn.utils.clip_grad_norm_(net.parameters(), CLIP)
            opt.step()
        if (step + 1) % c == 0:
            learner.sync_targets()
            for s in range(seeds):
                if agent == "averaged-dqn":
                    ref_targets[s][slot].load_state_dict(ref_online[s][0].state_dict())
                else:
                    for j in range(k):
                        ref_targets[s][j].load_state_dict(ref_online[s][j].state_dict())
            slot = (slot + 1) % k
    got = learner.online.to_modules()
    got_t = learner.target.to_modules()
    for s in range(seeds):
        for i in range(n_on):
            for p, q in zip(
                got[s * n_on + i].parameters(), ref_online[s][i].parameters(), strict=True
            ):
                torch.testing.assert_close(p, q, atol=1e-5, rtol=0)
        for j in range(k):
            for p, q in zip(
                got_t[s * k + j].parameters(), ref_targets[s][j].parameters(), strict=True
            ):
                torch.testing.assert_close(p, q, atol=1e-5, rtol=0)
    # Optimiser state of each member equals its own torch optimiser's state (the members
    # not chosen at a step kept theirs untouched, or these would differ).
    key = "exp_avg_sq" if kind == "adam" else "square_avg"
    mine = learner.online.views(learner.opt.state[1 if kind == "adam" else 0])
    for s in range(seeds):
        for i in range(n_on):
            ref_params = list(ref_online[s][i].parameters())
            state = ref_opts[s][i].state
            steps = float(state[ref_params[0]]["step"]) if ref_params[0] in state else 0.0
            assert learner.opt.step_count[s * n_on + i].item() == steps
            w = state[ref_params[0]][key]  # first layer's weight
            got_w = mine[0][s * n_on + i]
            got_w = got_w.t() if network == "mlp" else got_w  # Linear weights are (out, in)
            torch.testing.assert_close(got_w, w, atol=1e-6, rtol=1e-4)
    if n_on > 1:  # the test only means something if members were updated unequally
        assert len(set(learner.opt.step_count.tolist())) > 1


@pytest.mark.usefixtures("torch_one_thread")
def test_cnn_stack_matches_modules() -> None:
    """The stacked convolution (im2col + baddbmm) computes what N nn.Conv2d networks compute."""
    from maxminq.deep.nets import StackedMinAtarCNN

    net = StackedMinAtarCNN(3, 4, 5)
    net.init_members([torch.Generator().manual_seed(1)], 3)
    x = torch.rand((3, 7, 4, 10, 10))
    out = net.forward(x)
    for m, mod in enumerate(net.to_modules()):
        torch.testing.assert_close(out[m], mod(x[m]), atol=1e-5, rtol=1e-5)
    assert not torch.allclose(out[0], out[1])


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("network", ["mlp", "minatar_cnn"])
def test_member_results_do_not_depend_on_stack_size(network: str) -> None:
    """A seed's networks after 20 Maxmin updates are bitwise the same whether its members
    are the whole stack or share it with two other seeds (batched kernels on CPU)."""
    obs_shape = (OBS,) if network == "mlp" else (3, 6, 6)

    def run(gen_seeds: list[int], pos: int) -> torch.Tensor:
        gens = [torch.Generator().manual_seed(s) for s in gen_seeds]
        learner = Learner(
            "maxmin-dqn", 2, gens, network, obs_shape, A, "rmsprop", 1e-2, {}, "mse", 1.0, GAMMA
        )
        data = torch.Generator().manual_seed(3)
        for step in range(20):
            mine = _batch(data, 1, obs_shape)
            batch = {k: v.expand(len(gen_seeds), *v.shape[1:]).clone() for k, v in mine.items()}
            members = np.array([[step % 2]] * len(gen_seeds))
            learner.update(np.arange(len(gen_seeds)), members, batch)
            if step % 5 == 4:
                learner.sync_targets()
        return learner.online.flat[2 * pos : 2 * pos + 2].clone()

    alone = run([11], 0)
    among = run([4, 11, 9], 1)
    assert torch.equal(alone, among)
    assert not torch.equal(alone, run([4, 12, 9], 1))


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("eps,scale", [(1e-8, 1.0), (0.01, 1.0), (1e-8, 0.0316), (1e-30, 1.0)])
def test_denominator_sqrt_keeps_every_denominator_bit_identical(eps: float, scale: float):
    """The optimisers' sqrt raises entries below 2**-126 (zeros, subnormals) before taking
    the root; sqrt(x) / scale + eps must still equal torch's plain result bit for bit,
    including NaN for a negative entry (centered RMSprop's rounding case)."""
    g = torch.Generator().manual_seed(1)
    x = 10 ** (torch.rand(50_000, generator=g) * 40 - 45)  # 1e-45 .. 1e-5: subnormals too
    x[torch.rand(50_000, generator=g) < 0.4] = 0.0
    assert ((x > 0) & (x < torch.finfo(torch.float32).tiny)).sum() > 1000
    expected = x.sqrt() / scale + eps
    got = _denominator_sqrt(x.clone(), eps, scale) / scale + eps
    assert torch.equal(got, expected)
    copied = x.clone()
    assert torch.equal(_denominator_sqrt(copied, eps, scale, copy=True) / scale + eps, expected)
    assert torch.equal(copied, x)  # copy=True leaves its input alone
    x[7] = -1e-12
    assert torch.isnan(_denominator_sqrt(x.clone(), eps, scale)[7])
    x[8] = math.nan  # a diverged member's row beside it: the negative entry still gives NaN
    assert torch.isnan(_denominator_sqrt(x.clone(), eps, scale)[7])


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("network", ["mlp", "minatar_cnn"])
def test_initialisation_is_torchs_default(network: str) -> None:
    """Each member's layers are drawn as nn.Linear / nn.Conv2d's reset_parameters draws them
    (kaiming_uniform_ with a = sqrt(5), then bias uniform in +-1/sqrt(fan_in)), from the
    member's generator: the README's stated initialisation (not the authors' Kaiming normal)."""
    from maxminq.deep.nets import build_net

    obs_shape = (8,) if network == "mlp" else (4, 10, 10)
    net = build_net(network, 2, obs_shape, 5)
    net.init_members([torch.Generator().manual_seed(7)], 2)
    ref = torch.Generator().manual_seed(7)
    if network == "mlp":  # (weight shape (out, in), fan_in) per layer: 8 -> 64 -> 64 -> 5
        layers = [((64, 8), 8), ((64, 64), 64), ((5, 64), 64)]
    else:  # conv 16 3x3 on 4 channels, 1024 -> 128, 128 -> 5
        layers = [((16, 4, 3, 3), 36), ((128, 1024), 1024), ((5, 128), 128)]
    for member in range(2):  # members draw one after the other from the same generator
        for i, (shape, fan_in) in enumerate(layers):
            w, b = torch.empty(shape), torch.empty(shape[0])
            nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=ref)
            nn.init.uniform_(b, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), generator=ref)
            got_w, got_b = net.params[2 * i][member], net.params[2 * i + 1][member]
            if len(shape) == 2:
                got_w = got_w.t()
            assert torch.equal(got_w, w) and torch.equal(got_b.reshape(-1), b)
            assert float(w.abs().max()) <= 1 / math.sqrt(fan_in)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "agent,n,kind,loss",
    [
        ("dqn", 1, "rmsprop", "mse"),
        ("ddqn", 1, "adam", "huber"),
        ("maxmin-dqn", 3, "rmsprop", "mse"),
        ("averaged-dqn", 3, "centered_rmsprop", "mse"),
        ("ensemble-dqn", 2, "rmsprop", "huber"),
    ],
)
def test_training_loop_matches_a_plain_single_seed_dqn_loop(
    agent: str, n: int, kind: str, loss: str
) -> None:
    """The whole Trainer (acting, storing, sampling, updating, target syncs, testing) equals
    a plain loop written here with one gym CartPole, a Python list as ring buffer, nn.Modules
    and torch.optim, fed the trainer's per-step uniforms (layout: explore test, random
    action, member, reset seed, replay indices). Checks eps 1 for the random steps, then
    linear; greedy on min (Maxmin) / mean (Ensemble) of the online nets; truncated steps
    stored non-terminal with their final observation; uniform indices over the filled part
    of a wrapped buffer; one member per step; the operator's target on the target nets
    (Double DQN: online argmax, target value); Averaged DQN's snapshots refreshed
    round-robin; and the test episodes' eps = 0.01 play on their own stream."""
    import gymnasium as gym

    from maxminq.deep.config import TrainConfig
    from maxminq.deep.train import Trainer

    steps, start, decay, cap, period, size, batch, gamma = 200, 40, 60, 20, 25, 90, 8, 0.9
    cfg = TrainConfig(
        env_id="CartPole-v1", agent=agent, n=n, lr=1e-3, steps=steps, seeds=[3],
        eval_episodes=3, bias_every=steps, learning_starts=start, checkpoint_every=0,
        target_update=period, buffer_size=size, batch_size=batch, max_episode_steps=cap,
        eps_decay_steps=decay, eps_end=0.05, optimizer=kind, loss=loss, gamma=gamma,
        optimizer_kwargs={}, grad_clip=CLIP,
    ).resolve()  # fmt: skip
    tr = Trainer(cfg)
    drawn: list[np.ndarray] = []
    draw = tr.uniforms.next
    tr.uniforms.next = lambda: drawn.append(draw()[0].copy()) or drawn[-1][None]
    n_on = n if agent in ("maxmin-dqn", "ensemble-dqn") else 1
    k = 1 if agent in ("dqn", "ddqn") else n
    online = tr.learner.online.to_modules()
    targets = [copy.deepcopy(online[j if n_on > 1 else 0]) for j in range(k)]
    if kind == "adam":
        opts = [torch.optim.Adam(m.parameters(), lr=cfg.lr) for m in online]
    else:
        centered = kind == "centered_rmsprop"
        opts = [torch.optim.RMSprop(m.parameters(), lr=cfg.lr, centered=centered) for m in online]

    def combined(nets: list[nn.Module], x: torch.Tensor) -> torch.Tensor:
        q = torch.stack([net(x) for net in nets])
        return q.min(0).values if agent == "maxmin-dqn" else q.mean(0)

    env = gym.make("CartPole-v1", max_episode_steps=cap)
    obs, _ = env.reset(seed=tr.ep_seed[0])
    buffer: list[tuple] = []
    slot = greedy = 0
    ends: set[str] = set()
    for t in range(steps):
        tr.train_step()
        u = drawn[-1]
        eps = 1.0 if t < start else max(0.05, 1.0 - 0.95 * (t - start) / decay)
        where = (tr.replay.pos - 1) % size
        if u[0] < eps:
            a = int(u[1] * 2)
        else:
            with torch.no_grad():
                q = combined(online, torch.tensor(obs, dtype=torch.float32)[None])[0]
            a, greedy = int(q.argmax()), greedy + 1
            if abs(float(q[0] - q[1])) < 1e-4:  # a float-rounding tie: follow the trainer
                a = int(tr.replay.action[0, where])
        o2, r, term, trunc, _ = env.step(a)
        record = (np.asarray(obs, np.float32), a, float(r), np.asarray(o2, np.float32), term)
        if len(buffer) < size:
            buffer.append(record)
        else:
            buffer[t % size] = record
        assert int(tr.replay.action[0, where]) == a
        np.testing.assert_array_equal(tr.replay.obs[0, where], record[0])
        np.testing.assert_array_equal(tr.replay.next_obs[0, where], record[3])
        assert tr.replay.terminated[0, where] == float(term)  # a cut (trunc) bootstraps
        if t >= start:
            i = int(u[2] * n_on)
            rows = [buffer[j] for j in (u[4:] * len(buffer)).astype(int)]
            s_, a_, r_, s2, d_ = (torch.tensor(np.array(col)) for col in zip(*rows, strict=True))
            with torch.no_grad():
                if agent == "ddqn":
                    best = online[0](s2).argmax(1, keepdim=True)
                    g = targets[0](s2).gather(1, best)[:, 0]
                else:
                    g = combined(targets, s2).max(1).values
            y = r_.float() + gamma * (1 - d_.float()) * g
            q_sa = online[i](s_).gather(1, a_[:, None])[:, 0]
            if loss == "huber":
                err = nn.functional.smooth_l1_loss(q_sa, y)
            else:
                err = nn.functional.mse_loss(q_sa, y)
            opts[i].zero_grad()
            err.backward()
            nn.utils.clip_grad_norm_(online[i].parameters(), CLIP)
            opts[i].step()
        if (t + 1) % period == 0:
            if agent == "averaged-dqn":  # the oldest snapshot becomes the online net
                targets[slot].load_state_dict(online[0].state_dict())
                slot = (slot + 1) % k
            else:
                for j in range(k):
                    targets[j].load_state_dict(online[j].state_dict())
        obs = o2
        if term or trunc:
            ends.add("term" if term else "trunc")
            obs, _ = env.reset(seed=int(u[3] * (2**31 - 1)))
    assert ends == {"term", "trunc"} and greedy > 50 and t + 1 > size  # every case was met
    for mine, ref in zip(
        tr.learner.online.to_modules() + tr.learner.target.to_modules(),
        online + targets,
        strict=True,
    ):
        for p, q in zip(mine.parameters(), ref.parameters(), strict=True):
            torch.testing.assert_close(p, q, atol=1e-5, rtol=0)
    # Test episodes: the seed's third stream, eps = 0.01, greedy on the same values.
    test_rng = np.random.default_rng(np.random.SeedSequence(3).spawn(3)[2])
    expected = []
    for episode in range(3):
        obs, _ = env.reset(seed=int(test_rng.integers(2**31 - 1)))
        total, length, done = 0.0, 0, False
        while not done:
            with torch.no_grad():
                q = combined(online, torch.tensor(obs, dtype=torch.float32)[None])[0]
            explore = test_rng.random() < 0.01
            a = int(test_rng.integers(2)) if explore else int(q.argmax())
            obs, r, term, trunc, _ = env.step(a)
            total, length, done = total + float(r), length + 1, term or trunc
        expected.append([3, episode + 1, total, length, bool(term), bool(trunc)])
    tr.evaluate()
    assert tr.rows["tests"] == expected
    tr.close()
    env.close()


@pytest.mark.usefixtures("torch_one_thread")
def test_minatar_mini_batch_values_of_a_seed_are_its_own_at_an_odd_batch_size() -> None:
    """One batched product over all seeds rounded a member's Q-values by its position for
    some mini-batch shapes (here MinAtar's 6 actions at 33 rows), so the targets and updates
    of a seed in a multi-seed run were not those of the seed alone; only one-row products
    (acting, probes) were made per seed."""
    seeds = [torch.Generator().manual_seed(s) for s in (5, 9)]
    both = build_net("minatar_cnn", 2, (4, 10, 10), 6)
    both.init_members(seeds, 1)
    x = torch.rand((2, 33, 4, 10, 10), generator=torch.Generator().manual_seed(1)).round()
    together = both.forward_shared(x, 1)
    for s in range(2):
        alone = build_net("minatar_cnn", 1, (4, 10, 10), 6)
        alone.flat.copy_(both.flat[s : s + 1])
        assert torch.equal(together[s], alone.forward_shared(x[s : s + 1], 1)[0]), s
    # The update's forward too (the rows of the updated members, one per seed).
    act = torch.zeros((2, 33), dtype=torch.int64)
    y = torch.zeros((2, 33))
    _, q_sa, grad = both.loss_and_grad(both.flat, x, act, y, "huber", 2)
    for s in range(2):
        _, q1, g1 = both.loss_and_grad(both.flat[s : s + 1], x[s : s + 1], act[:1], y[:1], "huber")
        assert torch.equal(q_sa[s], q1[0]) and torch.equal(grad[s], g1[0]), s


@pytest.mark.usefixtures("torch_one_thread")
def test_a_seeds_tables_are_its_own_at_a_batch_size_that_rounds_by_position(tmp_path) -> None:
    """README: a seed's tables are bitwise identical alone or among other seeds. They were
    not with 5 actions and --batch-size 5 (nor MinAtar's 6 at an odd size): the mini-batch
    products of all seeds were one product."""

    def seed0(seeds: list[int], out: str) -> dict[str, pd.DataFrame]:
        cfg = TrainConfig(
            env_id=_register(_FiveActions), agent="maxmin-dqn", n=2, steps=150, seeds=seeds,
            learning_starts=20, batch_size=5, buffer_size=100, eval_episodes=2,
            checkpoint_every=0, bias_every=50, eps_decay_steps=50,
        )  # fmt: skip
        tables = run_training(cfg, tmp_path / out, progress=False)
        return {
            k: t[t["seed"] == 0].drop(columns="steps_per_s", errors="ignore").reset_index(drop=True)
            for k, t in tables.items()
        }

    alone, among = seed0([0], "alone"), seed0([3, 0], "among")
    assert len(alone["metrics"]) == 3 and alone["metrics"]["loss"].notna().all()
    for name in ("episodes", "tests", "metrics", "runs"):
        pd.testing.assert_frame_equal(alone[name], among[name], check_exact=True)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("rows", [1, 32, 33])
def test_every_stacked_product_gives_each_seed_its_own_values(n, rows) -> None:
    """nets.linear takes one product for all seeds only where it was found to equal each
    seed's own product (MinAtar's output layer of N = 4 nets per seed, one row: one product
    here, 7x faster than a product per seed); whichever it takes, each seed's values are
    bitwise those of its product alone, also for shapes where one product is not (N = 1)."""
    from maxminq.deep.nets import linear

    gen = torch.Generator().manual_seed(rows * 10 + n)
    for seeds in (2, 3, 5):
        for k_in, k_out in [(128, 6), (64, 5), (64, 4)]:
            m = seeds * n
            h = torch.rand((m, rows, k_in), generator=gen)
            w = torch.rand((m, k_in, k_out), generator=gen) - 0.5
            b = torch.rand((m, 1, k_out), generator=gen) - 0.5
            out = linear(b, h, w, seeds)
            for s in range(seeds):
                own = torch.baddbmm(
                    b[s * n : (s + 1) * n], h[s * n : (s + 1) * n], w[s * n : (s + 1) * n]
                )
                assert torch.equal(out[s * n : (s + 1) * n], own), (seeds, k_in, k_out, s)


@pytest.mark.usefixtures("torch_one_thread")
def test_minatar_values_of_maxmin_with_four_nets_are_each_seeds_own() -> None:
    """Acting and probing values of Maxmin DQN (N = 4) on MinAtar, where the output layer is
    now one product for all seeds: each seed's are those of a learner of that seed alone."""
    from maxminq.deep.agents import Learner

    shape = (4, 10, 10)
    obs = (torch.rand((3, *shape), generator=torch.Generator().manual_seed(2)) < 0.3).float()
    action = torch.tensor([0, 5, 3])

    def learner(seeds: list[int]) -> Learner:
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        lr = Learner("maxmin-dqn", 4, gens, "minatar_cnn", shape, 6, "rmsprop", 1e-3)
        with torch.no_grad():
            lr.online.flat.mul_(3.0)
            lr.target.flat.copy_(lr.target.flat * 2.0 - 0.01)
        return lr

    many = learner([11, 12, 13])
    est, greedy = many.estimate(obs, action), many.greedy_values(obs)
    for pos, seed in enumerate([11, 12, 13]):
        one = learner([seed])
        assert torch.equal(one.estimate(obs[pos : pos + 1], action[pos : pos + 1])[0], est[pos])
        assert torch.equal(one.greedy_values(obs[pos : pos + 1])[0], greedy[pos])


@pytest.mark.parametrize("nets_per_seed", [1, 3])
@pytest.mark.parametrize("network,obs", [("mlp", (4,)), ("minatar_cnn", (4, 10, 10))])
def test_a_seeds_gradient_at_batch_size_one_is_its_own(network, obs, nets_per_seed) -> None:
    """--batch-size 1: dz @ w.T of one row rounded by the weights' alignment in the flat
    parameter rows (seed s's lie s * N * P floats in), so seeds 1, 2 differed from alone."""
    _grads_alone_and_among(network, obs, rows=1, threads=1, nets_per_seed=nets_per_seed)


def test_a_seeds_gradient_on_two_threads_at_an_odd_batch_size_is_its_own() -> None:
    """--threads 2 --batch-size 5: the backward's batched products rounded by position
    (only the forward's were made per seed)."""
    _grads_alone_and_among("mlp", (4,), rows=5, threads=2, nets_per_seed=1)
