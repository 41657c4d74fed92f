"""Training Maxmin DQN and its baselines on one's own Gymnasium environment: environments
whose state outlives an episode (a wrapper's running statistics, a reward that drifts),
non-finite values that come only in the test episodes, no time limit from Python, a
constructor that requires ``render_mode``, action spaces the agents cannot take."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from line_env import NonFiniteEnv, StepsEnv

from maxminq.cli import main
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.policy import evaluate_agent, load_agent
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import CannotResumeError, UsageError


class _DriftingReward(StepsEnv):
    """The reward of action 1 shrinks with the episodes this instance has played: the
    observations replay exactly from a reset seed and actions, the rewards do not."""

    def reset(self, *, seed=None, options=None):
        self.played = getattr(self, "played", -1) + 1
        return super().reset(seed=seed)

    def step(self, action):
        obs, reward, *rest = super().step(action)
        return obs, reward / (1 + self.played), *rest


def _normalized(**kwargs):
    """StepsEnv in Gymnasium's NormalizeReward (running statistics across episodes)."""
    return gym.wrappers.NormalizeReward(StepsEnv(**kwargs))


class _NeedsRenderMode(StepsEnv):
    def __init__(self, render_mode):  # no default: gym.make without one fails
        self.render_mode = render_mode


def _capped_inside(**kwargs):
    """No registered cap, but a TimeLimit of the entry point's own."""
    return gym.wrappers.TimeLimit(StepsEnv(**kwargs), 20)


def _register(entry, cap: int | None = 50) -> str:
    name = getattr(entry, "__name__", "env").strip("_")
    env_id = f"mmq-review17/{name}-{cap}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=cap)
    return env_id


def _config(env_id: str, **kw) -> TrainConfig:
    base = dict(
        env_id=env_id,
        agent="maxmin-dqn",
        n=2,
        steps=60,
        seeds=[0, 1],
        learning_starts=20,
        buffer_size=100,
        batch_size=8,
        eval_episodes=2,
        checkpoint_every=0,
    )
    return TrainConfig(**{**base, **kw})


def _makes_a_missing_id(**kwargs):
    """An entry point of one's own around an id Gymnasium does not have (a typo, or one
    deprecated since: Taxi-v3 is DeprecatedEnv, "use Taxi-v4")."""
    return gym.wrappers.FlattenObservation(gym.make("NoSuchGame-v0", **kwargs))


class _BoxActions(StepsEnv):
    """A force in [-1, 1]: reward 1 for a positive one."""

    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def step(self, action):
        return super().step(int(np.asarray(action).item() > 0))


class _MultiDiscreteActions(StepsEnv):
    action_space = gym.spaces.MultiDiscrete([2, 3])


def _discretized(**kwargs):
    return gym.wrappers.DiscretizeAction(_BoxActions(**kwargs), bins=3)


class _FromOne(StepsEnv):
    """Actions 1, 2, 3 (reward 1 for 3)."""

    action_space = gym.spaces.Discrete(3, start=1)

    def step(self, action):
        assert action in self.action_space, action
        return super().step(int(action == 3))


def _shifted(**kwargs):
    return gym.wrappers.TransformAction(_FromOne(**kwargs), lambda a: a + 1, gym.spaces.Discrete(3))


class _Counted(StepsEnv):
    """Counts the instances made and closed (over every instance)."""

    made = closed = 0

    def __init__(self, render_mode=None):
        super().__init__(render_mode)
        type(self).made += 1

    def close(self):
        type(self).closed += 1
        super().close()


class _Lengthening(StepsEnv):
    """Each episode of an instance one step longer than its last (6, 7, 8, ...); the
    observations do not show the length: a new instance replays the same observations and
    rewards but ends its episode at step 6."""

    def reset(self, *, seed=None, options=None):
        self.played = getattr(self, "played", -1) + 1
        return super().reset(seed=seed)

    def _obs(self) -> np.ndarray:
        return np.array([self.t / 100, 1.0, 0.0], np.float32)

    def step(self, action):
        obs, reward, _, *rest = super().step(action)
        return obs, reward, self.t == self.length + self.played, *rest


