"""Bad input on the command line, option by option: a mistyped value is one line naming the
option, exit status 2, before any work starts and before anything is written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from maxminq.cli import main
from maxminq.commands import experiment

TINY_THEORY = ["--m-max", "2", "--n-max", "2", "--samples", "10", "--variance-samples", "10"]


def _one_line(capsys) -> str:
    """The only line on stderr (and nothing on stdout)."""
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert out == ""
    return lines[0]


def _run_folder(folder: Path) -> Path:
    """A finished 'maxminq train' folder, written by hand: 2 seeds, 3 episodes, 2 metric rows."""
    folder.mkdir()
    config = {"env_id": "CartPole-v1", "agent": "maxmin-dqn", "n": 2, "lr": 1e-3, "seeds": [0, 1]}
    (folder / "config.json").write_text(json.dumps(config))
    episodes = ["seed,episode,step,return,length,return_avg100,terminated,truncated"]
    episodes += [f"{s},{e},{10 * e},10.0,10,10.0,True,False" for s in (0, 1) for e in (1, 2, 3)]
    metrics = ["seed,step,loss,q_mean,bias_mean,bias_std,bias_abs,bias_n,epsilon,steps_per_s"]
    metrics += [f"{s},{t},0.1,1.0,0.5,0.2,0.5,5,0.5,100.0" for s in (0, 1) for t in (15, 30)]
    tables = {
        "episodes": episodes,
        "tests": ["seed,episode,return,length,terminated,truncated"]
        + ["0,1,9.0,9,True,False", "1,1,11.0,11,True,False"],
        "metrics": metrics,
        "runs": ["seed,status,diverged_step,diverged_cause", "0,done,-1,", "1,done,-1,"],
    }
    from maxminq.deep.run_folder import TABLE_COLUMNS

    for name, lines in tables.items():
        assert lines[0].split(",") == list(TABLE_COLUMNS[name])  # as 'maxminq train' writes
        (folder / f"{name}.csv").write_text("\n".join(lines) + "\n")
    return folder


def _edit_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-7])  # a copy that stopped mid-line


def test_no_command_is_an_error(capsys):
    """``maxminq`` alone shows the overview on stderr with exit 2: a script whose command
    word went missing must not pass."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Run 'maxminq COMMAND --help'" in err


