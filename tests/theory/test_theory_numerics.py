"""The theory functions at the edges of floating point: Monte-Carlo standard errors at tiny
and huge tau, closed forms past the largest double, integers too large, bounded memory."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from maxminq import theory
from maxminq.tabular.finite_mdp import FiniteMDP, episodic_mdp, generalized_q_learning, random_mdp
from maxminq.theory import operator_expected_bias

_RNG_MDP = random_mdp(3, 2, np.random.default_rng(0))


def _max_uniform_variance(m: int, tau: float) -> float:
    """Var of the max of m i.i.d. U(-tau, tau): (2 tau)^2 times that of Beta(m, 1)."""
    return 4.0 * tau**2 * m / ((m + 1) ** 2 * (m + 2))


# U(-tau, tau): variance tau^2 / 3, fourth central moment tau^4 / 5.
_VAR_SE_UNIT = math.sqrt(1 / 5 - 1 / 9)  # the sample variance's SE times sqrt(n) / tau^2


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, "0.9"), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, None), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, np.array([0.9])), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, b"0.9"), "gamma"),  # was taken as 0.9
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, np.True_), "gamma must be one real"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, 0.9, reward_noise="1"), "reward_noise"),
        (
            lambda: _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), step_power="0.7"),
            "step_power",
        ),
        (
            lambda: _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), init_scale="1"),
            "init_scale",
        ),
        (
            lambda: generalized_q_learning(
                _RNG_MDP.P,
                _RNG_MDP.R,
                0.9,
                "maxmin",
                2,
                1,
                5,
                np.random.default_rng(0),
                reward_noise=None,
            ),  # fmt: skip
            "reward_noise",
        ),
        (lambda: episodic_mdp(3, 2, np.random.default_rng(0), termination="0.2"), "termination"),
        (lambda: random_mdp(3.0, 2, np.random.default_rng(0)), "n_states"),
        (lambda: random_mdp(3, 2, np.random.default_rng(0), branching=2.0), "branching"),
        (lambda: episodic_mdp(3, 2.0, np.random.default_rng(0)), "n_actions"),
    ],
)
def test_a_bad_scalar_argument_is_a_value_error_naming_it(call, name):
    """A string, None or a one-element array (gamma) was a TypeError from a comparison inside
    ("'<=' not supported between instances of 'float' and 'str'") or was kept as an array; a
    float count failed inside NumPy ("'float' object cannot be interpreted as an integer")."""
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("tau", [1e-8, 1e-12])
def test_bias_se_survives_a_large_offset(tau: float) -> None:
    """Bias-corrected Q with sigma = 1 and tiny errors: the target sits near -1.42 with a
    spread of about 0.2 tau. The standard error of its mean was taken from raw moments
    (E[Z^2] - E[Z]^2), which cancels every digit of so small a spread: 10x too large at
    tau = 1e-8, noise at 1e-12."""
    samples, m = 20_000, 8
    est = theory.operator_bias(
        "bias_corrected", m, 1, tau, 1.0, samples, np.random.default_rng(0), sigma=1.0
    )
    truth = math.sqrt(_max_uniform_variance(m, tau) / samples)  # Z = max of M errors - const
    assert est.bias_se == pytest.approx(truth, rel=0.05, abs=0)
    assert est.variance == pytest.approx(_max_uniform_variance(m, tau), rel=0.05, abs=0)


@pytest.mark.parametrize("tau", [1e-150, 1e-100, 1e70, 1e100, 1e150])
def test_monte_carlo_standard_errors_at_tiny_and_huge_tau(tau: float) -> None:
    """M = N = 1 (one uniform error): every standard error of ``monte_carlo_bias`` is known
    in closed form, and scales with tau. Raw sums of x^2 and x^4 underflowed to 0 below
    tau ~ 1e-75 (a standard error of 0, as if exact) and overflowed to NaN above ~ 1e75."""
    n = 20_000
    est = theory.monte_carlo_bias(1, 1, tau, 1.0, n, np.random.default_rng(1))
    var_se = _VAR_SE_UNIT / math.sqrt(n)  # in units of tau^2
    assert est.bias / tau == pytest.approx(0.0, abs=5 * math.sqrt(1 / 3 / n))
    assert est.bias_se / tau == pytest.approx(math.sqrt(1 / 3 / n), rel=0.05, abs=0)
    assert est.target_variance / tau**2 == pytest.approx(1 / 3, rel=0.05, abs=0)
    assert est.target_variance_se / tau**2 == pytest.approx(var_se, rel=0.1, abs=0)
    assert est.min_variance / tau**2 == pytest.approx(1 / 3, rel=0.05, abs=0)
    assert est.min_variance_se / tau**2 == pytest.approx(var_se, rel=0.1, abs=0)
    # N = 1: the ratio of two independent sample variances of the same law, ~ 1.
    assert est.variance_ratio == pytest.approx(1.0, abs=0.1)
    assert est.variance_ratio_se == pytest.approx(math.sqrt(2) * var_se * 3, rel=0.1, abs=0)


def test_monte_carlo_standard_errors_below_representable_variance() -> None:
    """tau = 1e-200: the variances (~1e-401) are below the smallest double, so they read 0;
    but the bias's standard error (~1e-203) and the variance ratio, a pure number, are
    representable and must not be 0 or NaN."""
    n, tau = 20_000, 1e-200
    est = theory.monte_carlo_bias(1, 1, tau, 1.0, n, np.random.default_rng(2))
    assert est.bias_se / tau == pytest.approx(math.sqrt(1 / 3 / n), rel=0.05, abs=0)
    assert est.variance_ratio == pytest.approx(1.0, abs=0.1)
    assert est.variance_ratio_se == pytest.approx(math.sqrt(2) * _VAR_SE_UNIT * 3 / math.sqrt(n),
                                                  rel=0.1, abs=0)  # fmt: skip


@pytest.mark.parametrize("call", ["monte_carlo_bias", "operator_bias"])
def test_tau_too_large_to_sample_is_a_value_error(call: str) -> None:
    """U(-tau, tau) with 2 tau past the largest double cannot be drawn: NumPy's
    OverflowError ('high - low range exceeds valid bounds') came out of the Monte Carlo;
    a ValueError naming tau now, as for any other bad tau."""
    rng = np.random.default_rng(0)
    args = (8, 4, 1e308, 1.0, 10, rng)
    with pytest.raises(ValueError, match="^tau must be at most 8.988e"):
        if call == "monte_carlo_bias":
            theory.monte_carlo_bias(*args)
        else:
            theory.operator_bias("maxmin", *args)


def test_the_largest_tau_that_can_be_sampled_is_taken() -> None:
    """The limit is inclusive, as its message says ('at most'; it said 'below'): with tau
    half the largest double, 2 tau is still finite and U(-tau, tau) is drawn."""
    limit = np.finfo(np.float64).max / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor a RuntimeWarning for the variance's inf
        est = theory.monte_carlo_bias(8, 1, limit, 1.0, 10, np.random.default_rng(0))
    assert np.isfinite(est.bias) and abs(est.bias) <= limit
    assert est.target_variance == np.inf  # (tau^2 / 3 is past the largest double)


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda: theory.t_mn([1, 2, 3], [1, 2]), "M, N"),
        (lambda: theory.expected_bias(8, [1, 2], tau=[1.0, 2.0, 3.0]), "N, tau"),
        (lambda: theory.target_variance([1, 2], 3, gamma=[0.5, 0.6, 0.7]), "M, gamma"),
        (lambda: theory.min_variance([1, 2], tau=[1.0, 2.0, 3.0]), "N, tau"),
        (lambda: theory.choose_n([1, 2], target=[0.0, 0.1, 0.2]), "M, target"),
        (
            lambda: theory.monte_carlo_bias(
                [1, 2], [1, 2, 3], 1.0, 1.0, 10, np.random.default_rng(0)
            ),
            "M, N",
        ),  # fmt: skip
        (
            lambda: theory.operator_bias(
                "maxmin", [1, 2], [1, 2, 3], 1.0, 1.0, 10, np.random.default_rng(0)
            ),
            "M, N",
        ),  # fmt: skip
        (lambda: theory.operator_expected_bias("ensemble", 8, [1, 2], [1.0, 2.0, 3.0]), "N, tau"),
    ],
)
def test_theory_names_the_arguments_that_do_not_broadcast(call, names: str) -> None:
    """The module promises 'ValueError naming the argument'; arguments whose shapes do not
    broadcast gave NumPy's 'operands could not be broadcast together with shapes (3,) (2,)'
    (or 'shape mismatch: ... arg 0 ... arg 1'), naming none."""
    with pytest.raises(ValueError, match=f"^{names} must broadcast together, got shapes"):
        call()


def test_choose_n_when_gamma_tau_underflows() -> None:
    """Theorem 1's bias is gamma tau (1 - 2 t_MN): which N is least biased does not depend on
    gamma tau > 0. choose_n multiplied gamma by tau first, so a product below the smallest
    double (1e-200 x 1e-200) made every bias 0 and answered N = 1, as for gamma = 0."""
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200) == 4  # as at gamma tau = 1 (README)
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, split=True) == 4
    # a target far below every bias (about -1e-400 at most): the most negative, N = n_max
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, target=-1e-300, n_max=50) == 50
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, target=1e-300, n_max=50) == 1
    assert theory.choose_n(8, tau=1e-200, gamma=0.0) == 1  # gamma = 0: every N unbiased


def test_operator_bias_memory_is_bounded_in_n_and_m() -> None:
    """The operator-bias example's own sampler drew 50,000 samples a chunk whatever N and M:
    50,000 x N x M doubles, 0.9 GB of peak memory at M = 200, N = 8 and 11 GB at M = 1,000,
    N = 20. It now calls ``theory.operator_bias``, whose chunks hold about 2^20 errors."""
    import tracemalloc

    m, n, samples = 500, 8, 20_000  # 8e7 errors: 640 MB in one chunk of 20,000 samples
    tracemalloc.start()
    try:
        est = theory.operator_bias("maxmin", m, n, 1.0, 1.0, samples, np.random.default_rng(0))
        mean, se = est.bias, est.bias_se
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"peak {peak / 1e6:.0f} MB"
    # and still Theorem 1's mean: 1 - 2 Gamma(M+1) Gamma(1+1/N) / Gamma(M+1+1/N), by log-gamma
    from scipy.special import gammaln

    exact = 1 - 2 * math.exp(gammaln(m + 1) + gammaln(1 + 1 / n) - gammaln(m + 1 + 1 / n))
    assert abs(mean - exact) < 5 * se


def test_corollary_1s_fixed_budget_is_one_keyword_of_the_closed_forms() -> None:
    """Corollary 1's fair comparison (a budget of samples shared by the N estimators, so each
    one's tau grows as sqrt(N)) was choose_n(split=True) only: the bias and variances in that
    setting had to be rescaled by hand (N * target_variance(M, N), sqrt(N) * bias)."""
    from scipy.special import gamma as gamma_fn

    from maxminq.theory import expected_bias, min_variance, target_variance

    m, n, tau, gamma = 8, 4, 0.5, 0.9
    t = gamma_fn(m + 1) * gamma_fn(1 + 1 / n) / gamma_fn(m + 1 + 1 / n)  # Theorem 1 (i)
    assert expected_bias(m, n, tau, gamma, split=True) == pytest.approx(
        gamma * tau * np.sqrt(n) * (1 - 2 * t), rel=1e-12
    )
    # Corollary 1: Var[Q^min] on the split budget over one estimator's Var[Q] on all of it
    ratio = min_variance(n, tau, split=True) / min_variance(1, tau)
    assert ratio == pytest.approx(12 * n**2 / ((n + 1) ** 2 * (n + 2)), rel=1e-12)
    # N = 1: the target of the max of M U(-tau, tau): variance 4 tau^2 M / ((M+1)^2 (M+2))
    one = 4 * tau**2 * m / ((m + 1) ** 2 * (m + 2))
    assert target_variance(m, 1, tau, 1.0, split=True) == pytest.approx(one, rel=1e-12)
    assert target_variance(m, n, tau, split=True) == pytest.approx(
        n * target_variance(m, n, tau), rel=1e-12
    )
    with pytest.raises(ValueError, match="split must be True or False"):
        expected_bias(m, n, split="yes")


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


def test_bias_table_refuses_an_m_to_simulate_that_it_has_no_row_for() -> None:
    """bias_table(4, 3, mc_m=[8], ...) left every Monte-Carlo cell empty without a word (the
    command line checks --mc-m against --m-max; the Python function did not)."""
    from maxminq.analysis.theory_plots import bias_table

    with pytest.raises(ValueError, match=r"mc_m must hold whole numbers in 1..m_max \(4\), got 8"):
        bias_table(4, 3, [2, 8], 100, 0)
    with pytest.raises(ValueError, match="mc_m must be a sequence of M values"):
        bias_table(4, 3, 2, 100, 0)
    table = bias_table(4, 3, [2], 100, 0)
    assert table[table.M == 2].mc_samples.eq(100).all() and table.mc_bias.notna().sum() == 3


def test_closed_form_variances_past_the_largest_double_are_inf_without_a_warning() -> None:
    """target_variance and min_variance at tau = 1e200 (tau^2 = 1e400, past the largest double)
    are inf, as the Monte Carlo's variance there, but warned 'overflow encountered in square'
    (an error under -W error); ordinary tau keeps its value: Theorem 1 (ii) at N = 3, tau = 2
    is 4 * 3 * 4 / (16 * 5) = 0.6."""
    import warnings

    from maxminq.theory import min_variance, target_variance

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert target_variance(8, 4, tau=1e200) == np.inf
        assert min_variance(4, 1e200) == np.inf
        assert min_variance(3, 2.0) == pytest.approx(0.6, rel=1e-15)


def test_bias_table_simulates_the_ms_of_an_iterator() -> None:
    """mc_m=iter([2]) passed the new check on mc_m, which read the iterator to its end, so no
    M was simulated (every Monte-Carlo cell NaN, without a word)."""
    from maxminq.analysis.theory_plots import bias_table

    table = bias_table(4, 3, iter([2]), 100, 0)
    assert table.mc_bias.notna().sum() == 3 and (table[table.M == 2].mc_samples == 100).all()


def test_weighted_double_qs_exact_bias_at_a_tau_near_the_largest_double_is_a_number() -> None:
    """operator_expected_bias('weighted_double_q', tau=1e308) was NaN with three warnings
    (tau u overflowed in E[beta]'s integrand: inf / inf), as target_variance warned there
    before 02a47df. By hand: E[beta] = 1 - E[c / (c + tau u)], and the latter is below
    (c / tau) ln(tau / c) ~ 1e-305 here, so the bias is tau (M-1)/(M+1) = 7/9 tau at M = 8."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tau in (1e308, 1.7e308):
            got = operator_expected_bias("weighted_double_q", 8, 2, tau)
            assert got == pytest.approx(7 / 9 * tau, rel=1e-12)
