"""Options read with ``type=int`` or ``type=float`` take ASCII digits only: Python's ``int``
and ``float`` read digits of every script ('١٠٠' is 100, '١.٥' is 1.5), so such a value,
which nobody types on purpose, ran the command with a number the user never saw written."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import OneLineParser, main

ARABIC_100 = "\u0661\u0660\u0660"  # '١٠٠', which int() reads as 100
ARABIC_ONE_AND_A_HALF = "\u0661.\u0665"  # '١.٥', which float() reads as 1.5


@pytest.mark.parametrize(
    "argv, option",
    [
        (["theory", "--m-max", ARABIC_100], "--m-max"),
        (["theory", "--samples", ARABIC_100], "--samples"),
        (["train", "--env", "CartPole-v1", "--steps", ARABIC_100], "--steps"),
        (["train", "--env", "CartPole-v1", "--lr", ARABIC_ONE_AND_A_HALF], "--lr"),
    ],
)
def test_digits_of_other_scripts_are_refused_naming_the_option(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--out", str(out)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"maxminq {argv[0]}: error: {option}: expected a"), err
    assert not out.exists()


def test_a_script_of_ones_own_refuses_them_too(capsys: pytest.CaptureFixture[str]) -> None:
    parser = OneLineParser(prog="mine")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0.5)
    for argv in (["--runs", ARABIC_100], ["--rate", ARABIC_ONE_AND_A_HALF]):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args(argv)
        assert exit_info.value.code == 2
        assert capsys.readouterr().err.startswith(f"mine: error: {argv[0]}: expected a")


def test_ascii_forms_that_int_and_float_take_still_parse() -> None:
    parser = OneLineParser(prog="mine")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--rate", type=float)
    args = parser.parse_args(["--runs", "1_000", "--rate=-2.5e-3"])
    assert (args.runs, args.rate) == (1000, -0.0025)
    args = parser.parse_args(["--runs", " +7 ", "--rate", "3"])
    assert (args.runs, args.rate) == (7, 3.0)
