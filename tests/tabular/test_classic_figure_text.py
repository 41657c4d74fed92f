"""The classic figures' text and episode axes.

The toy MDP and Mountain Car figures wrote ``mu``, ``sigma^2``, ``gamma mu`` and
``eps-greedy`` where the report's tables and claims beside them write μ, σ², γ·μ and ε; their
episode axes of short runs were ticked 1.0, 1.5, 2.0, ... (an episode is a whole number).
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from maxminq.analysis import classic_plots as cp
from maxminq.commands.experiment import fig3b_figure


def _toy(episodes: int) -> pd.DataFrame:
    """Two runs of Q-learning and Maxmin N = 2 at mu = +-0.1, values chosen by hand."""
    rows = [
        dict(
            mu=mu,
            algorithm=a,
            n=n,
            run=r,
            episode=e,
            p_left=0.5,
            distance=0.1 * r,
            q_a_left=mu + 0.01 * (r + e),
        )  # fmt: skip
        for mu in (0.1, -0.1)
        for a, n in (("q_learning", 1), ("maxmin", 2))
        for r in range(2)
        for e in range(1, episodes + 1)
    ]
    return pd.DataFrame(rows)


def _mc(episodes: int) -> pd.DataFrame:
    """Two runs of Q-learning and Maxmin N = 4 at sigma^2 = 1 and 10, one step size."""
    rows = [
        dict(
            algorithm=a,
            n=n,
            sigma2=s2,
            step_size=0.02,
            run=r,
            episode=e,
            steps=1000 - 100 * e + 10 * r,
        )  # fmt: skip
        for a, n in (("q_learning", 1), ("maxmin", 4))
        for s2 in (1.0, 10.0)
        for r in range(2)
        for e in range(1, episodes + 1)
    ]
    return pd.DataFrame(rows)


def _drawn(fig) -> list[str]:
    """Every text the figure draws (titles, labels, legends), after saving it; fails on a
    glyph the font lacks (matplotlib warns and draws a box)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png", dpi=40)
    missing = [str(w.message) for w in caught if "missing from" in str(w.message)]
    assert not missing, missing
    texts = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    return [t for t in texts if t]


def test_toy_figures_write_mu_gamma_and_epsilon_as_the_report_tables_do() -> None:
    import matplotlib.pyplot as plt

    df = _toy(3)
    fig = cp.toy_distance_figure(df)
    texts = _drawn(fig)  # every figure's texts, checked for the old words at the end
    assert [ax.get_title() for ax in fig.axes] == ["μ = +0.1  (2 runs)", "μ = -0.1  (2 runs)"]
    assert fig.axes[0].get_ylabel() == "distance to optimal ε-greedy policy"
    plt.close(fig)
    fig = cp.toy_q_left_figure(df, gamma=0.5)
    texts += _drawn(fig)
    assert "true value γ·μ = +0.05" in texts and "true value γ·μ = -0.05" in texts
    plt.close(fig)
    fig = cp.toy_bias_vs_n_figure(df)
    texts += _drawn(fig)
    assert [ax.get_title() for ax in fig.axes] == ["μ = +0.1  (2 runs)", "μ = -0.1  (2 runs)"]
    assert fig.axes[0].get_ylabel() == "final Q(A, Left) - μ"
    plt.close(fig)
    fig = cp.toy_bias_vs_n_figure(df, gamma=0.5)
    texts += _drawn(fig)
    assert fig.axes[0].get_ylabel() == "final Q(A, Left) - γ·μ, γ = 0.5"
    plt.close(fig)
    assert not [t for t in texts if "mu" in t or "gamma" in t or "eps" in t]


def test_mountain_car_figures_write_sigma_squared() -> None:
    import matplotlib.pyplot as plt

    df = _mc(3)
    fig = cp.mc_sensitivity_figure(df, max_steps=5000)
    _drawn(fig)
    assert fig.axes[0].get_xlabel() == "reward variance σ² (symmetric log scale)"
    plt.close(fig)
    fig, note = fig3b_figure(df, [1.0, 10.0], 5000)
    texts = _drawn(fig)
    assert note is None
    assert "Fig. 3(b): σ² = 10, at most 5,000 steps per episode" in texts
    plt.close(fig)
    fig, note = fig3b_figure(df[df.sigma2 == 1.0], [1.0], None)
    assert fig._suptitle.get_text() == "Fig. 3(b) at σ² = 1, not 10"
    assert note == "fig3b shows sigma^2 = 1 (the paper's 10 is not among --sigma2)"  # console
    plt.close(fig)


