"""``maxminq envs --env ID --env-kwargs JSON`` on a paper id: the first line says "the
paper's settings" only while the keywords leave the game the paper's (the paper's own
keywords, or an option at its default); keywords that change the game are named there
beside the paper's values (MinAtar without sticky actions, Catcher without the authors'
normalisation are not the paper's environments)."""

from __future__ import annotations

import pytest

from maxminq.cli import main


def _first_line(capsys, env_id: str, kwargs: str) -> str:  # noqa: ANN001
    assert main(["envs", "--env", env_id, "--env-kwargs", kwargs]) == 0
    return capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize(
    ("env_id", "kwargs", "changed"),
    [
        ("maxminq/MinAtar-Breakout-v0", '{"sticky_action_prob": 0}', "sticky_action_prob"),
        ("maxminq/Catcher-v0", '{"normalize": false}', "normalize"),
    ],
)
def test_keywords_that_change_the_game_are_named(capsys, env_id, kwargs, changed) -> None:  # noqa: ANN001
    line = _first_line(capsys, env_id, kwargs)
    assert line.startswith(f"{env_id}: a paper environment")
    assert "the paper's settings" in line and changed in line and "paper's game" in line


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("maxminq/MinAtar-Breakout-v0", '{"sticky_action_prob": 0.1, "minimal_action_set": false}'),
        ("maxminq/Catcher-v0", '{"normalize": true}'),
    ],
)
def test_keywords_that_keep_the_game_keep_the_plain_line(capsys, env_id, kwargs) -> None:  # noqa: ANN001
    line = _first_line(capsys, env_id, kwargs)
    assert line == f"{env_id}: a paper environment, the paper's settings"