def test_a_reward_that_does_not_replay_is_refused_on_resume_not_resumed_silently(tmp_path):
    """The replay on --resume compared only the last observation: an environment whose
    rewards drift across episodes resumed to other tables than the uninterrupted run."""
    cfg = _config(_register(_DriftingReward))
    out = tmp_path / "run"
    assert run_training(cfg, out, progress=False, stop_after=33) == {}  # 3 steps into an episode
    with pytest.raises(CannotResumeError, match=r"--resume: .* did not replay"):
        run_training(cfg, out, progress=False)
    assert (out / "checkpoint" / "state.pt").exists() and not (out / "runs.csv").exists()
    # An environment that replays (the same without the drift) resumes as before.
    cfg = _config(_register(StepsEnv))
    run_training(cfg, tmp_path / "ok", progress=False, stop_after=33)
    resumed = run_training(cfg, tmp_path / "ok", progress=False)
    straight = run_training(cfg, tmp_path / "straight", progress=False)
    for name in ("episodes", "tests", "runs"):
        assert resumed[name].equals(straight[name]), name


def test_normalize_reward_is_warned_about_and_refused_on_resume_at_an_episode_boundary(tmp_path):
    """At an episode boundary there is no step to replay, so the reward check cannot see the
    lost statistics: the resumed run silently differed. Now the wrapper is named at the start
    and --resume refuses it."""
    cfg = _config(_register(_normalized))
    out = tmp_path / "run"
    with pytest.warns(EnvWarning, match="NormalizeReward, whose running statistics"):
        run_training(cfg, out, progress=False, stop_after=30)  # 5 whole episodes of 6 steps
    with pytest.raises(CannotResumeError, match="NormalizeReward"):
        run_training(cfg, out, progress=False)
    assert not (out / "runs.csv").exists()


@pytest.mark.parametrize(
    "bad,needle",
    [
        ("obs", "an observation of a test or evaluation episode .* is nan"),
        ("reset", r"an observation of a test or evaluation episode \(.*reset\(\)\) is inf"),
        ("reward", "a reward of a test or evaluation episode .* is nan"),
        ("huge", "a reward of a test or evaluation episode .* is inf"),
    ],
)
def test_a_non_finite_value_in_a_test_episode_is_the_environments_error(bad, needle) -> None:
    """Training refuses them at any step; the test episodes took them silently (a NaN
    observation played action 0, the argmax of NaN values; a NaN reward became the test
    return)."""
    cfg = _config(_register(NonFiniteEnv)).resolve()
    NonFiniteEnv.bad = None
    tr = Trainer(cfg)
    try:
        for _ in range(30):
            tr.train_step()
        NonFiniteEnv.bad = bad
        with pytest.raises(UsageError, match=f"--env: {needle}"):
            tr.evaluate()
    finally:
        NonFiniteEnv.bad = None
        tr.close()


def test_no_time_limit_is_warned_about_from_python_and_once_by_the_command(tmp_path, capsys):
    """README: "without a registered max_episode_steps ... (a warning says so)"; only the
    command said so. A TimeLimit the entry point adds itself is a time limit (no warning)."""
    uncapped = _register(StepsEnv, cap=None)
    with pytest.warns(EnvWarning, match="has no time limit"):
        run_training(_config(uncapped, eval_episodes=0), tmp_path / "a", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnvWarning)
        run_training(_config(_register(_capped_inside, cap=None)), tmp_path / "b", progress=False)
    argv = ["train", "--env", uncapped, "--steps", "30", "--eval-episodes", "0"]
    assert main([*argv, "--out", str(tmp_path / "c"), "--no-progress", "--no-plot"]) == 0
    err = capsys.readouterr().err
    assert err.count("has no time limit") == 1, err