def test_a_value_argparse_rejects_is_one_line(capsys):
    """argparse's own type errors: one line naming the option, not the usage text first."""
    with pytest.raises(SystemExit) as exit_:
        main(["theory", "--out", "x", "--seed", "x"])
    assert exit_.value.code == 2
    assert _one_line(capsys) == "maxminq theory: error: --seed: expected a whole number, got 'x'"
    with pytest.raises(SystemExit):  # the positional is DIR, as in every message about it
        main(["report"])
    assert _one_line(capsys) == "maxminq report: error: the following arguments are required: DIR"


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["theory", "--out", "", *TINY_THEORY], "--out"),
        (["theory", "--out=", *TINY_THEORY], "--out"),
        (["experiment", "toy-mdp", "--mu", "0.1", ""], "--mu"),
        (["experiment", ""], "EXPERIMENT"),
        (["report", ""], "DIR"),
        (["plot", ""], "RUN_DIR"),
    ],
)
def test_an_empty_value_is_refused_not_read_as_the_current_folder(
    argv, named, tmp_path, monkeypatch, capsys
):
    """``Path('')`` is '.': ``--out ''`` (an unset shell variable) wrote into the working
    folder, and ``report ''`` reported on it."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert _one_line(capsys).endswith(f"error: {named}: expected a value, got an empty string")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["toy-mdp", "mountain-car"])
def test_experiment_out_under_a_file_is_refused_before_the_work(
    name, tmp_path, monkeypatch, capsys
):
    """An --out that cannot be created was a traceback once every setting had been run."""

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(experiment, "_run_tasks", no_work)
    (tmp_path / "file").write_text("x")
    argv = ["experiment", name, "--quick", "--runs", "2", "--out", str(tmp_path / "file" / "o")]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith("maxminq experiment: error: --out: cannot create the folder ")
    assert line.endswith("(Not a directory)")


def test_theory_and_sweep_out_under_a_file_is_refused_before_the_work(
    tmp_path, monkeypatch, capsys
):
    """The check every command shares (theory failed after its Monte Carlo; sweep
    --dry-run passed)."""
    import maxminq
    from maxminq.analysis import theory_plots

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(theory_plots, "bias_table", no_work)
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "o"
    toy = Path(maxminq.__file__).parent / "configs" / "toy_mdp.yaml"
    for argv in (["theory", *TINY_THEORY], ["sweep", str(toy), "--dry-run"]):
        assert main([*argv, "--out", str(out)]) == 2
        assert _one_line(capsys).endswith(
            f"--out: cannot create the folder {out} (Not a directory)"
        )


@pytest.mark.parametrize(
    "name", ["experiment", "plot", "report", "reproduce", "envs", "theory", "sweep", "status"]
)
def test_help_states_every_default(name):
    """Every option that takes a value says its default (the user must not have to guess);
    train and evaluate: deep/test_training.py."""
    import importlib

    parser = argparse.ArgumentParser()
    importlib.import_module(f"maxminq.commands.{name}").add_arguments(parser)
    parsers = [parser]
    if name == "experiment":
        parsers = list(parser._actions[-1].choices.values())  # toy-mdp, mountain-car
    for p in parsers:
        for action in p._actions:
            if action.option_strings and action.nargs != 0 and not action.required:
                assert "default" in action.help, (p.prog, action.option_strings)


@pytest.mark.parametrize(
    ("damage", "expect"),
    [
        (lambda d: _cut(d / "metrics.csv"), "metrics.csv is cut short"),
        (lambda d: (d / "episodes.csv").write_text(""), "episodes.csv is empty"),
        (lambda d: (d / "tests.csv").unlink(), "tests.csv is unreadable (No such file"),
        (lambda d: (d / "config.json").write_text('{"agent": '), "config.json is unreadable"),
        (lambda d: (d / "config.json").write_bytes(b"\xff{}"), "config.json is unreadable"),
        (lambda d: (d / "config.json").write_text("{}"), "config.json lacks the run's env_id"),
        (lambda d: _edit_config(d, lr="x", seeds=3), 'config.json is damaged: lr = "x", seeds = 3'),
        (
            lambda d: (d / "metrics.csv").write_text("a,b\n1,2\n"),
            "metrics.csv has no column 'seed'",
        ),
        (
            lambda d: (d / "episodes.csv").write_text(
                (d / "episodes.csv").read_text().replace(",10.0,True", ",ten,True", 1)
            ),
            "episodes.csv: column 'return_avg100' holds text",
        ),
    ],
)
def test_plot_refuses_a_damaged_run_folder_in_one_line(damage, expect, tmp_path, capsys):
    """A damaged file was a traceback (bad JSON, an empty or missing table) or, cut short,
    silently plotted as a shorter run."""
    run = _run_folder(tmp_path / "run")
    assert main(["plot", str(run), "--out", str(tmp_path / "ok")]) == 0  # intact: plotted
    capsys.readouterr()
    damage(run)
    assert main(["plot", str(run), "--out", str(tmp_path / "fig")]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"maxminq plot: error: RUN_DIR: {run}/") and expect in line, line
    assert not list(tmp_path.glob("fig*"))


def test_plot_out_options(tmp_path, capsys):
    run = str(_run_folder(tmp_path / "run"))
    assert main(["plot", run, "--out", str(tmp_path / "Fig.PNG")]) == 0  # as .png, any case
    assert sorted(p.name for p in tmp_path.glob("Fig*")) == ["Fig.png", "Fig.svg"]
    capsys.readouterr()
    assert main(["plot", run, "--out", str(tmp_path / "fig.pdf")]) == 2  # PNG and SVG only
    assert ".pdf" in _one_line(capsys) and not list(tmp_path.glob("fig*"))
    assert main(["plot", run, "--panels", "q,return,q"]) == 2
    assert _one_line(capsys).endswith("--panels: q given twice; give each panel once")
    (tmp_path / "file").write_text("x")
    assert main(["plot", run, "--out", str(tmp_path / "file" / "fig.png")]) == 2
    assert _one_line(capsys).endswith(f"--out: {tmp_path / 'file'} exists and is not a folder")


def test_a_folder_where_an_output_file_goes(tmp_path, capsys):
    """Found before the work (experiment: exit 2, one line naming --out; it was found only
    once the CSV was written, after the simulation) or before drawing (plot), not a
    traceback naming a temporary file."""
    out = tmp_path / "out"
    (out / "toy_mdp.csv").mkdir(parents=True)
    argv = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1"]
    argv += ["--algorithms", "q_learning", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(argv) == 2
    assert _one_line(capsys).endswith(
        f"--out: toy_mdp.csv in {out} is a folder, where the experiment writes that file"
    )
    assert [p.name for p in out.iterdir()] == ["toy_mdp.csv"]  # no temporary file left
    run = str(_run_folder(tmp_path / "run"))
    (tmp_path / "fig.svg").mkdir()
    assert main(["plot", run, "--out", str(tmp_path / "fig")]) == 2
    assert _one_line(capsys).endswith(f"--out: fig.svg in {tmp_path} is a folder, not a figure")
    assert not (tmp_path / "fig.png").exists()


def test_an_absurd_noise_variance_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    """--sigma2 1e308 ran, then the sensitivity figure's axis overflowed (a traceback)."""

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(experiment, "_run_tasks", no_work)
    argv = ["experiment", "mountain-car", "--sigma2", "0", "1e308", "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert _one_line(capsys).endswith(
        "--sigma2: every value must be finite and >= 0 and <= 1e+06, got '1e308'"
    )
    assert not (tmp_path / "o").exists()


def test_a_folder_of_the_other_command_gets_a_pointer(tmp_path, capsys):
    """'plot' on a sweep folder, 'report' on a 'train' folder: say which command reads it."""
    run = _run_folder(tmp_path / "run")
    assert main(["report", str(run)]) == 2
    assert _one_line(capsys).endswith(f"DIR: {run} is the folder of one 'maxminq train' run; "
                                      f"its curves are drawn by 'maxminq plot {run}' (report "
                                      "reads the folder of a sweep or reproduce)")  # fmt: skip
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "results.sqlite").write_bytes(b"")
    assert main(["plot", str(sweep)]) == 2
    assert f"RUN_DIR: {sweep} is a sweep folder; give the folders of its deep runs" in (
        _one_line(capsys)
    )


@pytest.mark.parametrize("name", ["toy-mdp", "mountain-car"])
def test_ctrl_c_before_anything_is_written_leaves_no_folder(name, tmp_path, monkeypatch, capsys):
    """--out is checked by creating it, then removed again: a run stopped during the work
    (Ctrl-C) leaves no empty folder that looks like a result."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "_run_tasks", interrupted)
    out = tmp_path / "new" / "out"
    assert main(["experiment", name, "--quick", "--out", str(out)]) == 130
    assert _one_line(capsys) == "maxminq experiment: interrupted"
    assert list(tmp_path.iterdir()) == []
