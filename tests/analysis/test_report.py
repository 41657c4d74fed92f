"""The report from a real results store holding synthetic runs with known values; claims
that flip with the data; the report and reproduce commands' option checks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_results import (
    TINY_TOY,
    _store_runs,
    deep_results,
    mc_results,
    theory_files,
    toy_results,
    write_store,
)

from maxminq.analysis import claims as C
from maxminq.analysis import tables as T
from maxminq.analysis.report import build_report
from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.store import ResultsStore

FRONT = ["run_id", "config", "kind"]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results")
    results = deep_results(seeds=4)
    results["toy_mdp"] = toy_results(runs=20, episodes=30)
    results["mountain_car"] = mc_results(runs=8)
    write_store(out, results)
    # Real theory outputs at a small size.
    assert (
        main(
            [
                "theory",
                "--out",
                str(out / "theory"),
                "--m-max",
                "8",
                "--n-max",
                "10",
                "--samples",
                "1000",  # the fewest the Theorem 1 check decides on (claims.MIN_MC_SAMPLES)
                "--variance-samples",
                "40000",
                "--no-progress",
            ]
        )
        == 0
    )
    return out


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _status(claims: list[C.Claim], needle: str) -> str:
    (match,) = [c for c in claims if needle in c.text]
    return match.status


def test_report_from_store(report_dir: Path):
    rep = build_report(report_dir, reps=300)
    # every figure produced, both formats, non-empty
    names = {f.name for f in rep.figures}
    assert {
        "toy_mdp_distance",
        "toy_mdp_q_left",
        "mountain_car_last_episode",
        "mountain_car_curves_sigma2_50",
        "mountain_car_curves_all",
        "deep_learning_curves",
        "deep_varying_n_pixelcopter",
        "deep_sensitivity",
        "deep_estimation_bias",
    } <= names
    for f in rep.figures:
        assert {p.suffix for p in f.paths} == {".png", ".svg"}
        for p in f.paths:
            assert p.is_file() and p.stat().st_size > 1000, p
    # the HTML embeds every PNG that the Markdown links, and the links resolve
    md = rep.markdown.read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", md)
    assert "theory/bias_heatmap.png" in links and "theory/variance_ratio.png" in links
    for link in links:
        assert (report_dir / link).is_file()
    html = rep.html.read_text()
    assert html.count("data:image/png;base64,") == len(links)
    assert "Claims checked" in html and "Final performance" in html
    # the final-performance table holds hand-computed values: Pixelcopter Maxmin DQN
    # (best: N=4, lr=1e-3) test returns 39..42 -> mean 40.5, SE sd/2, IQM 40.5
    se = np.std([39.0, 40, 41, 42], ddof=1) / 2
    assert f"40.5 ± {se:.3g}" in md
    deep = pd.read_csv(report_dir / "summary" / "deep_final.csv")
    assert len(deep) == 20
    # theory claims computed from the real theory command's CSVs
    theory = [c for c in rep.claims if c.section == "Theory"]
    assert [c.status for c in theory] == [C.SUPPORTED, C.SUPPORTED]
    # the synthetic data hold every claim, except the bias falling with N (the same bias,
    # -0.2 plus noise, at every N)
    assert len(rep.claims) >= 26  # toy 7, Mountain Car 6, theory 2, deep 11 (more may come)
    for c in rep.claims:
        flat = "estimation bias is lower with larger N" in c.text
        assert c.status == (C.NOT_SUPPORTED if flat else C.SUPPORTED), (c.text, c.evidence)
    # the bias claims measure Q(A, Left) over the second half of training, and say so
    over = [c for c in rep.claims if "overestimates" in c.text and c.section == "Toy MDP"]
    assert over and all(c.evidence.startswith("second-half Q(A,Left) of") for c in over)
    # the settings table shows the stored settings, never a table column
    settings = md.split("## Settings and scale", 1)[1].split("\n## ", 1)[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in settings.splitlines()}
    toy = next(line for cfg, line in rows.items() if "toy" in cfg)
    assert "mu: -0.1, 0.1" in toy and "algorithm: double_q, maxmin, q_learning" in toy
    for column in ("p_left", "distance", "episode", "return_avg100", "bias_mean", "steps_per_s"):
        assert f"{column}:" not in settings


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_cli_report(tmp_path: Path, capsys):
    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    theory_files(tmp_path / "theory")
    assert main(["report", str(tmp_path), "--reps", "200"]) == 0
    out = capsys.readouterr().out
    assert (
        "supported         σ² = 50 (best step size per algorithm): Maxmin Q's last-episode "
        "steps below Q-learning's" in out
    )
    md = (tmp_path / "report.md").read_text()
    assert "| 50 | Maxmin Q | N=4 | 0.01 | 4 |" in md  # best step size, 4 runs (N / K column)
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "DIR:" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--reps", "5"]) == 2
    capsys.readouterr()
    # not argparse's two lines (usage + "invalid int value"): one line naming the option
    assert main(["report", str(tmp_path), "--reps", "abc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["maxminq report: error: --reps: expected an integer in 100..100000, got 'abc'"]
    assert main(["report", str(tmp_path), "--reps", "100001"]) == 2  # reps x runs in memory
    assert "--reps: expected an integer in 100..100000" in capsys.readouterr().err


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_on_the_folder_theory_wrote(tmp_path: Path, capsys):
    """'maxminq theory --out T' then 'maxminq report T': T holds bias.csv itself."""
    theory_files(tmp_path)
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    assert "supported         Theorem 1" in capsys.readouterr().out
    assert "Corollary 1" in (tmp_path / "report.md").read_text()


def test_report_refuses_damaged_inputs_in_one_line(tmp_path: Path, capsys):
    empty = tmp_path / "empty"  # a folder with no results at all: said, nothing written
    empty.mkdir()
    assert main(["report", str(empty)]) == 2
    assert _one_error_line(capsys).endswith(f"DIR: {empty} holds neither results.sqlite (from "
                                      "'maxminq sweep') nor theory/bias.csv (from 'maxminq "
                                      "theory'); nothing to report")  # fmt: skip
    assert list(empty.iterdir()) == []
    theory_files(tmp_path / "theory")
    (tmp_path / "other").mkdir()
    assert main(["report", str(tmp_path), "--theory-dir", str(tmp_path / "other")]) == 2
    assert _one_error_line(capsys).endswith(f"--theory-dir: {tmp_path / 'other'} holds no "
                                            "bias.csv (from 'maxminq theory')")  # fmt: skip
    # a cut-short table: its claims were checked on the rows left ("supported")
    bias = tmp_path / "theory" / "bias.csv"
    bias.write_bytes(bias.read_bytes()[:-10])
    assert main(["report", str(tmp_path)]) == 2
    assert _one_error_line(capsys).endswith(f"DIR: {bias} is empty or cut short; rerun "
                                            "'maxminq theory'")  # fmt: skip
    theory_files(tmp_path / "theory")
    # a results.sqlite that is no database was a traceback
    (tmp_path / "results.sqlite").write_bytes(b"not a database, but long enough to read" * 50)
    assert main(["report", str(tmp_path)]) == 2
    line = _one_error_line(capsys)
    # named like 'maxminq status DIR' names it (the prefix was missing)
    assert line.startswith(
        f"maxminq report: error: DIR: {tmp_path / 'results.sqlite'}: cannot open"
    )
    assert not (tmp_path / "report.md").exists() and not (tmp_path / "figures").exists()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_of_an_unfinished_reproduction_says_so(tmp_path: Path, capsys):
    """A reproduce stopped by Ctrl-C leaves reproduce.json without an end time; a report
    written from that folder later must not pass for the complete one."""
    import json

    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    meta = {"scale": "quick", "started": "2026-01-02 03:04 UTC", "configs": []}
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    assert "caution: the 'maxminq reproduce' of this folder did not finish" in (
        capsys.readouterr().out
    )
    md = (tmp_path / "report.md").read_text()
    assert "**Caution: the reproduction in this folder did not finish** (started 2026-01-02" in md
    meta["finished"] = "2026-01-02 04:00 UTC"
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    assert "did not finish" not in capsys.readouterr().out + (tmp_path / "report.md").read_text()


def test_claims_flip_with_the_data(tmp_path: Path):
    toy_ok, toy_bad = toy_results(runs=10, q_over=0.3), toy_results(runs=10, q_over=-0.2)
    needle = "Q-learning overestimates Q(A, Left) = μ (μ = +0.1)"
    assert _status(C.toy_claims(toy_ok), needle) == C.SUPPORTED
    assert _status(C.toy_claims(toy_bad), needle) == C.NOT_SUPPORTED

    needle = "(best step size per algorithm): Maxmin Q's last-episode steps below Q-learning's"
    assert _status(C.mountain_car_claims(mc_results(runs=5)), needle) == C.SUPPORTED
    worse = mc_results(runs=5, maxmin_steps=3000.0)
    assert _status(C.mountain_car_claims(worse), needle) == C.NOT_SUPPORTED
    same_step = "(all at the largest step size, 0.04): Maxmin Q's last-episode steps below Aver"
    assert _status(C.mountain_car_claims(mc_results(runs=5)), same_step) == C.SUPPORTED
    assert _status(C.mountain_car_claims(worse), same_step) == C.NOT_SUPPORTED

    theory_files(tmp_path / "a")
    theory_files(tmp_path / "b", monotone=False, ratio8=1.2)
    good, bad = C.theory_claims(tmp_path / "a"), C.theory_claims(tmp_path / "b")
    assert [c.status for c in good] == [C.SUPPORTED, C.SUPPORTED]
    assert [c.status for c in bad] == [C.NOT_SUPPORTED, C.NOT_SUPPORTED]
    assert [c.status for c in C.theory_claims(tmp_path / "none")] == [C.INSUFFICIENT] * 2
    # The closed forms are the theorems: the verdict needs the simulation, and one that
    # misses the closed form by 5 SE everywhere (limit: Bonferroni z for 18 cells, 3.45)
    # refutes it.
    theory_files(tmp_path / "c", simulated=False)
    assert [c.status for c in C.theory_claims(tmp_path / "c")] == [C.INSUFFICIENT] * 2
    theory_files(tmp_path / "d", mc_shift=0.05)
    assert C.theory_claims(tmp_path / "d")[0].status == C.NOT_SUPPORTED
    # A ratio of 0.99 +- 0.002 (upper bound 0.997) is below 1; with SE 0.01 it cannot be
    # told from 1 (insufficient), at 1.05 +- 0.01 it is above (not supported).
    for ratio8, se, verdict in [(0.99, 0.002, C.SUPPORTED), (0.99, 0.01, C.INSUFFICIENT),
                                (1.05, 0.01, C.NOT_SUPPORTED)]:  # fmt: skip
        theory_files(tmp_path / "e", ratio8=ratio8)
        var = pd.read_csv(tmp_path / "e" / "variance.csv")
        var["mc_variance_ratio"], var["mc_variance_ratio_se"] = var["variance_ratio"], se
        var.to_csv(tmp_path / "e" / "variance.csv", index=False)
        assert C.theory_claims(tmp_path / "e")[1].status == verdict, (ratio8, se)

    needle = "Maxmin DQN ≥ DQN on Catcher"
    better = C.deep_claims(T.classify(deep_results(seeds=4, maxmin_shift=10.0)))
    worse = C.deep_claims(T.classify(deep_results(seeds=4, maxmin_shift=-30.0)))
    few = C.deep_claims(T.classify(deep_results(seeds=2)))
    assert _status(better, needle) == C.SUPPORTED
    assert _status(worse, needle) == C.NOT_SUPPORTED
    assert _status(few, needle) == C.INSUFFICIENT
    # the evidence carries the numbers: Maxmin IQM on Catcher is 5 + 10 + 4 + 1.5 = 20.5
    (c,) = [c for c in better if needle in c.text]
    assert c.numbers["maxmin_iqm"] == pytest.approx(20.5)


def test_mean_claims_need_the_difference_beyond_its_95_percent_interval():
    """Runs 1..5 (mean 3, SE sqrt(2.5 / 5) = 1/sqrt(2)) against the same shifted by 2.4 or
    by 2.2: the difference's SE is 1 with Welch df 8, so its 95% half-width is t(8) = 2.306;
    2.4 is beyond it, 2.2 is not. Against a value: 3 - t(4) / sqrt(2) = 3 - 2.776 / 1.414 =
    1.037 is above 1.0 but not above 1.1."""
    a = np.arange(1.0, 6.0)
    for shift, verdict in ((2.4, C.SUPPORTED), (2.2, C.NOT_SUPPORTED)):
        status, _, nums = C.compare_means(a, a + shift, lower_is_claimed=True, name_a="a",
                                          name_b="b")  # fmt: skip
        assert status == verdict, shift
        assert nums["a_se"] == pytest.approx(1 / np.sqrt(2)) and nums["b_mean"] == pytest.approx(
            3 + shift
        )
        assert C.compare_means(a + shift, a, lower_is_claimed=False, name_a="b",
                               name_b="a")[0] == verdict  # fmt: skip
        assert C.compare_means(a + shift, a, lower_is_claimed=True, name_a="b",
                               name_b="a")[0] == C.NOT_SUPPORTED  # fmt: skip
    for value, verdict in ((1.0, C.SUPPORTED), (1.1, C.NOT_SUPPORTED)):
        assert C.compare_to_value(a, value, above=True, name="a")[0] == verdict, value
        assert C.compare_to_value(6.0 - a, 6.0 - value, above=False, name="a")[0] == verdict
    assert C.compare_means(a[:2], a, lower_is_claimed=True, name_a="a", name_b="b")[0] == (
        C.INSUFFICIENT
    )  # two runs are too few


def test_theorem_1_allows_each_cell_the_bonferroni_limit(tmp_path: Path):
    """18 simulated cells at family-wise level 1%: a cell may miss the closed form by up to
    z = Phi^-1(1 - 0.01 / 36) = 3.45 SE (computed here from the normal quantile): one cell
    3.3 SE off is support (a per-cell 1% limit, 2.58, would refute it), 3.6 SE is not."""
    from scipy.stats import norm

    limit = norm.isf(0.01 / 36)
    assert 3.3 < limit < 3.6
    for off, verdict in ((3.3, C.SUPPORTED), (3.6, C.NOT_SUPPORTED)):
        theory_files(tmp_path)
        bias = pd.read_csv(tmp_path / "bias.csv")
        assert len(bias) == 18
        cell = (bias["M"] == 4) & (bias["N"] == 3)
        bias.loc[cell, "mc_bias"] = bias.loc[cell, "expected_bias"] + off * 0.01
        bias.to_csv(tmp_path / "bias.csv", index=False)
        theorem = C.theory_claims(tmp_path)[0]
        assert theorem.status == verdict, (off, theorem.evidence)
        assert theorem.numbers["max_fit_z"] == pytest.approx(off)


def test_sensitivity_figure_draws_each_agents_best_n_at_each_step_size(tmp_path, monkeypatch):
    """The synthetic deep runs' test return per seed is base + 5 [lr 1e-3] + (10 + N for
    Maxmin DQN) + seed (base 0 on Catcher, 20 on Pixelcopter); over seeds 0..3 the mean adds
    1.5 and the SE is sd(0, 1, 2, 3) / 2. Each agent's curve in the step-size figure holds,
    at each step size, the mean and SE of its best N there (Maxmin: N = 4)."""
    from maxminq.analysis import figures as F

    drawn: dict[tuple[str, str], tuple] = {}
    original = F.save_figure

    def spy(fig, out_dir, name):  # type: ignore[no-untyped-def]
        for ax in fig.axes:
            for bars in ax.containers:
                x, y = bars.lines[0].get_data()
                (segments,) = [c.get_segments() for c in bars.lines[2]]
                half = [(seg[1][1] - seg[0][1]) / 2 for seg in segments]
                drawn[ax.get_title(), bars.get_label()] = (
                    np.asarray(x, float),
                    np.asarray(y, float),
                    half,
                )
        return original(fig, out_dir, name)

    monkeypatch.setattr(F, "save_figure", spy)
    tables = T.classify(deep_results(seeds=4))
    assert F.fig_sensitivity(T.deep_summary(tables, reps=50), tmp_path).name == "deep_sensitivity"
    se = np.std([0.0, 1, 2, 3], ddof=1) / 2
    labels = {"dqn": "DQN", "ddqn": "Double DQN", "averaged-dqn": "Averaged DQN",
              "maxmin-dqn": "Maxmin DQN"}  # fmt: skip
    assert len(drawn) == 2 * len(labels)
    for env, base in (("Catcher", 0.0), ("Pixelcopter", 20.0)):
        for agent, label in labels.items():
            x, y, half = drawn[env, label]
            shift = 14.0 if agent == "maxmin-dqn" else 0.0
            np.testing.assert_allclose(y, base + shift + 1.5 + np.array([0.0, 5.0]))
            np.testing.assert_allclose(half, [se, se])
            ratio = x / np.array([1e-4, 1e-3])  # dodged sideways by one factor per agent
            assert ratio[0] == pytest.approx(ratio[1]) and 0.9 < ratio[0] < 1.1


def test_learning_curve_figures_draw_each_agents_best_setting(tmp_path, monkeypatch):
    """Fig. 4 from the synthetic deep runs (returns rise linearly to base + 5 [lr 1e-3] +
    (10 + N for Maxmin) + seed): each panel draws one curve per agent at its best setting,
    titled with the best N / K (Maxmin N = 4, Averaged K = 2), Maxmin's ending highest;
    the varying-N figure draws N = 2 and N = 4, each at its best step size (1e-3), N = 4
    above N = 2."""
    from maxminq.analysis import figures as F

    drawn: dict[str, list] = {}
    original = F.save_figure

    def spy(fig, out_dir, name):  # type: ignore[no-untyped-def]
        drawn[name] = [
            (ax.get_title(), {ln.get_label(): ln.get_ydata()[-1] for ln in ax.get_lines()})
            for ax in fig.axes
            if ax.get_lines()
        ]
        return original(fig, out_dir, name)

    monkeypatch.setattr(F, "save_figure", spy)
    tables = T.classify(deep_results(seeds=4))
    summary = T.deep_summary(tables, reps=50)
    assert F.fig_learning_curves(tables, T.deep_best(summary), tmp_path) is not None
    panels = drawn["deep_learning_curves"]
    assert [title.split("\n")[0] for title, _ in panels] == ["Catcher", "Pixelcopter"]
    for title, last in panels:
        assert title.split("\n")[1] == "Averaged K=2, Maxmin N=4"
        assert set(last) == {"DQN", "Double DQN", "Averaged DQN", "Maxmin DQN"}
        assert max(last, key=last.get) == "Maxmin DQN"
    (figure,) = F.fig_varying_n(tables, summary, tmp_path)
    assert figure.name == "deep_varying_n_pixelcopter"
    ((_, last),) = drawn["deep_varying_n_pixelcopter"]
    assert list(last) == ["N=2 (lr=0.001)", "N=4 (lr=0.001)"]
    assert last["N=4 (lr=0.001)"] > last["N=2 (lr=0.001)"]


def test_bias_figure_draws_each_agents_mean_bias_over_seeds_per_interval(tmp_path, monkeypatch):
    """The measured-bias figure: per agent its best setting's bias_mean at each logged step
    (250 .. 1000), averaged over the seeds (computed here from the metrics table), not
    smoothed; about 1 for DQN, -0.2 for Maxmin DQN in the synthetic runs."""
    from maxminq.analysis import figures as F

    drawn: dict[tuple[str, str], tuple] = {}
    original = F.save_figure

    def spy(fig, out_dir, name):  # type: ignore[no-untyped-def]
        for ax in fig.axes:
            for ln in ax.get_lines():
                if not ln.get_label().startswith("_"):
                    env = ax.get_title().split("\n")[0]
                    drawn[env, ln.get_label()] = (ln.get_xdata(), ln.get_ydata())
        return original(fig, out_dir, name)

    monkeypatch.setattr(F, "save_figure", spy)
    results = deep_results(seeds=4)
    tables = T.classify(results)
    best = T.deep_best(T.deep_summary(tables, reps=50))
    assert F.fig_bias(tables, best, tmp_path).name == "deep_estimation_bias"
    m = results["metrics"]
    best_run = {"dqn": "1-0.001", "ddqn": "1-0.001", "averaged-dqn": "2-0.001",
                "maxmin-dqn": "4-0.001"}  # fmt: skip
    labels = {"dqn": "DQN", "ddqn": "Double DQN", "averaged-dqn": "Averaged DQN",
              "maxmin-dqn": "Maxmin DQN"}  # fmt: skip
    assert len(drawn) == 2 * len(labels)
    for env in ("Catcher", "Pixelcopter"):
        for agent, label in labels.items():
            x, y = drawn[env, label]
            rows = m[m["run_id"] == f"{env}-v0-{agent}-{best_run[agent]}"]
            expected = rows.groupby("step")["bias_mean"].mean()
            assert rows["seed"].nunique() == 4
            np.testing.assert_array_equal(np.asarray(x, float), [250, 500, 750, 1000])
            np.testing.assert_allclose(np.asarray(y, float), expected.to_numpy())
        assert abs(np.mean(drawn[env, "DQN"][1]) - 1.0) < 0.1
        assert abs(np.mean(drawn[env, "Maxmin DQN"][1]) + 0.2) < 0.1


def test_overlapping_cis_with_a_lower_iqm_are_no_support():
    # Catcher, Maxmin's best setting (N=4, lr=1e-3) against DQN's: levels base + 5 + shift + 4
    # vs base + 5, seeds add 0..3. Shift -5: Maxmin's IQM one below DQN's, CIs overlap.
    needle = "Maxmin DQN ≥ DQN on Catcher"
    lower = C.deep_claims(T.classify(deep_results(seeds=4, maxmin_shift=-5.0)))
    (c,) = [c for c in lower if needle in c.text]
    n = c.numbers
    assert n["maxmin_iqm"] < n["dqn_iqm"] and n["maxmin_high"] >= n["dqn_low"]  # overlap
    assert c.status == C.NOT_SUPPORTED and "within noise" in c.evidence
    # the same spread with equal IQMs is support: the boundary is IQM_A >= IQM_B
    equal = C.deep_claims(T.classify(deep_results(seeds=4, maxmin_shift=-4.0)))
    (c,) = [c for c in equal if needle in c.text]
    assert c.numbers["maxmin_iqm"] == c.numbers["dqn_iqm"] and c.status == C.SUPPORTED
    # one rule for every ">=" claim, also when called directly; the rule text says so
    a, b = np.array([5.0, 9, 13.9, 15, 30]), np.array([9.0, 12, 21.3, 35, 41])
    status, evidence, nums = C.compare_iqm(a, b, name_a="a", name_b="b")
    assert nums["a_iqm"] < nums["b_iqm"] and nums["a_high"] >= nums["b_low"]
    assert status == C.NOT_SUPPORTED
    assert C.compare_iqm(b, a, name_a="b", name_b="a")[0] == C.SUPPORTED
    assert "overlapping CIs alone are no support" in C.RULE_IQM


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_of_a_deep_only_sweep_names_what_it_does_not_check(tmp_path: Path, capsys):
    write_store(tmp_path, deep_results(seeds=4, maxmin_shift=-5.0))
    assert main(["report", str(tmp_path), "--reps", "200"]) == 0
    out = capsys.readouterr().out
    assert "not checked (no data in this folder): Toy MDP, Mountain Car, Theory" in out
    assert "σ²" not in out and "Theorem 1" not in out and "μ = " not in out
    md = (tmp_path / "report.md").read_text()
    assert "Scale: **custom sweep**" in md and "unknown" not in md
    assert "Not checked, no data in this folder: Toy MDP, Mountain Car, Theory" in md
    claims = md.split("## Claims checked", 1)[1].split("\n## ", 1)[0]
    assert "### Deep RL" in claims and "### Mountain Car" not in claims
    assert "### Theory" not in claims and "### Toy MDP" not in claims
    assert "overlapping CIs alone are no support" in claims
    # the lower-but-overlapping Catcher comparison is listed as not supported
    (line,) = [x for x in claims.splitlines() if "Maxmin DQN ≥ DQN on Catcher" in x]
    assert line.startswith(f"- **{C.NOT_SUPPORTED}**")


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--scale", "huge"], "--scale"),
        (["--workers", "0"], "--workers"),
        (["--backend", "slurm"], "--backend"),
        (["--address", "auto"], "--address"),
        (["--only", "no_such_config"], "--only"),
        (["--configs", "/no/such/folder"], "--configs"),
    ],
)
def test_reproduce_rejects_bad_options_before_running(tmp_path, capsys, argv, needle):
    out = tmp_path / "out"
    assert main(["reproduce", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_runs_configs_then_writes_the_report(tmp_path: Path, capsys):
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_toy.yaml").write_text(TINY_TOY)
    # a second config sharing the Q-learning setting (same run id) and adding Maxmin
    other = TINY_TOY.replace("tiny_toy", "tiny_toy2").replace("double_q, n: 2", "maxmin, n: 2")
    (configs / "tiny_toy2.yaml").write_text(other)
    out = tmp_path / "out"
    argv = ["reproduce", "--out", str(out), "--configs", str(configs)]
    argv += ["--only", "tiny_toy,tiny_toy2", "--workers", "2", "--no-progress"]
    assert main(argv) == 0
    # one sweep over the union: the shared run is executed once, both configs list it
    printed = capsys.readouterr().out
    assert "(tiny_toy, tiny_toy2) [quick]: 3 runs" in printed
    assert "not checked (no data in this folder): Mountain Car, Theory, Deep RL" in printed
    with ResultsStore(out) as store:
        assert len(store.records("tiny_toy")) == len(store.records("tiny_toy2")) == 2
        assert [r.attempts for r in store.records()] == [1, 1, 1]
    meta = (out / "reproduce.json").read_text()
    assert '"scale": "quick"' in meta and '"name": "tiny_toy"' in meta
    md = (out / "report.md").read_text()
    assert "Scale: **quick**" in md and "reduced-scale" in md
    # the toy table reports both algorithms with their 8 runs
    assert re.search(r"\| \+0\.1 \| Q-learning \| 1 \| 8 \|", md)
    assert re.search(r"\| \+0\.1 \| Double Q \| 2 \| 8 \|", md)
    assert not (out / "theory").exists()  # theory not selected by --only
    # a changed config: its old runs stay in the store but not in the new report
    (configs / "tiny_toy.yaml").write_text(TINY_TOY.replace("runs: 8,", "runs: 5,"))
    argv[argv.index("tiny_toy,tiny_toy2")] = "tiny_toy"
    assert main(argv) == 0
    # only Double Q's old run is left out: the old Q-learning run is tiny_toy2's too (b26338e)
    printed = capsys.readouterr().out
    assert "1 stored run(s) of an earlier version" in printed
    assert "1 row(s) pool runs that differ in other settings" in printed
    with ResultsStore(out) as store:
        assert len(store.records("tiny_toy")) == 4
    md = (out / "report.md").read_text()
    # one row each: Double Q's new 5 runs; Q-learning's new 5 pooled with tiny_toy2's 8
    for name, n, runs in (("Q-learning", 1, 13), ("Double Q", 2, 5)):
        assert len(re.findall(rf"\| \+0\.1 \| {name} \| {n} \| (\d+) \|", md)) == 1
        assert re.search(rf"\| \+0\.1 \| {name} \| {n} \| {runs} \|", md)
    # a config error is reported in one line before anything runs
    (configs / "broken.yaml").write_text("name: broken\nkind: toy_mdp\nscales: {quick: {}}\n")
    assert main(["reproduce", "--out", str(tmp_path / "o2"), "--configs", str(configs)]) == 2
    assert "broken.yaml" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()


def test_pooled_differences_name_what_the_pooled_runs_do_not_share() -> None:
    from types import SimpleNamespace as R

    from maxminq.analysis.report import pooled_differences

    deep = {"env_id": "E", "agent": "dqn", "n": 1, "lr": 1e-4}
    records = [
        R(kind="deep", settings=deep | {"steps": 600, "seeds": [0, 1], "tensorboard": False}),
        R(kind="deep", settings=deep | {"steps": 100, "seeds": [1, 2], "tensorboard": True}),
        R(kind="deep", settings=deep | {"steps": 100, "seeds": [2, 3], "tensorboard": False}),
        # same keys, other seeds, nothing else different: replicates, pooled on purpose
        R(kind="deep", settings=deep | {"lr": 1e-3, "steps": 600, "seeds": [0]}),
        R(kind="deep", settings=deep | {"lr": 1e-3, "steps": 600, "seeds": [1]}),
        R(
            kind="deep",
            settings=deep | {"lr": 1e-3, "steps": 600, "seeds": [2], "save_probes": True},
        ),
        R(
            kind="deep",
            settings=deep
            | {"lr": 1e-3, "steps": 600, "seeds": [3], "eval_every": 100, "eval_every_episodes": 2},
        ),
        R(kind="toy_mdp", settings={"mu": 0.1, "algorithm": "maxmin", "n": 2, "seed": 0}),
        R(kind="toy_mdp", settings={"mu": 0.1, "algorithm": "maxmin", "n": 2, "seed": 1}),
        # the same seed with more runs: runs 0..49 of seed 3 twice
        R(kind="toy_mdp", settings={"mu": -0.1, "algorithm": "q_learning", "seed": 3, "runs": 50}),
        R(kind="toy_mdp", settings={"mu": -0.1, "algorithm": "q_learning", "seed": 3, "runs": 80}),
        # update_members 1 is stored as no update_members (one run id per computation)
        R(kind="toy_mdp", settings={"mu": 0.1, "algorithm": "maxmin", "n": 4, "seed": 0}),
        R(
            kind="toy_mdp",
            settings={"mu": 0.1, "algorithm": "maxmin", "n": 4, "seed": 1} | {"update_members": 2},
        ),
    ]
    lines = pooled_differences(records)
    twice = "in more than one run id (the same runs counted twice)"
    assert lines == [
        # seed 1 at 100 and 600 steps: two experiments; seed 2 twice at 100 steps
        f"deep (env_id E, agent dqn, n 1, lr 0.0001): 3 run ids pooled; steps 100 vs 600; "
        f"seed 2 {twice}",
        f"toy_mdp (mu -0.1, algorithm q_learning): 2 run ids pooled; seed 3 {twice}",
        "toy_mdp (mu 0.1, algorithm maxmin, n 4): 2 run ids pooled; "
        "update_members 2 vs unset (default)",
    ]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_warns_when_a_row_pools_two_experiments(tmp_path: Path, capsys) -> None:
    """Two toy runs with the same (mu, algorithm, n) but different step sizes, 2 runs each:
    the figures and claims pool them as 4 independent runs (not 2 averaged pairs) and the
    report and the command say which setting differs; the table gives each its own row."""
    toy = toy_results(runs=2, episodes=10)
    toy = toy[(toy.algorithm == "maxmin") & (toy.n == 2)]
    with ResultsStore(tmp_path) as store:
        for step, mu in ((0.01, 0.1), (0.1, 0.1), (0.01, -0.1)):
            settings = {"mu": mu, "algorithm": "maxmin", "n": 2, "step_size": step, "runs": 2}
            spec = RunSpec(f"toy-{step}-{mu}", "toy_mdp", settings, "toy_x")
            own = toy[toy.mu == mu].drop(columns=[*FRONT, "mu", "algorithm", "n"])
            store.register([spec])
            store.mark_running(spec.run_id)
            store.save_tables(spec, {"toy_mdp": own.reset_index(drop=True)})
            store.mark_finished(spec.run_id, "done")
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert (
        "caution, runs of different experiments pooled: toy_mdp (mu 0.1, algorithm maxmin, "
        "n 2): 2 run ids pooled; step_size 0.01 vs 0.1" in out
    )
    md = (tmp_path / "report.md").read_text()
    assert "Caution: runs of different experiments are pooled" in md
    rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| +0.1 | Maxmin")]
    assert [(r[3], r[4]) for r in rows] == [("0.01", "2"), ("0.1", "2")]  # step size, runs
    rows = [line.split(" | ") for line in md.splitlines() if line.startswith("| -0.1 | Maxmin")]
    assert [(r[3], r[4]) for r in rows] == [("0.01", "2")]


def test_reproduce_refuses_bad_folders_before_any_work(tmp_path: Path, capsys):
    """Each was found only after the runs (or the theory) had been done: a traceback, or two
    configs' runs merged under one name."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "a.yaml").write_text(TINY_TOY)
    (configs / "b.yaml").write_text(TINY_TOY.replace("mu: [0.1]", "mu: [-0.1]"))
    out = tmp_path / "out"
    assert main(["reproduce", "--out", str(out), "--configs", str(configs)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "maxminq reproduce: error: --configs: a.yaml and b.yaml are both named 'tiny_toy'; "
        "give each config its own name"
    )
    assert not out.exists()
    (configs / "b.yaml").unlink()
    (tmp_path / "file").write_text("x")
    argv = ["reproduce", "--configs", str(configs), "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "file" / "out")]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"--out: cannot create the folder {tmp_path / 'file' / 'out'} (Not a directory)")
    )
    out.mkdir()
    (out / "results.sqlite").write_bytes(b"not a database, but long enough to read" * 50)
    assert main([*argv, "--out", str(out), "--only", "theory"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"maxminq reproduce: error: --out: {out / 'results.sqlite'}: cannot")
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]  # no theory run
    (tmp_path / "none").mkdir()  # a configs folder without a config
    argv = ["reproduce", "--configs", str(tmp_path / "none"), "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert _one_error_line(capsys).endswith(f"--configs: {tmp_path / 'none'} holds no *.yaml "
                                            "configs")  # fmt: skip
    assert not (tmp_path / "o").exists()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_exits_1_and_names_the_runs_that_failed(tmp_path: Path, capsys):
    """A script running 'maxminq reproduce' must see failed runs: each is printed with its
    error, the report is still written from the others, and the exit status is 1. (The
    test-only theory_mc_flaky kind fails for N > 2.)"""
    import sweep_kinds as helpers

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "flaky.yaml").write_text(
        "name: flaky\nkind: theory_mc_flaky\nfixed: {seed: 1, samples: 1000, chunks: 1, M: 2}\n"
        "grid: {N: [1, 3]}\nscales: {quick: {}, paper: {}}\n"
    )
    out = tmp_path / "out"
    helpers.register()
    try:
        argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "flaky"]
        assert main([*argv, "--workers", "1", "--no-progress"]) == 1
    finally:
        helpers.unregister()
    printed = capsys.readouterr().out
    with ResultsStore(out) as store:
        (bad,) = [r.run_id for r in store.records() if r.settings["N"] == 3]
    assert f"  failed {bad}: ValueError: boom for N=3" in printed
    assert (out / "report.md").is_file() and "report: " in printed
    # the report's caution, printed as 'maxminq report' prints it (it was in report.md only)
    assert "        caution, runs without results (not in this report): 1 failed\n" in printed
    assert "registered in this folder has results:** 1 failed." in (out / "report.md").read_text()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_names_registered_runs_without_results(tmp_path: Path, capsys):
    """A sweep stopped early (or with failures) leaves runs without results; the report of
    the folder says how many instead of passing for the whole sweep."""
    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    with ResultsStore(tmp_path) as store:
        extra = [RunSpec(f"toy_mdp-00000000000{i}", "toy_mdp", {"mu": 0.1}, "c") for i in (1, 2)]
        store.register(extra)
        store.mark_running(extra[1].run_id)
        store.mark_finished(extra[1].run_id, "failed", error="boom")
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert "caution, runs without results (not in this report): 1 pending, 1 failed" in out
    md = (tmp_path / "report.md").read_text()
    assert "registered in this folder has results:** 1 pending, 1 failed." in md


