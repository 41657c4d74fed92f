"""The report's caution on runs of an earlier version of their config names every cause:
an edit, another scale, or an older maxminq that resolved the config's settings otherwise
(it said "(edited, or at another scale)", untrue for a config swept again after an
upgrade)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report_runs_of_earlier_configs import _folder

from maxminq.cli import main


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_caution_names_an_older_maxminq_as_a_cause(tmp_path: Path, capsys) -> None:
    _folder(tmp_path)  # 2 runs (pending, failed) in no plan of the folder
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    capsys.readouterr()
    md = " ".join((tmp_path / "report.md").read_text().split())
    assert (
        "those of an earlier version are runs that no config as last swept here makes "
        "(edited, at another scale, or resolved otherwise by an older maxminq), which "
        "rerunning the sweep does not run"
    ) in md
