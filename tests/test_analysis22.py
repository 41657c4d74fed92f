"""Session 22, analysis leftovers: an operator's parameter settings (op_kwargs) in value order
and told apart in the figures; toy MDP runs gone non-finite named, never silently averaged."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import to_hex

from maxminq.analysis import classic_plots as cp
from maxminq.analysis import figures as F
from maxminq.analysis import style
from maxminq.analysis import tables as T
from maxminq.analysis.runs import param_order, param_shades, plot_runs

OWN = "my_ops:softmin_q"
BETAS = ('{"beta":20}', '{"beta":5}', '{"beta":100}')  # text order: 100, 20, 5


# ----------------------------------------------------------------------------- the one order
def test_params_key_orders_numbers_as_numbers_per_key() -> None:
    given = ['{"beta":20}', {"beta": 5}, None, '{"beta":100}', float("nan"), '{"a":1,"beta":2}']
    ordered = sorted(given, key=style.params_key)
    assert ordered[:2] == [None, given[4]] or ordered[:2] == [given[4], None]  # none first
    assert ordered[2:] == ['{"a":1,"beta":2}', {"beta": 5}, '{"beta":20}', '{"beta":100}']
    assert style.params_ranks(['{"beta":20}', '{"beta":5.0}', {"beta": 5}]) == [1, 0, 0]


def _deep_episodes(settings: list[tuple[str, str | None, str | None, float]]) -> pd.DataFrame:
    """Two seeds x 30 episodes per (agent, operator, op_kwargs, return level)."""
    rng = np.random.default_rng(0)
    rows = []
    for i, (agent, op, kw, level) in enumerate(settings):
        for seed, ep in itertools.product((0, 1), range(30)):
            rows.append(
                {"run_id": f"r{i}", "env_id": "CartPole-v1", "agent": agent, "n": 3,
                 "lr": 1e-3, "operator": op, "op_kwargs": kw, "seed": seed, "episode": ep,
                 "step": 10 * (ep + 1), "return": level + rng.normal()}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_summary_and_best_rows_put_beta_5_20_100_in_value_order() -> None:
    settings = [("generalized-dqn", OWN, kw, 10.0 * i) for i, kw in enumerate(BETAS)]
    tables = T.Tables(episodes=_deep_episodes([("dqn", None, None, 1.0), *settings]))
    summary = T.deep_summary(tables, reps=50)
    gen = summary[summary["agent"] == "generalized-dqn"]
    assert list(gen["op_kwargs"]) == ['{"beta":5}', '{"beta":20}', '{"beta":100}']
    # each row keeps its own numbers: beta=5 is BETAS[1], level 10
    np.testing.assert_allclose(gen["mean"], [10.0, 0.0, 20.0], atol=1.5)
    best = T.deep_best(summary)
    assert list(best["op_kwargs"].dropna()) == ['{"beta":5}', '{"beta":20}', '{"beta":100}']


def test_learning_curves_legend_in_value_order_and_each_beta_its_own_look() -> None:
    settings = [("generalized-dqn", OWN, kw, 10.0 * i) for i, kw in enumerate(BETAS)]
    settings.append(("generalized-dqn", "maxmin", None, 5.0))  # a G with one setting
    tables = T.Tables(episodes=_deep_episodes([("dqn", None, None, 1.0), *settings]))
    best = T.deep_best(T.deep_summary(tables, reps=50))
    fig = F._best_agent_figure(best, T.deep_curves(tables.episodes), "steps", "return")
    assert fig is not None
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    own = [label for label in labels if "softmin_q" in label]
    assert own == [f"Generalized DQN, softmin_q [my_ops] (beta={b})" for b in (5, 20, 100)]
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    looks = {(to_hex(lines[label].get_color()), str(lines[label].get_linestyle())) for label in own}
    assert len(looks) == 3  # beta 5, 20 and 100 were one colour and one dash
    # a G with one setting, and DQN, look as before: their colour, dashed / solid
    maxmin = lines["Generalized DQN, maxmin"]
    assert to_hex(maxmin.get_color()) == style.color("maxmin")
    assert maxmin.get_linestyle() == "--"
    assert to_hex(lines["DQN"].get_color()) == style.color("dqn")


def _toy_rows(betas: dict[str, int] | None = None) -> pd.DataFrame:
    """4 runs x 10 episodes per (mu, setting); maxmin N = 2 and 4 without parameters, and
    ``betas`` (op_kwargs JSON -> N) of a G of one's own."""
    settings = [("maxmin", 2, None), ("maxmin", 4, None)]
    settings += [(OWN, n, kw) for kw, n in (betas or {}).items()]
    rows = []
    for mu, (algo, n, kw), run, ep in itertools.product([0.1], settings, range(4), range(1, 11)):
        rows.append((mu, algo, n, kw, run, ep, 0.5, 0.5, 0.01 * n + 0.1 * run))
    cols = ["mu", "algorithm", "n", "op_kwargs", "run", "episode", "p_left", "distance"]
    return pd.DataFrame(rows, columns=[*cols, "q_a_left"])