def test_theory_tables_with_text_in_number_columns(tmp_path: Path):
    """A hand-edited or damaged theory table was a TypeError in the report: a required
    column with text makes the table unreadable (insufficient data, said so); a Monte-Carlo
    cell with text is left out of the check."""
    theory_files(tmp_path)
    bias = pd.read_csv(tmp_path / "bias.csv")
    bias["mc_bias"] = bias["mc_bias"].astype(object)
    bias.loc[0, "mc_bias"] = "zz"
    bias.to_csv(tmp_path / "bias.csv", index=False)
    var = pd.read_csv(tmp_path / "variance.csv").astype({"N": object})
    var.loc[9, "N"] = "ten"
    var.to_csv(tmp_path / "variance.csv", index=False)
    theorem, corollary = C.theory_claims(tmp_path)
    assert theorem.status == C.SUPPORTED and f"({len(bias) - 1} cells" in theorem.evidence
    assert (corollary.status, corollary.evidence) == (
        C.INSUFFICIENT,
        "no readable variance.csv (N, variance_ratio)",
    )


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "null",
        '{"seconds": "x"}',
        '{"configs": [{"name": "mountain_car", "run_seconds": "x"}, 5]}',
    ],
)
@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_a_damaged_reproduce_json_is_left_out_not_a_traceback(tmp_path: Path, capsys, text):
    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    (tmp_path / "reproduce.json").write_text(text)
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "Scale: **custom sweep**" in md and "Total wall time" not in md


