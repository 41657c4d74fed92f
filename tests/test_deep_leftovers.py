"""Leftovers of the deep agents' training and evaluation (session 16): the agent's name in
``maxminq evaluate``, one way to set torch's threads, one reset in ``Trainer.check_env``,
Gymnasium's refusal of ``--env-kwargs`` on one line, the published models' checksums."""

from __future__ import annotations

import pathlib

import gymnasium as gym
import numpy as np
import pytest
import torch

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.deep.policy import MODEL_FILE, load_agent, one_torch_thread
from maxminq.deep.train import Trainer
from maxminq.envs.api import make_with_kwargs
from maxminq.errors import UsageError

ROOT = pathlib.Path(__file__).resolve().parents[1]

TINY = dict(
    env_id="CartPole-v1",
    steps=200,
    learning_starts=100,
    eval_episodes=1,
    checkpoint_every=0,
    bias_every=100,
    buffer_size=200,
)


# --- maxminq evaluate names the agent as plot and compare do ------------------------------


def test_evaluate_names_the_agent_as_plot_and_compare_do(tmp_path, capsys) -> None:
    """``maxminq evaluate`` printed ``maxmin-dqn (n = 2)`` (the option's spelling) where the
    figures, ``plot`` and ``compare`` say ``Maxmin DQN (N=2)``."""
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "maxmin-dqn", "--n", "2"]
    argv += ["--steps", "200", "--learning-starts", "100", "--eval-episodes", "1"]
    argv += ["--checkpoint-every", "0", "--out", str(out), "--no-progress", "--no-plot"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header == "Maxmin DQN (N=2) on CartPole-v1, eps = 0.0, 1 episode:"


# --- torch's threads: one context manager, restored on every way out ----------------------


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


# --- Trainer.check_env resets its environment once ----------------------------------------


class _CountingEnv(gym.Env):
    """Counts its resets and steps (class-wide: every instance)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)
    resets = 0
    steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        type(self).resets += 1
        return np.zeros(3, np.float32), {}

    def step(self, action):
        type(self).steps += 1
        return np.ones(3, np.float32), 1.0, False, False, {}


def test_check_env_resets_and_steps_its_environment_once() -> None:
    if "LeftoverCounting-v0" not in gym.registry:
        gym.register("LeftoverCounting-v0", entry_point=_CountingEnv, max_episode_steps=5)
    cfg = TrainConfig(**{**TINY, "env_id": "LeftoverCounting-v0"}, agent="dqn").resolve()
    _CountingEnv.resets = _CountingEnv.steps = 0
    Trainer.check_env(cfg)
    assert (_CountingEnv.resets, _CountingEnv.steps) == (1, 1)


class _OldGymApi(gym.Env):
    """The old Gym API: reset() -> obs, step() -> 4 values."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.zeros(3, np.float32)

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, False, {}


def test_check_env_still_names_the_old_gym_api_in_one_line() -> None:
    if "LeftoverOldApi-v0" not in gym.registry:
        gym.register("LeftoverOldApi-v0", entry_point=_OldGymApi, max_episode_steps=5)
    cfg = TrainConfig(**{**TINY, "env_id": "LeftoverOldApi-v0"}, agent="dqn").resolve()
    with pytest.raises(UsageError, match=r"reset\(\) returned ndarray; Gymnasium's API"):
        Trainer.check_env(cfg)


# --- an environment's refusal of --env-kwargs, once ----------------------------------------


@pytest.mark.parametrize(
    ("env_id", "kwargs", "why"),
    [
        (
            "CartPole-v1",
            {"bad": 1},
            "CartPoleEnv.__init__() got an unexpected keyword argument 'bad' (its keywords: "
            "sutton_barto_reward)",
        ),
        (
            "maxminq/Catcher-v0",
            {"bad": 1},
            "GameEnv.__init__() got an unexpected keyword argument 'bad' (its keywords: normalize)",
        ),
        (
            "maxminq/MinAtar-Breakout-v0",
            {"bad": 1},
            "MinAtarEnv.__init__() got an unexpected keyword argument 'bad' (its keywords: "
            "sticky_action_prob, difficulty_ramping, minimal_action_set, obs_dtype, "
            "render_scale)",
        ),
        (
            "Acrobot-v1",
            {"x": 1},
            "AcrobotEnv.__init__() got an unexpected keyword argument 'x' (it takes no keywords)",
        ),
        (
            "LunarLander-v3",
            {"gravity": "x"},
            "'<' not supported between instances of 'float' and 'str'",
        ),
    ],
)
def test_refused_env_kwargs_are_one_line_quoting_them_once(env_id, kwargs, why) -> None:
    """Gymnasium re-raises a constructor's error with ``... was raised from the environment
    creator for ID with kwargs ({...})`` appended: after ours, the keywords were quoted
    twice (the second time with the registry's own beside them). An unknown keyword is
    answered with the ones the environment takes (besides render_mode and what its id
    fixes, MinAtar's game)."""
    with pytest.raises(UsageError) as info:
        make_with_kwargs(env_id, kwargs)
    text = str(info.value)
    assert text.startswith(f"--env-kwargs: {env_id} refused ")
    assert text.endswith(f": {why}")
    assert "\n" not in text and "environment creator" not in text


def test_refused_env_kwargs_on_the_command_line(tmp_path, capsys) -> None:
    argv = ["train", "--env", "CartPole-v1", "--env-kwargs", '{"bad": 1}', "--steps", "100"]
    assert main([*argv, "--out", str(tmp_path / "run"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        'maxminq train: error: --env-kwargs: CartPole-v1 refused {"bad": 1}: '
        "CartPoleEnv.__init__() got an unexpected keyword argument 'bad' (its keywords: "
        "sutton_barto_reward)"
    )


class _NeedsSize(gym.Env):
    """An environment that needs a keyword, and refuses an unknown ``level`` (KeyError)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, size, level="easy"):
        self.size = size + {"easy": 0, "hard": 1}[level]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, True, False, {}


def test_missing_and_refused_keywords_of_ones_own_environment_are_quoted_once() -> None:
    """The same for an environment needing a keyword (``TrainConfig.resolve``'s error) and
    for a KeyError (its text is the key's repr, named with its type)."""
    if "LeftoverNeedsSize-v0" not in gym.registry:
        gym.register("LeftoverNeedsSize-v0", entry_point=_NeedsSize, max_episode_steps=5)
    with pytest.raises(UsageError) as info:
        TrainConfig("LeftoverNeedsSize-v0").resolve()
    assert str(info.value) == (
        "--env: LeftoverNeedsSize-v0 cannot be built without keywords (TypeError: "
        "_NeedsSize.__init__() missing 1 required positional argument: 'size'); pass them "
        "with --env-kwargs"
    )
    with pytest.raises(UsageError) as info:
        make_with_kwargs("LeftoverNeedsSize-v0", {"size": 3, "level": "medium"})
    assert str(info.value) == (
        '--env-kwargs: LeftoverNeedsSize-v0 refused {"size": 3, "level": "medium"}: '
        "KeyError: 'medium'"
    )


# --- the published models load, and those with a checksum verify ---------------------------


def test_every_published_model_loads_and_the_checksummed_ones_verify(tmp_path) -> None:
    """``model.pt`` and checkpoints have digests of their own: two published models
    (MinAtar Seaquest, Space Invaders) carry model.pt's, which a shared digest would have
    to keep verifying. A byte changed in their weights is refused."""
    models = sorted(ROOT.glob("docs/runs/*/*/" + MODEL_FILE))
    assert len(models) == 17
    with_sum = []
    for path in models:
        agent = load_agent(path.parent)  # verifies the checksum where there is one
        assert agent.status and set(agent.status) <= {"done", "diverged"}
        if "sha256" in torch.load(path, weights_only=True):
            with_sum.append(path.parent.parent.name)
    assert with_sum == ["minatar-seaquest", "minatar-space-invaders"]
    # The check is real: one weight changed in a copy of a checksummed model is refused.
    state = torch.load(ROOT / "docs/runs" / with_sum[0] / "dqn" / MODEL_FILE, weights_only=True)
    state["online"][0, 0] += 1.0
    (tmp_path / "copy").mkdir()
    torch.save(state, tmp_path / "copy" / MODEL_FILE)
    with pytest.raises(UsageError, match="do not match their checksum"):
        load_agent(tmp_path / "copy")


# --- the env-id check: a new interpreter, asked early, answers as before -------------------


def test_the_env_id_check_starts_early_and_still_warns(tmp_path, capsys) -> None:
    """``EnvIdWarning`` asks a new interpreter whether it knows a bare id (0.2-0.5 s here):
    ``maxminq train`` now starts it before importing torch and checking the run, and waited
    0.18-0.20 s for it after them before (0.000 s now). The answers are the same: a
    script-registered id is warned about, Gymnasium's own and module:EnvId ids are not,
    maxminq's ids start no interpreter."""
    from gymnasium.envs.classic_control import CartPoleEnv

    from maxminq.deep import config
    from maxminq.deep.config import env_id_elsewhere, start_env_id_check

    for env_id in ("LeftoverOnlyHere-v0", "LeftoverOnlyHereToo-v0"):
        if env_id not in gym.registry:  # as a user's script registers its own env
            gym.register(env_id, entry_point=CartPoleEnv, max_episode_steps=50)
    start_env_id_check("maxminq/Catcher-v0")
    start_env_id_check("line_env:Line-v0")
    start_env_id_check("LeftoverOnlyHere-v0")
    assert "maxminq/Catcher-v0" not in config._FRESH and "line_env:Line-v0" not in config._FRESH
    assert "LeftoverOnlyHere-v0" in config._FRESH  # asked, answered or not yet
    assert "registered in this process only" in (env_id_elsewhere("LeftoverOnlyHere-v0") or "")
    assert env_id_elsewhere("Acrobot-v1") is None
    argv = ["train", "--env", "LeftoverOnlyHereToo-v0", "--agent", "dqn", "--steps", "50"]
    argv += ["--eval-episodes", "1", "--checkpoint-every", "0", "--out", str(tmp_path / "run")]
    capsys.readouterr()
    assert main([*argv, "--no-progress", "--no-plot"]) == 0
    err = capsys.readouterr().err
    said = "maxminq train: warning: --env: 'LeftoverOnlyHereToo-v0' is registered in this process"
    assert err.count(said) == 1


def _answer_in_child(env_id: str, answers) -> None:
    from maxminq.deep.config import env_id_elsewhere

    answers.put(env_id_elsewhere(env_id))


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


def test_resume_names_differing_keyword_options_as_json(tmp_path) -> None:
    """``--resume`` with other ``--env-kwargs`` named them as Python's ``{'x': True}``,
    which ``--env-kwargs`` (JSON) does not take back."""
    config = TrainConfig(**{**TINY, "checkpoint_every": 100}, agent="dqn")
    run_training(config, tmp_path / "run", progress=False, stop_after=100)
    other = TrainConfig(
        **{**TINY, "checkpoint_every": 100},
        agent="dqn",
        env_kwargs={"sutton_barto_reward": True},
        optimizer_kwargs={"alpha": 0.9},
    )
    with pytest.raises(UsageError) as info:
        run_training(other, tmp_path / "run", progress=False)
    text = str(info.value)
    assert '--env-kwargs default (now {"sutton_barto_reward": true})' in text
    assert '--optimizer-kwargs {} (now {"alpha": 0.9})' in text  # CartPole: torch's


# --- a trained agent's seeds are whole numbers ---------------------------------------------


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


# --- run_training's threads are checked before --out is touched ---------------------------


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
