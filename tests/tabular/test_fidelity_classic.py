"""Paper fidelity of the operators, the theory, the toy MDP and noisy Mountain Car.

Every expected value here is derived in the test from Lan et al. (ICLR 2020,
``/work/shared/paper/maxmin-q-learning.tex``) or from the paper it cites, never from
``maxminq``'s own code: the G functions as written out in loops, Theorem 1 / Lemma 1 /
Corollary 1 by quadrature of the order-statistic densities, the toy MDP by an independent
NumPy re-implementation of Algorithm 1 following section 3's text, Mountain Car's dynamics
from Sutton & Barto (2018, example 10.1). Comments cite the section or equation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import REPO
from scipy import integrate, optimize, stats

from maxminq import operators, operators_jit, theory

CONFIGS = REPO / "src" / "maxminq" / "configs"


def _g_reference(name: str, q: np.ndarray, c: float = 1.0, sigma: float = 0.0) -> float:
    """G of one state's values ``q`` (members, actions) as loops over the definitions."""
    members, actions = q.shape
    if name == "q_learning":  # Sec. 6: K = N = 1, G = max_a Q_sa
        return max(q[0, a] for a in range(actions))
    if name == "maxmin":  # Sec. 6: G^MQ = max_a min_i Q^i_sa (Alg. 1's Y^MQ)
        return max(min(q[i, a] for i in range(members)) for a in range(actions))
    if name in ("ensemble", "averaged"):  # Sec. 6: G^EQ = max_a (1/N) sum_i Q^i_sa
        return max(sum(q[i, a] for i in range(members)) / members for a in range(actions))
    if name == "historical_best":  # Sec. 6: the largest value among Q_sa(t-1..t-K), over a too
        return max(q[j, a] for j in range(members) for a in range(actions))
    best = max(range(actions), key=lambda a: (q[0, a], -a))  # first argmax of Q^1 (or Q^U)
    if name == "double_q":  # Sec. 6: G = Q^2_{s, argmax_a Q^1_sa}
        return float(q[1, best])
    if name == "weighted_double_q":  # Zhang et al. (2017), eq. for beta^U with constant c
        worst = min(range(actions), key=lambda a: (q[0, a], a))
        gap = abs(q[1, best] - q[1, worst])
        beta = gap / (c + gap)
        return beta * q[0, best] + (1 - beta) * q[1, best]
    if name == "bias_corrected":  # Lee et al. (2013): max minus sigma * E[max of M N(0, 1)]
        return max(q[0]) - sigma * _expected_max_normal(actions)
    raise AssertionError(name)


def _expected_max_normal(m: int) -> float:
    """E[max of m i.i.d. N(0, 1)] = int_0^inf (1 - Phi^m) - int_-inf^0 Phi^m (tail formula,
    not the density form the package integrates)."""
    upper, _ = integrate.quad(lambda x: 1 - stats.norm.cdf(x) ** m, 0, np.inf)
    lower, _ = integrate.quad(lambda x: stats.norm.cdf(x) ** m, -np.inf, 0)
    return upper - lower


MEMBERS = {"q_learning": 1, "bias_corrected": 1, "double_q": 2, "weighted_double_q": 2}


ASSUMPTION_1 = ("q_learning", "maxmin", "ensemble", "averaged", "historical_best")


def _min_law(n: int, tau: float) -> tuple:
    """Lemma 1 (ii) for U(-tau, tau): pdf and cdf of the minimum of n errors."""
    f = 1 / (2 * tau)

    def pdf(x: float) -> float:
        return n * f * (0.5 - x / (2 * tau)) ** (n - 1)

    def cdf(x: float) -> float:
        return 1 - (0.5 - x / (2 * tau)) ** n

    return pdf, cdf


def _min_variance(n: int, tau: float) -> float:
    """Var of the minimum of n U(-tau, tau) errors, by quadrature of Lemma 1 (ii)'s pdf."""
    pdf, _ = _min_law(n, tau)
    e1, _ = integrate.quad(lambda x: x * pdf(x), -tau, tau)
    e2, _ = integrate.quad(lambda x: x * x * pdf(x), -tau, tau)
    return e2 - e1 * e1


def _maxmin_moments(m: int, n: int, tau: float) -> tuple[float, float]:
    """E and Var of max over m actions of min over n errors: the density of the max of m
    i.i.d. variables of cdf F is m f F^(m-1) (Lemma 1 (iii)), integrated numerically."""
    pdf, cdf = _min_law(n, tau)

    def density(x: float) -> float:
        return m * pdf(x) * cdf(x) ** (m - 1)

    e1, _ = integrate.quad(lambda x: x * density(x), -tau, tau, epsabs=1e-13, limit=200)
    e2, _ = integrate.quad(lambda x: x * x * density(x), -tau, tau, epsabs=1e-13, limit=200)
    return e1, e2 - e1 * e1


def _t_real(m: int, n: float) -> float:
    """t_MN = int_0^1 (1 - y^N)^M dy for a real N (the integral of App. A)."""
    value, _ = integrate.quad(lambda y: (1 - y**n) ** m, 0, 1, epsabs=1e-14)
    return value


