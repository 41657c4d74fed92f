"""Adversarial review of the core (session 13): edge inputs of the tile coder, the finite-MDP
solver and the theory functions that gave wrong numbers, long waits or tracebacks. Every
expected value here is derived by hand or by an independent computation in the test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from maxminq import theory
from maxminq.linear.tiles import TileCoder
from maxminq.tabular.finite_mdp import FiniteMDP, generalized_q_learning, value_iteration

# --- tile coder -------------------------------------------------------------------------------


def test_tile_coder_refuses_a_nan_point_instead_of_indexing_past_its_features() -> None:
    """floor(NaN) became a huge integer: indices ~5.8e18, far past n_features = 968, which
    would index outside any weight vector of that size."""
    coder = TileCoder((-1.2, -0.07), (0.5, 0.07))
    for point in ((math.nan, 0.0), (0.0, math.nan)):
        with pytest.raises(ValueError, match="NaN"):
            coder(*point)
    # infinite coordinates are outside the box, so they clip to its corners like any other
    assert coder(math.inf, math.inf).tolist() == coder(0.5, 0.07).tolist()
    assert coder(-math.inf, -math.inf).tolist() == coder(-1.2, -0.07).tolist()
    assert 0 <= coder(math.inf, -math.inf).min() <= coder(math.inf, -math.inf).max() < 968


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"n_tilings": 2.5}, "n_tilings must be a whole number"),  # was read as 2
        ({"n_tilings": True}, "n_tilings must be a whole number"),  # was read as 1
        ({"tiles_per_dim": 0}, "tiles_per_dim must be a whole number"),
        ({"hi": (math.inf, 1.0)}, "finite"),  # every point fell in tile 0
        ({"lo": (-1e308, 0.0), "hi": (1e308, 1.0)}, "finite"),  # width inf: tile 0 again
        ({"hi": (0.0, 1.0)}, "lo < hi"),
    ],
)
def test_tile_coder_refuses_bad_settings(kwargs, words) -> None:
    args = {"lo": (0.0, 0.0), "hi": (1.0, 1.0), **kwargs}
    with pytest.raises(ValueError, match=words):
        TileCoder(**args)


def test_tile_coder_with_other_tilings_stays_inside_its_features() -> None:
    """The dense grid's side (tiles + 3) holds the 1, 3 displacement at every tiling count:
    checked at the box's corners, where the displacement reaches furthest, against the
    displacement worked out here (ix = (q + t) // T, iy = (q + 3 t) // T)."""
    for n_tilings in (1, 2, 3, 7, 16):
        for tiles in (1, 4, 8):
            coder = TileCoder((0.0, 0.0), (1.0, 1.0), n_tilings, tiles)
            side = tiles + 3
            for x, y in ((0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)):
                q = [int(x * tiles * n_tilings), int(y * tiles * n_tilings)]
                expected = [
                    t * side * side + ((q[0] + t) // n_tilings) * side + (q[1] + 3 * t) // n_tilings
                    for t in range(n_tilings)
                ]
                got = coder(x, y)
                assert got.tolist() == expected
                assert got.max() < coder.n_features


# --- finite MDPs: Theorem 2 (ii) needs every policy proper ------------------------------------


def looping_mdp(reward: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """State 0: action 0 loops back to 0 with ``reward``, action 1 ends (state 1, absorbing).
    The policy "always action 0" never ends: improper."""
    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = 1.0
    P[1, :, 1] = 1.0
    return P, np.array([[reward, 0.0], [0.0, 0.0]]), np.array([False, True])


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


# --- theory: empty arrays and array parameters ------------------------------------------------


def test_operator_bias_takes_empty_arrays_as_the_other_theory_functions_do() -> None:
    """An empty M raised IndexError (the first element was read to check the operator);
    monte_carlo_bias and operator_expected_bias return empty arrays, and so does it now."""
    rng = np.random.default_rng(0)
    for m, n in (([], 2), (8, [])):
        est = theory.operator_bias("maxmin", m, n, 1.0, 1.0, 10, rng)
        assert est.bias.shape == (0,) and est.variance_se.shape == (0,)
        assert theory.operator_expected_bias("maxmin", m, n).shape == (0,)
    # a bad member count is still caught before any sampling, wherever it sits in N
    with pytest.raises(ValueError, match="exactly 2 estimator"):
        theory.operator_bias("double_q", 8, [2, 3], 1.0, 1.0, 10, rng)


def test_operator_expected_bias_takes_one_number_per_parameter() -> None:
    """A one-element array sigma passed the operator's check and then failed float() with a
    TypeError; it is now a one-line ValueError, and a plain number gives the hand value
    (M - 1) / (M + 1) - sigma E[max of M N(0, 1)], E for M = 2 being 1 / sqrt(pi)."""
    with pytest.raises(ValueError, match="sigma must be one number here"):
        theory.operator_expected_bias("bias_corrected", 8, 1, sigma=np.array([0.1]))
    with pytest.raises(ValueError, match="c must be one number here"):
        theory.operator_expected_bias("weighted_double_q", 8, 2, c=np.array([2.0]))
    value = theory.operator_expected_bias("bias_corrected", 2, 1, sigma=0.3)
    assert value == pytest.approx(1 / 3 - 0.3 / math.sqrt(math.pi), rel=1e-12)


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


def test_choose_n_with_a_large_n_max_works_in_bounded_memory() -> None:
    """choose_n kept one row of n_max cells per M: n_max = 10^9 asked for about 40 GB of
    temporaries. With the N axis in chunks, the peak stays near one chunk (8 MB per array)
    however large n_max is, and the answer is the exact minimiser: here the N whose bias,
    by scipy's gamma functions in this test, is closest to a target near -1 (M = 8), found in
    the third of six chunks of N."""
    import tracemalloc

    from scipy.special import gammaln

    def bias(m: int, n: np.ndarray) -> np.ndarray:  # 1 - 2 t_MN, t_MN by log-gammas
        return 1.0 - 2.0 * np.exp(gammaln(m + 1) + gammaln(1 + 1 / n) - gammaln(m + 1 + 1 / n))

    target = -1.0 + 2.0 * sum(1.0 / k for k in range(1, 9)) / 2.4e6  # E[Z] ~ -1 + 2 H_M / N
    n_max = 6 * 2**20
    tracemalloc.start()
    try:
        got = theory.choose_n(8, n_max=n_max, target=target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 80e6  # 200 MB before (one row of 6.3 M cells), 50 MB now (one chunk)
    assert 2**21 < got <= n_max
    near = np.arange(got - 50, got + 51)
    gaps = np.abs(bias(8, near.astype(float)) - target)
    assert gaps[50] <= gaps.min() + 1e-15  # no neighbour is closer to the target


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: theory.t_mn(2**70, 2), "M must be < 2\\*\\*63"),
        (lambda: theory.expected_bias(8, [2, 2**64]), "N must be < 2\\*\\*63"),
        (lambda: theory.choose_n(8, n_max=2**64), "n_max must be < 2\\*\\*63"),
        (lambda: theory.min_variance(-(2**70)), "N must be >= 1"),
    ],
)
def test_theory_names_the_range_of_an_integer_too_large_for_numpy(call, words) -> None:
    """Python ints past 64 bits reach NumPy as objects and were refused as 'must be an
    integer', which they are; the error now names the range they are outside."""
    with pytest.raises(ValueError, match=words):
        call()


def test_target_variance_keeps_its_digits_for_many_estimators() -> None:
    """s_MN - t_MN^2 was a plain difference of two numbers near 1: 1.6e-6 off (relative) at
    M = 100, N = 10^4, against the docstring's 'below 1e-7', and 9 times the true value at
    N = 10^8. Reference: 60-digit values of the Beta-integral closed form, and at one point
    the defining integrals of E[W] and E[W^2] by 60-digit quadrature."""
    import mpmath

    with mpmath.workdps(60):

        def exact(m: int, n: int) -> float:
            x, mm = mpmath.mpf(1) / n, mpmath.mpf(m)
            t = mpmath.gamma(mm + 1) * mpmath.gamma(1 + x) / mpmath.gamma(mm + 1 + x)
            s = mpmath.gamma(mm + 1) * mpmath.gamma(1 + 2 * x) / mpmath.gamma(mm + 1 + 2 * x)
            return float(4 * (s - t * t))

        cases = [(100, 10**4), (8, 10**4), (8, 10**6), (8, 10**8), (10**4, 10**5), (3, 4)]
        for m, n in cases:
            assert theory.target_variance(m, n) == pytest.approx(exact(m, n), rel=1e-10, abs=0)
        grid = theory.target_variance(np.array([[2], [100]]), np.array([5, 10**3, 10**7]))
        for (i, m), (j, n) in itertools.product(enumerate((2, 100)), enumerate((5, 10**3, 10**7))):
            assert grid[i, j] == pytest.approx(exact(m, n), rel=1e-10, abs=0)
        # the definitions, W = (1 - max_a min_i e / tau) / 2 with P(W > w) = (1 - w^N)^M
        m, n = 100, 10**4
        knots = [0, 1 - 1e-2, 1 - 1e-3, 1 - 1e-4, 1 - 1e-5, 1]
        mean = mpmath.quad(lambda w: (1 - w**n) ** m, knots)
        second = mpmath.quad(lambda w: 2 * w * (1 - w**n) ** m, knots)
        assert theory.target_variance(m, n) == pytest.approx(
            float(4 * (second - mean**2)), rel=1e-9, abs=0
        )


# --- compiled operators on non-finite values ----------------------------------------------------


def test_compiled_operators_agree_with_numpy_on_nan_inf_and_ties() -> None:
    """Values drawn from {NaN, +-inf, +-0, +-1, 2}: many ties, NaN in every position, inf - inf
    inside Weighted Double Q. The compiled twin gives NumPy's value (NaN where NumPy gives
    NaN), equal as numbers: only the sign of a zero may differ (documented)."""
    from maxminq import operators
    from maxminq.operators_jit import apply_operator, operator_code

    rng = np.random.default_rng(7)
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])
    checked = 0
    for _ in range(3000):
        n, a = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        q = rng.choice(pool, size=(n, a))
        for name in operators.OPERATORS:
            fixed = {"q_learning": 1, "double_q": 2, "weighted_double_q": 2}.get(name)
            if name == "bias_corrected" or (fixed is not None and fixed != n):
                continue
            with np.errstate(invalid="ignore"):
                want = float(operators.bootstrap(name, q))
            got = apply_operator(operator_code(name), q)
            assert (math.isnan(want) and math.isnan(got)) or want == got, (name, q, want, got)
            checked += 1
    assert checked > 8000


