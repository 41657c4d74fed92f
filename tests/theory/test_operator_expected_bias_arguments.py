"""``operator_expected_bias`` given ``operator_bias``'s ``noise``: its closed forms are for
uniform errors only, and the refusal says so (it said the operator had no such parameter)."""

from __future__ import annotations

import pytest

from maxminq.theory import operator_expected_bias


@pytest.mark.parametrize("given", [{"noise": "normal"}, {"op_kwargs": {"noise": "uniform"}}])
def test_noise_is_refused_as_operator_bias_s_argument(given: dict) -> None:
    with pytest.raises(ValueError) as err:
        operator_expected_bias("maxmin", 8, 4, 1.0, 1.0, **given)
    text = str(err.value)
    assert text.startswith("operator_expected_bias takes no noise: its closed forms are for")
    assert "operator_bias(..., noise='normal')" in text and "no parameter" not in text
