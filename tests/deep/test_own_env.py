"""Training on one's own Gymnasium environment, as README "Deep agents" describes it: the
README's example module and commands, how episode ends reach the replay, and the checks of
``maxminq evaluate --gif`` and of ``--env module:EnvId``."""

from __future__ import annotations

import json
import pathlib
import re
import shlex
import sys
import warnings

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from docs_text import page
from line_env import LineEnv
from PIL import Image

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import Trainer, run_training
from maxminq.envs import get_env_defaults
from maxminq.errors import UsageError

README = page("deep-agents")  # the page that holds "Your own environment"


# Smaller than the README's run, so that the test is quick; every other option as written.
QUICK = {
    "train": ["--learning-starts", "100", "--eval-episodes", "1", "--no-progress", "--no-plot"]
}


QUICK["evaluate"] = ["--episodes", "2", "--no-progress"]


def _own_env_text() -> str:
    """README's "Your own environment" paragraph, its code blocks included."""
    return README.split("**Your own environment.**", 1)[1].split("\n| agent |", 1)[0]


class _Counter(LineEnv):
    """Reward 1 a step; ``terminated`` at the 5th step of an episode, never ``truncated``
    (a registered ``max_episode_steps`` adds the time limit)."""

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return super().reset(seed=seed)

    def step(self, action):
        self.t += 1
        return self._obs(), 1.0, self.t == 5, False, {}


class _Endless(_Counter):
    def step(self, action):
        obs, reward, _, truncated, info = super().step(action)
        return obs, reward, False, truncated, info


