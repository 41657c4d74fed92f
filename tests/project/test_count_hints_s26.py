"""The '(write N)' of a count refused as a whole number (``maxminq`` and every script on
``maxminq.cli.OneLineParser``): a comma was dropped wherever it stood, so ``--n 2,4`` (two
values where the option takes one) was told '(write 24)' and ``--steps 1,5`` '(write 15)',
numbers nobody typed. Commas now count only as thousands separators (``1,500,000``)."""

from __future__ import annotations

import pytest

from maxminq.cli import OneLineParser


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("2,4", ""),  # two numbers, not 24
        ("1,5", ""),  # 1.5 in some locales, or 1 and 5: not 15
        ("10,20,30", ""),  # groups of other than three digits
        ("1,000", " (write 1000)"),
        ("1,500,000", " (write 1500000)"),
        ("1,000.0", " (write 1000)"),
        ("1e5", " (write 100000)"),
        ("7.0", " (write 7)"),
        ("1.5", ""),
    ],
)
def test_a_count_is_suggested_only_where_it_is_what_was_typed(capsys, given, hint) -> None:
    parser = OneLineParser(prog="script.py")
    parser.add_argument("--n", type=int, default=1)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--n", given])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err == f"script.py: error: --n: expected a whole number, got '{given}'{hint}\n"
