"""What `make demo` writes, as a demanding reader reads it: the report says how the runs differ
from the paper's, lists the tabular rows in the figures' legend order, names the M the Theorem
1 check simulated, and the captions say how many runs a curve is over and when a 'sensitivity'
panel has a single step size to show."""

from __future__ import annotations

import json
import platform
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from analysis_results import TINY_TOY, deep_results, mc_results, toy_results, write_store

import maxminq
from maxminq.analysis import claims as C
from maxminq.analysis import figures as F
from maxminq.analysis import report as R
from maxminq.analysis import tables as T
from maxminq.cli import main
from maxminq.commands import reproduce as RP
from maxminq.experiments.config import RunSpec, SweepConfig


def _records(settings: list[dict]) -> list[SimpleNamespace]:
    """Store records of one config ``demo`` (the fields ``_settings_rows`` reads)."""
    return [SimpleNamespace(config="demo", settings=s) for s in settings]


def _toy_rows(mu: float, start: float, end: float, runs: int = 6) -> pd.DataFrame:
    """Q-learning rows at ``mu`` whose Q(A, Left) goes linearly from ``start`` to ``end``
    over 20 episodes, plus a little noise (fixed seed)."""
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        [
            dict(run_id="q", mu=mu, algorithm="q_learning", n=1, run=r, episode=ep, distance=0.0)
            | dict(q_a_left=start + (end - start) * ep / 19 + rng.normal(0, 0.001))
            for r in range(runs)
            for ep in range(20)
        ]
    )


def _config(scale: str, runs: list[dict]) -> SweepConfig:
    specs = [RunSpec(f"r{i}", "deep", s, "demo") for i, s in enumerate(runs)]
    return SweepConfig("demo", "deep", scale, Path("demo.yaml"), runs=specs)


def test_the_settings_table_prints_values_as_the_paper_column_does() -> None:
    """The report's settings table rounded a float setting to 3 digits (two step sizes
    0.1234 and 0.1237 both read 0.123), sorted numbers as text (n: 10, 2, 4, 6, 8) and
    printed whole numbers without the thousands separator that ``maxminq reproduce``'s
    paper column, beside it, uses (1500000 against 1,500,000). One formatter serves both."""
    from maxminq.analysis.report import _settings_rows
    from maxminq.commands.reproduce import paper_difference
    from maxminq.experiments.config import RunSpec, SweepConfig

    settings = [
        {"algorithm": "maxmin", "n": n, "step_size": lr, "steps": 1_500_000, "runs": 4}
        for n in (2, 4, 6, 8, 10)
        for lr in (0.1234, 0.1237)
    ]
    (row,) = _settings_rows(_records(settings))
    assert row[:3] == ["demo", "10", "4"]
    assert row[3] == (
        "algorithm: maxmin; n: 2, 4, 6, 8, 10; step_size: 0.1234, 0.1237; steps: 1,500,000"
    )

    def config(scale: str, runs: list[dict]) -> SweepConfig:
        specs = [RunSpec(f"r{i}", "toy_mdp", s, "demo") for i, s in enumerate(runs)]
        return SweepConfig("demo", "toy_mdp", scale, Path("demo.yaml"), runs=specs)

    quick = config("quick", [{**s, "steps": 300} for s in settings])
    paper = config("paper", settings)
    # the paper column names the same values in the same words
    assert paper_difference(quick, paper) == "steps: 1,500,000"
    assert "steps: 1,500,000" in row[3]
    # and neither rounds two settings into one (the paper column's %g did at 7 digits)
    one = config("quick", [{"lr": 0.1, "runs": 4}])
    two = config("paper", [{"lr": 0.1234567, "runs": 4}, {"lr": 0.1234571, "runs": 4}])
    assert (
        paper_difference(one, two) == "2 settings x 4 runs (here 1 x 4); lr: 0.1234567, 0.1234571"
    )


