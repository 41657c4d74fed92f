"""The report's notes and cautions: deep runs shorter than or off the paper's, checks left
undecided and why, quick-scale notes, rows pooled alike, a diverged run's causes."""

from __future__ import annotations

from types import SimpleNamespace as R

import numpy as np
import pandas as pd
import pytest
from analysis_results import _paper_deep_results, toy_results
from sweep_configs import toy_store

from maxminq.analysis.report import pooled_differences, pooled_summary
from maxminq.cli import main


def test_shorter_than_paper_names_each_game_with_both_lengths() -> None:
    """The paper's lengths are the registry's (Catcher 3.5 M, Pixelcopter 2 M steps)."""
    from maxminq.analysis import tables as T
    from maxminq.analysis.report import _shorter_than_paper

    short = _shorter_than_paper(T.classify(_paper_deep_results()))
    assert short == [
        "Catcher 1,000 steps (the paper: 3,500,000)",
        "Pixelcopter 1,000 steps (the paper: 2,000,000)",
    ]
    at_length = _shorter_than_paper(T.classify(_paper_deep_results(2_000_000)))
    assert at_length == ["Catcher 1,000 steps (the paper: 3,500,000)"]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_a_custom_sweep_report_says_its_deep_runs_are_short(tmp_path) -> None:
    """A folder a sweep wrote (scale 'custom sweep'): the note is in the report."""
    from analysis_results import write_store

    from maxminq.analysis.report import build_report

    write_store(tmp_path, _paper_deep_results())
    build_report(tmp_path, reps=20)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Scale: **custom sweep**" in text
    assert (
        "> **Deep runs shorter than the paper's:** Catcher 1,000 steps (the paper: 3,500,000); "
        "Pixelcopter 1,000 steps (the paper: 2,000,000). Their curves, final performance and "
        "deep claims describe runs of this length, not the paper's Fig. 4"
    ) in text


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_quick_note_of_a_toy_only_folder_speaks_of_the_toy_mdp_alone(tmp_path) -> None:
    """``reproduce --only toy_mdp`` at quick scale (no theory folder, no other runs)."""
    import json

    from analysis_results import toy_results, write_store

    from maxminq.analysis.report import build_report

    write_store(tmp_path, {"toy_mdp": toy_results(runs=4, episodes=10)})
    (tmp_path / "reproduce.json").write_text(json.dumps({"scale": "quick"}))
    md = build_report(tmp_path, reps=20).markdown.read_text(encoding="utf-8")
    (note,) = [line for line in md.splitlines() if "**quick scale**" in line]
    assert note == (
        "> This report was produced at **quick scale**: the toy MDP results are reduced-scale "
        "(fewer runs than the paper). Run `maxminq reproduce --scale paper` for the full "
        "reproduction."
    )


def test_the_quick_note_of_every_part_is_unchanged() -> None:
    """With all four parts (``make demo``'s report) the note is the one it always was; each
    part's sentence comes only with that part."""
    from maxminq.analysis.report import QUICK_NOTE, quick_note

    assert (
        QUICK_NOTE
        == quick_note(True, True, True, True)
        == (  # the words it always had
            "This report was produced at **quick scale**: the toy MDP and Mountain Car results use "
            "fewer runs than the paper (Mountain Car also fewer episodes and settings), and the "
            "deep-RL panels are reduced-scale runs (far fewer steps, seeds and settings than the "
            "paper). The deep runs check that every agent trains end to end: a few thousand steps "
            "are too few for most of them to learn much, so their curves, final-performance "
            "numbers and deep claims are not a reproduction of Fig. 4. The theory part is the "
            "same at both scales. Run `maxminq reproduce --scale paper` for the full reproduction."
        )
    )
    deep_theory = quick_note(False, False, True, True)
    assert deep_theory.startswith(
        "This report was produced at **quick scale**: the deep-RL panels are reduced-scale "
        "runs (far fewer steps, seeds and settings than the paper). The deep runs check"
    )
    assert "toy MDP" not in deep_theory and "Mountain Car" not in deep_theory
    assert "The theory part is the same at both scales." in deep_theory
    assert "Fig. 4" not in quick_note(True, True, False, False)


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_bias_checks_short_of_probes_are_not_told_to_add_seeds(tmp_path) -> None:
    """3 seeds per setting, 1,000 steps, bias_every 1,000: no metrics interval starts in
    the second half, so both bias checks per game are undecided, and their evidence says
    to set bias_every. Before, the section ended 'Those marked 'need 3' are decided by at
    least 3 runs (seeds) ... or the same configs swept with more seeds into this folder'."""
    from analysis_results import deep_results

    from maxminq.analysis.report import build_report

    deep = deep_results(seeds=3, lrs=(1e-3,))
    results = {k: v.assign(bias_every=1000) for k, v in deep.items()}
    results["metrics"] = results["metrics"][results["metrics"]["step"] == 1000]
    report = build_report(tmp_path, results=results, reps=20)
    undecided = [c for c in report.claims if "measured estimation bias" in c.text]
    assert len(undecided) == 4
    assert all("set bias_every to at most steps / 2" in c.evidence for c in undecided)
    text = report.markdown.read_text(encoding="utf-8")
    assert "Those marked 'need 3'" not in text
    # the other side: 2 seeds per setting are told that 3 would decide them
    two = build_report(tmp_path / "two", results=deep_results(seeds=2, lrs=(1e-3,)), reps=20)
    assert "Those marked 'need 3'" in two.markdown.read_text(encoding="utf-8")


