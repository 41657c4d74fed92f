"""A second reading of session 24's theory changes: ``maxminq theory --operator`` repeated
(each with its ``--op-kwargs``), a G of one's own at one N (``module:function:N``), and the
row names of ``operator_bias.csv`` the repeated option checks for settings given twice.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from user_modules import user_module

from maxminq.errors import UsageError

MODULE = "hr2_second_ops"

OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def median_q(q):
        return np.median(q, axis=-2).max(axis=-1)


    def soft_min(q, beta=1.0):
        low = q.min(axis=-2, keepdims=True)
        w = np.exp(-beta * (q - low))
        return ((w * q).sum(axis=-2) / w.sum(axis=-2)).max(axis=-1)
    """
)


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS) as name:
        yield name


def test_one_g_over_n_and_at_one_n_is_refused_naming_both_spellings(own_ops: str) -> None:
    """``--operator my_ops:median_q --operator my_ops:median_q:3``: both give the rows
    ``my_ops:median_q`` (the N is in the N column), so one is refused; the message said
    'my_ops:median_q is given twice', which the user had not typed twice."""
    from maxminq.commands.theory import added_operators

    over_n, at_three = f"{own_ops}:median_q", f"{own_ops}:median_q:3"
    with pytest.raises(UsageError) as info:
        added_operators([over_n, at_three], None, 4, 3)
    text = str(info.value)
    assert text.startswith("--operator: ") and "\n" not in text
    assert f"{over_n} and {at_three} would write their rows under one name" in text
    assert "is given twice" not in text
    # the same spelling twice keeps its own message
    with pytest.raises(UsageError, match=f"^--operator: {over_n} is given twice"):
        added_operators([over_n, over_n], None, 4, 3)


def test_two_settings_six_digits_round_alike_are_two_row_sets(own_ops: str) -> None:
    """A soft-min at beta = 0.1234567 and at 0.1234568: the rows were named with ``:g``,
    both ``beta=0.123457``, so ``maxminq theory`` refused the pair as one setting given
    twice (and one alone had a row name that was not its setting). Each is now named with
    every digit it needs, and ``operator_bias_table`` gives each its own rows."""
    from maxminq.analysis.theory_plots import operator_bias_table
    from maxminq.commands.theory import added_operators

    soft = f"{own_ops}:soft_min"
    kwargs = ['{"beta": 0.1234567}', '{"beta": 0.1234568}']
    added, drawn = added_operators([soft, soft], kwargs, 4, 2)
    assert drawn == [] and len(added) == 2
    table = operator_bias_table(4, 2, 20, 0, extra=added)
    rows = table[table["operator"].str.startswith(soft)]
    assert sorted(set(rows["operator"])) == [f"{soft}:beta=0.1234567", f"{soft}:beta=0.1234568"]
    assert rows.groupby("operator")["N"].apply(list).tolist() == [[1, 2], [1, 2]]


@pytest.mark.parametrize(
    "text",
    ['{"step": 1' + "0" * 400 + ', "steps": 3}', '{"step": -5, "steps": 100}'],
    ids=["step-of-400-digits", "negative-step"],
)
def test_a_foreign_progress_file_is_no_report(tmp_path: Path, text: str) -> None:
    """The one reader of progress.json (``_progress.read_progress_report``) refuses files
    no run writes (a run counts from 0, in int64): a step of 400 digits was an
    OverflowError (step / steps) in ``maxminq status`` and in a sweep's percentages, a
    step of -5 'step -5 of 100 (-5%)'. Neither reads it now; a run's own report still
    reads."""
    from maxminq._progress import describe_progress, read_progress_report
    from maxminq.experiments.store import read_progress

    (tmp_path / "progress.json").write_text(text)
    assert read_progress_report(tmp_path) is None
    assert describe_progress(tmp_path) is None
    assert read_progress(tmp_path) is None
    (tmp_path / "progress.json").write_text('{"step": 250, "steps": 1000}')
    assert read_progress(tmp_path) == 0.25
    assert describe_progress(tmp_path, training=False) == "step 250 of 1,000 (25%)"