def test_toy_q_left_figure_draws_the_true_value_at_the_runs_discount(tmp_path, monkeypatch):
    """A sweep's toy runs at gamma = 0.5: the report's Q(A, Left) figure draws the true value
    gamma * mu (0.2 for mu = 0.4), and its caption says so; at the paper's gamma = 1, mu."""
    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis.figures import classic_figures
    from maxminq.tabular.toy_mdp import run_toy_mdp

    drawn: list[float] = []
    original = cp.toy_q_left_figure

    def record(df, gamma=1.0):  # type: ignore[no-untyped-def]
        fig = original(df, gamma=gamma)
        dotted = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == ":"]
        drawn.append(float(dotted[0].get_ydata()[0]))
        return fig

    monkeypatch.setattr(cp, "toy_q_left_figure", record)
    for gamma, truth, words in ((0.5, 0.2, "γ·μ (γ = 0.5)"), (1.0, 0.4, "value μ")):
        toy = run_toy_mdp(mu=0.4, algorithm="q_learning", n=1, runs=2, episodes=3, seed=0,
                          gamma=gamma)  # fmt: skip
        toy["gamma"] = gamma  # as load_results adds a run's settings
        figures = classic_figures(T.classify({"toy_mdp": toy}), tmp_path / str(gamma))
        (q_left,) = [f for f in figures if f.name == "toy_mdp_q_left"]
        assert drawn[-1] == pytest.approx(truth) and words in q_left.caption


