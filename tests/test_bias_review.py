"""Adversarial review of maxminq as a bias researcher uses it (session 14): the Monte-Carlo
standard errors of ``maxminq.theory`` and the bias example, on the scales a user may pick.

Every expected value here is derived by hand from the law of the sampled errors, not taken
from maxminq: for n i.i.d. values of variance s2 and fourth central moment m4, the standard
error of the mean is sqrt(s2 / n) and that of the sample variance sqrt((m4 - s2^2) / n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maxminq import theory


def _max_uniform_variance(m: int, tau: float) -> float:
    """Var of the max of m i.i.d. U(-tau, tau): (2 tau)^2 times that of Beta(m, 1)."""
    return 4.0 * tau**2 * m / ((m + 1) ** 2 * (m + 2))


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


# U(-tau, tau): variance tau^2 / 3, fourth central moment tau^4 / 5.
_VAR_SE_UNIT = math.sqrt(1 / 5 - 1 / 9)  # the sample variance's SE times sqrt(n) / tau^2


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
    with pytest.raises(ValueError, match="^tau "):
        if call == "monte_carlo_bias":
            theory.monte_carlo_bias(*args)
        else:
            theory.operator_bias("maxmin", *args)
