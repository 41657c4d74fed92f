"""Arguments of ``operator_expected_bias`` and ``operator_bias`` refused in the words of the
function called: ``noise`` (operator_bias's) to the closed forms, which are for uniform errors
only (it said the operator had no such parameter), and an unknown operator (it named
``operator_params``)."""

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


@pytest.mark.parametrize("name", ["maxmn", 3])
def test_an_unknown_operator_is_named_by_the_function_called(name) -> None:
    """It began 'operator_params: unknown operator', a function the user had not called."""
    import numpy as np

    from maxminq.theory import operator_bias

    known = "averaged, bias_corrected, double_q, ensemble, historical_best, maxmin, q_learning, "
    known += "weighted_double_q"
    with pytest.raises(ValueError) as err:
        operator_bias(name, 8, 4, 1.0, 1.0, 100, np.random.default_rng(0))
    assert str(err.value) == (
        f"operator_bias: unknown operator {name!r}; choose one of: {known}, or a G function "
        "of your own"
    )
    with pytest.raises(ValueError) as err:
        operator_expected_bias(name, 8, 4)
    want = f"operator_expected_bias: unknown operator {name!r}; choose one of: {known}"
    assert str(err.value) == want