def test_mountain_car_figures_name_the_runs_episode_cap(tmp_path, monkeypatch):
    """A sweep's Mountain Car runs capped at 300 steps: the report's Fig. 3(a) gets the cap
    (its title names it) and the learning-curve captions say it; without the setting, none."""
    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis.figures import classic_figures
    from maxminq.linear.mountain_car import run_mountain_car_grid

    caps: list[int | None] = []
    original = cp.mc_sensitivity_figure

    def record(df, max_steps=None):  # type: ignore[no-untyped-def]
        caps.append(max_steps)
        return original(df, max_steps)

    monkeypatch.setattr(cp, "mc_sensitivity_figure", record)
    mc = run_mountain_car_grid(algorithm="q_learning", n=1, sigma2=[0.0, 1.0], step_sizes=[0.02],
                               runs=2, episodes=2, seed=0, max_steps=300)  # fmt: skip
    for with_cap in (True, False):
        table = mc.assign(max_steps=300) if with_cap else mc  # as load_results adds settings
        figures = classic_figures(T.classify({"mountain_car": table}), tmp_path / str(with_cap))
        (curves,) = [f for f in figures if f.name == "mountain_car_curves_all"]
        assert caps[-1] == (300 if with_cap else None)
        assert ("ends at 300 steps at most" in curves.caption) == with_cap


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_tables_give_each_value_of_a_setting_that_differs_its_own_row(
    tmp_path, capsys, monkeypatch
):
    """A config sweeping update_members and gamma wrote runs with equal (algorithm, N,
    sigma^2, step size): the table pooled u = 1 and u = 2 into one row (mean 160 of 100,
    110, 120, 200, 210, 220), the caution named them but no row told them apart; the claims
    compared the pooled means too (Maxmin 160 vs Q-learning 365)."""
    mc = {"algorithm": "maxmin", "n": 4, "sigma2": 10.0, "step_size": 0.02, "seed": 0}
    ql = {"algorithm": "q_learning", "n": 1, "sigma2": 10.0, "step_size": 0.02, "seed": 0}

    def last_steps(values: list[float]) -> dict[str, pd.DataFrame]:
        # two episodes per run; the last one's steps are ``values``
        rows = [(r, ep, 500.0 if ep == 0 else v) for r, v in enumerate(values) for ep in (0, 1)]
        return {"mountain_car": pd.DataFrame(rows, columns=["run", "episode", "steps"])}

    deep = {"env_id": "E-v0", "agent": "maxmin-dqn", "n": 2, "lr": 1e-3, "steps": 100}

    def test_returns(returns: list[float]) -> dict[str, pd.DataFrame]:
        ep = pd.DataFrame({"seed": [0, 1], "step": [100, 100], "return": [0.0, 0.0]})
        tests = pd.DataFrame({"seed": [0, 1], "episode": [0, 0], "return": returns})
        return {"episodes": ep, "tests": tests}

    _store_runs(
        tmp_path,
        [
            (
                "m1",
                "mountain_car",
                mc | {"gamma": 1.0},
                last_steps([100, 110, 120]),
            ),
            (
                "m2",
                "mountain_car",
                mc | {"gamma": 1.0, "update_members": 2},
                last_steps([200, 210, 220]),
            ),
            ("q1", "mountain_car", ql | {"gamma": 1.0}, last_steps([300, 320, 340])),
            ("q2", "mountain_car", ql | {"gamma": 0.99}, last_steps([400, 410, 420])),
            ("d1", "deep", deep | {"seeds": [0, 1], "update_members": 1}, test_returns([1, 3])),
            ("d2", "deep", deep | {"seeds": [0, 1], "update_members": 2}, test_returns([7, 9])),
        ],
    )
    from maxminq.analysis import classic_plots as cp

    drawn: list[pd.DataFrame] = []  # what Fig. 3(a) is drawn from
    original = cp.mc_sensitivity_figure
    monkeypatch.setattr(
        cp, "mc_sensitivity_figure", lambda df, *a: drawn.append(df) or original(df, *a)
    )
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    out = capsys.readouterr().out
    assert "update_members 2 vs unset (default)" in out
    # the figures, as the claims, show only the runs at the defaults: Maxmin's 100-120 runs
    # (not u = 2's) and Q-learning's at gamma 1 (300-340)
    (fig_df,) = drawn
    last = fig_df[fig_df["episode"] == 1].groupby("algorithm")["steps"].mean()
    assert last.to_dict() == {"maxmin": 110.0, "q_learning": 320.0}
    assert (
        "caution: the mountain_car claims and figures use only the runs at the default (the "
        "paper's setting) of gamma 1.0, update_members unset" in out
    )
    md = (tmp_path / "report.md").read_text()
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()]
    mc_head = next(c for c in cells if c[:4] == ["σ²", "algorithm", "N", "best step size"])
    assert mc_head[4:7] == ["gamma", "update_members", "runs"]
    mc_rows = [c[1:7] for c in cells if c[0] == "10" and len(c) == len(mc_head)]
    # one row per (algorithm, gamma, update_members); '–': not set (the default); the
    # algorithms in the figures' legend order
    assert mc_rows == [
        ["Q-learning", "1", "0.02", "0.99", "–", "3"],
        ["Q-learning", "1", "0.02", "1", "–", "3"],
        ["Maxmin Q", "4", "0.02", "1", "2", "3"],
        ["Maxmin Q", "4", "0.02", "1", "–", "3"],
    ]
    means = [c[7] for c in cells if c[0] == "10" and len(c) == len(mc_head)]
    # mean ± SE by hand: SE = sd / sqrt(3), sd 10 or 20
    assert means == ["410 ± 5.77", "320 ± 11.5", "210 ± 5.77", "110 ± 5.77"]
    deep_rows = [c for c in cells if c[0] == "E"]
    assert [(c[4], c[5], c[6]) for c in deep_rows] == [("1", "2", "2 ± 1"), ("2", "2", "8 ± 1")]
    summary = pd.read_csv(tmp_path / "summary" / "mountain_car_final.csv")
    assert len(summary) == 4 and {"gamma", "update_members"} <= set(summary.columns)
    assert "The final-performance tables give each value of" in md
    # the claims compare the paper's settings only: Maxmin at u = 1 (110) with Q-learning
    # at gamma = 1 (320), not the pooled 160 and 365
    claims = build_report(tmp_path, reps=100).claims
    (claim,) = [c for c in claims if "best step size" in c.text and "Q-learning's" in c.text]
    assert claim.numbers["Maxmin Q_mean"] == pytest.approx(110)
    assert claim.numbers["Q-learning_mean"] == pytest.approx(320)


