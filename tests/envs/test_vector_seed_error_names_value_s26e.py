"""A vector env's ``reset(seed=...)`` refused for its length names the value as the caller
gave it: 670e7c5 turned a range into a list before the check, so ``reset(seed=range(3))`` of
a 2-env vector env said "got [0, 1, 2]", a list the caller never wrote (and a NumPy array of
seeds was shown as a list too)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from maxminq.envs import make_vector


@pytest.mark.parametrize(
    ("seed", "shown"),
    [(range(3), "range(0, 3)"), (np.array([4, 5, 6]), "array([4, 5, 6])")],
)
def test_a_refused_seed_is_named_as_given(seed: object, shown: str) -> None:
    venv = make_vector("maxminq/Catcher-v0", seeds=[0, 1])
    with pytest.raises(ValueError, match=r"a list of 2 seeds") as caught:
        venv.reset(seed=seed)
    assert str(caught.value).endswith(f"got {shown}"), str(caught.value)
    assert not re.search(r"got \[", str(caught.value))
