"""Theorem 1 and Corollary 1 (maxminq.theory) against hand-derived values and simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from maxminq.theory import (
    MonteCarloEstimate,
    choose_n,
    expected_bias,
    min_variance,
    monte_carlo_bias,
    operator_bias,
    operator_expected_bias,
    t_mn,
    target_variance,
    variance_ratio,
    zero_bias_n,
)


def product_t_mn(m: int, n: int) -> float:
    """t_MN = M! / prod_{k=1..M} (k + 1/N), in exact rational arithmetic (Theorem 1)."""
    value = Fraction(1)
    for k in range(1, m + 1):
        value *= Fraction(k) / (Fraction(k) + Fraction(1, n))
    return float(value)


def quadrature_target_moments(m: int, n: int) -> tuple[float, float]:
    """Mean and variance of max_a min_i e^i_a, e ~ U(-1, 1), by quadrature of its CDF
    F(x) = (1 - ((1 - x) / 2)^N)^M on [-1, 1] (Lemma 1 (ii), (iii)): E[Y] = 1 - int F and
    E[Y^2] = 1 - int 2x F."""
    from scipy import integrate

    cdf = lambda x: (1 - ((1 - x) / 2) ** n) ** m  # noqa: E731
    mean = 1 - integrate.quad(cdf, -1, 1, epsabs=1e-14, limit=200)[0]
    second = 1 - integrate.quad(lambda x: 2 * x * cdf(x), -1, 1, epsabs=1e-14, limit=200)[0]
    return mean, second - mean**2


def _irwin_hall_max_of_means(m: int, n: int) -> float:
    """E[max of m means of n U(-1, 1)] = 1 - int F^m, F by the Irwin-Hall alternating sum in
    30-digit arithmetic (its terms cancel: up to 4e3 at n = 30, 4e15 at n = 100)."""
    with mpmath.workdps(30):

        def cdf(x):
            s = (x + 1) * n / 2
            return sum((-1) ** k * mpmath.binomial(n, k) * (s - k) ** n
                       for k in range(int(mpmath.floor(s)) + 1)) / mpmath.factorial(n)  # fmt: skip

        # F^m rises from 0 to 1 just below x = 1 for large m: split the range there.
        lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
        for _ in range(40):  # bisection for F^m = 1/2
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if cdf(mid) ** m < 0.5 else (lo, mid)
        return float(1 - mpmath.quad(lambda x: cdf(x) ** m, [-1, lo, 1]))


def normal_variance_ratio(n: int) -> float:
    """N Var[min of N i.i.d. N(0, 1)], by quadrature of the order statistic's density."""
    from scipy import integrate, stats

    def raw_moment(k: int) -> float:
        density = lambda x: n * stats.norm.pdf(x) * stats.norm.sf(x) ** (n - 1)  # noqa: E731
        return integrate.quad(lambda x: x**k * density(x), -np.inf, np.inf)[0]

    return n * (raw_moment(2) - raw_moment(1) ** 2)


def _synthetic_run(folder, agent: str, n: int, bias_abs: list[list[float]]):
    """A finished-run folder as 'maxminq train' writes it, with made-up numbers: per seed s
    the metrics rows at steps 100, 200, ... carry bias_abs[s]."""
    import json

    import pandas as pd

    folder.mkdir()
    seeds = list(range(len(bias_abs)))
    cfg = {"agent": agent, "n": n, "lr": 1e-3, "env_id": "CartPole-v1", "seeds": seeds}
    (folder / "config.json").write_text(json.dumps(cfg))
    steps = [100 * (i + 1) for i in range(len(bias_abs[0]))]
    rows = [(s, st, v) for s in seeds for st, v in zip(steps, bias_abs[s], strict=True)]
    metrics = pd.DataFrame(rows, columns=["seed", "step", "bias_abs"])
    metrics["bias_mean"] = -metrics["bias_abs"]
    metrics["bias_std"] = 1.0
    metrics["loss"] = metrics["q_mean"] = 0.5
    metrics.to_csv(folder / "metrics.csv", index=False)
    episodes = pd.DataFrame({"seed": seeds, "step": 50, "return_avg100": 10.0})
    episodes.to_csv(folder / "episodes.csv", index=False)
    pd.DataFrame({"seed": seeds, "return": 1.0}).to_csv(folder / "tests.csv", index=False)
    pd.DataFrame({"seed": seeds, "status": "done"}).to_csv(folder / "runs.csv", index=False)
    return cfg


def test_t_mn_matches_product_formula_for_small_m() -> None:
    for m in range(1, 31):
        for n in range(1, 21):
            assert t_mn(m, n) == pytest.approx(product_t_mn(m, n), abs=1e-12, rel=1e-12)


def test_t_mn_matches_the_integral_definition() -> None:
    # t_MN = int_0^1 (1 - y^N)^M dy, by high-precision quadrature.
    for m, n in [(1, 1), (3, 2), (7, 5), (20, 3)]:
        integral = mpmath.quad(lambda y, m=m, n=n: (1 - y**n) ** m, [0, 1])
        assert t_mn(m, n) == pytest.approx(float(integral), abs=1e-12)


def test_t_mn_n_equal_one_and_bias_closed_forms() -> None:
    m = np.arange(1, 200)
    np.testing.assert_allclose(t_mn(m, 1), 1.0 / (m + 1), rtol=0, atol=1e-12)
    for tau, gamma in [(1.0, 1.0), (0.3, 0.9), (2.5, 0.5)]:
        np.testing.assert_allclose(
            expected_bias(m, 1, tau, gamma), gamma * tau * (m - 1) / (m + 1), rtol=0, atol=1e-12
        )
    # Hand-derived: t_{1,2} = 1/(1 + 1/2) = 2/3, t_{2,2} = 2 / (5/2 * 3/2) = 8/15.
    assert t_mn(1, 2) == pytest.approx(2 / 3, abs=1e-12)
    assert t_mn(2, 2) == pytest.approx(8 / 15, abs=1e-12)
    assert expected_bias(2, 2, tau=1.0, gamma=1.0) == pytest.approx(1 - 16 / 15, abs=1e-12)
    assert expected_bias(1, 7) == pytest.approx(1 - 2 / (1 + 1 / 7), abs=1e-12)