def test_toy_bias_claims_compare_with_the_runs_true_value_gamma_mu():
    """Q(A, Left)'s true value is gamma * mu. At gamma = 0.5 Q-learning ending at 0.07
    overestimates (truth 0.05), but the claim compared it with mu = 0.1 and said 'not
    supported'; runs at gamma 0.5 and 1 were pooled against mu as well."""
    rng = np.random.default_rng(0)

    def toy(finals: dict[float, float], runs: int = 6) -> pd.DataFrame:
        rows = [
            dict(run_id=f"t{g}", mu=0.1, algorithm="q_learning", n=1, gamma=g, run=r)
            | dict(episode=ep, distance=0.0, q_a_left=q + rng.normal(0, 0.001))
            for g, q in finals.items()
            for r in range(runs)
            for ep in range(10)
        ]
        return pd.DataFrame(rows)

    (one,) = [c for c in C.toy_claims(toy({0.5: 0.07})) if c.text.startswith("Q-learning")]
    assert one.text == "Q-learning overestimates Q(A, Left) = γμ, γ = 0.5 (μ = +0.1)"
    assert one.status == C.SUPPORTED and one.numbers["true_value"] == pytest.approx(0.05)
    # errors against gamma * mu: +0.02 at both gammas (pooled mean of Q 0.095 < mu)
    (both,) = [
        c for c in C.toy_claims(toy({0.5: 0.07, 1.0: 0.12})) if c.text.startswith("Q-learning")
    ]
    assert both.text == "Q-learning overestimates Q(A, Left) = γμ, γ = 0.5, 1 pooled (μ = +0.1)"
    assert both.status == C.SUPPORTED
    assert both.numbers["second-half Q(A,Left) − γμ of Q-learning_mean"] == pytest.approx(
        0.02, abs=1e-3
    )
    # at gamma = 1 nothing changes: 0.09 is below mu
    (paper,) = [c for c in C.toy_claims(toy({1.0: 0.09})) if c.text.startswith("Q-learning")]
    assert paper.text == "Q-learning overestimates Q(A, Left) = μ (μ = +0.1)"
    assert paper.status == C.NOT_SUPPORTED