# --- run ids past int64 -----------------------------------------------------------------------


def test_run_ids_past_int64_are_refused_instead_of_merging_two_runs() -> None:
    """run_offset = 2**63 - 1 with two runs: NumPy made the ids floats, both 9.223372036854776e18,
    and the lanes' seeds came from those floats, so the two 'independent' runs were one run
    twice. Now a UsageError names --run-offset; the largest offset that fits still gives two
    distinct ids and two different runs."""
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import run_mountain_car_grid
    from maxminq.tabular import toy_mdp

    toy = {"mu": 0.1, "algorithm": "q_learning", "n": 1, "runs": 2, "episodes": 30, "seed": 0}
    for offset in (2**63 - 1, 2**64):
        with pytest.raises(UsageError, match="^run_offset: run ids .* below 2\\*\\*63"):
            toy_mdp.run_toy_mdp(**toy, run_offset=offset)
        with pytest.raises(UsageError, match="--run-offset"):
            toy_mdp.check_settings({**toy, "run_offset": offset})
        with pytest.raises(UsageError, match="^run_offset:"):
            run_mountain_car_grid(
                algorithm="q_learning", n=1, sigma2=[0.0], step_sizes=[0.01], runs=2,
                episodes=1, seed=0, run_offset=offset, max_steps=10,
            )  # fmt: skip
    df = toy_mdp.run_toy_mdp(**toy, run_offset=2**63 - 2)
    assert df["run"].dtype == np.int64
    assert sorted(set(df["run"])) == [2**63 - 2, 2**63 - 1]
    first, second = (g["q_a_left"].to_numpy() for _, g in df.groupby("run"))
    assert not np.array_equal(first, second)  # two streams, not one run twice
    mc = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[0.0], step_sizes=[0.01], runs=2, episodes=1,
        seed=0, run_offset=2**63 - 2, max_steps=10,
    )  # fmt: skip
    assert mc["run"].dtype == np.int64 and mc["run"].tolist() == [2**63 - 2, 2**63 - 1]


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


def test_two_samples_give_no_variance_error_rather_than_a_false_zero() -> None:
    """Of two values the fourth-moment standard error of a variance is exactly 0 whatever
    the truth (c4 = c2^2 for any two points): monte_carlo_bias(samples=2) reported
    'variance +- 0'. It is now NaN (unknown); the bias's own error stays finite, and from
    three samples on the variance errors are positive."""
    two = theory.monte_carlo_bias(4, 2, 1.0, 1.0, 2, np.random.default_rng(0))
    assert math.isnan(two.target_variance_se) and math.isnan(two.min_variance_se)
    assert math.isnan(two.variance_ratio_se)
    assert np.isfinite(two.bias_se) and two.bias_se > 0
    three = theory.monte_carlo_bias(4, 2, 1.0, 1.0, 3, np.random.default_rng(0))
    assert three.target_variance_se > 0 and three.min_variance_se > 0
