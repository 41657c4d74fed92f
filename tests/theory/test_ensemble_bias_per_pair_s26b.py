"""operator_expected_bias for Ensemble (and independent Averaged) works out E[max of M means
of N U(-1, 1)] once for each distinct (M, N): it did so for every element of the broadcast of
M, N, tau and gamma, so the exact bias over 1000 values of tau at M = 8, N = 20 took 8 s (one
quadrature each) for what is one quadrature scaled by tau. Reference for M = 8, N = 2 (the
mean of 2 U(-1, 1) is triangular: F(x) = (1 + x)^2 / 2 below 0, 1 - (1 - x)^2 / 2 above):
1 - int_{-1}^{1} F^8, by mpmath.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from maxminq import theory


def _eight_of_two() -> float:
    def cdf(x):
        return (1 + x) ** 2 / 2 if x <= 0 else 1 - (1 - x) ** 2 / 2

    with mpmath.workdps(30):
        return float(1 - mpmath.quad(lambda x: cdf(x) ** 8, [-1, 0, 1]))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (M, N) of every call of the real _max_of_means."""
    calls: list[tuple[int, int]] = []
    real = theory._max_of_means

    def counting(m: int, n: int) -> float:
        calls.append((m, n))
        return real(m, n)

    monkeypatch.setattr(theory, "_max_of_means", counting)
    return calls


@pytest.mark.parametrize("name", ["ensemble", "averaged"])
def test_one_quadrature_for_many_taus(counted: list[tuple[int, int]], name: str) -> None:
    tau = np.linspace(0.1, 2.0, 400)
    got = theory.operator_expected_bias(name, 8, 2, tau=tau, gamma=0.9)
    assert counted == [(8, 2)]
    np.testing.assert_allclose(got, 0.9 * tau * _eight_of_two(), rtol=1e-13, atol=0)


def test_one_quadrature_for_each_distinct_pair(counted: list[tuple[int, int]]) -> None:
    m = np.array([8, 8, 3, 8])
    n = np.array([[2], [2], [5]])
    got = theory.operator_expected_bias("ensemble", m, n, tau=np.ones((2, 1, 1)))
    assert sorted(counted) == [(3, 2), (3, 5), (8, 2), (8, 5)]
    assert got.shape == (2, 3, 4)
    assert got[1, 0, 0] == pytest.approx(_eight_of_two(), abs=1e-13)
    assert (got[:, :, [0, 1, 3]] == got[0, 0, 0]).sum() == 2 * 2 * 3  # N = 2 rows: one value