def test_q_learning_fastest_is_checked_against_the_fastest_other_algorithm():
    """mu = +0.1, distance to the optimal policy over all episodes: Double Q 0.6, Q-learning
    0.3, Maxmin N = 2 0.2. Q-learning is not the fastest (Maxmin is), though it beats
    Double Q."""
    rng = np.random.default_rng(2)
    levels = {("double_q", 2): 0.6, ("q_learning", 1): 0.3, ("maxmin", 2): 0.2}
    toy = pd.DataFrame(
        [
            dict(run_id=alg, mu=0.1, algorithm=alg, n=n, run=r, episode=ep, q_a_left=0.1)
            | dict(distance=d + rng.normal(0, 0.01))
            for (alg, n), d in levels.items()
            for r in range(6)
            for ep in range(4)
        ]
    )
    (claim,) = [c for c in C.toy_claims(toy) if "approaches the optimal policy fastest" in c.text]
    assert claim.status == C.NOT_SUPPORTED and "Maxmin" in claim.evidence
    assert claim.numbers["Q-learning_mean"] == pytest.approx(0.3, abs=0.01)


def test_toy_bias_claims_average_the_second_half_of_each_run():
    """Q-learning's Q(A, Left) at mu = 0.1: 0.5 over episodes 0-4 (the start-up transient),
    0.05 over 5-8 and 0.15 at 9. Over the second half (5-9) it averages 0.07, below mu: no
    overestimation; the whole run (0.285) or the last tenth (0.15) would say otherwise."""
    rng = np.random.default_rng(1)
    q_by_episode = [0.5] * 5 + [0.05] * 4 + [0.15]
    toy = pd.DataFrame(
        [
            dict(run_id="t", mu=0.1, algorithm="q_learning", n=1, run=r, episode=ep)
            | dict(distance=0.0, q_a_left=q + rng.normal(0, 0.001))
            for r in range(6)
            for ep, q in enumerate(q_by_episode)
        ]
    )
    (claim,) = [c for c in C.toy_claims(toy) if c.text.startswith("Q-learning")]
    assert claim.status == C.NOT_SUPPORTED
    assert claim.numbers["second-half Q(A,Left) of Q-learning_mean"] == pytest.approx(
        0.07, abs=1e-3
    )


