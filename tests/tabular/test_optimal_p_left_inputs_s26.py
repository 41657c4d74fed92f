"""``optimal_p_left`` (public: the toy MDP's optimal eps-greedy P(Left | A)) took any epsilon
and mu: epsilon = 2 gave 0.0 (no probability could be that), and mu = 0, where every policy
is optimal, gave eps/2 as if Right were better."""

from __future__ import annotations

import math

import pytest

from maxminq.tabular.toy_mdp import optimal_p_left


@pytest.mark.parametrize("epsilon", [2.0, -0.1, math.nan])
def test_an_epsilon_that_is_no_probability_is_refused(epsilon: float) -> None:
    with pytest.raises(ValueError, match=r"^optimal_p_left: epsilon must be in \[0, 1\]"):
        optimal_p_left(0.1, epsilon)


@pytest.mark.parametrize("mu", [0.0, -0.0, math.inf, math.nan])
def test_a_mu_without_one_optimal_policy_is_refused(mu: float) -> None:
    with pytest.raises(ValueError, match=r"^optimal_p_left: mu must be a finite non-zero"):
        optimal_p_left(mu)


def test_the_paper_values_at_the_bounds_of_epsilon() -> None:
    # by hand: Left greedy w.p. 1 - eps plus half of the eps of random choice
    assert optimal_p_left(0.1) == pytest.approx(0.95)
    assert optimal_p_left(-0.1) == pytest.approx(0.05)
    assert (optimal_p_left(0.1, 0.0), optimal_p_left(-0.1, 0.0)) == (1.0, 0.0)
    assert (optimal_p_left(0.1, 1.0), optimal_p_left(-0.1, 1.0)) == (0.5, 0.5)
