"""Leftovers of session 16, settled in session 17:

* ``evaluate_agent``'s arguments out of range (``max_episode_steps=0`` among them) are a
  one-line UsageError naming the option of ``maxminq evaluate``, before any episode;
* ``maxminq.cli.main(["experiment", ...])`` from a script without the ``__main__`` guard
  (the experiment's spawned workers import the script again) is one clear error naming the
  fix, with nothing written to ``--out``;
* ``maxminq evaluate``, ``compare`` and ``plot`` (and ``compare_runs``, ``plot_runs``) name
  a folder of another kind for what it is: a run still training or stopped, a run's
  checkpoint, a sweep's tabular or unfinished run, a folder of folders of runs;
* the Python API's arguments of another type (a folder that is no path, ``''``, panels
  that are numbers, the run's folder given as its agent) are one-line UsageErrors naming
  the option, not TypeErrors or AttributeErrors.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from run_folders import finished_run

import maxminq.analysis as analysis
from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.errors import UsageError

# A user's script that runs a small experiment through the command line's main(), on two
# spawned workers; {call} is its last statement, with or without the __main__ guard.
EXPERIMENT_SCRIPT = """
import sys

from maxminq.cli import main


def experiment():
    argv = sys.argv[2:] + ["--quick", "--workers", "2", "--no-progress", "--out", sys.argv[1]]
    print("status", main(["experiment", *argv]))


{call}
"""
UNGUARDED = "experiment()\n"
GUARDED = 'if __name__ == "__main__":\n    experiment()\n'
# Small settings of each experiment (--quick, made smaller), with two tasks for the workers.
EXPERIMENTS = {
    "toy-mdp": ["toy-mdp", "--runs", "3", "--episodes", "4", "--algorithms", "q_learning",
                "double_q"],
    "mountain-car": ["mountain-car", "--runs", "2", "--episodes", "1", "--max-steps", "20",
                     "--sigma2", "0", "--step-sizes", "0.02", "0.08", "--algorithms",
                     "q_learning"],
}  # fmt: skip


def _run_script(
    tmp_path: Path, call: str, out: Path, argv: list[str]
) -> subprocess.CompletedProcess:
    script = tmp_path / ("guarded.py" if call == GUARDED else "unguarded.py")
    script.write_text(EXPERIMENT_SCRIPT.format(call=call))
    return subprocess.run(
        [sys.executable, str(script), str(out), *argv],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_an_unguarded_script_running_an_experiment_gets_one_error_naming_the_fix(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    bad = _run_script(tmp_path, UNGUARDED, out, EXPERIMENTS[name])
    assert bad.returncode == 0, bad.stderr  # the script itself goes on after main()
    assert bad.stdout.splitlines() == ["status 2"], bad.stdout  # main's usage-error status
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1, bad.stderr  # no worker's traceback, no "worker died"
    assert lines[0].startswith("maxminq experiment: error: "), lines[0]
    assert 'put the call under `if __name__ == "__main__":`' in lines[0]
    assert "--workers 1" in lines[0]
    assert not out.exists()  # nothing written, not even the folder
    if name != "toy-mdp":  # the fix, once (the figures take seconds)
        return
    good = _run_script(tmp_path, GUARDED, out, EXPERIMENTS[name])
    assert good.returncode == 0, good.stderr
    assert good.stdout.splitlines()[-1] == "status 0", good.stdout
    assert (out / f"{name.replace('-', '_')}.csv").is_file()


# --- evaluate_agent's arguments -------------------------------------------------------------


def _model_run(folder: Path) -> Path:
    """A run folder with only a model.pt: a CartPole DQN's untrained networks (seed 0),
    written without training (what load_agent reads)."""
    cfg = TrainConfig(env_id="CartPole-v1", agent="dqn", n=1, steps=100, seeds=[0]).resolve()
    net = build_net("mlp", 1, (4,), 2)
    net.init_members([torch.Generator().manual_seed(0)], 1)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (4,), ["done"])
    return folder


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The agent of :func:`_model_run`; ``made`` counts the environments made of its
    config (none: the argument was refused before any episode)."""
    loaded = load_agent(_model_run(tmp_path / "run"))
    made = []
    make_env = TrainConfig.make_env

    def counting(self, *args, **kwargs):
        made.append(args)
        return make_env(self, *args, **kwargs)

    monkeypatch.setattr(TrainConfig, "make_env", counting)
    loaded.made = made
    return loaded


