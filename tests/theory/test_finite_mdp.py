"""A researcher's own finite MDP in maxminq.tabular.finite_mdp: input checks, value
iteration and proper policies, the FiniteMDP shortcuts, learning with a library operator or
a G of one's own (NumPy or torch, sync or async), and the bootstrap bias recorded along a
run (checked against Theorem 1's setting by quadrature)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import torch
from docs_text import section
from own_operators import median_np
from scipy import integrate, stats

from maxminq.tabular.finite_mdp import (
    FiniteMDP,
    episodic_mdp,
    generalized_q_learning,
    random_mdp,
    value_iteration,
)
from maxminq.theory import operator_bias

_RNG_MDP = random_mdp(3, 2, np.random.default_rng(0))


def looping_mdp(reward: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """State 0: action 0 loops back to 0 with ``reward``, action 1 ends (state 1, absorbing).
    The policy "always action 0" never ends: improper."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = 1.0
    P[1, :, 1] = 1.0
    return P, np.array([[reward, 0.0], [0.0, 0.0]]), np.array([False, True])


def brute_force_all_proper(P: np.ndarray, terminal: np.ndarray) -> bool:
    """Every deterministic stationary policy reaches a terminal state from every state (an
    improper policy exists iff a deterministic stationary one does): reachability in the
    policy's transition graph by repeated squaring of its adjacency matrix."""
    S, A, _ = P.shape
    for policy in itertools.product(range(A), repeat=S):
        reach = np.array([P[s, policy[s]] > 0 for s in range(S)]) | np.eye(S, dtype=bool)
        for _ in range(S):
            reach = (reach.astype(int) @ reach.astype(int)) > 0
        if not reach[:, terminal].any(axis=1).all():
            return False
    return True


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


def normal_maxmin_mean(m: int, n: int) -> float:
    """E[max over m actions of min over n i.i.d. N(0, 1)], by quadrature of its CDF."""

    def cdf(x: float) -> float:
        return (1.0 - stats.norm.sf(x) ** n) ** m

    upper = integrate.quad(lambda x: 1.0 - cdf(x), 0.0, np.inf)[0]
    return upper - integrate.quad(cdf, -np.inf, 0.0)[0]


_MDP = random_mdp(3, 2, np.random.default_rng(0), reward_noise=0.2)


def median_torch_out(q: np.ndarray) -> torch.Tensor:
    """The same G computed with torch: NumPy in, a torch tensor out (odd N: torch's median
    is NumPy's)."""
    return torch.as_tensor(q).median(dim=-2).values.max(dim=-1).values


def test_value_iteration_refuses_a_tolerance_it_can_never_meet():
    """tol <= 0 is never met: value iteration ran every sweep (10^6 by default, 18 s) and then
    blamed the MDP ("did not converge ... (improper?)"); the same for max_iter = 0."""
    P, R = _RNG_MDP.P, _RNG_MDP.R
    for tol in (-1.0, 0.0, float("nan")):
        with pytest.raises(ValueError, match=r"^tol must be a finite number > 0"):
            value_iteration(P, R, 0.9, tol=tol, max_iter=50)
    with pytest.raises(ValueError, match=r"^max_iter must be an integer >= 1"):
        value_iteration(P, R, 0.9, max_iter=0)
    with pytest.raises(ValueError, match=r"^tol must be"):
        _RNG_MDP.q_star(tol=0.0)
    # A reachable tolerance still converges: Q* = R at gamma = 0, by hand.
    np.testing.assert_array_equal(value_iteration(P, R, 0.0, tol=1e-9), R)


def test_learning_refuses_a_q_star_that_is_not_finite():
    """A NaN in q_star made every recorded error and bias NaN, without a word."""
    q_star = _RNG_MDP.q_star()
    q_star[1, 0] = np.nan
    with pytest.raises(ValueError, match="q_star must be finite"):
        _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), q_star=q_star)


