"""The deep agents' training step read against the paper and the authors' settings
(session 26): the optimizer options a run resolves to, and hand-checked updates."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from maxminq.deep.config import TrainConfig

MINATAR = "maxminq/MinAtar-Breakout-v0"


def test_optimizer_kwargs_given_in_part_keep_the_registrys_others() -> None:
    """MinAtar's centered RMSprop is alpha 0.95, eps 0.01 (MinAtar's DQN). Giving only
    alpha must keep eps 0.01, as --env-kwargs is merged over the registry's keywords: it
    resolved to {'alpha': 0.9}, i.e. torch's eps 1e-8, a denominator floor 10^6 times
    smaller, silently."""
    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs={"alpha": 0.9}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.9, "eps": 0.01}
    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs={"eps": 1e-5}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.95, "eps": 1e-5}
    # Naming its optimizer changes nothing; another optimizer starts from torch's defaults.
    cfg = TrainConfig(env_id=MINATAR, optimizer="centered_rmsprop", optimizer_kwargs={}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.95, "eps": 0.01}
    cfg = TrainConfig(env_id=MINATAR, optimizer="adam", optimizer_kwargs={"eps": 1e-4}).resolve()
    assert cfg.optimizer_kwargs == {"eps": 1e-4}
    cfg = TrainConfig(env_id=MINATAR, optimizer="rmsprop").resolve()
    assert cfg.optimizer_kwargs == {}


@pytest.mark.parametrize("given", [{"alpha": 0.9}, {"eps": 1e-5}])
def test_the_learner_steps_with_the_merged_options(given: dict) -> None:
    """The run's optimiser takes the resolved options: one centered RMSprop step of a
    one-parameter row, worked out by hand, with MinAtar's value for the option not given."""
    import torch

    from maxminq.deep.optim import MemberOptimizer

    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs=given).resolve()
    alpha = cfg.optimizer_kwargs["alpha"]
    eps = cfg.optimizer_kwargs["eps"]
    flat = torch.tensor([[1.0]])
    opt = MemberOptimizer(flat, cfg.optimizer, 0.1, **cfg.optimizer_kwargs)
    opt.step(None, torch.tensor([[2.0]]))
    # square_avg = (1 - alpha) g^2, grad_avg = (1 - alpha) g; step lr g / (sqrt(sq - ga^2) + eps)
    sq, ga = (1 - alpha) * 4.0, (1 - alpha) * 2.0
    expected = 1.0 - 0.1 * 2.0 / ((sq - ga * ga) ** 0.5 + eps)
    assert flat.item() == pytest.approx(expected, rel=1e-5)
    assert eps == given.get("eps", 0.01) and alpha == given.get("alpha", 0.95)


@pytest.mark.parametrize("given", [{"alpha": 0.9}, {"eps": 1e-5}])
def test_the_trainer_hands_the_merged_options_to_its_learner(given: dict) -> None:
    """The run itself steps with the merged options, not with those given alone: the
    Trainer's own learner, one step of every weight with gradient 2, moves each weight by
    the centered RMSprop step worked out by hand with alpha and eps as MinAtar's values
    under those given ({'alpha': 0.9} alone, i.e. torch's eps 1e-8, moves each weight
    lr 2 / (0.6 + 1e-8) instead of lr 2 / (0.6 + 0.01): 1.7 % more, well outside rtol)."""
    import torch

    from maxminq.deep.train import Trainer

    alpha, eps = given.get("alpha", 0.95), given.get("eps", 0.01)
    cfg = TrainConfig(
        env_id=MINATAR, optimizer_kwargs=given, seeds=[0], steps=10, buffer_size=10,
        batch_size=2, learning_starts=1000, checkpoint_every=0, eval_episodes=0,
    ).resolve()  # fmt: skip
    tr = Trainer(cfg)
    try:
        opt = tr.learner.opt
        assert opt.kind == "centered_rmsprop"
        before = opt.flat.clone()
        opt.step(None, torch.full_like(opt.flat, 2.0))
        sq, ga = (1 - alpha) * 4.0, (1 - alpha) * 2.0
        step = cfg.lr * 2.0 / ((sq - ga * ga) ** 0.5 + eps)
        want = torch.full_like(before, step)
        torch.testing.assert_close(before - opt.flat, want, rtol=1e-4, atol=0)
    finally:
        tr.close()