def _paper_toy_mdp(
    mu: float, algorithm: str, n: int, runs: int, episodes: int, seed: int, batch: int = 32
) -> tuple[np.ndarray, np.ndarray]:
    """The toy MDP and Algorithm 1 written from the paper's text, vectorised over runs:
    A -> Left -> B (r 0) or Right -> end (r 0); B: 8 actions -> end, r = mu + U(-1, 1);
    eps-greedy (0.1) on Q^min (Maxmin), the mean of the two tables (Double Q) or Q; a FIFO
    buffer of 100; per step one table i chosen uniformly, a mini-batch drawn uniformly, its
    targets r + gamma G computed first, then Q^i(s, a) += 0.01 (Y - Q^i(s, a)) in turn.
    Returns P(Left | A) of the eps-greedy policy and the value it acts on for (A, Left),
    after each episode, shape (runs, episodes)."""
    rng = np.random.default_rng(seed)
    eps, alpha, cap = 0.1, 0.01, 100
    rows = np.arange(runs)
    q = 0.1 * rng.standard_normal((runs, n, 2, 8))  # N(0, 0.01): variance 0.01
    buf = np.zeros((runs, cap, 4))  # s, a, r, terminal
    size, pos = np.zeros(runs, int), np.zeros(runs, int)
    state, ep = np.zeros(runs, int), np.zeros(runs, int)
    p_left, q_left = np.full((runs, episodes), np.nan), np.full((runs, episodes), np.nan)

    def acting(values: np.ndarray) -> np.ndarray:  # (runs, n, S, 8) -> (runs, S, 8)
        return values.min(axis=1) if algorithm == "maxmin" else values.mean(axis=1)

    while (ep < episodes).any():
        vals = acting(q)[rows, state]
        vals[state == 0, 2:] = -np.inf  # A has two actions
        n_actions = np.where(state == 0, 2, 8)
        explore = rng.random(runs) < eps
        action = np.where(explore, (rng.random(runs) * n_actions).astype(int), vals.argmax(1))
        reward = np.where(state == 1, mu + rng.uniform(-1, 1, runs), 0.0)
        terminal = (state == 1) | (action == 1)
        buf[rows, pos] = np.stack([state, action, reward, terminal], axis=1)
        pos, size = (pos + 1) % cap, np.minimum(size + 1, cap)
        i = rng.integers(n, size=runs)
        idx = (rng.random((runs, batch)) * size[:, None]).astype(int)
        qb = q[:, :, 1, :]  # next state B's values, before the update
        if algorithm == "double_q":  # Q^{other}(B, argmax Q^i(B, .))
            g = qb[rows, 1 - i, qb[rows, i].argmax(1)]
        else:  # Q-learning (n = 1) and Maxmin: max_a min_i Q^i(B, a)
            g = qb.min(axis=1).max(axis=1)
        for b in range(batch):
            s, a, r, t = (buf[rows, idx[:, b], k] for k in range(4))
            s, a = s.astype(int), a.astype(int)
            target = r + (1 - t) * g  # gamma = 1
            q[rows, i, s, a] += alpha * (target - q[rows, i, s, a])
        ended = terminal & (ep < episodes)
        at_a = acting(q)[:, 0, :2]
        left_p = np.where(at_a[:, 0] > at_a[:, 1], 1 - eps / 2, eps / 2)
        p_left[rows[ended], ep[ended]] = left_p[ended]
        q_left[rows[ended], ep[ended]] = at_a[ended, 0]
        ep += terminal
        state = np.where(terminal, 0, 1)
    return p_left, q_left


def _sutton_barto_step(x: float, v: float, action: int) -> tuple[float, float, bool]:
    """Example 10.1 of Sutton & Barto (2018): v' = bound[v + 0.001 A - 0.0025 cos(3x)] in
    [-0.07, 0.07], x' = bound[x + v'] in [-1.2, 0.5], v' = 0 at the left bound, the goal
    (end of the episode) at the right bound; A = -1, 0, +1 for actions 0, 1, 2."""
    v2 = min(max(v + 0.001 * (action - 1) - 0.0025 * math.cos(3 * x), -0.07), 0.07)
    x2 = x + v2
    if x2 < -1.2 or x2 == -1.2:
        x2, v2 = -1.2, 0.0
    if x2 >= 0.5:
        return 0.5, v2, True
    return x2, v2, False


def _mc_frame() -> pd.DataFrame:
    """Last-episode steps of two algorithms, two sigma^2 and two step sizes, 3 runs each."""
    rows = []
    steps = {  # (algorithm, sigma2, step) -> last-episode steps of runs 0..2
        ("q_learning", 0.0, 0.01): [150, 160, 170], ("q_learning", 0.0, 0.02): [140, 150, 200],
        ("q_learning", 10.0, 0.01): [300, 200, 250], ("q_learning", 10.0, 0.02): [5000, 5000, 4000],
        ("maxmin", 0.0, 0.01): [155, 150, 160], ("maxmin", 0.0, 0.02): [170, 175, 180],
        ("maxmin", 10.0, 0.01): [200, 210, 190], ("maxmin", 10.0, 0.02): [160, 170, 165],
    }  # fmt: skip
    for (algo, s2, step), last in steps.items():
        n = 1 if algo == "q_learning" else 4
        for run, value in enumerate(last):
            rows.append((algo, n, s2, step, run, 1, 1000))
            rows.append((algo, n, s2, step, run, 2, value))
    cols = ["algorithm", "n", "sigma2", "step_size", "run", "episode", "steps"]
    return pd.DataFrame(rows, columns=cols)


@pytest.mark.parametrize("name", sorted(operators.OPERATORS))
def test_every_g_is_its_definition_on_random_states(name: str) -> None:
    rng = np.random.default_rng(11)
    params = {"sigma": 0.3} if name == "bias_corrected" else {}
    for _ in range(40):
        members = MEMBERS.get(name, int(rng.integers(1, 6)))
        q = rng.normal(size=(members, int(rng.integers(1, 9))))
        got = operators.bootstrap(name, q, **params)
        assert got == pytest.approx(_g_reference(name, q, **params), abs=1e-12)