def test_the_negative_mu_overestimation_claim_says_when_the_estimate_is_still_falling() -> None:
    """At mu = -0.1 the second-half Q(A, Left) sits above mu while it is still coming down
    from its start (over 5,000 episodes Q-learning's ends below mu): the claim's evidence
    now says so when the runs' last tenth lies below the tenth of episodes just past the
    middle at 95%, and only then. The verdict is unchanged (the same mean-vs-truth rule)."""
    from maxminq.analysis import claims as C

    def claim(toy: pd.DataFrame) -> C.Claim:
        (found,) = [c for c in C.toy_claims(toy) if c.text.startswith("Q-learning overest")]
        return found

    falling = claim(_toy_rows(-0.1, -0.02, -0.08))  # second half: -0.05 .. -0.08
    assert falling.status == C.SUPPORTED
    assert falling.evidence.startswith("second-half Q(A,Left) of Q-learning")
    # the last tenth (episodes 18, 19) against the second half's first (episodes 10, 11):
    # 8 episodes at a slope of -0.06 / 19
    found = re.search(r"; still falling: its last tenth of episodes ([0-9.]+) ± ", falling.evidence)
    assert found is not None and float(found.group(1)) == pytest.approx(8 * 0.06 / 19, abs=1e-3)
    assert falling.evidence.endswith(
        "below the tenth of episodes just past the middle (mean ± SE of the runs' change)"
    )
    flat = claim(_toy_rows(-0.1, -0.05, -0.05))
    rising = claim(_toy_rows(-0.1, -0.09, -0.05))
    assert flat.status == rising.status == C.SUPPORTED
    assert "still falling" not in flat.evidence + rising.evidence
    assert "still falling" not in claim(_toy_rows(-0.1, -0.02, -0.08, runs=2)).evidence
    positive = claim(_toy_rows(0.1, 0.2, 0.14))  # B is visited at mu > 0: no such note
    assert "still falling" not in positive.evidence


def test_the_reports_bias_caption_says_how_a_g_of_ones_own_acts(tmp_path: Path) -> None:
    # The bias-vs-N figure plots Q(A, Left) as each agent acts on it; its caption listed the
    # library's operators only, so a report of a sweep with 'my_ops:median_q' did not say
    # which Q(A, Left) its curve is (the mean over its N tables).
    import pandas as pd

    from maxminq.analysis import figures
    from maxminq.analysis import tables as T

    def toy(algorithms: list[str]) -> pd.DataFrame:
        return pd.DataFrame([
            {"mu": 0.1, "algorithm": a, "n": 2, "run": r, "episode": e, "p_left": 0.5,
             "distance": 0.1, "q_a_left": 0.1 * r}
            for a in algorithms for r in range(2) for e in range(1, 11)
        ])  # fmt: skip

    def caption(df: pd.DataFrame) -> str:
        made = figures.classic_figures(T.Tables(toy=df), tmp_path)
        return next(f.caption for f in made if f.name == "toy_mdp_bias_vs_n")

    own = caption(toy(["maxmin", "my_ops:median_q"]))
    assert "a G of your own (my_ops:median_q): the mean over its N tables" in own
    assert "G of your own" not in caption(toy(["maxmin", "ensemble"]))


def test_paper_difference_names_the_paper_scales_size_and_each_setting_it_changes() -> None:
    common = {"agent": "dqn", "n": 1, "gamma": 0.99, "checkpoint_every": 100}
    quick = _config(
        "quick",
        [
            {**common, "lr": 1e-4, "steps": 3000, "seeds": [0, 1], "max_episode_steps": 500},
            {**common, "agent": "maxmin-dqn", "n": 6, "lr": 3e-4, "steps": 3000, "seeds": [0, 1],
             "max_episode_steps": 500},
        ],
    )  # fmt: skip
    seeds = list(range(20))
    paper = _config(
        "paper",
        [
            {**common, "agent": agent, "n": n, "lr": lr, "steps": 3_500_000, "seeds": seeds,
             "checkpoint_every": 50_000}
            for agent, n in (("dqn", 1), ("maxmin-dqn", 6))
            for lr in (1e-5, 1e-4, 3e-4)
        ],
    )  # fmt: skip
    # agent, n and gamma agree; checkpoint_every changes no result; max_episode_steps is
    # left at its default at paper scale
    assert RP.paper_difference(quick, paper) == (
        "6 settings x 20 seeds (here 2 x 2); lr: 1e-05, 0.0001, 0.0003; "
        "max_episode_steps: unset; steps: 3,500,000"
    )
    assert RP.paper_difference(quick, quick) == ""
    many = _config("paper", [{**common, "n": n, "runs": 100} for n in range(1, 11)])
    few = _config("quick", [{**common, "n": n, "runs": 50} for n in (1, 2)])
    assert (
        RP.paper_difference(few, many)
        == "10 settings x 100 runs (here 2 x 50); n: 1 .. 10 (10 values)"
    )


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_report_says_how_the_paper_scale_differs(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_toy.yaml").write_text(TINY_TOY)
    out = tmp_path / "out"
    argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "tiny_toy"]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    meta = json.loads((out / "reproduce.json").read_text())
    expected = "2 settings x 5,000 runs (here 2 x 8); episodes: 1,000"
    assert [c.get("paper") for c in meta["configs"]] == [expected]
    md = (out / "report.md").read_text()
    head = next(line for line in md.splitlines() if line.startswith("| config |"))
    assert head.endswith(f"| {R.PAPER_COLUMN} |")
    row = next(line for line in md.splitlines() if line.startswith("| tiny_toy |"))
    assert row.endswith(f"| {expected} |")
    assert R.PAPER_NOTE in md
    # the versions the runs computed with, in the header (none were recorded before)
    software = meta["software"]
    assert software["maxminq"] == maxminq.__version__
    assert software["python"] == platform.python_version()
    assert software["numpy"] == np.__version__ and software["pandas"] == pd.__version__
    line = next(line for line in md.splitlines() if line.startswith("Software"))
    recorded = "Software (as the reproduction recorded it)"
    assert line.startswith(f"{recorded}: maxminq {maxminq.__version__}")
    assert f", numpy {np.__version__}," in line


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_without_a_paper_comparison_has_no_such_column(tmp_path: Path) -> None:
    write_store(tmp_path, {"toy_mdp": toy_results(runs=4, episodes=10)})
    (tmp_path / "reproduce.json").write_text(
        json.dumps({"scale": "paper", "configs": [{"name": "toy_mdp", "run_seconds": 2.0}]})
    )
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    assert "\n| toy_mdp | 8 |" in md
    assert R.PAPER_COLUMN not in md and R.PAPER_NOTE not in md


