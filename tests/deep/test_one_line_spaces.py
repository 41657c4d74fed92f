"""A space the agents cannot use is named in ONE line, however many lines NumPy prints its
bounds in: a frame stack of CartPole-v1 (observations (4, 4), bounds per element) and a
Box action space of 12 dimensions with bounds per element were errors of 9 and 3 lines
(``str(space)``), in ``maxminq train``, ``maxminq envs --env`` and ``run_training``."""

from __future__ import annotations

import textwrap

import gymnasium as gym
import numpy as np
import pytest
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.errors import UsageError

MODULE = "own_envs_one_line_spaces"

SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    def stacked_cartpole(**kwargs):  # 4 frames of CartPole: observations (4, 4)
        return gym.wrappers.FrameStackObservation(gym.make("CartPole-v1", **kwargs), 4)


    class Arm(gym.Env):  # 12 joints, each with its own torque range
        observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        action_space = gym.spaces.Box(
            -np.arange(1, 13, dtype=np.float32), np.arange(1, 13, dtype=np.float32)
        )

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(3, np.float32), {}

        def step(self, action):
            return np.zeros(3, np.float32), 0.0, False, False, {}


    gym.register("StackedCartPole-v0", entry_point=stacked_cartpole)
    gym.register("Arm-v0", entry_point=Arm, max_episode_steps=10)
    """
)


def test_a_space_with_bounds_per_element_is_one_short_line() -> None:
    from maxminq.envs.registry import space_text  # new with this test

    low = np.full((4, 4), -2.5, np.float32)
    low[0, 0] = -3.0  # bounds differ per element: NumPy prints them in 4 lines
    stacked = gym.spaces.Box(low, np.float32(7.0), dtype=np.float32)
    assert str(stacked).count("\n") == 3
    assert space_text(stacked) == (
        "Box of shape (4, 4) and dtype float32, bounds per element from -3.0 to 7.0"
    )
    # Short texts stay as they are (Discrete, a Box of equal bounds, a short Box).
    assert space_text(gym.spaces.Discrete(3, start=1)) == "Discrete(3, start=1)"
    assert space_text(gym.spaces.Box(0, 255, (3, 84, 84), np.uint8)) == (
        "Box(0, 255, (3, 84, 84), uint8)"
    )
    short = gym.spaces.Box(np.array([-1.0, -2.0]), np.array([1.0, 2.0]), dtype=np.float64)
    assert space_text(short) == "Box([-1. -2.], [1. 2.], (2,), float64)"
    # Any other long text: its lines joined, cut at 200 characters.
    many = gym.spaces.Dict({f"sensor_{i}": gym.spaces.Discrete(2) for i in range(30)})
    text = space_text(many)
    assert "\n" not in text and len(text) == 200 and text.endswith("...")
    assert text.startswith("Dict('sensor_0': Discrete(2), 'sensor_1': Discrete(2), ")


def test_a_frame_stack_is_refused_in_one_line(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        env_id = f"{MODULE}:StackedCartPole-v0"
        with pytest.raises(UsageError) as info:
            run_training(TrainConfig(env_id, steps=200), out, progress=False)
        text = str(info.value)
        argv = ["train", "--env", env_id, "--steps", "200", "--out", str(out), "--no-progress"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert main(["envs", "--env", env_id]) == 2
        envs_err = capsys.readouterr().err
    # CartPole's bounds: x and angle finite, the velocities unbounded (-inf to inf).
    space = "Box of shape (4, 4) and dtype float32, bounds per element from -inf to inf"
    assert text == (
        f"--env: '{env_id}' has observation space {space} (shape (4, 4)); expected a 1-D "
        "feature vector or a 3-D channels-first image (a (4, 4) matrix of features: "
        "gymnasium.wrappers.FlattenObservation(env), 16 features; a one-channel image (H, W): "
        "gymnasium.wrappers.ReshapeObservation(env, (1, 4, 4)); either in an entry point of "
        "yours that returns the wrapped environment)"
    )
    assert err == f"maxminq train: error: {text}\n"
    assert envs_err == f"maxminq envs: error: {text}\n"
    assert not out.exists()


def test_a_box_action_space_is_refused_in_one_line(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        env_id = f"{MODULE}:Arm-v0"
        argv = ["train", "--env", env_id, "--steps", "200", "--out", str(out), "--no-progress"]
        assert main(argv) == 2
        err = capsys.readouterr().err
    assert err == (
        f"maxminq train: error: --env: {env_id} needs a discrete action space, has Box of "
        "shape (12,) and dtype float32, bounds per element from -12.0 to 12.0; discretize it "
        "with gymnasium.wrappers.DiscretizeAction(env, bins) in an entry point of yours that "
        "returns the wrapped environment\n"
    )
    assert not out.exists()