def test_weighted_double_q_weight_limits_and_constant() -> None:
    """Zhang et al. (2017): beta -> 1 (c -> 0) is the single estimator (Q-learning on Q^U),
    beta -> 0 (c -> inf) is Double Q; at c equal to the gap, beta = 1/2."""
    q = np.array([[0.2, 1.0, -0.5], [0.7, -0.3, 0.4]])  # U = row 0: a* = 1, a_L = 2
    assert operators.weighted_double_q(q, c=1e-12) == pytest.approx(1.0, abs=1e-9)
    assert operators.weighted_double_q(q, c=1e12) == pytest.approx(-0.3, abs=1e-9)
    gap = abs(-0.3 - 0.4)  # |Q^V(a*) - Q^V(a_L)|
    assert operators.weighted_double_q(q, c=gap) == pytest.approx(0.5 * 1.0 + 0.5 * -0.3)


def test_expected_max_of_standard_normals_known_values() -> None:
    """Bias-corrected Q's correction factor: E[max of 2] = 1/sqrt(pi), of 3 = 3/(2 sqrt(pi))
    (exact order statistics), of 1 = 0; larger M against the tail-formula quadrature."""
    assert operators.expected_max_standard_normal(1) == 0.0
    assert operators.expected_max_standard_normal(2) == pytest.approx(1 / math.sqrt(math.pi))
    assert operators.expected_max_standard_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi))
    for m in (4, 5, 8, 20):
        assert operators.expected_max_standard_normal(m) == pytest.approx(
            _expected_max_normal(m), rel=1e-8
        )


def test_td_target_is_y_gq() -> None:
    """Sec. 6: Y^GQ = r + gamma Q^GQ_{s'}; a terminal next state contributes no bootstrap."""
    r, g = np.array([1.0, -2.0]), np.array([3.0, 5.0])
    got = operators.td_target(r, 0.9, np.array([False, True]), g)
    np.testing.assert_allclose(got, [1.0 + 0.9 * 3.0, -2.0])


