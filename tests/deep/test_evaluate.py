"""``evaluate_agent`` / ``maxminq evaluate``: bad arguments, episode caps, folders of runs,
the agent's and its operator's names."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from generalized_runs import _small
from run_folders import finished_run

import maxminq.analysis as analysis
from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.errors import UsageError


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


def test_evaluate_names_the_agent_as_plot_and_compare_do(tmp_path, capsys) -> None:
    """``maxminq evaluate`` printed ``maxmin-dqn (n = 2)`` (the option's spelling) where the
    figures, ``plot`` and ``compare`` say ``Maxmin DQN (N=2)``."""
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "maxmin-dqn", "--n", "2"]
    argv += ["--steps", "200", "--learning-starts", "100", "--eval-episodes", "1"]
    argv += ["--checkpoint-every", "0", "--out", str(out), "--no-progress", "--no-plot"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "Maxmin DQN (N=2) on CartPole-v1, eps = 0.0, 1 episode:"


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
        + (  # and what to give instead
            f"evaluate one of them, e.g. 'maxminq evaluate {runs / 'cart/dqn'}'\n"
            if command == "evaluate"
            else f"give them as RUN_DIRs: 'maxminq {command} {shown}'\n"
        )
    )


def test_evaluate_agent_given_the_folder_instead_of_its_agent_says_so(tmp_path) -> None:
    run = _model_run(tmp_path / "run")
    with pytest.raises(UsageError, match=r"^agent: expected the TrainedAgent of load_agent"):
        evaluate_agent(str(run), [0], 1)  # was an AttributeError ('_position')


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


@pytest.mark.usefixtures("torch_one_thread")
def test_evaluate_names_the_operator_of_a_generalized_dqn_run(tmp_path, capsys) -> None:
    """maxminq evaluate's header said only 'generalized-dqn on CartPole-v1': two runs with
    different Gs read alike. It names the operator and its keywords."""
    from maxminq.cli import main

    out = tmp_path / "run"
    cfg = _small(operator="weighted_double_q", op_kwargs={"c": 2}, steps=80, seeds=[0])
    run_training(cfg, out, progress=False)
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith("Generalized DQN, weighted_double_q (N=2) (c=2) on ")
