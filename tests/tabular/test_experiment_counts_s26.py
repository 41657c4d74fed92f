"""``maxminq experiment``'s counts (read by its own check, not argparse's ``type=int``) follow
the rules of every other count of the command line: ASCII digits only (``int`` reads '١٠٠' as
100, which the command ran), and a hint only where the number meant is clear ('2,4' is two
numbers: it was told '(write 24)')."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.cli import main


@pytest.mark.parametrize(
    "command, option, value, hint",
    [
        ("toy-mdp", "--runs", "\u0661\u0660\u0660", " (write 100)"),  # '١٠٠'
        ("mountain-car", "--episodes", "\u0663", " (write 3)"),  # '٣'
        ("toy-mdp", "--runs", "2,4", ""),
        ("mountain-car", "--max-steps", "1,5", ""),
        ("toy-mdp", "--runs", "1,000", " (write 1000)"),
    ],
)
def test_counts_of_other_scripts_or_with_commas(
    command: str, option: str, value: str, hint: str, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    assert main(["experiment", command, option, value, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"maxminq experiment: error: {option}: expected a whole number >= 1, got {value!r}{hint}\n"
    )
    assert not out.exists()
