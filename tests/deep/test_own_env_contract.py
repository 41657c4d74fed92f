"""Adversarial review of training on one's own Gymnasium environment (README "Your own
environment"): environments that break the contract in ways the first ``reset()`` /
``step(0)`` check cannot see, and what reaches the replay buffers and the tables then."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from line_env import LineEnv

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import UsageError


def _register(cls: type[gym.Env], cap: int | None = 50) -> str:
    """A test id for ``cls`` (registered once per process)."""
    env_id = f"mmq-review/{cls.__name__}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=cls, max_episode_steps=cap)
    return env_id


class _LateBadImage(gym.Env):
    """A (2, 4, 4) uint8 image space; from the 4th step on, step() returns an image holding
    300.0 (a float the uint8 space cannot hold). The first reset() and step(0), which the
    trainer checks before it starts, are in range."""

    observation_space = gym.spaces.Box(0, 255, (2, 4, 4), np.uint8)
    action_space = gym.spaces.Discrete(2)
    bad_value = 300.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros((2, 4, 4), np.float32), {}

    def step(self, action):
        self.t += 1
        obs = np.zeros((2, 4, 4), np.float32)
        obs[0, 0, 0] = self.bad_value if self.t >= 4 else 1.0
        return obs, 0.0, self.t == 6, False, {}


class _LateFractionImage(_LateBadImage):
    """As ``_LateBadImage`` with 0.5: a uint8 buffer would store 0."""

    bad_value = 0.5


class _NanReward(LineEnv):
    """Rewards NaN from the 30th step of the process on (an environment bug)."""

    steps = 0

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        type(self).steps += 1
        return obs, (np.nan if type(self).steps >= 30 else reward), terminated, truncated, info


class _NanObservation(LineEnv):
    """Observations hold NaN from the 30th step of the process on."""

    steps = 0

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        type(self).steps += 1
        if type(self).steps >= 30:
            obs = obs.copy()
            obs[0] = np.nan
        return obs, reward, terminated, truncated, info


class _HugeObservation(LineEnv):
    """A float64 observation space; from the 3rd step on, observations hold 1e39: finite
    as float64, beyond float32 (the networks' precision), where it is inf."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (8,), np.float64)
    t = 0

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self.t += 1
        huge = obs.astype(np.float64) * (1e39 if self.t >= 3 else 1.0)
        return huge, reward, terminated, truncated, info


_LEVELS = {"easy": 4, "hard": 8}


class _Levels(LineEnv):
    """Takes a ``level`` keyword looked up in a table: an unknown level is a KeyError, the
    usual way a constructor refuses a value it does not know."""

    def __init__(self, level: str = "easy") -> None:
        self.size = _LEVELS[level]


class _NeedsADependency(LineEnv):
    """Its constructor needs a package that is not installed (as LunarLander without
    box2d): Gymnasium's DependencyNotInstalled."""

    def __init__(self) -> None:
        raise gym.error.DependencyNotInstalled('no_such_sim is not installed, run "pip install x"')


def _train_argv(env_id: str, out) -> list[str]:
    """A tiny train command line."""
    argv = ["train", "--env", env_id, "--agent", "dqn", "--steps", "50", "--no-progress"]
    return [*argv, "--no-plot", "--out", str(out)]


class _Resizable(gym.Env):
    """One-hot cells, ``size`` of them (a class attribute, as a module constant a user
    edits between training and evaluating), ``actions`` actions."""

    size, actions = 6, 2

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.size,), np.float32)
        self.action_space = gym.spaces.Discrete(self.actions)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 0
        return np.eye(self.size, dtype=np.float32)[0], {}

    def step(self, action):
        self.pos = min(self.size - 1, self.pos + 1)
        done = self.pos == self.size - 1
        return np.eye(self.size, dtype=np.float32)[self.pos], float(done), done, False, {}


def _mlp_parameters(inputs: int, actions: int, hidden: tuple[int, ...] = (64, 64)) -> int:
    """Weights and biases of an MLP ``inputs -> hidden -> actions``."""
    sizes = (inputs, *hidden, actions)
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=False))


class _CutsItself(gym.Env):
    """Position t in the episode as the observation [t]; the environment truncates
    itself at t = 3 (no registered time limit) and terminates at t = 3 as well when
    ``both`` (the two flags at once)."""

    observation_space = gym.spaces.Box(0.0, 10.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    both = False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t], np.float32), 1.0, self.both and self.t == 3, self.t == 3, {}


class _CutsAndEnds(_CutsItself):
    both = True


class _OldApiStep(LineEnv):
    """step() in the old Gym API (obs, reward, done, info): 4 values, a common leftover
    of gym < 0.26 tutorials."""

    def step(self, action):
        obs, reward, terminated, _, info = super().step(action)
        return obs, reward, terminated, info


