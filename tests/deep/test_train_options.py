"""Options of ``maxminq train`` / ``TrainConfig``: seeds, torch threads, keywords of other
libraries (SB3, CleanRL), exploration and optimizer settings; one line naming the option."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from deep_runs import TINY
from generalized_runs import _small

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.deep.policy import MODEL_FILE, load_agent, one_torch_thread
from maxminq.errors import UsageError


class _FailsAfterFirstReset(gym.Env):
    """CartPole-like spaces; a reset with any seed but 0 (``check_env``'s) raises: the
    training environments fail while the trainer is being built."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed != 0:
            raise RuntimeError("this environment breaks on the trainer's reset")
        return np.zeros(4, np.float32), {}

    def step(self, action):
        return np.zeros(4, np.float32), 0.0, True, False, {}


def _refusal(**kwargs: object) -> str:
    with pytest.raises(TypeError) as info:
        TrainConfig(env_id="CartPole-v1", **kwargs)  # type: ignore[arg-type]
    return str(info.value)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "seeds,advice",
    [
        (3, ": seeds=[3] for the one seed 3, seeds=range(3) for seeds 0 to 2"),
        ("0-4", ": a list or range in Python, e.g. seeds=range(5) for the command's 0-4"),
    ],
)
def test_seeds_as_a_number_or_the_commands_text_say_what_to_write(seeds, advice) -> None:
    """Stable-Baselines3's seed=3 (which TrainConfig's TypeError turns into seeds), or the
    command's '0-4': the error said only 'expected a list of whole numbers'."""
    with pytest.raises(UsageError) as err:
        _small(seeds=seeds).resolve()
    assert str(err.value) == f"--seeds: expected a list of whole numbers, got {seeds!r}{advice}"


def test_torch_threads_sets_and_restores_also_on_an_exception() -> None:
    from maxminq.deep.policy import torch_threads  # what training and policies share

    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with torch_threads(1):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError, match="inside"), torch_threads(1):
            raise RuntimeError("inside")
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyboardInterrupt), one_torch_thread():
            assert torch.get_num_threads() == 1
            raise KeyboardInterrupt
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        with torch_threads(2):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(saved)


def test_run_training_restores_torch_threads_when_building_the_trainer_fails(tmp_path) -> None:
    """``run_training(threads=...)`` set torch's threads before building the trainer and
    restored them in a ``finally`` that began after it: an environment failing there left
    the caller's process on the run's thread count."""
    if "LeftoverFails-v0" not in gym.registry:
        gym.register("LeftoverFails-v0", entry_point=_FailsAfterFirstReset)
    config = TrainConfig(**{**TINY, "env_id": "LeftoverFails-v0"}, agent="dqn")
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        with pytest.warns(Warning), pytest.raises(RuntimeError, match="trainer's reset"):
            run_training(config, tmp_path / "run", progress=False, threads=2)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(saved)


def test_a_bool_or_float_seed_is_refused_naming_seeds(tmp_path) -> None:
    """``seed=True`` acted as seed 1 (``True == 1``), and ``evaluate_agent(agent, [True])``
    played seed 1 and wrote ``True`` in its seed column; ``[1.0]`` was a TypeError from
    NumPy naming nothing; ``['0']`` said ``not 0``."""
    from maxminq.deep import evaluate_agent

    run_training(TrainConfig(**TINY, agent="dqn", seeds=[0, 1]), tmp_path / "run", progress=False)
    agent = load_agent(tmp_path / "run")
    obs = np.zeros(4, np.float32)
    with pytest.raises(UsageError, match=r"^--seeds: this run trained seeds \[0, 1\], not True$"):
        agent.q_values(obs, seed=True)
    with pytest.raises(UsageError, match=r"not '0'$"):
        agent.act(obs, seed="0")
    for seeds, shown in (([True], "True"), ([1.0], "1.0"), ([0, "1"], "'1'")):
        with pytest.raises(UsageError) as info:
            evaluate_agent(agent, seeds, episodes=1)
        assert str(info.value) == f"--seeds: expected the run's seeds as whole numbers, got {shown}"
    played = evaluate_agent(agent, np.array([1, 0]), episodes=1)
    assert played["seed"].tolist() == [1, 0] and played["seed"].dtype == np.int64
    assert [type(s) for s in played["seed"].tolist()] == [int, int]


def test_bad_threads_are_refused_before_overwrite_deletes_the_run(tmp_path) -> None:
    """``run_training(..., overwrite=True, threads=0)`` deleted the finished run in the
    folder, then failed in torch (``RuntimeError: set_num_threads expects a positive
    integer``): the run was lost to a bad argument."""
    config = TrainConfig(**TINY, agent="dqn")
    out = tmp_path / "run"
    run_training(config, out, progress=False)
    before = sorted(p.name for p in out.iterdir())
    assert "runs.csv" in before and MODEL_FILE in before
    for threads, shown in ((0, "0"), (-1, "-1"), (1.5, "1.5"), ("2", "'2'"), (True, "True")):
        with pytest.raises(UsageError) as info:
            run_training(config, out, progress=False, overwrite=True, threads=threads)
        assert str(info.value) == f"--threads: expected a whole number >= 1, got {shown}"
    assert sorted(p.name for p in out.iterdir()) == before


