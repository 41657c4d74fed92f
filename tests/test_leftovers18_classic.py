"""Session 18, classic side: leftovers of the tabular / tile-coding code and the report.

Each test reproduces what a user met before the fix: ``FiniteMDP.learn(reward_noise=...)``
failed with Python's "got multiple values" TypeError; a diverged toy run was logged as a
coin-flip policy (P(Left) 0.5); the experiment's CSV turned computed values beyond float32's
range into inf; the report's settings table rounded setting values to 3 digits and sorted
numbers as text."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from maxminq.tabular.finite_mdp import random_mdp

_MDP = random_mdp(3, 2, np.random.default_rng(0), reward_noise=0.2)


@pytest.mark.parametrize("key", ["reward_noise", "terminal", "P", "R", "gamma"])
def test_learn_names_an_mdp_setting_passed_as_an_option_and_what_to_do(key: str) -> None:
    with pytest.raises(TypeError) as err:
        _MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), **{key: 0.5})
    text = str(err.value)
    assert "\n" not in text and "multiple values" not in text
    assert text.startswith(f"learn: {key} is the MDP's own")
    assert f"dataclasses.replace(mdp, {key}=...)" in text


def test_the_advised_replace_learns_with_the_other_noise() -> None:
    """What the error advises works: the replaced MDP learns with its noise (a noiseless
    copy learns another table from the same random stream; the original keeps its noise)."""
    quiet = dataclasses.replace(_MDP, reward_noise=0.0)
    assert quiet.reward_noise == 0.0 and _MDP.reward_noise == 0.2
    a = quiet.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    b = _MDP.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    assert not np.allclose(a, b)
