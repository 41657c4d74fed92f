"""Options read by maxminq's own parsers (not argparse's ``type=int``, which e388d2c made
ASCII-only) took digits of other scripts as numbers too: ``--seeds ٠-٤`` trained seeds 0 to 4,
``--workers ٢`` two workers, ``--mc-m ٢`` M = 2 (found by hS6). Each is now the option's
one-line error, exit 2, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import main

ZERO_TO_FOUR = "\u0660-\u0664"  # '٠-٤'
TWO = "\u0662"  # '٢'


@pytest.mark.parametrize(
    "argv, option",
    [
        (["train", "--env", "CartPole-v1", "--steps", "10", "--seeds", ZERO_TO_FOUR], "--seeds"),
        (["sweep", "toy_mdp", "--workers", TWO], "--workers"),
        (["reproduce", "--only", "toy_mdp", "--workers", TWO], "--workers"),
        (["theory", "--mc-m", TWO], "--mc-m"),
    ],
)
def test_digits_of_other_scripts_in_maxminqs_own_parsers_are_refused(
    argv: list[str], option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"maxminq {argv[0]}: error: {option}: expected"), err
    assert not out.exists()
