"""maxminq experiment's real-valued options (read by the tabular checks, not argparse's
``type=float``) take ASCII digits only, as every ``type=float`` option does since e388d2c:
``float`` reads '١.٥' as 1.5 and '٠.١' as 0.1, so '--epsilon ٠.١' or '--mu ١.٥' ran the
experiment with a number nobody typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import main
from maxminq.tabular.agent import check_float_list, check_probability, check_real

ONE_AND_A_HALF = "\u0661.\u0665"  # '١.٥'
A_TENTH = "\u0660.\u0661"  # '٠.١'


@pytest.mark.parametrize(
    "argv, said",
    [
        (["toy-mdp", "--epsilon", A_TENTH],
         f"--epsilon: expected a number in [0, 1], got {A_TENTH!r}"),
        (["toy-mdp", "--gamma", A_TENTH], f"--gamma: expected a number in [0, 1], got {A_TENTH!r}"),
        (["toy-mdp", "--mu", ONE_AND_A_HALF], f"--mu: expected numbers, got {ONE_AND_A_HALF!r}"),
        (["toy-mdp", "--step-size", A_TENTH], f"--step-size: expected numbers, got {A_TENTH!r}"),
        (["mountain-car", "--sigma2", ONE_AND_A_HALF],
         f"--sigma2: expected numbers, got {ONE_AND_A_HALF!r}"),
        (["mountain-car", "--step-sizes", A_TENTH],
         f"--step-sizes: expected numbers, got {A_TENTH!r}"),
        (["toy-mdp", "--algorithms", f"bias_corrected:sigma={A_TENTH}"],
         f"--algorithms: expected key=number in 'bias_corrected:sigma={A_TENTH}', "
         f"got 'sigma={A_TENTH}'"),
    ],
)  # fmt: skip
def test_reals_of_other_scripts_are_refused_naming_the_option(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    small = ["--runs", "1", "--episodes", "1", "--workers", "1", "--no-progress"]  # if run
    assert main(["experiment", *argv, *small, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"maxminq experiment: error: {said}\n"
    assert not out.exists()


def test_the_checks_still_take_ascii_text_and_numbers() -> None:
    assert check_probability(" 0.1 ", "--epsilon") == 0.1
    assert check_float_list(["1.5", -2, 0.25], "--mu", positive=False, nonzero=True) == [
        1.5,
        -2.0,
        0.25,
    ]
    assert check_real("1e-3", "--x") == 0.001
    with pytest.raises(ValueError, match="expected a finite number"):
        check_real(ONE_AND_A_HALF, "--x")