def test_t_mn_large_arguments_are_accurate_and_monotone() -> None:
    m, n = 10_000, 1_000
    exact = mpmath.gamma(m + 1) * mpmath.gamma(1 + mpmath.mpf(1) / n)
    exact /= mpmath.gamma(m + 1 + mpmath.mpf(1) / n)
    assert t_mn(m, n) == pytest.approx(float(exact), rel=1e-10)
    ns = np.arange(1, 1001)
    grid = t_mn(m, ns)
    assert np.all(np.isfinite(grid)) and np.all((grid > 0) & (grid < 1))
    assert np.all(np.diff(grid) > 0)  # increasing in N
    ms = np.arange(1, 10_001)
    column = t_mn(ms, n)
    assert np.all(np.isfinite(column)) and np.all(np.diff(column) < 0)  # decreasing in M
    bias = expected_bias(m, ns)
    assert np.all(np.diff(bias) < 0)  # E[Z_MN] decreases as N increases (Theorem 1)
    assert expected_bias(5, 10**6) == pytest.approx(-1.0, abs=1e-4)  # N -> inf limit


def test_variance_closed_forms() -> None:
    assert min_variance(1) == pytest.approx(1 / 3, abs=1e-12)
    assert min_variance(1, tau=2.0) == pytest.approx(4 / 3, abs=1e-12)
    # Var of min of 2 U(-1, 1): min = -1 + 2 * Beta(1, 2), Var = 4 * 2/(9*4) = 2/9.
    assert min_variance(2) == pytest.approx(2 / 9, abs=1e-12)
    ns = np.arange(1, 50)
    tau = 0.7
    np.testing.assert_allclose(
        min_variance(ns, tau), 4 * ns * tau**2 / ((ns + 1) ** 2 * (ns + 2)), atol=1e-12
    )
    # Corollary 1: Var[Q^min](tau = sqrt(N) tau_1) / Var[Q](tau_1) with Var[Q] = tau_1^2 / 3.
    np.testing.assert_allclose(
        variance_ratio(ns), min_variance(ns, np.sqrt(ns) * tau) / (tau**2 / 3), atol=1e-12
    )
    assert variance_ratio(1) == pytest.approx(1.0, abs=1e-12)
    assert variance_ratio(2) == pytest.approx(48 / 36, abs=1e-12)
    assert variance_ratio(8) == pytest.approx(768 / 810, abs=1e-12)


def test_corollary_1_threshold_is_eight() -> None:
    small = variance_ratio(np.arange(2, 8))
    large = variance_ratio(np.arange(8, 2000))
    assert np.all(small > 1.0)
    assert np.all(large < 1.0)
    assert variance_ratio(1) == pytest.approx(1.0)


def test_choose_n_minimises_absolute_bias_by_brute_force() -> None:
    ms = np.arange(1, 121)
    chosen = choose_n(ms, n_max=60)
    for m, n in zip(ms.tolist(), chosen, strict=True):
        biases = [
            abs(1 - 2 * math.prod(j / (j + 1 / k) for j in range(1, m + 1))) for k in range(1, 61)
        ]
        assert n == 1 + int(np.argmin(biases)), m
    assert choose_n(1) == 1 and choose_n(2) == 2  # M = 1 is unbiased at N = 1
    assert choose_n(100, tau=3.0, gamma=0.5) == choose_n(100)
    assert choose_n(7, gamma=0.0) == 1  # all N tie at zero bias: smallest N
    assert choose_n(10**4, n_max=5) == 5  # capped
    assert np.shape(choose_n([[1, 2], [3, 4]])) == (2, 2)


def test_broadcasting_and_scalar_types() -> None:
    grid = expected_bias(np.arange(1, 6)[None, :], np.arange(1, 4)[:, None], tau=2.0)
    assert grid.shape == (3, 5)
    assert grid[1, 2] == pytest.approx(2.0 * (1 - 2 * product_t_mn(3, 2)), abs=1e-12)
    assert isinstance(t_mn(3, 2), float)
    assert isinstance(choose_n(3), int)
    assert expected_bias(3.0, 2.0) == pytest.approx(expected_bias(3, 2))  # integral floats ok


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: t_mn(0, 1), "M"),
        (lambda: t_mn(2, 0), "N"),
        (lambda: t_mn(2.5, 1), "M"),
        (lambda: t_mn(2, [1, 1.5]), "N"),
        (lambda: t_mn(True, 1), "M"),
        (lambda: t_mn("3", 1), "M"),
        (lambda: expected_bias(3, 2, tau=0.0), "tau"),
        (lambda: expected_bias(3, 2, tau=-1.0), "tau"),
        (lambda: expected_bias(3, 2, gamma=1.1), "gamma"),
        (lambda: expected_bias(3, 2, gamma=-0.1), "gamma"),
        (lambda: min_variance(0), "N"),
        (lambda: min_variance(2, tau=np.nan), "tau"),
        (lambda: variance_ratio(-3), "N"),
        (lambda: choose_n(0), "M"),
        (lambda: choose_n(3, n_max=0), "n_max"),
        (lambda: choose_n(3, n_max=[5, 6]), "n_max"),
        (lambda: monte_carlo_bias(3, 2, 1.0, 1.0, 1, np.random.default_rng(0)), "samples"),
        (lambda: monte_carlo_bias(3, 2, 1.0, 1.0, 100, 0), "rng"),
        (lambda: monte_carlo_bias(3, 0, 1.0, 1.0, 100, np.random.default_rng(0)), "N"),
        (lambda: monte_carlo_bias(3, 2, 1.0, 1.0, 100, np.random.default_rng(0), "t"), "noise"),
        # Past int64 the cast wrapped round: t_mn(2**63, 1) was -1.08e-19.
        (lambda: t_mn(2**63, 1), "M"),
        (lambda: t_mn(2.0**63, 1), "M"),
        (lambda: t_mn(3, np.uint64(2**64 - 1)), "N"),
        (lambda: choose_n(3, target="a"), "target"),
        (lambda: choose_n(3, target=[0.0, "b"]), "target"),
    ],
)
def test_invalid_arguments_raise_value_error_naming_them(call, name) -> None:
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        call()


def test_monte_carlo_agrees_with_closed_forms() -> None:
    rng = np.random.default_rng(12345)
    ms = np.array([1, 2, 5, 16, 40])[:, None]
    ns = np.array([1, 2, 3, 8])[None, :]
    tau, gamma = 0.8, 0.9
    est = monte_carlo_bias(ms, ns, tau, gamma, 20_000, rng)
    assert isinstance(est, MonteCarloEstimate) and est.samples == 20_000
    assert est.bias.shape == (5, 4)
    z_bias = (est.bias - expected_bias(ms, ns, tau, gamma)) / est.bias_se
    z_var = (est.min_variance - min_variance(ns, tau)) / est.min_variance_se
    z_ratio = (est.variance_ratio - variance_ratio(ns)) / est.variance_ratio_se
    z_spread = (est.target_variance - target_variance(ms, ns, tau, gamma)) / (
        est.target_variance_se
    )
    for z in (z_bias, z_var, z_ratio, z_spread):
        assert np.all(np.abs(z) < 4.5), z
    # Standard errors shrink like 1/sqrt(samples) and are of the right size (bias of N=1,
    # M=1: Z = gamma * U(-tau, tau), sd = gamma tau / sqrt(3)).
    assert est.bias_se[0, 0] == pytest.approx(gamma * tau / math.sqrt(3 * 20_000), rel=0.05)