def _errorbars(fig) -> dict[str, tuple[str, str, str]]:
    """Legend label -> (colour, marker, line style) of each error-bar series of panel 0."""
    out = {}
    for c in fig.axes[0].containers:
        line = c.lines[0]
        out[c.get_label()] = (to_hex(line.get_color()), line.get_marker(), line.get_linestyle())
    return out


def test_toy_bias_vs_n_orders_betas_by_value_and_tells_them_apart() -> None:
    fig = cp.toy_bias_vs_n_figure(_toy_rows({'{"beta":20}': 2, '{"beta":5}': 4, '{"beta":100}': 2}))
    bars = _errorbars(fig)
    own = [label for label in bars if "softmin_q" in label]
    # by value, not by text ('100' < '20' < '5') nor by the N of a line's first point
    assert own == [f"softmin_q [my_ops] (beta={b})" for b in (5, 20, 100)]
    assert len({bars[label] for label in own}) == 3
    assert len({bars[label][0] for label in own}) == 3  # each a shade of G's colour
    assert len({bars[label][1] for label in own}) == 3  # and its own marker
    # an operator without parameters keeps its colour and marker
    assert bars["Maxmin Q"] == (style.color("maxmin"), "o", "-")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [t for t in legend if "beta" in t] == own


def test_toy_panels_legend_orders_one_n_by_beta_value() -> None:
    # a sweep's settings: one N, three betas
    fig = cp.toy_q_left_figure(_toy_rows({kw: 3 for kw in BETAS}))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    own = [label for label in labels if "beta" in label]
    assert own == [f"softmin_q [my_ops] (N=3) (beta={b})" for b in (5, 20, 100)]
    colours = {to_hex(ln.get_color()) for ln in fig.axes[0].get_lines() if "beta" in ln.get_label()}
    assert len(colours) == 3


