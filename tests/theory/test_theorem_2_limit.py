"""Theorem 2's limit is Q* itself, not a point near it.

tests/theory/test_convergence.py runs the convergent operators on noisy MDPs and accepts an
error up to a tenth of ||Q*||: on its episodic MDP a G with a constant offset
(``bias_corrected`` with sigma = 0.1, whose fixed point is 0.19 from Q*) passes that bound
too. Here the MDP has deterministic transitions and rewards and the estimators start at
random values, so each operator's iteration is a contraction with nothing left to average:
every operator Theorem 2 covers must end at Q* to 1e-5 (1e-10 to 2e-7 after 1,000
updates of each estimator), and a G off by a constant must end at its own fixed point,
worked out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.tabular.finite_mdp import generalized_q_learning, random_mdp

# The operators for which Lan et al. (2020), section 6, prove convergence: (name, N, K).
COVERED = [
    ("q_learning", 1, 1),
    ("maxmin", 2, 1),
    ("maxmin", 4, 1),
    ("maxmin", 8, 1),
    ("ensemble", 4, 1),
    ("averaged", 1, 4),
    ("historical_best", 1, 4),
]
SWEEPS = 1000


def deterministic_mdp():  # one successor per (s, a): P is one-hot
    mdp = random_mdp(5, 3, np.random.default_rng(1), gamma=0.5, branching=1)
    assert ((mdp.P > 0).sum(axis=-1) == 1).all() and mdp.reward_noise == 0.0
    return mdp


@pytest.mark.parametrize("update", ["all", "one"])  # "one": Algorithm 1, one estimator a sweep
def test_every_covered_operator_ends_at_q_star(update: str) -> None:
    mdp = deterministic_mdp()
    q_star = mdp.q_star()
    for i, (name, n, k) in enumerate(COVERED):
        sweeps = SWEEPS * (n if update == "one" else 1)  # as many updates of each estimator
        res = generalized_q_learning(mdp.P, mdp.R, mdp.gamma, name, n, k, sweeps,
                                     np.random.default_rng(i), update=update, init_scale=1.0,
                                     step_power=0.6, q_star=q_star, record_every=1)  # fmt: skip
        assert res.errors[0] > 0.1, (name, n, k)  # one sweep in, still far from Q*
        assert res.max_error(q_star) < 1e-5, (name, n, k, res.max_error(q_star))


def test_a_g_off_by_a_constant_ends_off_by_its_own_offset() -> None:
    """The same run with G = max_a Q - sigma E[max of 3 N(0, 1)] (Assumption 1 (i) fails):
    every value ends gamma sigma E / (1 - gamma) below Q*, E = 3 / (2 sqrt(pi)) for three
    actions. A bound loose enough to accept this offset would not test the limit."""
    mdp = deterministic_mdp()
    sigma, gamma = 0.01, mdp.gamma
    offset = gamma * sigma * (3 / (2 * np.sqrt(np.pi))) / (1 - gamma)  # 0.00846
    res = generalized_q_learning(mdp.P, mdp.R, gamma, "bias_corrected", 1, 1, SWEEPS,
                                 np.random.default_rng(0), update="all", init_scale=1.0,
                                 step_power=0.6, operator_kwargs={"sigma": sigma})  # fmt: skip
    np.testing.assert_allclose(res.q[0] - mdp.q_star(), -offset, atol=1e-5)