def test_target_variance_against_quadrature_and_special_values() -> None:
    tau, gamma = 0.8, 0.9
    for m in (1, 2, 5, 16, 100):
        for n in (1, 2, 3, 8, 20):
            mean, var = quadrature_target_moments(m, n)
            assert expected_bias(m, n) == pytest.approx(mean, abs=1e-10)  # the same law
            got = target_variance(m, n, tau, gamma)
            assert got == pytest.approx((gamma * tau) ** 2 * var, rel=1e-7), (m, n)
    # N = 1: the max of M errors (Q-learning's target); M = 1: Theorem 1 (ii).
    for m in (1, 3, 50):
        assert target_variance(m, 1) == pytest.approx(4 * m / ((m + 1) ** 2 * (m + 2)), rel=1e-12)
    for n in (2, 7, 300):
        assert target_variance(1, n, 2.0, 0.5) == pytest.approx(0.25 * min_variance(n, 2.0))
    # Many estimators: 50-digit values (s_MN - t_MN^2 cancels as N grows).
    mpmath.mp.dps = 50
    for m, n in ((8, 1000), (10**6, 10**4)):
        x, mm = mpmath.mpf(1) / n, mpmath.mpf(m)
        t = mpmath.gamma(mm + 1) * mpmath.gamma(1 + x) / mpmath.gamma(mm + 1 + x)
        s = mpmath.gamma(mm + 1) * mpmath.gamma(1 + 2 * x) / mpmath.gamma(mm + 1 + 2 * x)
        assert target_variance(m, n) == pytest.approx(float(4 * (s - t * t)), rel=1e-7)
    assert target_variance(np.array([1, 2]), 1).shape == (2,)
    with pytest.raises(ValueError, match="tau"):
        target_variance(2, 2, tau=0.0)


def test_readme_what_corollary_1_does_not_say() -> None:
    """The README's numbers, from quadrature and exact t_MN (not from maxminq.theory)."""

    def least_biased(m: int) -> int:
        return min(range(1, 30), key=lambda n: abs(1 - 2 * product_t_mn(m, n)))

    # The least biased N reaches 8 (where Var[Q^min] < Var[Q]) first at M = 111.
    assert least_biased(110) == 7 and least_biased(111) == 8
    # Samples split among N (tau^2 ~ N): target variance and MSE against Q-learning's.
    want = {2: (2, 1.76, 1.20), 3: (2, 2.19, 0.86), 4: (3, 3.42, 0.81), 8: (4, 8.05, 0.51)}
    want[16] = (5, 22.2, 0.36)
    for m, (n, var_ratio, mse_ratio) in want.items():
        assert least_biased(m) == n
        mean1, var1 = quadrature_target_moments(m, 1)
        mean, var = quadrature_target_moments(m, n)
        assert n * var / var1 == pytest.approx(var_ratio, abs=0.006 * var_ratio)
        assert n * (var + mean**2) / (var1 + mean1**2) == pytest.approx(mse_ratio, abs=0.006)


def test_monte_carlo_target_variance_of_many_actions() -> None:
    # Q-learning with M = 10^5 actions: Z sits near gamma tau with variance 4e-10; the sample
    # variance's standard error must survive that (from raw fourth moments it came out 0).
    m, samples = 100_000, 1000
    est = monte_carlo_bias(m, 1, 1.0, 1.0, samples, np.random.default_rng(4))
    want = 4 * m / ((m + 1) ** 2 * (m + 2))
    assert abs(est.target_variance - want) < 4.5 * est.target_variance_se
    # 1 - Z is nearly exponential (excess kurtosis 6): se ~ var sqrt(8 / samples).
    assert est.target_variance_se == pytest.approx(want * math.sqrt(8 / samples), rel=0.5)


def test_operator_bias_against_closed_forms() -> None:
    """Theorem 1's setting for every operator: means derived by hand (see operator_bias)."""
    from scipy import integrate

    tau, gamma, samples = 0.8, 0.9, 20_000
    rng = np.random.default_rng(21)
    harter = {1: 0.0, 2: 1 / math.sqrt(math.pi), 8: 1.42360}  # E[max of M N(0, 1)]

    def check(name, m, n, want, **params):
        est = operator_bias(name, m, n, tau, gamma, samples, rng, **params)
        assert abs(est.bias - gamma * tau * want) < 4.5 * est.bias_se, (name, m, n)
        return est

    # Weighted Double Q: beta depends on |Q^V(a*) - Q^V(a_L)| = tau |X - Y| only.
    c = 0.5
    mean_beta = integrate.quad(lambda d: tau * d / (c + tau * d) * (2 - d) / 2, 0, 2)[0]

    def triangular_cdf(x: float) -> float:  # the mean of two U(-1, 1) errors
        return (1 + x) ** 2 / 2 if x < 0 else 1 - (1 - x) ** 2 / 2

    for m in (1, 2, 8):
        q_max = (m - 1) / (m + 1)  # E[max of M U(-1, 1)]
        est = check("q_learning", m, 1, q_max)
        spread = (gamma * tau) ** 2 * 4 * m / ((m + 1) ** 2 * (m + 2))
        assert abs(est.variance - spread) < 4.5 * est.variance_se
        check("maxmin", m, 3, 1 - 2 * product_t_mn(m, 3))
        check("historical_best", m, 3, (3 * m - 1) / (3 * m + 1))
        check("double_q", m, 2, 0.0)
        check("weighted_double_q", m, 2, mean_beta * q_max if m > 1 else 0.0, c=c)
        check("bias_corrected", m, 1, q_max - 0.3 / tau * harter[m], sigma=0.3)
        ensemble_max = 1 - integrate.quad(lambda x, m=m: triangular_cdf(x) ** m, -1, 1)[0]
        check("ensemble", m, 2, ensemble_max)
    # Normal errors of sd sigma: the bias correction is exact.
    est = operator_bias(
        "bias_corrected", 8, 1, 1.0, 1.0, samples, rng, noise="normal", sigma=1 / math.sqrt(3)
    )
    assert abs(est.bias) < 4.5 * est.bias_se
    # Independent snapshots: Averaged is Ensemble, draw for draw.
    a = operator_bias("averaged", 4, [2, 5], 1.0, 1.0, 300, np.random.default_rng(1))
    e = operator_bias("ensemble", 4, [2, 5], 1.0, 1.0, 300, np.random.default_rng(1))
    np.testing.assert_array_equal(a.bias, e.bias)
    assert a.bias.shape == (2,) and isinstance(est.bias, float)


