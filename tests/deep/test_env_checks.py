"""The checks of an environment before training (``deep.env_checks``): one reset and step,
observation shapes and images, repeatable seeding, refused keywords, each in one line."""

from __future__ import annotations

import ast
import importlib
import random
import re
import textwrap
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from deep_runs import TINY
from line_env import StepsEnv
from own_env_classes import _Line
from steps_env_runs import _register
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.deep.config import EnvWarning
from maxminq.deep.env_checks import warn_if_not_repeatable
from maxminq.deep.policy import load_agent
from maxminq.deep.train import Trainer
from maxminq.envs.api import make_with_kwargs
from maxminq.envs.registry import get_env_defaults
from maxminq.errors import UsageError

ENV_MODULE = "own_envs_deep22b"


ENV_SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    class NoSuperReset(gym.Env):
        # draws from self.np_random, but its reset never seeds it
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            self.t = 0
            self.x = self.np_random.uniform(-0.5, 0.5, 2).astype(np.float32)
            return self.x, {}

        def step(self, action):
            self.t += 1
            self.x = np.clip(self.x + self.np_random.normal(0, 0.1, 2), -1, 1)
            self.x = self.x.astype(np.float32)
            return self.x, float(action), False, self.t >= 20, {}


    class SuperWithoutSeed(NoSuperReset):
        def reset(self, *, seed=None, options=None):
            gym.Env.reset(self)  # super().reset() in a gym.Env, the seed left out
            return NoSuperReset.reset(self, seed=seed)


    class Seeded(NoSuperReset):
        def reset(self, *, seed=None, options=None):
            gym.Env.reset(self, seed=seed)  # what super().reset(seed=seed) does in a gym.Env
            return NoSuperReset.reset(self, seed=seed)


    class Carried(gym.Env):
        # no random numbers at all, no super().reset: a counter kept across episodes
        observation_space = gym.spaces.Box(0.0, 1e9, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)
        resets = 0

        def reset(self, *, seed=None, options=None):
            self.resets += 1
            return np.array([self.resets], np.float32), {}

        def step(self, action):
            return np.array([self.resets], np.float32), 0.0, True, False, {}


    for name in ("NoSuperReset", "SuperWithoutSeed", "Seeded", "Carried"):
        gym.register(id=f"{name}-v0", entry_point=f"{__name__}:{name}")
    """
)


@pytest.fixture
def own_envs(tmp_path):
    """The user's module of environments, importable for the test, forgotten after."""
    with user_module(tmp_path / "user", ENV_MODULE, ENV_SOURCE) as name:
        yield importlib.import_module(name)


def _repeatable_warnings(env: str) -> list[str]:
    cfg = TrainConfig(env_id=f"{ENV_MODULE}:{env}-v0", agent="dqn", steps=50, seeds=[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_not_repeatable(cfg.resolve())
    return [str(w.message) for w in caught if w.category is EnvWarning]


def _refusal(network: str, shape: tuple[int, ...]) -> str:
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="my_envs:Img-v0", network=network).check_observation_shape(shape)
    return str(err.value)


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


class _OldGymApi(gym.Env):
    """The old Gym API: reset() -> obs, step() -> 4 values."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.zeros(3, np.float32)

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, False, {}


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


class _Scalar(StepsEnv):
    """One number: the step count."""

    observation_space = gym.spaces.Box(0.0, 10.0, (), np.float32)

    def _obs(self) -> np.ndarray:
        return np.array(self.t, np.float32)


class _Matrix(StepsEnv):
    """A (2, 3) matrix of features."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2, 3), np.float32)

    def _obs(self) -> np.ndarray:
        return np.stack([super()._obs(), np.full(3, 0.5, np.float32)])


class _Gray(StepsEnv):
    """A one-channel 5 x 5 image (H, W): the step count as a lit pixel."""

    observation_space = gym.spaces.Box(0.0, 1.0, (5, 5), np.float32)

    def _obs(self) -> np.ndarray:
        img = np.zeros((5, 5), np.float32)
        img.flat[self.t] = 1.0
        return img


class _Image(_Gray):
    """A channels-first image (1, 5, 5)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1, 5, 5), np.float32)

    def _obs(self) -> np.ndarray:
        return super()._obs()[None]


class _ImageLast(_Gray):
    """A channels-last image (5, 5, 1)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (5, 5, 1), np.float32)

    def _obs(self) -> np.ndarray:
        return super()._obs()[..., None]


