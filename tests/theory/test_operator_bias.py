"""``theory.operator_bias`` / ``operator_expected_bias`` with library operators and G
functions of one's own: parameters, precision, empty input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from own_operators import median_np

from maxminq import operators, theory
from maxminq.theory import operator_bias, operator_expected_bias


def lowest(q: np.ndarray) -> np.ndarray:
    """A G of one's own: the smallest of all N x A values (by hand: the minimum of N M
    independent U(-tau, tau) errors has mean -tau (NM - 1) / (NM + 1))."""
    return q.min(axis=(-2, -1))


def test_operator_bias_takes_empty_arrays_as_the_other_theory_functions_do() -> None:
    """An empty M raised IndexError (the first element was read to check the operator);
    monte_carlo_bias and operator_expected_bias return empty arrays, and so does it now."""
    rng = np.random.default_rng(0)
    for m, n in (([], 2), (8, [])):
        est = theory.operator_bias("maxmin", m, n, 1.0, 1.0, 10, rng)
        assert est.bias.shape == (0,) and est.variance_se.shape == (0,)
        assert theory.operator_expected_bias("maxmin", m, n).shape == (0,)
    # a bad member count is still caught before any sampling, wherever it sits in N
    with pytest.raises(ValueError, match="exactly 2 estimator"):
        theory.operator_bias("double_q", 8, [2, 3], 1.0, 1.0, 10, rng)


def test_operator_expected_bias_takes_one_number_per_parameter() -> None:
    """A one-element array sigma passed the operator's check and then failed float() with a
    TypeError; it is now a one-line ValueError, and a plain number gives the hand value
    (M - 1) / (M + 1) - sigma E[max of M N(0, 1)], E for M = 2 being 1 / sqrt(pi)."""
    with pytest.raises(ValueError, match="sigma must be one number here"):
        theory.operator_expected_bias("bias_corrected", 8, 1, sigma=np.array([0.1]))
    with pytest.raises(ValueError, match="c must be one number here"):
        theory.operator_expected_bias("weighted_double_q", 8, 2, c=np.array([2.0]))
    value = theory.operator_expected_bias("bias_corrected", 2, 1, sigma=0.3)
    assert value == pytest.approx(1 / 3 - 0.3 / math.sqrt(math.pi), rel=1e-12)


def test_operator_bias_takes_a_g_function_of_ones_own() -> None:
    """operator_bias refused any G but the library's, by name ('operator_params: unknown
    operator <function lowest ...>'), though FiniteMDP.learn takes one."""
    est = operator_bias(lowest, 4, 3, 2.0, 0.5, 20_000, np.random.default_rng(0))
    exact = -0.5 * 2.0 * (12 - 1) / (12 + 1)
    assert est.samples == 20_000
    assert abs(est.bias - exact) < 4 * est.bias_se
    assert 0 < est.bias_se < 0.01


def test_operator_expected_bias_says_it_has_no_closed_form_for_ones_own_g() -> None:
    with pytest.raises(ValueError, match="no closed form .*'lowest'.* operator_bias"):
        operator_expected_bias(lowest, 4, 3)


def test_operator_bias_names_a_per_sample_parameter_as_such() -> None:
    """A c per sample was refused as not broadcasting 'to the batch shape (1,)': the shape of
    the check's own zeros, not of anything the caller passed."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"c must be one number here .*got shape \(100,\)"):
        operator_bias("weighted_double_q", 8, 2, 1.0, 1.0, 100, rng, c=np.full(100, 2.0))


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("ensemble", 3, {}),
        ("weighted_double_q", 2, {"c": 1.0}),
        ("bias_corrected", 1, {"sigma": 1}),
    ],
)
def test_operator_expected_bias_over_no_m_is_empty_as_for_the_other_operators(name, n, params):
    """An empty M gave NumPy's 'cannot call `vectorize` on size 0 inputs unless `otypes` is
    set' for the operators computed by quadrature; expected_bias, operator_bias and the
    closed-form operators give an empty array."""
    out = operator_expected_bias(name, np.array([], dtype=int), n, **params)
    assert out.shape == (0,) and out.dtype == np.float64
    both = operator_expected_bias(name, [1, 2], n, **params)  # and a non-empty M as before:
    # M = 1 has no max to bias (bias_corrected: no correction either, E[max of 1 N(0,1)] = 0)
    assert both.shape == (2,) and both[0] == 0.0 and both[1] != 0.0


def test_the_librarys_own_function_is_its_operator_in_the_bias_functions() -> None:
    """operator_expected_bias(operators.maxmin, ...) said 'no closed form for a G function of
    your own ('maxmin')'; operator_bias(operators.maxmin, c=1) was Python's TypeError, and a c
    per sample for operators.weighted_double_q the 'batch shape (1,)' message fixed for names
    (FiniteMDP.learn already reads a library function as its name)."""
    # Theorem 1 (i) by hand, M = 4, N = 3: 1 - 2 Gamma(5) Gamma(4/3) / Gamma(16/3)
    by_hand = 1.0 - 2.0 * math.gamma(5) * math.gamma(4 / 3) / math.gamma(16 / 3)
    assert operator_expected_bias(operators.maxmin, 4, 3) == pytest.approx(by_hand, abs=1e-12)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^maxmin takes no parameter 'c'$"):
        operator_bias(operators.maxmin, 4, 3, 1.0, 1.0, 100, rng, c=1.0)
    with pytest.raises(ValueError, match=r"c must be one number here .*got shape \(100,\)"):
        operator_bias(operators.weighted_double_q, 8, 2, 1.0, 1.0, 100, rng, c=np.full(100, 2.0))
    with pytest.raises(ValueError, match="no closed form .*'median_np'"):  # one's own: as before
        operator_expected_bias(median_np, 4, 3)


def test_operator_bias_of_a_low_precision_g_is_the_float64_moments_of_its_values() -> None:
    """A G returning float16 (or float32) values had its moments summed in that precision:
    gamma * z stayed float16, and the bias at 100,000 draws moved by 5e-5 (float32: 3e-8) from
    the same values read as float64. Now both give the float64 statistics of G's values."""

    def half(q: np.ndarray) -> np.ndarray:
        return median_np(q).astype(np.float16)

    def half_as_float64(q: np.ndarray) -> np.ndarray:
        return median_np(q).astype(np.float16).astype(np.float64)

    low, wide = (operator_bias(g, 8, 3, 1.0, 0.9, 100_000, np.random.default_rng(3))
                 for g in (half, half_as_float64))  # fmt: skip
    assert (low.bias, low.bias_se, low.variance) == (wide.bias, wide.bias_se, wide.variance)