def test_operator_expected_bias_against_hand_derived_values() -> None:
    """The exact means behind operator_bias (README "Operators": 0.778, -0.058, 0, 0.274,
    0.882, 0.410, -0.044 at M = 8, tau = gamma = 1), scaled by gamma tau; Ensemble's max of
    means also where F^m is a narrow step (M = 10,000) and for N = 30."""
    from scipy import integrate

    harter8 = 1.42360  # E[max of 8 N(0, 1)] (Harter 1961)
    beta = integrate.quad(lambda d: d / (1 + d) * (2 - d) / 2, 0, 2)[0]  # c = 1, tau = 1
    bc = 7 / 9 - harter8 / math.sqrt(3)
    want = [
        ("q_learning", 1, {}, 7 / 9),
        ("maxmin", 4, {}, 1 - 2 * product_t_mn(8, 4)),
        ("double_q", 2, {}, 0.0),
        ("weighted_double_q", 2, {}, beta * 7 / 9),
        ("historical_best", 2, {}, 15 / 17),
        ("bias_corrected", 1, {"sigma": 1 / math.sqrt(3)}, bc),
    ]
    for name, n, params, value in want:
        assert operator_expected_bias(name, 8, n, **params) == pytest.approx(value, abs=1e-5)
    assert round(beta * 7 / 9, 3) == 0.274 and round(bc, 3) == -0.044
    # gamma and tau scale the mean (bias_corrected's sigma is not scaled by tau)
    got = operator_expected_bias("maxmin", [2, 8], 3, tau=0.8, gamma=0.9)
    np.testing.assert_allclose(got, [0.72 * (1 - 2 * product_t_mn(m, 3)) for m in (2, 8)])
    got = operator_expected_bias("bias_corrected", 2, 1, tau=0.8, gamma=0.5, sigma=0.3)
    assert got == pytest.approx(0.5 * (0.8 / 3 - 0.3 / math.sqrt(math.pi)), rel=1e-7)
    beta_tau = integrate.quad(lambda d: 0.8 * d / (2 + 0.8 * d) * (2 - d) / 2, 0, 2)[0]
    got = operator_expected_bias("weighted_double_q", [1, 4], 2, tau=0.8, gamma=1.0, c=2.0)
    np.testing.assert_allclose(got, [0.0, 0.8 * beta_tau * 3 / 5], rtol=1e-7)
    # Ensemble = Averaged (independent snapshots): the max of M means of N errors.
    for m, n in [(8, 4), (8, 1), (1, 3), (10_000, 2), (5, 30)]:
        value = _irwin_hall_max_of_means(m, n)
        for name in ("ensemble", "averaged"):
            assert operator_expected_bias(name, m, n) == pytest.approx(value, abs=1e-8), (m, n)
    assert round(_irwin_hall_max_of_means(8, 4), 3) == 0.410


@pytest.mark.parametrize(
    ("name", "n", "params", "match"),
    [
        ("q_learning", 2, {}, "q_learning: q must stack exactly 1"),
        ("double_q", [2, 3], {}, "double_q: q must stack exactly 2 .* got 3"),
        ("bias_corrected", 1, {}, "give sigma"),
        ("weighted_double_q", 2, {"c": 0.0}, "c must be > 0"),
        ("maxmin", 2, {"c": 1.0}, "maxmin takes no parameter 'c'"),
        ("maxmn", 2, {}, "unknown operator 'maxmn'"),
    ],
)
def test_operator_expected_bias_errors_name_the_bad_argument(name, n, params, match) -> None:
    with pytest.raises(ValueError, match=match):
        operator_expected_bias(name, 4, n, **params)


@pytest.mark.parametrize(
    ("args", "params", "match"),
    [
        (("maxmn", 4, 2), {}, "unknown operator 'maxmn'"),
        (("q_learning", 4, 2), {}, "q_learning: q must stack exactly 1"),
        (("bias_corrected", 4, 1), {}, "give sigma"),
        (("weighted_double_q", 4, 2), {"c": -1.0}, "c must be > 0"),
        (("maxmin", 0, 2), {}, "M must be >= 1"),
        (("maxmin", 4, 2), {"sigma": 1.0}, "maxmin takes no parameter 'sigma'"),
    ],
)
def test_operator_bias_errors_name_the_bad_argument(args, params, match) -> None:
    with pytest.raises(ValueError, match=match):
        operator_bias(*args, 1.0, 1.0, 100, np.random.default_rng(0), **params)


def test_zero_bias_n_solves_t_mn_one_half() -> None:
    from scipy import integrate, optimize

    # M = 2: t = 2 / ((2 + x)(1 + x)) = 1/2 at x = 1/N = (sqrt(17) - 3) / 2.
    assert zero_bias_n(2) == pytest.approx(2 / (math.sqrt(17) - 3), rel=1e-12)
    assert zero_bias_n(1) == 1.0
    ms = [3, 8, 64, 1000]
    got = zero_bias_n(ms)
    for m, root in zip(ms, got, strict=True):
        half = lambda n, m=m: integrate.quad(lambda y: (1 - y**n) ** m, 0, 1)[0] - 0.5  # noqa: E731
        assert root == pytest.approx(optimize.brentq(half, 1.0, 50.0, xtol=1e-13), rel=1e-8)
        assert choose_n(m) in (math.floor(root), math.ceil(root))
    assert zero_bias_n(7) == pytest.approx(3.466, abs=1e-3) and choose_n(7) == 4  # not round()
    with pytest.raises(ValueError, match="M must be >= 1"):
        zero_bias_n(0)


def test_monte_carlo_is_reproducible_and_seed_dependent() -> None:
    a = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(7))
    b = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(7))
    c = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(8))
    assert a == b
    assert a.bias != c.bias
    assert isinstance(a.bias, float)


def test_monte_carlo_chunking_handles_large_tensors() -> None:
    # 300 samples x 60 x 100 > one chunk: several chunks must combine into the right mean.
    est = monte_carlo_bias(100, 60, 1.0, 1.0, 300, np.random.default_rng(3))
    assert abs(est.bias - expected_bias(100, 60)) < 4.5 * est.bias_se