@pytest.mark.parametrize("agent", ["maxmin-dqn", "ensemble-dqn"])
def test_several_members_per_step_each_on_its_own_block_of_the_mini_batch(agent: str) -> None:
    """Algorithm 1 with a subset S of two of the N = 3 nets, for two seeds at once: member
    j of a seed's subset is trained on the j-th block of B samples of that seed's batch,
    against the target max_a' min_i (Ensemble: mean_i) of that seed's N target nets; the
    third member and every target net are unchanged. Expected values from nn.Module copies
    and torch.optim.RMSprop (one per net, as the authors' N optimisers), clip 5, MSE."""
    import torch
    from torch import nn

    from maxminq.deep.agents import Learner

    gens = [torch.Generator().manual_seed(s) for s in (11, 12)]
    lr, gamma, b = 1e-2, 0.9, 4
    learner = Learner(
        agent, 3, gens, "mlp", (2,), 3, "rmsprop", lr,
        loss="mse", grad_clip=5.0, gamma=gamma, update_members=2, hidden=(5,),
    )  # fmt: skip
    # Targets unlike the online nets, so that online and target cannot be mixed up.
    learner.target.flat.add_(torch.randn(learner.target.flat.shape, generator=gens[0]) * 0.3)
    online = learner.online.to_modules()  # seed s's member i is online[3 s + i]
    targets = learner.target.to_modules()
    g = torch.Generator().manual_seed(5)
    batch = {
        "obs": torch.randn(2, 2 * b, 2, generator=g),
        "action": torch.randint(0, 3, (2, 2 * b), generator=g),
        "reward": torch.randn(2, 2 * b, generator=g),
        "next_obs": torch.randn(2, 2 * b, 2, generator=g),
        "terminated": torch.tensor([[0.0, 1.0] * b, [1.0, 0.0] * b]),
    }
    members = np.array([[0, 2], [1, 2]])
    before_targets = learner.target.flat.clone()
    learner.update(np.array([0, 1]), members, batch)
    expected = [copy.deepcopy(m) for m in online]
    for s in range(2):
        with torch.no_grad():
            q_next = torch.stack([targets[3 * s + i](batch["next_obs"][s]) for i in range(3)])
            combined = q_next.min(0).values if agent == "maxmin-dqn" else q_next.mean(0)
            y = batch["reward"][s] + gamma * (1 - batch["terminated"][s]) * combined.max(1).values
        for j, i in enumerate(members[s]):
            net = expected[3 * s + i]
            block = slice(j * b, (j + 1) * b)
            q = net(batch["obs"][s, block]).gather(1, batch["action"][s, block, None])[:, 0]
            loss = nn.functional.mse_loss(q, y[block])
            opt = torch.optim.RMSprop(net.parameters(), lr=lr)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
    for got, want in zip(learner.online.to_modules(), expected, strict=True):
        for p, q in zip(got.parameters(), want.parameters(), strict=True):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)
    # the members not in the subset (seed 0's 1, seed 1's 0) did not move
    for m in (1, 3):
        now = learner.online.to_modules()[m].parameters()
        for p, q in zip(now, online[m].parameters(), strict=True):
            assert torch.equal(p, q)
    assert torch.equal(learner.target.flat, before_targets)


class _TwoStates:
    """A 2-state chain, written here to be checked by hand: observation (state, t), t the
    steps taken in the episode. Action 0 in state 1 terminates (reward 1), action 0 in
    state 0 stays (reward 0), action 1 flips the state (reward 0). Registered with a time
    limit of 3 steps, so some episodes are cut (truncated) and one that terminates on its
    3rd step is both."""

    @staticmethod
    def env_id() -> str:
        import gymnasium as gym

        class TwoStates(gym.Env):
            observation_space = gym.spaces.Box(0.0, 10.0, (2,), np.float32)
            action_space = gym.spaces.Discrete(2)

            def reset(self, *, seed=None, options=None):
                super().reset(seed=seed)
                self.s, self.t = 0, 0
                return self._obs(), {}

            def _obs(self):
                return np.array([self.s, self.t], dtype=np.float32)

            def step(self, action):
                self.t += 1
                if action == 0 and self.s == 1:
                    return self._obs(), 1.0, True, False, {}
                if action == 1:
                    self.s = 1 - self.s
                return self._obs(), 0.0, False, False, {}

        env_id = "mmq-s26/TwoStates-v0"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=TwoStates, max_episode_steps=3)
        return env_id