def test_a_constructor_that_requires_render_mode_is_told_to_default_it(tmp_path, capsys) -> None:
    """The error said "pass them with --env-kwargs", which refuses render_mode."""
    out = tmp_path / "run"
    argv = ["train", "--env", _register(_NeedsRenderMode), "--out", str(out), "--steps", "30"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "requires render_mode; give it a default, render_mode=None" in err, err
    assert "--env-kwargs" not in err and not out.exists()


@pytest.mark.parametrize(
    "shape,hint",
    [
        ((2, 6, 8), "not square: crop, pad or resize the images to (C, H, H)"),
        ((8, 8, 3), "channels last? move them first: (3, 8, 8)"),
        ((84, 96, 3), "channels last? move them first: (3, 84, 96), and make them square"),
        ((3, 2, 2), "too small for minatar_cnn's 3x3 convolution"),
    ],
)
def test_an_image_the_network_cannot_take_gets_the_hint_that_fits_it(shape, hint) -> None:
    """A channels-first image that is not square was asked "channels last?"."""
    cfg = TrainConfig(env_id="mine", network="minatar_cnn")
    with pytest.raises(UsageError) as caught:
        cfg.check_observation_shape(shape)
    assert f"gives {shape} ({hint}" in str(caught.value), str(caught.value)


def test_a_gymnasium_error_inside_ones_entry_point_is_one_line(tmp_path, capsys) -> None:
    """Only DependencyNotInstalled was one line; Gymnasium's other errors were tracebacks."""
    out = tmp_path / "run"
    argv = ["train", "--env", _register(_makes_a_missing_id), "--out", str(out), "--steps", "30"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "--env: mmq-review17/makes_a_missing_id-50-v0 cannot be built: NameNotFound:" in err
    assert "NoSuchGame" in err and not out.exists()


@pytest.mark.parametrize(
    "cls,hint",
    [
        (_BoxActions, "discretize it with gymnasium.wrappers.DiscretizeAction(env, bins)"),
        (_MultiDiscreteActions, "one Discrete(n) action that numbers the combinations"),
    ],
)
def test_actions_the_agents_cannot_take_say_how_to_make_them_discrete(cls, hint, tmp_path):
    """The error named the space only."""
    with pytest.raises(UsageError, match=r"--env: .* needs a discrete action space") as caught:
        run_training(_config(_register(cls)), tmp_path / "run", progress=False)
    assert hint in str(caught.value) and not (tmp_path / "run").exists()


def test_a_box_action_space_discretized_as_the_hint_says_trains(tmp_path) -> None:
    tables = run_training(_config(_register(_discretized)), tmp_path / "run", progress=False)
    assert len(tables["tests"]) == 4 and (tables["runs"]["status"] == "done").all()


def test_render_mode_in_env_kwargs_says_where_a_training_render_mode_goes() -> None:
    """The refusal said "use maxminq evaluate --gif", no help to an environment whose
    observations are its frames (AddRenderObservation needs render_mode='rgb_array')."""
    cfg = TrainConfig(env_id="CartPole-v1", env_kwargs={"render_mode": "rgb_array"})
    with pytest.raises(UsageError) as caught:
        cfg.resolve()
    message = str(caught.value)
    assert message.startswith("--env-kwargs: render_mode is not an env keyword here")
    assert "gymnasium.register(..., kwargs={'render_mode': 'rgb_array'})" in message


def test_actions_from_one_are_refused_with_the_wrapper_that_shifts_them(tmp_path) -> None:
    """The error said the space must start at 0, not how; the wrapper it now names trains."""
    with pytest.raises(UsageError) as caught:
        run_training(_config(_register(_FromOne)), tmp_path / "refused", progress=False)
    wrapper = "TransformAction(env, lambda a: a + 1, gymnasium.spaces.Discrete(3))"
    assert str(caught.value).endswith(wrapper), str(caught.value)
    tables = run_training(_config(_register(_shifted)), tmp_path / "run", progress=False)
    assert (tables["runs"]["status"] == "done").all()


def test_an_env_warning_raised_as_an_error_closes_the_environments() -> None:
    """Under ``warnings.simplefilter("error")`` (a test suite's setting) the no-time-limit
    EnvWarning is raised from Trainer(): every environment it had made was left open."""
    cfg = _config(_register(_Counted, cap=None)).resolve()
    _Counted.made = _Counted.closed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnvWarning)
        with pytest.raises(EnvWarning, match="has no time limit"):
            Trainer(cfg)
    assert _Counted.made == len(cfg.seeds) == _Counted.closed


def test_an_env_warning_raised_as_an_error_in_evaluate_agent_closes_its_environment(tmp_path):
    """evaluate_agent warned after making its environment, outside the try that closes it."""
    cfg = _config(_register(_Counted, cap=None), eval_episodes=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EnvWarning)
        run_training(cfg, tmp_path / "run", progress=False)
    agent = load_agent(tmp_path / "run")
    _Counted.made = _Counted.closed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnvWarning)
        with pytest.raises(EnvWarning, match="has no time limit"):
            evaluate_agent(agent, [0], 1, progress=False)
    assert _Counted.made == 1 == _Counted.closed


def test_an_episode_that_ends_early_in_the_replay_is_refused_on_resume(tmp_path) -> None:
    """The replay compares the flags too: stopped 8 steps into the fifth episode (10 steps
    long), a new instance ends its episode at step 6 of the replay."""
    cfg = _config(_register(_Lengthening))
    out = tmp_path / "run"
    assert run_training(cfg, out, progress=False, stop_after=38) == {}  # 6+7+8+9, then 8
    with pytest.raises(CannotResumeError, match=r"--resume: .* did not replay"):
        run_training(cfg, out, progress=False)
