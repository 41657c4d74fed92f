"""operator_expected_bias under ``np.seterr(all="raise")`` (or ``np.errstate``) in the caller's
program: Ensemble's exact bias from N = 32 on (a CDF on a grid whose lower tail and F^M
underflow to 0, as they should) raised FloatingPointError('underflow encountered in power'),
and Bias-corrected's E[max of M N(0, 1)] ('underflow encountered in exp'), though nothing is
wrong. The values are those of a run without the check, and hand values: M = 1 is one mean,
0; E[max of 2 N(0, 1)] = 1 / sqrt(pi), of 3: 3 / (2 sqrt(pi)).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maxminq.operators import expected_max_standard_normal
from maxminq.theory import operator_expected_bias


@pytest.mark.parametrize(("m", "n"), [(8, 40), (2, 64), (1, 100)])
def test_ensemble_exact_bias_under_raise(m: int, n: int) -> None:
    plain = operator_expected_bias("ensemble", m, n)
    with np.errstate(all="raise"):
        got = operator_expected_bias("ensemble", m, n)
    assert got == plain
    if m == 1:
        assert got == pytest.approx(0.0, abs=1e-14)


@pytest.mark.parametrize(
    ("m", "want"), [(2, 1 / math.sqrt(math.pi)), (3, 1.5 / math.sqrt(math.pi))]
)
def test_bias_corrected_exact_bias_under_raise(m: int, want: float) -> None:
    expected_max_standard_normal.cache_clear()  # computed here, under the check
    with np.errstate(all="raise"):
        got = operator_expected_bias("bias_corrected", m, 1, 1.0, 1.0, sigma=1.0)
    assert got == pytest.approx((m - 1) / (m + 1) - want, abs=1e-12)


def test_many_normals_under_raise() -> None:
    expected_max_standard_normal.cache_clear()
    plain = expected_max_standard_normal(10**6)
    expected_max_standard_normal.cache_clear()
    with np.errstate(all="raise"):
        assert expected_max_standard_normal(10**6) == plain
