"""Leftovers of the session-17 reviews, settled in session 17 (second part):

* ``evaluate_agent`` (``maxminq evaluate``) refuses a NaN/inf observation or reward with the
  one-line ``--env`` error of training's test episodes (a NaN observation was played as
  action 0, the argmax of NaN values, and a NaN return recorded);
* its "no time limit" warning counts a ``TimeLimit`` the environment's entry point adds,
  as training's does, and is an ``EnvWarning`` from Python too;
* ``read_tables`` names a ``runs.csv`` with a header but no rows as a damaged run (compare
  and plot worked on nothing);
* ``load_agent(folder)`` checks the folder as ``maxminq evaluate`` does (a run still
  training, a run's checkpoint/, a sweep's tabular run, a folder of run folders);
* an observation space of 0, 2 or 4 dimensions is refused with the wrapper that fits it
  (ReshapeObservation to (1,), FlattenObservation, ReshapeObservation of a frame stack into
  its channels), and the wrapper so suggested then trains.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from line_env import NonFiniteEnv, StepsEnv
from run_folders import finished_run

from maxminq.cli import main
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.deep.train import read_tables, run_training
from maxminq.envs.registry import get_env_defaults
from maxminq.errors import UsageError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _capped_later(**kwargs):
    """No registered cap; a TimeLimit of the entry point's own once ``cap`` is set (the
    environment as changed after a run trained on it without one)."""
    env = StepsEnv(**kwargs)
    return env if _capped_later.cap is None else gym.wrappers.TimeLimit(env, _capped_later.cap)


_capped_later.cap = None


def _register(entry, cap: int | None = 50, name: str | None = None) -> str:
    name = name or getattr(entry, "__name__", "env").strip("_")
    env_id = f"mmq-leftovers17b/{name}-{cap}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=cap)
    return env_id


def _model_run(folder: Path, env_id: str) -> Path:
    """A run folder with only a model.pt: a DQN's untrained networks (seed 0) for the
    three features of StepsEnv, written without training (what load_agent reads)."""
    cfg = TrainConfig(env_id=env_id, agent="dqn", n=1, steps=100, seeds=[0]).resolve()
    net = build_net("mlp", 1, (3,), 2)
    net.init_members([torch.Generator().manual_seed(0)], 1)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (3,), ["done"])
    return folder


# --- 1. a NaN / inf observation or reward in evaluate's episodes -----------------------------


@pytest.mark.parametrize(
    "bad,needle",
    [
        ("reset", r"an observation of a test or evaluation episode \(seed 0's episode 1, "
                  r"reset\(\)\) is inf as float32; observations must be finite numbers"),
        ("obs", r"an observation of a test or evaluation episode \(seed 0's episode 1, "
                r"step\(\)\) is nan as float32"),
        ("reward", r"a reward of a test or evaluation episode \(seed 0's episode 1, "
                   r"step\(\)\) is nan as float32; rewards must be finite numbers"),
        ("huge", r"a reward of a test or evaluation episode .* is inf as float32"),
    ],
)  # fmt: skip
def test_evaluate_refuses_a_non_finite_value_as_training_does(bad, needle, tmp_path) -> None:
    """evaluate_agent played a NaN observation as action 0 and recorded NaN or inf returns;
    training's test episodes refuse them (the same check, the same words)."""
    run = _model_run(tmp_path / "run", _register(NonFiniteEnv))
    agent = load_agent(run)
    NonFiniteEnv.bad = bad
    try:
        with pytest.raises(UsageError, match=f"^--env: {needle}"):
            evaluate_agent(agent, [0], episodes=2)
        argv = ["evaluate", str(run), "--episodes", "2", "--no-progress"]
        csv = tmp_path / "episodes.csv"
        assert main([*argv, "--csv", str(csv)]) == 2
    finally:
        NonFiniteEnv.bad = None
    assert not csv.exists()
    # Finite values play as before: 2 episodes of 6 steps each.
    table = evaluate_agent(agent, [0], episodes=2)
    assert table["length"].tolist() == [6, 6] and np.isfinite(table["return"]).all()


def test_the_command_gives_the_non_finite_error_in_one_line(tmp_path, capsys) -> None:
    run = _model_run(tmp_path / "run", _register(NonFiniteEnv))
    NonFiniteEnv.bad = "obs"
    try:
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 2
    finally:
        NonFiniteEnv.bad = None
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("maxminq evaluate: error: --env: an observation of a test or "), err


