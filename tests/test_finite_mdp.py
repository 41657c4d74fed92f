"""A researcher's own finite MDP in maxminq.tabular.finite_mdp: input checks, the FiniteMDP
shortcuts, and the bootstrap bias recorded along a run (checked against Theorem 1's setting
by quadrature)."""

from __future__ import annotations

import numpy as np
import pytest
from docs_text import section
from scipy import integrate, stats

from maxminq.tabular.finite_mdp import (
    FiniteMDP,
    episodic_mdp,
    generalized_q_learning,
    random_mdp,
    value_iteration,
)


def chain() -> tuple[np.ndarray, np.ndarray]:
    """Three states, the last absorbing. From 0: action 0 -> 1, action 1 -> end; from 1:
    action 0 -> 0 or end (1/2 each), action 1 -> end. R = [[1, 0], [0, 2]]. By hand with
    gamma = 1: Q*(1, 1) = 2, Q*(0, 0) = 1 + 2 = 3, Q*(1, 0) = 0 + 3 / 2 = 1.5."""
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = P[1, 1, 2] = 1.0
    P[1, 0, 0] = P[1, 0, 2] = 0.5
    P[2, :, 2] = 1.0
    return P, np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])


Q_STAR = [[3.0, 0.0], [1.5, 2.0], [0.0, 0.0]]


def test_bad_transition_matrices_name_the_entry() -> None:
    P, R = chain()
    short = P.copy()
    short[1, 0, 2] = 0.4  # P[1, 0] sums to 0.9
    with pytest.raises(
        ValueError, match=r"each P\[s, a\] must sum to 1, got P\[1, 0\]\.sum\(\) = 0\.9"
    ):
        FiniteMDP(short, R, 0.9)
    negative = P.copy()
    negative[1, 0] = [1.0, 0.5, -0.5]  # sums to 1 but is no distribution
    with pytest.raises(ValueError, match=r"P must be non-negative, got P\[1, 0, 2\] = -0.5"):
        FiniteMDP(negative, R, 0.9)
    with pytest.raises(ValueError, match=r"P\[1, 0, 2\] = -0.5"):
        generalized_q_learning(negative, R, 0.9, "maxmin", 2, 1, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"P\[1, 0, 2\] = -0.5"):
        value_iteration(negative, R, 0.9)


def test_terminal_flags_may_be_zeros_and_ones() -> None:
    """0/1 flags were used as integers: ~[0, 0, 1] is [-1, -1, -2] (all "live"), so async runs
    started in and updated the absorbing state, and q[:, [0, 0, 1]] zeroed states 0 and 1."""
    P, R = chain()
    q0 = np.ones((2, 3, 2))
    runs = [
        generalized_q_learning(
            P, R, 1.0, "maxmin", 2, 1, 300, np.random.default_rng(5), mode="async",
            terminal=flags, q0=q0, reward_noise=0.5,
        )
        for flags in ([False, False, True], [0, 0, 1], np.array([0, 0, 1]))
    ]  # fmt: skip
    for res in runs:
        assert res.counts[:, 2].sum() == 0  # the absorbing state is never updated
        assert np.all(res.q[:, 2] == 0.0)
        np.testing.assert_array_equal(res.q, runs[0].q)
    np.testing.assert_allclose(value_iteration(P, R, 1.0, [0, 0, 1]), Q_STAR, atol=1e-12)
    assert FiniteMDP(P, R, 1.0, terminal=[0, 0, 1]).terminal.tolist() == [False, False, True]
    for bad in ([2], [0, 0, 2], [0.5, 0, 1]):  # an index list or a non-flag is refused
        with pytest.raises(ValueError, match="terminal must be S = 3 flags"):
            FiniteMDP(P, R, 1.0, terminal=bad)


def test_mdp_constructors_refuse_infinite_noise_and_a_seed_for_rng() -> None:
    P, R = chain()
    with pytest.raises(ValueError, match="reward_noise must be finite"):
        FiniteMDP(P, R, 0.9, reward_noise=float("inf"))
    for make in (random_mdp, episodic_mdp):  # 'int' object has no attribute 'choice'
        with pytest.raises(ValueError, match="rng must be a numpy.random.Generator, got int"):
            make(4, 2, 0)


def test_finite_mdp_learn_and_q_star_use_its_noise_and_terminal_states() -> None:
    P, R = chain()
    mdp = FiniteMDP(P, R, 1.0, reward_noise=0.3, terminal=[False, False, True])
    np.testing.assert_allclose(mdp.q_star(), Q_STAR, atol=1e-12)
    res = mdp.learn("maxmin", 3, 1, 400, np.random.default_rng(1), step_power=0.8)
    direct = generalized_q_learning(
        P, R, 1.0, "maxmin", 3, 1, 400, np.random.default_rng(1), step_power=0.8,
        reward_noise=0.3, terminal=mdp.terminal,
    )  # fmt: skip
    np.testing.assert_array_equal(res.q, direct.q)
    noiseless = generalized_q_learning(
        P, R, 1.0, "maxmin", 3, 1, 400, np.random.default_rng(1), step_power=0.8,
        terminal=mdp.terminal,
    )  # fmt: skip
    assert not np.array_equal(res.q, noiseless.q)  # the noise is not silently dropped


