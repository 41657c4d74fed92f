"""Tests written to kill mutants that the rest of the suite let live (session 16, mutation
testing by hand). Each test pins one documented behaviour that a small plausible bug changed
without any other test noticing; expected values come from plain re-computations here, not
from the code under test."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq.deep.agents import Learner

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _ddqn_after_one_update(seeds: int = 2) -> tuple[Learner, torch.Tensor, torch.Tensor]:
    """A Double DQN learner whose online nets have moved away from its target nets (one
    update, no sync), plus observations (S, 4) and actions (S,) to probe it with."""
    gens = [torch.Generator().manual_seed(11 + s) for s in range(seeds)]
    learner = Learner("ddqn", 1, gens, "mlp", (4,), 3, "adam", 0.05, hidden=(8,))
    data = torch.Generator().manual_seed(3)
    b = 16
    batch = {
        "obs": torch.randn((seeds, b, 4), generator=data),
        "next_obs": torch.randn((seeds, b, 4), generator=data),
        "action": torch.randint(0, 3, (seeds, b), generator=data),
        "reward": torch.randn((seeds, b), generator=data),
        "terminated": torch.zeros((seeds, b)),
    }
    learner.update(np.arange(seeds), np.zeros((seeds, 1), dtype=np.int64), batch)
    obs = torch.randn((seeds, 4), generator=data)
    action = torch.tensor([2, 0][:seeds])
    return learner, obs, action


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
