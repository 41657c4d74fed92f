"""Findings of session 22's own-environment journey in the deep path: training's own test
episodes say how they ended (``tests.csv``'s terminated, truncated, as ``maxminq evaluate``'s
CSV); ``run_training`` from Python warns of a run that never learns as the command does; an
environment whose reset skips ``super().reset(seed=seed)`` is told so; ``--network mlp`` on
an image gets a hint that works."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import textwrap
import warnings

import pandas as pd
import pytest
from test_own_operator_deep import _small  # a tiny two-seed generalized-dqn run

from maxminq.deep import TrainConfig, read_tables, run_training
from maxminq.deep.config import EnvWarning
from maxminq.deep.env_checks import warn_if_not_repeatable
from maxminq.errors import UsageError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_tests_table_says_how_each_test_episode_ended(tmp_path):
    # CartPole's cap at 12 steps: the untrained agent's test episodes end either way.
    cfg = _small(agent="dqn", n=1, steps=80, eval_episodes=3, max_episode_steps=12)
    tables = run_training(cfg, tmp_path / "run", progress=False)
    tests = tables["tests"]
    assert list(tests.columns) == ["seed", "episode", "return", "length", "terminated", "truncated"]
    # every episode ended one way: the cap (length 12, truncated) or a fall (terminated)
    assert (tests["terminated"] != tests["truncated"]).all()
    assert (tests["truncated"] == (tests["length"] == 12)).all()
    assert tests["terminated"].any() and tests["truncated"].any()  # both kinds here
    read = read_tables(tmp_path / "run")["tests"]
    assert read["terminated"].tolist() == tests["terminated"].tolist()
    assert read["truncated"].tolist() == tests["truncated"].tolist()


def test_published_tests_tables_still_read_without_the_flags():
    tests = read_tables("docs/runs/lunarlander/dqn")["tests"]
    assert list(tests.columns) == ["seed", "episode", "return", "length"]
    assert len(tests) > 0
    assert isinstance(tests, pd.DataFrame)


def test_run_training_warns_of_a_run_that_never_learns(tmp_path, capsys):
    from maxminq.cli import main
    from maxminq.deep.config import NeverLearnsWarning

    cfg = _small(agent="dqn", n=1, steps=60, learning_starts=60, eval_episodes=0)
    with pytest.warns(NeverLearnsWarning) as caught:
        run_training(cfg, tmp_path / "py", progress=False)
    said = [str(w.message) for w in caught if w.category is NeverLearnsWarning]
    assert said == ["--steps 60 <= --learning-starts 60: only random steps, the agents never learn"]
    # one step more learns: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NeverLearnsWarning)
        run_training(dataclasses.replace(cfg, steps=61), tmp_path / "learns", progress=False)
    # The command shows the same warning, once, as its one line.
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "60"]
    argv += ["--learning-starts", "60", "--eval-episodes", "0", "--hidden", "8"]
    assert main([*argv, "--no-progress", "--no-plot", "--out", str(tmp_path / "cli")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "never learn" in line]
    assert err == ["maxminq train: warning: " + said[0]]


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
def own_envs(tmp_path, monkeypatch):
    """The user's module of environments, importable for the test, forgotten after."""
    import gymnasium as gym

    folder = tmp_path / "user"
    folder.mkdir()
    (folder / f"{ENV_MODULE}.py").write_text(ENV_SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, ENV_MODULE, raising=False)
    yield importlib.import_module(ENV_MODULE)
    sys.modules.pop(ENV_MODULE, None)
    for name in ("NoSuperReset", "SuperWithoutSeed", "Seeded", "Carried"):
        gym.registry.pop(f"{name}-v0", None)