def test_tabular_tables_list_the_algorithms_in_the_figures_legend_order() -> None:
    toy = toy_results(runs=3, episodes=10)
    _, rows, _ = R._toy_table(toy)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (mu, alg, n)
        for mu in ("+0.1", "-0.1")
        for alg, n in (("Q-learning", "1"), ("Double Q", "2"), ("Maxmin Q", "2"), ("Maxmin Q", "8"))
    ]
    mc = T.mountain_car_summary(mc_results(runs=3), reps=20)
    _, rows = R._mc_table(T.mountain_car_best(mc))
    assert [(r[0], r[1]) for r in rows] == [
        (s2, alg)
        for s2 in ("0", "50")
        for alg in ("Q-learning", "Double Q", "Averaged Q", "Maxmin Q")
    ]


def test_theorem_1_evidence_names_the_m_it_simulated(tmp_path: Path) -> None:
    rows = []
    for m in (1, 8, 100):  # maxminq theory simulates a few M of 1..m_max
        for n in (1, 2, 3):
            bias = 1.0 / n - 0.01 * m
            rows.append(
                {"M": m, "N": n, "expected_bias": bias, "mc_bias": bias, "mc_bias_se": 0.01}
            )
    pd.DataFrame(rows).to_csv(tmp_path / "bias.csv", index=False)
    claim = C.theory_claims(tmp_path)[0]
    assert claim.status == C.SUPPORTED
    assert "Monte Carlo (9 cells, M = 1, 8, 100)" in claim.evidence
    many = pd.Series(range(1, 13))
    assert C._simulated_m(many) == "M = 1, 2, ..., 12 (12 values)"


def test_deep_captions_say_how_many_seeds_and_steps_a_curve_is_over(tmp_path: Path) -> None:
    episodes = pd.DataFrame(
        {
            "env_id": ["A"] * 5 + ["B"] * 2,
            "agent": ["dqn"] * 7,
            "n": [1] * 7,
            "lr": [1e-3] * 7,
            "run_id": ["a", "a", "a", "a", "a", "b", "b"],
            "seed": [0, 0, 1, 2, 3, 0, 1],
            "steps": [3000] * 5 + [2000] * 2,
            "step": [10, 20, 10, 10, 10, 10, 10],
        }
    )
    assert F.runs_text(episodes) == " 2 to 4 seeds per setting, 2,000 to 3,000 steps each."
    one = episodes[episodes["env_id"] == "B"].drop(columns="steps")  # steps unknown: as logged
    assert F.runs_text(one) == " 2 seeds per setting, 10 steps each."
    tables = T.classify(deep_results(seeds=3, lrs=(1e-3,)))
    figures = F.make_figures(tables, tmp_path)
    deep = [f for f in figures if f.name.startswith("deep_")]
    assert {f.name for f in deep} >= {"deep_learning_curves", "deep_sensitivity"}
    for figure in deep:
        assert figure.caption.endswith(" 3 seeds per setting, 1,000 steps each."), figure.name