def _stacked(**kwargs):
    """Two frames of _Image: (2, 1, 5, 5)."""
    return gym.wrappers.FrameStackObservation(_Image(**kwargs), 2)


def _stacked_last(**kwargs):
    """Two frames of _ImageLast: (2, 5, 5, 1)."""
    return gym.wrappers.FrameStackObservation(_ImageLast(**kwargs), 2)


def _suggested(entry, message: str, which: int = 0):
    """``entry`` wrapped in the ``which``-th gymnasium.wrappers call the message suggests,
    with the arguments it gives there."""
    calls = re.findall(r"gymnasium\.wrappers\.(\w+)\(env((?:, \([\d, ]*\))?)\)", message)
    name, args = calls[which]
    extra = [ast.literal_eval(args[2:])] if args else []

    def made(**kwargs):
        return getattr(gym.wrappers, name)(entry(**kwargs), *extra)

    made.__name__ = f"{entry.__name__.strip('_')}_{name}{which}"
    return made


def _trains(env_id: str, tmp_path: Path) -> pd.DataFrame:
    cfg = TrainConfig(env_id=env_id, agent="maxmin-dqn", n=2, steps=30, seeds=[0],
                      learning_starts=10, buffer_size=50, batch_size=4, eval_episodes=1,
                      checkpoint_every=0)  # fmt: skip
    return run_training(cfg, tmp_path / env_id.replace("/", "_"), progress=False)


class _DrawsWhenMade(_Line):
    """Draws from np.random and random when made (a map, say), never while it plays."""

    def __init__(self):
        self.layout = (np.random.rand(), random.random())  # noqa: NPY002, S311


_made = {"count": 0}


class _OnceOnly(_Line):
    """Can be made once only (a port, a licence, a window); the second fails."""

    def __init__(self):
        _made["count"] += 1
        if _made["count"] > 1:
            raise RuntimeError("already made")


gym.register("R20DrawsWhenMade-v0", entry_point=_DrawsWhenMade, max_episode_steps=20)


gym.register("R20OnceOnly-v0", entry_point=_OnceOnly, max_episode_steps=20)


def _cfg(env_id: str):
    return TrainConfig(env_id=env_id, seeds=[0], steps=100).resolve()


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("env", ["NoSuperReset", "SuperWithoutSeed"])
def test_a_reset_that_does_not_seed_np_random_is_told_to_call_super_reset(own_envs, env):
    (said,) = _repeatable_warnings(env)
    assert "because its reset does not seed self.np_random, which it draws from" in said
    assert "(call super().reset(seed=seed) first in your reset)" in said
    assert "state carried" not in said and "sample()" not in said


@pytest.mark.usefixtures("torch_one_thread")
def test_other_unrepeatable_envs_keep_the_general_text(own_envs):
    # Carried never draws from np_random: super().reset(seed=seed) would not mend it
    (said,) = _repeatable_warnings("Carried")
    assert "(state carried from one episode to the next, or random numbers" in said
    assert "super().reset" not in said
    assert _repeatable_warnings("Seeded") == []  # the same env seeded: repeatable, no word