class _OldApiReset(LineEnv):
    """reset() returns the observation alone, not (obs, info)."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0]


class _ToGymnasiumApi(gym.Wrapper):
    """An adapter an old-API environment's author may write: Gymnasium's API outside."""

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed), {}

    def step(self, action):
        obs, reward, done, info = self.env.step(action)
        return obs, reward, done, False, info


class _OldApiBoth(LineEnv):
    """Old Gym API in both reset() and step()."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0]

    def step(self, action):
        obs, reward, terminated, _, info = super().step(action)
        return obs, reward, terminated, info


@pytest.mark.parametrize("cls,shown", [(_LateBadImage, "300"), (_LateFractionImage, "0.5")])
def test_a_uint8_image_value_the_replay_cannot_hold_is_refused_not_wrapped(cls, shown) -> None:
    """300.0 in a uint8 replay buffer would be stored as 44 (0.5 as 0) and learned from
    silently: the step that returns it is a one-line error naming --env and the value, and
    no wrapped value is ever in the buffers."""
    cfg = TrainConfig(
        env_id=_register(cls), agent="dqn", steps=20, learning_starts=20, seeds=[0]
    ).resolve()
    Trainer.check_env(cfg)  # the first observations are fine: training starts
    tr = Trainer(cfg)
    try:
        with pytest.raises(UsageError, match=rf"^--env: .*holds {shown}\b.*uint8") as err:
            for _ in range(10):
                tr.train_step()
        assert "\n" not in str(err.value)
        assert tr.replay.size == 3  # the three good steps, not the refused one
        held = np.unique(tr.replay.next_obs[0, : tr.replay.size])
        np.testing.assert_array_equal(held, [0, 1])
    finally:
        tr.close()


