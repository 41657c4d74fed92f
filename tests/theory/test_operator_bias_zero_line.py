"""operator_bias.png's zero line lies under the operators' lines: Double Q's exact mean is 0,
and the zero line drawn over it hid its dashed line (only its point was left to see)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from maxminq.analysis import style
from maxminq.analysis.theory_plots import operator_bias_table, plot_operator_bias


@pytest.mark.usefixtures("unrendered_figures")
def test_double_qs_line_at_zero_is_drawn_over_the_zero_line() -> None:
    table = operator_bias_table(4, 2, 100, 0)
    ax_bias = plot_operator_bias(table).axes[0]
    at_zero = [ln for ln in ax_bias.lines if np.all(np.asarray(ln.get_ydata()) == 0.0)]
    double = [ln for ln in at_zero if to_rgba(ln.get_color()) == to_rgba(style.color("double_q"))]
    zero = [ln for ln in at_zero if to_rgba(ln.get_color()) == to_rgba("black")]
    assert len(double) == 1 and len(zero) == 1
    order = ax_bias.get_children()  # the drawing order among equal zorders
    assert (double[0].get_zorder(), order.index(double[0])) > (
        zero[0].get_zorder(),
        order.index(zero[0]),
    )