def test_too_many_members_for_double_q_names_n_and_k():
    """double_q with k = 2 snapshots said only "q must stack exactly 2 estimator(s) on axis -2,
    got 4": the 4 is n x k, which the caller never wrote."""
    with pytest.raises(ValueError, match=r"n = 2 estimators x k = 2 snapshots = 4 members"):
        _RNG_MDP.learn("double_q", 2, 2, 5, np.random.default_rng(0))
    # A bad parameter is G's own error first, the count only as context (it came first and
    # read as the cause: "n = 2 estimators x k = 1 snapshots = 2 members: ... c must be > 0").
    with pytest.raises(ValueError, match=r"^weighted_double_q: c must be > 0, got -1 \(G appl"):
        _RNG_MDP.learn(
            "weighted_double_q", 2, 1, 5, np.random.default_rng(0), operator_kwargs={"c": -1}
        )


@pytest.mark.parametrize("name", ["double_q", "weighted_double_q"])
def test_library_operator_function_learns_as_its_name(name: str) -> None:
    """``generalized_q_learning`` takes 'a key of OPERATORS or a G function'. Passing the
    library's own ``operators.double_q`` skipped van Hasselt's swap: estimator 0 selected
    the action for every update, so each table was updated by another rule than with the
    name 'double_q' (last bias 0.100 against 0.078 on this MDP), and the recorded bias was
    of one role only."""
    from maxminq import operators
    from maxminq.tabular.finite_mdp import random_mdp

    mdp = random_mdp(4, 3, np.random.default_rng(0), gamma=0.8, reward_noise=1.0)
    q_star = mdp.q_star()
    by_name, by_function = (
        mdp.learn(op, 2, 1, 300, np.random.default_rng(1), q_star=q_star, init_scale=1.0)
        for op in (name, operators.OPERATORS[name])
    )
    np.testing.assert_array_equal(by_function.q, by_name.q)
    np.testing.assert_array_equal(by_function.biases, by_name.biases)


def test_gamma_one_with_an_improper_policy_is_refused_at_once() -> None:
    """With reward +1 on the loop Q*(0, 0) is infinite: value iteration ran 10^6 sweeps (18 s)
    before failing, and Generalized Q-learning silently drifted upwards (Q(0, 0) = 35 after
    2,000 sweeps); both now stop at the check, naming the state and the action."""
    P, R, terminal = looping_mdp(1.0)
    words = "every policy to reach a terminal state.*action 0 in state 0"
    with pytest.raises(ValueError, match=words):
        FiniteMDP(P, R, 1.0, terminal=terminal)
    with pytest.raises(ValueError, match=words):
        value_iteration(P, R, 1.0, terminal)
    with pytest.raises(ValueError, match=words):
        generalized_q_learning(
            P, R, 1.0, "maxmin", 2, 1, 2000, np.random.default_rng(0), terminal=terminal
        )
    # discounted, the same MDP is fine: Q*(0, 0) = 1 / (1 - 0.5) = 2, Q*(0, 1) = 0
    np.testing.assert_allclose(value_iteration(P, R, 0.5, terminal), [[2.0, 0.0], [0.0, 0.0]])


def test_a_trap_of_several_states_is_found_and_a_way_out_by_chance_is_proper() -> None:
    """States 0 and 1 each have an action to the other (a two-state trap) and one to the end
    (state 2): improper. Give state 1's action a 1/2 chance to end instead and every policy
    ends with probability one (proper), though no action of state 0 ends at once."""
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[1, 0, 0] = 1.0
    P[0, 1, 2] = P[1, 1, 2] = 1.0
    P[2, :, 2] = 1.0
    R = np.zeros((3, 2))
    terminal = np.array([False, False, True])
    with pytest.raises(ValueError, match="action 0 in state 0"):
        FiniteMDP(P, R, 1.0, terminal=terminal)
    P[1, 0] = [0.5, 0.0, 0.5]
    P[0, 1] = [0.0, 1.0, 0.0]  # state 0 can only go to 1
    mdp = FiniteMDP(P, R + [[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]], 1.0, terminal=terminal)
    # by hand: Q(1, 0) = 2 + Q(0) / 2 and Q(0) = 1 + Q(1) with Q(1) = max(Q(1, 0), 0):
    # Q(1) = 2 + (1 + Q(1)) / 2, so Q(1) = 5, Q(0, 0) = 6 and Q(0, 1) = 5
    np.testing.assert_allclose(mdp.q_star(), [[6.0, 5.0], [5.0, 0.0], [0.0, 0.0]], atol=1e-9)