@pytest.mark.usefixtures("torch_one_thread")
def test_mlp_on_a_channels_last_image_is_not_sent_to_minatar_cnn():
    # minatar_cnn refuses channels-last images: the MLP's error said 'use minatar_cnn'
    said = _refusal("mlp", (8, 8, 3))
    start = "--network: mlp takes 1-D feature vectors, my_envs:Img-v0 gives (8, 8, 3)"
    assert said.startswith(start)
    assert "use --network minatar_cnn" not in said
    assert "channels last? move them first: (3, 8, 8)" in said
    assert "gymnasium.wrappers.FlattenObservation(env), 192 features" in said
    # the MinAtar network's refusal of the same image gives the same remedy
    remedy = said[said.index("(channels last?") :]
    assert _refusal("minatar_cnn", (8, 8, 3)).endswith(remedy)
    # an image minatar_cnn reads as it is: that network, or flatten for the MLP
    said = _refusal("mlp", (4, 10, 10))
    assert "(use --network minatar_cnn, or flatten them for mlp: " in said
    assert "FlattenObservation(env), 400 features" in said


def test_check_env_resets_and_steps_its_environment_once() -> None:
    if "LeftoverCounting-v0" not in gym.registry:
        gym.register("LeftoverCounting-v0", entry_point=_CountingEnv, max_episode_steps=5)
    cfg = TrainConfig(**{**TINY, "env_id": "LeftoverCounting-v0"}, agent="dqn").resolve()
    _CountingEnv.resets = _CountingEnv.steps = 0
    Trainer.check_env(cfg)
    assert (_CountingEnv.resets, _CountingEnv.steps) == (1, 1)


def test_check_env_still_names_the_old_gym_api_in_one_line() -> None:
    if "LeftoverOldApi-v0" not in gym.registry:
        gym.register("LeftoverOldApi-v0", entry_point=_OldGymApi, max_episode_steps=5)
    cfg = TrainConfig(**{**TINY, "env_id": "LeftoverOldApi-v0"}, agent="dqn").resolve()
    with pytest.raises(UsageError, match=r"reset\(\) returned ndarray; Gymnasium's API"):
        Trainer.check_env(cfg)


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


@pytest.mark.usefixtures("torch_one_thread")
def test_channels_last_images_get_a_wrapper_that_fixes_them():
    """A (H, W, C) image was told 'move them first' without how, where every other
    refused observation gets the Gymnasium wrapper that fits it."""
    cfg = TrainConfig(env_id="my_envs:Rgb-v0", network="minatar_cnn")
    with pytest.raises(UsageError) as err:
        cfg.check_observation_shape((5, 5, 3))
    msg = str(err.value)
    wrapper = "TransformObservation(env, lambda o: np.moveaxis(o, -1, 0), a Box of shape (3, 5, 5))"
    assert wrapper in msg, msg
    moved = (lambda o: np.moveaxis(o, -1, 0))(np.zeros((5, 5, 3), np.uint8))
    cfg.check_observation_shape(moved.shape)  # what the hint makes is taken


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "entry,which,hint,trained_shape",
    [
        (_Scalar, 0, "one feature: gymnasium.wrappers.ReshapeObservation(env, (1,))", (1,)),
        (_Matrix, 0, "a (2, 3) matrix of features: gymnasium.wrappers.FlattenObservation(env), "
                     "6 features", (6,)),
        (_Gray, 1, "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                   "(1, 5, 5))", (1, 5, 5)),
        (_stacked, 0, "2 stacked channels-first images (k, C, H, W)? merge the stack into the "
                      "channels, (2, 5, 5): gymnasium.wrappers.ReshapeObservation(env, "
                      "(2, 5, 5))", (2, 5, 5)),
    ],
)  # fmt: skip
def test_an_observation_of_0_2_or_4_dimensions_gets_the_wrapper_that_fits_and_it_trains(
    entry, which, hint, trained_shape, tmp_path
) -> None:
    """The refusal suggested FlattenObservation 'for a Dict, Tuple or Discrete space' only,
    whatever the space (a scalar Box, a matrix, a stack of images)."""
    with pytest.raises(UsageError, match="^--env: .* expected a 1-D feature vector") as info:
        get_env_defaults(_register(entry))
    message = str(info.value)
    assert hint in message, message
    assert "in an entry point of yours that returns the wrapped environment" in message
    wrapped = _register(_suggested(entry, message, which))
    tables = _trains(wrapped, tmp_path)
    assert tables["runs"]["status"].tolist() == ["done"]
    assert len(tables["tests"]) == 1 and tables["tests"]["length"].tolist() == [6]
    assert load_agent(tmp_path / wrapped.replace("/", "_")).obs_shape == trained_shape


