"""What a reader of the report and of ``maxminq compare`` / ``plot`` tripped over (session
25), each test failing before its fix."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import error_line


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_another_programs_config_json_is_no_stopped_run(tmp_path: Path, capsys, command: str):
    # A folder of another program that happens to hold a config.json (a common name): it is
    # no 'maxminq train' run that stopped, and --resume would not continue it.
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"model": "resnet50", "lr": 0.1}))
    line = error_line(capsys, [command, str(other)])
    assert line.startswith(f"maxminq {command}: error: RUN_DIR: {other} holds no finished deep run")
    assert "--resume" not in line and "not finished training" not in line
    # Not JSON at all: the same.
    (other / "config.json").write_text("epochs = 3\n")
    line = error_line(capsys, [command, str(other)])
    assert f"RUN_DIR: {other} holds no finished deep run" in line


def test_a_stopped_train_run_is_still_told_to_resume(tmp_path: Path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    cfg = {"env_id": "CartPole-v1", "agent": "dqn", "n": 1, "lr": 1e-3, "seeds": [0]}
    (run / "config.json").write_text(json.dumps(cfg))
    line = error_line(capsys, ["compare", str(run)])
    assert "has not finished training" in line and "--resume" in line