def test_properness_check_agrees_with_enumerating_the_policies() -> None:
    rng = np.random.default_rng(5)
    seen = {True: 0, False: 0}
    for _ in range(150):
        S, A = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        P = np.zeros((S, A, S))
        for s in range(S - 1):
            for a in range(A):
                succ = rng.choice(S, size=int(rng.integers(1, 3)), replace=False)
                P[s, a, succ] = rng.dirichlet(np.ones(succ.size))
        P[S - 1, :, S - 1] = 1.0
        terminal = np.arange(S) == S - 1
        proper = brute_force_all_proper(P, terminal)
        seen[proper] += 1
        if proper:
            FiniteMDP(P, np.zeros((S, A)), 1.0, terminal=terminal)
        else:
            with pytest.raises(ValueError, match="every policy to reach a terminal state"):
                FiniteMDP(P, np.zeros((S, A)), 1.0, terminal=terminal)
    assert min(seen.values()) >= 20  # both kinds of MDP were drawn


def test_sync_sweeps_never_draw_a_transition_of_probability_zero() -> None:
    """Sync mode drew s' as the number of cumulative probabilities below u: at u = 0 (which
    Generator.random can return) that is state 0 even where P(s, a, 0) = 0, and at u equal to
    a cumulative value it is the state before the boundary. The draw now matches async mode's
    searchsorted(side="right"): the first state whose cumulative probability exceeds u."""
    from maxminq.tabular.finite_mdp import _next_states

    P = np.array([[0.0, 0.5, 0.0, 0.5], [0.25, 0.25, 0.5, 0.0]])
    cdf = np.cumsum(P, axis=-1)
    for u in (0.0, 0.25, 0.5, 0.7, 1.0 - 2**-53):
        got = _next_states(cdf, np.full((2, 1), u))
        expected = [int(np.searchsorted(row, u, side="right")) for row in cdf]
        assert got.tolist() == expected
        assert all(P[i, s] > 0 for i, s in enumerate(got))  # never a zero-probability state
    # the cap: a cumulative sum that rounds below 1 still gives the last state, not S
    assert _next_states(np.array([[0.3, 1.0 - 1e-16]]), np.array([[1.0 - 2**-53]])).tolist() == [1]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_td_target_of_a_terminal_transition_is_its_reward_whatever_g_is(backend) -> None:
    """r + gamma (1 - 1) G was NaN for an infinite or NaN G (0 * inf): a diverged network's
    value of a terminal state made the terminal target NaN in NumPy and torch, while the
    compiled twin gave the reward. Non-terminal targets still carry G's inf or NaN."""
    import torch

    from maxminq.operators import td_target
    from maxminq.operators_jit import td_target as compiled

    def wrap(values: list) -> object:  # float64 in both, so the sums are the same
        return torch.from_numpy(np.array(values)) if backend == "torch" else np.array(values)

    reward = wrap([-1.0, 2.0, 0.5, 3.0])
    done = wrap([True, True, False, False])
    g = wrap([math.inf, math.nan, math.inf, 4.0])
    got = np.asarray(td_target(reward, 0.9, done, g), dtype=float)
    assert got[:2].tolist() == [-1.0, 2.0]  # terminal: the reward
    assert got[2] == math.inf and got[3] == pytest.approx(3.0 + 0.9 * 4.0, abs=0)
    for i in range(4):  # as the compiled twin, element by element
        want = compiled(float(reward[i]), 0.9, bool(done[i]), float(g[i]))
        assert got[i] == want or (math.isnan(got[i]) and math.isnan(want))
    assert td_target(-1.0, 0.9, True, math.nan) == -1.0  # plain numbers too
    assert td_target(-1.0, 0.9, 1.0, -math.inf) == -1.0  # a 0/1 float flag too


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


def test_async_learning_gives_a_g_of_ones_own_a_batch_axis_too() -> None:
    """Async mode gave G one state's (N K, A) values with no batch axis; a G that counted
    axes from the front passed the batched check and failed at the first transition with
    NumPy's 'axis 1 is out of bounds for array of dimension 1'. (Async mode now passes one
    state as a batch of one, (1, N K, A), so such a G learns there as in sync mode.)"""
    rng = np.random.default_rng(0)
    mdp = random_mdp(4, 2, rng, gamma=0.8)

    def front(q: np.ndarray) -> np.ndarray:
        return np.median(q, axis=1).max(axis=1)

    def end(q: np.ndarray) -> np.ndarray:
        return np.median(q, axis=-2).max(axis=-1)

    for mode in ("sync", "async"):
        runs = [mdp.learn(g, 3, 1, 10, np.random.default_rng(1), mode=mode) for g in (front, end)]
        assert runs[0].q.shape == (3, 4, 2) and np.array_equal(runs[0].q, runs[1].q)