def test_theory_command_writes_figures_and_tables(tmp_path) -> None:
    import pandas as pd

    from maxminq.cli import main

    out = tmp_path / "theory"
    argv = ["theory", "--out", str(out), "--m-max", "12", "--n-max", "6", "--samples", "400"]
    argv += ["--variance-samples", "4000", "--seed", "3", "--no-progress"]
    assert main(argv) == 0
    for name in ("bias_heatmap.png", "variance_ratio.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary files
    bias = pd.read_csv(out / "bias.csv")
    assert len(bias) == 12 * 6 and set(bias["M"]) == set(range(1, 13))
    assert set(bias["mc_noise"]) == {"uniform"}
    for row in bias.itertuples():
        assert row.expected_bias == pytest.approx(1 - 2 * product_t_mn(row.M, row.N), abs=1e-9)
        if row.N == 1:  # the max of M uniform errors
            assert row.target_variance == pytest.approx(
                4 * row.M / ((row.M + 1) ** 2 * (row.M + 2))
            )
    chosen = bias[bias["chosen_n"]].set_index("M")["N"]
    assert chosen.to_dict() == {m: choose_n(m, n_max=6) for m in range(1, 13)}
    simulated = bias.dropna(subset=["mc_bias"])
    assert set(simulated["M"]) == {1, 2, 4, 8, 12}
    z = (simulated["mc_bias"] - simulated["expected_bias"]) / simulated["mc_bias_se"]
    assert np.all(np.abs(z) < 4.5)
    spread = simulated["mc_target_variance"] - simulated["target_variance"]
    assert np.all(np.abs(spread / simulated["mc_target_variance_se"]) < 4.5)
    variance = pd.read_csv(out / "variance.csv")
    ns = variance["N"].to_numpy()
    np.testing.assert_allclose(variance["variance_ratio"], 12 * ns**2 / ((ns + 1) ** 2 * (ns + 2)))
    z = (variance["mc_variance_ratio"] - variance["variance_ratio"]) / variance[
        "mc_variance_ratio_se"
    ]
    assert np.all(np.abs(z) < 4.5)
    # Every operator's target for M = --operator-m (default 8) actions, N = 1..--n-max.
    assert (out / "operator_bias.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ops = pd.read_csv(out / "operator_bias.csv")
    assert set(ops["M"]) == {8} and set(ops["samples"]) == {400}
    assert sorted(ops[ops["operator"] == "maxmin"]["N"]) == list(range(1, 7))
    assert ops.groupby("operator").size()["double_q"] == 1
    want = {("q_learning", 1): 7 / 9, ("double_q", 2): 0.0, ("historical_best", 6): 47 / 49}
    want |= {("maxmin", n): 1 - 2 * product_t_mn(8, n) for n in range(1, 7)}
    for (name, n), value in want.items():
        row = ops[(ops["operator"] == name) & (ops["N"] == n)].iloc[0]
        assert abs(row["bias"] - value) < 4.5 * row["bias_se"], (name, n)
        assert row["expected_bias"] == pytest.approx(value, abs=1e-9), (name, n)
    # Every row's exact mean (the figure's lines) agrees with its simulation.
    assert np.all(np.abs(ops["bias"] - ops["expected_bias"]) < 4.5 * ops["bias_se"])


def test_monte_carlo_cells_do_not_depend_on_the_other_m_simulated() -> None:
    """The simulated cells of one M are the same whichever other M are simulated with them
    (each M has its own stream); another seed gives other numbers."""
    from maxminq.analysis.theory_plots import bias_table

    cols = ["M", "N", "mc_bias", "mc_bias_se"]
    both = bias_table(4, 3, [2, 4], 300, 5)
    alone = bias_table(4, 3, [4], 300, 5)
    other = bias_table(4, 3, [4], 300, 6)
    at4 = both[both["M"] == 4][cols].reset_index(drop=True)
    assert at4.equals(alone[alone["M"] == 4][cols].reset_index(drop=True))
    assert not at4["mc_bias"].equals(other[other["M"] == 4]["mc_bias"].reset_index(drop=True))
    assert alone[alone["M"] == 2]["mc_bias"].isna().all()


def test_theory_command_with_normal_errors(tmp_path, capsys) -> None:
    """--noise normal: closed-form columns unchanged, Monte-Carlo columns from normal errors
    (variance ratio against quadrature, far from Corollary 1's at N = 6), the law named."""
    import pandas as pd

    from maxminq.cli import main

    out = tmp_path / "theory"
    argv = ["theory", "--out", str(out), "--m-max", "4", "--n-max", "6", "--samples", "400"]
    argv += ["--variance-samples", "20000", "--noise", "normal", "--no-progress"]
    assert main(argv) == 0
    assert "note" not in capsys.readouterr().err  # a short run is not announced
    variance = pd.read_csv(out / "variance.csv")
    assert set(variance["mc_noise"]) == {"normal"}
    assert set(pd.read_csv(out / "bias.csv")["mc_noise"]) == {"normal"}
    ns = variance["N"].to_numpy()
    np.testing.assert_allclose(variance["variance_ratio"], 12 * ns**2 / ((ns + 1) ** 2 * (ns + 2)))
    want = np.array([normal_variance_ratio(n) for n in ns])
    z = (variance["mc_variance_ratio"] - want) / variance["mc_variance_ratio_se"]
    assert np.all(np.abs(z) < 4.5), z
    assert variance["mc_variance_ratio"].iloc[-1] > 2.0 > variance["variance_ratio"].iloc[-1]


def test_theory_counts_the_errors_it_will_draw() -> None:
    """Hand count for --mc-m 1,2, --n-max 3, --samples 10, --variance-samples 5: bias cells
    draw N x M errors per sample, (1+2+3) x 10 for M = 1 and (2+4+6) x 10 for M = 2; the
    variance table N + 1 per sample, (2+3+4) x 5. Long runs are announced from this count
    (2.7e13 errors for --m-max 10000 --n-max 1000, where the command used to sit silent)."""
    from maxminq.commands.theory import simulated_error_parts

    parts = simulated_error_parts([1, 2], 3, 10, 5)
    assert parts == {"bias": 60 + 120, "variance": 45, "operators": 0}
    # Operator table: 10 samples x 4 actions x members (1 + 2 + 2 + 1 + 3 x (1 + 2 + 3)).
    assert simulated_error_parts([1, 2], 3, 10, 5, operator_m=4)["operators"] == 10 * 4 * 24
    powers = [2**k for k in range(14)] + [10_000]
    total = sum(simulated_error_parts(powers, 1000, 2000, 200_000).values())
    assert total == pytest.approx(2.7e13, rel=0.02)


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--m-max", "0"], "--m-max"),
        (["--n-max", "-2"], "--n-max"),
        (["--samples", "1"], "--samples"),
        (["--mc-m", "1,x"], "--mc-m"),
        (["--mc-m", "500"], "--mc-m"),
        (["--noise", "cauchy"], "--noise"),
        (["--operator-m", "0"], "--operator-m"),
    ],
)
def test_theory_command_rejects_bad_options(tmp_path, capsys, extra, option) -> None:
    from maxminq.cli import main

    assert main(["theory", "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert option in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()  # validated before any work


def test_t_mn_stays_accurate_for_huge_m() -> None:
    """t_{M,1} = 1/(M+1) exactly, and t_MN ~ Gamma(1+1/N) (M+1)^(-1/N) (1 + O(1/M)): a
    difference of log-gammas was 0.5% off at M = 10^12."""
    from math import gamma

    for m in (10**9, 10**12, 10**15):
        assert t_mn(m, 1) == pytest.approx(1 / (m + 1), rel=1e-12)
        for n in (2, 3, 8):
            assert t_mn(m, n) == pytest.approx(gamma(1 + 1 / n) * (m + 1) ** (-1 / n), rel=1e-8)


def test_choose_n_with_the_samples_split_among_the_estimators() -> None:
    """Corollary 1's even split: tau grows as sqrt(N), so |E[Z_MN]| is sqrt(N) |1 - 2 t_MN|,
    t_MN by the paper's product M! / prod (k + 1/N); brute force over N = 1..30 for every M up
    to 200. The least biased N first reaches 8 at M = 112 (README), and M = 7, 56, 111 get one
    N fewer than with a fixed tau."""
    ks = np.arange(1, 201)[:, None]
    t = np.cumprod(ks / (ks + 1 / np.arange(1, 31)[None, :]), axis=0)  # t[M - 1, N - 1]
    scaled = np.sqrt(np.arange(1, 31)) * 0.7 * (1 - 2 * t)

    def least(m: int, split: bool, goal: float = 0.0) -> int:
        bias = scaled[m - 1] if split else 0.7 * (1 - 2 * t[m - 1])
        return int(np.argmin(np.abs(bias - goal))) + 1

    ms = np.arange(1, 201)
    got = choose_n(ms, tau=0.7, n_max=30, split=True)
    assert got.tolist() == [least(int(m), True) for m in ms]
    fixed = choose_n(ms, tau=0.7, n_max=30)
    assert ms[got != fixed].tolist() == [7, 56, 111] and (fixed - got).max() == 1
    assert min(ms[got >= 8]) == 112
    assert choose_n(8, tau=0.7, target=-0.3, split=True) == least(8, True, -0.3) == 5
    with pytest.raises(ValueError, match="split must be True or False"):
        choose_n(8, split="yes")


def test_choose_n_for_a_target_bias() -> None:
    """The N whose exact E[Z_MN] = 1 - 2 t_MN (rational products, tau = gamma = 1) is closest
    to the target; targets beyond Q-learning's bias or below -1 pin N to 1 or n_max."""

    def bias(m: int, n: int) -> float:
        return float(1 - 2 * product_t_mn(m, n))

    for m in (2, 4, 9):
        for n in (1, 2, 3, 6):
            assert choose_n(m, target=bias(m, n)) == n
    assert choose_n(4, target=bias(4, 1) + 0.5) == 1
    assert choose_n(4, target=-2.0, n_max=50) == 50
    # Halfway between the biases of N = 2 and N = 3 (ties to the smaller N), nudged each way.
    mid = (bias(4, 2) + bias(4, 3)) / 2
    assert choose_n(4, target=mid + 1e-9) == 2 and choose_n(4, target=mid - 1e-9) == 3
    np.testing.assert_array_equal(choose_n(4, target=[bias(4, 2), bias(4, 5)]), [2, 5])
    with pytest.raises(ValueError, match="target"):
        choose_n(4, target=float("nan"))


def test_t_mn_at_the_int64_limit() -> None:
    """The largest accepted M, 2**63 - 1: t_{M,1} = 1/(M+1) = 2**-63."""
    assert t_mn(2**63 - 1, 1) == pytest.approx(2.0**-63, rel=1e-12)


def test_monte_carlo_with_normal_errors_against_closed_forms() -> None:
    """noise="normal": e ~ N(0, s^2) with s = tau / sqrt(3). For two standard normals
    E[max] = 1/sqrt(pi) and Var[min] = 1 - 1/pi (hand-derived), so with s:
    M = 2, N = 1 gives bias gamma s / sqrt(pi); M = 1, N = 2 gives -gamma s / sqrt(pi),
    Var[Q^min] = s^2 (1 - 1/pi) and the variance ratio 2 (1 - 1/pi) = 1.363 (> 1.333 of the
    uniform model); M = N = 1 is unbiased with ratio 1."""
    tau, gamma = 1.5, 0.9
    s = tau / math.sqrt(3)
    ms, ns = np.array([2, 1, 1]), np.array([1, 2, 1])
    est = monte_carlo_bias(ms, ns, tau, gamma, 100_000, np.random.default_rng(5), "normal")
    assert est.noise == "normal"
    want_bias = gamma * s / math.sqrt(math.pi) * np.array([1.0, -1.0, 0.0])
    want_var = s**2 * np.array([1.0, 1 - 1 / math.pi, 1.0])
    want_ratio = np.array([1.0, 2 * (1 - 1 / math.pi), 1.0])
    assert np.all(np.abs((est.bias - want_bias) / est.bias_se) < 4.5), est.bias
    assert np.all(np.abs((est.min_variance - want_var) / est.min_variance_se) < 4.5)
    assert np.all(np.abs((est.variance_ratio - want_ratio) / est.variance_ratio_se) < 4.5)
    # Corollary 1 does not carry over: at N = 8 the ratio is 8 Var[min of 8 N(0, 1)] = 2.98,
    # not the uniform model's 0.95.
    want8 = normal_variance_ratio(8)
    assert want8 == pytest.approx(2.983, abs=1e-3)
    est8 = monte_carlo_bias(1, 8, tau, gamma, 20_000, np.random.default_rng(6), "normal")
    assert abs(est8.variance_ratio - want8) < 4.5 * est8.variance_ratio_se


def test_monte_carlo_uniform_noise_is_the_default() -> None:
    a = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(7))
    b = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(7), noise="uniform")
    c = monte_carlo_bias(4, 3, 1.0, 1.0, 500, np.random.default_rng(7), noise="normal")
    assert a == b and a.noise == "uniform"
    assert c.bias != a.bias