def test_rows_pooling_alike_are_one_caution_line() -> None:
    base = {"algorithm": "maxmin", "n": 2, "sigma2": 0.0, "seed": 0, "runs": 5}
    records = [
        R(kind="mountain_car", settings=base | {"step_size": step, "episodes": episodes})
        for step in (0.01, 0.02, 0.04, 0.08)
        for episodes in (20, 30)
    ]
    # and one row that pools for another reason
    records += [
        R(kind="mountain_car", settings=base | {"n": 4, "step_size": 0.01, "gamma": gamma})
        for gamma in (0.5, 1.0)
    ]
    assert len(pooled_differences(records)) == 5  # one per row, as before
    assert pooled_summary(records) == [
        "mountain_car, 4 rows (algorithm maxmin, n 2, sigma2 0.0, step_size 0.01; algorithm "
        "maxmin, n 2, sigma2 0.0, step_size 0.02; algorithm maxmin, n 2, sigma2 0.0, "
        "step_size 0.04; and 1 more): 2 run ids pooled in each; episodes 20 vs 30",
        "mountain_car (algorithm maxmin, n 4, sigma2 0.0, step_size 0.01): 2 run ids pooled; "
        "gamma 0.5 vs 1.0",
    ]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_report_says_why_a_check_is_undecided(tmp_path, capsys) -> None:
    """A toy sweep of one's own without Double Q: ``maxminq report`` printed its Double Q
    checks as 'insufficient data' alone, which reads as 'run more seeds'; report.md said
    why. The printed line now says it too."""
    toy = toy_results(runs=2, episodes=10)
    toy_store(tmp_path, toy[toy.algorithm != "double_q"], (10,))
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    undecided = [line for line in printed if line.startswith("  insufficient data")]
    assert (
        "  insufficient data Double Q underestimates Q(A, Left) = μ (μ = +0.1, where it hurts) "
        "(no Double Q runs at μ = +0.1 in this folder)"
    ) in undecided
    assert (
        "  insufficient data Q-learning overestimates Q(A, Left) = μ (μ = +0.1) (2 runs (need 3))"
    ) in undecided


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_report_prints_that_deep_runs_are_short_or_off_the_paper(tmp_path, capsys) -> None:
    """A tiny Catcher study (1,500 steps) printed 'supported  Maxmin DQN >= DQN on Catcher'
    on the terminal with no word that its runs are a 2,000th of the paper's; the box saying
    so (and the one on environments the paper did not study) was in report.md alone."""
    from analysis_results import deep_results, write_store

    ids = {"Catcher-v0": "maxminq/Catcher-v0", "Pixelcopter-v0": "CartPole-v1"}
    results = {
        name: df.assign(env_id=df["env_id"].map(ids), config="my_study")
        for name, df in deep_results(seeds=1, lrs=(1e-3,)).items()
    }
    results["tests"] = results["tests"].assign(eval_eps=0.05)  # 5 test episodes per seed
    write_store(tmp_path, results)
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        "  caution, deep runs shorter than the paper's (the deep claims describe runs of this "
        "length): Catcher 1,000 steps (the paper: 3,500,000)"
    ) in printed
    assert (
        "  note, environments outside the paper (the deep checks carry its statements over "
        "to them): CartPole-v1"
    ) in printed
    # and the deep table's note says how many test episodes these runs played, at which ε
    # (it said '100 in the paper, fewer at quick scale', of a study at no scale)
    text = " ".join((tmp_path / "report.md").read_text(encoding="utf-8").split())
    assert (
        "mean return of the test episodes (ε = 0.05; 5 per seed here, 100 at ε = 0.01 in the paper)"
    ) in text


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_short_runs_box_names_best_only_for_configs_that_have_it(tmp_path) -> None:
    import yaml
    from analysis_results import _paper_deep_results, write_store

    from maxminq.analysis.report import build_report
    from maxminq.commands.reproduce import package_configs_dir

    with_best = sorted(
        p.stem
        for p in package_configs_dir().glob("*.yaml")
        if "best" in (yaml.safe_load(p.read_text(encoding="utf-8")).get("scales") or {})
    )
    assert with_best == ["catcher", "lunarlander", "pixelcopter"]  # no MinAtar config
    write_store(tmp_path, _paper_deep_results())
    build_report(tmp_path, reps=20)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (
        "not the paper's Fig. 4 (the shipped configs' `--scale paper` trains at its length, "
        f"as does `--scale best` of those that have it: {', '.join(with_best)})."
    ) in text
    assert "`--scale best` and `paper` train" not in text


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
