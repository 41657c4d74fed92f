"""A mistyped option gets its "did you mean" also where argparse would have said something
else first: before the command (``maxminq --versoin``), and beside a required option that
is missing (argparse reports a missing required option before an unknown one, so
``--outt x`` read only 'required: --out')."""

from __future__ import annotations

import pytest

from maxminq.cli import main


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``maxminq ARGV``, expect exit status 2 and return its one line on stderr."""
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--versoin"], "maxminq: error: unknown option '--versoin'; did you mean --version?"),
        (["--hlep"], "maxminq: error: unknown option '--hlep'; did you mean --help?"),
        (
            ["--steps", "5", "train"],
            "maxminq: error: unknown option '--steps'; options come after the command: "
            "maxminq train --steps ...",
        ),
    ],
)
def test_an_option_before_any_command_is_named(capsys, argv, line) -> None:
    """Each said only 'the following arguments are required: COMMAND'."""
    assert _error(capsys, argv) == line


def test_a_mistyped_option_is_named_beside_a_missing_required_one(capsys) -> None:
    """The typo is why --out is missing: both are said, the typo first."""
    line = _error(capsys, ["train", "--env", "CartPole-v1", "--outt", "x"])
    assert line == (
        "maxminq train: error: unrecognized arguments: --outt (did you mean --out?); "
        "the following arguments are required: --out"
    )
    line = _error(capsys, ["train", "--stpes=5"])
    assert line == (
        "maxminq train: error: unrecognized arguments: --stpes=5 (did you mean --steps?); "
        "the following arguments are required: --env, --out"
    )


def test_an_abbreviation_argparse_takes_is_no_typo(capsys) -> None:
    """``--ou`` is argparse's abbreviation of --out, not an unknown option: only the
    missing --env is said."""
    line = _error(capsys, ["train", "--ou", "x"])
    assert line == "maxminq train: error: the following arguments are required: --env"


def test_a_sub_command_option_is_no_typo(capsys) -> None:
    """``experiment --quick`` misses its EXPERIMENT; --quick is toy-mdp's own option, not
    a typo (this module's first version said '--quick (did you mean --quick?)')."""
    line = _error(capsys, ["experiment", "--quick"])
    assert line == (
        "maxminq experiment: error: the following arguments are required: "
        "EXPERIMENT (toy-mdp or mountain-car)"
    )


def test_an_abbreviation_of_version_still_prints_it(capsys) -> None:
    """argparse takes ``--vers`` for --version: still so (the first version of the check
    above called it unknown)."""
    from maxminq import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--vers"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"maxminq {__version__}\n"
