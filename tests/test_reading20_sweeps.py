"""Session 20, second reading of the 'reproduce and extend' work (tests/test_journey20_sweeps.py).
Each test here failed before the fix it comes with.

1. ``holds_progress`` (``sweep --dry-run``'s 'N of them from a checkpoint', ``status``'s
   'kept for its next attempt') counted a deep run's TensorBoard logs as progress: a run
   swept with ``tensorboard: true`` and stopped before its first checkpoint was said to
   continue from a checkpoint it does not have.
2. A mistyped option's "did you mean" compared the options with their dashes, which every
   option shares: ``maxminq sweep CONFIG --steps 5`` was told "did you mean --help?".
3. ``grid: {algorithm: [q_learning, bias_corrected]}`` without bias_corrected's sigma was
   told to set 'grid.op_kwargs', which goes to q_learning too ('q_learning takes no
   parameters'); it is now told to make each algorithm a variant, as a working example.
4. The hint that runs a shipped config ('maxminq reproduce --only toy_mdp') added
   ``--configs <installed configs>`` wherever the configs read by default were not the
   package's, also where they hold the shipped file itself (a clone's ./configs, or the
   source tree's, which an editable install reads from any folder).
5. The report's box on deep runs shorter than the paper's said "the shipped configs'
   `--scale best` and `paper` train at its length"; the MinAtar configs have no best
   scale ('maxminq sweep configs/minatar_breakout.yaml --scale best' is an error).
"""

from __future__ import annotations

import pytest

from maxminq.cli import main
from maxminq.experiments.config import ConfigError, load_config
from maxminq.experiments.runner import LOGS
from maxminq.experiments.store import ResultsStore, holds_progress

OWN = """
name: own
kind: toy_mdp
fixed: {seed: 0, runs: 3, episodes: 4, algorithm: q_learning, n: 1}
grid: {mu: [0.1, -0.1]}
scales: {quick: {}}
"""


# --------------------------------------------- 1. TensorBoard logs are no checkpoint
def test_tensorboard_logs_alone_are_no_checkpoint(tmp_path, capsys) -> None:
    """Two runs left: one stopped before its first checkpoint with only its options and its
    TensorBoard events (it starts over), one with a checkpoint. Before: '2 of them from a
    checkpoint'."""
    path = tmp_path / "own.yaml"
    path.write_text(OWN)
    config = load_config(path, "quick")
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(config.runs)
        logs_only, checkpointed = (store.work_dir(r.run_id) for r in config.runs)
    (logs_only / LOGS).mkdir(parents=True)
    (logs_only / LOGS / "events.out.tfevents.1700000000.host.1.0").write_bytes(b"ev")
    (logs_only / "config.json").write_text("{}")
    (checkpointed / "checkpoint").mkdir(parents=True)
    (checkpointed / "checkpoint" / "state.pt").write_bytes(b"state")
    assert not holds_progress(logs_only)
    assert holds_progress(checkpointed)
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        f"own [quick]: 2 runs, 0 already done in {out}, 2 to run, 1 of them from a checkpoint "
        f"in {out / 'work'}: 24 episodes (dry run: nothing started)\n"
    )


# ------------------------------------------------ 2. did you mean: not --help for all
def test_an_unrelated_option_is_not_told_did_you_mean_help(tmp_path, capsys) -> None:
    """'--steps' shares only its dashes and two letters with '--help'; a real slip of a
    sweep option, or of --help, is still named."""
    config = tmp_path / "c.yaml"
    config.write_text(OWN)
    argv = ["sweep", str(config), "--out", str(tmp_path / "o")]
    said = {}
    for wrong in (["--steps", "5"], ["--wokers", "2"], ["--hlep"]):
        with pytest.raises(SystemExit) as exited:
            main([*argv, *wrong])
        assert exited.value.code == 2
        said[wrong[0]] = capsys.readouterr().err
    assert said["--steps"] == "maxminq sweep: error: unrecognized arguments: --steps 5\n"
    assert said["--wokers"].endswith("--wokers (did you mean --workers?) 2\n")
    assert said["--hlep"].endswith("--hlep (did you mean --help?)\n")
    assert not (tmp_path / "o").exists()


# ------------------------------------ 3. an algorithm on a grid axis needs its parameter
def test_a_grid_algorithm_without_its_parameter_is_told_to_be_a_variant(tmp_path) -> None:
    """The advice, followed, loads; 'grid.op_kwargs: [{sigma: 1}]' (the advice before)
    fails on q_learning."""
    head = "name: g\nkind: toy_mdp\nfixed: {seed: 0, runs: 3, episodes: 4, n: 1, mu: 0.1}\n"
    tail = "scales: {quick: {}}\n"
    path = tmp_path / "g.yaml"
    path.write_text(head + "grid: {algorithm: [q_learning, bias_corrected]}\n" + tail)
    with pytest.raises(ConfigError) as err:
        load_config(path, "quick")
    assert str(err.value) == (
        f"{path}: grid.algorithm: bias_corrected needs sigma (e.g. op_kwargs: {{sigma: 1}}); "
        "with sigma = 0 it is q_learning; an op_kwargs beside this axis would go to its other "
        "algorithms too: give each algorithm as a variant instead, e.g. variants: "
        "[{algorithm: q_learning}, {algorithm: bias_corrected, op_kwargs: {sigma: 1}}]"
    )
    advice = str(err.value).rpartition("variants: ")[2]
    path.write_text(head + f"variants: {advice}\n" + tail)
    assert [r.settings["algorithm"] for r in load_config(path, "quick").runs] == [
        "q_learning",
        "bias_corrected",
    ]
    before = "grid: {algorithm: [q_learning, bias_corrected], op_kwargs: [{sigma: 1}]}\n"
    path.write_text(head + before + tail)
    with pytest.raises(ConfigError, match="q_learning takes no parameters"):
        load_config(path, "quick")


# ------------------------------- 4. the shipped-config hint beside a copy of the shipped file
def test_the_shipped_config_hint_needs_no_configs_beside_a_copy(tmp_path, monkeypatch):
    """./configs holds the shipped toy_mdp.yaml as it is (and a study's own config): the
    hint is the plain command; an edited toy_mdp.yaml there still gets --configs."""
    from maxminq.commands import reproduce

    package = reproduce.package_configs_dir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN)
    shipped = (package / "toy_mdp.yaml").read_bytes()
    (tmp_path / "configs" / "toy_mdp.yaml").write_bytes(shipped)
    assert reproduce.run_shipped_command("toy_mdp") == "maxminq reproduce --only toy_mdp"
    (tmp_path / "configs" / "toy_mdp.yaml").write_bytes(shipped + b"# edited\n")
    assert reproduce.run_shipped_command("toy_mdp") == (
        f"maxminq reproduce --only toy_mdp --configs {package}"
    )
    (tmp_path / "configs" / "toy_mdp.yaml").unlink()
    assert reproduce.run_shipped_command("toy_mdp").endswith(f" --configs {package}")


# --------------------------------------- 5. the short-runs box: --scale best where it exists
@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_short_runs_box_names_best_only_for_configs_that_have_it(tmp_path) -> None:
    import yaml
    from test_journey20_sweeps import _paper_deep_results
    from test_report import write_store

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