@pytest.mark.parametrize(("m_max", "n_max"), [(1, 6), (6, 1), (1, 1), (5, 4)])
def test_bias_heatmap_draws_every_cell(m_max, n_max) -> None:
    """Each (M, N) cell spans [M - 1/2, M + 1/2] x [N - 1/2, N + 1/2] with the closed-form
    bias, also when M or N takes one value (those cells had zero width: a blank map); the
    chosen-N line covers every M."""
    from matplotlib.collections import QuadMesh
    from matplotlib.patches import StepPatch

    from maxminq.analysis.theory_plots import bias_table, plot_bias_heatmap

    table = bias_table(m_max, n_max, [], 2, 0)
    ax = plot_bias_heatmap(table).axes[0]
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    corners = mesh.get_coordinates()
    np.testing.assert_allclose(corners[0, :, 0], np.arange(m_max + 1) + 0.5)
    np.testing.assert_allclose(corners[:, 0, 1], np.arange(n_max + 1) + 0.5)
    values = np.asarray(mesh.get_array()).reshape(n_max, m_max)
    want = [[1 - 2 * product_t_mn(m, n) for m in range(1, m_max + 1)] for n in range(1, n_max + 1)]
    np.testing.assert_allclose(values, want, atol=1e-12)
    (stairs,) = [p for p in ax.patches if isinstance(p, StepPatch)]
    chosen = [min(range(1, n_max + 1), key=lambda n: abs(1 - 2 * product_t_mn(m, n)))
              for m in range(1, m_max + 1)]  # fmt: skip
    np.testing.assert_array_equal(stairs.get_data().values, chosen)
    np.testing.assert_allclose(stairs.get_data().edges, np.arange(m_max + 1) + 0.5)
    assert ax.get_xlim() == pytest.approx((0.5, m_max + 0.5))
    # The zero-bias line is the real root of t_MN = 1/2 (was a contour interpolated linearly
    # between whole N: 1.84 instead of 1.78 at M = 2), cut where it leaves the N range.
    (line,) = [ln for ln in ax.lines if len(ln.get_xdata()) == m_max]
    roots = {1: 1.0, 2: 2 / (math.sqrt(17) - 3), 4: 2.6861406616}
    for m, root in roots.items():
        if m <= m_max and root <= n_max + 0.5:
            assert line.get_ydata()[m - 1] == pytest.approx(root, rel=1e-9)


