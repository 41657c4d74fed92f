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


def _operator_rows(name: str, ns: list[int], bias: list[float]) -> list[dict[str, object]]:
    """Rows of an ``operator_bias_table`` for one operator setting (values made up: the
    figure is what is tested)."""
    return [
        {"operator": name, "M": 8, "N": n, "expected_bias": np.nan, "bias": b,
         "bias_se": 0.01, "variance": 0.04, "variance_se": 0.001, "samples": 100,
         "noise": "uniform"}
        for n, b in zip(ns, bias, strict=True)
    ]  # fmt: skip


def test_two_settings_of_one_own_g_get_two_colours() -> None:
    """A sweep of a soft-min's temperature in one figure: ``operator_bias_table(...,
    extra=[(ref, g, {"beta": 5}), (ref, g, {"beta": 20})])`` drew both curves in one colour
    (the colour went by the G's name, not its setting), told apart only by the legend."""
    import pandas as pd

    from maxminq.analysis.theory_plots import plot_operator_bias

    rows = _operator_rows("maxmin", [1, 2, 3], [0.78, 0.40, 0.13])
    rows += _operator_rows("my_ops:softmin_q:beta=5", [1, 2, 3], [0.78, 0.45, 0.25])
    rows += _operator_rows("my_ops:softmin_q:beta=20", [1, 2, 3], [0.78, 0.42, 0.17])
    fig = plot_operator_bias(pd.DataFrame(rows))
    ax_bias = fig.axes[0]
    colours = {c.get_label(): c.lines[0].get_color() for c in ax_bias.containers}
    five = next(v for k, v in colours.items() if "beta=5" in k)
    twenty = next(v for k, v in colours.items() if "beta=20" in k)
    assert five != twenty
    assert colours["Maxmin Q"] not in (five, twenty)
