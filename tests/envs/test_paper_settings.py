"""The paper's deep-RL settings against every place the code holds them.

Expected values are transcribed here by hand from the paper (Lan et al. 2020, Sec. 5.2),
the MinAtar paper's DQN it defers to (Young and Tian 2019) and the authors' public code and
posted best settings (training lengths, episode caps, random steps first, step size / N),
not read from the registry: the registry, ``TrainConfig.resolve()`` and the shipped sweep
configs must each agree with them.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import REPO

from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.envs.registry import NETWORK_HIDDEN, PAPER_ENVS
from maxminq.experiments.config import load_config

CONFIGS = REPO / "configs"


# Sec. 5.2: "multi-layer perceptron with hidden layers fixed to [64, 64]. The discount factor
# was 0.99. The size of the replay buffer was 10,000. [...] RMSprop with gradient clip 5.
# The batch size was 32. The target network was updated every 200 frames. [...] epsilon
# decreasing linearly from 1.0 to 0.01 in 1,000 steps"; the authors' code: MSE loss,
# torch's RMSprop options, 1,000 random steps before learning.
FEATURE: dict[str, Any] = {
    "network": "mlp",
    "hidden": (64, 64),
    "gamma": 0.99,
    "buffer_size": 10_000,
    "batch_size": 32,
    "target_update": 200,
    "eps_start": 1.0,
    "eps_end": 0.01,
    "eps_decay_steps": 1_000,
    "learning_starts": 1_000,
    "loss": "mse",
    "grad_clip": 5.0,
    "optimizer": "rmsprop",
    "optimizer_kwargs": {},
}


# MinAtar's DQN: conv 16 3x3 -> 128, replay 100,000, batch 32, target every 1,000, centered
# RMSprop (alpha 0.95, eps 0.01), Huber loss, 5,000 random frames, eps 1.0 -> 0.1 over
# 100,000 frames, gamma 0.99, no gradient clipping.
MINATAR: dict[str, Any] = {
    "network": "minatar_cnn",
    "hidden": (128,),
    "gamma": 0.99,
    "buffer_size": 100_000,
    "batch_size": 32,
    "target_update": 1_000,
    "eps_start": 1.0,
    "eps_end": 0.1,
    "eps_decay_steps": 100_000,
    "learning_starts": 5_000,
    "loss": "huber",
    "grad_clip": None,
    "optimizer": "centered_rmsprop",
    "optimizer_kwargs": {"alpha": 0.95, "eps": 0.01},
}


LR_LUNAR = (3e-3, 1e-3, 3e-4, 1e-4, 3e-5)  # Sec. 5.2, LunarLander (and MinAtar)


LR_PLE = (1e-3, 3e-4, 1e-4, 3e-5, 1e-5)  # Sec. 5.2, Catcher and Pixelcopter


# env id -> (settings, training steps, episode cap, step sizes swept, posted best
# {agent: (lr, N)}; for MinAtar only DQN's step size was posted).
PAPER: dict[str, tuple[dict[str, Any], int, int | None, tuple[float, ...], dict]] = {
    "maxminq/Catcher-v0": (
        FEATURE,
        3_500_000,
        2_000,
        LR_PLE,
        {"dqn": (1e-4, 1), "ddqn": (1e-4, 1), "averaged-dqn": (1e-4, 2), "maxmin-dqn": (3e-4, 6)},
    ),
    "maxminq/Pixelcopter-v0": (
        FEATURE,
        2_000_000,
        500,
        LR_PLE,
        {"dqn": (3e-5, 1), "ddqn": (3e-5, 1), "averaged-dqn": (3e-5, 7), "maxmin-dqn": (3e-4, 6)},
    ),
    "LunarLander-v3": (
        FEATURE,
        1_500_000,
        1_000,
        LR_LUNAR,
        {"dqn": (3e-4, 1), "ddqn": (3e-4, 1), "averaged-dqn": (3e-4, 4), "maxmin-dqn": (1e-3, 3)},
    ),
    "maxminq/MinAtar-Asterix-v0": (MINATAR, 5_000_000, None, LR_LUNAR, {"dqn": (1e-4, 1)}),
    "maxminq/MinAtar-Breakout-v0": (MINATAR, 5_000_000, None, LR_LUNAR, {"dqn": (1e-3, 1)}),
    "maxminq/MinAtar-Seaquest-v0": (MINATAR, 5_000_000, 10_000, LR_LUNAR, {"dqn": (1e-4, 1)}),
    "maxminq/MinAtar-SpaceInvaders-v0": (MINATAR, 5_000_000, None, LR_LUNAR, {"dqn": (3e-4, 1)}),
}


SWEEPS = {
    "catcher": "maxminq/Catcher-v0",
    "pixelcopter": "maxminq/Pixelcopter-v0",
    "lunarlander": "LunarLander-v3",
    "minatar_asterix": "maxminq/MinAtar-Asterix-v0",
    "minatar_breakout": "maxminq/MinAtar-Breakout-v0",
    "minatar_seaquest": "maxminq/MinAtar-Seaquest-v0",
    "minatar_space_invaders": "maxminq/MinAtar-SpaceInvaders-v0",
}


# The authors' gym-games CatcherEnv (2019-2024) is built with normalize=True, and their
# Explorer code makes it by gym.make("Catcher-PLE-v0") with no keywords; PixelcopterEnv
# defaults to normalize=False (raw state).
AUTHORS_ENV_KWARGS = {"maxminq/Catcher-v0": {"normalize": True}}


def test_the_registry_holds_the_papers_settings() -> None:
    assert {k for k, d in PAPER_ENVS.items() if d.paper} == set(PAPER)
    for env_id, (settings, steps, cap, lrs, best) in PAPER.items():
        d = PAPER_ENVS[env_id]
        got = {name: getattr(d, name) for name in settings}
        assert got == settings, env_id
        assert (d.train_steps, d.max_episode_steps, d.lr_sweep) == (steps, cap, lrs), env_id
        assert d.n_sweep == (2, 3, 4, 5, 6, 7, 8, 9)  # "N was chosen from [2, ..., 9]"
        assert (d.eval_episodes, d.eval_eps, d.runs) == (100, 0.01, 20)
        for agent, (lr, n) in best.items():
            assert d.best[agent]["lr"] == lr and d.best_source[agent] == "authors", env_id
            assert d.best[agent]["n"] == (None if n == 1 else n), env_id
    # Asterix: the authors suggested N = 4 for Maxmin, with a larger step size than DQN's.
    asterix = PAPER_ENVS["maxminq/MinAtar-Asterix-v0"].best["maxmin-dqn"]
    assert asterix["n"] == 4 and asterix["lr"] > 1e-4
    for d in PAPER_ENVS.values():  # every agent has a setting, on the swept grid
        assert set(d.best) == {"dqn", "ddqn", "averaged-dqn", "maxmin-dqn"}
        assert all(b["lr"] in d.lr_sweep and b["n"] in (None, *d.n_sweep) for b in d.best.values())


@pytest.mark.parametrize("env_id", list(PAPER))
def test_a_training_run_resolves_to_the_papers_settings(env_id: str) -> None:
    settings, steps, cap, _, best = PAPER[env_id]
    for agent in ("dqn", "ddqn", "averaged-dqn", "maxmin-dqn"):
        c = TrainConfig(env_id=env_id, agent=agent).resolve()
        got = {name: getattr(c, name) for name in settings}
        assert got == settings, (env_id, agent)
        assert (c.steps, c.max_episode_steps) == (steps, cap)
        # The test protocol (100 episodes, eps = 0.01), one net updated per step (Alg. 1),
        # and the envs as the authors made them.
        assert (c.eval_episodes, c.eval_eps, c.update_members) == (100, 0.01, 1)
        assert c.env_kwargs == AUTHORS_ENV_KWARGS.get(env_id, {})
        if agent in best:
            assert (c.lr, c.n) == best[agent], (env_id, agent)


@pytest.mark.parametrize("name", list(SWEEPS))
def test_paper_scale_sweeps_are_the_papers_grid(name: str) -> None:
    env_id = SWEEPS[name]
    settings, steps, cap, lrs, _ = PAPER[env_id]
    runs = [r.settings for r in load_config(CONFIGS / f"{name}.yaml", "paper").runs]
    grid = {(r["agent"], r["n"], r["lr"]) for r in runs}
    want = {(a, 1, lr) for a in ("dqn", "ddqn") for lr in lrs}
    want |= {(a, n, lr) for a in ("averaged-dqn", "maxmin-dqn") for n in range(2, 10) for lr in lrs}
    assert grid == want and len(runs) == len(want)
    for r in runs:
        assert r["env_id"] == env_id and r["seeds"] == list(range(20))  # 20 runs
        assert (r["steps"], r["max_episode_steps"], r["eval_episodes"], r["eval_eps"]) == (
            steps,
            cap,
            100,
            0.01,
        )
        assert {k: r[k] for k in settings if k != "hidden"} == {
            k: v for k, v in settings.items() if k != "hidden"
        }
        assert "hidden" not in r  # left out at the paper's
        assert r.get("env_kwargs", {}) == AUTHORS_ENV_KWARGS.get(env_id, {})


@pytest.mark.parametrize("name", list(SWEEPS))
def test_quick_sweeps_run_each_agent_at_its_best_setting(name: str) -> None:
    """The posted best; where nothing was posted (MinAtar beside DQN's step size), the
    registry's assumed setting, as the configs' comments say."""
    env_id = SWEEPS[name]
    assumed = {a: (b["lr"], b["n"] or 1) for a, b in PAPER_ENVS[env_id].best.items()}
    runs = load_config(CONFIGS / f"{name}.yaml", "quick").runs
    got = {r.settings["agent"]: (r.settings["lr"], r.settings["n"]) for r in runs}
    assert got == {**assumed, **PAPER[env_id][4]}


@pytest.mark.parametrize("name", ["catcher", "pixelcopter", "lunarlander"])
def test_best_scale_is_the_posted_best_runs_of_the_paper_grid(name: str) -> None:
    """``--scale best``: each agent once, at its posted step size / N, with the paper's
    length, 20 seeds and 100 test episodes: the very runs of the paper grid (same run ids)."""
    env_id = SWEEPS[name]
    _, steps, _, _, posted = PAPER[env_id]
    best = load_config(CONFIGS / f"{name}.yaml", "best").runs
    assert {r.settings["agent"]: (r.settings["lr"], r.settings["n"]) for r in best} == posted
    assert len(best) == len(posted)
    for r in best:
        assert (r.settings["steps"], r.settings["eval_episodes"]) == (steps, 100)
        assert r.settings["seeds"] == list(range(20))
    paper = {r.run_id for r in load_config(CONFIGS / f"{name}.yaml", "paper").runs}
    assert {r.run_id for r in best} <= paper


@pytest.mark.parametrize(
    ("name", "env_id"),
    [
        ("pixelcopter_varying_n", "maxminq/Pixelcopter-v0"),
        ("asterix_varying_n", "maxminq/MinAtar-Asterix-v0"),
    ],
)
def test_varying_n_figures_use_maxmins_step_size(name: str, env_id: str) -> None:
    runs = load_config(CONFIGS / f"{name}.yaml", "paper").runs
    lr = PAPER_ENVS[env_id].best["maxmin-dqn"]["lr"]
    assert {(r.settings["agent"], r.settings["lr"]) for r in runs} == {("maxmin-dqn", lr)}
    assert sorted(r.settings["n"] for r in runs) == [2, 4, 6, 8]


def test_hidden_layers_have_one_source() -> None:
    # The paper's MLP [64, 64]; MinAtar's one fully connected layer of 128.
    assert NETWORK_HIDDEN == {"mlp": (64, 64), "minatar_cnn": (128,)}
    for d in PAPER_ENVS.values():
        assert d.hidden == NETWORK_HIDDEN[d.network]
    assert build_net("mlp", 1, (8,), 4).sizes == [8, 64, 64, 4]
    assert build_net("minatar_cnn", 1, (4, 10, 10), 6).hidden == 128


def test_training_on_catcher_sees_the_authors_normalised_state() -> None:
    """(x-26)/26, vel/8, (fx-26)/26, (fy-20)/45 of PLE's state: within about +-1.6, where the
    raw pixel coordinates reach 52-64; --env-kwargs '{"normalize": false}' gives them back."""
    c = TrainConfig(env_id="maxminq/Catcher-v0", agent="dqn").resolve()
    env = c.make_env()
    obs, _ = env.reset(seed=0)
    seen = [obs]
    for t in range(300):
        obs, _, term, trunc, _ = env.step(t % 3)
        seen.append(obs)
        if term or trunc:
            obs, _ = env.reset()
    assert max(abs(float(v)) for o in seen for v in o) < 1.7
    raw = TrainConfig(
        env_id="maxminq/Catcher-v0", agent="dqn", env_kwargs={"normalize": False}
    ).resolve()
    obs, _ = raw.make_env().reset(seed=0)
    assert obs[0] == 25.0  # the paddle's first centre x, in pixels
