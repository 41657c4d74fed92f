"""Session 22, a second reading of the analysis and sweep changes: the report's toy table and
runs gone non-finite, a diverged deep run's cause, parameter settings' order and looks."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from maxminq.analysis import report as R


# ----------------------------------------------------------------------------- toy table
def _toy(gone: bool = True) -> pd.DataFrame:
    """4 runs x 10 episodes of Q-learning and Maxmin N = 2 at mu = +0.1; final Q(A, Left)
    0.1 * run. With ``gone``: Q-learning run 0's distance NaN from episode 5 while its
    Q(A, Left) stays finite (1e300: its Q(A, Right) diverged), run 1's Q(A, Left) inf from 8."""
    rows = []
    for (algo, n), run, ep in itertools.product([("q_learning", 1), ("maxmin", 2)], range(4),
                                                range(1, 11)):  # fmt: skip
        rows.append([0.1, algo, n, run, ep, 0.5, 0.2 + 0.1 * run, 0.1 * run])
    df = pd.DataFrame(
        rows, columns=["mu", "algorithm", "n", "run", "episode", "p_left", "distance", "q_a_left"]
    )
    if gone:
        q = df.algorithm == "q_learning"
        df.loc[q & (df.run == 0) & (df.episode >= 5), ["distance", "p_left"]] = np.nan
        df.loc[q & (df.run == 0) & (df.episode >= 5), "q_a_left"] = 1e300
        df.loc[q & (df.run == 1) & (df.episode >= 8), "q_a_left"] = np.inf
    return df


def test_report_toy_table_names_and_leaves_out_runs_gone_non_finite(tmp_path: Path) -> None:
    report = R.build_report(tmp_path, results={"toy_mdp": _toy()}, reps=20)
    md = report.markdown.read_text(encoding="utf-8")
    table = md.split("### Toy MDP (average", 1)[1]
    rows = [r for r in table.splitlines() if r.startswith("| +0.1")]
    q_row = next(r for r in rows if "Q-learning" in r).strip("| ").split(" | ")
    # runs 2 and 3 only, in both columns: distance 0.4, 0.5; Q(A, Left) 0.2, 0.3
    assert q_row[3:6] == ["2", "0.45 ± 0.05", "0.25 ± 0.05"]
    assert next(r for r in rows if "Maxmin" in r).split(" | ")[3] == "4"
    note = table.split("\n> ", 1)[1].splitlines()[0]
    assert note.startswith("Runs that went non-finite (NaN or inf), left out of these means")
    assert "Q-learning: 2 of 4 runs at mu = +0.1 went non-finite, at episodes 5 to 8." in note
    html = report.html.read_text(encoding="utf-8")
    assert "Q-learning: 2 of 4 runs at mu = +0.1 went non-finite, at episodes 5 to 8." in html
    assert "1e+300" not in md and "0" * 30 not in md  # a finite 1e300 never as 301 digits
    clean = R.build_report(tmp_path, results={"toy_mdp": _toy(False)}, reps=20)
    assert "non-finite" not in clean.markdown.read_text(encoding="utf-8")


def test_fig2_caption_counts_runs_whose_distance_went_non_finite(tmp_path: Path) -> None:
    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis import figures as F
    from maxminq.analysis import tables as T

    made = {f.name: f.caption for f in F.classic_figures(T.Tables(toy=_toy()), tmp_path)}
    # Fig. 2 draws the distance: run 0 (distance NaN from 5) is the one it leaves out there
    assert (
        "Q-learning: 1 of 4 runs at mu = +0.1 went non-finite, at episode 5."
        in made["toy_mdp_distance"]
    )
    assert (
        "Q-learning: 1 of 4 runs at mu = +0.1 went non-finite, at episode 8."
        in made["toy_mdp_q_left"]
    )
    note = cp.toy_distance_figure(_toy())._suptitle.get_text()
    assert "1 of 4 runs at mu = +0.1 went non-finite, at episode 5" in note


def test_claims_and_tables_write_huge_numbers_with_an_exponent() -> None:
    from maxminq.analysis import claims as C

    assert C._fmt(-1.6e303) == "-1.6e+303"
    assert R._f(8.2e306) == "8.2e+306"
    assert C._fmt(12345.6) == "12346" and R._f(12345.6) == "12346"  # everyday: as before


# ----------------------------------------------------------------------------- deep divergence
def test_a_diverged_deep_runs_note_gives_each_seeds_cause() -> None:
    from maxminq.experiments.registry import _diverged

    cause = "G my_ops:softmin_q with {'beta': 20} gave inf on finite target-net values in [-1, 2]"
    runs = pd.DataFrame(
        {"seed": [0, 1, 2], "status": ["done", "diverged", "diverged"],
         "diverged_step": [np.nan, 300, 700],
         "diverged_cause": ["", cause, "networks: the loss went nan at step 700"]}
    )  # fmt: skip
    assert _diverged({"runs": runs}) == (
        f"diverged seeds: [1, 2] (seed 1: {cause}; seed 2: networks: the loss went nan at step 700)"
    )
    # an older run's table, no diverged_cause: as before
    assert _diverged({"runs": runs.drop(columns="diverged_cause")}) == "diverged seeds: [1, 2]"
    # a cause read back from a CSV as NaN (empty) adds nothing
    blank = runs.assign(diverged_cause=[np.nan, np.nan, ""])
    assert _diverged({"runs": blank}) == "diverged seeds: [1, 2]"
    assert _diverged({"runs": runs.assign(status="done")}) is None


# ----------------------------------------------------------------------------- settings' looks
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
    assert R._setting_text(0.9999999) == "0.9999999"  # was '1', as 1.0's row
    assert R._setting_text(np.float64(0.9999999)) == "0.9999999"
    assert R._setting_text(1.0) == "1" and R._setting_text(1e-4) == "0.0001"
    assert R._setting_text(float("nan")) == "–"


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
    assert first.get_legend() is None  # it hid the curves and the panel's title
    legend = last.get_legend()
    assert len(legend.get_texts()) == 13  # 12 curves and the first panel's true value
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 >= last.get_window_extent(renderer).x1
    assert legend.get_window_extent(renderer).x1 <= fig.bbox.x1  # inside the figure
    # the last panel's own legend (its true value) is still drawn
    kept = [a for a in last.get_children() if a.__class__.__name__ == "Legend" and a is not legend]
    assert [t.get_text() for t in kept[0].get_texts()] == ["true value -0.1"]
    # the paper's few algorithms: the legend in the first panel, as before
    assert cp.toy_q_left_figure(_toy(False)).axes[0].get_legend() is not None


# ----------------------------------------------------------------------------- pooling caution
def _record(run_id: str, **settings: object) -> object:
    from types import SimpleNamespace

    base = {"mu": 0.1, "algorithm": "weighted_double_q", "n": 2, "seed": 0, "runs": 5}
    return SimpleNamespace(run_id=run_id, kind="toy_mdp", settings={**base, **settings})


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
