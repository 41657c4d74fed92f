"""Tabular Generalized Q-learning with a G of one's own that gives NaN returned NaN tables
without a word (``operator_bias`` already refuses such a G); now a NonFiniteTablesWarning that
names the operator and points at the caller's line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxminq.tabular.finite_mdp import FiniteMDP, NonFiniteTablesWarning, random_mdp


def sqrt_g(q: np.ndarray) -> np.ndarray:
    """A G of one's own that is finite on zeros (the library's first check) but NaN once a
    value goes negative, as the random MDP's rewards in [-1, 1] make some."""
    return np.sqrt(q.max(axis=-2)).max(axis=-1)


def _mdp() -> FiniteMDP:
    return random_mdp(4, 2, np.random.default_rng(0), gamma=0.9)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_g_giving_nan_is_a_warning_at_the_callers_line(mode: str) -> None:
    with np.errstate(invalid="ignore"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _mdp().learn(sqrt_g, 2, 1, 50, np.random.default_rng(1), mode=mode)  # here
    assert np.isnan(result.q).any()  # the result is still returned, as it is
    ours = [w for w in caught if issubclass(w.category, NonFiniteTablesWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "sqrt_g" in str(ours[0].message)
    assert ours[0].filename == __file__


def test_a_finite_run_gives_no_such_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonFiniteTablesWarning)
        result = _mdp().learn("maxmin", 2, 1, 50, np.random.default_rng(1))
    assert np.isfinite(result.q).all()