def _repeatable_warnings(env: str) -> list[str]:
    cfg = TrainConfig(env_id=f"{ENV_MODULE}:{env}-v0", agent="dqn", steps=50, seeds=[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_not_repeatable(cfg.resolve())
    return [str(w.message) for w in caught if w.category is EnvWarning]


@pytest.mark.parametrize("env", ["NoSuperReset", "SuperWithoutSeed"])
def test_a_reset_that_does_not_seed_np_random_is_told_to_call_super_reset(own_envs, env):
    (said,) = _repeatable_warnings(env)
    assert "because its reset does not seed self.np_random, which it draws from" in said
    assert "(call super().reset(seed=seed) first in your reset)" in said
    assert "state carried" not in said and "sample()" not in said


def test_other_unrepeatable_envs_keep_the_general_text(own_envs):
    # Carried never draws from np_random: super().reset(seed=seed) would not mend it
    (said,) = _repeatable_warnings("Carried")
    assert "(state carried from one episode to the next, or random numbers" in said
    assert "super().reset" not in said
    assert _repeatable_warnings("Seeded") == []  # the same env seeded: repeatable, no word


def _refusal(network: str, shape: tuple[int, ...]) -> str:
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="my_envs:Img-v0", network=network).check_observation_shape(shape)
    return str(err.value)


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


def test_envs_env_refuses_a_channels_last_image_with_trains_remedy(tmp_path, monkeypatch, capsys):
    from maxminq.cli import main

    (tmp_path / "img_env22b.py").write_text(
        textwrap.dedent(
            """
            import gymnasium as gym
            import numpy as np

            class Img(gym.Env):
                observation_space = gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)
                action_space = gym.spaces.Discrete(3)

                def reset(self, *, seed=None, options=None):
                    super().reset(seed=seed)
                    return np.zeros((8, 8, 3), np.uint8), {}

                def step(self, action):
                    return np.zeros((8, 8, 3), np.uint8), 0.0, True, False, {}

            gym.register(id="Img22b-v0", entry_point="img_env22b:Img")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "img_env22b", raising=False)
    try:
        assert main(["envs", "--env", "img_env22b:Img22b-v0"]) == 2
        envs = capsys.readouterr().err.strip()
        out = tmp_path / "run"
        argv = ["train", "--env", "img_env22b:Img22b-v0", "--network", "mlp", "--out", str(out)]
        assert main(argv) == 2
        train = capsys.readouterr().err.strip()
    finally:
        import gymnasium as gym

        gym.registry.pop("Img22b-v0", None)
        sys.modules.pop("img_env22b", None)
    assert not out.exists()
    remedy = train[train.index("(channels last?") :]
    end = "192 features; either in an entry point of yours that returns the wrapped environment)"
    assert remedy.endswith(end)
    assert envs.endswith(remedy) and len(envs.splitlines()) == 1


def test_a_sweep_says_once_that_its_runs_never_learn(tmp_path, capsys):
    """The sweep warns before it starts; each run's run_training now warns too, which its
    driver passed on as a second line of the same news. A real sweep of one 60-step run."""
    from maxminq.cli import main
    from maxminq.deep.config import NeverLearnsWarning

    (tmp_path / "idle.yaml").write_text(
        textwrap.dedent(
            """
            name: idle
            kind: deep
            fixed: {env_id: CartPole-v1}
            scales:
              quick:
                fixed: {steps: 60, seeds: [0], learning_starts: 100}
                variants: [{agent: dqn, n: 1}]
            """
        )
    )
    argv = ["sweep", str(tmp_path / "idle.yaml"), "--out", str(tmp_path / "o")]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 deep run(s) with steps <= learning_starts never learn" in err[0]
    with pytest.warns(NeverLearnsWarning):  # the filter ends with the command
        warnings.warn("again", NeverLearnsWarning, stacklevel=1)


def test_a_seed_that_cannot_act_in_an_evaluation_is_diverged_and_the_others_train_on():
    """An evaluation during training (eval_every) that finds seed 1's networks NaN: the seed
    is diverged at that step with the evaluation named, has no evals rows there, and seed 0
    trains on exactly as in a run where nothing happened to seed 1."""
    from maxminq.deep.train import Trainer

    cfg = _small(agent="dqn", n=1, steps=120, eval_episodes=0, eval_every=60).resolve()
    original = Trainer.evaluate_during_training

    def run(poison: bool) -> dict[str, pd.DataFrame]:
        tr = Trainer(cfg)

        def evaluate(self):  # seed 1's last update (unseen yet) left its networks NaN
            if poison and self.step == 60:
                self.learner.online.flat[1:2].fill_(float("nan"))
            original(self)

        try:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(Trainer, "evaluate_during_training", evaluate)
                while tr.step < cfg.steps and tr.active.any():
                    tr.train_step()
            return tr.tables()
        finally:
            tr.close()

    poisoned, plain = run(True), run(False)
    runs = poisoned["runs"].set_index("seed")
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 60
    assert runs.loc[1, "diverged_cause"] == (
        "networks: its networks held NaN or inf in an evaluation episode (after its last update)"
    )
    assert runs.loc[0, "status"] == "done"
    evals = poisoned["evals"]
    assert evals[evals["step"] == 60]["seed"].unique().tolist() == [0]
    assert evals[evals["step"] == 120]["seed"].unique().tolist() == [0]
    for name in ("episodes", "evals"):
        mine = poisoned[name][poisoned[name]["seed"] == 0].reset_index(drop=True)
        theirs = plain[name][plain[name]["seed"] == 0].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, theirs)
    ours = poisoned["metrics"][poisoned["metrics"]["seed"] == 0].drop(columns="steps_per_s")
    base = plain["metrics"][plain["metrics"]["seed"] == 0].drop(columns="steps_per_s")
    pd.testing.assert_frame_equal(ours.reset_index(drop=True), base.reset_index(drop=True))