@pytest.mark.parametrize("name", ASSUMPTION_1)
def test_assumption_1_holds_for_the_operators_theorem_2_covers(name: str) -> None:
    """Assumption 1 (i): all members equal -> G = max_a; (ii): |G(Q) - G(Q')| <= max |Q - Q'|."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        members = 1 if name == "q_learning" else int(rng.integers(1, 6))
        actions = int(rng.integers(1, 7))
        row = rng.normal(size=actions)
        equal = np.repeat(row[None], members, axis=0)
        assert operators.bootstrap(name, equal) == pytest.approx(row.max())
        q = rng.normal(size=(members, actions))
        q2 = q + rng.uniform(-0.5, 0.5, size=q.shape)
        lhs = abs(operators.bootstrap(name, q) - operators.bootstrap(name, q2))
        assert lhs <= np.abs(q - q2).max() + 1e-12


def test_double_q_breaks_the_lipschitz_condition() -> None:
    """Double Q is in the GQ family (Sec. 6) but not among Theorem 2's cases: a change of
    1e-6 in the selector swaps the action and moves G by 10."""
    q = np.array([[1.0, 1.0 - 1e-6], [0.0, 10.0]])
    q2 = q.copy()
    q2[0, 1] += 2e-6
    assert abs(operators.double_q(q) - operators.double_q(q2)) == pytest.approx(10.0)
    assert np.abs(q - q2).max() < 1e-5


@pytest.mark.parametrize("name", [n for n in operators.OPERATORS if n != "bias_corrected"])
def test_compiled_twins_are_the_definitions(name: str) -> None:
    rng = np.random.default_rng(9)
    code = operators_jit.operator_code(name)
    for _ in range(40):
        members = MEMBERS.get(name, int(rng.integers(1, 6)))
        q = np.round(rng.normal(size=(members, int(rng.integers(1, 9)))), 1)  # ties too
        assert operators_jit.apply_operator(code, q) == pytest.approx(
            _g_reference(name, q), abs=1e-12
        )


@pytest.mark.parametrize(("m", "n", "tau", "gamma"), [
    (1, 1, 1.0, 1.0), (2, 3, 0.7, 0.9), (8, 4, 1.3, 1.0), (5, 1, 2.0, 0.5), (16, 9, 0.3, 0.99),
])  # fmt: skip
def test_theorem_1_bias_and_target_variance_by_quadrature(m, n, tau, gamma) -> None:
    """Theorem 1 (i): E[Z_MN] = gamma E[max_a min_i e^i_a] (the proof's first lines); the
    target's variance (beyond the paper) is gamma^2 Var of the same variable."""
    mean, var = _maxmin_moments(m, n, tau)
    assert theory.expected_bias(m, n, tau, gamma) == pytest.approx(gamma * mean, abs=1e-10)
    assert theory.target_variance(m, n, tau, gamma) == pytest.approx(gamma**2 * var, rel=1e-8)


def test_theorem_1_product_form_and_limits() -> None:
    """t_MN = M! / prod_{k=1..M} (k + 1/N) (the theorem's statement); E[Z_{M,1}] =
    gamma tau (M-1)/(M+1); E[Z_MN] -> -gamma tau as N -> inf; decreasing in N."""
    for m in (1, 2, 3, 8, 30):
        for n in (1, 2, 5, 13):
            product = math.prod(k / (k + 1 / n) for k in range(1, m + 1))
            assert theory.t_mn(m, n) == pytest.approx(product, rel=1e-12)
        assert theory.expected_bias(m, 1, 0.8, 0.9) == pytest.approx(0.9 * 0.8 * (m - 1) / (m + 1))
        assert theory.expected_bias(m, 10**7, 0.8, 0.9) == pytest.approx(-0.72, abs=1e-4)
        biases = [theory.expected_bias(m, n) for n in range(1, 60)]
        # M = 1 too: E[Z_1N] = gamma tau (1 - N) / (1 + N) falls with N
        assert all(b > c for b, c in zip(biases, biases[1:], strict=False)), m


def test_theorem_1_ii_and_lemma_1_iv_by_quadrature() -> None:
    """Var[Q^min] = 4 N tau^2 / ((N+1)^2 (N+2)): the variance of the minimum of N
    U(-tau, tau) errors; tau^2/3 at N = 1, decreasing to 0."""
    for n in (1, 2, 3, 7, 20):
        for tau in (0.5, 1.0, 3.0):
            assert theory.min_variance(n, tau) == pytest.approx(_min_variance(n, tau), rel=1e-9)
    assert theory.min_variance(1, 1.5) == pytest.approx(1.5**2 / 3)


def test_corollary_1_from_the_even_split_of_samples() -> None:
    """Corollary 1: each of N estimators averages n/N samples, so its error has variance
    sigma^2 N / n = tau^2 / 3, tau = sqrt(3 sigma^2 N / n); the single estimator has
    variance sigma^2 / n. Take sigma^2 / n = 1 and integrate the min's variance."""
    ratios = []
    for n in range(1, 16):
        tau = math.sqrt(3 * n)
        ratios.append(_min_variance(n, tau))
        assert theory.variance_ratio(n) == pytest.approx(ratios[-1], rel=1e-9)
    # "for N >= 8, Var[Q^min] < Var[Q]": 1 at N = 1, above 1 for N = 2..7, below from 8
    assert ratios[0] == pytest.approx(1.0)
    assert all(r > 1 for r in ratios[1:7]) and all(r < 1 for r in ratios[7:])


def test_zero_bias_n_and_choose_n_against_the_integral() -> None:
    """Sec. 4: E[Z_MN] = 0 when t_MN = 1/2; choose N with t_MN closest to 1/2. The README's
    table (M = 2: 1.78, 8: 3.66, 1000: 10.69; choose_n 2, 4, 11) is checked as well."""
    readme = {2: (1.78, 2), 4: (2.69, 3), 8: (3.66, 4), 16: (4.66, 5), 100: (7.33, 7),
              1000: (10.69, 11)}  # fmt: skip
    for m, (root_text, chosen_text) in readme.items():
        root = optimize.brentq(lambda n, m=m: _t_real(m, n) - 0.5, 1.0, 50.0, xtol=1e-12)
        assert theory.zero_bias_n(m) == pytest.approx(root, rel=1e-7)
        assert round(root, 2) == root_text
        gaps = [abs(1 - 2 * _t_real(m, n)) for n in range(1, 40)]
        assert theory.choose_n(m) == 1 + int(np.argmin(gaps)) == chosen_text


def test_operator_expected_bias_of_weighted_double_and_ensemble_by_simulation() -> None:
    """The README's exact means for Theorem 1's setting (M = 8, tau = gamma = 1), checked by
    sampling the operators' definitions directly (no maxminq code in the sample)."""
    rng = np.random.default_rng(3)
    e = rng.uniform(-1, 1, size=(200_000, 2, 8))
    qu, qv = e[:, 0], e[:, 1]
    best, worst = qu.argmax(1), qu.argmin(1)
    rows = np.arange(len(e))
    gap = np.abs(qv[rows, best] - qv[rows, worst])
    beta = gap / (1 + gap)
    wdq = beta * qu[rows, best] + (1 - beta) * qv[rows, best]
    se = wdq.std() / math.sqrt(len(wdq))
    expected = theory.operator_expected_bias("weighted_double_q", 8, 2)
    assert abs(wdq.mean() - expected) < 4 * se
    # E[beta], |X - Y| of two U(-1, 1) having the triangular density (2 - u) / 2 on [0, 2]
    mean_beta, _ = integrate.quad(lambda u: u / (1 + u) * (2 - u) / 2, 0, 2)
    assert expected == pytest.approx(mean_beta * 7 / 9, rel=1e-7)
    assert round(expected, 3) == 0.274  # README, M = 8 in brackets
    ens = rng.uniform(-1, 1, size=(200_000, 4, 8)).mean(axis=1).max(axis=1)
    expected = theory.operator_expected_bias("ensemble", 8, 4)
    assert abs(ens.mean() - expected) < 4 * ens.std() / math.sqrt(len(ens))
    assert expected == pytest.approx(0.410, abs=5e-4)  # README: 0.410, positive for every N


def test_theorem_2_maxmin_converges_to_hand_derived_q_star() -> None:
    """Theorem 2 (ii): gamma = 1, an absorbing state with zero values, all policies proper.
    S0: a0 -> S1 (r 1), a1 -> end (r 0); S1: a0 -> S0 or end with 1/2 each (r 0), a1 -> end
    (r 2). By hand: V(S1) = max(V(S0)/2, 2) = 2, V(S0) = 1 + 2 = 3, so Q(S1, a0) = 1.5."""
    from maxminq.tabular.finite_mdp import generalized_q_learning

    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = P[1, 1, 2] = P[2, :, 2] = 1.0
    P[1, 0, [0, 2]] = 0.5
    R = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    q_star = np.array([[3.0, 0.0], [1.5, 2.0], [0.0, 0.0]])
    res = generalized_q_learning(
        P, R, 1.0, "maxmin", 3, 1, 6000, np.random.default_rng(0), terminal=[0, 0, 1],
        reward_noise=0.5, init_scale=1.0, step_power=0.7,
    )  # fmt: skip
    assert np.abs(res.q - q_star[None]).max() < 0.1


@pytest.mark.parametrize(
    ("name", "n", "k"),
    [("maxmin", 3, 1), ("ensemble", 3, 1), ("averaged", 1, 3), ("historical_best", 1, 3)],
)
def test_theorem_2_discounted_case_for_each_covered_operator(name: str, n: int, k: int) -> None:
    """Theorem 2 (i), gamma = 0.9, for Sec. 6's cases (N estimators or K snapshots). S0: a0
    stays (r 1), a1 -> S1 (r 0); S1: a0 stays (r 2), a1 -> S0 (r 0). By hand: V(S1) =
    2 / 0.1 = 20, V(S0) = max(1 / 0.1, 0.9 * 20) = 18, so Q = [[17.2, 18], [20, 16.2]]."""
    from maxminq.tabular.finite_mdp import generalized_q_learning, value_iteration

    P = np.zeros((2, 2, 2))
    P[0, 0, 0] = P[0, 1, 1] = P[1, 0, 1] = P[1, 1, 0] = 1.0
    R = np.array([[1.0, 0.0], [2.0, 0.0]])
    q_star = np.array([[17.2, 18.0], [20.0, 16.2]])
    np.testing.assert_allclose(value_iteration(P, R, 0.9, None), q_star, atol=1e-9)
    res = generalized_q_learning(
        P, R, 0.9, name, n, k, 20000, np.random.default_rng(1), reward_noise=0.5,
        init_scale=1.0, step_power=0.6,
    )  # fmt: skip
    assert np.abs(res.q - q_star[None]).max() < 0.4  # from errors of about 20 at the start


def test_toy_settings_are_the_papers() -> None:
    """Sec. 3: gamma = 1, buffer 100, eps 0.1, Q ~ N(0, 0.01) (variance: sd 0.1), step size
    0.01, 5,000 runs, mu = +-0.1, Q-learning, Double Q and Maxmin N = 2, 4, 6, 8; Fig. 2's
    optimal eps-greedy P(Left) is 0.95 for mu > 0 and 0.05 for mu < 0."""
    from maxminq.tabular import toy_mdp

    d = toy_mdp.TOY_DEFAULTS
    assert (d["gamma"], d["epsilon"], d["step_size"], d["buffer_size"]) == (1.0, 0.1, 0.01, 100)
    assert d["init_std"] == pytest.approx(math.sqrt(0.01))
    assert (toy_mdp.N_ACTIONS_A, toy_mdp.N_ACTIONS_B) == (2, 8)
    assert toy_mdp.optimal_p_left(0.1) == pytest.approx(1 - 0.1 + 0.1 / 2)
    assert toy_mdp.optimal_p_left(-0.1) == pytest.approx(0.1 / 2)
    cfg = yaml.safe_load((CONFIGS / "toy_mdp.yaml").read_text())
    assert sorted(cfg["grid"]["mu"]) == [-0.1, 0.1]
    assert cfg["fixed"]["step_size"] == 0.01 and cfg["fixed"]["epsilon"] == 0.1
    assert cfg["fixed"]["buffer_size"] == 100
    assert cfg["scales"]["paper"]["fixed"]["runs"] == 5000
    variants = {(v["algorithm"], str(v["n"])) for v in cfg["variants"]}
    assert variants == {("q_learning", "1"), ("double_q", "2"), ("maxmin", "[2, 4, 6, 8]")}


@pytest.mark.parametrize(
    ("mu", "algorithm", "n"),
    [(0.1, "q_learning", 1), (0.1, "double_q", 2), (0.1, "maxmin", 4), (-0.1, "maxmin", 2)],
)
def test_toy_mdp_runs_are_the_papers_algorithm_1(mu: float, algorithm: str, n: int) -> None:
    """maxminq's toy MDP against the independent re-implementation above: P(Left), its
    distance to the optimal eps-greedy policy (Fig. 2) and Q(A, Left) (App. C.1), averaged
    over windows of episodes per run, agree in mean within 4.5 combined standard errors, and
    the spread of Q(A, Left) after the first episode (set by the N(0, 0.01) initialisation)
    too. (Measured power: the Q(A, Left) windows move by 3-5 standard errors for a
    mini-batch of 24 instead of 32, by 25 for an initial sd of 0.05.)"""
    from maxminq.tabular.toy_mdp import run_toy_mdp

    runs, episodes = 1500, 250
    df = run_toy_mdp(mu=mu, algorithm=algorithm, n=n, runs=runs, episodes=episodes, seed=4)
    p_ref, q_ref = _paper_toy_mdp(mu, algorithm, n, runs, episodes, seed=4)
    d_ref = np.abs(p_ref - (0.95 if mu > 0 else 0.05))
    for key, ref in (("p_left", p_ref), ("distance", d_ref), ("q_a_left", q_ref)):
        ours = df.pivot(index="run", columns="episode", values=key).to_numpy()
        for lo, hi in ((0, 1), (0, 5), (5, 30), (30, 100), (100, episodes)):
            a, b = ours[:, lo:hi].mean(axis=1), ref[:, lo:hi].mean(axis=1)
            se = math.sqrt(a.var(ddof=1) / runs + b.var(ddof=1) / runs)
            assert abs(a.mean() - b.mean()) <= 4.5 * se + 1e-9, (key, lo, hi, a.mean(), b.mean())
    first = df[df.episode == 1].q_a_left.to_numpy()
    assert first.std() == pytest.approx(q_ref[:, 0].std(), rel=0.12)


def test_mountain_car_dynamics_are_sutton_and_barto() -> None:
    from maxminq.linear.mountain_car import mountain_car_step

    rng = np.random.default_rng(2)
    cases = [(-1.19, -0.05, 0), (0.49, 0.02, 2), (-0.5, 0.0, 1), (-1.2, 0.0, 0), (0.45, 0.07, 2)]
    cases += [(rng.uniform(-1.2, 0.5), rng.uniform(-0.07, 0.07), int(rng.integers(3)))
              for _ in range(500)]  # fmt: skip
    for x, v, a in cases:
        assert mountain_car_step(x, v, a) == pytest.approx(_sutton_barto_step(x, v, a), abs=1e-15)


def test_tile_coder_partitions_are_8_tilings_of_eighths() -> None:
    """Sec. 5: 8 tilings, each tile 1/8 of the bounded range in each dimension. Each tiling
    is the 8 x 8 grid shifted by (t/8, 3t/8) of a tile (the standard asymmetric offsets): two
    points share tiling t's tile iff floor(8 u + t/8) and floor(8 w + 3t/8) agree, (u, w) the
    point scaled to [0, 1]^2. Tilings use disjoint features."""
    from maxminq.linear.mountain_car import N_TILINGS, TILES_PER_DIM
    from maxminq.linear.tiles import TileCoder

    assert (N_TILINGS, TILES_PER_DIM) == (8, 8)
    coder = TileCoder((-1.2, -0.07), (0.5, 0.07))
    rng = np.random.default_rng(8)
    pts = np.column_stack([rng.uniform(-1.2, 0.5, 300), rng.uniform(-0.07, 0.07, 300)])
    pts = np.vstack([pts, pts + rng.normal(0, [0.02, 0.001], size=pts.shape)])  # near pairs
    pts = np.clip(pts, [-1.2, -0.07], [0.5, 0.07])
    feats = np.array([coder(x, y) for x, y in pts])
    u, w = (pts[:, 0] + 1.2) / 1.7, (pts[:, 1] + 0.07) / 0.14
    for t in range(8):
        cell = np.floor(8 * u + t / 8) * 100 + np.floor(8 * w + 3 * t / 8)
        same_ref = cell[:, None] == cell[None, :]
        same = feats[:, t][:, None] == feats[:, t][None, :]
        # the package quantises to 1/64 of a tile first: allow disagreement only within that
        boundary = np.minimum(
            np.abs((8 * u + t / 8) % 1 - 0.5), np.abs((8 * w + 3 * t / 8) % 1 - 0.5)
        )
        exact = boundary < 0.5 - 1 / 64
        mask = exact[:, None] & exact[None, :]
        assert (same == same_ref)[mask].all(), t
    for t in range(7):  # disjoint feature blocks per tiling
        assert feats[:, t].max() < feats[:, t + 1].min()


def test_mountain_car_settings_are_the_papers() -> None:
    """Sec. 5 / App. C.2: gamma 1, eps 0.1, buffer 100, step sizes {0.005 .. 0.08},
    sigma^2 in {0, 1, 10, 50}, 1,000 episodes, 100 runs, 5,000-step cap; Q-learning, Double
    Q, Averaged Q and Maxmin Q."""
    from maxminq.linear import mountain_car as mc

    d = mc.MC_DEFAULTS
    assert (d["gamma"], d["epsilon"], d["buffer_size"], d["max_steps"]) == (1.0, 0.1, 100, 5000)
    assert mc.PAPER_STEP_SIZES == (0.005, 0.01, 0.02, 0.04, 0.08)
    assert mc.PAPER_SIGMA2 == (0.0, 1.0, 10.0, 50.0)
    cfg = yaml.safe_load((CONFIGS / "mountain_car.yaml").read_text())
    assert cfg["grid"]["sigma2"] == [0, 1, 10, 50]
    assert cfg["fixed"]["max_steps"] == 5000 and cfg["fixed"]["epsilon"] == 0.1
    assert cfg["fixed"]["buffer_size"] == 100
    paper = cfg["scales"]["paper"]
    assert paper["fixed"] == {"runs": 100, "episodes": 1000}
    assert paper["grid"]["step_size"] == [0.005, 0.01, 0.02, 0.04, 0.08]
    algos = {a for v in paper["variants"] for a in np.atleast_1d(v["algorithm"])}
    assert algos == {"q_learning", "double_q", "averaged", "maxmin"}


@pytest.mark.parametrize("per", ["tiling", "total"])
def test_mountain_car_reward_is_normal_with_variance_sigma2(per: str) -> None:
    """Sec. 5: reward ~ N(-1, sigma^2) (sigma^2 a variance: App. C.2's panels N(-1, 10) and
    N(-1, 50)). One step per run from zero weights: the 4 replayed copies of that transition
    (target r, the next state's values still 0) move q(s, a) = the sum of its 8 active
    weights to r (1 - (1 - k alpha)^4), k = 8 if alpha is each tiling's step, 1 if it is the
    total; so the final weights give back each run's reward."""
    from maxminq.linear.mountain_car import run_mountain_car_grid

    runs, alpha = 4000, 0.01
    _, w, _ = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[0.0, 10.0], step_sizes=[alpha], runs=runs,
        episodes=1, seed=3, max_steps=1, return_weights=True, step_size_per=per,
    )  # fmt: skip
    assert ((w != 0).sum(axis=2) == 8).all()  # one (s, a): 8 tilings' weights
    k = 8 if per == "tiling" else 1
    reward = w.sum(axis=2)[:, 0] / (1 - (1 - k * alpha) ** 4)
    np.testing.assert_allclose(reward[:runs], -1.0, atol=1e-12)  # sigma^2 = 0
    noisy = reward[runs:]
    assert abs(noisy.mean() + 1) < 4.5 * math.sqrt(10 / runs)
    assert noisy.var(ddof=1) == pytest.approx(10, rel=4.5 * math.sqrt(2 / runs))


