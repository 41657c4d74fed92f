"""What ``maxminq theory``'s figure at tau = 1 says of other tau (docs/operators-and-theory.md,
"A G with exp and log"): a soft-min's bias depends on beta * tau alone, and the library
operators' bias is proportional to tau; both from the same draws of ``operator_bias``.
"""

from __future__ import annotations

import numpy as np
import pytest

from maxminq.theory import operator_bias


def softmin_q(q: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """The page's stable soft-min, max_a -(1/beta) log mean_i exp(-beta Q^i(s', a))."""
    m = q.min(axis=-2, keepdims=True)
    soft = m[..., 0, :] - np.log1p(np.expm1(-beta * (q - m)).mean(axis=-2)) / beta
    return soft.max(axis=-1)


def test_a_soft_min_at_tau_2_is_the_curve_of_beta_tau_at_tau_1() -> None:
    one = operator_bias(softmin_q, 8, 4, 1.0, 1.0, 20_000, np.random.default_rng(0), beta=20.0)
    two = operator_bias(softmin_q, 8, 4, 2.0, 1.0, 20_000, np.random.default_rng(0), beta=10.0)
    assert two.bias == pytest.approx(2 * one.bias, rel=1e-9)
    assert two.variance == pytest.approx(4 * one.variance, rel=1e-9)


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("maxmin", 4, {}),
        ("weighted_double_q", 2, {"c": 1.0}),
        ("bias_corrected", 1, {"sigma": 0.5}),
        ("historical_best", 3, {}),
    ],
)
def test_a_library_operators_bias_is_proportional_to_tau(name: str, n: int, params: dict) -> None:
    """Weighted Double Q's c is in the values' units: c at tau = 1 is 2c at tau = 2."""
    scaled = {k: 2 * v for k, v in params.items()}
    one = operator_bias(name, 8, n, 1.0, 1.0, 20_000, np.random.default_rng(1), **params)
    two = operator_bias(name, 8, n, 2.0, 1.0, 20_000, np.random.default_rng(1), **scaled)
    assert two.bias == pytest.approx(2 * one.bias, rel=1e-9)
