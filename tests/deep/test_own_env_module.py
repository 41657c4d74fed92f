"""A user coming from Stable-Baselines3 or CleanRL trains Maxmin DQN and its baselines on a
Gymnasium environment of their own, then uses the trained agent. Each test is a problem
such a user met: an environment handed over as SB3 takes it (an instance, a class, an
``EnvSpec``), ``--env module:Class`` for a class registered already, the no-time-limit
warning on an environment that truncates its own episodes, warnings that pointed into
maxminq's source, ``act`` of a one-seed run, the channels-last hint and the ``(registry)``
of ``maxminq train --help``."""

from __future__ import annotations

import importlib
import textwrap
import warnings

import gymnasium as gym
import numpy as np
import pytest
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.env_checks import warn_if_not_repeatable
from maxminq.deep.policy import load_agent
from maxminq.deep.train import run_training
from maxminq.envs import make
from maxminq.errors import UsageError

MODULE = "j20_own_envs"


# A module of the user's: a one-hot corridor registered as J20Corridor-v0, one that never
# ends (cut by its cap of 5) and one that truncates its own episodes after 5 steps (no cap).
SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    class J20Corridor(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (4,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos, self.t = 0, 0
            return np.eye(4, dtype=np.float32)[self.pos], {}

        def step(self, action):
            self.pos = min(3, max(0, self.pos + (1 if action == 1 else -1)))
            self.t += 1
            done = self.pos == 3
            return np.eye(4, dtype=np.float32)[self.pos], float(done), done, False, {}


    class J20Never(J20Corridor):
        def step(self, action):
            obs, reward, _, truncated, info = super().step(action)
            return obs, reward, False, truncated, info


    class J20SelfCut(J20Never):
        def step(self, action):
            obs, reward, terminated, _, info = super().step(action)
            return obs, reward, terminated, self.t >= 5, info


    class J20Unregistered(J20Corridor):
        pass


    class J20GlobalRandom(J20Corridor):
        def reset(self, *, seed=None, options=None):
            obs, info = super().reset(seed=seed)
            self.pos = int(np.random.randint(2))  # the global generator, seeded by no one
            return np.eye(4, dtype=np.float32)[self.pos], info


    gym.register("J20Corridor-v0", entry_point=J20Corridor, max_episode_steps=50)
    gym.register("J20GlobalRandom-v0", entry_point=J20GlobalRandom, max_episode_steps=50)
    gym.register("J20Never-v0", entry_point=J20Never, max_episode_steps=5)
    gym.register("J20SelfCut-v0", entry_point=J20SelfCut)
    """
)


@pytest.fixture(scope="module")
def own_module(tmp_path_factory):
    """The user's module, importable as ``j20_own_envs`` (imported: its ids registered)."""
    with user_module(tmp_path_factory.mktemp("own_envs"), MODULE, SOURCE) as name:
        yield importlib.import_module(name)


def _config(env_id: str, seeds: list[int]) -> TrainConfig:
    return TrainConfig(
        env_id=env_id,
        agent="maxmin-dqn",
        n=2,
        steps=60,
        seeds=seeds,
        learning_starts=20,
        buffer_size=100,
        batch_size=8,
        eval_episodes=2,
        checkpoint_every=0,
    )


@pytest.fixture(scope="module")
def runs(own_module, tmp_path_factory):
    """Two tiny runs trained from Python, with the warnings each gave: one seed on the
    self-truncating environment, two on the one its cap cuts."""
    out = tmp_path_factory.mktemp("runs")
    done = {}
    for key, env, seeds in (("selfcut", "J20SelfCut-v0", [0]), ("never", "J20Never-v0", [0, 1])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tables = run_training(_config(f"{MODULE}:{env}", seeds), out / key, progress=False)
        done[key] = (out / key, tables, caught)
    return done


def test_module_colon_class_of_a_registered_class_names_its_id(own_module, tmp_path, capsys):
    """``--env my_envs:Corridor`` (the class, which the module registers as Corridor-v0)
    was told to register it with gymnasium.register, as if it were not."""
    with pytest.raises(UsageError) as err:
        make(f"{MODULE}:J20Corridor")
    msg = str(err.value)
    assert "it is registered as 'J20Corridor-v0'" in msg, msg
    assert f"give --env {MODULE}:J20Corridor-v0" in msg, msg
    assert "gymnasium.register(" not in msg, msg
    with pytest.raises(UsageError, match="register it in that module with gymnasium.register"):
        make(f"{MODULE}:J20Unregistered")  # a class no id names: how to register it
    out = tmp_path / "run"
    assert main(["train", "--env", f"{MODULE}:J20Corridor", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"give --env {MODULE}:J20Corridor-v0" in lines[0], lines
    assert not out.exists()


@pytest.mark.parametrize("given", ["instance", "class"])
def test_an_env_or_class_of_ones_own_is_told_its_module_id(own_module, given):
    """SB3 takes an environment instance; here the error said to give its bare id, which
    another process (maxminq evaluate) cannot rebuild (an EnvIdWarning then said so), and
    for a registered class, to register it."""
    env = gym.make("J20Corridor-v0") if given == "instance" else own_module.J20Corridor
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id=env).resolve()
    assert f"e.g. '{MODULE}:J20Corridor-v0'" in str(err.value), str(err.value)
    # Gymnasium's own ids stay bare.
    with pytest.raises(UsageError, match="give its id, 'CartPole-v1'$"):
        TrainConfig(env_id=gym.make("CartPole-v1")).resolve()


def test_no_time_limit_warning_allows_for_an_env_that_truncates_itself(runs):
    """An environment that ends its own episodes with truncated=True (as MinAtar Freeway)
    was told that an episode the policy never ends would not finish, flatly. Its episodes
    are truncations, bootstrapped, not terminations."""
    _, tables, caught = runs["selfcut"]
    texts = [str(w.message) for w in caught if w.category is EnvWarning]
    assert len(texts) == 1 and "has no time limit" in texts[0], texts
    assert "unless the environment ends it itself (truncated=True" in texts[0], texts
    episodes = tables["episodes"]
    assert episodes["truncated"].all() and not episodes["terminated"].any()
    assert (episodes["length"] == 5).all()


def test_warnings_of_run_training_point_at_the_callers_line(runs):
    """The EnvWarning and the CutEpisodesWarning of run_training named a line of maxminq's
    deep/train.py (and Python showed its source line) instead of the user's call."""
    categories = set()
    for key in ("selfcut", "never"):
        for w in runs[key][2]:
            if issubclass(w.category, (EnvWarning, CutEpisodesWarning)):
                categories.add(w.category)
                assert w.filename == __file__, (w.category.__name__, w.filename, w.lineno)
    assert categories == {EnvWarning, CutEpisodesWarning}


def test_a_one_seed_runs_agent_acts_without_naming_its_seed(runs):
    """SB3's model.predict(obs): here act(obs, seed) required the seed even for a run of
    the one default seed; a run of several still needs it, said in one line."""
    folder, _, _ = runs["selfcut"]
    agent = load_agent(folder)
    env = agent.config.make_env()
    obs, _ = env.reset(seed=3)
    q = agent.q_values(obs, seed=0)
    np.testing.assert_array_equal(agent.q_values(obs), q)
    assert agent.act(obs) == int(np.argmax(q))
    batch = np.stack([obs, obs])
    np.testing.assert_array_equal(agent.act(batch), [int(np.argmax(q))] * 2)
    several = load_agent(runs["never"][0])
    with pytest.raises(UsageError, match=r"--seeds: this run trained seeds \[0, 1\].*seed=0"):
        several.act(obs)


def test_an_env_cutting_its_own_short_episodes_is_warned_of_as_a_short_cap_is(runs):
    """MountainCar-v0's cap of 200 at gamma 0.99 is warned of (no probe of a cut episode
    counts); an environment that cuts its own episodes as short, without a cap, left every
    bias probe uncounted in silence."""
    _, tables, caught = runs["selfcut"]
    texts = [str(w.message) for w in caught if w.category is CutEpisodesWarning]
    n = len(tables["episodes"])  # every one cut by the environment after 5 steps
    assert n > 0 and len(texts) == 1, texts
    assert texts[0].startswith("episodes the environment cuts itself (truncated=True; no "), texts
    assert f"it cut {n} of the {n} training episodes in fewer than 299 steps" in texts[0], texts
    assert "no bias probe counted" in texts[0], texts
    assert (tables["metrics"]["bias_n"] == 0).all()


def test_an_env_drawing_from_np_random_is_warned_of_before_training(own_module, tmp_path):
    """An environment that draws from np.random rather than self.np_random trained with
    no word: its seeds did not repeat (and, in one run, shared one stream), and --resume
    refused to continue it. The check puts np.random's state back as it found it."""
    state = np.random.get_state()  # noqa: NPY002 - looked at and put back, not drawn from
    try:
        config = _config(f"{MODULE}:J20GlobalRandom-v0", [0])
        with pytest.warns(EnvWarning, match="GlobalRandom-v0 draws random numbers from np.random"):
            run_training(config, tmp_path / "a", progress=False)
        before = np.random.get_state()  # noqa: NPY002
        with pytest.warns(EnvWarning, match="draws random numbers from np.random"):
            warn_if_not_repeatable(config.resolve())
        after = np.random.get_state()  # noqa: NPY002
        np.testing.assert_array_equal(after[1], before[1])
        assert after[2] == before[2]
        with warnings.catch_warnings():
            warnings.simplefilter("error", EnvWarning)  # the corridor itself: no warning
            warn_if_not_repeatable(_config(f"{MODULE}:J20Corridor-v0", [0]).resolve())
    finally:
        np.random.set_state(state)  # noqa: NPY002 - what the run's environment drew
