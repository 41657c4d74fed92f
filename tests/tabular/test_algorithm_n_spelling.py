"""``--algorithms name:N`` of the classic experiments: N is a whole number in ASCII digits.
'²' (``str.isdigit`` is true, ``int`` fails) was a ValueError traceback, and another script's
digit ('١', Arabic-Indic one) ran Maxmin at N = 1 as if '1' had been typed; both are the
one-line --algorithms error, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import error_line

TOY = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--no-progress"]


@pytest.mark.parametrize("n_text", ["\u00b2", "\u0661", "\u0663"])  # '²', Arabic-Indic 1 and 3
def test_a_non_ascii_digit_is_not_an_n(
    n_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "out"
    token = f"maxmin:{n_text}"
    line = error_line(capsys, [*TOY, "--out", str(out), "--algorithms", token])
    assert "--algorithms: " in line and repr(token) in line
    assert not (tmp_path / "new").exists()


def test_parse_algorithm_refuses_it_in_python_too() -> None:
    from maxminq.errors import UsageError
    from maxminq.tabular.agent import parse_algorithm

    with pytest.raises(UsageError, match="--algorithms: "):
        parse_algorithm("maxmin:\u0661", {})
    assert parse_algorithm("maxmin: 3", {}) == [("maxmin", 3, {})]