def test_bias_against_n_pools_each_seeds_probes_over_the_second_half(tmp_path):
    """The report's bias-against-N figure: per seed, the probes of the metrics intervals after
    half the run, pooled by their counts (intervals (1 probe, 3.0) and (3, -1.0) pool to
    0.0, not the intervals' average 1.0), then the mean over seeds; DQN at N = 1."""
    from maxminq.analysis.figures import bias_by_n, fig_bias_vs_n

    results = deep_results(seeds=3)
    m = results["metrics"]
    crafted = {  # (agent, n) -> {step: (probes, mean)}; steps 250 and 500 are the first half
        ("maxmin-dqn", 2): {750: (1, 3.0), 1000: (3, -1.0)},
        ("maxmin-dqn", 4): {750: (2, 1.0), 1000: (2, -2.0)},
        ("dqn", 1): {750: (1, 2.0), 1000: (1, 4.0)},
    }
    for (agent, n), by_step in crafted.items():
        for step in (250, 500, 750, 1000):
            count, mean = by_step.get(step, (5, 100.0))
            rows = (m["agent"] == agent) & (m["n"] == n) & (m["step"] == step)
            m.loc[rows, ["bias_n", "bias_mean", "bias_std"]] = [count, mean, 0.0]
    tables = T.classify(results)
    summary = T.deep_summary(tables, reps=50)
    got = bias_by_n(tables, summary, "Catcher-v0").set_index(["agent", "n"])
    assert got.loc[("dqn", 1), "mean"] == pytest.approx(3.0)
    assert got.loc[("maxmin-dqn", 2), "mean"] == pytest.approx(0.0)
    assert got.loc[("maxmin-dqn", 4), "mean"] == pytest.approx(-0.5)
    assert (got["seeds"] == 3).all() and np.allclose(got["se"], 0.0)
    figure = fig_bias_vs_n(tables, summary, tmp_path)
    assert figure is not None and figure.name == "deep_bias_vs_n"
    assert all(p.stat().st_size > 1000 for p in figure.paths)
    # the claim on the same numbers: N = 4's -0.5 below N = 2's 0.0 in every seed (SE 0);
    # with N = 4 at +0.5 instead, not supported
    (claim,) = [c for c in C.deep_claims(tables) if "Catcher" in c.text and "larger N" in c.text]
    assert claim.status == C.SUPPORTED and "(N=4) than with smaller N (N=2)" in claim.text
    assert claim.numbers["N=4_mean"] == pytest.approx(-0.5)
    m.loc[(m["agent"] == "maxmin-dqn") & (m["n"] == 4) & (m["step"] > 500), "bias_mean"] += 1.0
    (claim,) = [
        c
        for c in C.deep_claims(T.classify(results))
        if "Catcher" in c.text and "larger N" in c.text
    ]
    assert claim.status == C.NOT_SUPPORTED
    # 'Maxmin's bias below DQN's' pools the same way: best Maxmin (N = 4) 0.5 vs DQN 3.0 (the
    # first half's intervals, at 100, left out; an unweighted mean would not be 0.5)
    claims = C.deep_claims(T.classify(results))
    (below,) = [c for c in claims if "Catcher" in c.text and "below DQN's" in c.text]
    assert below.status == C.SUPPORTED
    assert below.numbers["Maxmin DQN_mean"] == pytest.approx(0.5)


def test_claims_keep_a_setting_pooled_when_no_run_is_at_its_default():
    """Episode caps of 300 and 1,000 (default 5,000): filtering on them left no run, and
    every Mountain Car claim said 'no Mountain Car results'."""
    from maxminq.analysis.report import at_defaults

    df = pd.DataFrame(
        {
            "max_steps": [300, 1000, 300, 1000],
            "gamma": [1.0, 1.0, 0.99, 0.99],
            "update_members": [np.nan, 2.0, np.nan, 2.0],
            "steps": [1, 2, 3, 4],
        }
    )
    rows, used = at_defaults(df, "mountain_car", ["gamma", "max_steps", "update_members"])
    assert used == {"gamma": 1.0, "update_members": None}
    assert rows["steps"].tolist() == [1]


def test_deep_claims_keep_the_env_keywords_the_registry_sets():
    """Catcher trains on normalize=True unless told otherwise (the authors' env): its runs
    at that default are kept, not pooled with normalize=false; other envs' default is none."""
    from maxminq.analysis.report import at_defaults, claim_restrictions

    df = pd.DataFrame(
        {
            "env_id": ["maxminq/Catcher-v0"] * 3 + ["CartPole-v1"] * 2,
            "env_kwargs": [
                '{"normalize":true}',
                '{"normalize":false}',
                '{"normalize":true}',
                np.nan,
                '{"sutton_barto_reward":true}',
            ],
            "seed": [0, 1, 2, 3, 4],
        }
    )
    rows, used = at_defaults(df, "deep", ["env_kwargs"])
    assert rows["seed"].tolist() == [0, 2, 3]
    assert (
        "env_kwargs as the environment registry sets them" in claim_restrictions({"deep": used})[0]
    )
    # another table of the same runs gets the same filter
    again, _ = at_defaults(df.iloc[::-1], "deep", ["env_kwargs"], used)
    assert sorted(again["seed"]) == [0, 2, 3]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_says_when_rows_pool_settings_of_a_config_of_ones_own(tmp_path, capsys):
    """reproduce --configs with a config sweeping gamma printed the claim counts only: the
    pooling caution and the claims' restriction were in the report file alone."""
    configs = tmp_path / "configs"
    configs.mkdir()
    text = TINY_TOY.replace("grid: {mu: [0.1]}", "grid: {mu: [0.1], gamma: [1.0, 0.5]}")
    (configs / "tiny_toy.yaml").write_text(
        text.replace("runs: 8, episodes: 20", "runs: 3, episodes: 5")
    )
    out = tmp_path / "out"
    argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "tiny_toy"]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    # two rows (Q-learning, Double Q), each with gamma 0.5 and 1.0
    assert (
        "caution: 2 row(s) pool runs that differ in other settings (listed in the report; "
        f"'maxminq report {out}' prints them)" in printed
    )
    assert (
        "caution: the toy_mdp claims and figures use only the runs at the default (the "
        "paper's setting) of gamma 1.0" in printed
    )


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_deep_claims_use_the_runs_at_the_default_update_members(tmp_path):
    """Maxmin DQN at update_members 1 (test returns 1, 2, 3) and 2 (7, 8, 9) in one folder:
    the claim pooled them (IQM 5 of the six, tied with DQN's 5: 'supported'); at the
    default u = 1 Maxmin's IQM is 2, below DQN's."""
    base = {"env_id": "E-v0", "n": 2, "lr": 1e-3, "steps": 100, "seeds": [0, 1, 2]}

    def tables(returns: list[float]) -> dict[str, pd.DataFrame]:
        ep = pd.DataFrame({"seed": [0, 1, 2], "step": [100] * 3, "return": [0.0] * 3})
        tests = pd.DataFrame({"seed": [0, 1, 2], "episode": [0] * 3, "return": returns})
        return {"episodes": ep, "tests": tests}

    maxmin = base | {"agent": "maxmin-dqn"}
    _store_runs(
        tmp_path,
        [
            ("d1", "deep", maxmin | {"update_members": 1}, tables([1.0, 2.0, 3.0])),
            ("d2", "deep", maxmin | {"update_members": 2}, tables([7.0, 8.0, 9.0])),
            ("q", "deep", base | {"agent": "dqn", "n": 1, "update_members": 1}, tables([4, 5, 6])),
        ],
    )
    report = build_report(tmp_path, reps=100)
    assert report.restricted == [
        "the deep claims and figures use only the runs at the default (the paper's setting) of "
        "update_members 1"
    ]
    (claim,) = [c for c in report.claims if c.text.startswith("Maxmin DQN ≥ DQN")]
    assert claim.status == C.NOT_SUPPORTED
    assert claim.numbers["maxmin_iqm"] == pytest.approx(2.0)  # trimmed mean of 1, 2, 3


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_deep_table_note_names_untested_and_diverged_runs(tmp_path: Path) -> None:
    """Scores of different kinds in one table are said: seed 2 has no test episodes (scored
    by its training average) and seed 1 diverged; a fully tested sweep gets no such note."""
    deep = {"env_id": "E-v0", "agent": "dqn", "n": 1, "lr": 1e-3, "steps": 100}
    episodes = pd.DataFrame({"seed": [0, 1, 2], "step": [100] * 3, "return": [1.0, 2.0, 3.0]})
    tests = pd.DataFrame({"seed": [0, 1], "episode": [0, 0], "return": [5.0, 6.0]})
    runs = pd.DataFrame({"seed": [0, 1, 2], "status": ["done", "diverged", "done"]})
    mixed = {"episodes": episodes, "tests": tests, "runs": runs}
    _store_runs(tmp_path / "mixed", [("d1", "deep", deep | {"seeds": [0, 1, 2]}, mixed)])
    md = build_report(tmp_path / "mixed", reps=50).markdown.read_text()
    assert (
        "Of the 3 runs of all settings, 1 without test episodes (scored by the training "
        "average, beside test returns); 1 diverged (kept with the score reached)."
    ) in md
    tested = {"episodes": episodes[:2], "tests": tests}
    _store_runs(tmp_path / "tested", [("d1", "deep", deep | {"seeds": [0, 1]}, tested)])
    md = build_report(tmp_path / "tested", reps=50).markdown.read_text()
    assert "runs of all settings" not in md


