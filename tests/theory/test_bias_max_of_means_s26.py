"""Ensemble's (and independent Averaged's) exact bias, E[max of M means of N U(-1, 1)], for
many actions M: ``operator_expected_bias`` read F^M with F (the law of one mean) within
1e-16 of 1, so 1 - F, about 1/M, kept few digits and the "exact" mean drifted as M grew
(3e-7 off at M = 10^12, N = 2; 2e-5 at N = 40; 0.70 for 0.50 at M = 2^63 - 1, N = 100).

References are computed here, independently of maxminq, from the upper tail of the law in
closed form, in mpmath: for N = 2 (a triangular law) 1 - F(x) = (1 - x)^2 / 2 on [0, 1]; for
N = 5 near x = 1, (5 (1 - x) / 2)^5 / 5!; for N = 40 the Irwin-Hall alternating sum of the
lower tail in 40-digit arithmetic (the law is symmetric).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from maxminq.theory import operator_expected_bias


def _sum_cdf(n: int, u):
    """P(S <= u) for S the sum of n U(0, 1): the Irwin-Hall alternating sum (in the caller's
    mpmath precision: its terms cancel)."""
    terms = ((-1) ** k * mpmath.binomial(n, k) * (u - k) ** n for k in range(int(u) + 1))
    return mpmath.fsum(terms) / mpmath.factorial(n)


def _two_means(m: int) -> float:
    """E[max of m means of 2 U(-1, 1)] = int_0^1 (1 - F^m) - int_{-1}^0 F^m, with
    F(x) = (1 + x)^2 / 2 below 0 and 1 - (1 - x)^2 / 2 above."""
    with mpmath.workdps(30):
        mm = mpmath.mpf(m)
        width = 1 / mpmath.sqrt(mm)  # where (1 - u^2 / 2)^m falls, u = 1 - x
        points = sorted({mpmath.mpf(0), min(width, 1), min(10 * width, 1), mpmath.mpf(1)})
        upper = mpmath.quad(lambda u: -mpmath.expm1(mm * mpmath.log1p(-u * u / 2)), points)
        lower = mpmath.quad(lambda x: ((1 + x) ** 2 / 2) ** mm, [-1, 0])
        return float(upper - lower)


def _five_means_huge_m(m: int) -> float:
    """N = 5 and m so large that F^m vanishes unless 1 - x < 0.4, where the upper tail is
    the last polynomial piece: 1 - F = c u^5, u = 1 - x, c = (5/2)^5 / 120; below x = 0.6,
    F <= 1 - c 0.4^5 = 1 - 0.0083 and F^m is below 1e-1000."""
    with mpmath.workdps(30):
        mm, c = mpmath.mpf(m), mpmath.mpf(5) ** 5 / 2**5 / 120
        scale = (mm * c) ** (-mpmath.mpf(1) / 5)  # where c u^5 is 1/m
        points = [0, scale / 4, scale, 4 * scale, 16 * scale, mpmath.mpf("0.4")]
        kept = mpmath.quad(lambda u: mpmath.exp(mm * mpmath.log1p(-c * u**5)), points)
        return float(1 - kept)  # E = 1 - int_{-1}^{1} F^m = 1 - int_0^{0.4} F(1 - u)^m du


def _forty_means(m: int) -> float:
    """N = 40: E = 1 - (2/n) int_0^n F_S(s)^m ds for the sum S of n U(0, 1); F_S^m vanishes
    below s = n/2 here, and above 1 - F_S(s) = P(S <= n - s), an alternating sum in
    40 digits (terms up to 1e31 at u = 14 cancel to 1e-4)."""
    n = 40
    with mpmath.workdps(40):
        mm = mpmath.mpf(m)

        def lower(u):  # P(S <= u)
            return _sum_cdf(n, u)

        # F_S(n - u)^m: 1 for small u, falling near P(S <= u) = 1/m (u about 7), 0 by u = 14
        kept = mpmath.quad(lambda u: mpmath.exp(mm * mpmath.log1p(-lower(u))),
                           [0, 4, 6, 7, 8, 10, 14])  # fmt: skip
        return float(1 - 2 * kept / n)


@pytest.mark.parametrize("m", [8, 10**6, 10**12])
def test_two_means_of_many_actions(m: int) -> None:
    want = _two_means(m)
    for name in ("ensemble", "averaged"):
        assert operator_expected_bias(name, m, 2) == pytest.approx(want, abs=1e-13), name


def test_five_means_of_a_huge_number_of_actions() -> None:
    """M = 10^18: E = 1 - 2.4e-4."""
    m = 10**18
    want = _five_means_huge_m(m)
    # the reference's own check: 1 - E -> (M c)^(-1/5) Gamma(6/5) as M grows
    assert 1 - want == pytest.approx((m * 5**5 / 2**5 / 120) ** -0.2 * 0.9181687, rel=1e-3)
    assert operator_expected_bias("ensemble", m, 5) == pytest.approx(want, abs=1e-13)


def test_forty_means_of_many_actions() -> None:
    """M = 10^12, N = 40 (the grid's side of the method): 2e-5 off before."""
    want = _forty_means(10**12)
    assert operator_expected_bias("ensemble", 10**12, 40) == pytest.approx(want, abs=1e-13)


def test_huge_m_by_the_gumbel_limit() -> None:
    """M = 2^63 - 1 (the largest M taken), N = 100: F^M = 1/2 where P(S <= u) = ln 2 / M
    (S: the sum of 100 U(0, 1), u = 50 (1 - x)), u = 25.17 by the tail's alternating sum, so the
    mean lies near x = 0.5; it was 0.70. Beside it the scale: tau and gamma multiply it."""
    got = operator_expected_bias("ensemble", 2**63 - 1, 100)
    n, m = 100, mpmath.mpf(2**63 - 1)
    with mpmath.workdps(80):

        def lower(u):
            return _sum_cdf(n, u)

        u_half = mpmath.findroot(lambda u: lower(u) - mpmath.log(2) / m, 25)
    median_of_max = 1 - 2 * float(u_half) / n
    assert abs(got - median_of_max) < 0.01  # the max's spread: sd(mean) / sqrt(2 ln M) ~ 0.006
    scaled = operator_expected_bias("ensemble", 2**63 - 1, 100, tau=np.array([2.0]), gamma=0.5)
    assert scaled[0] == pytest.approx(got, rel=1e-15)


@pytest.mark.parametrize("n", [31, 32])
def test_either_side_of_the_grid_agrees_with_the_alternating_sum(n: int) -> None:
    """N = 31 (de Boor's spline and quad) and 32 (the grid): M = 8, against the
    Irwin-Hall alternating sum in 40 digits and mpmath's quadrature over every piece."""
    m = 8
    with mpmath.workdps(40):

        def cdf(s):
            return _sum_cdf(n, s)

        # F_S^m, S the sum (sd about 1.6): below n/2 - 6, F_S^m < 1e-30; above n/2 + 14,
        # 1 - F_S < 1e-17, so F_S^m is 1 there to 1e-16: pieces of width 1 in between
        lo, hi = n // 2 - 6, n // 2 + 14
        kept = mpmath.quad(lambda s: cdf(s) ** m, list(range(lo, hi + 1)))
        want = float(1 - 2 * (kept + (n - hi)) / n)
    assert operator_expected_bias("ensemble", m, n) == pytest.approx(want, abs=1e-12)