# --- 2. no time limit: a TimeLimit of the entry point's own counts ---------------------------


def test_evaluate_counts_a_time_limit_of_the_entry_points_own(tmp_path, capsys) -> None:
    """Training counts the environment's own TimeLimit; evaluate went by the run's recorded
    cap alone and said an environment whose entry point now adds one 'has no time limit'."""
    run = _model_run(tmp_path / "run", _register(_capped_later, cap=None))
    assert load_agent(run).config.max_episode_steps is None  # trained without a cap
    _capped_later.cap = 4
    try:
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 0
        assert "time limit" not in capsys.readouterr().err
        with warnings.catch_warnings():
            warnings.simplefilter("error", EnvWarning)
            table = evaluate_agent(load_agent(run), [0], 1)
    finally:
        _capped_later.cap = None
    assert table["truncated"].tolist() == [True] and table["length"].tolist() == [4]


def test_no_time_limit_is_an_env_warning_from_python_and_once_from_the_command(
    tmp_path, capsys
) -> None:
    """Only the command warned (a print); evaluate_agent said nothing."""
    uncapped = _model_run(tmp_path / "uncapped", _register(StepsEnv, cap=None))
    agent = load_agent(uncapped)
    with pytest.warns(EnvWarning, match="has no time limit: an episode the policy never ends"):
        evaluate_agent(agent, [0], 1)
    with warnings.catch_warnings():  # a cap given here is one
        warnings.simplefilter("error", EnvWarning)
        evaluate_agent(agent, [0], 1, max_episode_steps=10)
    assert main(["evaluate", str(uncapped), "--episodes", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("has no time limit") == 1, err
    assert "maxminq evaluate: warning: " in err and "--max-episode-steps sets one" in err, err
    argv = ["evaluate", str(uncapped), "--episodes", "1", "--no-progress"]
    assert main([*argv, "--max-episode-steps", "10"]) == 0
    assert "time limit" not in capsys.readouterr().err


# --- 3. runs.csv with a header and no rows ---------------------------------------------------


def _run(folder: Path) -> Path:
    return finished_run(folder, [(0, 1000, -1.0, 5), (1, 1000, -2.0, 5)], steps=1000,
                        train={0: (1000, 1.0), 1: (1000, 2.0)}, tests={0: 1.0, 1: 2.0})  # fmt: skip


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


# --- 4. load_agent checks its folder as maxminq evaluate does --------------------------------


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


# --- 5. observations of 0, 2 or 4 dimensions: the wrapper that fits -------------------------


class _Scalar(StepsEnv):
    """One number: the step count."""

    observation_space = gym.spaces.Box(0.0, 10.0, (), np.float32)

    def _obs(self) -> np.ndarray:
        return np.array(self.t, np.float32)


class _Matrix(StepsEnv):
    """A (2, 3) matrix of features."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2, 3), np.float32)

    def _obs(self) -> np.ndarray:
        return np.stack([super()._obs(), np.full(3, 0.5, np.float32)])


class _Gray(StepsEnv):
    """A one-channel 5 x 5 image (H, W): the step count as a lit pixel."""

    observation_space = gym.spaces.Box(0.0, 1.0, (5, 5), np.float32)

    def _obs(self) -> np.ndarray:
        img = np.zeros((5, 5), np.float32)
        img.flat[self.t] = 1.0
        return img


class _Image(_Gray):
    """A channels-first image (1, 5, 5)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1, 5, 5), np.float32)

    def _obs(self) -> np.ndarray:
        return super()._obs()[None]