def test_operator_bias_caption_says_what_the_lines_and_points_are() -> None:
    """operator_bias.png draws each operator's exact mean bias as a line and the Monte-Carlo
    estimate as points with bars of 2 standard errors (the caption said one s.e. and
    'by simulation' only); the dashed lines are the fixed-N operators, all named."""
    from maxminq.analysis import style
    from maxminq.analysis.report import THEORY_FIGURES
    from maxminq.analysis.theory_plots import (
        OPERATOR_SETTINGS,
        operator_bias_table,
        plot_operator_bias,
    )

    table = operator_bias_table(4, 3, 200, 0)
    ax_bias = plot_operator_bias(table).axes[0]
    maxmin = table[table.operator == "maxmin"]
    want = maxmin.expected_bias.to_numpy()
    exact = [ln for ln in ax_bias.lines if np.array_equal(ln.get_ydata(), want)]
    assert exact and exact[0].get_linestyle() == "-"
    (points,) = [c for c in ax_bias.containers if c.get_label() == "Maxmin Q"]
    bars = points.lines[2][0].get_segments()
    half = [(seg[1, 1] - seg[0, 1]) / 2 for seg in bars]
    np.testing.assert_allclose(half, 2 * maxmin.bias_se)  # two standard errors
    caption = THEORY_FIGURES["operator_bias"][1]
    assert "Lines are the exact mean" in caption and "± 2 standard errors" in caption
    assert "one standard" not in caption
    for name, (members, _) in OPERATOR_SETTINGS.items():
        if members is not None:
            assert style.LABELS[name] in caption


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_names_finished_runs_whose_tables_fail_verification(tmp_path: Path, capsys):
    """A finished run whose table was damaged after the sweep is left out of the report: the
    command says so in one warning line (not Python's file:line warning) and a caution line,
    and the report in a caution box naming the run; intact runs stay in."""
    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    with ResultsStore(tmp_path) as store:
        run_ids = sorted(r.run_id for r in store.records())
    damaged = tmp_path / "tables" / run_ids[0] / "mountain_car.csv"
    damaged.write_bytes(damaged.read_bytes()[:-50])  # cut short: size and checksum differ
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"maxminq report: warning: skipping run {run_ids[0]}: {damaged}: size or checksum "
        "differs from the manifest (corrupt)"
    ]
    assert (
        "caution, finished runs failing verification (not in this report): " + run_ids[0]
        in captured.out
    )
    md = (tmp_path / "report.md").read_text()
    caution = [line for line in md.splitlines() if "failed verification" in line]
    assert len(caution) == 1 and "**Caution: 1 finished run of this folder failed" in caution[0]
    assert run_ids[0] in caution[0] and not any(r in caution[0] for r in run_ids[1:])
    # the intact runs are reported: the per-setting summary counts them
    summary = pd.read_csv(tmp_path / "summary" / "mountain_car_final.csv")
    assert len(run_ids) > 1 and len(summary) == len(run_ids) - 1


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_removes_the_temporaries_a_killed_report_left(tmp_path: Path, capsys):
    """A report killed (kill -9) while writing left hidden .NAME.XXXXXXXX.tmp files (of
    report.md, a summary table, a figure) for good; the next report removes those of its own
    outputs, not a user's files nor another program's temporaries."""
    from killed_writes import decoys, killed_write

    write_store(tmp_path, {"mountain_car": mc_results(runs=4)})
    (tmp_path / "summary").mkdir()
    (tmp_path / "figures").mkdir()
    left = [killed_write(tmp_path / "report.md"), killed_write(tmp_path / "report.html")]
    left += [killed_write(tmp_path / "summary" / "mountain_car_final.csv")]
    left += [killed_write(tmp_path / "figures" / "mountain_car_gone.png")]  # any of its names
    keep = [killed_write(tmp_path / "figures" / "my_figure.png"), *decoys(tmp_path, "report.md")]
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    assert not any(p.exists() for p in left)
    assert all(p.is_file() for p in keep)


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_removes_the_temporaries_a_killed_reproduce_left(tmp_path: Path, capsys):
    """The same for 'maxminq reproduce': its reproduce.json and its report stage's."""
    from killed_writes import decoys, killed_write

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_toy.yaml").write_text(TINY_TOY)
    out = tmp_path / "out"
    out.mkdir()
    left = [killed_write(out / "reproduce.json"), killed_write(out / "report.html")]
    keep = decoys(out, "reproduce.json")
    argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "tiny_toy"]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    assert not any(p.exists() for p in left)
    hidden = sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp"))
    assert hidden == sorted(p.name for p in keep)


def test_operator_figure_caption_names_normal_errors(tmp_path: Path, capsys) -> None:
    """'maxminq theory --noise normal' draws the operator figure's points with normal errors;
    the report's caption said they were uniform and that the points check the lines."""
    argv = ["theory", "--out", str(tmp_path), "--m-max", "4", "--n-max", "3", "--samples"]
    argv += ["100", "--variance-samples", "1000", "--noise", "normal", "--no-progress"]
    assert main(argv) == 0
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    md = (tmp_path / "report.md").read_text()
    caption = md.split("](operator_bias.png)\n\n", 1)[1].splitlines()[0]
    assert "with normal errors of the same variance" in caption
    assert "exact mean bias for errors uniform" in caption
    assert "so the points check the lines" not in caption
    html = (tmp_path / "report.html").read_text()
    assert "with normal errors of the same variance (&#x27;maxminq theory --noise normal" in html


def test_reproduce_finishes_its_work_when_the_reader_leaves(tmp_path: Path) -> None:
    """'maxminq reproduce | head -1': the reader gone, the sweep's summary line ended the
    command (broken pipe) before the theory stage and the report; the work is now finished
    and the exit status is the work's (0), with nothing on stderr."""
    import subprocess
    import sys

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_toy.yaml").write_text(TINY_TOY)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "maxminq", "reproduce", "--out", str(out), "--configs"]
    argv += [str(configs), "--only", "tiny_toy,theory", "--workers", "1", "--no-progress"]
    read, write = os.pipe()
    os.close(read)  # the reader left before the first line
    try:
        done = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")
    assert (out / "theory" / "operator_bias.png").is_file() and (out / "report.md").is_file()
    assert '"finished"' in (out / "reproduce.json").read_text()


def test_toy_overestimation_claim_at_negative_mu_names_the_start_up_confound():
    """At mu < 0 the greedy policy avoids B, whose values then come down slowly from their
    start near 0, which reads as overestimation too: the claim at mu = -0.1 says so, the one
    at mu = +0.1 (where B is visited and the start-up sits below mu) does not."""
    rng = np.random.default_rng(3)
    toy = pd.DataFrame(
        [
            dict(run_id=f"m{mu}", mu=mu, algorithm="q_learning", n=1, run=r, episode=ep)
            | dict(distance=0.0, q_a_left=mu + 0.02 + rng.normal(0, 0.001))
            for mu in (0.1, -0.1)
            for r in range(6)
            for ep in range(10)
        ]
    )
    claims = {c.text: c for c in C.toy_claims(toy) if c.text.startswith("Q-learning")}
    negative = claims["Q-learning overestimates Q(A, Left) = μ (μ = -0.1)"]
    positive = claims["Q-learning overestimates Q(A, Left) = μ (μ = +0.1)"]
    assert negative.status == positive.status == C.SUPPORTED
    assert "rarely visited" in negative.rule and "cannot tell" in negative.rule
    assert "rarely visited" not in positive.rule