def test_mountain_car_episode_cap_counts_and_restarts() -> None:
    """App. C.2: an episode that has not reached the goal within the cap ends there (its
    length is the cap) and the next one starts; with a cap of 30 steps from the valley
    floor no episode can reach the goal (it needs at least ~100 steps)."""
    from maxminq.linear.mountain_car import run_mountain_car

    df = run_mountain_car(algorithm="q_learning", n=1, sigma2=1.0, step_size=0.01, runs=3,
                          episodes=4, seed=0, max_steps=30)  # fmt: skip
    assert (df.steps == 30).all() and len(df) == 12


def test_fig3a_plots_the_best_step_sizes_last_episode_mean_and_standard_error() -> None:
    """Fig. 3(a): per algorithm and sigma^2, the step size with the fewest mean steps in the
    last episode, drawn at its mean with one standard error (sample sd / sqrt(runs))."""
    from maxminq.analysis import classic_plots as cp

    df = _mc_frame()
    best = cp.mc_best_step_sizes(df)
    best = best[best.best].set_index(["algorithm", "sigma2"])
    expect = {  # (algorithm, sigma^2) -> best step size, its runs' last-episode steps
        ("q_learning", 0.0): (0.01, [150, 160, 170]),  # mean 160 < 163.3 at 0.02
        ("q_learning", 10.0): (0.01, [300, 200, 250]),
        ("maxmin", 0.0): (0.01, [155, 150, 160]),
        ("maxmin", 10.0): (0.02, [160, 170, 165]),
    }
    for key, (step, last) in expect.items():
        row = best.loc[key]
        assert row.step_size == step and row["mean"] == pytest.approx(np.mean(last))
        assert row["se"] == pytest.approx(np.std(last, ddof=1) / math.sqrt(3))
    fig = cp.mc_sensitivity_figure(df)
    drawn = [list(line.get_ydata()) for line in fig.axes[0].lines if len(line.get_ydata()) == 2]
    assert [155.0, 165.0] in drawn  # Maxmin at sigma^2 = 0, 10
    assert [160.0, 250.0] in drawn  # Q-learning