def test_finite_mdp_names_a_g_given_by_reference_as_the_user_named_it(tmp_path, monkeypatch):
    # own_operator takes the name to show (the classic experiments rewrote its messages'
    # "operator 'everything'" into the reference; FiniteMDP.learn showed the __name__).
    import numpy as np

    from maxminq.tabular.finite_mdp import random_mdp

    (tmp_path / "lead21_shape.py").write_text("def everything(q):\n    return q.max()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mdp = random_mdp(4, 2, np.random.default_rng(0), gamma=0.8)
    with pytest.raises(ValueError, match=r"^operator 'lead21_shape:everything' must map q"):
        mdp.learn("lead21_shape:everything", 3, 1, 10, np.random.default_rng(1))


@pytest.mark.parametrize("key", ["reward_noise", "terminal", "P", "R", "gamma"])
def test_learn_names_an_mdp_setting_passed_as_an_option_and_what_to_do(key: str) -> None:
    with pytest.raises(TypeError) as err:
        _MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), **{key: 0.5})
    text = str(err.value)
    assert "\n" not in text and "multiple values" not in text
    assert text.startswith(f"learn: {key} is the MDP's own")
    assert f"dataclasses.replace(mdp, {key}=...)" in text


def test_the_advised_replace_learns_with_the_other_noise() -> None:
    """What the error advises works: the replaced MDP learns with its noise (a noiseless
    copy learns another table from the same random stream; the original keeps its noise)."""
    quiet = dataclasses.replace(_MDP, reward_noise=0.0)
    assert quiet.reward_noise == 0.0 and _MDP.reward_noise == 0.2
    a = quiet.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    b = _MDP.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    assert not np.allclose(a, b)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_learn_takes_a_g_that_returns_torch_tensors_as_operator_bias_does(mode: str) -> None:
    """operator_bias read a G's torch result as NumPy; FiniteMDP.learn passed both shape
    checks, then failed at the first update with td_target's 'must be all torch tensors or all
    NumPy arrays', which named neither G nor what to do. Now it learns what the NumPy G does."""
    mdp = random_mdp(4, 2, np.random.default_rng(0), gamma=0.8, reward_noise=0.5)
    q_star = mdp.q_star()
    steps = 30 if mode == "sync" else 400
    runs = [
        mdp.learn(g, 3, 1, steps, np.random.default_rng(1), mode=mode, q_star=q_star)
        for g in (median_np, median_torch_out)
    ]
    assert np.array_equal(runs[0].q, runs[1].q) and np.array_equal(runs[0].biases, runs[1].biases)
    assert runs[1].q.dtype == np.float64 and runs[1].counts.sum() > 0
    bias = [operator_bias(g, 4, 3, 1.0, 1.0, 500, np.random.default_rng(2)).bias for g in
            (median_np, median_torch_out)]  # fmt: skip
    assert bias[0] == bias[1]


def test_async_mode_learns_the_operator_a_front_counting_g_computes_in_sync_mode() -> None:
    """Async mode passed one state's (N K, A) values without a batch axis. A G counting axes
    from the front, q.min(axis=1).max(axis=-1) (Maxmin for (states, N, A)), then took the min
    over actions and the max over members: it passed every check and learnt max_i min_a Q^i
    in async mode only (error 5.2 against Maxmin's 0.52 after 20,000 transitions here), while
    sync mode learnt Maxmin. Now both modes learn what operators.maxmin does, bit for bit."""
    mdp = random_mdp(5, 3, np.random.default_rng(0), gamma=0.8, reward_noise=0.5)
    q_star = mdp.q_star()

    def maxmin_front(q: np.ndarray) -> np.ndarray:
        return q.min(axis=1).max(axis=-1)

    own, library = (
        mdp.learn(g, 3, 1, 300, np.random.default_rng(1), mode="async", q_star=q_star)
        for g in (maxmin_front, "maxmin")
    )
    assert np.array_equal(own.q, library.q) and np.array_equal(own.biases, library.biases)
    assert library.counts.sum() == 300
