"""``maxminq envs --env ID`` says what the environment gives and takes: the observation's
shape and dtype with the names of its features (PLE's ``getGameState`` keys) or channels
(MinAtar's), and the number of actions with what each does, as the run would build it
(Catcher normalised, ``--env-kwargs`` applied).

Expected names, read by hand from the original sources: PLE ``catcher.py`` /
``pixelcopter.py`` (``getGameState`` dict order; the action set is the game's ``actions``
dict values, then PLE's NOOP appended), MinAtar ``breakout.py`` / ``space_invaders.py``
(``channels`` dicts; ``action_map`` n, l, u, r, d, f; ``minimal_action_set`` n, l, r and
n, l, r, f).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from maxminq.cli import main


def _head(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["envs", "--env", *argv]) == 0
    out = capsys.readouterr().out.splitlines()
    return out[: out.index("")]  # the lines before the first blank one


def test_catcher_observation_and_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert _head(capsys, "maxminq/Catcher-v0")[1:] == [
        "observation: (4,) float32 (player_x, player_vel, fruit_x, fruit_y), normalised",
        "actions: 3 (left, right, noop)",
    ]
    raw = _head(capsys, "maxminq/Catcher-v0", "--env-kwargs", '{"normalize": false}')
    assert raw[1] == "observation: (4,) float32 (player_x, player_vel, fruit_x, fruit_y)"


def test_pixelcopter_observation_and_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert _head(capsys, "maxminq/Pixelcopter-v0")[1:] == [
        "observation: (7,) float32 (player_y, player_vel, player_dist_to_ceil, "
        "player_dist_to_floor, next_gate_dist_to_player, next_gate_block_top, "
        "next_gate_block_bottom)",
        "actions: 2 (up, noop)",
    ]


def test_minatar_channels_and_action_sets(capsys: pytest.CaptureFixture[str]) -> None:
    assert _head(capsys, "maxminq/MinAtar-Breakout-v0")[1:] == [
        "observation: (4, 10, 10) uint8, channels first (paddle, ball, trail, brick)",
        "actions: 6 (noop, left, up, right, down, fire)",
    ]
    kwargs = '{"minimal_action_set": true, "obs_dtype": "float32"}'
    assert _head(capsys, "maxminq/MinAtar-SpaceInvaders-v0", "--env-kwargs", kwargs)[1:] == [
        "observation: (6, 10, 10) float32, channels first (cannon, alien, alien_left, "
        "alien_right, friendly_bullet, enemy_bullet)",
        "actions: 4 (noop, left, right, fire)",
    ]


def test_another_gymnasium_id_gets_its_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    assert _head(capsys, "CartPole-v1")[2:] == ["observation: (4,) float32", "actions: 2"]


class _Normalised(gym.Env):
    """An environment of one's own with an attribute ``normalize`` that means nothing to us."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)
    normalize = True

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, True, False, {}


def test_only_our_games_are_said_to_be_normalised(capsys: pytest.CaptureFixture[str]) -> None:
    gym.register(id="Normalised25-v0", entry_point=_Normalised)
    try:
        assert _head(capsys, "Normalised25-v0")[2:] == ["observation: (3,) float32", "actions: 2"]
    finally:
        gym.registry.pop("Normalised25-v0", None)