@pytest.mark.usefixtures("torch_one_thread")
def test_train_help_says_what_registry_defaults_are(capsys):
    """Half of ``maxminq train --help``'s defaults read '(registry)', never explained."""
    with pytest.raises(SystemExit) as done:
        main(["train", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(registry): the default is the paper's setting for --env" in text
    assert "'maxminq envs --env ID' lists what a run on ID uses" in text
    assert "--env module:EnvId" in text
    assert "test episodes per seed after training (default 100; 0: none)" in text


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "keyword,meant",
    [
        ("learning_rate", "did you mean lr?"),
        ("total_timesteps", "did you mean steps (environment steps per seed)?"),
        ("seed", "did you mean seeds, a list of seeds, trained together: seeds=[0]?"),
        ("exploration_fraction", "did you mean eps_decay_steps, in steps after learning_starts"),
        ("target_network_frequency", "did you mean target_update"),
        ("bath_size", "did you mean batch_size?"),
    ],
)
def test_a_keyword_of_sb3_or_cleanrl_or_a_typo_names_the_field_meant(keyword, meant):
    """TrainConfig(learning_rate=...), as Stable-Baselines3's DQN takes it, was Python's
    bare 'unexpected keyword argument': still a TypeError, now with the field meant."""
    with pytest.raises(TypeError) as err:
        TrainConfig(env_id="CartPole-v1", **{keyword: 1})
    msg = str(err.value)
    assert msg.startswith(f"TrainConfig.__init__() got an unexpected keyword argument {keyword!r}")
    assert meant in msg, msg


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "agent,n,members,said",
    [
        ("dqn", 1, 2, "dqn with n = 1 has one online net to update (several: Maxmin or Ensemble"),
        ("averaged-dqn", 3, 2, "averaged-dqn with n = 3 has one online net to update"),
        ("maxmin-dqn", 1, 3, "maxmin-dqn with n = 1 has one online net to update (--n 3 or more"),
    ],
)
def test_update_members_of_an_agent_with_one_online_net_says_why(agent, n, members, said):
    """--update-members 2 with DQN was 'must be between 1 and 1'."""
    cfg = TrainConfig(env_id="CartPole-v1", agent=agent, n=n, update_members=members)
    with pytest.raises(UsageError) as err:
        cfg.resolve()
    msg = str(err.value)
    assert msg.startswith(f"--update-members: {said}"), msg
    assert msg.endswith(f"so it must be 1, got {members}") and "between 1 and 1" not in msg, msg


def test_n_steps_is_not_taken_for_the_runs_length() -> None:
    msg = _refusal(n_steps=5)
    assert "did you mean" not in msg, msg
    assert msg.startswith("TrainConfig.__init__() got an unexpected keyword argument 'n_steps'; ")
    assert "no equivalent here" in msg and "one-step" in msg
    assert "not the run's length, which is steps" in msg


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("train_freq", "one learning update every environment step from learning_starts on"),
        ("gradient_steps", "(train_freq=1, gradient_steps=1)"),
        ("train_frequency", "one learning update every environment step"),
        ("tau", "copied whole (their tau=1) every target_update steps"),
        ("replay_buffer_class", "a uniform replay of buffer_size transitions per seed"),
        ("device", "training runs on the CPU"),
        ("cuda", "training runs on the CPU"),
        ("verbose", "run_training(..., progress=False)"),
    ],
)
def test_keywords_with_no_field_here_say_what_maxminq_does(name: str, said: str) -> None:
    msg = _refusal(**{name: 1})
    assert f"; no equivalent here ({name} is Stable-Baselines3's or CleanRL's): " in msg, msg
    assert said in msg, msg


def test_sb3s_policy_is_the_network_and_its_same_named_keywords_are_taken() -> None:
    msg = _refusal(policy="MlpPolicy")
    assert "; did you mean network, 'mlp' or 'minatar_cnn'" in msg, msg
    c = TrainConfig(
        env_id="CartPole-v1", learning_starts=7, buffer_size=100, batch_size=8, gamma=0.9
    )
    assert (c.learning_starts, c.buffer_size, c.batch_size, c.gamma) == (7, 100, 8, 0.9)


def test_exploration_fraction_is_told_how_to_become_a_step_count():
    """SB3's and CleanRL's exploration_fraction (0.1: eps reaches its end at a tenth of
    total_timesteps, counted from step 0) was told eps_decay_steps is 'in steps after
    learning_starts, not a fraction of the run' but not how to get the step count; here the
    decay starts at learning_starts, so the same end is f * T - learning_starts."""
    with pytest.raises(TypeError) as err:
        TrainConfig(exploration_fraction=0.1)
    assert str(err.value) == (
        "TrainConfig.__init__() got an unexpected keyword argument 'exploration_fraction'; "
        "did you mean eps_decay_steps, in steps after learning_starts, not a fraction of the "
        "run: exploration_fraction * total_timesteps - learning_starts ends the decay at the "
        "same step? (exploration_fraction is Stable-Baselines3's or CleanRL's)"
    )


def test_update_members_below_1_is_told_so_not_what_gives_more():
    """update_members=0 (Python or a sweep config) for an agent with one online net was told
    it 'has one online net to update (--n 2 or more gives it more), so it must be 1': the
    remedy for too many, to one who gave too few."""
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="CartPole-v1", agent="maxmin-dqn", n=1, update_members=0).resolve()
    assert str(err.value) == "--update-members: must be >= 1, got 0"


def test_optimizer_class_is_told_optimizer_not_optimizer_kwargs():
    """Stable-Baselines3's optimizer_class=th.optim.Adam was told 'did you mean
    optimizer_kwargs?' (a close spelling), where the optimizer is chosen by name."""
    with pytest.raises(TypeError) as err:
        TrainConfig(optimizer_class=object)
    assert str(err.value).endswith(
        "; did you mean optimizer, a name: 'adam', 'rmsprop' or 'centered_rmsprop' (its "
        "settings: optimizer_kwargs)? (optimizer_class is Stable-Baselines3's or CleanRL's)"
    ), str(err.value)
