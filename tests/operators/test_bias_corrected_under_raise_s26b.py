"""The bias_corrected operator in a program run under ``np.seterr(all="raise")`` (a common
way to catch NaNs in one's own code): its correction E[max of A N(0, 1)] is a quadrature
whose density underflows to 0 in the tails, as it should, and every call raised
FloatingPointError('underflow encountered in exp'). Hand value: E[max of 2 N(0, 1)] is
1 / sqrt(pi), so with sigma = 1 the row (1, 0) gives 1 - 1 / sqrt(pi).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maxminq import operators


@pytest.mark.parametrize("actions", [2, 8])
def test_bias_corrected_under_raise(actions: int) -> None:
    q = np.zeros((1, 1, actions))
    q[..., 0] = 1.0
    operators.expected_max_standard_normal.cache_clear()  # its quadrature runs under the check
    want = operators.bias_corrected(q, 1.0)
    operators.expected_max_standard_normal.cache_clear()
    with np.errstate(all="raise"):
        got = operators.bias_corrected(q, 1.0)
    np.testing.assert_array_equal(got, want)
    if actions == 2:
        assert float(np.ravel(got)[0]) == pytest.approx(1 - 1 / math.sqrt(math.pi), abs=1e-12)