@pytest.mark.parametrize("episodes", [2, 4, 7])
def test_episode_axes_of_short_runs_are_ticked_at_whole_episodes(episodes: int) -> None:
    import matplotlib.pyplot as plt

    for fig in (
        cp.toy_distance_figure(_toy(episodes)),
        cp.toy_q_left_figure(_toy(episodes)),
        cp.mc_learning_curve_figure(_mc(episodes)),
    ):
        fig.canvas.draw()
        for ax in fig.axes:
            lo, hi = sorted(ax.get_xlim())
            ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
            assert len(ticks) >= 2, ticks
            np.testing.assert_array_equal(ticks, np.round(ticks))
        plt.close(fig)


def test_episode_axes_of_long_runs_keep_matplotlibs_ticks() -> None:
    """300 and 1,000 episodes: the default locator's ticks (0, 50, ..., 300 and 0, 200, ...,
    1,000), so the paper-scale figures are drawn as before."""
    import matplotlib.pyplot as plt

    for episodes, step in ((300, 50), (1000, 200)):
        df = _mc(episodes).assign(steps=lambda d: 1000 - d.episode // 2)
        fig = cp.mc_learning_curve_figure(df, sigma2=[10.0])
        fig.canvas.draw()
        ax = fig.axes[0]
        lo, hi = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
        assert ticks == list(range(0, episodes + 1, step))
        plt.close(fig)


def test_one_run_and_one_episode_are_counted_in_the_singular(tmp_path, capsys, monkeypatch) -> None:
    """A smoke run of one run and one episode: titles read '(1 runs)', 'Mountain Car, 1 runs,
    1 episodes', 'Appendix C.2: ..., 1 runs x 1 episodes' and the toy summary '(1 rows, ...'."""
    import matplotlib.pyplot as plt

    from maxminq.cli import main

    one = _toy(1)
    one = one[(one.run == 0) & (one.algorithm == "q_learning")]
    fig = cp.toy_q_left_figure(one)
    assert [ax.get_title() for ax in fig.axes] == ["μ = +0.1  (1 run)", "μ = -0.1  (1 run)"]
    plt.close(fig)
    fig = cp.toy_bias_vs_n_figure(one)
    assert fig.axes[0].get_title() == "μ = +0.1  (1 run)"
    plt.close(fig)
    mc = _mc(1)
    fig = cp.mc_sensitivity_figure(mc[mc.run == 0])
    assert fig.axes[0].get_title() == "Mountain Car, 1 run, 1 episode"
    plt.close(fig)

    toy = ["experiment", "toy-mdp", "--runs", "1", "--episodes", "1", "--mu", "0.1",
           "--algorithms", "q_learning", "--workers", "1", "--no-progress"]  # fmt: skip
    assert main([*toy, "--out", str(tmp_path / "toy")]) == 0
    assert "toy_mdp.csv (1 row, " in capsys.readouterr().out
    titles: dict[str, str] = {}
    save = cp.save_figure

    def keep_title(fig, path):  # type: ignore[no-untyped-def]
        titles[str(path).rsplit("/", 1)[-1]] = fig._suptitle.get_text() if fig._suptitle else ""
        return save(fig, path)

    monkeypatch.setattr(cp, "save_figure", keep_title)
    mc_argv = ["experiment", "mountain-car", "--runs", "1", "--episodes", "1", "--max-steps",
               "30", "--sigma2", "10", "--step-sizes", "0.1", "--algorithms", "q_learning",
               "--workers", "1", "--no-progress"]  # fmt: skip
    assert main([*mc_argv, "--out", str(tmp_path / "mc")]) == 0
    assert titles["figC2_mountain_car_curves.png"].startswith(
        "Appendix C.2: noisy Mountain Car, 1 run x 1 episode, at most 30 steps per episode"
    )


def test_learning_curves_name_the_step_cap_without_a_title() -> None:
    """``mc_learning_curve_figure(df, max_steps=5000)`` (as the report draws them) dropped
    the cap without a word: only a title carried it. Now the cap, and the step-size reading
    of a table that records it, head the panels; a table with neither stays untitled."""
    import matplotlib.pyplot as plt

    df = _mc(3)
    fig = cp.mc_learning_curve_figure(df, max_steps=5000)
    assert fig._suptitle.get_text() == "At most 5,000 steps per episode"
    plt.close(fig)
    fig = cp.mc_learning_curve_figure(df.assign(step_size_per="total"), max_steps=300)
    assert fig._suptitle.get_text() == "At most 300 steps per episode, step sizes per total"
    plt.close(fig)
    fig = cp.mc_learning_curve_figure(df.assign(step_size_per="tiling"))
    assert fig._suptitle.get_text() == "Step sizes per tiling"
    plt.close(fig)
    fig = cp.mc_learning_curve_figure(df)
    assert fig._suptitle is None
    plt.close(fig)
    fig = cp.mc_learning_curve_figure(df, title="Fig. 3(b)", max_steps=5000)
    assert fig._suptitle.get_text() == "Fig. 3(b), at most 5,000 steps per episode"
    plt.close(fig)
