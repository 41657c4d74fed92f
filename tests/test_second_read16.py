"""Second reading of session 16's change: what it confirmed and fixed.

Expected messages are written out by hand here, not taken from the code under test."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq import operators as ops


@pytest.mark.parametrize(
    ("c", "shown"),
    [
        (np.ones(100, dtype=bool), "a bool ndarray of shape (100,)"),
        (torch.ones(100, dtype=torch.bool), "a torch.bool Tensor of shape (100,)"),
        (np.array(["a"] * 100), "a <U1 ndarray of shape (100,)"),
        ([True] * 100, "a list of 100 values starting True"),
    ],
)
def test_a_refused_array_parameter_is_named_in_one_line(c, shown) -> None:
    """Session 16 refused boolean (and unconvertible) c / sigma arrays with their full repr
    in the message: a 100-value NumPy or torch array made a ValueError of 8 to 12 lines."""
    q = torch.zeros((100, 2, 3)) if isinstance(c, torch.Tensor) else np.zeros((100, 2, 3))
    with pytest.raises(ValueError) as info:
        ops.weighted_double_q(q, c=c)
    assert str(info.value) == f"weighted_double_q: c must be a number (or array), got {shown}"
    q1 = q[:, :1]
    with pytest.raises(ValueError, match=r"^bias_corrected: sigma must be a number") as info:
        ops.bias_corrected(q1, sigma=c)
    assert "\n" not in str(info.value)
