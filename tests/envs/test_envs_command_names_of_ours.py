"""``maxminq envs --env ID`` names features and actions only where they are ours and the
run's environment still has them: attributes ``action_names`` / ``observation_names`` of
an environment of one's own mean nothing to us (a dict of them was a TypeError traceback
from ``', '.join``), and an entry point that reshapes one of our games' observations
(``FlattenObservation`` of MinAtar Breakout: 400 values) no longer has MinAtar's 4
channels, which the line named beside the shape (400,)."""

from __future__ import annotations

import textwrap

import pytest
from user_modules import user_module

from maxminq.cli import main

MODULE = "own_envs_names_of_ours"

SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np

    from maxminq.envs import make


    class Named(gym.Env):  # attributes of these names, of its own meaning
        observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        action_space = gym.spaces.Discrete(2)
        action_names = {0: "left", 1: "right"}
        observation_names = [0, 1, 2]

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(3, np.float32), {}

        def step(self, action):
            return np.zeros(3, np.float32), 0.0, False, False, {}


    def flat_breakout(**kwargs):
        return gym.wrappers.FlattenObservation(make("maxminq/MinAtar-Breakout-v0", **kwargs))


    gym.register("Named-v0", entry_point=Named, max_episode_steps=10)
    gym.register("FlatBreakout-v0", entry_point=flat_breakout, max_episode_steps=10)
    """
)


def _spaces(capsys: pytest.CaptureFixture[str], env_id: str) -> list[str]:
    assert main(["envs", "--env", env_id]) == 0
    out = capsys.readouterr().out.splitlines()
    return [line for line in out if line.startswith(("observation: ", "actions: "))]


def test_names_of_an_environment_of_ones_own_are_not_ours_to_print(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        lines = _spaces(capsys, f"{MODULE}:Named-v0")
    assert lines == ["observation: (3,) float32", "actions: 2"]


def test_a_game_of_ours_reshaped_by_an_entry_point_loses_its_channel_names(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    with user_module(tmp_path / "mods", MODULE, SOURCE):
        lines = _spaces(capsys, f"{MODULE}:FlatBreakout-v0")
    # 4 channels x 10 x 10 cells flattened; the 6 actions are still MinAtar's
    assert lines == [
        "observation: (400,) uint8",
        "actions: 6 (noop, left, up, right, down, fire)",
    ]