def normal_maxmin_mean(m: int, n: int) -> float:
    """E[max over m actions of min over n i.i.d. N(0, 1)], by quadrature of its CDF."""

    def cdf(x: float) -> float:
        return (1.0 - stats.norm.sf(x) ** n) ** m

    upper = integrate.quad(lambda x: 1.0 - cdf(x), 0.0, np.inf)[0]
    return upper - integrate.quad(cdf, -np.inf, 0.0)[0]


@pytest.mark.parametrize(("n", "expected_sign"), [(1, 1), (4, -1)])
def test_recorded_bias_is_theorem_1s_bootstrap_bias(n, expected_sign) -> None:
    """Theorem 1's setting as an MDP: 400 states whose M = 4 actions all end the episode with
    reward 2 (Q* = 2), observed with N(0, sigma^2) noise. One sync sweep with step size 1
    sets every Q^i(s, a) to its own noisy reward, so the recorded bias, the mean over states
    of max_a min_i Q^i(s, a) - 2, estimates sigma E[max_a min_i e^i_a] (quadrature)."""
    S, M, sigma = 401, 4, 0.5
    P = np.zeros((S, M, S))
    P[:, :, -1] = 1.0
    terminal = np.arange(S) == S - 1
    reward = np.where(terminal[:, None], 0.0, np.full((S, M), 2.0))
    mdp = FiniteMDP(P, reward, 1.0, reward_noise=sigma, terminal=terminal)
    res = mdp.learn(
        "maxmin", n, 1, 1, np.random.default_rng(3), update="all", step_power=1.0,
        q_star=reward, record_every=1,
    )  # fmt: skip
    per_state = res.q[:, :-1].min(axis=0).max(axis=-1)
    assert res.biases.shape == (1,) and res.error_updates.tolist() == [1]
    np.testing.assert_allclose(res.biases[0], per_state.mean() - 2.0, rtol=1e-12)
    expected = sigma * normal_maxmin_mean(M, n)  # +0.51 (N = 1), -0.16 (N = 4)
    se = sigma / np.sqrt(S - 1)  # the spread of max-min is below that of one N(0, 1)
    assert abs(res.biases[0] - expected) < 4 * se
    assert np.sign(res.biases[0]) == expected_sign


def test_recorded_bias_of_double_q_averages_both_roles() -> None:
    """Double Q: G depends on which table selects, so the recorded bias averages the two
    roles, Q^{1-i}(s, argmax_a Q^i(s, a)) for i = 0, 1 (naive loop), less V* = 2 (rewards
    0, 1, 2 of the three actions, each ending the episode)."""
    S, M = 6, 3
    P = np.zeros((S, M, S))
    P[:, :, -1] = 1.0
    terminal = np.arange(S) == S - 1
    reward = np.where(terminal[:, None], 0.0, np.arange(M, dtype=float)[None])
    res = generalized_q_learning(
        P, reward, 1.0, "double_q", 2, 1, 1, np.random.default_rng(4),
        update="all", step_power=1.0, reward_noise=1.0, terminal=terminal,
        q_star=reward, record_every=1,
    )  # fmt: skip
    q = res.q.tolist()
    values = []
    for s in range(S - 1):
        for i in (0, 1):
            select, evaluate = q[i][s], q[1 - i][s]
            values.append(evaluate[select.index(max(select))])
    np.testing.assert_allclose(res.biases, [sum(values) / len(values) - 2.0], rtol=1e-12)


def test_readme_example_runs_and_solves_the_chain() -> None:
    """The Theory example of docs/operators-and-theory.md (its own MDP from Python) runs;
    its Q* comment is the hand-solved chain above, and the result has the documented
    fields."""
    theory = section("operators-and-theory", "Theory")
    block = next(b.split("```", 1)[0] for b in theory.split("```python\n")[1:] if "learn(" in b)
    scope: dict = {}
    exec(block, scope)  # noqa: S102 (the docs' own example)
    np.testing.assert_allclose(scope["q_star"], Q_STAR, atol=1e-12)
    np.testing.assert_array_equal(scope["P"], chain()[0])
    res = scope["res"]
    assert res.q.shape == (4, 3, 2) and np.all(res.q[:, 2] == 0.0)
    assert res.error_updates.tolist() == list(range(100, 2001, 100))
    assert res.errors.shape == res.biases.shape == (20,)
    assert res.errors[-1] < res.errors[0]