# ----------------------------------------------------------------------------- non-finite runs
def _gone(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with runs 0 and 1 of maxmin N = 4 non-finite from episodes 4 and 7 (inf first,
    then NaN, as a diverging table does)."""
    df = df.copy()
    sel = (df.algorithm == "maxmin") & (df.n == 4) & (df.run < 2)
    start = np.where(df.run == 0, 4, 7)
    gone = sel & (df.episode >= start)
    df.loc[gone, ["q_a_left", "p_left", "distance"]] = np.nan
    df.loc[gone & (df.episode == start), "q_a_left"] = np.inf
    return df


def test_nonfinite_runs_names_setting_count_and_episodes() -> None:
    table = T.nonfinite_runs(_gone(_toy_rows()), T.TOY_KEYS, "q_a_left")
    assert table[["algorithm", "n", "runs", "nonfinite", "first", "last"]].values.tolist() == [
        ["maxmin", 4, 4, 2, 4, 7]
    ]
    assert T.nonfinite_runs(_toy_rows(), T.TOY_KEYS, "q_a_left").empty


def test_toy_final_leaves_out_a_run_that_went_non_finite_in_its_tail() -> None:
    # the last half: episodes 6-10; run 1 is finite at 6, non-finite from 7
    final = T.toy_final(_gone(_toy_rows()), "q_a_left", last_fraction=0.5)
    mm4 = final[(final.algorithm == "maxmin") & (final.n == 4)].sort_values("run")
    # runs 0 and 1: non-finite at the end (run 1's finite episode 6 was its final value)
    assert mm4["q_a_left"].isna().tolist() == [True, True, False, False]


def test_toy_figures_name_the_runs_that_went_non_finite() -> None:
    df = _gone(_toy_rows())
    bias = cp.toy_bias_vs_n_figure(df)
    note = bias._suptitle.get_text()
    assert "went non-finite" in note and "left out of the points" in note
    assert "Maxmin Q (N=4): 2 of 4 runs at mu = +0.1 went non-finite, at episodes 4 to 7" in note
    maxmin = bias.axes[0].containers[0]  # Maxmin Q at N = 2 and 4
    assert maxmin.get_label() == "Maxmin Q"
    y = np.asarray(maxmin.lines[0].get_ydata(), dtype=float)
    np.testing.assert_allclose(y, [0.02 + 0.15 - 0.1, 0.04 + 0.25 - 0.1])  # N = 4: runs 2, 3
    curves = cp.toy_q_left_figure(df)
    assert "the means are over the other runs" in curves._suptitle.get_text()
    for line in curves.axes[0].get_lines():
        if line.get_label() == "Maxmin Q (N=4)":  # an inf at episode 4 made the mean inf
            assert np.isfinite(np.asarray(line.get_ydata(), dtype=float)).all()
    # all finite: no note, the figure as before
    assert cp.toy_bias_vs_n_figure(_toy_rows())._suptitle is None


def test_report_caption_names_the_non_finite_runs(tmp_path: Path) -> None:
    toy = _gone(_toy_rows()).drop(columns="op_kwargs")
    made = F.classic_figures(T.Tables(toy=toy), tmp_path)
    captions = {f.name: f.caption for f in made}
    assert (
        "2 of 4 runs at mu = +0.1 went non-finite, at episodes 4 to 7"
        in captions["toy_mdp_bias_vs_n"]
    )
    assert "the means are over the other runs" in captions["toy_mdp_q_left"]
    clean = F.classic_figures(T.Tables(toy=_toy_rows().drop(columns="op_kwargs")), tmp_path)
    assert not any("non-finite" in f.caption for f in clean)


# ----------------------------------------------------------------------------- maxminq plot
def _run(folder: Path, op_kwargs: dict | None, operator: str = OWN) -> Path:
    """A finished one-seed generalized-dqn run folder as 'maxminq train' writes it, made-up
    numbers."""
    folder.mkdir()
    cfg = {"agent": "generalized-dqn", "n": 3, "lr": 1e-3, "steps": 200, "operator": operator}
    cfg |= {"env_id": "CartPole-v1", "seeds": [0], "network": "mlp", "op_kwargs": op_kwargs}
    (folder / "config.json").write_text(json.dumps(cfg))
    ep = pd.DataFrame({"seed": 0, "step": [100, 200], "return": [1.0, 2.0]})
    ep["return_avg100"] = [1.0, 1.5]
    ep.to_csv(folder / "episodes.csv", index=False)
    m = pd.DataFrame({"seed": 0, "step": [200], "bias_mean": [1.0], "q_mean": [0.5]})
    m["bias_abs"], m["bias_std"], m["loss"] = 1.0, 0.0, 0.1
    m.to_csv(folder / "metrics.csv", index=False)
    pd.DataFrame({"seed": [0], "return": [1.0]}).to_csv(folder / "tests.csv", index=False)
    pd.DataFrame({"seed": [0], "status": ["done"]}).to_csv(folder / "runs.csv", index=False)
    return folder


def test_plot_lists_a_gs_betas_by_value_in_shades_of_its_colour(tmp_path: Path) -> None:
    # as a shell's runs/* gives them: beta100, beta20, beta5, then another G
    runs = [_run(tmp_path / f"beta{b}", {"beta": b}) for b in (100, 20, 5)]
    runs.append(_run(tmp_path / "mm", None, "maxmin"))
    plot_runs(runs, tmp_path / "c.png", labels=["b100", "b20", "b5", "mm"])
    svg = (tmp_path / "c.svg").read_text()
    at = {label: svg.index(f"<!-- {label} -->") for label in ("b5", "b20", "b100", "mm")}
    assert at["b5"] < at["b20"] < at["b100"] < at["mm"]  # the legend's entries, in order
    colour = style.color(OWN, [OWN, "maxmin"])
    for k in range(3):  # each beta a shade of the G's colour; maxmin its green
        assert style.shade(colour, k, 3) in svg
    assert style.color("maxmin") in svg


def test_plot_order_keeps_other_runs_where_given() -> None:
    cfgs = [
        {"agent": "dqn"},
        {"agent": "generalized-dqn", "operator": OWN, "op_kwargs": {"beta": 20}},
        {"agent": "maxmin-dqn"},
        {"agent": "generalized-dqn", "operator": OWN, "op_kwargs": {"beta": 5}},
    ]
    assert param_order(cfgs) == [0, 3, 2, 1]  # beta 5 takes beta 20's place
    assert param_shades(cfgs) == [(0, 1), (1, 2), (0, 1), (0, 2)]


def test_toy_curves_dash_by_n_and_shade_by_beta_alike_in_every_n() -> None:
    # a sweep of two N by two betas: before, the four took four dashes in turn, so beta=20
    # at N = 2 and beta=5 at N = 4 read as one pattern apart from the rest
    rows = _toy_rows()
    betas = [_toy_rows({kw: n}) for kw in ('{"beta":5}', '{"beta":20}') for n in (2, 4)]
    own = pd.concat([b[b.algorithm == OWN] for b in betas], ignore_index=True)
    fig = cp.toy_distance_figure(pd.concat([rows, own], ignore_index=True))
    look = {
        ln.get_label(): (str(ln.get_linestyle()), to_hex(ln.get_color()))
        for ln in fig.axes[0].get_lines()
    }
    name = "softmin_q [my_ops] (N={}) (beta={})"
    for b in (5, 20):  # N's dashes as Maxmin's: solid N = 2, dashed N = 4
        assert look[name.format(2, b)][0] == look["Maxmin Q (N=2)"][0] == "-"
        assert look[name.format(4, b)][0] == look["Maxmin Q (N=4)"][0] == "--"
    for n in (2, 4):  # the beta's shade, alike at each N
        assert look[name.format(n, 5)][1] == look[name.format(2, 5)][1]
        assert look[name.format(n, 5)][1] != look[name.format(n, 20)][1]


def test_report_tables_and_settings_list_betas_by_value() -> None:
    from maxminq.analysis.report import _toy_table, setting_texts

    texts = setting_texts([{"beta": 20}, {"beta": 5}, {"beta": 100}])
    assert texts == ['{"beta": 5}', '{"beta": 20}', '{"beta": 100}']
    toy = _toy_rows({kw: 3 for kw in BETAS})
    _, rows, _ = _toy_table(toy, ["op_kwargs"])
    own = [r[3] for r in rows if r[1] == "softmin_q [my_ops]"]
    assert own == ['{"beta":5}', '{"beta":20}', '{"beta":100}']


def test_deep_curves_rows_in_value_order() -> None:
    settings = [("generalized-dqn", OWN, kw, 10.0 * i) for i, kw in enumerate(BETAS)]
    curves = T.deep_curves(_deep_episodes(settings), points=5)
    assert list(dict.fromkeys(curves["op_kwargs"])) == ['{"beta":5}', '{"beta":20}', '{"beta":100}']
    assert (
        curves.groupby("op_kwargs", sort=False)["step"].apply(lambda s: s.is_monotonic_increasing)
    ).all()


def test_non_finite_note_in_legend_order_one_line_per_setting_for_both_mus() -> None:
    both = _gone(pd.concat([_toy_rows(), _toy_rows().assign(mu=-0.1)], ignore_index=True))
    # one Q-learning run at mu = -0.1, non-finite from episode 9: named first (legend order)
    q = pd.DataFrame({"mu": -0.1, "algorithm": "q_learning", "n": 1, "op_kwargs": None,
                      "run": 0, "episode": range(1, 11), "p_left": 0.5, "distance": 0.5,
                      "q_a_left": [0.0] * 8 + [np.nan] * 2})  # fmt: skip
    lines = cp.nonfinite_note(pd.concat([both, q], ignore_index=True), "left out").splitlines()
    assert lines[1:] == [
        "Q-learning: 1 of 1 run at mu = -0.1 went non-finite, at episode 9",
        "Maxmin Q (N=4): 2 of 4 runs at mu = +0.1 and at mu = -0.1 went non-finite, "
        "at episodes 4 to 7",
    ]


def test_a_g_of_ones_own_keeps_its_colour_in_every_panel() -> None:
    # CartPole: two Gs of one's own; Acrobot: the second alone. Each panel picked its
    # colours among its own Gs, so the second G was OWN_COLORS[1] on one, [0] on the other.
    other = "my_ops:zeta_q"
    cart = _deep_episodes(
        [("generalized-dqn", OWN, None, 1.0), ("generalized-dqn", other, None, 2.0)]
    )
    acro = _deep_episodes([("generalized-dqn", other, None, 3.0)])
    acro["env_id"], acro["run_id"] = "Acrobot-v1", "a0"
    episodes = pd.concat([cart, acro], ignore_index=True)
    best = T.deep_best(T.deep_summary(T.Tables(episodes=episodes), reps=50))
    fig = F._best_agent_figure(best, T.deep_curves(episodes), "steps", "return")
    assert fig is not None
    colours = [
        {ln.get_label(): to_hex(ln.get_color()) for ln in ax.get_lines()} for ax in fig.axes[:2]
    ]
    name = "Generalized DQN, zeta_q [my_ops]"
    assert colours[0][name] == colours[1][name] == style.color(other, [OWN, other])


def test_sparse_points_of_a_gs_betas_have_their_own_markers(tmp_path: Path) -> None:
    # the sensitivity figure's points (and sparse bias probes): beta 5, 20 were one "o"
    settings = [("generalized-dqn", OWN, kw, 10.0 * i) for i, kw in enumerate(BETAS[:2])]
    settings.append(("generalized-dqn", "maxmin", None, 5.0))
    summary = T.deep_summary(T.Tables(episodes=_deep_episodes(settings)), reps=50)
    assert F.fig_sensitivity(summary, tmp_path) is not None  # draws with them
    _, look = F._deep_look(
        pd.Series({"agent": "generalized-dqn", "operator": OWN, "op_kwargs": BETAS[0]}),
        *F._looks(summary),
    )
    assert look["sparse_marker"] == style.PARAM_MARKERS[1]  # beta=20: the second by value
    alone = pd.Series({"agent": "generalized-dqn", "operator": "maxmin", "op_kwargs": None})
    assert "sparse_marker" not in F._deep_look(alone, *F._looks(summary))[1]