@pytest.mark.usefixtures("torch_one_thread")
def test_a_stack_of_channels_last_images_is_told_to_move_the_channels_and_then_trains(
    tmp_path,
) -> None:
    """(k, H, W, C) from FrameStackObservation of a channels-last image: merged as told."""
    with pytest.raises(UsageError) as info:
        get_env_defaults(_register(_stacked_last))
    message = str(info.value)
    assert (
        "2 stacked channels-last images (k, H, W, C)? move the channels first and merge them "
        "with the stack into (2, 5, 5): gymnasium.wrappers.TransformObservation(env, lambda o: "
        "np.moveaxis(o, -1, 1).reshape(2, 5, 5), a Box of shape (2, 5, 5))"
    ) in message, message

    def moved(**kwargs):  # as the message says
        box = gym.spaces.Box(0.0, 1.0, (2, 5, 5), np.float32)
        return gym.wrappers.TransformObservation(
            _stacked_last(**kwargs), lambda o: np.moveaxis(o, -1, 1).reshape(2, 5, 5), box
        )

    tables = _trains(_register(moved), tmp_path)
    assert tables["runs"]["status"].tolist() == ["done"]


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "shape,image",
    [
        ((2, 3), None),  # (1, 2, 3) would be refused by minatar_cnn: too small, not square
        ((5, 5), "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                 "(1, 5, 5)); either"),
        ((6, 8), "a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation(env, "
                 "(1, 6, 8)), then square (minatar_cnn takes H = W); either"),
    ],
)  # fmt: skip
def test_a_matrix_is_offered_as_an_image_only_where_the_network_could_take_it(shape, image):
    """The hint offered every matrix as a one-channel image, and the (1, 2, 3) image it gave
    for a (2, 3) matrix was then refused by minatar_cnn (not square, below 3 x 3)."""
    from maxminq.envs.registry import _observation_hint

    hint = _observation_hint(gym.spaces.Box(0.0, 1.0, shape, np.float32))
    assert hint.startswith(f"a {shape} matrix of features: gymnasium.wrappers.Flatten"), hint
    if image is None:
        assert "image" not in hint, hint
    else:
        assert image in hint, hint


def test_draws_of_the_constructor_are_put_back_so_a_seeded_run_is_unchanged():
    """A user who seeds np.random and random and whose environment draws from them when
    made got the same environments from run_training before the check: the check's own
    environment drew first, so the run's got other numbers (and no warning said why)."""
    cfg = _cfg("R20DrawsWhenMade-v0")
    np.random.seed(123)  # noqa: NPY002
    random.seed(123)
    expected = (np.random.rand(), random.random())  # noqa: NPY002, S311
    np.random.seed(123)  # noqa: NPY002
    random.seed(123)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either: its plays draw nothing
        warn_if_not_repeatable(cfg)
    assert (np.random.rand(), random.random()) == expected  # noqa: NPY002, S311


def test_an_environment_that_fails_to_be_made_again_is_left_to_the_run():
    """An environment whose make fails when the check makes one more (one that can be made
    only so many times: a licence, a port): the check's make was outside its guard and
    its error stopped the run before training; now the check gives up in silence."""
    _made["count"] = 0
    cfg = _cfg("R20OnceOnly-v0")  # resolve() made the first
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_not_repeatable(cfg)
    assert _made["count"] == 2  # the check did try to make one
