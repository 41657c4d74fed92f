"""``maxminq status DIR`` of a folder another program wrote, holding a ``config.json`` (not
of 'maxminq train': no env_id and agent) and a ``runs.csv``: it was called a finished
'maxminq train' run, exit 0, sending the user to 'maxminq plot', which refuses the folder.
It is the one-line error of any folder that is no sweep (exit 2), as without runs.csv."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maxminq.cli import main


@pytest.mark.parametrize("with_runs_csv", [False, True])
def test_another_programs_config_and_runs_csv_are_no_train_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], with_runs_csv: bool
) -> None:
    folder = tmp_path / "resnet"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"lr": 0.1, "model": "resnet18"}))
    if with_runs_csv:
        (folder / "runs.csv").write_text("epoch,loss\n1,0.5\n")
    assert main(["status", str(folder)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"maxminq status: error: DIR: {folder}: no results.sqlite here; is this a sweep output "
        "folder?\n"
    )