def test_fig2_plots_the_mean_distance_over_runs() -> None:
    """Fig. 2: the mean over runs of |P(Left) - P*(Left)| per episode."""
    from maxminq.analysis import classic_plots as cp

    p = np.array([[0.05, 0.95, 0.95], [0.5, 0.05, 0.95], [0.95, 0.95, 0.5]])  # runs x episodes
    rows = [(0.1, "q_learning", 1, r, e + 1, p[r, e], abs(p[r, e] - 0.95), 0.0)
            for r in range(3) for e in range(3)]  # fmt: skip
    cols = ["mu", "algorithm", "n", "run", "episode", "p_left", "distance", "q_a_left"]
    fig = cp.toy_distance_figure(pd.DataFrame(rows, columns=cols))
    (line,) = [ln for ln in fig.axes[0].lines if ln.get_label() == "Q-learning"]
    np.testing.assert_allclose(line.get_ydata(), np.abs(p - 0.95).mean(axis=0))


def test_figures_keep_the_two_step_size_readings_apart() -> None:
    """A table holding both step-size readings (two commands' CSVs side by side, to compare
    them as the README does) is two settings per algorithm: mc_best_step_sizes keeps them
    apart, and so must Fig. 3(a) and the learning curves (they drew one zig-zag line through
    both and pooled the runs of both into one curve)."""
    from maxminq.analysis import classic_plots as cp

    tiling = _mc_frame().assign(step_size_per="tiling")
    total = _mc_frame().assign(step_size_per="total")
    total.loc[total.episode == 2, "steps"] += 1000
    df = pd.concat([tiling, total], ignore_index=True)
    fig = cp.mc_sensitivity_figure(df)
    drawn = [list(line.get_ydata()) for line in fig.axes[0].lines if len(line.get_ydata()) == 2]
    for expected in ([155.0, 165.0], [1155.0, 1165.0], [160.0, 250.0], [1160.0, 1250.0]):
        assert expected in drawn
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert len(labels) == 4 and len(set(labels)) == 4
    fig = cp.mc_learning_curve_figure(df, sigma2=[10.0], smooth=1)
    curves = {ln.get_label(): list(ln.get_ydata()) for ln in fig.axes[0].lines}
    assert len(curves) == 4
    assert sorted(c[-1] for c in curves.values()) == [165.0, 250.0, 1165.0, 1250.0]


