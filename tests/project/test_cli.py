"""Command-line behaviour across commands: --help, did-you-mean, options before the
sub-command, positional names."""

from __future__ import annotations

import sys

import pytest
from sweep_configs import TOY_OWN_QUICK as OWN

from maxminq.cli import main  # noqa: E402
from maxminq.errors import UsageError


def test_top_level_help_says_what_command_is(capsys) -> None:
    """``maxminq --help`` listed ``COMMAND`` under positional arguments with nothing beside
    it; it now points to the list of commands below."""
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = capsys.readouterr().out.splitlines()
    row = lines[lines.index("positional arguments:") + 1].split()
    assert row[0] == "COMMAND" and " ".join(row[1:]) == "one of the commands below"


def test_every_did_you_mean_takes_a_case_slip_first() -> None:
    """One helper (errors.closest) behind every "did you mean": the agent check had its own
    difflib call, which found nothing for 'DQN' (no letter in common with 'dqn')."""
    from maxminq.deep import TrainConfig

    with pytest.raises(UsageError, match=r"unknown agent 'DQN'; did you mean dqn\?"):
        TrainConfig(env_id="CartPole-v1", agent="DQN").resolve()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("command", "metavar"), [("sweep", "CONFIG"), ("status", "DIR")])
def test_sweep_and_status_name_their_positional_in_upper_case(command, metavar, capsys) -> None:
    """As every other command (DIR, RUN_DIR) and the README (``maxminq status DIR``): the
    usage line, the help's list and the missing-argument error. Before: 'config', 'dir'."""
    from maxminq.cli import main

    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert text.split("\n\n")[0].split()[-1] == metavar, text  # the usage's last word
    assert f"\n  {metavar}  " in text, text
    with pytest.raises(SystemExit) as exit_:
        main([command])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(f"the following arguments are required: {metavar}"), err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--sigma2", "1", "mountain-car"],
            "--sigma2: put the sub-command first, e.g. maxminq experiment mountain-car --sigma2 1",
        ),
        (
            ["--runs", "3", "toy-mdp", "--quick"],
            "--runs: put the sub-command first, e.g. maxminq experiment toy-mdp --runs 3 --quick",
        ),
        (
            ["--quick", "toy-mdp"],  # was "--quick (did you mean --quick?)"
            "--quick: put the sub-command first, e.g. maxminq experiment toy-mdp --quick",
        ),
        (
            ["--quick", "--runs", "3"],  # was "EXPERIMENT: unknown '3'"
            "--quick: put the sub-command first, e.g. maxminq experiment toy-mdp --quick --runs 3",
        ),
        (
            ["--sigma2", "1"],  # no sub-command: the one that takes the option
            "--sigma2: put the sub-command first, e.g. maxminq experiment mountain-car --sigma2 1",
        ),
    ],
)
def test_an_option_before_the_sub_command_says_to_put_it_first(
    argv: list[str], line: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", *argv]) == 2
    out = capsys.readouterr()
    assert out.err.splitlines() == [f"maxminq experiment: error: {line}"]
    assert out.out == "" and list(tmp_path.iterdir()) == []


def test_a_mistyped_option_before_the_sub_command_is_still_told_its_spelling(capsys) -> None:
    with pytest.raises(SystemExit) as info:  # argparse's own error, as before
        main(["experiment", "--quik", "toy-mdp"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq experiment: error: unrecognized arguments: --quik (did you mean --quick?)"
    ]


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
