"""Session 20, h3: a researcher reproducing and extending the paper's experiments without a
cluster (own options, own sweep configs, interrupt, status, resume, report, reproduce).

1. ``maxminq reproduce --only NAME`` in a folder whose ``./configs`` holds a study's own
   configs: a config it does not name (one without the chosen ``--scale``) no longer stops
   it, and a NAME of a shipped config that ``./configs`` lacks is told how to run the
   shipped one (``--configs``), instead of a list of the folder's names alone.
2. ``maxminq status``: a queued run's scratch folder holding nothing its next attempt
   continues from (the temporary of a write killed before its rename, progress.json, the
   options) is not said to be "kept for its next attempt".
3. ``maxminq experiment toy-mdp --sigma2 1`` (Mountain Car's option) said "unrecognized
   arguments: --sigma2 (did you mean --sigma2?)"; it now names the command that takes it.
4. A misspelt config key or setting says which one it most likely meant, as a misspelt
   agent or environment id does.
5. The report of a folder with deep runs on the paper's games far shorter than the paper's
   (a study's own config, or a shipped one swept at its quick scale by ``maxminq sweep``,
   which records no scale) says so, as a quick-scale reproduction's note does; before,
   such a report judged "Maxmin DQN >= DQN" on 6,000-step runs without a word on length.
6. A quick-scale report's note names only the parts the folder has: ``reproduce --only
   toy_mdp,theory`` spoke of Mountain Car's episodes and deep runs it did not have.
7. A variant ``{algorithm: bias_corrected}`` without its sigma was told 'fixed.op_kwargs:
   ... (e.g. bias_corrected:sigma=1; config: op_kwargs: {sigma: 1}) ... (required setting
   missing)': a place that gives sigma to every algorithm, and the command line's syntax.
   The error now names the variant and the config's form only.
8. A bias check undecided because every seed ran all its steps without a probe in the
   second half (a short study at the default bias_every) was followed by the report's
   advice to decide 'need 3' checks with more seeds, which would be left out alike.
9. ``maxminq sweep configs/toy_mdp.yaml`` (and ``report`` of a ``maxminq experiment``
   folder) pointed to 'maxminq reproduce --only toy_mdp' as running the shipped config from
   any folder; in a folder with a ``./configs`` of one's own that command reads those and
   refuses toy_mdp. The hint now adds the ``--configs`` it then needs.
10. ``maxminq experiment --workers K`` (and ``reproduce``) with K above the cores started K
    processes without a word, as ``sweep`` warns of; now all three warn alike.
11. ``maxminq sweep --dry-run`` after Ctrl-C says how many of the runs left continue from a
    checkpoint (before: '4 to run', as if all started over); ``maxminq status`` names the
    checkpoint folder of a run a killed sweep left 'running' too, as it does a queued run's.
12. A Mountain Car study of Weighted Double Q at c = 1 and c = 10 (``op_kwargs`` as a
    variant axis): the report dropped the operator from every figure (they showed only the
    runs without op_kwargs) and called the two settings 'runs of different experiments
    pooled'. The figures now draw each c as its own series; only the claims keep to the
    runs without operator parameters, and the report says so.
13. A sweep's warnings from its runs spoke the command line's options ('--max-episode-steps
    100 with --gamma 0.99: ...') to a user who wrote a config; now its keys, as its errors.
14. ``maxminq status`` of the folder ``maxminq experiment`` wrote said only "no
    results.sqlite here; is this a sweep output folder?"; it now says whose output it is,
    as ``maxminq report`` does.
15. ``maxminq experiment --episodes 1e3`` now says how to write it ('(write 1000)'), as
    ``train``'s counts and every argparse-checked count do.
"""

from __future__ import annotations

import argparse

import pytest

from maxminq.cli import main
from maxminq.commands import reproduce
from maxminq.experiments.config import ConfigError, RunSpec, load_config
from maxminq.experiments.store import WORKER_FILE, ResultsStore

OWN = """
name: {name}
kind: toy_mdp
fixed: {{seed: 0, runs: 3, episodes: 4, algorithm: q_learning, n: 1}}
grid: {{mu: [0.1]}}
scales: {{{scale}: {{}}}}
"""


