"""``load_agent(folder)`` and ``read_tables`` on the folders a user hands them: a run's
folder checked as ``maxminq evaluate`` checks it (a run still training, a run's checkpoint/,
a sweep's tabular run, a folder of run folders, a str path), a ``runs.csv`` with a header but
no rows named as a damaged run (compare and plot worked on nothing), and a model beside a
config without tables.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from line_env import StepsEnv
from run_folders import finished_run
from steps_env_runs import _model_run, _register

from maxminq.cli import main
from maxminq.deep.policy import load_agent
from maxminq.deep.train import read_tables
from maxminq.errors import UsageError


def _run(folder: Path) -> Path:
    return finished_run(folder, [(0, 1000, -1.0, 5), (1, 1000, -2.0, 5)], steps=1000,
                        train={0: (1000, 1.0), 1: (1000, 2.0)}, tests={0: 1.0, 1: 2.0})  # fmt: skip


def _not_runs(root: Path) -> dict[str, tuple[Path, str]]:
    """Folders that are no finished run, each with the start of what the error must say."""
    stopped = _run(root / "stopped")
    (stopped / "runs.csv").unlink()  # as while it trains, or once stopped
    (stopped / "checkpoint").mkdir()
    (stopped / "checkpoint" / "state.pt").write_bytes(b"a checkpoint")
    toy = root / "sweep" / "tables" / "toy_mdp-0123"  # a sweep's tabular run
    toy.mkdir(parents=True)
    (toy / "manifest.json").write_text('{"run_id": "toy_mdp-0123", "kind": "toy_mdp"}')
    (toy / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    _run(root / "runs" / "a")
    _run(root / "runs" / "b")
    return {
        "stopped": (stopped, f"{stopped} holds a run that has not finished training"),
        "checkpoint": (
            stopped / "checkpoint",
            f"{stopped / 'checkpoint'} is a run's checkpoint; give the run's folder, {stopped}",
        ),
        "toy": (toy, f"{toy} holds a sweep's toy_mdp run, not a deep agent's"),
        "folders": (root / "runs", f"{root / 'runs'} holds no run itself but 2 run folders"),
    }


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_a_runs_table_of_a_header_alone_is_a_damaged_run(command, tmp_path, capsys) -> None:
    """It read as a finished run of no seeds: compare and plot went on with nothing."""
    run = _run(tmp_path / "run")
    assert len(read_tables(run)["runs"]) == 2  # whole: read as before
    (run / "runs.csv").write_text("seed,status,diverged_step\n")
    expected = f"RUN_DIR: {run / 'runs.csv'} has a header but no rows (one per seed): the run "
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        read_tables(run, "RUN_DIR")
    out = ["--out", str(tmp_path / "fig.png")] if command == "plot" else []
    assert main([command, str(run), *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"maxminq {command}: error: {expected}"), err
    assert "did not finish writing it, or the file is damaged" in err
    assert not (tmp_path / "fig.png").exists()


def test_load_agent_names_a_folder_as_the_command_does(tmp_path, capsys) -> None:
    """load_agent said '.../model.pt not found; it is written when maxminq train finishes a
    run' of each (of a run's checkpoint/ folder and of a folder of runs too)."""
    for key, (folder, expected) in _not_runs(tmp_path).items():
        with pytest.raises(UsageError) as info:
            load_agent(str(folder))
        assert str(info.value).startswith(f"RUN_DIR: {expected}"), (key, str(info.value))
        assert main(["evaluate", str(folder)]) == 2
        assert capsys.readouterr().err == f"maxminq evaluate: error: {info.value}\n", key


@pytest.mark.parametrize("value", [None, 5, b"runs/a", ""])
def test_load_agent_of_no_folder_names_run_dir(value) -> None:
    """None and 5 were TypeErrors; '' looked in the current folder."""
    with pytest.raises(UsageError, match="^RUN_DIR: expected a path"):
        load_agent(value)


def test_a_model_beside_a_config_without_tables_is_loaded(tmp_path, capsys) -> None:
    """model.pt and config.json without runs.csv (the two files one copies to share a trained
    agent; a run whose last tables could not be written: model.pt is written before them) was
    refused as 'a run that has not finished training', though model.pt is all evaluate reads
    (a run that trains or was stopped has none: it is removed as a run starts)."""
    run = _model_run(tmp_path / "shared", _register(StepsEnv))
    (run / "config.json").write_text("{}")
    assert load_agent(run).seeds == [0]
    argv = ["evaluate", str(run), "--episodes", "1", "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err


def test_check_run_folder_takes_a_str_as_load_agent_does(tmp_path) -> None:
    """It is public (deep.policy.__all__) but a str folder was a TypeError from '/'."""
    from maxminq.deep.policy import check_run_folder

    missing = tmp_path / "missing"
    with pytest.raises(UsageError, match=f"^RUN_DIR: {re.escape(str(missing))} does not exist$"):
        check_run_folder(str(missing))
    check_run_folder(str(_model_run(tmp_path / "run", _register(StepsEnv))))  # no error
