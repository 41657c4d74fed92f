"""``maxminq envs --env ID --env-kwargs JSON`` names only keywords that change the game:
one the game does not read under the other settings leaves the plain "the paper's settings"
line (MinAtar's Breakout takes ``ramping`` and never reads it, Seaquest's minimal action
set is all 6 actions; LunarLander reads ``wind_power`` and ``turbulence_power`` only with
``enable_wind``); where it is read, a value other than the paper's is named, also one that
differs in the last digits only; a number for a truth value compares as Python does
(LunarLander reads ``enable_wind`` as one: 0 is its False), our own games refuse it."""

from __future__ import annotations

import pytest

from maxminq.cli import main

PLAIN = ": a paper environment, the paper's settings"


def _first_line(capsys, env_id: str, kwargs: str) -> str:  # noqa: ANN001
    assert main(["envs", "--env", env_id, "--env-kwargs", kwargs]) == 0
    return capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize(
    ("env_id", "kwargs", "named"),
    [
        # Breakout has no ramp: the game is the paper's either way
        ("maxminq/MinAtar-Breakout-v0", '{"difficulty_ramping": false}', None),
        ("maxminq/MinAtar-Asterix-v0", '{"difficulty_ramping": false}', "difficulty_ramping"),
        ("maxminq/MinAtar-Seaquest-v0", '{"difficulty_ramping": false}', "difficulty_ramping"),
        ("maxminq/MinAtar-Breakout-v0", '{"sticky_action_prob": 0.10000001}', "0.10000001"),
        # Seaquest's minimal action set is all 6 actions, Breakout's 3
        ("maxminq/MinAtar-Seaquest-v0", '{"minimal_action_set": true}', None),
        ("maxminq/MinAtar-Breakout-v0", '{"minimal_action_set": true}', "minimal_action_set"),
        # no wind: its strength is never read
        ("LunarLander-v3", '{"wind_power": 10.0, "turbulence_power": 1.0}', None),
        ("LunarLander-v3", '{"enable_wind": true, "wind_power": 10.0}', "wind_power=10.0"),
        # LunarLander reads enable_wind and continuous as truth values: 0 is false
        ("LunarLander-v3", '{"enable_wind": 0, "continuous": 0, "wind_power": 5.0}', None),
        ("LunarLander-v3", '{"enable_wind": 1}', "enable_wind=1 (the paper's: false)"),
    ],
)
def test_only_keywords_the_game_reads_are_named(capsys, env_id, kwargs, named) -> None:  # noqa: ANN001
    line = _first_line(capsys, env_id, kwargs)
    if named is None:
        assert line == env_id + PLAIN
    else:
        assert line.startswith(env_id + PLAIN + ", but") and named in line, line


def test_the_options_a_game_does_not_read() -> None:
    """Read off MinAtar's source: breakout.py and freeway.py never read ``ramping``;
    seaquest.py's minimal_actions are n, l, u, r, d, f, its whole action_map."""
    from maxminq.envs.minatar import unread_options

    assert {g: unread_options(g) for g in ("asterix", "breakout", "freeway", "seaquest")} == {
        "asterix": set(),
        "breakout": {"difficulty_ramping"},
        "freeway": {"difficulty_ramping"},
        "seaquest": {"minimal_action_set"},
    }
    assert unread_options("space_invaders") == set()


def test_our_games_refuse_a_number_for_a_truth_value(capsys) -> None:  # noqa: ANN001
    code = main(["envs", "--env", "maxminq/Catcher-v0", "--env-kwargs", '{"normalize": 1}'])
    assert code == 2
    assert "normalize must be true or false, got 1" in capsys.readouterr().err
