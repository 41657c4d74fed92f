"""Tests written to kill mutants that the rest of the suite let live (mutation testing
by hand). Each test pins one documented behaviour that a small plausible bug changed
without any other test noticing; expected values come from plain re-computations here, not
from the code under test."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from maxminq import theory
from maxminq.analysis import tables as T
from maxminq.deep.agents import Learner
from maxminq.deep.optim import MemberOptimizer
from maxminq.experiments.store import ResultsStore
from maxminq.linear.tiles import TileCoder


def _random_batch(
    data: torch.Generator, seeds: int, rows: int, terminal_p: float = 0.0
) -> dict[str, torch.Tensor]:
    """A replay mini-batch of ``rows`` CartPole-sized transitions per seed (3 actions), drawn
    from ``data``; terminal with probability ``terminal_p`` (0: none, and nothing drawn)."""
    shape = (seeds, rows)
    batch = {
        "obs": torch.randn((*shape, 4), generator=data),
        "next_obs": torch.randn((*shape, 4), generator=data),
        "action": torch.randint(0, 3, shape, generator=data),
        "reward": torch.randn(shape, generator=data),
    }
    terminal = torch.rand(shape, generator=data) < terminal_p if terminal_p else torch.zeros(shape)
    batch["terminated"] = terminal.float()
    return batch


def _ddqn_after_one_update(seeds: int = 2) -> tuple[Learner, torch.Tensor, torch.Tensor]:
    """A Double DQN learner whose online nets have moved away from its target nets (one
    update, no sync), plus observations (S, 4) and actions (S,) to probe it with."""
    gens = [torch.Generator().manual_seed(11 + s) for s in range(seeds)]
    learner = Learner("ddqn", 1, gens, "mlp", (4,), 3, "adam", 0.05, hidden=(8,))
    data = torch.Generator().manual_seed(3)
    b = 16
    batch = _random_batch(data, seeds, b)
    learner.update(np.arange(seeds), np.zeros((seeds, 1), dtype=np.int64), batch)
    obs = torch.randn((seeds, 4), generator=data)
    action = torch.tensor([2, 0][:seeds])
    return learner, obs, action


@dataclass
class _Run:
    run_id: str
    kind: str = "k"
    config: str = "cfg"
    settings: dict = field(default_factory=dict)


def test_double_dqn_bias_estimate_reads_the_target_net_not_the_online_net() -> None:
    """``Learner.estimate`` documents Double DQN's estimate as its evaluating (target) net:
    the bias probes of ddqn must not read the online net (mutant: ``qt[:, 0]``)."""
    learner, obs, action = _ddqn_after_one_update()
    online, target = learner.online.to_modules(), learner.target.to_modules()
    got = learner.estimate(obs, action)
    with torch.no_grad():
        want = [float(target[s](obs[s : s + 1])[0, action[s]]) for s in range(2)]
        other = [float(online[s](obs[s : s + 1])[0, action[s]]) for s in range(2)]
    assert min(abs(w - o) for w, o in zip(want, other, strict=True)) > 1e-4  # they differ
    assert got.tolist() == pytest.approx(want, abs=1e-6)


def test_update_reports_the_mean_loss_and_q_over_the_updated_members() -> None:
    """With ``update_members`` u = 2 the loss ``Learner.update`` returns per seed is the mean
    over the u updated members of each one's mean squared TD error on its own mini-batch (and
    ``q`` the mean predicted Q(s, a)); recomputed here from plain modules (mutant: the sum)."""
    gamma, b, u = 0.9, 8, 2
    learner = Learner(
        "maxmin-dqn", 3, [torch.Generator().manual_seed(5)], "mlp", (4,), 3, "rmsprop", 0.01,
        gamma=gamma, update_members=u, hidden=(8,),
    )  # fmt: skip
    data = torch.Generator().manual_seed(8)
    batch = _random_batch(data, 1, u * b, 0.3)
    members = np.array([[0, 2]])
    online, target = learner.online.to_modules(), learner.target.to_modules()
    losses, qs = [], []
    with torch.no_grad():
        for j, i in enumerate(members[0]):
            blk = slice(j * b, (j + 1) * b)
            nxt = torch.stack([t(batch["next_obs"][0, blk]) for t in target])  # (3, b, A)
            g = nxt.min(0).values.max(1).values  # Maxmin: max_a min_i
            y = batch["reward"][0, blk] + gamma * (1 - batch["terminated"][0, blk]) * g
            q = online[i](batch["obs"][0, blk]).gather(1, batch["action"][0, blk, None])[:, 0]
            losses.append(float(((q - y) ** 2).mean()))
            qs.append(float(q.mean()))
    loss, q_mean, ok = learner.update(np.array([0]), members, batch)
    assert abs(losses[0] - losses[1]) > 1e-3  # the two members' losses differ
    assert loss.tolist() == pytest.approx([(losses[0] + losses[1]) / 2], rel=1e-5)
    assert q_mean.tolist() == pytest.approx([(qs[0] + qs[1]) / 2], rel=1e-5, abs=1e-6)
    assert ok.tolist() == [True]


def test_updating_a_subset_of_seeds_uses_each_seeds_own_targets() -> None:
    """Training goes on for the live seeds when others have finished or diverged
    (``Learner.update`` with a subset of seeds): each updated seed's step must equal the one
    it takes when every seed is updated, and the others stay as they were (mutant: the
    bootstrap rows of the first seeds were used instead of the updated seeds' own)."""
    seeds, b = 3, 8

    def make() -> Learner:
        gens = [torch.Generator().manual_seed(40 + s) for s in range(seeds)]
        return Learner("maxmin-dqn", 2, gens, "mlp", (4,), 3, "rmsprop", 0.05, hidden=(8,))

    data = torch.Generator().manual_seed(2)
    batch = _random_batch(data, seeds, b)
    members = np.array([[1], [0], [1]])
    every, subset = make(), make()
    before = subset.online.flat.clone()
    every.update(np.arange(seeds), members, batch)
    live = np.array([1, 2])
    subset.update(live, members[live], {k: v[live] for k, v in batch.items()})
    n = subset.n_online
    assert torch.equal(subset.online.flat[:n], before[:n])  # seed 0 not touched
    for s in live:
        moved = every.online.flat[s * n : (s + 1) * n]
        assert not torch.equal(moved, before[s * n : (s + 1) * n])
        torch.testing.assert_close(subset.online.flat[s * n : (s + 1) * n], moved)


@pytest.mark.parametrize(
    ("point", "inside"),
    [
        ((0.3, 7.0), (0.3, 1.0)),  # above the box in y
        ((0.3, float("inf")), (0.3, 1.0)),
        ((0.3, -2.0), (0.3, 0.0)),  # below it
        ((-3.0, 0.0), (0.0, 0.0)),  # left of it in x
        ((float("inf"), 0.0), (1.0, 0.0)),
    ],
)
def test_tile_coder_clips_points_outside_the_box_in_each_dimension(point, inside) -> None:
    """``TileCoder`` documents that inputs are clipped to its box (infinite ones too): a point
    outside has the features of the nearest point of the box (mutant: y left unclipped gave
    indices past the tiling, or a crash at y = inf). Expected indices by hand: 2 tilings of
    2 x 2 tiles on [0, 1]^2, so side 5, 25 cells per tiling; scaled by 4, q = floor(4 x),
    tiling t sits at ``t * 25 + ((qx + t) // 2) * 5 + (qy + 3 t) // 2``."""
    coder = TileCoder((0.0, 0.0), (1.0, 1.0), n_tilings=2, tiles_per_dim=2)

    def by_hand(x: float, y: float) -> list[int]:
        qx, qy = int(np.floor(4 * x)), int(np.floor(4 * y))
        return [t * 25 + (qx + t) // 2 * 5 + (qy + 3 * t) // 2 for t in range(2)]

    want = by_hand(*inside)
    assert coder(*point).tolist() == want
    assert all(0 <= i < coder.n_features for i in want)


def test_rewriting_tables_drops_the_old_manifest_before_replacing_files(tmp_path: Path) -> None:
    """``save_tables`` removes a run's old manifest before it replaces the tables: a rewrite
    that stops part-way (here: the second table's name is refused after the first was
    written) leaves no manifest at all, so the run is plainly incomplete, rather than an old
    manifest that vouches for files it no longer describes (mutant: the old one kept)."""
    store = ResultsStore(tmp_path / "out")
    run = _Run("k-1")
    store.register([run])
    old, new = pd.DataFrame({"x": [1.0, 2.0]}), pd.DataFrame({"x": [3.0, 4.0, 5.0]})
    store.save_tables(run, {"a": old})
    assert store.verify_tables("k-1") is None
    with pytest.raises(ValueError, match="identifier"):
        store.save_tables(run, {"a": new, "not a name": new})
    problem = store.verify_tables("k-1")
    assert problem is not None and "missing (tables incomplete)" in problem
    store.close()


def test_metric_curves_standard_error_is_sd_over_root_n() -> None:
    """``metric_curves`` gives, per logged step, the mean over seeds and its standard error
    sd (ddof 1) / sqrt(n), NaNs left out (mutant: sd / n). By hand: step 10 holds 1, 2, 4
    (mean 7/3, sd^2 = 7/3, SE sqrt(7) / 3); step 20 holds 0, 2 and a NaN (mean 1, SE 1)."""
    metrics = pd.DataFrame(
        {
            "seed": [0, 1, 2, 0, 1, 2],
            "step": [10, 10, 10, 20, 20, 20],
            "bias_mean": [1.0, 2.0, 4.0, 0.0, 2.0, math.nan],
        }
    )
    out = T.metric_curves(metrics, "bias_mean", keys=()).sort_values("step")
    assert out["step"].tolist() == [10, 20]
    assert out["runs"].tolist() == [3, 2]
    assert out["mean"].tolist() == pytest.approx([7 / 3, 1.0])
    assert out["se"].tolist() == pytest.approx([math.sqrt(7) / 3, 1.0])


def test_choose_n_with_gamma_zero_gives_one_past_the_first_chunk() -> None:
    """With gamma = 0 every N is unbiased and ``choose_n`` documents that the tie goes to
    N = 1; it must hold when n_max spans more than one chunk of 2**20 values of N (mutant:
    a later chunk's equal gap replaced N = 1 by 2**20 + 1)."""
    assert theory.choose_n(8, gamma=0.0, n_max=2**20 + 3) == 1
    # with gamma > 0 the least biased N for M = 8 is 4: t_83 = 0.435 and t_84 = 0.529 (by
    # quadrature of int (1 - y^N)^8 dy), biases 1 - 2 t of +0.13 and -0.06; the second chunk's
    # biases are all further from 0
    assert theory.choose_n(8, n_max=2**20 + 3) == 4


def test_pooled_bias_std_pools_the_intervals_exactly() -> None:
    """``pooled_bias`` pools per-interval aggregates into the statistics of all the probes:
    checked against the raw probes themselves (mutant: the intervals' means left out of the
    pooled second moment, so the spread between intervals was lost)."""
    probes = [[-1.0, 1.0], [1.0, 3.0], [4.0]]  # seed 0's probes in three intervals
    rows = [
        {
            "seed": 0,
            "step": 100 * (i + 1),
            "bias_mean": np.mean(p),
            "bias_std": np.std(p),  # ddof 0, as logged per interval
            "bias_abs": np.mean(np.abs(p)),
            "bias_n": len(p),
        }
        for i, p in enumerate(probes)
    ]
    out = T.pooled_bias(pd.DataFrame(rows))
    every = np.concatenate(probes)
    row = out.iloc[0]
    assert row["bias_n"] == 5
    assert row["bias_mean"] == pytest.approx(every.mean())  # 1.6
    assert row["bias_std"] == pytest.approx(np.sqrt(3.04))  # mean of x^2 5.6 - 1.6^2
    assert row["bias_std"] == pytest.approx(every.std())
    assert row["bias_abs"] == pytest.approx(np.abs(every).mean())


def test_requeued_run_has_no_finish_time(tmp_path: Path) -> None:
    """``mark_pending`` puts a run back in the queue: its row is pending with the reason as
    its error and no longer carries the finish time of the attempt it undoes (mutant: the
    old ``finished`` stamp was kept on a pending row)."""
    store = ResultsStore(tmp_path / "out")
    store.register([_Run("k-1")])
    store.mark_running("k-1")
    store.mark_finished("k-1", "done")
    done = store.get("k-1")
    assert done is not None and done.finished is not None
    store.mark_pending("k-1", "tables corrupt")
    rec = store.get("k-1")
    assert rec is not None
    assert (rec.status, rec.error, rec.finished) == ("pending", "tables corrupt", None)
    store.close()


@pytest.mark.parametrize(("level", "z"), [(0.95, 1.95996), (0.5, 0.67449)])
def test_bootstrap_interval_has_the_asked_for_level(level: float, z: float) -> None:
    """``stratified_bootstrap_ci(level=...)`` is a two-sided percentile interval: cutting
    (1 - level) / 2 from each end. For the mean of 400 values the bootstrap distribution is
    close to normal with SE = std(ddof 0) / sqrt(n), so the half-width is about z SE with z
    the normal quantile of (1 + level) / 2 (mutant: 1 - level cut from each end, a 90%
    interval reported as 95%)."""
    x = np.random.default_rng(1).standard_normal(400)
    low, high = T.stratified_bootstrap_ci(
        x, lambda s: s.mean(axis=-1), reps=20_000, level=level, rng=7
    )
    se = x.std() / math.sqrt(x.size)
    assert (high - low) / 2 / se == pytest.approx(z, rel=0.04)
    assert low < x.mean() < high


def test_averaged_dqn_resume_refreshes_the_same_snapshot_as_straight_through() -> None:
    """Averaged DQN refreshes its K target snapshots round-robin; a learner restored from
    ``state_dict`` must go on with the next snapshot in turn, as the uninterrupted learner
    does (mutant: the snapshot pointer not restored, so a resumed run overwrote snapshot 0)."""

    def make() -> Learner:
        return Learner(
            "averaged-dqn", 3, [torch.Generator().manual_seed(1)], "mlp", (4,), 3, "rmsprop",
            0.05, hidden=(8,),
        )  # fmt: skip

    data = torch.Generator().manual_seed(4)

    def batch() -> dict[str, torch.Tensor]:
        return _random_batch(data, 1, 8)

    straight = make()
    one = np.zeros((1, 1), dtype=np.int64)
    for _ in range(2):  # two refreshes: snapshots 0 and 1 replaced, 2 is next
        straight.update(np.array([0]), one, batch())
        straight.sync_targets()
    resumed = make()
    resumed.load_state_dict(straight.state_dict())
    last = batch()
    for learner in (straight, resumed):
        learner.update(np.array([0]), one, {k: v.clone() for k, v in last.items()})
        learner.sync_targets()
    # the third refresh wrote snapshot 2; 0 and 1 still hold the first two online nets
    assert torch.equal(straight.target.flat[2], straight.online.flat[0])
    assert not torch.equal(straight.target.flat[0], straight.online.flat[0])
    assert torch.equal(resumed.target.flat, straight.target.flat)


def test_adam_resumed_from_its_state_dict_steps_as_if_never_stopped() -> None:
    """``MemberOptimizer.state_dict`` / ``load_state_dict`` carry each member's Adam step
    count, which sets the bias correction 1 - beta^t: a resumed optimiser must take the
    very step the uninterrupted one takes (mutant: the step counts not restored, so the
    resumed run corrected its moments as at step 1). Members get different step counts."""
    gen = torch.Generator().manual_seed(0)
    flat = torch.randn((3, 5), generator=gen)
    straight = MemberOptimizer(flat, "adam", 0.01)
    for idx in ([0, 1], [0], [0, 2], [1]):
        straight.step(torch.tensor(idx), torch.randn((len(idx), 5), generator=gen))
    resumed_flat = flat.clone()
    resumed = MemberOptimizer(resumed_flat, "adam", 0.01)
    resumed.load_state_dict(straight.state_dict())
    grad = torch.randn((3, 5), generator=gen)
    straight.step(None, grad.clone())
    resumed.step(None, grad.clone())
    assert straight.step_count.tolist() == [4.0, 3.0, 2.0]
    assert torch.equal(resumed_flat, flat)
