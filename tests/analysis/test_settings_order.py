"""An operator's parameter settings (op_kwargs) in the analysis: in value order in tables,
legends and settings lists, each setting drawn apart with its own look, never pooled."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_results import _toy, _toy_rows
from matplotlib.colors import to_hex
from run_folders import generalized_run

from maxminq.analysis import classic_plots as cp
from maxminq.analysis import figures as F
from maxminq.analysis import report as R
from maxminq.analysis import style
from maxminq.analysis import tables as T
from maxminq.analysis.runs import param_order, param_shades, plot_runs
from maxminq.cli import main

OWN = "my_ops:softmin_q"


BETAS = ('{"beta":20}', '{"beta":5}', '{"beta":100}')  # text order: 100, 20, 5


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


def _errorbars(fig) -> dict[str, tuple[str, str, str]]:
    """Legend label -> (colour, marker, line style) of each error-bar series of panel 0."""
    out = {}
    for c in fig.axes[0].containers:
        line = c.lines[0]
        out[c.get_label()] = (to_hex(line.get_color()), line.get_marker(), line.get_linestyle())
    return out


def _record(run_id: str, **settings: object) -> object:
    from types import SimpleNamespace

    base = {"mu": 0.1, "algorithm": "weighted_double_q", "n": 2, "seed": 0, "runs": 5}
    return SimpleNamespace(run_id=run_id, kind="toy_mdp", settings={**base, **settings})


def test_params_key_orders_numbers_as_numbers_per_key() -> None:
    given = ['{"beta":20}', {"beta": 5}, None, '{"beta":100}', float("nan"), '{"a":1,"beta":2}']
    ordered = sorted(given, key=style.params_key)
    assert ordered[:2] == [None, given[4]] or ordered[:2] == [given[4], None]  # none first
    assert ordered[2:] == ['{"a":1,"beta":2}', {"beta": 5}, '{"beta":20}', '{"beta":100}']
    assert style.params_ranks(['{"beta":20}', '{"beta":5.0}', {"beta": 5}]) == [1, 0, 0]


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
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # below the panels
    own = [label for label in labels if "beta" in label]
    assert own == [f"softmin_q [my_ops] (N=3) (beta={b})" for b in (5, 20, 100)]
    colours = {to_hex(ln.get_color()) for ln in fig.axes[0].get_lines() if "beta" in ln.get_label()}
    assert len(colours) == 3


def test_plot_lists_a_gs_betas_by_value_in_shades_of_its_colour(tmp_path: Path) -> None:
    # as a shell's runs/* gives them: beta100, beta20, beta5, then another G
    runs = [
        generalized_run(tmp_path / f"beta{b}", OWN, {"beta": b}, returns=(1.0, 2.0))
        for b in (100, 20, 5)
    ]
    runs.append(generalized_run(tmp_path / "mm", "maxmin", None, returns=(1.0, 2.0)))
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
    assert own == ["beta=5", "beta=20", "beta=100"]


def test_deep_curves_rows_in_value_order() -> None:
    settings = [("generalized-dqn", OWN, kw, 10.0 * i) for i, kw in enumerate(BETAS)]
    curves = T.deep_curves(_deep_episodes(settings), points=5)
    assert list(dict.fromkeys(curves["op_kwargs"])) == ['{"beta":5}', '{"beta":20}', '{"beta":100}']
    assert (
        curves.groupby("op_kwargs", sort=False)["step"].apply(lambda s: s.is_monotonic_increasing)
    ).all()


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


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_an_operators_parameters_are_drawn_apart_not_pooled(tmp_path, monkeypatch, capsys):
    import pandas as pd
    from analysis_results import _store_runs

    from maxminq.analysis import classic_plots as cp

    def last_steps(values: list[float]) -> dict[str, pd.DataFrame]:
        rows = [(r, ep, 500.0 if ep == 0 else v) for r, v in enumerate(values) for ep in (0, 1)]
        return {"mountain_car": pd.DataFrame(rows, columns=["run", "episode", "steps"])}

    base = {"sigma2": 10.0, "step_size": 0.02, "seed": 0}
    wdq = base | {"algorithm": "weighted_double_q", "n": 2}
    _store_runs(
        tmp_path,
        [
            (
                "q",
                "mountain_car",
                base | {"algorithm": "q_learning", "n": 1},
                last_steps([300] * 3),
            ),
            ("w1", "mountain_car", wdq | {"op_kwargs": {"c": 1.0}}, last_steps([200] * 3)),
            ("w10", "mountain_car", wdq | {"op_kwargs": {"c": 10.0}}, last_steps([100] * 3)),
        ],
    )
    drawn: list[pd.DataFrame] = []  # what Fig. 3(a) is drawn from
    original = cp.mc_sensitivity_figure
    monkeypatch.setattr(
        cp, "mc_sensitivity_figure", lambda df, *a: drawn.append(df) or original(df, *a)
    )
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out
    (fig_df,) = drawn
    last = fig_df[fig_df["episode"] == 1]
    assert sorted(last.groupby("run_id")["steps"].mean().items()) == [
        ("q", 300.0), ("w1", 200.0), ("w10", 100.0)
    ]  # fmt: skip
    assert "pooled" not in printed
    assert (
        "caution: the mountain_car claims use only the runs without op_kwargs (the paper's "
        "operators take no parameters; the tables and figures show each operator's parameters "
        "apart)"
    ) in printed
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "runs of different experiments are pooled" not in md
    assert "> The mountain_car claims use only the runs without op_kwargs" in md


def test_two_gs_of_ones_own_in_one_figure_get_two_colours() -> None:
    # 'my_ops:median_q' and 'my_ops:scaled' hash to the same one of the six colours: a sweep
    # comparing them drew both curves in one olive, told apart by the legend text only.
    import matplotlib.pyplot as plt

    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis import style

    refs = ["my_ops:median_q", "my_ops:scaled"]
    assert style.color(refs[0]) == style.color(refs[1])  # the collision, by the hash
    rows = [
        {"mu": 0.1, "algorithm": a, "n": 2, "run": r, "episode": e, "p_left": 0.5,
         "distance": 0.1 * e + r, "q_a_left": 0.0}
        for a in refs for r in range(2) for e in (1, 2)
    ]  # fmt: skip
    import pandas as pd

    fig = cp.toy_distance_figure(pd.DataFrame(rows))
    colours = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines()}
    plt.close(fig)
    first, second = colours["median_q [my_ops] (N=2)"], colours["scaled [my_ops] (N=2)"]
    assert first != second
    assert {first, second} <= set(style.OWN_COLORS)


def test_settings_that_differ_past_six_digits_keep_their_own_label_and_points() -> None:
    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis import style

    assert style.params_text({"beta": 1234567}) == "beta=1234567"
    assert style.params_text('{"c":0.12345678}') == "c=0.12345678"
    assert style.params_text({"c": 1e-5, "k": 10}) == "c=1e-05,k=10"  # everyday: as before
    # a text that reads as a number, bool or list is quoted: not the value's own label
    assert style.params_text({"beta": "5", "mode": "hard"}) == "beta='5',mode=hard"
    assert style.params_text({"flag": "True"}) != style.params_text({"flag": True})
    df = _toy(False).assign(algorithm="my_ops:softmin_q")
    df["op_kwargs"] = np.where(df.algorithm == df.algorithm, None, None)
    df.loc[df.n == 1, "op_kwargs"] = '{"beta":1234567}'
    df.loc[df.n == 2, "op_kwargs"] = '{"beta":1234568}'
    df["n"] = 2  # one N: only beta tells them apart (pooled into one point before)
    fig = cp.toy_bias_vs_n_figure(df)
    labels = [c.get_label() for c in fig.axes[0].containers]
    assert labels == [
        "softmin_q [my_ops] (beta=1234567)",
        "softmin_q [my_ops] (beta=1234568)",
    ]
    df.loc[df.op_kwargs == '{"beta":1234568}', "op_kwargs"] = '{"beta":"1234567"}'
    labels = [c.get_label() for c in cp.toy_bias_vs_n_figure(df).axes[0].containers]
    assert labels == [
        "softmin_q [my_ops] (beta=1234567)",
        "softmin_q [my_ops] (beta='1234567')",
    ]


def test_a_split_settings_cell_keeps_the_digits_that_tell_rows_apart() -> None:
    assert R._cell_text(0.9999999) == "0.9999999"  # was '1', as 1.0's row
    assert R._cell_text(np.float64(0.9999999)) == "0.9999999"
    assert R._cell_text(1.0) == "1" and R._cell_text(1e-4) == "0.0001"
    assert R._cell_text(float("nan")) == "–"


def test_toy_curves_of_many_settings_put_their_legend_beside_the_panels() -> None:
    from maxminq.analysis import classic_plots as cp

    betas = [1, 2, 3, 5, 8, 13]  # 6 betas x N = 2, 4: 12 curves a panel
    df = pd.concat(
        [
            _toy(False).assign(mu=mu, op_kwargs=f'{{"beta":{b}}}')
            for mu in (0.1, -0.1)
            for b in betas
        ],
        ignore_index=True,
    ).assign(algorithm="my_ops:softmin_q", n=lambda d: np.where(d.n == 1, 2, 4))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = cp.toy_q_left_figure(df)
    FigureCanvasAgg(fig).draw()
    first, last = fig.axes
    # each panel's own legend holds its true value alone (the curves' hid curves and title)
    assert [t.get_text() for t in first.get_legend().get_texts()] == ["true value +0.1"]
    assert [t.get_text() for t in last.get_legend().get_texts()] == ["true value -0.1"]
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 12  # the 12 curves
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 >= last.get_window_extent(renderer).x1
    assert legend.get_window_extent(renderer).x1 <= fig.bbox.x1  # inside the figure
    # the paper's few algorithms: the curves' legend below the panels (tests/tabular/
    # test_toy_legend_outside.py), none beside them
    few = cp.toy_q_left_figure(_toy(False))
    assert len(few.legends) == 1 and few.get_size_inches()[0] == 5.2 * len(few.axes)  # not wider


def test_settings_drawn_apart_are_no_pooling_of_their_other_settings() -> None:
    # c = 10 at 20 episodes, c = 1 at 30: two rows of one run id each, nothing pooled
    records = [
        _record("a", op_kwargs={"c": 10}, episodes=20),
        _record("b", op_kwargs={"c": 1}, episodes=30),
    ]
    assert R.pooled_differences(records) == []
    assert R.pooled_summary(records) == []
    # each c swept at 20 and at 30 episodes: two rows, each pooling its 2 run ids
    records += [
        _record("c", op_kwargs={"c": 10}, episodes=30),
        _record("d", op_kwargs={"c": 1}, episodes=20),
    ]
    assert R.pooled_summary(records) == [
        "toy_mdp, 2 rows (mu 0.1, algorithm weighted_double_q, n 2, op_kwargs c=1; "
        "mu 0.1, algorithm weighted_double_q, n 2, op_kwargs c=10): 2 run ids pooled in "
        "each; episodes 20 vs 30"
    ]
    # without parameters: as before
    plain = [_record("e", episodes=20), _record("f", episodes=30)]
    assert R.pooled_differences(plain) == [
        "toy_mdp (mu 0.1, algorithm weighted_double_q, n 2): 2 run ids pooled; episodes 20 vs 30"
    ]


def test_setting_texts_keep_numbers_in_numeric_order_beside_unset() -> None:
    """55542b0 sorted numbers numerically only when every value was a number: one run
    leaving the setting unset (None) sorted them all as text again (10 before 2)."""
    from maxminq.analysis.report import setting_texts

    assert setting_texts([10, 2, None, 4]) == ["2", "4", "10", "unset"]
    assert setting_texts([float("nan"), 3.5, 1]) == ["1", "3.5", "nan"]
    assert setting_texts([1500000, 2.0, [64, 64]]) == ["2", "1,500,000", "[64, 64]"]
