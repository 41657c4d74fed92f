"""Session 21's leftovers of the deep-run tools (h13): a damaged run table names what to do,
a folder of run folders says how to give them, a policy whose values are not finite refuses
to act instead of playing the first NaN's action, and a one-seed run's diverged note."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from run_folders import finished_run

from maxminq.analysis.runs import _diverged_note
from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.deep.run_folder import read_tables
from maxminq.errors import UsageError


def _run(folder: Path) -> Path:
    return finished_run(folder, [(0, 1000, -1.0, 5)], steps=1000,
                        train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip


# --- 1. a damaged table says what to do ------------------------------------------------------


@pytest.mark.parametrize(
    "damage, what",
    [
        (lambda p: p.write_text(""), "is empty"),
        (lambda p: p.write_bytes(p.read_bytes()[:-3]), "is cut short"),
        (lambda p: p.write_text("seed,status,diverged_step\n"), "has a header but no rows"),
    ],
)
def test_a_damaged_runs_table_says_to_copy_or_train_again(damage, what, tmp_path, capsys):
    run = _run(tmp_path / "run")
    damage(run / "runs.csv")
    assert main(["compare", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run / 'runs.csv'} {what}" in err, err
    assert err.endswith(
        "copy it again from the original, or train the run again ('maxminq train' with the "
        f"options in {run / 'config.json'}, and --overwrite)\n"
    ), err


def test_a_damaged_table_of_a_sweep_says_to_run_the_sweep_again(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    run = _run(sweep / "tables" / "deep-0123")
    (run / "config.json").unlink()  # a sweep's table folder has none
    (run / "metrics.csv").write_text("")
    expected = (
        f"RUN_DIR: {run / 'metrics.csv'} is empty; copy it again from the original, or run "
        f"the sweep again ('maxminq sweep' with its config and --out {sweep}: it reruns "
        "this run)"
    )
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}$"):
        read_tables(run, "RUN_DIR")


# --- 2. a folder of run folders: how to give them --------------------------------------------


@pytest.mark.parametrize("command", ["plot", "compare"])
def test_a_folder_of_runs_shows_the_command_taking_them(command, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    for name in ("dqn", "maxmin"):
        _run(runs / name)
    assert main([command, str(runs)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq {command}: error: RUN_DIR: {runs} holds no run itself but 2 run folders: "
        f"{runs / 'dqn'} {runs / 'maxmin'}; give them as RUN_DIRs: "
        f"'maxminq {command} {runs / 'dqn'} {runs / 'maxmin'}'\n"
    )


def test_many_run_folders_are_given_as_a_pattern_when_it_matches_them_all(tmp_path, capsys):
    runs = tmp_path / "runs"
    for env in ("cart", "lunar", "acro"):
        for agent in ("dqn", "maxmin"):
            _run(runs / env / agent)
    assert main(["plot", str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"; give them as RUN_DIRs: 'maxminq plot {runs}/*/*'\n"), err
    (runs / "cart" / "notes").mkdir()  # the pattern would now take a folder that is no run
    assert main(["plot", str(runs)]) == 2
    err = capsys.readouterr().err
    first = " ".join(str(runs / p) for p in ("acro/dqn", "acro/maxmin", "cart/dqn", "cart/maxmin"))
    assert err.endswith(f"; give them as RUN_DIRs: 'maxminq plot {first} ...'\n"), err


def test_evaluate_on_a_folder_of_runs_says_to_evaluate_one(tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    for name in ("dqn", "maxmin"):
        _run(runs / name)
    assert main(["evaluate", str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"; evaluate one of them, e.g. 'maxminq evaluate {runs / 'dqn'}'\n"), err


# --- 3. values that are not finite: no greedy action -----------------------------------------


def _agent(folder: Path, fill: float | None = None):
    """A CartPole DQN run of seed 0 recorded as done, its networks untrained, or each
    parameter set to ``fill``."""
    cfg = TrainConfig(env_id="CartPole-v1", agent="dqn", n=1, steps=100, seeds=[0]).resolve()
    net = build_net("mlp", 1, (4,), 2)
    net.init_members([torch.Generator().manual_seed(0)], 1)
    if fill is not None:
        with torch.no_grad():
            net.flat.fill_(fill)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (4,), ["done"])
    return load_agent(folder)


def test_a_nan_network_refuses_to_act_instead_of_playing_action_0(tmp_path) -> None:
    """np.argmax of [nan, nan] is 0: the seed played action 0 throughout and evaluate
    reported its returns as a policy's."""
    agent = _agent(tmp_path / "run", float("nan"))
    expected = "--seeds: seed 0's networks hold NaN or inf"
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        agent.act(np.zeros(4, np.float32))
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        agent.act(np.zeros((3, 4), np.float32), eps=0.5, rng=np.random.default_rng(0))
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        evaluate_agent(agent, [0], 1, progress=False)