class _FloatFrames(LineEnv):
    """Renders rgb_array frames as floats in [0, 1] (Gymnasium's are uint8)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def render(self):
        return np.ones((4, 8, 3)) * (self.pos / 7)


def _finished_run(cls: type, out: pathlib.Path) -> None:
    env_id = f"mmq-test/Own{cls.__name__}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=cls, max_episode_steps=10)
    cfg = TrainConfig(
        env_id=env_id, agent="dqn", steps=120, seeds=[0], learning_starts=100, eval_episodes=1
    )
    run_training(cfg, out, progress=False)


class _NeedsSize(LineEnv):
    """Its constructor needs a keyword (which ``--env-kwargs`` gives); cells = ``size``."""

    def __init__(self, size):
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)


def test_readme_own_environment_example_works_as_written(tmp_path, monkeypatch, capsys) -> None:
    """The module and the commands of the README, run from a fresh folder as a user would
    (``PYTHONPATH=.``): both commands succeed, the GIF is the module's 16 x 160 frames, and
    the same train command twice gives the same episodes."""
    text = _own_env_text()
    module = text.split("```python\n", 1)[1].split("```", 1)[0]
    commands = text.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert [c.split()[:3] for c in commands] == [
        ["PYTHONPATH=.", "maxminq", "train"],
        ["PYTHONPATH=.", "maxminq", "evaluate"],
    ]
    (tmp_path / "my_envs.py").write_text(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for line in commands:
            argv = shlex.split(line)[2:]
            if argv[0] == "train":
                argv[argv.index("--steps") + 1] = "200"
            assert main([*argv, *QUICK[argv[0]]]) == 0, capsys.readouterr().err
        out = pathlib.Path(re.search(r"--out (\S+)", commands[0]).group(1))
        gif = pathlib.Path(re.search(r"--gif (\S+)", commands[1]).group(1))
        assert Image.open(gif).size == (160, 16)  # width 16 * n cells, n = 10
        again = tmp_path / "again"
        argv = shlex.split(commands[0])[2:]
        argv[argv.index("--steps") + 1] = "200"
        argv[argv.index("--out") + 1] = str(again)
        assert main([*argv, *QUICK["train"]]) == 0
        first = pd.read_csv(out / "episodes.csv")
        assert len(first) >= 2 and first["terminated"].any()
        pd.testing.assert_frame_equal(first, pd.read_csv(again / "episodes.csv"))
    finally:
        sys.modules.pop("my_envs", None)
        gym.registry.pop("Corridor-v0", None)


@pytest.mark.parametrize(
    "cls,cap,length,terminated,truncated",
    [
        (_Counter, 5, 5, True, True),  # the terminal step is also the cap's: terminal
        (_Counter, 8, 5, True, False),
        (_Endless, 4, 4, False, True),  # cut by the time limit only: bootstraps
    ],
)
def test_episode_ends_reach_the_replay_as_documented(cls, cap, length, terminated, truncated):
    """Only ``terminated`` sets a transition's done flag (no bootstrap); a time-limit cut
    keeps bootstrapping, also for an environment that ends only by truncation."""
    env_id = f"mmq-test/Own{cls.__name__}-cap{cap}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=cls, max_episode_steps=cap)
    steps = 20
    cfg = TrainConfig(
        env_id=env_id, agent="maxmin-dqn", n=2, steps=steps, seeds=[0], learning_starts=steps
    ).resolve()
    tr = Trainer(cfg)
    try:
        for _ in range(steps):
            tr.train_step()
        episodes = pd.DataFrame(tr.rows["episodes"])
        assert (episodes[4] == length).all() and len(episodes) == steps // length
        assert (episodes[5] == terminated).all() and (episodes[6] == truncated).all()
        expected = np.zeros(steps)
        expected[length - 1 :: length] = float(terminated)
        np.testing.assert_array_equal(tr.replay.terminated[0, :steps], expected)
    finally:
        tr.close()


@pytest.mark.parametrize("cls,needle", [(_FloatFrames, "float64"), (LineEnv, "render_mode")])
def test_gif_an_environment_cannot_give_is_one_line_before_any_episode(
    tmp_path, capsys, cls, needle
) -> None:
    """Float frames were a Pillow traceback after the episodes had been played; an
    environment without render_mode printed Gymnasium's warning before the error line."""
    _finished_run(cls, tmp_path / "run")
    csv = tmp_path / "episodes.csv"
    argv = ["evaluate", str(tmp_path / "run"), "--no-progress", "--csv", str(csv)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main([*argv, "--gif", str(tmp_path / "e.gif")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("maxminq evaluate: error: --gif:")
    assert needle in err, err
    assert not caught, [str(w.message) for w in caught]
    assert not csv.exists() and not (tmp_path / "e.gif").exists()


def test_a_close_id_is_suggested_with_its_module(tmp_path, monkeypatch, capsys) -> None:
    """The id a user module registers is unknown without the module: 'did you mean
    Tiny-v0' sent the user to an id that fails in a new process."""
    name = "own_envs_suggest_mmq"
    (tmp_path / f"{name}.py").write_text(
        "import gymnasium as gym\n"
        "gym.register('OwnTiny-v0', entry_point='line_env:LineEnv', max_episode_steps=5)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["envs", "--env", f"{name}:OwnTiny-v1"]) == 2
    err = capsys.readouterr().err.strip()
    hint = f"did you mean {name}:OwnTiny-v0? ('maxminq envs' lists the paper's ids)"
    assert err.endswith(hint), err
    assert main(["envs", "--env", f"{name}:OwnTiny-v0"]) == 0
    capsys.readouterr()
    assert main(["envs", "--env", "LunarLander-v2"]) == 2  # a Gymnasium id: no module
    assert "did you mean LunarLander-v3?" in capsys.readouterr().err


def test_an_environment_that_needs_keywords(tmp_path, capsys) -> None:
    """Building it without them for its defaults was a TypeError traceback from gym.make."""
    env_id = "mmq-test/OwnNeedsSize-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=_NeedsSize, max_episode_steps=7)
    d = get_env_defaults(env_id, {"size": 3})
    assert (d.network, d.max_episode_steps, d.paper) == ("mlp", 7, False)
    with pytest.raises(UsageError, match=r"^--env-kwargs: .* refused \{\"width\": 3\}: "):
        get_env_defaults(env_id, {"width": 3})
    out = tmp_path / "run"
    assert main(["train", "--env", env_id, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--env: " in err and "'size'" in err, err
    assert err.endswith("pass them with --env-kwargs") and not out.exists()
    # maxminq envs shows its defaults when given them (it could not build it).
    assert main(["envs", "--env", env_id]) == 2 and "'size'" in capsys.readouterr().err
    assert main(["envs", "--env", env_id, "--env-kwargs", '{"size": 3}']) == 0
    assert re.search(r"^  --max-episode-steps +7$", capsys.readouterr().out, re.MULTILINE)
    # Given them, it trains: the defaults are read from the environment built with them.
    argv = ["train", "--env", env_id, "--env-kwargs", '{"size": 8}', "--steps", "150"]
    argv += ["--learning-starts", "100", "--eval-episodes", "1", "--no-plot", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["env_kwargs"] == {"size": 8}