class _ImageLast(_Gray):
    """A channels-last image (5, 5, 1)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (5, 5, 1), np.float32)

    def _obs(self) -> np.ndarray:
        return super()._obs()[..., None]


def _stacked(**kwargs):
    """Two frames of _Image: (2, 1, 5, 5)."""
    return gym.wrappers.FrameStackObservation(_Image(**kwargs), 2)


def _stacked_last(**kwargs):
    """Two frames of _ImageLast: (2, 5, 5, 1)."""
    return gym.wrappers.FrameStackObservation(_ImageLast(**kwargs), 2)


def _suggested(entry, message: str, which: int = 0):
    """``entry`` wrapped in the ``which``-th gymnasium.wrappers call the message suggests,
    with the arguments it gives there."""
    calls = re.findall(r"gymnasium\.wrappers\.(\w+)\(env((?:, \([\d, ]*\))?)\)", message)
    name, args = calls[which]
    extra = [ast.literal_eval(args[2:])] if args else []

    def made(**kwargs):
        return getattr(gym.wrappers, name)(entry(**kwargs), *extra)

    made.__name__ = f"{entry.__name__.strip('_')}_{name}{which}"
    return made


def _trains(env_id: str, tmp_path: Path) -> pd.DataFrame:
    cfg = TrainConfig(env_id=env_id, agent="maxmin-dqn", n=2, steps=30, seeds=[0],
                      learning_starts=10, buffer_size=50, batch_size=4, eval_episodes=1,
                      checkpoint_every=0)  # fmt: skip
    return run_training(cfg, tmp_path / env_id.replace("/", "_"), progress=False)


@pytest.mark.parametrize(
    "entry,which,hint,trained_shape",
    [
        (_Scalar, 0, "one feature: gymnasium.wrappers.ReshapeObservation(env, (1,))", (1,)),
        (_Matrix, 0, "a (2, 3) matrix of features: gymnasium.wrappers.FlattenObservation(env), "
                     "6 features", (6,)),
        (_Gray, 1, "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                   "(1, 5, 5))", (1, 5, 5)),
        (_stacked, 0, "2 stacked channels-first images (k, C, H, W)? merge the stack into the "
                      "channels, (2, 5, 5): gymnasium.wrappers.ReshapeObservation(env, "
                      "(2, 5, 5))", (2, 5, 5)),
    ],
)  # fmt: skip
def test_an_observation_of_0_2_or_4_dimensions_gets_the_wrapper_that_fits_and_it_trains(
    entry, which, hint, trained_shape, tmp_path
) -> None:
    """The refusal suggested FlattenObservation 'for a Dict, Tuple or Discrete space' only,
    whatever the space (a scalar Box, a matrix, a stack of images)."""
    with pytest.raises(UsageError, match="^--env: .* expected a 1-D feature vector") as info:
        get_env_defaults(_register(entry))
    message = str(info.value)
    assert hint in message, message
    assert "in an entry point of yours that returns the wrapped environment" in message
    wrapped = _register(_suggested(entry, message, which))
    tables = _trains(wrapped, tmp_path)
    assert tables["runs"]["status"].tolist() == ["done"]
    assert len(tables["tests"]) == 1 and tables["tests"]["length"].tolist() == [6]
    assert load_agent(tmp_path / wrapped.replace("/", "_")).obs_shape == trained_shape


def test_a_stack_of_channels_last_images_is_told_to_move_the_channels_and_then_trains(
    tmp_path,
) -> None:
    """(k, H, W, C) from FrameStackObservation of a channels-last image: merged as told."""
    with pytest.raises(UsageError) as info:
        get_env_defaults(_register(_stacked_last))
    message = str(info.value)
    assert (
        "2 stacked channels-last images (k, H, W, C)? move the channels first and merge them "
        "with the stack into (2, 5, 5): gymnasium.wrappers.TransformObservation(env, lambda o: "
        "np.moveaxis(o, -1, 1).reshape(2, 5, 5), a Box of shape (2, 5, 5))"
    ) in message, message

    def moved(**kwargs):  # as the message says
        box = gym.spaces.Box(0.0, 1.0, (2, 5, 5), np.float32)
        return gym.wrappers.TransformObservation(
            _stacked_last(**kwargs), lambda o: np.moveaxis(o, -1, 1).reshape(2, 5, 5), box
        )

    tables = _trains(_register(moved), tmp_path)
    assert tables["runs"]["status"].tolist() == ["done"]


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


@pytest.mark.parametrize(
    "shape,image",
    [
        ((2, 3), None),  # (1, 2, 3) would be refused by minatar_cnn: too small, not square
        ((5, 5), "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                 "(1, 5, 5)); either"),
        ((6, 8), "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                 "(1, 6, 8)), then square (minatar_cnn takes H = W); either"),
    ],
)  # fmt: skip
def test_a_matrix_is_offered_as_an_image_only_where_the_network_could_take_it(shape, image):
    """The hint offered every matrix as a one-channel image, and the (1, 2, 3) image it gave
    for a (2, 3) matrix was then refused by minatar_cnn (not square, below 3 x 3)."""
    from maxminq.envs.registry import _observation_hint

    hint = _observation_hint(gym.spaces.Box(0.0, 1.0, shape, np.float32))
    assert hint.startswith(f"a {shape} matrix of features: gymnasium.wrappers.Flatten"), hint
    if image is None:
        assert "image" not in hint, hint
    else:
        assert image in hint, hint
