"""``make_vector(..., autoreset_mode=...)``: SAME_STEP (what it builds) is taken; another
mode is a one-line UsageError naming the option and the ``gymnasium.make_vec`` call that
builds it. It went on to the environment's constructor ('MinAtarEnv.__init__() got an
unexpected keyword argument', as if the game refused it)."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.vector import AutoresetMode

from maxminq.envs import make_vector
from maxminq.errors import UsageError

IDS = ["maxminq/Catcher-v0", "maxminq/MinAtar-Breakout-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_same_step_is_what_make_vector_builds(env_id: str) -> None:
    for mode in (AutoresetMode.SAME_STEP, "SameStep"):
        venv = make_vector(env_id, seeds=[0, 1], autoreset_mode=mode)
        assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP


@pytest.mark.parametrize("env_id", IDS)
def test_another_mode_names_the_option_and_make_vec(env_id: str) -> None:
    with pytest.raises(UsageError) as err:
        make_vector(env_id, seeds=[0, 1], autoreset_mode=AutoresetMode.NEXT_STEP)
    said = str(err.value)
    assert said.startswith("autoreset_mode: make_vector's vector envs reset a finished sub-env")
    assert (
        f"gymnasium.make_vec({env_id!r}, num_envs=n, vector_kwargs="
        "{'autoreset_mode': AutoresetMode.NEXT_STEP})" in said
    )
    # The call it names builds that mode.
    venv = gym.make_vec(
        env_id, num_envs=2, vector_kwargs={"autoreset_mode": AutoresetMode.NEXT_STEP}
    )
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