def test_plot_labels_name_what_tells_runs_apart(tmp_path) -> None:
    """With runs on several environments every label names its own (two DQN runs on two games
    were labelled by their step sizes, as if that were the difference, and a lone Maxmin run
    by neither); runs that still share a label get the step size if theirs differ, then the
    folder; a run alone in its agent and N keeps the plain label."""
    from maxminq.analysis.runs import run_labels

    def cfg(agent: str, n: int, env: str, lr: float) -> dict:
        return {"agent": agent, "n": n, "env_id": env, "lr": lr}

    cart, catch = "CartPole-v1", "maxminq/Catcher-v0"
    folders = [tmp_path / name for name in ("a", "b", "c")]
    runs = [
        cfg("dqn", 1, cart, 3e-4),
        cfg("dqn", 1, catch, 1e-4),
        cfg("maxmin-dqn", 2, catch, 3e-4),
    ]
    assert run_labels(runs, folders) == [
        "DQN, CartPole-v1",
        "DQN, maxminq/Catcher-v0",
        "Maxmin DQN (N=2), maxminq/Catcher-v0",
    ]
    runs = [cfg("dqn", 1, cart, 1e-3), cfg("dqn", 1, cart, 3e-4), cfg("dqn", 1, catch, 1e-3)]
    assert run_labels(runs, folders) == [
        "DQN, CartPole-v1, lr 0.001",
        "DQN, CartPole-v1, lr 0.0003",
        "DQN, maxminq/Catcher-v0",
    ]
    runs = [cfg("dqn", 1, cart, 1e-3), cfg("dqn", 1, cart, 3e-4), cfg("maxmin-dqn", 4, cart, 1e-3)]
    assert run_labels(runs, folders) == ["DQN, lr 0.001", "DQN, lr 0.0003", "Maxmin DQN (N=4)"]
    runs = [cfg("averaged-dqn", 3, cart, 1e-3), cfg("averaged-dqn", 3, cart, 1e-3)]
    runs += [cfg("averaged-dqn", 4, cart, 1e-3)]
    assert run_labels(runs, folders) == [
        "Averaged DQN (K=3), a",
        "Averaged DQN (K=3), b",
        "Averaged DQN (K=4)",
    ]


def test_plot_panels_choose_the_bias_columns(tmp_path, capsys) -> None:
    """--panels draws the chosen metrics (here |bias| and its spread), each curve the mean
    over seeds (hand-computed); an unknown panel is a one-line error, exit 2."""
    import matplotlib.pyplot as plt

    from maxminq.analysis.figures import training_runs_figure
    from maxminq.cli import main
    from maxminq.deep.train import read_tables

    _synthetic_run(tmp_path / "a", "dqn", 1, [[1.0, 3.0, 5.0], [3.0, 5.0, 9.0]])
    _synthetic_run(tmp_path / "b", "maxmin-dqn", 2, [[0.5, 1.0, 2.0], [1.5, 1.0, 4.0]])
    runs = [("DQN", "dqn", read_tables(tmp_path / "a"))]
    runs += [("Maxmin", "maxmin-dqn", read_tables(tmp_path / "b"))]
    fig = training_runs_figure(runs, "t", panels=["bias_abs", "bias_std"])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == [
        "absolute estimation error",
        "spread of the estimation error",
    ]
    lines = {line.get_label(): line for line in axes[0].get_lines()}
    np.testing.assert_allclose(lines["DQN"].get_xdata(), [100, 200, 300])
    np.testing.assert_allclose(lines["DQN"].get_ydata(), [2.0, 4.0, 7.0])
    np.testing.assert_allclose(lines["Maxmin"].get_ydata(), [1.0, 1.0, 3.0])
    plt.close(fig)
    with pytest.raises(ValueError, match="panels"):
        training_runs_figure(runs, "t", panels=["bias", "nope"])

    both = [str(tmp_path / "a"), str(tmp_path / "b")]
    out = tmp_path / "fig"
    assert main(["plot", *both, "--panels", "bias_abs,bias", "--out", str(out)]) == 0
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["plot", *both, "--panels", "bias,variance", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--panels" in err and "variance" in err


def test_report_bias_and_learning_curves_name_the_best_n() -> None:
    """The report's per-agent curves (best setting each) name that setting's N or K in the
    panel's title (the bias of Maxmin depends on N, Theorem 1, and the best N differs per
    panel); DQN's unset N (NaN) adds nothing."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from maxminq.analysis.figures import _best_agent_bands, _looks

    best = pd.DataFrame(
        {
            "env_id": ["E"] * 3,
            "agent": ["dqn", "averaged-dqn", "maxmin-dqn"],
            "n": [np.nan, 2.0, 6.0],
            "lr": [1e-4, 1e-4, 3e-4],
        }
    )
    curves = best.loc[best.index.repeat(2)].assign(step=[1, 2] * 3, mean=0.0, se=0.1)
    fig, ax = plt.subplots()
    settings = _best_agent_bands(ax, best, curves, ["env_id", "agent", "n", "lr"], _looks(best))
    labels = [line.get_label() for line in ax.get_lines()]
    plt.close(fig)
    # One legend entry per agent (shared by all panels); each panel's title names its N, K.
    assert labels == ["DQN", "Averaged DQN", "Maxmin DQN"]
    assert settings == "Averaged K=2, Maxmin N=6"


def test_toy_figures_tell_n_and_k_apart() -> None:
    """Two Ensemble (or Averaged) settings on one toy-MDP figure were both labelled 'Ensemble
    Q' ('Averaged Q'); N counts estimators, K snapshots; NaN or a family without one keeps
    the plain name."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from maxminq.analysis import style
    from maxminq.analysis.classic_plots import toy_q_left_figure

    assert style.label("ensemble", 4) == "Ensemble Q (N=4)"
    assert style.label("averaged", 3) == "Averaged Q (K=3)"
    assert style.label("historical_best", 2.0) == "Historical Best Q (K=2)"
    assert style.label("maxmin-dqn", 6) == "Maxmin DQN (N=6)"
    assert style.label("maxmin", float("nan")) == "Maxmin Q"
    assert style.label("double_q", 2) == "Double Q" and style.label("q_learning") == "Q-learning"
    settings = [("ensemble", 2), ("ensemble", 4), ("averaged", 2), ("averaged", 4)]
    df = pd.DataFrame(
        [
            {"mu": 0.1, "algorithm": a, "n": n, "run": r, "episode": e, "q_a_left": 0.0}
            for a, n in settings
            for r in range(2)
            for e in (1, 2)
        ]
    )
    fig = toy_q_left_figure(df)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]  # the curves': below the panels
    plt.close(fig)
    assert legend[:4] == [
        "Averaged Q (K=2)",
        "Averaged Q (K=4)",
        "Ensemble Q (N=2)",
        "Ensemble Q (N=4)",
    ]


