"""``maxminq status RUN --verify`` (``--errors``, ``--runs``, ``--config NAME``) of one
'maxminq train' run: those options read a sweep's runs, and a train run has none of them to
verify, list or pick. The command printed the run's progress line with exit 0 as if the
option had been honoured (a script's 'status --verify' passed without checking a file); now
the one-line error naming the option, exit 2, as for any option that cannot apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maxminq.cli import main


def _stopped_train_run(folder: Path) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"env_id": "CartPole-v1", "agent": "dqn"}))
    return folder


@pytest.mark.parametrize(
    "option", [["--verify"], ["--errors"], ["--runs"], ["--config", "cartpole"]]
)
def test_a_sweep_option_with_one_train_run_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str]
) -> None:
    run = _stopped_train_run(tmp_path / "run")
    assert main(["status", str(run), *option]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"maxminq status: error: {option[0]}: reads the runs of a sweep; {run} is one "
        f"'maxminq train' run: 'maxminq status {run}' says how far it is\n"
    )


def test_without_them_the_run_is_described(tmp_path: Path, capsys) -> None:
    run = _stopped_train_run(tmp_path / "run")
    assert main(["status", str(run)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{run}: one 'maxminq train' run, not training") and err == ""