def test_values_beyond_float32_refuse_to_act(tmp_path) -> None:
    agent = _agent(tmp_path / "run", 1e30)  # finite weights whose values overflow to inf
    assert not np.isfinite(agent.q_values(np.zeros(4, np.float32))).all()
    with pytest.raises(UsageError, match=r"^--seeds: seed 0's action values at this obs.*inf"):
        agent.act(np.zeros(4, np.float32))


def test_a_nan_observation_is_named(tmp_path) -> None:
    agent = _agent(tmp_path / "run")
    obs = np.array([0.0, np.nan, 0.0, 0.0], np.float32)
    with pytest.raises(ValueError, match=r"^act: obs holds nan; give a finite observation$"):
        agent.act(obs)
    assert agent.act(np.zeros(4, np.float32)) in (0, 1)  # a finite one still acts


def _two_seeds(folder: Path, status: list[str]) -> Path:
    """A CartPole DQN run of seeds 0 and 1 with ``status``, its networks untrained, and
    its runs.csv (as evaluate reads RUN_DIR)."""
    cfg = TrainConfig(env_id="CartPole-v1", agent="dqn", n=1, steps=100, seeds=[0, 1]).resolve()
    net = build_net("mlp", 2, (4,), 2)
    net.init_members([torch.Generator().manual_seed(s) for s in (0, 1)], 1)
    _run(folder)
    save_model(folder / MODEL_FILE, cfg, net, (4,), status)
    return folder


def test_a_diverged_seed_names_the_seeds_that_can_act(tmp_path, capsys) -> None:
    run = _two_seeds(tmp_path / "run", ["diverged", "done"])
    assert main(["evaluate", str(run), "--seeds", "0", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "maxminq evaluate: error: --seeds: seed 0 diverged during training and cannot act; "
        "give one that can: 1\n"
    )


def test_a_run_whose_every_seed_diverged_says_to_train_again(tmp_path, capsys) -> None:
    run = _two_seeds(tmp_path / "run", ["diverged", "diverged"])
    assert main(["evaluate", str(run), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"maxminq evaluate: error: RUN_DIR: every seed of {run} diverged (at the step in its "
        "runs.csv); nothing can act: train it again, e.g. with a smaller --lr\n"
    )
    with pytest.raises(UsageError, match=r"cannot act; no seed of this run can .*smaller --lr$"):
        load_agent(run).act(np.zeros(4, np.float32), 1)


# --- 4. the diverged note's plural --------------------------------------------------------


def test_one_seed_of_one_diverged_reads_in_the_singular() -> None:
    assert _diverged_note(pd.DataFrame({"status": ["diverged"]})) == " (1 of 1 seed diverged)"
    runs = pd.DataFrame({"status": ["diverged", "done", "done", "done"]})
    assert _diverged_note(runs) == " (1 of 4 seeds diverged)"


# --- 5. status on one run of 'maxminq train' -------------------------------------------------


def test_status_on_a_train_run_names_the_commands_that_read_it(tmp_path, capsys) -> None:
    """It said 'no results.sqlite here; is this a sweep output folder?', naming no command
    (report and a folder of runs already named them)."""
    run = _run(tmp_path / "run")
    assert main(["status", str(run)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq status: error: DIR: {run} is the folder of one 'maxminq train' run, no "
        f"sweep; 'maxminq plot {run}' draws it, 'maxminq compare {run}' scores it (status "
        "reads the --out of a sweep)\n"
    )


def test_a_finished_run_without_its_model_says_it_was_lost(tmp_path, capsys) -> None:
    """model.pt is written before runs.csv, so a finished run without it lost it since (a
    copy that left it out); 'it is written when maxminq train finishes a run' read as if
    the run had not finished."""
    run = _run(tmp_path / "run")
    assert main(["evaluate", str(run)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq evaluate: error: RUN_DIR: {run / 'model.pt'} not found, though the run "
        "finished (runs.csv is there): it was left out of a copy or deleted; copy it again, "
        "or train the run again (--overwrite); plot and compare read the run without it\n"
    )
