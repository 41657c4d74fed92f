"""What a reader of the report and of ``maxminq compare`` / ``plot`` tripped over (session
25), each test failing before its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from analysis_results import deep_results, mc_results, toy_results, write_store
from helpers import error_line

from maxminq.analysis import report as R
from maxminq.analysis import style


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_another_programs_config_json_is_no_stopped_run(tmp_path: Path, capsys, command: str):
    # A folder of another program that happens to hold a config.json (a common name): it is
    # no 'maxminq train' run that stopped, and --resume would not continue it.
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model": "resnet50", "lr": 0.1}))
    line = error_line(capsys, [command, str(other)])
    assert line.startswith(f"maxminq {command}: error: RUN_DIR: {other} holds no finished deep run")
    assert "--resume" not in line and "not finished training" not in line
    # Not JSON at all: the same.
    (other / "config.json").write_text("epochs = 3\n")
    line = error_line(capsys, [command, str(other)])
    assert f"RUN_DIR: {other} holds no finished deep run" in line


def test_a_stopped_train_run_is_still_told_to_resume(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    cfg = {"env_id": "CartPole-v1", "agent": "dqn", "n": 1, "lr": 1e-3, "seeds": [0]}
    (run / "config.json").write_text(json.dumps(cfg))
    line = error_line(capsys, ["compare", str(run)])
    assert "has not finished training" in line and "--resume" in line


def _deep_note(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("Final performance = "))


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_deep_table_says_how_its_best_settings_were_chosen_and_among_how_many(tmp_path: Path):
    # deep_results: per environment DQN, Double DQN and Averaged DQN (K = 2) at 2 step sizes,
    # Maxmin DQN at 2 step sizes x N = 2, 4: 2, 2, 2 and 4 settings to pick from.
    write_store(tmp_path, deep_results(seeds=2))
    note = _deep_note(R.build_report(tmp_path, reps=50).markdown.read_text())
    assert "the highest mean final performance" in note
    assert "Settings per agent and environment here: DQN 2, Double DQN 2, Averaged DQN 2, " \
        "Maxmin DQN 4." in note  # fmt: skip


@pytest.mark.usefixtures("unrendered_figures")
def test_a_best_of_one_setting_is_said_to_be_no_choice(tmp_path: Path):
    # As at quick scale: each agent at one step size (and Maxmin at one N).
    results = deep_results(seeds=2, lrs=(1e-3,))
    results = {
        k: df[~((df["agent"] == "maxmin-dqn") & (df["n"] == 4))] for k, df in results.items()
    }
    write_store(tmp_path, results)
    note = _deep_note(R.build_report(tmp_path, reps=50).markdown.read_text())
    assert "Here each agent ran one setting per environment: nothing was chosen." in note


@pytest.mark.usefixtures("unrendered_figures")
def test_mountain_car_table_says_how_its_best_step_size_was_chosen(tmp_path: Path):
    write_store(tmp_path, {"mountain_car": mc_results(runs=3)})  # step sizes 0.01 and 0.04
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    table_end = md.index("\n\n", md.index("| σ² | algorithm |"))
    after = md[table_end:].lstrip().splitlines()[0]
    assert after.startswith("Best step size: per algorithm, N / K and σ², the step size whose")
    assert "fewest mean last-episode steps" in after
    assert after.endswith("among the step sizes this folder ran: 0.01, 0.04.")


def _svg_colours(svg: Path) -> set[str]:
    return set(re.findall(r"stroke: (#[0-9a-f]{6})", svg.read_text()))


def test_published_figure_colours_a_gs_settings_as_plot_does(tmp_path: Path):
    # A G at two parameter settings among the published runs: 'the figures draw the runs as
    # maxminq plot --panels return,bias does', but the report coloured them by the agent
    # (generalized-dqn's one colour for both), plot by the G with a shade per setting.
    from run_folders import generalized_run

    from maxminq.analysis.runs import plot_runs

    pub = tmp_path / "pub" / "cartpole"
    pub.mkdir(parents=True)
    runs = [
        generalized_run(pub / f"wdq-c{c}", "weighted_double_q", {"c": c}, returns=(r, r + 2))
        for c, r in ((1.0, 10.0), (10.0, 20.0))
    ]
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    R.build_report(theory, reps=100, published=R.published_runs(tmp_path / "pub"))
    drawn = _svg_colours(theory / "figures" / "published" / "cartpole.svg")
    plot_runs(runs, tmp_path / "plot.png", panels="return,bias")
    wdq = style.color("weighted_double_q")
    shades = {style.shade(wdq, 0, 2), style.shade(wdq, 1, 2)}
    assert len(shades) == 2 and shades <= _svg_colours(tmp_path / "plot.svg")
    assert shades <= drawn


def test_plot_shades_one_agents_runs_at_several_n(tmp_path: Path):
    # Maxmin DQN at N = 2, 4 and 8 (docs/runs' Pixelcopter): drawn in one green, told apart by
    # dashes alone, three noisy return curves read as one tangle; the report's varying-N
    # figure shades them lighter to darker by N. DQN beside them keeps its colour.
    from run_folders import finished_run

    from maxminq.analysis.runs import param_shades, plot_runs

    folders = []
    for name, agent, n in (("m8", "maxmin-dqn", 8), ("dqn", "dqn", 1), ("m2", "maxmin-dqn", 2),
                           ("m4", "maxmin-dqn", 4)):  # fmt: skip
        folders.append(
            finished_run(
                tmp_path / name,
                [(0, 1000, -1.0, 5)],
                steps=1000,
                agent=agent,
                train={0: (1000, float(n))},
                tests={0: 1.0},
                extra={"n": n},
            )  # fmt: skip
        )
    cfgs = [{"agent": a, "n": n} for a, n in (("maxmin-dqn", 8), ("dqn", 1), ("maxmin-dqn", 2),
                                              ("maxmin-dqn", 4))]  # fmt: skip
    assert param_shades(cfgs) == [(2, 3), (0, 1), (0, 3), (1, 3)]  # by N, as given
    plot_runs(folders, tmp_path / "plot.png", panels="return")
    green = style.color("maxmin")
    drawn = _svg_colours(tmp_path / "plot.svg")
    assert {style.shade(green, k, 3) for k in range(3)} <= drawn
    assert style.color("dqn") in drawn and green not in drawn
    # A G at several parameter settings keeps one shade per setting, whatever its N.
    own = [{"agent": "generalized-dqn", "operator": "ensemble", "n": n, "op_kwargs": kw}
           for n, kw in ((2, {"c": 1}), (4, {"c": 1}), (2, {"c": 5}))]  # fmt: skip
    assert param_shades(own) == [(0, 2), (0, 2), (1, 2)]


@pytest.mark.parametrize("command", ["report", "status"])
def test_a_sweeps_tables_folder_or_run_given_as_dir_names_the_sweep(
    tmp_path: Path, capsys, command: str
):
    # A sweep of deep runs on two environments: its tables/ was said to hold 'maxminq train'
    # runs, with 'maxminq compare' of two runs picked across environments (which compare
    # refuses); one deep run of it was 'one maxminq train run, no sweep'.
    write_store(tmp_path, deep_results(seeds=2))
    tables = tmp_path / "tables"
    line = error_line(capsys, [command, str(tables)])
    assert line == (
        f"maxminq {command}: error: DIR: {tables} is the tables/ folder of the sweep in "
        f"{tmp_path}; 'maxminq {command} {tmp_path}' reads the sweep"
    )
    run = sorted(p.parent for p in tables.glob("*/runs.csv"))[0]
    line = error_line(capsys, [command, str(run)])
    assert line == (
        f"maxminq {command}: error: DIR: {run} is one run of the sweep in {tmp_path}; "
        f"'maxminq {command} {tmp_path}' reads the sweep, 'maxminq plot {run}' draws the run, "
        f"'maxminq compare {run}' scores it"
    )


def test_a_sweeps_tabular_run_given_as_dir_is_not_sent_to_plot(tmp_path: Path, capsys):
    write_store(tmp_path, {"mountain_car": mc_results(runs=2)})
    run = sorted((tmp_path / "tables").iterdir())[0]
    line = error_line(capsys, ["report", str(run)])
    assert line.endswith(f"DIR: {run} is one run of the sweep in {tmp_path}; 'maxminq report "
                         f"{tmp_path}' reads the sweep")  # fmt: skip


@pytest.mark.usefixtures("unrendered_figures")
def test_figure_captions_write_greek_as_the_figures_and_tables_do(tmp_path: Path):
    # The classic figures write μ, σ², γ·μ and ε, the tables and claims μ, σ², ± and ε;
    # the captions under the figures wrote mu, sigma^2, gamma mu, eps-greedy and +-.
    results = {"toy_mdp": toy_results(runs=4, episodes=10), "mountain_car": mc_results(runs=3)}
    results |= deep_results(seeds=2)
    write_store(tmp_path, results)
    md = R.build_report(tmp_path, reps=50).markdown.read_text()
    captions = [
        line for i, line in enumerate(md.splitlines()) if md.splitlines()[i - 2].startswith("![")
    ]
    assert len(captions) >= 8
    text = "\n".join(captions)
    for ascii_name in ("sigma^2", "eps-greedy", "+-", "value mu", "gamma^"):
        assert ascii_name not in text, ascii_name
    assert "true value μ" in text and "reward variance σ²" in text and "ε-greedy" in text
    assert "± one standard error" in text
    assert "**Mountain Car learning curves, σ² = 50 (Fig. 3b)**" in md


def _two_seed_runs(tmp_path: Path, seeds: int) -> list[Path]:
    from run_folders import finished_run

    return [
        finished_run(
            tmp_path / agent,
            [(s, 1000, -1.0, 5) for s in range(seeds)],
            steps=1000,
            agent=agent,
            train={s: (1000, 1.0 + s) for s in range(seeds)},
            tests={s: 10.0 + 3 * s for s in range(seeds)},
        )  # fmt: skip
        for agent in ("dqn", "ddqn")
    ]


@pytest.mark.parametrize("seeds", [3, 4])
def test_compare_says_an_iqm_of_fewer_than_4_seeds_is_the_mean(tmp_path: Path, capsys, seeds):
    # trim_mean(x, 0.25) cuts int(n / 4) seeds from each end: none of 3. Test returns 10, 13,
    # 16 (, 19): the IQM is their mean 13 for 3 seeds, the middle two's mean 14.5 for 4.
    from maxminq.cli import main

    assert main(["compare", *map(str, _two_seed_runs(tmp_path, seeds))]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("DQN "))
    assert (" 13.00 [" if seeds == 3 else " 14.50 [") in row
    said = "with fewer than 4 seeds the IQM trims none"
    assert (said in " ".join(out.split())) == (seeds == 3)


@pytest.mark.usefixtures("unrendered_figures")
@pytest.mark.parametrize("seeds", [2, 4])
def test_report_says_an_iqm_of_fewer_than_4_runs_is_the_mean(tmp_path: Path, seeds: int):
    write_store(tmp_path, deep_results(seeds=seeds))
    note = _deep_note(R.build_report(tmp_path, reps=50).markdown.read_text())
    said = "A row of fewer than 4 runs has no quarter to trim: its IQM is its mean."
    assert (said in note) == (seeds == 2)


@pytest.mark.usefixtures("unrendered_figures")
@pytest.mark.parametrize("seeds", [3, 4])
def test_published_section_says_an_iqm_of_fewer_than_4_seeds_is_the_mean(tmp_path, seeds):
    root = tmp_path / "pub" / "cartpole"
    root.mkdir(parents=True)
    _two_seed_runs(root, seeds)
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    report = R.build_report(theory, reps=100, published=R.published_runs(tmp_path / "pub"))
    md = report.markdown.read_text()
    assert ("with fewer than 4 seeds it trims none: the mean" in md) == (seeds == 3)


def test_best_rule_of_no_scored_setting_claims_no_choice():
    # Every setting's mean NaN (no run scored): no best row, so no 'each agent ran one
    # setting per environment: nothing was chosen' either.
    import numpy as np
    import pandas as pd

    summary = pd.DataFrame(
        {"env_id": ["E", "E"], "agent": ["dqn", "dqn"], "n": [1, 1], "lr": [1e-3, 1e-4]}
        | {"mean": [np.nan, np.nan]}
    )
    assert R.deep_best_rule(summary) == ""
    summary.loc[0, "mean"] = 5.0
    assert R.deep_best_rule(summary).endswith("Here each agent ran one setting per environment: "
                                              "nothing was chosen. ")  # fmt: skip