def test_sensitivity_caption_says_when_an_agent_has_a_single_step_size() -> None:
    summary = pd.DataFrame(
        {
            "env_id": ["Catcher-v0"] * 3 + ["Pixelcopter-v0"] * 2,
            "agent": ["dqn", "dqn", "maxmin-dqn", "dqn", "maxmin-dqn"],
            "lr": [1e-3, 1e-4, 1e-4, 1e-4, 1e-4],
        }
    )
    assert F._single_step_size_note(summary) == (
        " A single step size (one point, no sensitivity shown): Maxmin DQN on Catcher, DQN on "
        "Pixelcopter, Maxmin DQN on Pixelcopter."
    )
    assert "Every agent here ran at a single step size" in F._single_step_size_note(summary[2:])
    assert F._single_step_size_note(summary[:2]) == ""


def test_mountain_car_curve_captions_say_how_many_runs(tmp_path: Path) -> None:
    figures = F.classic_figures(T.classify({"mc": mc_results(runs=3)}), tmp_path)
    captions = {f.name: f.caption for f in figures}
    assert "mean over 3 runs with one standard error" in captions["mountain_car_curves_sigma2_50"]
    assert "mean over 3 runs." in captions["mountain_car_curves_all"]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_quick_note_does_not_call_the_theory_reduced_nor_the_deep_curves_learning(
    tmp_path: Path,
) -> None:
    """`maxminq reproduce` runs `maxminq theory` with the same options at both scales, and
    at a few thousand steps most deep agents have not learned: the note said 'the tabular,
    Mountain Car and theory results use reduced run counts' and 'Deep learning curves show
    that the agents learn'."""
    write_store(tmp_path, {"toy_mdp": toy_results(runs=4, episodes=10)})
    meta = {"scale": "quick", "configs": [{"name": "toy_mdp", "run_seconds": 2.0}]}
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    note = next(line for line in md.splitlines() if "**quick scale**" in line)
    assert "The theory part is the same at both scales." in R.QUICK_NOTE  # (a toy-only note
    # names the toy MDP alone: analysis/test_report_notes.py)
    assert "theory results use reduced" not in note and "show that the agents learn" not in note
    assert "lists how each config's paper scale differs" not in note  # no such column here
    meta["configs"][0]["paper"] = "2 settings x 5,000 runs (here 2 x 4)"
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    note = next(line for line in md.splitlines() if "**quick scale**" in line)
    assert note.endswith("'Settings and scale' lists how each config's paper scale differs.")


def test_software_line_names_each_version_and_maxminqs_git_revision(tmp_path: Path) -> None:
    software = {"maxminq": "0.1.0", "git": "abc1234, uncommitted changes", "python": "3.11.7"}
    software |= {"torch": "2.13.0+cpu"}
    assert R.software_line(software) == (
        "Software (as the reproduction recorded it): maxminq 0.1.0 (git abc1234, uncommitted "
        "changes), Python 3.11.7, torch 2.13.0+cpu."
    )
    damaged = {"scale": "quick", "software": {"maxminq": "0.1.0", "numpy": 2}}
    (tmp_path / "reproduce.json").write_text(json.dumps(damaged))
    assert R.read_meta(tmp_path)["software"] == {"maxminq": "0.1.0"}  # a number: left out


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_header_tells_the_reports_date_from_the_reproductions_end(tmp_path: Path) -> None:
    """'maxminq report DIR' rewrites the report of a reproduction that finished earlier: the
    header said 'Written <the reproduction's end>', a date the report was not written."""
    write_store(tmp_path, {"toy_mdp": toy_results(runs=4, episodes=10)})
    meta = {"scale": "quick", "started": "2020-01-02 02:00 UTC", "finished": "2020-01-02 03:04 UTC"}
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    found = re.search(
        r"Written (\d{4})-\d\d-\d\d \d\d:\d\d UTC; the reproduction finished (.*)\.", md
    )
    assert found is not None and found.group(2) == "2020-01-02 03:04 UTC"
    assert int(found.group(1)) > 2020  # now, not the reproduction's end
    (tmp_path / "reproduce.json").unlink()  # a sweep's folder: no reproduction to date
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    assert re.search(r"Written \d{4}-\d\d-\d\d \d\d:\d\d UTC\.", md)
    assert "reproduction finished" not in md


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_claim_headings_count_the_undecided_apart_from_the_failed(tmp_path: Path) -> None:
    """At quick scale every deep check lacks runs: the heading 'Deep RL (0 of 32 supported)'
    read as 32 failures."""
    write_store(tmp_path, deep_results(seeds=2))  # 2 seeds a setting: nothing decided
    report = R.build_report(tmp_path, reps=50)
    deep = [c for c in report.claims if c.section == "Deep RL"]
    assert deep and {c.status for c in deep} == {C.INSUFFICIENT}
    md = report.markdown.read_text()
    assert f"### Deep RL (0 of {len(deep)} supported, {len(deep)} with insufficient data)" in md
