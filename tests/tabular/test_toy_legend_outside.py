"""The toy MDP's curve figures (Fig. 2 and the appendix's Q(A, Left)) put the algorithms'
legend below the panels, where it hides no curve. Inside the first panel (matplotlib's
'best' place) it covered the ends of Maxmin's curves: N = 6 and 8 from episode 550 on in
docs/figures/toy_mdp_q_left.png, Double Q's first 150 episodes in toy_mdp_distance.png."""

from __future__ import annotations

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from maxminq.analysis import classic_plots as cp
from maxminq.tabular.toy_mdp import run_toy_mdp

PAPER = [("q_learning", 1), ("double_q", 2), ("maxmin", 2), ("maxmin", 4), ("maxmin", 6),
         ("maxmin", 8)]  # fmt: skip


@pytest.fixture(scope="module")
def toy() -> pd.DataFrame:
    """The paper's six algorithms at both mu, a few short runs."""
    return pd.concat(
        [
            run_toy_mdp(mu=mu, algorithm=a, n=n, runs=3, episodes=20, seed=0)
            for mu in (0.1, -0.1)
            for a, n in PAPER
        ],
        ignore_index=True,
    )


@pytest.mark.parametrize("draw", [cp.toy_distance_figure, cp.toy_q_left_figure])
def test_the_legend_lies_below_every_panel(toy: pd.DataFrame, draw) -> None:
    fig = draw(toy)
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["Q-learning", "Double Q"] + [f"Maxmin Q (N={n})" for n in (2, 4, 6, 8)]
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:  # below each panel's lowest pixel (its x label included)
        assert box.y1 <= ax.get_tightbbox(renderer).y0
        own = ax.get_legend()  # a panel keeps only its true value line's legend, if any
        assert own is None or [t.get_text() for t in own.get_texts()][0].startswith("true")
    assert box.y0 >= fig.bbox.y0  # and inside the figure
