"""Code written once where it had been written twice, and the two copies disagreed.

Each test pins what the one remaining copy does where the two used to differ."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "text",
    [
        '{"step": Infinity, "steps": 10}',  # 'maxminq status': OverflowError; a sweep: 100%
        '{"step": "40", "steps": "400"}',  # status: 'step 40 of 400'; a sweep: nothing
        '{"step": true, "steps": 4}',  # status: 'step 1 of 4 (25%)'; a sweep: 25%
        '{"step": 3, "steps": 0}',
        "[40, 400]",
        '{"step": 3',
    ],
)
def test_both_readers_of_progress_json_refuse_what_no_run_writes(tmp_path, text) -> None:
    """'maxminq status' of one run (``describe_progress``) and a sweep's percentages
    (``store.read_progress``) each parsed progress.json: the one said a foreign file's
    string step was step 40, the other said nothing; an infinite step was a traceback in
    the one and 100% in the other. Now one reader: neither reads it."""
    from maxminq._progress import describe_progress
    from maxminq.experiments.store import read_progress

    (tmp_path / "progress.json").write_text(text)
    assert describe_progress(tmp_path) is None
    assert read_progress(tmp_path) is None


def test_both_readers_of_progress_json_read_a_runs_report_alike(tmp_path) -> None:
    """A report as ProgressReport writes it (step and steps ints), or with them as whole
    floats: the same step of the same steps in both."""
    from maxminq._progress import describe_progress
    from maxminq.experiments.store import read_progress

    for text in ('{"step": 40, "steps": 400}', '{"step": 40.0, "steps": 400.0}'):
        (tmp_path / "progress.json").write_text(text)
        assert describe_progress(tmp_path) == "step 40 of 400 (10%)"
        assert read_progress(tmp_path) == 0.1


def test_a_table_cell_writes_a_setting_as_the_settings_list_does() -> None:
    """The report wrote a split setting's value twice over: the settings list 'steps:
    500,000, 1,500,000' and the table's cells '1500000' (an int column) or '1.5e+06' (the
    same column with a gap, floats), so one value read three ways in one report. Now the
    cells are the settings list's texts, '–' where a run left the setting unset."""
    import numpy as np

    from maxminq.analysis import report as R

    for value, text in [
        (np.int64(1_500_000), "1,500,000"),
        (1_500_000.0, "1,500,000"),
        (np.float64(1_234_567.0), "1,234,567"),
        (np.float64(0.9999999), "0.9999999"),
        (np.int64(2), "2"),
        (2.0, "2"),
        (np.bool_(True), "True"),
        ("hard", "hard"),
    ]:
        assert R._cell_text(value, "steps") == text, value
        assert R.setting_text(value, "steps") == text, value
    assert R._cell_text(float("nan"), "steps") == "–"
    assert R._cell_text(None, "steps") == "–"
    assert R._cell_text("", "op_kwargs") == "–"
    assert R._cell_text('{"c":10.0}', "op_kwargs") == "c=10"
