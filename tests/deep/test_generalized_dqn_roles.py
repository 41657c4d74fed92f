"""generalized-dqn with Double / Weighted Double Q as its G: the updated member's target net
comes first (selects, or is U) in its own targets, as tabular Double Q swaps the roles
(finite_mdp's rotation); before, target net 0 always selected, so a member-1 update
bootstrapped with its own value at member 0's argmax."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq.deep import TrainConfig
from maxminq.deep.agents import Learner
from maxminq.deep.train import Trainer

OBS, A, B, GAMMA = 4, 3, 6, 0.9


def _learner(operator: str, seeds=(3, 4), update_members: int = 1, **kw) -> Learner:
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return Learner(
        "generalized-dqn", 2, gens, "mlp", (OBS,), A, "adam", 1e-3, gamma=GAMMA,
        update_members=update_members, hidden=(8,), operator=operator, **kw,
    )  # fmt: skip


def _batch(s: int, rows: int, seed: int = 0) -> dict[str, torch.Tensor]:
    rng = torch.Generator().manual_seed(seed)
    return {
        "obs": torch.randn((s, rows, OBS), generator=rng),
        "next_obs": torch.randn((s, rows, OBS), generator=rng),
        "action": torch.randint(0, A, (s, rows), generator=rng),
        "reward": torch.randn((s, rows), generator=rng),
        "terminated": (torch.rand((s, rows), generator=rng) < 0.3).float(),
    }


def _capture_targets(learner: Learner, monkeypatch) -> list[torch.Tensor]:
    """Record the targets y each update regresses on (loss_and_grad's y, (k * u, B))."""
    seen: list[torch.Tensor] = []
    original = learner.online.loss_and_grad

    def spy(rows, x, action, y, *args, **kw):
        seen.append(y.clone())
        return original(rows, x, action, y, *args, **kw)

    monkeypatch.setattr(learner.online, "loss_and_grad", spy)
    return seen


def _by_hand(learner: Learner, batch, seed_pos: int, member: int, op: str, rows=slice(None)):
    """r + gamma (1 - done) G with the updated member's target net selecting (U): for
    double_q Q^{other}(s', argmax Q^{updated}(s')); weighted_double_q with c = 1."""
    nxt = batch["next_obs"][:, rows]
    with torch.no_grad():
        qt = learner.target.forward_shared(nxt, 2)  # (S * 2, B, A) (zeros for no seed)
    qt = qt.reshape(learner.S, 2, -1, A)[seed_pos]  # (2, B, A): target nets 0 and 1
    mine, other = qt[member], qt[1 - member]
    best = mine.argmax(-1, keepdim=True)
    value = other.gather(-1, best)[:, 0]
    if op == "weighted_double_q":
        worst = mine.argmin(-1, keepdim=True)
        gap = (other.gather(-1, best) - other.gather(-1, worst)).abs()[:, 0]
        beta = gap / (1.0 + gap)
        value = beta * mine.gather(-1, best)[:, 0] + (1 - beta) * value
    r, done = batch["reward"][seed_pos, rows], batch["terminated"][seed_pos, rows]
    return r + GAMMA * (1 - done) * value


@pytest.mark.parametrize("op", ["double_q", "weighted_double_q"])
def test_each_member_selects_its_own_targets(op, monkeypatch) -> None:
    """N = 2, one member per update: seed 0 updates member 0, seed 1 member 1, then the
    other way round; each target is the hand-computed one with the updated net first."""
    for members in ([[0], [1]], [[1], [0]]):
        learner = _learner(op)
        seen = _capture_targets(learner, monkeypatch)
        batch = _batch(2, B)
        # targets from the target nets before the step (update changes only online nets)
        want = [_by_hand(learner, batch, s, m[0], op) for s, m in enumerate(members)]
        learner.update(np.arange(2), np.array(members), batch)
        torch.testing.assert_close(seen[-1], torch.stack(want), rtol=1e-5, atol=1e-6)


def test_a_subset_of_seeds_and_several_members_per_update(monkeypatch) -> None:
    """Only seed 1 updated (the path that pads the other seeds), and update_members = 2
    (both members, each on its own block of B rows): every block with its member first."""
    learner = _learner("double_q")
    seen = _capture_targets(learner, monkeypatch)
    one = {key: v[1:] for key, v in _batch(2, B, seed=1).items()}
    want = _by_hand(learner, {key: torch.cat([v, v]) for key, v in one.items()}, 1, 1, "double_q")
    learner.update(np.array([1]), np.array([[1]]), one)
    torch.testing.assert_close(seen[-1][0], want, rtol=1e-5, atol=1e-6)

    for seeds in ((3, 4), (7, 8, 9)):
        learner = _learner("double_q", seeds=seeds, update_members=2)
        seen = _capture_targets(learner, monkeypatch)
        s = len(seeds)
        batch = _batch(s, 2 * B, seed=2)
        learner.update(np.arange(s), np.tile([0, 1], (s, 1)), batch)
        assert seen[-1].shape == (2 * s, B)  # (k * u, B): seed i's block j is row i * u + j
        for i in range(s):
            for j in (0, 1):
                rows = slice(j * B, (j + 1) * B)
                want = _by_hand(learner, batch, i, j, "double_q", rows)
                torch.testing.assert_close(seen[-1][i * 2 + j], want, rtol=1e-5, atol=1e-6)


def test_training_changes_only_member_1_targets(monkeypatch) -> None:
    """A short CartPole run with double_q: at every update, targets equal the fixed-order
    (net 0 selects) ones where member 0 is updated and differ where member 1 is; the
    symmetric and own Gs are checked bit for bit by the maxmin / ensemble equivalence tests
    (deep/test_generalized_dqn.py), which pass through the same code path."""
    cfg = TrainConfig(
        env_id="CartPole-v1", agent="generalized-dqn", operator="double_q", n=2, lr=1e-3,
        steps=120, seeds=[0, 1, 2], eval_episodes=1, bias_every=1000, learning_starts=60,
        checkpoint_every=0, target_update=30, buffer_size=200, batch_size=8, hidden=(8,),
    )  # fmt: skip
    tr = Trainer(cfg.resolve())
    learner = tr.learner
    seen = _capture_targets(learner, monkeypatch)
    fixed_order: list[tuple[np.ndarray, torch.Tensor]] = []
    update, gamma = learner.update, tr.cfg.gamma

    def recording(seeds, members, batch):
        full = torch.zeros((learner.S, *batch["next_obs"].shape[1:]))
        full[torch.as_tensor(seeds)] = batch["next_obs"]
        g = learner.bootstrap(full)[torch.as_tensor(seeds)]  # no lead: net 0 selects
        y = batch["reward"] + gamma * (1 - batch["terminated"]) * g
        fixed_order.append((members[:, 0].copy(), y))
        return update(seeds, members, batch)

    monkeypatch.setattr(learner, "update", recording)
    try:
        for _ in range(cfg.steps):
            tr.train_step()
    finally:
        tr.close()
    assert len(fixed_order) == len(seen) > 30
    counts = [0, 0]
    for (members, old), new in zip(fixed_order, seen, strict=True):
        for row, m in enumerate(members.tolist()):
            counts[m] += 1
            if m == 0:
                assert torch.equal(new[row], old[row])
            else:
                assert not torch.allclose(new[row], old[row])
    assert min(counts) > 10


def test_own_g_sees_the_nets_in_fixed_order(tmp_path, monkeypatch) -> None:
    """A G of one's own gets target net 0 first whichever member is updated (no rotation,
    as finite_mdp's own G): a G reading net 0 only gives member 1's update net 0's max."""
    (tmp_path / "roles21_ops.py").write_text("def first_net(q):\n    return q[:, 0].amax(dim=-1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "roles21_ops", raising=False)
    learner = _learner("roles21_ops:first_net")
    seen = _capture_targets(learner, monkeypatch)
    batch = _batch(2, B, seed=3)
    with torch.no_grad():
        qt = learner.target.forward_shared(batch["next_obs"], 2).reshape(2, 2, B, A)
    want = batch["reward"] + GAMMA * (1 - batch["terminated"]) * qt[:, 0].amax(-1)
    learner.update(np.arange(2), np.array([[1], [1]]), batch)
    torch.testing.assert_close(seen[-1], want, rtol=1e-5, atol=1e-6)
