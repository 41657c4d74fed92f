"""Adversarial checks of ``maxminq experiment toy-mdp``, ``experiment mountain-car`` and
``maxminq theory``: absurd option values end in one line and exit status 2 before any work,
a failed write (a full disk) names the file and leaves no outputs of another setting beside
the new ones. (Ordinary bad input, Ctrl-C and the batch independence of runs are tested in
test_cli_bad_input.py, test_toy_mdp.py, test_mountain_car.py and test_theory.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import main

HUGE = "99999999999999999999"  # above int64
TOY = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1",
       "--algorithms", "q_learning", "--workers", "1", "--no-progress"]  # fmt: skip
MC = ["experiment", "mountain-car", "--runs", "1", "--episodes", "1", "--max-steps", "30",
      "--sigma2", "10", "--step-sizes", "0.1", "--algorithms", "q_learning", "--workers", "1",
      "--no-progress"]  # fmt: skip
THEORY = ["theory", "--m-max", "4", "--n-max", "3", "--samples", "20",
          "--variance-samples", "20", "--no-progress"]  # fmt: skip


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """stderr, which must be exactly one line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(
    "base, extra, option",
    [
        (TOY, ["--runs", HUGE], "--runs"),
        (TOY, ["--runs", "100000000000"], "--runs"),
        (TOY, ["--episodes", "9223372036854775807"], "--episodes"),
        (TOY, ["--batch-size", "10000000000"], "--batch-size"),
        (TOY, ["--buffer-size", HUGE], "--buffer-size"),
        (TOY, ["--update-every", HUGE], "--update-every"),
        (TOY, ["--algorithms", "maxmin:100000000000"], "--algorithms"),
        (MC, ["--max-steps", HUGE], "--max-steps"),
        (MC, ["--episodes", "99999999999999"], "--episodes"),
        (MC, ["--buffer-size", "10000000000"], "--buffer-size"),
        (MC, ["--algorithms", f"maxmin:{HUGE}"], "--algorithms"),
        (THEORY, ["--samples", HUGE], "--samples"),
        (THEORY, ["--variance-samples", HUGE], "--variance-samples"),
    ],
)
def test_absurdly_large_values_are_one_line_before_the_work(
    base: list[str], extra: list[str], option: str, tmp_path: Path, capsys
) -> None:
    """Values beyond int64 or beyond any machine's memory were a numba or numpy traceback
    (exit status 1) once the work had started; now one line naming the option, exit 2,
    and no output folder."""
    out = tmp_path / "out"
    assert main([*base, *extra, "--out", str(out)]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"maxminq {base[0]}: error: {option}: "), line
    assert not out.exists()
