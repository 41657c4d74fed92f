"""``maxminq envs`` and ``maxminq envs --env ID``: what it prints for an id, and the
environments it refuses as ``maxminq train`` would."""

from __future__ import annotations

import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

from maxminq.cli import main  # noqa: E402


class _OwnClock(gym.Env):
    """Registered without max_episode_steps, it ends every episode itself after 3 steps
    with truncated=True (a clock of its own)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(2, np.float32), 0.0, False, self.t >= 3, {}


def _cap_line(env_id: str, capsys) -> str:
    assert main(["envs", "--env", env_id]) == 0
    out = capsys.readouterr().out.splitlines()
    (line,) = [s for s in out if s.startswith("  --max-episode-steps")]
    return line.removeprefix("  --max-episode-steps").strip()


@pytest.mark.usefixtures("torch_one_thread")
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


@pytest.mark.parametrize("env_id", ["CartPole-v1", "maxminq/MinAtar-Breakout-v0"])
def test_envs_one_id_names_the_train_options_and_each_agents_defaults(env_id: str, capsys) -> None:
    """``maxminq envs --env ID`` printed the registry's field names and Python reprs
    (``train_steps 500000``, ``best {'dqn': {'lr': 0.0003, 'n': None}, ...}``, no Ensemble
    DQN): a newcomer could not tell which ``train`` option each value is the default of, nor
    which --lr and --n an agent gets. Now: option names, thousands separators, and per agent
    the --lr and --n that ``TrainConfig.resolve`` (what train runs) gives it."""
    from maxminq.deep import TrainConfig

    assert main(["envs", "--env", env_id]) == 0
    out = capsys.readouterr().out
    assert "{'" not in out and "train_steps" not in out  # no dict reprs, no field names
    resolved = TrainConfig(env_id=env_id, agent="dqn").resolve()
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines() if line[:4] == "  --"}
    assert lines["--steps"] == f"{resolved.steps:,}"
    assert lines["--buffer-size"] == f"{resolved.buffer_size:,}"
    assert lines["--target-update"] == f"{resolved.target_update:,}"
    assert lines["--bias-every"] == f"{resolved.bias_every:,}"
    assert lines["--checkpoint-every"] == f"{resolved.checkpoint_every:,}"
    assert lines["--optimizer"] == resolved.optimizer and lines["--loss"] == resolved.loss
    for agent in ("dqn", "ddqn", "maxmin-dqn", "averaged-dqn", "ensemble-dqn"):
        c = TrainConfig(env_id=env_id, agent=agent).resolve()
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [agent])
        assert row[1:5] == ["--lr", f"{c.lr:g}", "--n", str(c.n)], (agent, row)


def test_envs_one_id_marks_a_non_paper_id_as_assumed(capsys) -> None:
    """An id outside the paper says that its settings are carried over (LunarLander's step
    sizes and N), a paper id says it has the paper's."""
    assert main(["envs", "--env", "CartPole-v1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("CartPole-v1: not a paper environment"), first
    assert main(["envs", "--env", "LunarLander-v3"]) == 0
    assert capsys.readouterr().out.startswith("LunarLander-v3: a paper environment")


def test_envs_says_no_time_limit_only_where_that_is_known(capsys) -> None:
    """'none (no time limit)' was said of every id without a registered cap: of Freeway,
    which truncates its episodes itself at its timer's end, and of an environment of one's
    own that may do so (only running it would tell: the listing says what is known)."""
    from maxminq.envs.api import OWN_TIME_LIMITS

    gym.register("Leftovers21OwnClock-v0", entry_point=_OwnClock)
    try:
        own = _cap_line("Leftovers21OwnClock-v0", capsys)
    finally:
        del gym.registry["Leftovers21OwnClock-v0"]
    assert own == (
        "none registered (no time limit unless the environment truncates its episodes "
        "itself; --max-episode-steps sets one)"
    )
    assert _cap_line("maxminq/MinAtar-Freeway-v0", capsys) == (
        "none (the game truncates its episodes itself at 2,501 steps: its timer)"
    )
    assert _cap_line("maxminq/MinAtar-Breakout-v0", capsys) == (
        "none (no time limit: episodes end at game over)"
    )
    assert _cap_line("maxminq/Catcher-v0", capsys) == "2,000"
    # Freeway's number is what the game does: 2,501 steps, the last truncated
    env = gym.make("maxminq/MinAtar-Freeway-v0")
    env.reset(seed=0)
    ends = [env.step(1)[2:4] for _ in range(2_501)]
    env.close()
    assert OWN_TIME_LIMITS == {"maxminq/MinAtar-Freeway-v0": 2_501}
    assert ends[-1] == (False, True) and not any(any(e) for e in ends[:-1])


def test_freeway_is_not_said_to_take_the_feature_environments_settings(capsys) -> None:
    """Freeway (not in the paper) is offered with the paper's MinAtar settings, as the
    lines below its header show; the header said 'the paper's feature-environment settings
    with LunarLander-v3's step sizes and N'."""
    assert main(["envs", "--env", "maxminq/MinAtar-Freeway-v0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "maxminq/MinAtar-Freeway-v0: not in the paper, offered with the paper's MinAtar settings",
        "(the step sizes and N are assumed)",
    ]
    assert "  --network            minatar_cnn" in out
    # the agents' column lines up, generalized-dqn's too
    rows = [s for s in out if " --lr " in s and s.startswith("  ")]
    assert len(rows) == 6 and len({s.index("--lr") for s in rows}) == 1, rows


def test_envs_refuses_an_environment_train_refuses(capsys) -> None:
    """'maxminq envs --env Pendulum-v1' (continuous actions) listed 'what maxminq train
    --env Pendulum-v1 uses for an option not given', a command that refuses it."""
    assert main(["envs", "--env", "Pendulum-v1"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "maxminq envs: error: --env: 'maxminq train --env Pendulum-v1' refuses it: "
        "Pendulum-v1 needs a discrete action space, has Box(-2.0, 2.0, (1,), float32); "
        "discretize it with gymnasium.wrappers.DiscretizeAction(env, bins) in an entry point "
        "of yours that returns the wrapped environment"
    ]
    assert main(["envs", "--env", "CartPole-v1"]) == 0  # discrete: listed as before
    assert capsys.readouterr().out.startswith("CartPole-v1: not a paper environment")


def test_envs_prints_the_lr_n_and_intervals_that_train_resolves() -> None:
    """``maxminq envs --env ID`` shows what ``maxminq train`` then uses (an agent's --lr and
    --n, --bias-every and --checkpoint-every, --steps, --eps-decay-steps), for every
    registered environment and agent: read back from the printed text, so a listing that
    rounds a step size, drops an agent or shows the registry's field instead of the
    resolved value fails."""
    import re

    from maxminq.commands.envs import defaults_text
    from maxminq.deep.config import AGENT_NAMES, TrainConfig
    from maxminq.envs.registry import PAPER_ENVS, get_env_defaults

    for env_id in [*PAPER_ENVS, "CartPole-v1"]:
        text = defaults_text(get_env_defaults(env_id))
        for agent in AGENT_NAMES:
            op = "maxmin" if agent == "generalized-dqn" else None  # its required G
            resolved = TrainConfig(env_id=env_id, agent=agent, operator=op).resolve()
            row = re.search(rf"^  {agent} +--lr (\S+) +--n (\d+)", text, re.M)
            assert row is not None, (env_id, agent)
            assert (float(row[1]), int(row[2])) == (resolved.lr, resolved.n), (env_id, agent)
        for option, value in (
            ("--bias-every", resolved.bias_every),
            ("--checkpoint-every", resolved.checkpoint_every),
            ("--steps", resolved.steps),
            ("--eps-decay-steps", resolved.eps_decay_steps),
        ):
            shown = re.search(rf"^  {option} +([\d,]+)", text, re.M)
            assert shown is not None and int(shown[1].replace(",", "")) == value, (env_id, option)