def test_compiled_operator_refuses_a_code_it_has_no_twin_for() -> None:
    """Bias-corrected Q has a kernel code (OPERATOR_CODES follows OPERATORS) but no compiled
    twin (its sigma is required): apply_operator gave plain Q-learning's max for it, sigma
    silently 0, and for any unknown code; it now raises."""
    q = np.array([[0.5, 2.0, -1.0]])
    for code in (operators_jit.OPERATOR_CODES["bias_corrected"], -1, 99):
        with pytest.raises(ValueError, match="no compiled operator"):
            operators_jit.apply_operator(code, q)


def test_fig3a_takes_each_runs_own_last_episode() -> None:
    """Sec. 5: "the number of steps ... in the last training episode" of each run. A table
    whose settings ran different numbers of episodes (a store holding a quick-scale setting
    beside a longer one) lost every setting shorter than the longest from Fig. 3(a) and
    mountain_car_step_sizes.csv (it took the table's last episode), while the report's
    tables (``tables.mountain_car_final``) take each run's own."""
    from maxminq.analysis import classic_plots as cp

    df = _mc_frame()
    longer = df[(df.algorithm == "maxmin") & (df.episode == 2)].assign(episode=3, steps=100)
    df = pd.concat([df, longer], ignore_index=True)
    best = cp.mc_best_step_sizes(df)
    q = best[(best.algorithm == "q_learning") & best.best].set_index("sigma2")["mean"]
    assert q.to_dict() == {0.0: pytest.approx(160.0), 10.0: pytest.approx(250.0)}
    # a list, not (... == 100.0).all(), which an empty selection would pass: 2 sigma^2 x 2 steps
    assert best[best.algorithm == "maxmin"]["mean"].tolist() == [100.0] * 4
    fig = cp.mc_sensitivity_figure(df)
    drawn = [list(line.get_ydata()) for line in fig.axes[0].lines if len(line.get_ydata()) == 2]
    assert [160.0, 250.0] in drawn and [100.0, 100.0] in drawn
    assert "2-3 episodes" in fig.axes[0].get_title()


