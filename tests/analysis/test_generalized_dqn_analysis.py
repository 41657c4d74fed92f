"""generalized-dqn in the analysis: its label names its G, the report's deep tables, figures
and pooling caution key its runs by G (operator + op_kwargs), single-run titles, envs text
and compare name it. Runs without an operator read as before."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import matplotlib.pyplot
import numpy as np
import pandas as pd
from helpers import REPO

matplotlib.use("Agg")


from run_folders import generalized_run

from maxminq.analysis import figures as F  # noqa: E402
from maxminq.analysis import style  # noqa: E402
from maxminq.analysis import tables as T  # noqa: E402
from maxminq.analysis.report import pooled_differences  # noqa: E402
from maxminq.analysis.runs import figure_title, run_labels  # noqa: E402

OWN = "my_ops:median_q"


def _cfg(operator: str | None, **more: object) -> dict:
    cfg = {"agent": "generalized-dqn", "n": 3, "env_id": "CartPole-v1", "lr": 1e-3, "seeds": [0]}
    if operator is not None:
        cfg["operator"] = operator
    return cfg | more


def _episodes() -> pd.DataFrame:
    """Two seeds per setting: DQN, and generalized-dqn with two Gs (one with parameters),
    all of one (env, agent, n, lr) but the Gs; returns differ per G."""
    rng = np.random.default_rng(0)
    rows = []
    settings = [
        ("dqn", 1, None, None, 10.0),
        ("generalized-dqn", 3, "maxmin", None, 20.0),
        ("generalized-dqn", 3, OWN, '{"w":0.7}', 30.0),
    ]
    for i, (agent, n, op, kw, level) in enumerate(settings):
        for seed in (0, 1):
            for ep in range(30):
                rows.append(
                    {
                        "run_id": f"r{i}",
                        "env_id": "CartPole-v1",
                        "agent": agent,
                        "n": n,
                        "lr": 1e-3,
                        "operator": op,
                        "op_kwargs": kw,
                        "seed": seed,
                        "episode": ep,
                        "step": 10 * (ep + 1),
                        "return": level + rng.normal(),
                    }
                )
    return pd.DataFrame(rows)


def _record(**settings: object) -> SimpleNamespace:
    base = {"env_id": "CartPole-v1", "agent": "generalized-dqn", "n": 3, "lr": 1e-3}
    return SimpleNamespace(kind="deep", settings=base | {"seeds": [0, 1]} | settings)


def test_label_names_the_g_of_generalized_dqn() -> None:
    assert style.label("generalized-dqn", 4, OWN) == "Generalized DQN, median_q [my_ops] (N=4)"
    assert (
        style.label("generalized-dqn", 4, OWN, '{"w":0.7}')
        == "Generalized DQN, median_q [my_ops] (N=4) (w=0.7)"
    )
    assert style.label("generalized-dqn", 3, "maxmin") == "Generalized DQN, maxmin (N=3)"
    assert style.label("generalized-dqn", 2, "weighted_double_q", {"c": 2.0}) == (
        "Generalized DQN, weighted_double_q (N=2) (c=2)"
    )
    # the others as before; an operator given to another agent is not its G
    assert style.label("maxmin-dqn", 3) == "Maxmin DQN (N=3)"
    assert style.label("maxmin-dqn", 3, "maxmin") == "Maxmin DQN (N=3)"
    assert style.label("dqn", float("nan")) == "DQN"
    assert style.label(OWN, 4) == "median_q [my_ops] (N=4)"


def test_run_labels_and_single_run_title_name_the_g() -> None:
    cfgs = [_cfg("maxmin"), _cfg(OWN, op_kwargs={"w": 0.7})]
    labels = run_labels(cfgs, [Path("a"), Path("b")])
    assert labels == [
        "Generalized DQN, maxmin (N=3)",
        "Generalized DQN, median_q [my_ops] (N=3) (w=0.7)",
    ]
    one = run_labels(cfgs[1:], [Path("b")])
    title = figure_title(cfgs[1:], one, [{"tests": None}])
    assert title.startswith("Generalized DQN, median_q [my_ops] (N=3) (w=0.7) on CartPole-v1")


def test_deep_summary_best_and_figures_keep_each_g_apart() -> None:
    tables = T.Tables(episodes=_episodes())
    summary = T.deep_summary(tables, reps=50)
    best = T.deep_best(summary)
    gen = best[best["agent"] == "generalized-dqn"].sort_values("mean")
    assert list(gen["operator"]) == ["maxmin", OWN]  # one best per G, not the best G alone
    assert list(gen["runs"]) == [2, 2]  # each G's own seeds, not the four pooled
    np.testing.assert_allclose(gen["mean"], [20.0, 30.0], atol=1.5)
    fig = F._best_agent_figure(best, T.deep_curves(tables.episodes), "steps", "return")
    assert fig is not None
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == [
        "DQN",
        "Generalized DQN, maxmin",
        "Generalized DQN, median_q [my_ops] (w=0.7)",
    ]
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    own = lines["Generalized DQN, median_q [my_ops] (w=0.7)"]
    assert own.get_ydata()[-1] > lines["Generalized DQN, maxmin"].get_ydata()[-1] + 5
    assert own.get_color() != lines["Generalized DQN, maxmin"].get_color()
    matplotlib.pyplot.close(fig)


def test_sensitivity_draws_a_series_per_g(tmp_path: Path) -> None:
    summary = T.deep_summary(T.Tables(episodes=_episodes()), reps=50)
    made = F.fig_sensitivity(summary, tmp_path)
    assert made is not None
    svg = (tmp_path / "deep_sensitivity.svg").read_text()
    assert "median_q [my_ops] (w=0.7)" in svg
    assert "Generalized DQN, maxmin" in svg


def test_a_sweep_of_gs_is_not_runs_of_different_experiments_pooled() -> None:
    records = [
        _record(operator="maxmin"),
        _record(operator="ensemble"),
        _record(operator=OWN, op_kwargs={"w": 0.7}),
        _record(operator=OWN, op_kwargs={"w": 0.3}),
    ]
    assert pooled_differences(records) == []
    # runs apart in another setting are still named so, in the words they had
    plain = [
        _record(agent="dqn", n=1, steps=1000),
        _record(agent="dqn", n=1, steps=2000),
    ]
    assert pooled_differences(plain) == [
        "deep (env_id CartPole-v1, agent dqn, n 1, lr 0.001): 2 run ids pooled; steps 1000 vs 2000"
    ]


def test_envs_text_counts_generalized_dqn_among_the_n_of_estimators(capsys) -> None:
    from maxminq.cli import main

    assert main(["envs", "--env", "CartPole-v1"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "N of Maxmin, Ensemble and Generalized DQN, K of Averaged DQN" in text


def test_single_step_size_note_counts_each_g_apart() -> None:
    """Two Gs each at one step size (0.001 and 0.003): each a lone point in the
    sensitivity figure, though generalized-dqn ran at two step sizes; DQN ran at two."""
    rows = [
        ("dqn", np.nan, 1e-3),
        ("dqn", np.nan, 3e-3),
        ("generalized-dqn", "maxmin", 1e-3),
        ("generalized-dqn", OWN, 3e-3),
    ]
    summary = pd.DataFrame(
        [
            {"env_id": "CartPole-v1", "agent": a, "operator": op, "lr": lr, "mean": 1.0}
            for a, op, lr in rows
        ]
    )
    note = F._single_step_size_note(summary)
    assert note == (
        " A single step size (one point, no sensitivity shown): Generalized DQN, maxmin on "
        "CartPole, Generalized DQN, median_q [my_ops] on CartPole."
    )


def test_plot_colours_two_gs_apart_and_names_them(tmp_path: Path) -> None:
    """'maxminq plot' of two generalized-dqn runs: each G its colour (a library G its
    family's: maxmin green) and its name; both were one dark grey 'generalized-dqn'."""
    from maxminq.analysis.runs import plot_runs

    a = generalized_run(tmp_path / "a", "maxmin", returns=(10.0, 12.0))
    b = generalized_run(tmp_path / "b", OWN, returns=(20.0, 22.0))
    plot_runs([a, b], tmp_path / "c.png")
    svg = (tmp_path / "c.svg").read_text()
    assert "Generalized DQN, maxmin (N=3)" in svg
    assert "Generalized DQN, median_q [my_ops] (N=3)" in svg
    assert style.color("maxmin").lower() in svg.lower()  # the maxmin G in Maxmin's green
    assert style.color(OWN, [OWN, "maxmin"]).lower() in svg.lower()
    assert style.color("generalized-dqn").lower() not in svg.lower()


def test_panel_title_names_each_g_with_its_n_when_they_differ() -> None:
    """The learning-curve panel's title lists the best N per agent: Gs of two N read
    'Generalized N=3, Generalized N=4' (which is which?); now each G is named then."""
    episodes = _episodes()
    own = episodes["operator"] == OWN
    episodes.loc[own, "n"] = 4
    tables = T.Tables(episodes=episodes)
    best = T.deep_best(T.deep_summary(tables, reps=50))
    fig = F._best_agent_figure(best, T.deep_curves(tables.episodes), "steps", "return")
    assert fig is not None
    assert fig.axes[0].get_title() == (
        "CartPole\nGeneralized maxmin N=3, Generalized median_q [my_ops] (w=0.7) N=4"
    )
    matplotlib.pyplot.close(fig)
    same = T.Tables(episodes=_episodes())  # Gs at one N: named once
    best = T.deep_best(T.deep_summary(same, reps=50))
    fig = F._best_agent_figure(best, T.deep_curves(same.episodes), "steps", "return")
    assert fig is not None
    assert fig.axes[0].get_title() == "CartPole\nGeneralized N=3"
    matplotlib.pyplot.close(fig)


def test_compare_names_two_gs_apart_in_its_rows_and_csv_columns(tmp_path: Path) -> None:
    """compare of two generalized-dqn runs: each row's run names its G, and the table
    (--csv) has the G's columns, as a sweep's tables do."""
    import warnings

    from maxminq.analysis.compare import compare_runs

    a = generalized_run(tmp_path / "a", "maxmin", returns=(10.0, 12.0))
    b = generalized_run(tmp_path / "b", OWN, returns=(20.0, 22.0))
    cfg = json.loads((b / "config.json").read_text()) | {"op_kwargs": {"w": 0.7}}
    (b / "config.json").write_text(json.dumps(cfg))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare_runs([a, b])
    assert list(table["run"]) == [
        "Generalized DQN, maxmin (N=3)",
        "Generalized DQN, median_q [my_ops] (N=3) (w=0.7)",
    ]
    assert list(table["operator"]) == ["maxmin", OWN]
    assert list(table["op_kwargs"]) == ["", '{"w":0.7}']
    assert list(table.columns[:8]) == [
        "run", "folder", "env_id", "agent", "n", "lr", "operator", "op_kwargs"
    ]  # fmt: skip


def test_own_operator_compares_the_two_targets_run_by_run(monkeypatch) -> None:
    """examples/own_operator.py's 'lam=0.5 vs lam=1' sentence: the toy runs of both share
    their seeds (run r: (seed, r)), so the difference is the per-run differences' mean and
    SE. It combined the two SEs as if independent (np.hypot), at --quick '+0.012 +- 0.006:
    do not differ beyond 2 SE' where the paired SE is 0.003 (3.8 SE)."""
    import sys

    examples = REPO / "examples"
    monkeypatch.syspath_prepend(str(examples))
    monkeypatch.delitem(sys.modules, "own_operator", raising=False)
    import own_operator

    spread = [-0.3, 0.1, 0.4, -0.2]  # run to run, shared by both settings
    other = [v - d for v, d in zip(spread[::-1], [0.011, 0.009] * 2, strict=True)]
    toy = pd.DataFrame(
        {
            "label": ["a"] * 4 + ["b"] * 4,
            "run": [0, 1, 2, 3, 3, 2, 1, 0],  # matched by run, not by row order
            "q_a_left": [*spread, *other],
        }
    )
    # b's runs 3, 2, 1, 0 are a's minus 0.011, 0.009, 0.011, 0.009: differences
    # [0.009, 0.011, 0.009, 0.011] by run, mean 0.01, SE 0.001 / sqrt(4) * sqrt(4/3).
    diff, se = own_operator.paired_difference(toy, "a", "b")
    assert abs(diff - 0.01) < 1e-12
    assert abs(se - 0.001 / 3**0.5) < 1e-12
