"""``maxminq theory --operator module:function:N``: the N is a whole number in ASCII digits;
any other text after the last colon is part of the name (one line naming ``--operator``,
exit 2, nothing written), never a traceback nor another script's digit read as N.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import error_line
from user_modules import user_module

MODULE = "ht25_ops"

OWN_OPS = textwrap.dedent(
    """
    def mean_q(q):
        return q.mean(axis=-2).max(axis=-1)
    """
)

THEORY = ["theory", "--m-max", "4", "--n-max", "2", "--samples", "50"]
THEORY += ["--variance-samples", "50", "--operator-m", "3", "--no-progress"]


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS) as name:
        yield name


@pytest.mark.parametrize("n_text", ["\u00b2", "\u0661", "\u0663"])  # '²', Arabic-Indic 1 and 3
def test_a_non_ascii_digit_after_the_function_is_not_an_n(
    own_ops: str, n_text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'²'.isdigit() is True but int('²') fails: it was a ValueError traceback. int('١') is 1:
    the G ran at N = 1 as if '1' had been typed. Both now name --operator and the name."""
    out = tmp_path / "new" / "out"
    reference = f"{own_ops}:mean_q:{n_text}"
    line = error_line(capsys, [*THEORY, "--out", str(out), "--operator", reference])
    assert line.startswith("maxminq theory: error: --operator: ")
    assert f"'{reference}'" in line and f"has no 'mean_q:{n_text}'" in line
    assert not (tmp_path / "new").exists()


def test_an_ascii_n_still_runs_the_g_at_that_n_alone(own_ops: str, tmp_path: Path) -> None:
    import pandas as pd

    from maxminq.cli import main

    out = tmp_path / "out"
    assert main([*THEORY, "--out", str(out), "--operator", f"{own_ops}:mean_q: 2"]) == 0
    rows = pd.read_csv(out / "operator_bias.csv")
    assert rows.loc[rows["operator"] == f"{own_ops}:mean_q", "N"].tolist() == [2]
