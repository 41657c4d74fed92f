"""Runs gone non-finite in the analysis: the toy MDP's tables, figures and captions name
them and leave them out of the averages, never silently averaging a NaN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from analysis_results import _toy, _toy_rows

from maxminq.analysis import classic_plots as cp
from maxminq.analysis import figures as F
from maxminq.analysis import report as R
from maxminq.analysis import tables as T


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