def test_toy_q_left_figure_names_each_panels_true_value() -> None:
    """Each mu panel's dotted line is in a legend with its own true value (the second panel
    had an unlabelled line)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from maxminq.analysis.classic_plots import toy_q_left_figure

    df = pd.DataFrame(
        [
            {"mu": mu, "algorithm": "q_learning", "n": 1, "run": r, "episode": e, "q_a_left": 0.0}
            for mu in (0.1, -0.1)
            for r in range(2)
            for e in (1, 2)
        ]
    )
    fig = toy_q_left_figure(df)
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    curves = [t.get_text() for t in fig.legends[0].get_texts()]  # below the panels (0a219eb)
    plt.close(fig)
    assert legends == [["true value +0.1"], ["true value -0.1"]] and curves == ["Q-learning"]


@pytest.mark.parametrize("noise", ["uniform", "normal"])
def test_variance_plot_names_a_non_uniform_error_law(noise) -> None:
    """The legend says which law the Monte-Carlo points sampled, and then that the closed
    form is the uniform model's; with the theorem's uniform errors both keep plain labels."""
    from maxminq.analysis.theory_plots import plot_variance_ratio, variance_table

    table = variance_table(3, 50, np.random.default_rng(0), noise=noise)
    labels = plot_variance_ratio(table).axes[0].get_legend_handles_labels()[1]
    closed = r"$12N^2 / ((N+1)^2 (N+2))$"
    if noise == "uniform":
        want = {closed, "Monte Carlo (±2 s.e.)"}
    else:
        want = {f"{closed} (uniform errors)", "Monte Carlo, normal errors (±2 s.e.)"}
    assert set(labels) == want | {"Var[Q] (single estimator)"}


@pytest.mark.parametrize("noise", ["uniform", "normal"])
def test_operator_plot_draws_the_exact_means_under_the_simulation(noise) -> None:
    """Bias panel: Maxmin's line is Theorem 1 (exact t_MN) and the fixed-N operators' dashed
    lines sit at their hand-derived means (Q-learning 7/9, Double Q 0), not at the sampled
    values; the note names the uniform law when the points sampled another."""
    from maxminq.analysis.theory_plots import operator_bias_table, plot_operator_bias

    table = operator_bias_table(8, 4, 50, 0, noise=noise)
    ax = plot_operator_bias(table).axes[0]
    green = [ln for ln in ax.lines if ln.get_linestyle() == "-" and len(ln.get_xdata()) == 4]
    maxmin = [ln for ln in green if ln.get_ydata()[0] == pytest.approx(7 / 9)]
    want = [1 - 2 * product_t_mn(8, n) for n in range(1, 5)]
    assert any(np.allclose(ln.get_ydata(), want, atol=1e-12) for ln in maxmin)
    flat = {round(float(ln.get_ydata()[0]), 12) for ln in ax.lines if ln.get_linestyle() == "--"}
    assert {round(7 / 9, 12), 0.0} <= flat
    assert round(float(table.loc[table["operator"] == "double_q", "bias"].iloc[0]), 12) != 0.0
    note = " ".join(t.get_text() for t in ax.texts)
    assert ("for uniform errors" in note) == (noise == "normal") and "Monte Carlo" in note


def test_theory_command_says_when_n_max_cuts_choose_n_short(tmp_path, capsys) -> None:
    """With --n-max 3 the table's least biased N stops at 3, but choose_n(8) is 4 (hand
    product formula: E[Z_8,3] = 0.131 > |E[Z_8,4]| = 0.058); the summary line used to print
    'choose_n: ... M=8: N=3' as if it were choose_n's answer."""
    from maxminq.cli import main

    def bias(m: int, n: int) -> float:
        return 1 - 2 * product_t_mn(m, n)

    want = min(range(1, 50), key=lambda n: (abs(bias(8, n)), n))
    assert want == 4 and bias(8, 3) == pytest.approx(0.1307, abs=1e-4)
    argv = ["theory", "--out", str(tmp_path / "t"), "--m-max", "8", "--n-max", "3"]
    argv += ["--samples", "10", "--variance-samples", "10", "--no-progress"]
    assert main(argv) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line == ("choose_n: M=1: N=1, M=2: N=2, M=4: N=3, M=8: N=3 (--n-max; choose_n gives 4)")


def test_theory_help_states_the_ranges_it_enforces(tmp_path, capsys) -> None:
    """--m-max 10001 and --n-max 1001 are refused; the help used to give no range."""
    from maxminq.cli import main

    with pytest.raises(SystemExit):
        main(["theory", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "largest M (actions), 1..10000" in text and "largest N (estimators), 1..1000" in text
    for option, value in (("--m-max", "10001"), ("--n-max", "1001")):
        assert main(["theory", "--out", str(tmp_path / "o"), option, value]) == 2
        assert option in capsys.readouterr().err