@pytest.mark.parametrize(
    "kwargs, option",
    [
        ({"max_episode_steps": 0}, "--max-episode-steps"),
        ({"max_episode_steps": -3}, "--max-episode-steps"),
        ({"max_episode_steps": 2.5}, "--max-episode-steps"),
        ({"max_episode_steps": "5"}, "--max-episode-steps"),
        ({"max_episode_steps": True}, "--max-episode-steps"),
        ({"max_episode_steps": math.nan}, "--max-episode-steps"),
        ({"frames": ()}, "frames"),
        ({"frames": np.zeros(3)}, "frames"),
        ({"frames": [], "max_frames": 0}, "max_frames"),
        ({"frames": [], "max_frames": 2.0}, "max_frames"),
    ],
)
def test_a_bad_argument_of_evaluate_agent_is_one_line_naming_it_before_any_episode(
    agent, kwargs: dict, option: str
) -> None:
    with pytest.raises(UsageError) as info:
        evaluate_agent(agent, [0], 1, **kwargs)
    text = str(info.value)
    assert text.startswith(f"{option}: expected ") and "\n" not in text, text
    assert agent.made == []  # refused before the environment was made


def test_a_numpy_episode_cap_is_taken_and_frames_count_from_what_the_list_holds(agent) -> None:
    episodes = evaluate_agent(agent, [0], 2, max_episode_steps=np.int64(3))
    # A CartPole episode lasts more than 3 steps whatever the policy: cut at 3.
    assert list(episodes["length"]) == [3, 3] and episodes["truncated"].all()
    frames: list = ["mine"]
    evaluate_agent(agent, [0], 1, frames=frames, max_frames=2, max_episode_steps=5)
    assert frames[0] == "mine" and len(frames) == 3  # the caller's, then 2 new frames
    assert all(f.shape == (400, 600, 3) for f in frames[1:])


# --- evaluate, compare, plot on folders that hold no finished deep run ----------------------


