"""``describe_progress`` (``maxminq status`` of a training run) of a progress.json whose
``updated`` no clock shows (a foreign or damaged file: 1e300, -1e18, 1e18 s): it raised
OverflowError ('timestamp out of range for platform time_t') or OSError ('Value too large')
out of ``time.localtime``; such a report is read as one without its time of writing (no
speed, no time left), as a report of unreadable fields already was."""

from __future__ import annotations

import json

import pytest

from maxminq._progress import describe_progress

REPORT = {"step": 250, "steps": 1000, "steps_per_s": 50.0, "seconds_left": 15.0}


@pytest.mark.parametrize("updated", [1e300, -1e300, -1e18, 1e18])
def test_a_time_of_writing_no_clock_shows_is_left_out(tmp_path, updated) -> None:
    (tmp_path / "progress.json").write_text(json.dumps({**REPORT, "updated": updated}))
    # 250 / 1000 = 25%, and nothing said of a speed whose time is unknown
    assert describe_progress(tmp_path) == "step 250 of 1,000 (25%)"


def test_a_time_of_writing_a_clock_shows_still_gives_the_time_left(tmp_path) -> None:
    (tmp_path / "progress.json").write_text(json.dumps({**REPORT, "updated": 1.7e9}))
    said = describe_progress(tmp_path)
    assert said is not None
    assert said.startswith("step 250 of 1,000 (25%), 50 steps/s, about 15 s left as of ")