@pytest.mark.parametrize("timeout_as_terminal", [False, True])
def test_each_seeds_boundaries_and_the_ring_buffer_after_it_wraps(timeout_as_terminal) -> None:
    """Three seeds whose episodes end at other steps, a replay buffer of 7 that wraps: every
    stored transition, oldest to newest, follows the chain's rules worked out here from its
    (state, t) and action: the next observation is the true one (a cut episode's final
    one, never the next reset's), the mask is 1 exactly for a termination (also when the
    same step reaches the time limit) and, with --timeout-as-terminal, for a cut; the next
    row starts from the reset observation (0, 0) after an episode ended. A transition
    sampled right after the pointer wraps (slot 0) is the newest one, and the last slot's
    next observation is its own."""
    from maxminq.deep.train import Trainer

    cfg = TrainConfig(
        env_id=_TwoStates.env_id(), agent="dqn", steps=40, seeds=[0, 1, 2], buffer_size=7,
        learning_starts=1000, checkpoint_every=0, eval_episodes=0, bias_every=40,
        hidden=(4,), timeout_as_terminal=timeout_as_terminal,
    ).resolve()  # fmt: skip
    tr = Trainer(cfg)
    kinds: set[tuple[bool, bool]] = set()
    try:
        acted_on = []  # each step's observations, read from the trainer before it acts
        for t in range(24):
            acted_on.append(tr.obs.copy())
            tr.train_step()
            if t == 7:  # the 8th transition went to slot 0: drawn there, it is the newest
                assert tr.replay.pos == 1
                newest = tr.replay.gather(np.arange(3), np.zeros((3, 1), dtype=np.int64))
                # The 8th step's observation, not the 1st one's, which slot 0 held before
                # (they differ for every seed, so the two cannot be mixed up here).
                assert (acted_on[7] != acted_on[0]).any(axis=1).all()
                assert np.array_equal(newest["obs"][:, 0].numpy(), acted_on[7])
                assert newest["next_obs"][:, 0, 1].tolist() == (acted_on[7][:, 1] + 1).tolist()
        order = [(tr.replay.pos + i) % 7 for i in range(7)]  # oldest to newest
        for s in range(3):
            rows = [
                (tr.replay.obs[s, p], int(tr.replay.action[s, p]), tr.replay.next_obs[s, p],
                 float(tr.replay.reward[s, p]), float(tr.replay.terminated[s, p]))
                for p in order
            ]  # fmt: skip
            for i, (obs, a, nxt, r, mask) in enumerate(rows):
                state, steps = int(obs[0]), int(obs[1])
                terminated = a == 0 and state == 1
                new_state = state if a == 0 else 1 - state
                assert list(nxt) == [new_state, steps + 1], (s, i)
                assert r == (1.0 if terminated else 0.0)
                truncated = steps + 1 == 3
                kinds.add((terminated, truncated))
                want = terminated or (truncated and timeout_as_terminal)
                assert mask == float(want), (s, i, obs, a)
                if i + 1 < len(rows):
                    follow = rows[i + 1][0]
                    ended = terminated or truncated
                    assert list(follow) == ([0, 0] if ended else list(nxt)), (s, i)
        # the last slot's next observation is its own (stored apart, not the slot 0 obs)
        assert tr.replay.next_obs[:, 6, 1].tolist() == (tr.replay.obs[:, 6, 1] + 1).tolist()
    finally:
        tr.close()
    assert (False, True) in kinds and (True, False) in kinds  # both ends were met


def test_optimizer_keywords_that_an_option_sets_name_that_option() -> None:
    """The authors' configs give torch.optim.RMSprop {"lr": ..., "alpha": 0.95, "centered":
    true, "eps": 0.01}; copied into --optimizer-kwargs, lr and centered were refused as
    keywords rmsprop does not take, without saying that --lr and --optimizer
    centered_rmsprop set them."""
    from maxminq.errors import UsageError

    given = {"lr": 1e-3, "alpha": 0.95, "centered": True, "eps": 0.01}
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="CartPole-v1", optimizer_kwargs=given).resolve()
    text = str(err.value)
    assert text.startswith("--optimizer-kwargs: rmsprop takes alpha, eps, not centered, lr")
    assert "--lr" in text and "--optimizer centered_rmsprop" in text
    with pytest.raises(UsageError, match=r"not momentum$"):  # no option sets it: as before
        TrainConfig(env_id="CartPole-v1", optimizer_kwargs={"momentum": 0.9}).resolve()
