"""What a researcher who studies estimation bias meets on the way: Theorem 1's closed forms
against simulation, the N of zero bias, a G of one's own (a soft-min, a weighted double) put
through the same bias machinery, and the figures of it. Expected values come from the
paper's formulas or from independent computations (quadrature, NumPy by hand), never from
the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from maxminq import theory


def test_operator_expected_bias_names_a_parameter_array_not_a_batch_shape() -> None:
    """``operator_expected_bias("weighted_double_q", 8, 2, c=[1, 2])`` said ``c must be a
    number or broadcast to the batch shape (1,), got shape (2,)``: the operator's check on
    a batch of one that the caller never gave, while ``operator_bias`` said what is wrong.
    Both now say c must be one number (they share one check)."""
    for call in (
        lambda: theory.operator_expected_bias("weighted_double_q", 8, 2, c=[1.0, 2.0]),
        lambda: theory.operator_bias(
            "weighted_double_q", 8, 2, 1.0, 1.0, 10, np.random.default_rng(0), c=[1.0, 2.0]
        ),
    ):
        with pytest.raises(ValueError) as err:
            call()
        text = str(err.value)
        assert "c must be one number here" in text and "(2,)" in text
        assert "batch shape" not in text
