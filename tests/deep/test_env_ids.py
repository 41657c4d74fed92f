"""How ``--env`` names an environment of one's own: a module:Class, a registered class or
spec, the id a user is told to write; the env-id check in a forked process."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from own_env_classes import _Line

from maxminq.deep import TrainConfig
from maxminq.envs import make
from maxminq.errors import UsageError


def _answer_in_child(env_id: str, answers) -> None:
    from maxminq.deep.config import env_id_elsewhere

    answers.put(env_id_elsewhere(env_id))


gym.register("R20Line-v0", entry_point=_Line, max_episode_steps=20)


def test_a_forked_process_asks_again_instead_of_waiting_for_its_parents_thread() -> None:
    """A process forked while the check was under way in a thread (a sweep's worker) has
    no such thread: it waited forever for its answer."""
    import multiprocessing

    from gymnasium.envs.classic_control import CartPoleEnv

    from maxminq.deep.config import start_env_id_check

    if "LeftoverForked-v0" not in gym.registry:
        gym.register("LeftoverForked-v0", entry_point=CartPoleEnv, max_episode_steps=50)
    ctx = multiprocessing.get_context("fork")
    answers = ctx.Queue()
    start_env_id_check("LeftoverForked-v0")
    child = ctx.Process(target=_answer_in_child, args=("LeftoverForked-v0", answers))
    child.start()  # at once: the parent's new interpreter is still starting
    child.join(timeout=30)
    if child.is_alive():
        child.kill()
        child.join()
    assert child.exitcode == 0
    assert "registered in this process only" in answers.get(timeout=5)


@pytest.mark.usefixtures("torch_one_thread")
def test_an_env_spec_as_env_id_is_a_usage_error_naming_its_id():
    """The docs say an EnvSpec given as env_id is refused naming its id: resolve() raised
    a TypeError (unhashable type: 'EnvSpec') from the registry's lookup instead."""
    with pytest.raises(UsageError, match="got an EnvSpec; .* give its id, 'CartPole-v1'"):
        TrainConfig(env_id=gym.spec("CartPole-v1"), agent="dqn").resolve()


def test_a_class_is_told_the_id_named_after_it_not_a_scripts_own_id_of_it() -> None:
    """A script (or another test in the same process) registering CartPoleEnv under an id of
    its own that sorts first ('AaaMine-v0') made ``make(CartPoleEnv)`` advise that id,
    which no other process knows, instead of 'CartPole-v1' (seen in CI under -n 2)."""
    assert "AaaMine-v0" not in gym.registry
    gym.register("AaaMine-v0", entry_point=CartPoleEnv, max_episode_steps=50)
    try:
        advice = r"the class CartPoleEnv; .* give its id, 'CartPole-v1'$"
        with pytest.raises(UsageError, match=advice):
            make(CartPoleEnv)
    finally:
        del gym.registry["AaaMine-v0"]


def test_an_instance_of_a_registered_class_made_directly_is_told_its_id():
    """env_id=Line() (as Stable-Baselines3's DQN('MlpPolicy', Line()) takes it), its class
    registered as R20Line-v0: the class itself was told its id, the instance (no spec, as
    made without gym.make) only to 'register it with gymnasium.register'."""
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id=_Line()).resolve()
    assert str(err.value).endswith(
        "give its id with the module that registers it (module:EnvId), e.g. "
        f"'{_Line.__module__}:R20Line-v0'"
    ), str(err.value)