def _reproduce_args(**given: object) -> argparse.Namespace:
    """``maxminq reproduce``'s parsed options (its defaults), with ``given`` over them."""
    parser = argparse.ArgumentParser()
    reproduce.add_arguments(parser)
    args = parser.parse_args([])
    for key, value in given.items():
        setattr(args, key, value)
    return args


# ------------------------------------------------------ 1. reproduce --only with ./configs
def test_only_runs_its_config_beside_one_without_the_scale(tmp_path, monkeypatch) -> None:
    """A study's configs/ holds one config with a quick scale and one with only its own
    ('tiny'). Before, ``--only mine`` stopped at the other one: 'configs/other.yaml:
    scales: no scale 'quick''."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="quick"))
    (tmp_path / "configs" / "other.yaml").write_text(OWN.format(name="other", scale="tiny"))
    _, _, configs, with_theory, _ = reproduce.plan(_reproduce_args(only="mine", out=tmp_path / "o"))
    assert [c.name for c in configs] == ["mine"]
    assert not with_theory


def test_only_a_shipped_name_missing_from_own_configs_says_how(tmp_path, monkeypatch, capsys):
    """``--only toy_mdp`` where ./configs (read instead of the shipped configs) has no
    toy_mdp: the error names the shipped config and the --configs that runs it. Before, the
    folder's other config stopped it first (no 'quick' scale), and once that was fixed the
    error listed only the folder's names, as if maxminq had no toy_mdp."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="tiny"))
    assert main(["reproduce", "--only", "toy_mdp", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    package = reproduce.package_configs_dir()
    assert err.startswith("maxminq reproduce: error: --only: unknown name(s) toy_mdp; ")
    assert "expected comma-separated names from: mine, theory; " in err
    assert f"add --configs {package} to run the shipped toy_mdp" in err
    assert "no scale 'quick'" not in err  # the shipped name: the other config is beside it
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_only_an_unknown_name_also_names_a_config_that_did_not_load(
    tmp_path, monkeypatch, capsys
) -> None:
    """A name that is no file's may be the name inside a config that did not load at this
    scale: the error says which one did not, as it is not read otherwise."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text(OWN.format(name="study", scale="tiny"))
    assert main(["reproduce", "--only", "study", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--only: unknown name(s) study; expected comma-separated names from: a, theory" in err
    assert "; not read at --scale quick: configs/a.yaml: scales: no scale 'quick'" in err
    assert "--configs" not in err  # no shipped config of that name


# --------------------------------------------------------- 2. status: what a folder keeps
@pytest.mark.parametrize(
    "leftover",
    [
        [".worker.json.k2j4h_8x.tmp"],  # the worker killed while writing its file
        ["config.json", "progress.json", ".progress.json.a1b2c3d4.tmp"],
        ["config.json", "checkpoint/.state.pt.zz9y8x7w.tmp"],  # killed in its first save
    ],
)
def test_status_does_not_call_a_folder_without_progress_kept(tmp_path, capsys, leftover) -> None:
    """Before: 'OUT/work/RUN is kept for its next attempt' for each of these folders, which
    hold nothing a run continues from (it starts over without a checkpoint)."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec("t-1", "toy_mdp", {"x": 1}, "c")])
        store.mark_running("t-1")
        store.mark_pending("t-1", "interrupted (the sweep stopped)")
        work = store.work_dir("t-1")
    for name in leftover:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("{}")
    assert main(["status", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[-1] == "pending  t-1 (attempts 1): interrupted (the sweep stopped)"


def test_status_still_names_a_folder_with_a_checkpoint_kept(tmp_path, capsys) -> None:
    """The other side: a checkpoint file (beside a killed write's temporary and the worker's
    file) is what the next attempt continues from."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec("t-1", "toy_mdp", {"x": 1}, "c")])
        store.mark_running("t-1")
        store.mark_pending("t-1", "interrupted (the sweep stopped)")
        work = store.work_dir("t-1")
    (work / "checkpoint").mkdir(parents=True)
    (work / "checkpoint" / "state.pt").write_bytes(b"state")
    (work / ".worker.json.k2j4h_8x.tmp").write_text("{}")
    (work / WORKER_FILE).write_text("{}")
    assert main(["status", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"pending  t-1 (attempts 1): interrupted (the sweep stopped); {work} is kept for its "
        "next attempt"
    )


# ------------------------------------------------- 3. another sub-command's option, named
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["experiment", "toy-mdp", "--quick", "--sigma2", "1"],
            "--sigma2 (an option of 'maxminq experiment mountain-car' only) 1",
        ),
        (
            ["experiment", "mountain-car", "--quick", "--mu", "0.1", "--gama", "1"],
            "--mu (an option of 'maxminq experiment toy-mdp' only) 0.1 --gama (did you mean "
            "--gamma?) 1",
        ),
    ],
)
def test_an_option_of_the_other_experiment_names_its_command(tmp_path, capsys, argv, said) -> None:
    """Before: '--sigma2 (did you mean --sigma2?)', the option itself as the fix."""
    with pytest.raises(SystemExit) as info:  # argparse's exit
        main([*argv, "--out", str(tmp_path / "o")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == f"maxminq experiment: error: unrecognized arguments: {said}\n"
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------- 4. misspelt keys: did you mean
@pytest.mark.parametrize(
    ("edit", "where", "meant"),
    [
        (("fixed: {{seed", "fixd: {{seed"), "fixd: unknown key", "fixed"),
        (("scales:", "scale:"), "scale: unknown key", "scales"),
        (("runs: 3", "run: 3"), "fixed.run: unknown setting", "runs"),
        (
            ("algorithm: q_learning", "algoritm: q_learning"),
            "fixed.algoritm: unknown setting",
            "algorithm",
        ),  # fmt: skip
    ],
)
def test_a_misspelt_key_says_what_it_likely_meant(tmp_path, edit, where, meant) -> None:
    """Before: the key and the list of every allowed one (17 for a toy MDP run), without
    the likely one."""
    path = tmp_path / "c.yaml"
    path.write_text(OWN.replace(*edit).format(name="c", scale="quick"))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}; expected one of ")
    assert message.endswith(f"; did you mean {meant}?")


def test_a_deep_setting_misspelt_says_what_it_likely_meant(tmp_path) -> None:
    """The deep settings (TrainConfig's fields) too."""
    path = tmp_path / "d.yaml"
    path.write_text(
        "name: d\nkind: deep\nfixed: {env_id: CartPole-v1, agent: dqn, steps: 300, "
        "seeds: [0], eval_episode: 2}\nscales: {quick: {}}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: fixed.eval_episode: unknown setting; expected one of ")
    assert message.endswith("; did you mean eval_episodes?")


# --------------------------------------------- 5. the report: deep runs shorter than paper's
PAPER_IDS = {"Catcher-v0": "maxminq/Catcher-v0", "Pixelcopter-v0": "maxminq/Pixelcopter-v0"}


def _paper_deep_results(pixelcopter_steps: int = 1000) -> dict:
    """Synthetic deep tables (test_analysis_tables.deep_results, 1,000 steps per run) on the
    paper's Catcher and Pixelcopter ids; Pixelcopter's runs at ``pixelcopter_steps``."""
    from test_analysis_tables import deep_results

    results = {}
    for name, df in deep_results(seeds=3, lrs=(1e-3,)).items():
        df = df.assign(env_id=df["env_id"].map(PAPER_IDS), config="my_study")
        df.loc[df["env_id"] == "maxminq/Pixelcopter-v0", "steps"] = pixelcopter_steps
        results[name] = df
    return results


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
    from test_report import write_store

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


# -------------------------------------------- 6. the quick note: only the parts there are
@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_quick_note_of_a_toy_only_folder_speaks_of_the_toy_mdp_alone(tmp_path) -> None:
    """``reproduce --only toy_mdp`` at quick scale (no theory folder, no other runs)."""
    import json

    from test_analysis_tables import toy_results
    from test_report import write_store

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


# ------------------------------------------- 7. an operator's parameter: where it is missing
def test_a_variant_without_its_operators_parameter_is_named(tmp_path) -> None:
    """Before: 'fixed.op_kwargs: bias_corrected needs
    sigma (e.g. bias_corrected:sigma=1; config: op_kwargs: {sigma: 1}); with sigma = 0 it is
    q_learning (required setting missing)'."""
    path = tmp_path / "bc.yaml"
    path.write_text(
        "name: bc\nkind: toy_mdp\nfixed: {seed: 0, runs: 2, episodes: 3, mu: 0.1}\n"
        "variants:\n  - {algorithm: q_learning, n: 1}\n  - {algorithm: bias_corrected, n: 1}\n"
        "scales: {quick: {}}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == (
        f"{path}: variants[1].op_kwargs: bias_corrected needs sigma (e.g. op_kwargs: "
        "{sigma: 1}); with sigma = 0 it is q_learning"
    )


# ------------------------------------- 8. 'need 3' for want of probes: no advice of seeds
@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_bias_checks_short_of_probes_are_not_told_to_add_seeds(tmp_path) -> None:
    """3 seeds per setting, 1,000 steps, bias_every 1,000: no metrics interval starts in
    the second half, so both bias checks per game are undecided, and their evidence says
    to set bias_every. Before, the section ended 'Those marked 'need 3' are decided by at
    least 3 runs (seeds) ... or the same configs swept with more seeds into this folder'."""
    from test_analysis_tables import deep_results

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


# ------------------------------ 9. the hint to run a shipped config, beside ./configs
def test_the_shipped_config_hint_adds_configs_beside_ones_own(tmp_path, monkeypatch, capsys):
    """The hint's command is run as given: it must do what it says."""
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="quick"))
    assert main(["sweep", "configs/toy_mdp.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err
    package = reproduce.package_configs_dir()
    command = f"maxminq reproduce --only toy_mdp --configs {package}"
    assert f"'{command}' runs it from any folder" in err
    argv = shlex.split(command)[1:]  # the hint's command (less the program), parsed
    parser = argparse.ArgumentParser()
    reproduce.add_arguments(parser)
    args = parser.parse_args([*argv[1:], "--out", str(tmp_path / "o")])
    _, _, configs, _, _ = reproduce.plan(args)
    assert [c.name for c in configs] == ["toy_mdp"]
    # the report of an experiment's folder gives the same command
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "settings.json").write_text('{"experiment": "toy-mdp"}')
    assert main(["report", str(tmp_path / "exp")]) == 2
    assert f"('{command}' runs it into one)" in capsys.readouterr().err


# ------------------------------------------------ 10. more workers than cores: a warning
def test_experiment_warns_of_more_workers_than_cores(tmp_path, monkeypatch, capsys) -> None:
    """One core here (os.cpu_count patched), two settings, --workers 2: warned once every
    value is checked, as the work starts (here stopped there: the work is not the test's)."""
    from maxminq.commands import experiment
    from maxminq.errors import UsageError

    def stop(*args: object) -> None:
        raise UsageError("stopped before the work")

    monkeypatch.setattr("os.cpu_count", lambda: 1)
    monkeypatch.setattr(experiment, "_run_tasks", stop)
    for name, only in (("toy-mdp", ["--mu", "0.1"]), ("mountain-car", ["--sigma2", "0"])):
        argv = ["experiment", name, "--quick", *only, "--algorithms", "q_learning", "double_q",
                "--workers", "2", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
        assert main(argv) == 2
        assert capsys.readouterr().err.splitlines() == [
            "maxminq experiment: warning: --workers 2 is more than this machine's 1 cores: "
            "each worker is a process with its own memory, and they slow each other down",
            "maxminq experiment: error: stopped before the work",
        ]
    # one setting runs in this process: no warning, whatever --workers says
    argv = ["experiment", "toy-mdp", "--quick", "--mu", "0.1", "--algorithms", "q_learning",
            "--workers", "2", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == "maxminq experiment: error: stopped before the work\n"


# ------------------------------------------ 11. dry run: the runs that continue, counted
def test_dry_run_counts_the_runs_that_continue_from_a_checkpoint(tmp_path, capsys) -> None:
    """Two runs left: one with a checkpoint in its scratch folder, one with only a killed
    write's temporary (which starts over)."""
    path = tmp_path / "own.yaml"
    path.write_text(OWN.replace("mu: [0.1]", "mu: [0.1, -0.1]").format(name="own", scale="quick"))
    config = load_config(path, "quick")
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(config.runs)
        first, second = (store.work_dir(r.run_id) for r in config.runs)
    (first / "checkpoint").mkdir(parents=True)
    (first / "checkpoint" / "state.pt").write_bytes(b"state")
    second.mkdir()
    (second / ".config.json.abcd1234.tmp").write_text("{")
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        f"own [quick]: 2 runs, 0 already done in {out}, 2 to run, 1 of them from a checkpoint "
        f"in {out / 'work'}: 24 episodes (dry run: nothing started)\n"
    )


def test_status_names_the_checkpoint_a_killed_sweeps_run_keeps(tmp_path, capsys) -> None:
    """A sweep SIGKILLed mid-run leaves its run 'running' (stale); one with a checkpoint,
    one without. Before: '(interrupted; will be re-run)' for both."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec(f"t-{i}", "toy_mdp", {"x": i}, "c") for i in (1, 2)])
        store.mark_running("t-1")
        store.mark_running("t-2")
        work = store.work_dir("t-1")
    (work / "checkpoint").mkdir(parents=True)
    (work / "checkpoint" / "state.pt").write_bytes(b"state")
    (store.work_dir("t-2")).mkdir()
    (store.work_dir("t-2") / "progress.json").write_text("{}")
    assert main(["status", str(out)]) == 0
    stale = [line for line in capsys.readouterr().out.splitlines() if line.startswith("stale")]
    assert [line.split(" (", 1)[1] for line in stale] == [
        f"interrupted; will be re-run; {work} is kept for its next attempt)",
        "interrupted; will be re-run)",
    ]


# ------------------------------ 12. an operator's parameters swept: drawn, not "pooled"
@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_an_operators_parameters_are_drawn_apart_not_pooled(tmp_path, monkeypatch, capsys):
    import pandas as pd
    from test_report import _store_runs

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


# -------------------------------------- 13. a run's warnings, in the config's words
def test_a_runs_warning_names_config_keys_in_a_sweep() -> None:
    """What a deep run's worker warned of, as the sweep process shows it (once)."""
    import warnings

    from maxminq.deep.bias_probes import CutEpisodesWarning
    from maxminq.experiments.runner import _Result, _show_warnings

    said = (
        "--max-episode-steps 100 with --gamma 0.99: only episodes that terminate give bias "
        "numbers; --env my:Env-v0"
    )
    result = _Result(None, None, "h", 1, 0.0, warned=[(CutEpisodesWarning, said)])
    shown: set = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _show_warnings(result, shown)
        _show_warnings(result, shown)  # a second run with the same warning: not again
    assert [str(w.message) for w in caught] == [
        "max_episode_steps 100 with gamma 0.99: only episodes that terminate give bias "
        "numbers; env_id my:Env-v0"
    ]
    assert caught[0].category is CutEpisodesWarning


# ----------------------------------------- 14. status of an experiment's folder: whose
def test_status_of_an_experiment_folder_names_the_command(tmp_path, capsys) -> None:
    out = tmp_path / "toy"
    out.mkdir()  # what 'maxminq experiment toy-mdp' leaves (its settings.json names it)
    (out / "settings.json").write_text('{"experiment": "toy-mdp", "runs": 300}')
    (out / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    assert main(["status", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"maxminq status: error: DIR: {out} holds the output of 'maxminq experiment toy-mdp', "
        "whose figures are drawn there already; status reads the folder of 'maxminq sweep' or "
        "'maxminq reproduce' ("
    )
    assert err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["settings.json", "toy_mdp.csv"]


# ---------------------------------------------------- 15. a count written as 1e3
@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--episodes", "1e3", "--episodes: expected a whole number >= 1, got '1e3' (write 1000)"),
        ("--runs", "2.5", "--runs: expected a whole number >= 1, got '2.5'"),
        ("--seed", "7.0", "--seed: expected a whole number >= 0, got '7.0' (write 7)"),
        ("--runs", "0.0", "--runs: expected a whole number >= 1, got '0.0'"),  # no '(write 0)'
    ],
)
def test_a_count_written_as_a_float_is_told_how_to_write_it(
    tmp_path, capsys, option, value, said
) -> None:
    argv = ["experiment", "toy-mdp", "--quick", option, value, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"maxminq experiment: error: {said}\n"
    assert not (tmp_path / "o").exists()