def _not_runs(root: Path) -> dict[str, tuple[Path, str]]:
    """Folders of another kind given as RUN_DIR, each with the start of what the error must
    say of it."""
    stopped = finished_run(root / "stopped", [(0, 1000, -1.0, 5)], steps=1000,
                           train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    (stopped / "runs.csv").unlink()  # as while it trains, or once stopped
    (stopped / "checkpoint").mkdir()
    (stopped / "checkpoint" / "state.pt").write_bytes(b"a checkpoint")
    done = finished_run(root / "done", [(0, 1000, -1.0, 5)], steps=1000,
                        train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    (done / "checkpoint").mkdir()
    (done / "checkpoint" / "state.pt").write_bytes(b"a checkpoint")
    work = root / "sweep" / "work" / "deep-0123"  # a sweep's deep run, stopped
    work.mkdir(parents=True)
    (work / "config.json").write_text((stopped / "config.json").read_text())
    (root / "sweep" / "results.sqlite").write_bytes(b"")
    toy = root / "sweep" / "tables" / "toy_mdp-0123"  # a sweep's tabular run
    toy.mkdir(parents=True)
    (toy / "manifest.json").write_text('{"run_id": "toy_mdp-0123", "kind": "toy_mdp"}')
    (toy / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    return {
        "stopped": (stopped, f"{stopped} holds a run that has not finished training"),
        "work": (work, f"{work} holds a run that has not finished training"),
        "checkpoint": (
            done / "checkpoint",
            f"{done / 'checkpoint'} is a run's checkpoint; give the run's folder, {done}",
        ),
        "toy": (
            toy,
            f"{toy} holds a sweep's toy_mdp run, not a deep agent's ('maxminq report "
            f"{root / 'sweep'}' draws the sweep's figures)",
        ),
    }


@pytest.mark.parametrize("command", ["evaluate", "compare", "plot"])
def test_a_folder_of_another_kind_is_named_for_what_it_is(command, tmp_path, capsys) -> None:
    """evaluate said '.../model.pt not found' of these, plot and compare '... holds no
    finished deep run'; a stopped run's folder gets the way to continue it."""
    for key, (folder, expected) in _not_runs(tmp_path).items():
        assert main([command, str(folder)]) == 2, key
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert err.startswith(f"maxminq {command}: error: RUN_DIR: {expected}"), err
        if key == "stopped":
            assert "the same 'maxminq train' command with --resume continues" in err
        if key == "work":  # the sweep continues its own runs
            assert "the same 'maxminq sweep' command continues" in err
    assert not list(tmp_path.rglob("*.png"))  # plot drew nothing


@pytest.mark.parametrize("name", ["compare_runs", "plot_runs"])
def test_the_python_api_names_a_folder_as_the_command_does(name, tmp_path) -> None:
    """compare_runs and plot_runs said '... holds no finished deep run' of a folder that
    does not exist and of any other folder that maxminq compare and plot name."""
    fn = getattr(analysis, name)
    command = name.removesuffix("_runs")
    missing = tmp_path / "missing"
    with pytest.raises(UsageError, match=f"^RUN_DIR: {re.escape(str(missing))} does not exist$"):
        fn([missing])
    for folder, expected in _not_runs(tmp_path).values():
        with pytest.raises(UsageError) as info:
            fn(folder)
        assert str(info.value).startswith(f"RUN_DIR: {expected}")
    toy = tmp_path / "sweep" / "tables" / "toy_mdp-0123"
    with pytest.raises(UsageError, match=f"'maxminq {command}' reads the runs of 'maxminq train'"):
        fn([toy])


@pytest.mark.parametrize("command", ["evaluate", "compare", "plot"])
def test_a_folder_of_folders_of_runs_names_the_runs(command, tmp_path, capsys) -> None:
    """docs/runs holds the published runs as <env>/<agent>: 'maxminq plot docs/runs' said
    it 'holds no finished deep run' (only run folders right inside were named)."""
    for env, agent in (("lunar", "dqn"), ("lunar", "maxmin"), ("cart", "dqn")):
        finished_run(tmp_path / "runs" / env / agent, [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    assert main([command, str(tmp_path / "runs")]) == 2
    runs = tmp_path / "runs"
    shown = f"{runs / 'cart/dqn'} {runs / 'lunar/dqn'} {runs / 'lunar/maxmin'}"
    assert capsys.readouterr().err == (
        f"maxminq {command}: error: RUN_DIR: {runs} holds no run itself but 3 run folders: "
        f"{shown}; "
        + (  # h13 (S21): and what to give instead
            f"evaluate one of them, e.g. 'maxminq evaluate {runs / 'cart/dqn'}'\n"
            if command == "evaluate"
            else f"give them as RUN_DIRs: 'maxminq {command} {shown}'\n"
        )
    )


# --- the Python API's arguments of another type ---------------------------------------------


def test_evaluate_agent_given_the_folder_instead_of_its_agent_says_so(tmp_path) -> None:
    run = _model_run(tmp_path / "run")
    with pytest.raises(UsageError, match=r"^agent: expected the TrainedAgent of load_agent"):
        evaluate_agent(str(run), [0], 1)  # was an AttributeError ('_position')


@pytest.mark.parametrize(
    "call, option",
    [
        (lambda fn, run: fn(5), "RUN_DIR"),
        (lambda fn, run: fn([run, None]), "RUN_DIR"),
        (lambda fn, run: fn([bytes(run)]), "RUN_DIR"),
        (lambda fn, run: fn(""), "RUN_DIR"),  # the current folder
        (lambda fn, run: fn([run, ""]), "RUN_DIR"),
    ],
)
@pytest.mark.parametrize("name", ["compare_runs", "plot_runs"])
def test_a_folder_that_is_no_path_is_refused_naming_run_dir(name, call, option, tmp_path) -> None:
    """A TypeError naming nothing, or '' read as the current folder (which the command line
    refuses: 'expected a value, got an empty string')."""
    run = finished_run(tmp_path / "run", [(0, 1000, -1.0, 5)], steps=1000,
                       train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    with pytest.raises(UsageError, match=f"^{option}: expected "):
        call(getattr(analysis, name), run)


@pytest.mark.parametrize(
    "kwargs, option",
    [
        ({"out": 5}, "--out"),
        ({"out": ""}, "--out"),  # wrote curves.png into the current folder
        ({"panels": 5}, "--panels"),
        ({"panels": ["return", 3]}, "--panels"),
        ({"labels": "ab"}, "labels"),  # two runs: "a" and "b"
    ],
)
def test_plot_runs_options_of_another_type_are_one_line_naming_them(
    kwargs, option, tmp_path, monkeypatch
) -> None:
    runs = [
        finished_run(
            tmp_path / name,
            [(0, 1000, -1.0, 5)],
            steps=1000,
            train={0: (1000, 1.0)},
            tests={0: 1.0},
            agent=name,
        )  # fmt: skip
        for name in ("dqn", "ddqn")
    ]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=f"^{option}: expected "):
        analysis.plot_runs(runs, **kwargs)
    assert not list(tmp_path.rglob("*.png"))


@pytest.mark.parametrize("name", ["compare_runs", "plot_runs"])
def test_run_folders_from_any_iterable_are_taken(name, tmp_path, monkeypatch) -> None:
    """Today's check of what RUN_DIRs are refused an iterable that is no Sequence (a glob's
    generator, a set), which read as the folders it yields before."""
    for agent in ("dqn", "ddqn"):
        finished_run(tmp_path / "runs" / agent, [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0}, agent=agent)  # fmt: skip
    monkeypatch.chdir(tmp_path)
    fn = getattr(analysis, name)
    from_glob = fn((tmp_path / "runs").glob("*"))
    from_list = fn(sorted((tmp_path / "runs").glob("*")))
    if name == "compare_runs":
        assert sorted(from_glob["agent"]) == sorted(from_list["agent"]) == ["ddqn", "dqn"]
    else:
        assert from_glob == from_list and all(p.is_file() for p in from_glob)
        # panels likewise: a generator's names were consumed by the check, then none drawn
        panels = (p for p in ["return", "bias", "q"])
        assert fn(sorted((tmp_path / "runs").glob("*")), panels=panels) == from_list
