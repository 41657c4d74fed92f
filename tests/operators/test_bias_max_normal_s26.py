"""E[max of m N(0, 1)] (Bias-corrected Q's correction, and its exact bias in
``operator_expected_bias``) for many actions: the quadrature of ``x d/dx Phi(x)^m`` read
Phi within 1e-16 of 1 near the maximum and missed its narrow peak: 5e-8 off at m = 10^9,
3e-6 at 10^12, 8e-3 at 10^15. References: mpmath, 30 digits, from
``int_0^inf (1 - Phi^m) - int_-inf^0 Phi^m`` split around the maximum's place sqrt(2 ln m).
"""

from __future__ import annotations

import math

import mpmath
import pytest

from maxminq.operators import expected_max_standard_normal
from maxminq.theory import operator_expected_bias


def _reference(m: int) -> float:
    with mpmath.workdps(30):
        mm = mpmath.mpf(m)
        at = mpmath.sqrt(2 * mpmath.log(mm))
        rest = mpmath.quad(lambda x: -mpmath.expm1(mm * mpmath.log(mpmath.ncdf(x))),
                           [0, at - 2, at - 1, at, at + 1, at + 3, mpmath.inf])  # fmt: skip
        power = mpmath.quad(lambda x: mpmath.ncdf(x) ** mm, [-mpmath.inf, -2, 0])
        return float(rest - power)


@pytest.mark.parametrize("m", [10**4, 10**4 + 1, 10**6, 10**9, 10**12, 10**15, 2**63 - 1])
def test_expected_max_of_many_standard_normals(m: int) -> None:
    assert expected_max_standard_normal(m) == pytest.approx(_reference(m), abs=1e-12)


def test_bias_corrected_exact_bias_for_many_actions() -> None:
    """gamma (tau (M-1)/(M+1) - sigma E[max of M N(0, 1)]) at M = 10^12: the extreme-value
    limit sqrt(2 ln M) overshoots by about (ln ln M + ln 4 pi) / (2 sqrt(2 ln M))."""
    m, tau, gamma, sigma = 10**12, 0.5, 0.9, 0.2
    e_max = _reference(m)
    at = math.sqrt(2 * math.log(m))
    assert at - e_max == pytest.approx((math.log(math.log(m)) + math.log(4 * math.pi)) / (2 * at)
                                       - 0.5772 / at, abs=0.02)  # fmt: skip
    want = gamma * (tau * (m - 1) / (m + 1) - sigma * e_max)
    got = operator_expected_bias("bias_corrected", m, 1, tau, gamma, sigma=sigma)
    assert got == pytest.approx(want, abs=1e-12)
