"""The report's caption of operator_bias.png names the rows ``maxminq theory --operator``
added and how they are drawn: a library operator with other parameters dotted on its closed
form, a G of one's own as joined points (or a dashed level at one N) with no closed form.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from user_modules import user_module

from maxminq.cli import main

MODULE = "ht25_caption_ops"

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


def _caption(out: Path) -> str:
    from maxminq.analysis.report import theory_caption

    return theory_caption(out, "operator_bias")


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_caption_names_the_added_operators(own_ops: str, tmp_path: Path) -> None:
    """It said nothing of them: the figure's legend had curves the caption did not explain
    (joined points without a line under them, a dotted level)."""
    out = tmp_path / "out"
    args = ["--operator", f"{own_ops}:mean_q", "--op-kwargs", "{}"]
    args += ["--operator", "weighted_double_q", "--op-kwargs", '{"c": 10}']
    assert main([*THEORY, "--out", str(out), *args]) == 0
    caption = _caption(out)
    assert (
        f"Added with 'maxminq theory --operator': {own_ops}:mean_q, weighted_double_q:c=10."
        in caption
    )
    assert "dotted, on its closed form" in caption and "has no closed form" in caption


@pytest.mark.usefixtures("unrendered_figures")
def test_the_caption_of_the_library_rows_alone_is_unchanged(tmp_path: Path) -> None:
    from maxminq.analysis.report import THEORY_FIGURES

    out = tmp_path / "out"
    assert main([*THEORY, "--out", str(out)]) == 0
    assert _caption(out) == THEORY_FIGURES["operator_bias"][1]
