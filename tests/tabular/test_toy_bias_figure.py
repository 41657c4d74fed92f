"""The toy MDP's bias-against-N figure: what it plots is the hand-computed final bias."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from maxminq.analysis import classic_plots as cp
from maxminq.cli import main


def _toy_rows() -> pd.DataFrame:
    """10 episodes of 3 runs per (mu, setting); Q(A, Left) = offset + run at episode 10 and
    100 (never in the last-10% window) before it, so a run's final value is offset + run."""
    offsets = {("q_learning", 1): 0.3, ("maxmin", 2): 0.1, ("maxmin", 4): -0.2}
    rows = []
    for mu, (algo, n), run, ep in itertools.product([0.1, -0.1], offsets, range(3), range(1, 11)):
        q = offsets[algo, n] + run + mu if ep == 10 else 100.0
        rows.append((mu, algo, n, run, ep, 0.5, 0.5, q))
    cols = ["mu", "algorithm", "n", "run", "episode", "p_left", "distance", "q_a_left"]
    return pd.DataFrame(rows, columns=cols)


def _plotted(fig) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(panel title, legend label) -> (x, y, error bar half-widths) of each error-bar series."""
    out = {}
    for ax in fig.axes:
        for c in ax.containers:
            line, _, (bars,) = c.lines[0], c.lines[1], c.lines[2]
            half = np.array([(seg[1, 1] - seg[0, 1]) / 2 for seg in bars.get_segments()])
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            out[ax.get_title(), c.get_label()] = (x, y, half)
    return out


def test_points_are_final_value_minus_mu_with_standard_error() -> None:
    series = _plotted(cp.toy_bias_vs_n_figure(_toy_rows()))
    runs_se = np.std([0.0, 1.0, 2.0], ddof=1) / np.sqrt(3)  # the runs' spread: 0, 1, 2
    for mu in ("+0.1", "-0.1"):
        title = f"μ = {mu}  (3 runs)"
        x, y, se = series[title, "Q-learning"]
        np.testing.assert_allclose(x, [1])
        np.testing.assert_allclose(y, [0.3 + 1.0])  # offset + mean run (1)
        np.testing.assert_allclose(se, [runs_se])
        x, y, se = series[title, "Maxmin Q"]
        np.testing.assert_allclose(x, [2, 4])
        np.testing.assert_allclose(y, [0.1 + 1.0, -0.2 + 1.0])
        np.testing.assert_allclose(se, [runs_se, runs_se])


def test_gamma_moves_the_true_value_and_theorem_line_is_at_3_66() -> None:
    gamma = 0.5
    # Q(A, Left) shifted so its error against gamma * mu equals the gamma = 1 case's
    df = _toy_rows()
    df.loc[df.episode == 10, "q_a_left"] -= (1 - gamma) * df.loc[df.episode == 10, "mu"]
    fig = cp.toy_bias_vs_n_figure(df, gamma=gamma)
    _, y, _ = _plotted(fig)["μ = +0.1  (3 runs)", "Maxmin Q"]
    np.testing.assert_allclose(y, [1.1, 0.8])
    assert "γ·μ, γ = 0.5" in fig.axes[0].get_ylabel()
    # the paper's Theorem 1 for M = 8: t_MN = 1/2 between N = 3 and 4 (about 3.66)
    (vline,) = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("Theorem 1")]
    assert vline.get_xdata()[0] == pytest.approx(3.66, abs=0.01)


def test_experiment_command_writes_the_figure(tmp_path) -> None:
    out = tmp_path / "toy"
    argv = ["experiment", "toy-mdp", "--runs", "4", "--episodes", "3", "--mu", "0.1",
            "--algorithms", "q_learning", "maxmin:2", "--workers", "1", "--no-progress",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert (out / "toy_mdp_bias_vs_n.png").stat().st_size > 1000


def test_legend_lies_outside_the_panels_and_the_x_label_names_both_snapshot_agents() -> None:
    """The legend sat inside the mu = +0.1 panel, over Maxmin's points once more families
    were drawn; it is the figure's, below the panels, with every family once (Double Q is
    only in the mu = -0.1 panel here). N is K for Averaged and for Historical Best."""
    df = _toy_rows()
    extra = df[(df.mu == -0.1) & (df.algorithm == "maxmin") & (df.n == 2)].assign(
        algorithm="double_q"
    )
    fig = cp.toy_bias_vs_n_figure(pd.concat([df, extra], ignore_index=True))
    fig.canvas.draw()
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert sorted(labels[1:]) == ["Double Q", "Maxmin Q", "Q-learning"]
    assert labels[0].startswith("Theorem 1")
    box = legend.get_window_extent()
    assert not any(box.overlaps(ax.get_window_extent()) for ax in fig.axes)
    for ax in fig.axes:
        assert "Averaged and Historical Best" in ax.get_xlabel()
