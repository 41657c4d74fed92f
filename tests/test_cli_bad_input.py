"""Bad input on the command line, option by option: a mistyped value is one line naming the
option, exit status 2, before any work starts and before anything is written."""

from __future__ import annotations

import argparse

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
    assert _one_line(capsys) == "maxminq theory: error: argument --seed: invalid int value: 'x'"


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


def test_experiment_help_states_every_default():
    parser = argparse.ArgumentParser()
    experiment.add_arguments(parser)
    subs = parser._actions[-1].choices
    for name in ("toy-mdp", "mountain-car"):
        for action in subs[name]._actions:
            if action.nargs != 0:  # options that take a value
                assert "default" in action.help, (name, action.option_strings)
