"""Bias-corrected Q's exact bias under ``np.seterr(all="raise")`` for more than 10^4
actions: 70dab7b let ``expected_max_standard_normal`` ignore its tails' underflow, but
``operator_expected_bias`` called it inside ``np.vectorize``, whose ufunc loop read the
floating-point flags left set by the large-m branch and raised ``FloatingPointError:
underflow encountered in <lambda> (vectorized)`` for M = 10^4 + 1 and up."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special

from maxminq.operators import expected_max_standard_normal
from maxminq.theory import operator_expected_bias


def _expected_max_normal(m: int) -> float:
    """E[max of m N(0, 1)] = int_0^inf (1 - Phi^m) - int_-inf^0 Phi^m, Phi^m as
    exp(m log Phi) (log_ndtr), integrated independently of maxminq."""
    with np.errstate(all="ignore"):
        upper, _ = integrate.quad(
            lambda x: -math.expm1(m * float(special.log_ndtr(x))), 0.0, 12.0, limit=200
        )
        lower, _ = integrate.quad(lambda x: math.exp(m * float(special.log_ndtr(x))), -12.0, 0.0)
    return upper - lower


@pytest.mark.parametrize("m", [10_001, 10**6])
def test_bias_corrected_exact_bias_for_many_actions_under_raise(m: int) -> None:
    sigma, tau, gamma = 0.5, 2.0, 0.9
    expected = gamma * (tau * (m - 1) / (m + 1) - sigma * _expected_max_normal(m))
    expected_max_standard_normal.cache_clear()  # computed here, under the check
    with np.errstate(all="raise"):
        got = operator_expected_bias("bias_corrected", m, 1, tau=tau, gamma=gamma, sigma=sigma)
    assert got == pytest.approx(expected, rel=1e-7, abs=1e-9)


def test_bias_corrected_exact_bias_over_an_array_of_m_under_raise() -> None:
    ms = np.array([[2], [10**6]])  # the large one last, over two taus
    expected_max_standard_normal.cache_clear()
    with np.errstate(all="raise"):
        got = operator_expected_bias("bias_corrected", ms, 1, tau=[1.0, 1.0], sigma=1.0)
    # M = 2: (2 - 1)/(2 + 1) - E[max of 2 N(0, 1)] = 1/3 - 1/sqrt(pi)
    two = 1.0 / 3.0 - 1.0 / math.sqrt(math.pi)
    big = (10**6 - 1) / (10**6 + 1) - _expected_max_normal(10**6)
    assert got.shape == (2, 2)
    assert got.ravel() == pytest.approx([two, two, big, big], rel=1e-7)
