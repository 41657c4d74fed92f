"""``maxminq envs --env ID --env-kwargs JSON`` of keywords 'maxminq train' refuses: the one
line train says (exit 2), never a listing of a run that cannot start."""

from __future__ import annotations

import pytest
from helpers import error_line

from maxminq.cli import main


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [('{"max_episode_steps": 100}', "--max-episode-steps"), ('{"seed": 3}', "--seeds")],
)
def test_an_option_of_its_own_given_as_an_env_keyword_is_refused(
    capsys, tmp_path, kwargs: str, option: str
) -> None:
    """They were listed ('--env-kwargs {"normalize": true, "max_episode_steps": 100}'
    beside '--max-episode-steps 2,000'), exit 0; train refuses them."""
    key = kwargs.split('"')[1]
    argv = ["--env", "maxminq/Catcher-v0", "--env-kwargs", kwargs]
    line = error_line(capsys, ["envs", *argv])
    said = f"--env-kwargs: {key} is not an env keyword here; use {option}"
    assert line == f"maxminq envs: error: {said}"
    # train's own words for the same keywords
    assert error_line(capsys, ["train", *argv, "--out", str(tmp_path / "run")]) == (
        f"maxminq train: error: {said}"
    )


def test_render_mode_as_an_env_keyword_is_refused(capsys) -> None:
    line = error_line(
        capsys,
        ["envs", "--env", "maxminq/Pixelcopter-v0", "--env-kwargs", '{"render_mode": "human"}'],
    )
    assert line.startswith("maxminq envs: error: --env-kwargs: render_mode is not an env keyword")


def test_a_paper_id_whose_keywords_give_continuous_actions_is_refused(capsys) -> None:
    """LunarLander-v3 with continuous=True has Box actions: train refuses it, and so does
    the listing now (it printed the paper's defaults and 'actions: Box(...)', exit 0)."""
    line = error_line(
        capsys, ["envs", "--env", "LunarLander-v3", "--env-kwargs", '{"continuous": true}']
    )
    assert line.startswith(
        "maxminq envs: error: --env: 'maxminq train --env LunarLander-v3' refuses it: "
        "LunarLander-v3 needs a discrete action space, has Box(-1.0, 1.0, (2,), float32)"
    )
    # Keywords that keep the paper's actions still list the defaults.
    assert main(["envs", "--env", "LunarLander-v3", "--env-kwargs", '{"enable_wind": true}']) == 0
    assert capsys.readouterr().out.startswith("LunarLander-v3: a paper environment")