def test_figures_refuse_an_empty_table_or_an_absent_variance_in_one_line() -> None:
    """The plotting functions are public (README: they take the runners' DataFrames): an
    empty table gave ZeroDivisionError, 'cannot convert float NaN to integer' or KeyError
    'mu', and a sigma^2 the table does not hold an empty panel titled with it."""
    from maxminq.analysis import classic_plots as cp

    mc = _mc_frame()
    toy = pd.DataFrame(
        [(0.1, "q_learning", 1, 0, 1, 0.95, 0.0, 0.1)],
        columns=["mu", "algorithm", "n", "run", "episode", "p_left", "distance", "q_a_left"],
    )
    calls = {
        "mc_sensitivity_figure": lambda: cp.mc_sensitivity_figure(mc.iloc[:0]),
        "mc_learning_curve_figure": lambda: cp.mc_learning_curve_figure(mc.iloc[:0]),
        "mc_best_step_sizes": lambda: cp.mc_best_step_sizes(mc.iloc[:0]),
        "toy_distance_figure": lambda: cp.toy_distance_figure(toy.iloc[:0]),
        "toy_q_left_figure": lambda: cp.toy_q_left_figure(toy.iloc[:0]),
        "toy_bias_vs_n_figure": lambda: cp.toy_bias_vs_n_figure(toy.iloc[:0]),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=f"^{name}: the table has no rows$"):
            call()
    with pytest.raises(
        ValueError, match=r"^mc_learning_curve_figure: sigma2 7 is not in the table"
    ):
        cp.mc_learning_curve_figure(mc, sigma2=[7.0])
    with pytest.raises(
        ValueError, match=r"^toy_distance_figure: the table has no column 'distance'"
    ):
        cp.toy_distance_figure(toy.drop(columns="distance"))


def test_theory_plots_refuse_empty_tables_and_sizes_below_one() -> None:
    """The Theorem 1 figure functions are public (README: ``maxminq.analysis.theory_plots``):
    an empty table gave IndexError or 'cannot convert float NaN to integer', and
    ``operator_bias_table`` with n_max = 0 numpy's 'cannot call vectorize on size 0 inputs'
    (``bias_table`` and ``variance_table`` returned empty tables that no plot takes)."""
    from maxminq.analysis import theory_plots as tp

    rng = np.random.default_rng(0)
    bias = tp.bias_table(3, 2, [2], 3, 0)
    variance = tp.variance_table(3, 3, rng)
    ops = tp.operator_bias_table(4, 2, 3, 0)
    for name, call in {
        "plot_bias_heatmap": lambda: tp.plot_bias_heatmap(bias.iloc[:0]),
        "plot_variance_ratio": lambda: tp.plot_variance_ratio(variance.iloc[:0]),
        "plot_operator_bias": lambda: tp.plot_operator_bias(ops.iloc[:0]),
    }.items():
        with pytest.raises(ValueError, match=f"^{name}: the table has no rows$"):
            call()
    with pytest.raises(ValueError, match="^plot_bias_heatmap: the table has no column 'chosen_n'"):
        tp.plot_bias_heatmap(bias.drop(columns="chosen_n"))
    for call, option in (
        (lambda: tp.bias_table(0, 2, [], 3, 0), "m_max"),
        (lambda: tp.bias_table(3, 0, [], 3, 0), "n_max"),
        (lambda: tp.variance_table(0, 3, rng), "n_max"),
        (lambda: tp.operator_bias_table(0, 2, 3, 0), "m"),
        (lambda: tp.operator_bias_table(4, 0, 3, 0), "n_max"),
    ):
        with pytest.raises(ValueError, match=f"^{option} must be a whole number >= 1"):
            call()
