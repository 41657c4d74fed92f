"""Theorem 2 of Lan et al. (2020): tabular Generalized Q-learning converges to Q*.

Tolerance used throughout: every estimator ends within ``TOL * max(1, ||Q*||_inf)`` of Q* in
the max norm (from an all-zero start, i.e. the initial error shrinks at least tenfold).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from maxminq.tabular.finite_mdp import (
    FiniteMDP,
    episodic_mdp,
    generalized_q_learning,
    random_mdp,
    value_iteration,
)

TOL = 0.1


SWEEPS = 3000


# Operators for which the paper proves convergence (section 6): (name, N, K).
CONVERGENT = [
    ("q_learning", 1, 1),
    ("maxmin", 2, 1),
    ("maxmin", 4, 1),
    ("maxmin", 8, 1),
    ("ensemble", 4, 1),
    ("averaged", 1, 4),
    ("historical_best", 1, 4),
]


def make_mdp(kind: str) -> FiniteMDP:
    if kind == "episodic":
        return episodic_mdp(
            5, 3, np.random.default_rng(20), termination=0.3, reward_noise=0.1, branching=2
        )
    gamma = {"discounted-0.5": 0.5, "discounted-0.7": 0.7, "discounted-0.85": 0.85}[kind]
    seed = {0.5: 10, 0.7: 11, 0.85: 12}[gamma]
    return random_mdp(5, 3, np.random.default_rng(seed), gamma=gamma, reward_noise=0.1, branching=2)


def naive_bellman_optimum(mdp: FiniteMDP) -> np.ndarray:
    """Q* by enumerating every deterministic policy and solving its linear Bellman equation."""
    S, A = mdp.R.shape
    live = np.flatnonzero(~mdp.terminal)
    best_v = np.full(S, -np.inf)
    for policy in itertools.product(range(A), repeat=S):
        p_pi = np.array([mdp.P[s, policy[s]] for s in range(S)])[np.ix_(live, live)]
        r_pi = np.array([mdp.R[s, policy[s]] for s in range(S)])[live]
        v = np.zeros(S)
        v[live] = np.linalg.solve(np.eye(live.size) - mdp.gamma * p_pi, r_pi)
        best_v = np.maximum(best_v, v)
    q = mdp.R + mdp.gamma * mdp.P @ best_v
    q[mdp.terminal] = 0.0
    return q


ONE_STATE = (np.ones((1, 1, 1)), np.ones((1, 1)), 0.5)


@pytest.mark.parametrize("kind", ["discounted-0.5", "discounted-0.7", "episodic"])
def test_value_iteration_matches_policy_enumeration(kind) -> None:
    mdp = make_mdp(kind)
    q_star = value_iteration(mdp.P, mdp.R, mdp.gamma, mdp.terminal)
    np.testing.assert_allclose(q_star, naive_bellman_optimum(mdp), atol=1e-9)


def test_mdp_generators() -> None:
    mdp = make_mdp("episodic")
    assert mdp.gamma == 1.0 and mdp.terminal.tolist() == [False] * 4 + [True]
    # Every non-terminal (s, a) terminates with probability >= 0.3: all policies proper.
    assert np.all(mdp.P[:4, :, 4] >= 0.3)
    assert np.all((mdp.P[:4, :, :4] > 0).sum(axis=-1) <= 2)
    disc = random_mdp(6, 2, np.random.default_rng(0), gamma=0.9, branching=3)
    assert np.all((disc.P > 0).sum(axis=-1) == 3)
    np.testing.assert_allclose(disc.P.sum(axis=-1), 1.0)


@pytest.mark.parametrize(
    "kind", ["discounted-0.5", "discounted-0.7", "discounted-0.85", "episodic"]
)
def test_theorem_2_convergence(kind) -> None:
    """Every estimator of every convergent variant reaches Q* (sync sweeps, all estimators
    updated each sweep from their own samples, step sizes visits^-0.8)."""
    mdp = make_mdp(kind)
    q_star = value_iteration(mdp.P, mdp.R, mdp.gamma, mdp.terminal)
    scale = max(1.0, float(np.abs(q_star).max()))
    for i, (name, n, k) in enumerate(CONVERGENT):
        res = generalized_q_learning(
            mdp.P,
            mdp.R,
            mdp.gamma,
            name,
            n,
            k,
            SWEEPS,
            np.random.default_rng(100 + i),
            update="all",
            reward_noise=mdp.reward_noise,
            terminal=mdp.terminal,
            step_power=0.8,
        )
        assert res.q.shape == (n, 5, 3) and res.history.shape == (k, n, 5, 3)
        err = res.max_error(q_star)
        assert err <= TOL * scale, (kind, name, n, k, err)
        assert np.all(res.q[:, mdp.terminal] == 0.0)  # absorbing values stay at zero


@pytest.mark.parametrize("n", [2, 4])
def test_algorithm_1_one_random_estimator_per_sample(n) -> None:
    """Maxmin as in Algorithm 1 (one estimator updated per sample); error shrinks to TOL."""
    mdp = make_mdp("discounted-0.5")
    q_star = value_iteration(mdp.P, mdp.R, mdp.gamma)
    res = generalized_q_learning(
        mdp.P,
        mdp.R,
        mdp.gamma,
        "maxmin",
        n,
        1,
        SWEEPS,
        np.random.default_rng(7),
        reward_noise=mdp.reward_noise,
        step_power=0.8,
        q_star=q_star,
        record_every=100,
    )
    assert res.errors[-1] <= TOL * max(1.0, float(np.abs(q_star).max()))
    assert res.errors[-1] < 0.5 * res.errors[0]
    # Each estimator gets about 1/n of the SWEEPS updates of each (s, a).
    assert res.counts.sum() == SWEEPS * 15
    assert np.all(np.abs(res.counts / (SWEEPS / n) - 1) < 0.15)


@pytest.mark.parametrize(("name", "n", "k"), [("q_learning", 1, 1), ("maxmin", 2, 1)])
def test_async_trajectory_updates_converge(name, n, k) -> None:
    mdp = make_mdp("discounted-0.5")
    q_star = value_iteration(mdp.P, mdp.R, mdp.gamma)
    res = generalized_q_learning(
        mdp.P,
        mdp.R,
        mdp.gamma,
        name,
        n,
        k,
        15_000,
        np.random.default_rng(3),
        mode="async",
        reward_noise=mdp.reward_noise,
        step_power=0.8,
    )
    assert res.counts.sum() == 15_000
    assert res.max_error(q_star) <= TOL * max(1.0, float(np.abs(q_star).max()))


def test_async_updates_follow_the_sampled_trajectory() -> None:
    """Async mode walks the MDP (s' becomes the next state; a restart only after a terminal
    one): on the deterministic cycle 0 -> 1 -> 2 -> 0 every state is updated exactly once in
    each three steps, whichever state the walk starts in; restarting at random states would
    give unequal counts (and converge all the same, so the convergence tests miss it)."""
    P = np.zeros((3, 2, 3))
    for s in range(3):
        P[s, :, (s + 1) % 3] = 1.0
    res = generalized_q_learning(
        P, np.ones((3, 2)), 0.5, "maxmin", 2, 1, 300, np.random.default_rng(6), mode="async",
    )  # fmt: skip
    assert res.counts.sum(axis=(0, 2)).tolist() == [100, 100, 100]


def test_async_episodic_restarts_and_keeps_terminal_zero() -> None:
    mdp = make_mdp("episodic")
    res = generalized_q_learning(
        mdp.P,
        mdp.R,
        1.0,
        "maxmin",
        2,
        1,
        3000,
        np.random.default_rng(4),
        mode="async",
        terminal=mdp.terminal,
        init_scale=0.1,
    )
    assert res.counts[:, 4].sum() == 0  # the absorbing state is never updated
    assert np.all(res.q[:, 4] == 0.0)
    assert np.all(res.counts[:, :4].sum(axis=0) > 50)  # restarts keep every pair visited


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("name", "k", "expected"),
    [
        # Q_t = Q_{t-1} + (1/t) (1 + 0.5 G_t - Q_{t-1}), by hand:
        ("q_learning", 1, [1.0, 1.25, 1.375]),  # G_t = Q_{t-1}
        ("historical_best", 2, [1.0, 1.25, 1.375]),  # max(Q_{t-1}, Q_{t-2}) = Q_{t-1} here
        ("averaged", 2, [1.0, 1.125, 1.125 + (1.53125 - 1.125) / 3]),  # mean of Q_{t-1}, Q_{t-2}
    ],
)
def test_hand_computed_updates(mode, name, k, expected) -> None:
    P, R, gamma = ONE_STATE
    for steps, value in enumerate(expected, start=1):
        res = generalized_q_learning(
            P, R, gamma, name, 1, k, steps, np.random.default_rng(0), mode=mode, step_power=1.0
        )
        assert res.q[0, 0, 0] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(("name", "target"), [("maxmin", 1.5), ("ensemble", 2.0)])
def test_hand_computed_targets_of_n_estimators(name, target) -> None:
    # One state, two actions, r = 1, gamma = 1/2, step size 1 at the first visit (update all).
    # Q^0 = [3, 0], Q^1 = [1, 2]. Maxmin: min over estimators [1, 0], max 1 -> 1 + 0.5 = 1.5;
    # ensemble: mean [2, 1], max 2 -> 2.0 (Q-learning on Q^0 alone would give 2.5).
    P, R = np.ones((1, 2, 1)), np.ones((1, 2))
    q0 = np.array([[[3.0, 0.0]], [[1.0, 2.0]]])
    res = generalized_q_learning(
        P, R, 0.5, name, 2, 1, 1, np.random.default_rng(0), update="all", step_power=1.0,
        q0=q0,
    )  # fmt: skip
    np.testing.assert_allclose(res.q, np.full((2, 1, 2), target), atol=1e-12)


def test_snapshot_every_delays_the_history() -> None:
    P, R, gamma = ONE_STATE
    # Averaged, K = 2, a snapshot pushed before updates 1, 3, 5, ... (after the target):
    # t=1: mean(0, 0) = 0 -> Q1 = 1; t=2: mean(Q1, Q0) = 0.5 -> Q2 = 1 + (1.25 - 1) / 2;
    # t=3: the older member is still Q0 = 0: mean(1.125, 0) -> target 1.28125.
    res = generalized_q_learning(
        P, R, gamma, "averaged", 1, 2, 3, np.random.default_rng(0), step_power=1.0,
        snapshot_every=2,
    )  # fmt: skip
    assert res.q[0, 0, 0] == pytest.approx(1.125 + (1.28125 - 1.125) / 3, abs=1e-12)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_double_q_swaps_roles_for_the_second_estimator(mode) -> None:
    # One state, two actions, r = 0, gamma = 1/2, alpha = 1 on the first visit.
    # Q^0 = [1, 2], Q^1 = [5, 3]. Updating Q^0: argmax Q^0 = 1, Q^1(1) = 3 -> target 1.5.
    # Updating Q^1: argmax Q^1 = 0, Q^0(0) = 1 -> target 0.5 (van Hasselt 2010's swap).
    P, R = np.ones((1, 2, 1)), np.zeros((1, 2))
    q0 = np.array([[[1.0, 2.0]], [[5.0, 3.0]]])
    if mode == "sync":
        res = generalized_q_learning(
            P, R, 0.5, "double_q", 2, 1, 1, np.random.default_rng(0), update="all",
            step_power=1.0, q0=q0,
        )  # fmt: skip
        np.testing.assert_allclose(res.q, [[[1.5, 1.5]], [[0.5, 0.5]]], atol=1e-12)
    else:
        # Async: the first update touches one (estimator, action); check it against the rule.
        res = generalized_q_learning(
            P, R, 0.5, "double_q", 2, 1, 1, np.random.default_rng(0), mode="async",
            step_power=1.0, q0=q0,
        )  # fmt: skip
        (i,), (_,), (a,) = np.nonzero(res.counts)
        expected = q0.copy()
        expected[i, 0, a] = 1.5 if i == 0 else 0.5
        np.testing.assert_allclose(res.q, expected, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"operator": "nope"}, "operator"),
        ({"n": 0}, "n must"),
        ({"k": 1.5}, "k must"),
        ({"mode": "batch"}, "mode"),
        ({"update": "some"}, "update"),
        ({"mode": "async", "update": "all"}, "update='all'"),
        ({"step_power": 0.5}, "step_power"),
        ({"step_power": 1.2}, "step_power"),
        ({"reward_noise": -1.0}, "reward_noise"),
        ({"operator": "double_q", "n": 3}, "exactly 2"),
        ({"gamma": 1.0}, "absorbing"),
        ({"gamma": 1.5}, "gamma"),
        ({"P": np.ones((5, 3, 5))}, "sum to 1"),
        ({"R": np.zeros((5, 2))}, "R must"),
        ({"q_star": np.zeros(3)}, "q_star"),
        ({"q0": np.zeros((1, 5, 3))}, "q0"),
        # what only gave NaN tables or an error deep inside the solver
        ({"rng": 0}, "rng must be a numpy.random.Generator, got int"),
        ({"n": True}, "n must be an integer >= 1, got True"),
        ({"record_every": -1}, "record_every must be an integer >= 0"),
        ({"record_every": 2.0}, "record_every must be an integer >= 0"),
        ({"init_scale": float("nan")}, "init_scale must be finite"),
        ({"reward_noise": float("inf")}, "reward_noise must be finite"),
        ({"q0": np.full((2, 5, 3), np.nan)}, "q0 must be finite"),
    ],
)
def test_solver_rejects_bad_arguments(kwargs, match) -> None:
    mdp = make_mdp("discounted-0.5")
    args = {
        "P": mdp.P,
        "R": mdp.R,
        "gamma": 0.5,
        "operator": "maxmin",
        "n": 2,
        "k": 1,
        "steps": 10,
        "rng": np.random.default_rng(0),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        generalized_q_learning(**args)


def test_value_iteration_rejects_improper_and_bad_input() -> None:
    mdp = make_mdp("discounted-0.5")
    with pytest.raises(ValueError, match="absorbing"):
        value_iteration(mdp.P, mdp.R, 1.0)
    terminal = np.zeros(5, dtype=bool)
    terminal[0] = True
    with pytest.raises(ValueError, match="terminal state 0"):
        value_iteration(mdp.P, mdp.R, 0.9, terminal)
    with pytest.raises(ValueError, match="reward_noise"):
        FiniteMDP(mdp.P, mdp.R, 0.5, reward_noise=-0.1)


def test_finite_mdp_takes_lists() -> None:
    """A two-state chain written as lists (it failed with "'list' object has no attribute
    'size'"): reward 1 then absorption, so Q*(0) = 1 by hand with gamma = 1."""
    mdp = FiniteMDP([[[0.0, 1.0]], [[0.0, 1.0]]], [[1.0], [0.0]], 1.0, terminal=[False, True])
    assert mdp.n_states == 2 and mdp.terminal.tolist() == [False, True]
    np.testing.assert_allclose(value_iteration(mdp.P, mdp.R, mdp.gamma, mdp.terminal), [[1], [0]])