@pytest.mark.parametrize("cls,what", [(_NanReward, "reward"), (_NanObservation, "observation")])
def test_a_nan_from_the_environment_is_its_error_not_the_seeds_divergence(
    cls, what, tmp_path, capsys
) -> None:
    """A NaN reward or observation turns the loss NaN; the run used to finish and record
    the seed as 'diverged', as if learning had blown up. It is the environment's fault: a
    one-line error naming --env and what was not finite, exit status 2."""
    cls.steps = 0
    env_id = _register(cls)
    argv = ["train", "--env", env_id, "--agent", "dqn", "--steps", "120"]
    argv += ["--learning-starts", "10", "--eval-episodes", "1", "--no-progress", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("maxminq train: error: --env: ")
    assert what in err[-1] and "nan" in err[-1] and "finite" in err[-1]
    assert not (tmp_path / "run" / "runs.csv").exists()  # no run recorded as finished


def test_a_nan_reward_is_refused_through_the_python_api_too(tmp_path) -> None:
    """run_training raises the same UsageError (not a 'diverged' seed in the tables)."""
    _NanReward.steps = 0
    cfg = TrainConfig(
        env_id=_register(_NanReward), agent="maxmin-dqn", n=2, steps=120, seeds=[0, 1]
    )
    cfg.learning_starts, cfg.eval_episodes = 10, 1
    with pytest.raises(UsageError, match=r"^--env: a reward \(seed position \d in --seeds\)"):
        run_training(cfg, tmp_path / "run", progress=False)


def test_an_observation_beyond_float32_is_not_reported_as_an_inf_the_environment_returned(
    tmp_path, capsys
) -> None:
    """1e39 from the environment was reported as 'holds inf': a value it never returned. The
    one line names float32 and its range, so the user looks for a huge value, not an inf."""
    _HugeObservation.t = 0
    argv = ["train", "--env", _register(_HugeObservation), "--agent", "dqn", "--steps", "20"]
    argv += ["--learning-starts", "10", "--no-progress", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("maxminq train: error: --env: an observation (seed position 0"), err
    assert "float32" in err and "3.4e+38" in err, err


@pytest.mark.parametrize(
    "cls,extra,option,shown",
    [
        (_Levels, ["--env-kwargs", '{"level": "medium"}'], "--env-kwargs", "KeyError"),
        (_NeedsADependency, [], "--env", "no_such_sim is not installed"),
    ],
)
def test_an_environment_that_cannot_be_built_is_one_line_before_out(
    cls, extra, option, shown, tmp_path, capsys
) -> None:
    """A keyword value the constructor refuses with a KeyError (README: "an environment
    that refuses them is a one-line error before --out is touched"), or a missing
    dependency, was a traceback (exit status 1): now one line naming the option, exit
    status 2, and --out is not created."""
    out = tmp_path / "run"
    assert main([*_train_argv(_register(cls), out), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"maxminq train: error: {option}: "), err
    assert shown in err[0]
    assert not out.exists()


@pytest.mark.parametrize("changed,shown", [({"size": 8}, "(8,)"), ({"actions": 3}, "3 actions")])
def test_evaluating_a_run_whose_environment_changed_since_is_one_line(
    changed, shown, tmp_path, monkeypatch, capsys
) -> None:
    """The run's networks read observations of shape (6,) and give 2 action values; after
    the environment's module changed (8 cells, or 3 actions), ``maxminq evaluate`` was a
    traceback from q_values in the first episode (or played actions the networks never
    learned): now one line naming RUN_DIR and what changed, exit status 2, before any
    episode is played."""
    env_id = _register(_Resizable)
    run = tmp_path / "run"
    cfg = TrainConfig(env_id=env_id, agent="dqn", steps=30, learning_starts=10, eval_episodes=1)
    run_training(cfg, run, progress=False)
    for name, value in changed.items():
        monkeypatch.setattr(_Resizable, name, value)
    assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq evaluate: error: RUN_DIR: "), err
    assert shown in err[0] and "changed" in err[0]


@pytest.mark.parametrize("changed,inputs,actions", [({"size": 8}, 8, 2), ({"actions": 3}, 6, 3)])
def test_resuming_a_run_whose_environment_changed_names_the_environment(
    changed, inputs, actions, tmp_path, monkeypatch
) -> None:
    """A checkpoint whose networks were built for the environment as it was (6 cells, 2
    actions): resuming after the module changed was refused as "damaged or not a checkpoint
    of this version of maxminq" (a tensor size mismatch), which sends the user looking for a
    broken file. Now it says the environment changed, with both networks' sizes."""
    env_id = _register(_Resizable)
    run = tmp_path / "run"
    cfg = TrainConfig(
        env_id=env_id, agent="maxmin-dqn", n=2, steps=40, learning_starts=10, eval_episodes=1
    )
    cfg.checkpoint_every = 20
    run_training(cfg, run, progress=False)
    for name, value in changed.items():
        monkeypatch.setattr(_Resizable, name, value)
    cfg.steps = 60  # extend it: the checkpoint is loaded
    with pytest.raises(UsageError) as err:
        run_training(cfg, run, progress=False)
    assert "damaged" not in str(err.value)
    message = str(err.value)
    assert message.startswith("--resume: ") and "environment" in message and "changed" in message
    assert f"{_mlp_parameters(6, 2)} parameters" in message  # the checkpoint's networks
    assert f"{_mlp_parameters(inputs, actions)} parameters" in message  # the ones now


def test_a_file_name_instead_of_a_module_name_gets_the_module_name(
    tmp_path, monkeypatch, capsys
) -> None:
    """``--env my_envs.py:Corridor-v0`` (or a path to the file), as one names the file
    on the command line, used to answer 'is it on PYTHONPATH or installed?' although the
    module is there: the error now names the module to give instead."""
    (tmp_path / "review_file_envs.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    for given in ("review_file_envs.py", str(tmp_path / "review_file_envs.py")):
        out = tmp_path / "run"
        assert main(_train_argv(f"{given}:Corridor-v0", out)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("maxminq train: error: --env: "), err
        assert "--env review_file_envs:Corridor-v0" in err[0]
        assert not out.exists()


def test_an_id_given_without_its_version_suggests_the_versioned_id(tmp_path, capsys) -> None:
    """``Name`` for an environment registered as ``Name-v0`` (the version left out; for a
    short name difflib's closeness cutoff missed it) gets the versioned id suggested, as
    Gymnasium's own error does."""
    if "Lv-v0" not in gym.registry:
        gym.register("Lv-v0", entry_point=_Levels, max_episode_steps=50)
    out = tmp_path / "run"
    assert main(_train_argv("Lv", out)) == 2
    err = capsys.readouterr().err.strip()
    assert "did you mean Lv-v0?" in err
    assert not out.exists()


@pytest.mark.parametrize("cls,done", [(_CutsItself, 0.0), (_CutsAndEnds, 1.0)])
def test_an_environments_own_truncation_bootstraps_from_its_real_last_observation(
    cls, done
) -> None:
    """README: truncation from the environment itself (no registered max_episode_steps)
    bootstraps like the time limit's, from the real next observation (here [3], not the
    next episode's first [0]); with terminated also True the transition is terminal."""
    cfg = TrainConfig(
        env_id=_register(cls, cap=None), agent="dqn", steps=9, learning_starts=9
    ).resolve()
    tr = Trainer(cfg)
    try:
        for _ in range(9):
            tr.train_step()
        np.testing.assert_array_equal(tr.replay.obs[0, :9, 0], [0, 1, 2] * 3)
        np.testing.assert_array_equal(tr.replay.next_obs[0, :9, 0], [1, 2, 3] * 3)
        np.testing.assert_array_equal(tr.replay.terminated[0, :9], [0, 0, done] * 3)
        episodes = tr.rows["episodes"]
        assert [(e[4], e[5], e[6]) for e in episodes] == [(3, bool(done), True)] * 3
    finally:
        tr.close()


def test_a_module_that_runs_a_script_on_import_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    """``--env train_script:Env-v0`` naming a script that parses its own arguments at import
    (no ``if __name__ == "__main__":``): argparse printed its usage as ``usage: maxminq
    [-h] --episodes EPISODES`` and exited, which reads as maxminq's own options. Now one
    line naming --env, the module, what it said, and the remedy; exit status 2."""
    (tmp_path / "review_script_envs.py").write_text(
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--episodes', type=int, required=True)\n"
        "args = parser.parse_args()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    assert main(_train_argv("review_script_envs:Corridor-v0", out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq train: error: --env: "), err
    assert "'review_script_envs'" in err[0] and "--episodes" in err[0]
    assert "__main__" in err[0]
    assert not out.exists()


def test_a_module_that_sets_up_logging_at_import_keeps_its_log(
    tmp_path, monkeypatch, capsys
) -> None:
    """stderr was a StringIO while the --env module was imported (to hold back a script's
    usage text), so a logging handler the module made then (``StreamHandler()``, as
    ``logging.basicConfig`` at import does) wrote into it for the whole run: every line the
    environment logged was lost. It reaches stderr, as before."""
    (tmp_path / "review_logged_envs.py").write_text(
        "import logging\n"
        "import gymnasium as gym\n"
        "from line_env import LineEnv\n"
        "log = logging.getLogger('review_logged_envs')\n"
        "log.addHandler(logging.StreamHandler())\n"
        "log.propagate = False\n"
        "class Logged(LineEnv):\n"
        "    def reset(self, *, seed=None, options=None):\n"
        "        log.warning('review_logged_envs: reset')\n"
        "        return super().reset(seed=seed, options=options)\n"
        "gym.register('ReviewLogged-v0', entry_point=Logged, max_episode_steps=20)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = _train_argv("review_logged_envs:ReviewLogged-v0", tmp_path / "run")
    assert main([*argv, "--eval-episodes", "1"]) == 0
    assert "review_logged_envs: reset" in capsys.readouterr().err


@pytest.mark.parametrize(
    "source,said,hint",
    [
        ("raise RuntimeError('no licence file')\n", "RuntimeError: no licence file", "raised"),
        ("import no_such_dependency_h2\n", "No module named 'no_such_dependency_h2'", "imports"),
    ],
)
def test_a_module_found_but_failing_is_not_blamed_on_the_path(
    source, said, hint, tmp_path, monkeypatch, capsys
) -> None:
    """A module on the path that raises while importing (or imports a package that is not
    installed) was answered with 'is it on PYTHONPATH or installed?', which sends the user
    looking for the module they gave; the hint now says the module was found and failed."""
    (tmp_path / "review_failing_envs.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    assert main(_train_argv("review_failing_envs:Corridor-v0", out)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq train: error: --env: "), err
    assert said in err[0] and hint in err[0] and "PYTHONPATH" not in err[0]
    assert not out.exists()


@pytest.mark.parametrize(
    "cls,shown,api",
    [
        (_OldApiStep, "step() returned 4 values", "(obs, reward, terminated, truncated, info)"),
        (_OldApiReset, "reset() returned", "(obs, info)"),
    ],
)
def test_the_old_gym_api_is_one_line_naming_the_gymnasium_api(cls, shown, api, tmp_path, capsys):
    """A 4-value step() was a traceback from Gymnasium's TimeLimit (exit 1); a reset()
    returning the observation alone was 'an observation of shape ()' (its first element,
    taken as the observation). Both: one line naming --env and the (obs, info) /
    (obs, reward, terminated, truncated, info) API, exit 2, --out not created."""
    out = tmp_path / "run"
    argv = ["train", "--env", _register(cls), "--agent", "dqn", "--steps", "50"]
    assert main([*argv, "--no-progress", "--no-plot", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq train: error: --env: "), err
    assert shown in err[0] and api in err[0]
    assert not out.exists()


def test_an_old_api_environment_inside_an_adapter_trains(tmp_path) -> None:
    """The old-API check looked at ``env.unwrapped`` only, so an environment that follows
    Gymnasium's API through an adapter wrapper of its own (its entry point returns the
    wrapped one) was refused as 'reset() returned ndarray'; it trained before, and must."""
    env_id = "mmq-review/AdaptedOldApi-v0"
    if env_id not in gym.registry:
        gym.register(
            env_id, entry_point=lambda: _ToGymnasiumApi(_OldApiBoth()), max_episode_steps=50
        )
    tables = run_training(
        TrainConfig(env_id=env_id, agent="dqn", steps=40, learning_starts=20, eval_episodes=1),
        tmp_path / "run",
        progress=False,
    )
    assert tables["runs"]["status"].tolist() == ["done"]
