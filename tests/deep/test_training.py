"""Training loop: seed independence, resume, time limits, divergence, learning, CLI errors."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys
import warnings

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from deep_runs import (
    _deterministic,
    _shown,
    _small,
    _tensorboard_events,
    train_killed_at_330_then_resumed,
)
from line_env import LineEnv as _Line

from maxminq.cli import main
from maxminq.deep.bias_probes import _discounted_returns
from maxminq.deep.config import TrainConfig
from maxminq.deep.replay import ReplayBuffers
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import UsageError
from maxminq.experiments.config import ConfigError, load_config


def _seed_rows(tables: dict[str, pd.DataFrame], seed: int) -> dict[str, pd.DataFrame]:
    return {
        k: v[v["seed"] == seed].reset_index(drop=True) for k, v in _deterministic(tables).items()
    }


def _random_return(episodes: int = 30) -> float:
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(0)
    total = 0.0
    for e in range(episodes):
        env.reset(seed=e)
        done = False
        while not done:
            _, r, term, trunc, _ = env.step(int(rng.integers(2)))
            total += r
            done = term or trunc
    return total / episodes


class _StartsAtOne(_Line):
    action_space = gym.spaces.Discrete(2, start=1)


class _BoxActions(_Line):
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)


class _DictObs(_Line):
    observation_space = gym.spaces.Dict({"cell": _Line.observation_space})


class _ResetOneValue(_Line):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed)[0][:1], {}  # (1,): would broadcast into (8,)


class _StepSevenValues(_Line):
    def step(self, action):
        obs, *rest = super().step(action)
        return obs[:7], *rest


class _ArrayReward(_Line):
    def step(self, action):
        obs, reward, *rest = super().step(action)
        return obs, np.array([reward]), *rest  # float() of it: a TypeError traceback


class _ChannelsLast(_Line):
    observation_space = gym.spaces.Box(0, 1, (10, 10, 2), np.uint8)

    def _obs(self) -> np.ndarray:
        return np.zeros((10, 10, 2), np.uint8)


class _HalfValuesInUint8(_Line):
    """Says uint8 images, gives 0.5: the uint8 replay buffers stored it as 0, silently."""

    observation_space = gym.spaces.Box(0, 1, (2, 10, 10), np.uint8)

    def _obs(self) -> np.ndarray:
        return np.full((2, 10, 10), 0.5, np.float32)


class _LateOneValue(_Line):
    """Fine for the check and the first resets, then reset() gives a (1,) observation."""

    def reset(self, *, seed=None, options=None):
        obs, info = super().reset(seed=seed)
        return (obs[:1] if type(self).resets > 6 else obs), info


class _LateSevenValues(_Line):
    """Fine for the check and the first episodes, then step() gives a (7,) observation."""

    def step(self, action):
        obs, *rest = super().step(action)
        return (obs[:7] if type(self).resets > 6 else obs), *rest


class _NotReplayable(_Line):
    """Observations scaled by a count of resets shared by all instances, not by the seed:
    an episode replayed from its reset seed never looks the same."""

    def reset(self, *, seed=None, options=None):
        self.scale = 1.0 / (1 + type(self).resets)
        return super().reset(seed=seed)

    def _obs(self) -> np.ndarray:
        return super()._obs() * np.float32(self.scale)


def _register(cls: type) -> str:
    env_id = f"mmq-test/{cls.__name__.strip('_')}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=cls, max_episode_steps=20)
    return env_id


def test_seed_results_do_not_depend_on_other_seeds(tmp_path: pathlib.Path) -> None:
    """Seed 0 alone and seed 0 among two others give bitwise identical tables (CPU)."""
    alone = run_training(_small(seeds=[0]), tmp_path / "alone")
    among = run_training(_small(seeds=[7, 0, 3]), tmp_path / "among")
    a, b = _seed_rows(alone, 0), _seed_rows(among, 0)
    assert len(a["episodes"]) > 5 and len(a["tests"]) == 2
    for name in ("episodes", "tests", "metrics", "runs"):
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True)
    # ... while different seeds really differ.
    assert not a["episodes"]["return"].equals(_seed_rows(among, 7)["episodes"]["return"])


@pytest.mark.parametrize("stop_after", [230, 350])
def test_resume_after_kill_equals_uninterrupted(tmp_path: pathlib.Path, stop_after: int) -> None:
    """A run stopped at step 230 (mid-episode) or 350 (its last step, before the last
    partial metrics interval is logged), checkpoint written, and resumed gives the same
    tables as one run straight through."""
    cfg = _small(seeds=[1, 2], agent="averaged-dqn", checkpoint_every=100, steps=350)
    full = run_training(cfg, tmp_path / "full", resume=False)
    # Metrics every 100 steps, and once for the last 50.
    assert (
        full["metrics"].groupby("seed")["step"].apply(list).tolist() == [[100, 200, 300, 350]] * 2
    )
    out = tmp_path / "killed"
    assert run_training(cfg, out, stop_after=stop_after) == {}
    assert (out / "checkpoint" / "state.pt").exists() and not (out / "runs.csv").exists()
    resumed = run_training(cfg, out, resume=True)
    for name in ("episodes", "tests", "metrics", "runs"):
        pd.testing.assert_frame_equal(
            _deterministic(full)[name], _deterministic(resumed)[name], check_exact=True
        )
    # A different config cannot silently continue that checkpoint.
    (out / "runs.csv").unlink()
    with pytest.raises(UsageError, match="--resume"):
        run_training(_small(seeds=[1, 2], agent="averaged-dqn", lr=3e-4), out, resume=True)


@pytest.mark.parametrize("timeout_as_terminal", [False, True])
def test_truncation_bootstraps_and_termination_does_not(timeout_as_terminal: bool) -> None:
    """Time-limit cuts are stored as non-terminal (unless --timeout-as-terminal), with the
    true final observation, and their target is r + gamma * max_a Q_target(s', a)."""
    cfg = _small(
        agent="dqn", n=1, max_episode_steps=15, timeout_as_terminal=timeout_as_terminal
    ).resolve()
    tr = Trainer(cfg)
    env = gym.make("CartPole-v1")  # independent replay of seed 0's episodes
    for _ in range(150):
        obs0 = tr.obs[0].copy()
        seed_before = tr.ep_seed[0]
        actions_before = list(tr.ep_actions[0])
        tr.train_step()
        pos = (tr.replay.pos - 1) % tr.replay.capacity
        if not actions_before:  # first step of an episode: check the stored obs
            ref, _ = env.reset(seed=seed_before)
            np.testing.assert_array_equal(tr.replay.obs[0, pos], ref.astype(np.float32))
        np.testing.assert_array_equal(tr.replay.obs[0, pos], obs0)
    episodes = pd.DataFrame(tr.rows["episodes"])
    term, trunc = episodes[5].astype(bool), episodes[6].astype(bool)
    assert trunc.any() and term.any()  # both kinds of episode end occurred
    ends = tr.replay.terminated[0, : tr.replay.size]
    lengths = episodes[4].to_numpy()
    end_pos = np.cumsum(lengths) - 1
    expected = np.where(term, 1.0, 1.0 if timeout_as_terminal else 0.0)
    np.testing.assert_array_equal(ends[end_pos], expected)
    assert ends.sum() == expected.sum()  # no other step is marked terminal
    # The stored next_obs of a truncated step is the final observation, not the reset one.
    p = int(end_pos[np.flatnonzero(trunc.to_numpy())[0]])
    assert not np.array_equal(tr.replay.next_obs[0, p], tr.replay.obs[0, p + 1])
    # Target for that transition, against an independent module evaluation.
    with torch.no_grad():
        target_net = tr.learner.target.to_modules()[0]
        nxt = torch.from_numpy(tr.replay.next_obs[0, p : p + 1])
        g = tr.learner.bootstrap(nxt[None])[0, 0]
        assert torch.isclose(g, target_net(nxt).max(), atol=1e-6)
    tr.close()


def test_discounted_returns_closed_form() -> None:
    np.testing.assert_allclose(_discounted_returns([1.0, 1.0, 1.0], 0.5), [1.75, 1.5, 1.0])
    np.testing.assert_allclose(_discounted_returns([0.0, 0.0, 4.0], 0.5), [1.0, 2.0, 4.0])


def test_results_do_not_depend_on_torch_threads(tmp_path: pathlib.Path, monkeypatch) -> None:
    seen: set[int] = set()
    step = Trainer.train_step

    def spy(self: Trainer) -> None:
        seen.add(torch.get_num_threads())
        step(self)

    monkeypatch.setattr(Trainer, "train_step", spy)
    cfg = _small(seeds=[0, 1], agent="maxmin-dqn", n=3, eval_episodes=1)
    before = torch.get_num_threads()  # 1 in the suite (conftest): a caller's 2 must come back
    torch.set_num_threads(2)
    try:
        one = _deterministic(run_training(cfg, tmp_path / "one", threads=1))
        assert seen == {1} and torch.get_num_threads() == 2  # used, then restored
    finally:
        torch.set_num_threads(before)
    seen.clear()
    two = _deterministic(run_training(cfg, tmp_path / "two", threads=2))
    assert seen == {2} and torch.get_num_threads() == before
    for name in ("episodes", "tests", "metrics"):
        pd.testing.assert_frame_equal(one[name], two[name], check_exact=True)


def test_divergence_stops_only_that_seed(tmp_path: pathlib.Path) -> None:
    """Seed 1's weights blow up at step 150: it is recorded as diverged; seed 0 goes on
    exactly as it would alone."""
    cfg = _small(seeds=[0, 1], agent="ddqn", n=1, eval_episodes=1).resolve()
    tr = Trainer(cfg)
    while tr.step < 150:
        tr.train_step()
    for p in tr.learner.online.params:
        p[1].fill_(float("inf"))
    while tr.step < cfg.steps:
        tr.train_step()
    tr.evaluate()
    tables = tr.tables()
    tr.close()
    runs = tables["runs"].set_index("seed")
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 151
    assert runs.loc[0, "status"] == "done" and runs.loc[0, "diverged_step"] == -1
    assert (tables["tests"]["seed"] == 1).sum() == 0
    alone = run_training(_small(seeds=[0], agent="ddqn", n=1, eval_episodes=1), tmp_path)
    for name in ("episodes", "tests", "metrics"):
        pd.testing.assert_frame_equal(
            _seed_rows(tables, 0)[name], _seed_rows(alone, 0)[name], check_exact=True
        )


@pytest.mark.parametrize("agent,n", [("dqn", 1), ("maxmin-dqn", 2)])
def test_learning_beats_random_policy_on_cartpole(tmp_path: pathlib.Path, agent: str, n: int):
    cfg = _small(
        agent=agent,
        n=n,
        steps=2500,
        seeds=[0, 1],
        eval_episodes=5,
        max_episode_steps=200,
        learning_starts=500,
        target_update=100,
        buffer_size=10_000,
        bias_every=500,
    )
    tables = run_training(cfg, tmp_path)
    random_return = _random_return()
    assert 15 < random_return < 30  # a random policy balances about 22 steps
    per_seed = tables["tests"].groupby("seed")["return"].mean()
    assert len(per_seed) == 2 and (per_seed > 3 * random_return).all(), per_seed
    # Bias metrics were measured (probes of terminated episodes).
    assert tables["metrics"]["bias_n"].sum() > 0
    assert np.isfinite(tables["metrics"]["bias_mean"]).any()


@pytest.mark.parametrize(
    "argv,option",
    [
        (["--n", "0"], "--n"),
        (["--agent", "sarsa"], "--agent"),
        (["--env", "NoSuchEnv-v9"], "--env"),
        (["--lr", "0"], "--lr"),
        (["--lr=-3e-4"], "--lr"),
        (["--env", "maxminq/MinAtar-Breakout-v0", "--network", "mlp"], "--network"),
        (["--seeds", "4-1"], "--seeds"),
        (["--optimizer-kwargs", '{"aplha": 0.95}'], "--optimizer-kwargs"),  # not ignored
        (["--threads", "0"], "--threads"),
        (["--optimizer-kwargs", '{"alpha": 2}'], "--optimizer-kwargs"),  # was a NaN run
        (["--optimizer-kwargs", '{"alpha": "x"}'], "--optimizer-kwargs"),  # was a traceback
        (["--optimizer-kwargs", '{"eps": -1}'], "--optimizer-kwargs"),  # torch refuses it
        (["--optimizer", "adam", "--optimizer-kwargs", '{"betas": 0.9}'], "--optimizer-kwargs"),
        (["--optimizer", "adam", "--optimizer-kwargs", '{"betas": [0.9, 1]}'], "--optimizer"),
        (["--grad-clip", "nan"], "--grad-clip"),  # was: no clipping, silently
        (["--env", "FrozenLake-v1"], "--env"),  # Discrete observations
        (["--hidden", "0"], "--hidden"),
        (["--hidden", "64,x"], "--hidden"),
        (["--env", "maxminq/MinAtar-Breakout-v0", "--hidden", "64,64"], "--hidden"),
        (["--env-kwargs", '{"no_such_option": 1}'], "--env-kwargs"),  # CartPole refuses it
        (["--env-kwargs", "[1]"], "--env-kwargs"),
        (["--env-kwargs", '{"max_episode_steps": 9}'], "--env-kwargs"),  # has its own option
        (["--env-kwargs", '{"sutton_barto_reward": NaN}'], "--env-kwargs"),  # not saveable
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv: list[str], option: str) -> None:
    base = ["train", "--env", "CartPole-v1", "--out", str(tmp_path / "x"), "--no-progress"]
    base += ["--steps", "50"]  # short, should a case ever be accepted
    assert main(base + argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err
    assert not (tmp_path / "x" / "runs.csv").exists()


def test_cli_trains_and_writes_tables(tmp_path: pathlib.Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "ensemble-dqn", "--n", "3"]
    argv += ["--steps", "300", "--learning-starts", "100", "--seeds", "0-1", "--out", str(out)]
    argv += ["--eval-episodes", "2", "--bias-every", "100", "--no-progress"]
    assert main(argv) == 0
    for name in ("episodes", "tests", "metrics", "runs"):
        df = pd.read_csv(out / f"{name}.csv")
        assert sorted(df["seed"].unique()) == [0, 1]
    metrics = pd.read_csv(out / "metrics.csv")
    assert list(metrics["step"].unique()) == [100, 200, 300]
    printed = capsys.readouterr().out
    assert "seed 0: done" in printed and f"figure written to {out / 'curves.png'}" in printed
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "curves.svg").stat().st_size > 0
    assert f"tables written to {out}" in printed
    # --resume of the finished run reads it back and says so (it said "tables written"),
    # writing nothing: not even the figure (it wrote curves.* into published runs).
    runs_csv = (out / "runs.csv").read_bytes()
    for figure in out.glob("curves.*"):
        figure.unlink()
    assert main([*argv, "--resume"]) == 0
    printed = capsys.readouterr().out
    assert "seed 0: done" in printed and "tables written" not in printed
    assert f"finished run read back from {out} (nothing trained, nothing written)" in printed
    assert (out / "runs.csv").read_bytes() == runs_csv and not list(out.glob("curves.*"))


def test_cli_no_plot_writes_no_figure(tmp_path: pathlib.Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--steps", "150", "--learning-starts", "100"]
    argv += ["--out", str(out), "--eval-episodes", "1", "--no-progress", "--no-plot"]
    assert main(argv) == 0
    assert (out / "runs.csv").exists() and not list(out.glob("curves.*"))
    assert "figure written" not in capsys.readouterr().out
    # Read back, a run writes nothing, also without --no-plot; plot draws its figure.
    more = ["--checkpoint-every", "50", "--resume"]
    assert main([*argv[:-1], *more]) == 0 and not list(out.glob("curves.*"))
    assert main(["plot", str(out)]) == 0 and (out / "curves.png").exists()
    # A run with its figure, extended with --no-plot: the 150-step figure is not left beside
    # the 200-step tables; read back unchanged, the figure stays.
    assert main([*argv, *more]) == 0 and (out / "curves.png").exists()
    argv[argv.index("150")] = "200"
    assert main([*argv, *more]) == 0
    assert pd.read_csv(out / "metrics.csv")["step"].max() == 200
    assert not list(out.glob("curves.*"))


def test_bias_probes_compare_estimate_with_discounted_return() -> None:
    """bias = estimate - sum_k gamma^k r_{t+k}, hand-computed with gamma = 0.5; probes of
    a time-limit-cut episode are kept only when gamma^(steps to the cut) <= 0.05."""
    tr = Trainer(_small(agent="dqn", n=1, gamma=0.5).resolve())
    tr.probes[0] = [(0, 5.0), (2, 1.0)]
    tr.ep_rewards[0] = [1.0, 1.0, 1.0, 1.0]
    tr._end_episode(0, terminated=True, truncated=False)
    # returns from t=0: 1 + .5 + .25 + .125 = 1.875; from t=2: 1 + .5 = 1.5
    assert tr.acc_bias[0] == pytest.approx([5.0 - 1.875, 1.0 - 1.5])
    tr.probes[0] = [(0, 2.0), (8, 0.0)]
    tr.ep_rewards[0] = [0.0] * 9 + [2.0]
    tr._end_episode(0, terminated=False, truncated=True)
    # t=0: 0.5^10 <= 0.05 kept, return 2 * 0.5^9; t=8: 0.5^2 > 0.05 dropped
    assert tr.acc_bias[0][2:] == pytest.approx([2.0 - 2 * 0.5**9])
    assert tr.probes[0] == [] and tr.ep_rewards[0] == []
    tr.close()


def test_resolved_config_round_trips_through_json() -> None:
    """The sweep stores resolved configs as JSON and rebuilds them: resolve is idempotent."""
    import dataclasses
    import json

    for env_id, agent in (("LunarLander-v3", "maxmin-dqn"), ("CartPole-v1", "averaged-dqn")):
        c = TrainConfig(env_id=env_id, agent=agent, seeds=[0, 1]).resolve()
        again = TrainConfig(**json.loads(json.dumps(dataclasses.asdict(c)))).resolve()
        assert again.result_key() == c.result_key()
    # MinAtar's registry options are centered RMSprop's (alpha 0.95, eps 0.01, the MinAtar
    # paper's; the paper settings: envs/test_paper_settings.py): another optimizer starts from
    # its own defaults, not from a part of them.
    minatar = "maxminq/MinAtar-Breakout-v0"
    assert TrainConfig(env_id=minatar, optimizer="adam").resolve().optimizer_kwargs == {}
    rms = TrainConfig(env_id=minatar, optimizer="rmsprop").resolve()
    assert rms.optimizer_kwargs == {}


def test_integer_optimizer_options_give_the_run_id_of_their_floats() -> None:
    """A sweep names a run by its settings' JSON: {"eps": 1} and {"eps": 1.0} (or Adam betas
    [1, 0.999]) train the same run and must get one run id, not two."""
    from maxminq.experiments.config import run_id_for
    from maxminq.experiments.registry import validate_deep

    def run_id(**options: object) -> str:
        settings = {"env_id": "CartPole-v1", "agent": "dqn", "steps": 100, **options}
        return run_id_for("deep", validate_deep(settings))

    assert run_id(optimizer_kwargs={"eps": 1}) == run_id(optimizer_kwargs={"eps": 1.0})
    assert run_id(optimizer_kwargs={"eps": 1}) != run_id(optimizer_kwargs={"eps": 2.0})
    adam = {"optimizer": "adam"}
    assert run_id(**adam, optimizer_kwargs={"betas": [0, 0.999]}) == run_id(
        **adam, optimizer_kwargs={"betas": [0.0, 0.999]}
    )


def test_update_members_updates_that_many_distinct_members_per_seed() -> None:
    """--update-members 2 with N = 3: every learning step updates exactly two different
    members of each seed (and nothing before learning starts), from two mini-batches."""
    tr = Trainer(_small(n=3, update_members=2, seeds=[0, 1], learning_starts=20).resolve())
    gather, widths = tr.replay.gather, set()
    tr.replay.gather = lambda live, idx: widths.add(idx.shape) or gather(live, idx)
    chosen = set()
    for _ in range(60):
        before = tr.learner.opt.step_count.clone()
        learning = tr.step >= tr.cfg.learning_starts
        tr.train_step()
        diff = (tr.learner.opt.step_count - before).reshape(2, 3)
        expected = 2 if learning else 0
        assert diff.sum(1).tolist() == [expected, expected] and diff.max() <= 1
        chosen |= {tuple(r) for r in diff.tolist()}
    assert len(chosen - {(0.0, 0.0, 0.0)}) > 1  # the subset varies from step to step
    assert widths == {(2, 2 * tr.cfg.batch_size)}  # per seed, one mini-batch per member
    tr.close()


def test_plot_compares_finished_runs_and_rejects_other_folders(tmp_path: pathlib.Path, capsys):
    for agent, n, out in (("dqn", "1", "a"), ("maxmin-dqn", "2", "b")):
        argv = ["train", "--env", "CartPole-v1", "--agent", agent, "--n", n, "--steps", "300"]
        argv += ["--learning-starts", "100", "--bias-every", "100", "--seeds", "0-1"]
        argv += ["--out", str(tmp_path / out), "--eval-episodes", "1", "--no-progress"]
        assert main([*argv, "--no-plot"]) == 0
    capsys.readouterr()
    both = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["plot", *both, "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    legend = (tmp_path / "c.svg").read_text()  # each run in the legend, by its agent
    assert "<!-- DQN -->" in legend and "<!-- Maxmin DQN (N=2) -->" in legend
    assert main(["plot", *both, "--out", str(tmp_path / "c.v2")]) == 0
    assert (tmp_path / "c.v2.png").exists() and (tmp_path / "c.v2.svg").exists()  # dots kept
    (tmp_path / "figs").mkdir()
    assert main(["plot", *both, "--out", str(tmp_path / "figs")]) == 0  # a folder: inside it
    assert (tmp_path / "figs" / "compare.png").exists()
    assert main(["plot", str(tmp_path / "a")]) == 0  # one run: next to its tables
    assert (tmp_path / "a" / "curves.png").exists()
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "a"), str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "RUN_DIR" in err and "empty" in err


def test_train_refuses_to_replace_a_run_unless_asked(tmp_path: pathlib.Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--steps", "150", "--learning-starts", "100"]
    argv += ["--out", str(out), "--eval-episodes", "1", "--no-progress"]
    assert main(argv) == 0
    first = (out / "episodes.csv").read_bytes()
    capsys.readouterr()
    # Again into the same folder: refused, nothing touched.
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--out" in err and "--overwrite" in err
    assert (out / "episodes.csv").read_bytes() == first
    # --overwrite replaces the run and leaves no figure of the old one.
    (out / "tensorboard").mkdir()
    assert main([*argv[:-3], "--no-plot", "--overwrite", *argv[-3:]]) == 0
    assert not list(out.glob("curves.*")) and not (out / "tensorboard").exists()
    assert (out / "runs.csv").exists() and (out / "model.pt").exists()
    assert main([*argv, "--resume", "--overwrite"]) == 2


def test_train_out_must_be_a_folder_and_resume_says_when_it_starts_anew(
    tmp_path: pathlib.Path, capsys
) -> None:
    a_file = tmp_path / "afile"
    a_file.write_text("keep me")
    argv = ["train", "--env", "CartPole-v1", "--steps", "100", "--eval-episodes", "1"]
    argv += ["--no-progress", "--no-plot"]
    assert main([*argv, "--out", str(a_file)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--out" in err and a_file.read_text() == "keep me"
    # --resume on an empty folder: a new run, said so; too few steps to learn (100 random
    # steps, learning from the 101st): warned.
    assert main([*argv, "--learning-starts", "100", "--out", str(tmp_path / "r"), "--resume"]) == 0
    err = capsys.readouterr().err
    assert "no checkpoint" in err and "never learn" in err
    # A run killed while writing its first checkpoint left only the temporary file.
    killed = tmp_path / "k"
    (killed / "checkpoint").mkdir(parents=True)
    (killed / "checkpoint" / ".state.pt.x1y2z3.tmp").write_bytes(b"partial")
    assert main([*argv, "--out", str(killed), "--resume"]) == 0
    assert "no checkpoint in" in capsys.readouterr().err


def test_update_members_beyond_the_online_nets_is_refused(tmp_path, capsys) -> None:
    base = ["train", "--env", "CartPole-v1", "--out", str(tmp_path / "x"), "--no-progress"]
    for extra in (
        ["--n", "2", "--update-members", "3"],
        ["--agent", "dqn", "--update-members", "2"],
    ):
        assert main([*base, *extra]) == 2
        assert "--update-members" in capsys.readouterr().err
    assert TrainConfig(env_id="CartPole-v1", n=3, update_members=3).resolve().update_members == 3


def test_python_api_defaults_match_the_command() -> None:
    import maxminq.deep as deep

    assert deep.TrainConfig is TrainConfig and deep.run_training is run_training
    assert TrainConfig(env_id="CartPole-v1").agent == "maxmin-dqn"  # as `maxminq train`
    with pytest.raises(AttributeError):
        deep.no_such_name  # noqa: B018


def test_config_and_learner_agree_on_the_online_nets() -> None:
    """The config (no torch) and the learner each know which agents have N online nets."""
    from maxminq.deep.agents import AGENTS, Learner

    for agent, spec in AGENTS.items():
        n = 1 if agent in ("dqn", "ddqn") else 3
        op = "maxmin" if agent == "generalized-dqn" else None  # its required G
        cfg = TrainConfig(env_id="CartPole-v1", agent=agent, n=n, operator=op).resolve()
        learner = Learner(agent, n, [torch.Generator()], "mlp", (4,), 2, "adam", 1e-3, operator=op)
        assert cfg.n_online == learner.n_online == (3 if spec.ensemble else 1), agent


def test_cli_version(capsys) -> None:
    """(plot's refusal of --out fig.pdf: project/test_cli_bad_input.py)"""
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.startswith("maxminq 0.")


def test_a_finished_run_extended_equals_one_run_straight_through(tmp_path: pathlib.Path):
    """Training 350 steps (metrics at 100, 200, 300 and a partial interval at 350), then
    resuming with --steps 500, gives the tables of a 500-step run (same streams, same
    checkpointed state, no row at 350); other changed options are refused."""
    straight = run_training(_small(steps=500, checkpoint_every=100), tmp_path / "straight")
    assert straight["metrics"]["step"].tolist() == [100, 200, 300, 400, 500]
    out = tmp_path / "extended"
    short = run_training(_small(steps=350, checkpoint_every=100), out)
    assert short["metrics"]["step"].tolist() == [100, 200, 300, 350]
    # Without --bias-every the run keeps its own interval (100, not the default for 500).
    longer = _small(steps=500, checkpoint_every=100, bias_every=None)
    assert (out / "model.pt").exists()
    # Killed while extending: the shorter run's model goes with its runs.csv.
    assert run_training(longer, out, resume=True, stop_after=400) == {}
    assert not (out / "model.pt").exists() and not (out / "runs.csv").exists()
    extended = run_training(longer, out, resume=True)
    for name in ("episodes", "tests", "metrics", "runs"):
        pd.testing.assert_frame_equal(
            _deterministic(straight)[name], _deterministic(extended)[name], check_exact=True
        )
    assert pd.read_csv(out / "metrics.csv")["step"].max() == 500
    # The same command again reads the extended run back.
    again = run_training(longer, out, resume=True)
    pd.testing.assert_frame_equal(again["metrics"], extended["metrics"], check_exact=True)
    with pytest.raises(UsageError, match="--steps: the run in --out is at step 500"):
        run_training(_small(steps=400, checkpoint_every=100), out, resume=True)
    # Named as options, with the run's values (were config fields: 'other lr').
    with pytest.raises(UsageError, match=r"other options: --lr 0\.001 \(now 0\.0005\);"):
        run_training(_small(steps=600, checkpoint_every=100, lr=5e-4), out, resume=True)
    with pytest.raises(UsageError, match=r"other options: --hidden default \(now \[32\]\);"):
        run_training(_small(steps=600, checkpoint_every=100, hidden=(32,)), out, resume=True)
    # Without a checkpoint a finished run cannot be extended: refused, not restarted.
    bare = tmp_path / "bare"
    run_training(_small(steps=150), bare)
    with pytest.raises(UsageError, match="--steps: extending the run in --out from 150 steps"):
        run_training(_small(steps=300), bare, resume=True)
    with pytest.raises(UsageError, match=r"other options: --lr 0\.001 \(now 0\.0005\);"):
        run_training(_small(steps=300, lr=5e-4), bare, resume=True)
    with pytest.raises(UsageError, match="--steps: the run in --out is at step 150"):
        run_training(_small(steps=120), bare, resume=True)  # was told to extend it
    assert (bare / "runs.csv").exists()


def test_a_running_run_reports_its_progress_and_a_finished_one_clears_it(tmp_path) -> None:
    from maxminq.experiments.store import read_progress

    cfg = _small(steps=400)
    assert run_training(cfg, tmp_path, stop_after=230) == {}  # killed at step 230
    assert read_progress(tmp_path) == 230 / 400  # written every 2 steps (0.5%)
    # Its resolved options are there from the start (were written only at the end), the
    # registry's defaults filled in: CartPole-v1 takes the feature envs' RMSprop, MSE, 0.99.
    running = json.loads((tmp_path / "config.json").read_text())
    assert running["steps"] == 400 and running["lr"] == 1e-3
    assert (running["optimizer"], running["loss"], running["gamma"]) == ("rmsprop", "mse", 0.99)
    run_training(cfg, tmp_path, resume=True)
    assert not (tmp_path / "progress.json").exists() and (tmp_path / "runs.csv").exists()
    assert json.loads((tmp_path / "config.json").read_text()) == running


@pytest.mark.parametrize("seeds", [[0], [0, 1, 2]])
def test_greedy_pass_only_when_some_seed_acts_greedily(seeds: list[int]) -> None:
    """The online nets are evaluated for acting exactly on the learning steps where at
    least one seed's eps-coin (its step's first uniform) says greedy, as the authors' code
    skips the forward pass when exploring."""
    eps = 0.5
    cfg = _small(seeds=seeds, eps_start=eps, eps_end=eps, eps_decay_steps=0, steps=220)
    tr = Trainer(cfg.resolve())
    greedy_calls, coins = [], []
    real_values, real_next = tr.learner.greedy_values, tr.uniforms.next

    def values(obs: torch.Tensor) -> torch.Tensor:
        greedy_calls.append(tr.step)
        return real_values(obs)

    def uniforms() -> np.ndarray:
        row = real_next()
        coins.append(row[:, 0].copy())
        return row

    tr.learner.greedy_values, tr.uniforms.next = values, uniforms
    while tr.step < cfg.steps:
        tr.train_step()
    tr.close()
    expected = [t for t, c in enumerate(coins) if t >= cfg.learning_starts and (c >= eps).any()]
    assert greedy_calls == expected
    assert 0 < len(expected) < cfg.steps - cfg.learning_starts  # both kinds of step occur


@pytest.mark.parametrize(
    "cls,option,needle",
    [
        (_StartsAtOne, "--env", "start at 1"),
        (_BoxActions, "--env", "discrete action space"),
        (_DictObs, "--env", "FlattenObservation"),
        (_ResetOneValue, "--env", "reset() returned an observation of shape (1,)"),
        (_StepSevenValues, "--env", "step() returned an observation of shape (7,)"),
        (_ChannelsLast, "--network", "channels last"),
        (_ArrayReward, "--env", "returned the reward array([0.])"),
        (_HalfValuesInUint8, "--env", "values such as 0.5, which the uint8 replay buffers"),
    ],
)
def test_unsupported_environment_is_one_line_before_any_output(
    tmp_path, capsys, cls: type, option: str, needle: str
) -> None:
    """Each was a traceback (Discrete start 1: the env's own error on action 0; (7,): a
    NumPy broadcast error; channels last: the convolution's reshape) or, for (1,), trained
    silently on the observation broadcast to all 8 inputs."""
    out = tmp_path / "x"
    argv = ["train", "--env", _register(cls), "--out", str(out), "--no-progress"]
    with warnings.catch_warnings(record=True) as caught:  # Gymnasium's checker's lines
        warnings.simplefilter("always")  # would precede the error on stderr
        assert main([*argv, "--steps", "50"]) == 2
    assert [str(w.message) for w in caught] == []
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err and needle in err, err
    assert not out.exists()


def test_wrong_observation_mid_run_is_refused_not_broadcast(tmp_path: pathlib.Path) -> None:
    _LateOneValue.resets = 0
    cfg = _small(env_id=_register(_LateOneValue), steps=300)
    with pytest.raises(UsageError, match=r"--env: .*reset\(\) .* shape \(1,\)"):
        run_training(cfg, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "runs.csv").exists()


def test_wrong_step_observation_mid_run_is_refused(tmp_path: pathlib.Path) -> None:
    """The stacked step() observations of the live seeds: the misfit is named."""
    _LateSevenValues.resets = 0
    cfg = _small(env_id=_register(_LateSevenValues), steps=300, seeds=[0, 1])
    with pytest.raises(UsageError, match=r"--env: .*step\(\) .* shape \(7,\); its .* \(8,\)"):
        run_training(cfg, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "runs.csv").exists()


# The cap of 20 steps cuts the episodes: the cut-episode warning is expected here
@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_environment_that_does_not_replay_cannot_be_extended_and_keeps_the_run(tmp_path):
    """A one-line --resume error (was a RuntimeError traceback), raised before the finished
    run's runs.csv and model.pt are removed (they were removed first)."""
    out = tmp_path / "run"
    cfg = _small(
        env_id=_register(_NotReplayable), agent="dqn", n=1, steps=150, checkpoint_every=100
    )
    run_training(cfg, out, progress=False)
    with pytest.raises(UsageError, match="--resume: .* did not replay"):
        run_training(dataclasses.replace(cfg, steps=250), out, progress=False)
    assert (out / "runs.csv").exists() and (out / "model.pt").exists()


def test_tensorboard_asked_for_but_missing_is_refused(tmp_path, capsys, monkeypatch) -> None:
    """--tensorboard without TensorBoard or tensorboardX logged nothing, silently."""
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import -> ImportError
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    out = tmp_path / "x"
    argv = ["train", "--env", "CartPole-v1", "--out", str(out), "--tensorboard", "--steps", "50"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--tensorboard" in err and not out.exists()
    with pytest.raises(UsageError, match="--tensorboard"):
        run_training(_small(tensorboard=True), out, progress=False)
    assert not out.exists()


def test_seeds_may_be_any_sequence_of_whole_numbers() -> None:
    """np.arange(2) was 'truth value of an array is ambiguous' (a ValueError traceback)."""
    for seeds in (np.arange(2), range(2), (0, 1), [np.int32(0), 1]):
        resolved = TrainConfig(env_id="CartPole-v1", seeds=seeds).resolve().seeds
        assert resolved == [0, 1] and all(type(s) is int for s in resolved)
    for bad in ([0.5], 3, ["0"]):
        with pytest.raises(UsageError, match="--seeds"):
            TrainConfig(env_id="CartPole-v1", seeds=bad).resolve()


def test_ctrl_c_says_whether_resume_will_continue(tmp_path, capsys, monkeypatch) -> None:
    """Ctrl-C printed only 'interrupted': whether --resume would continue or start again
    depended on a checkpoint default (10,000 steps) the user could not see."""
    real_step = Trainer.train_step

    def step_then_ctrl_c(self: Trainer) -> None:
        if self.step == 120:
            raise KeyboardInterrupt
        real_step(self)

    monkeypatch.setattr(Trainer, "train_step", step_then_ctrl_c)
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "200"]
    argv += ["--learning-starts", "50", "--eval-episodes", "1", "--no-progress", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 130
    err = capsys.readouterr().err
    assert "no checkpoint was written yet (every 10000 steps)" in err and "interrupted" in err
    out = tmp_path / "b"
    assert main([*argv, "--checkpoint-every", "50", "--out", str(out)]) == 130
    assert "same command with --resume continues" in capsys.readouterr().err
    # After --overwrite, adding --resume would be refused (not both): it says to swap them.
    assert main([*argv, "--checkpoint-every", "50", "--out", str(out), "--overwrite"]) == 130
    assert "with --resume instead of --overwrite continues" in capsys.readouterr().err
    monkeypatch.setattr(Trainer, "train_step", real_step)
    assert main([*argv, "--checkpoint-every", "50", "--out", str(out), "--resume"]) == 0
    assert (out / "runs.csv").exists()


def test_python_api_checks_the_environment_before_out_dir(tmp_path: pathlib.Path) -> None:
    """run_training did not run the command's environment check: an array reward was a
    TypeError mid-run, after out_dir was made."""
    out = tmp_path / "run"
    with pytest.raises(UsageError, match="--env: .* returned the reward array"):
        run_training(_small(env_id=_register(_ArrayReward)), out, progress=False)
    assert not out.exists()


def test_sweep_settings_take_hidden_and_env_kwargs() -> None:
    """A sweep's deep settings accept ``hidden`` and ``env_kwargs``; they are stored only
    when given (so the run ids of settings without them stay those they had before)."""
    from maxminq.experiments.registry import SettingsError, validate_deep

    plain = validate_deep({"env_id": "CartPole-v1", "agent": "dqn"})
    assert "hidden" not in plain and "env_kwargs" not in plain
    given = validate_deep(
        {
            "env_id": "CartPole-v1",
            "agent": "dqn",
            "hidden": [32],
            "env_kwargs": {"sutton_barto_reward": True},
        }
    )
    assert given["hidden"] == [32] and given["env_kwargs"] == {"sutton_barto_reward": True}
    assert {k: v for k, v in given.items() if k not in ("hidden", "env_kwargs")} == plain
    for key, value in (("hidden", [64, 0]), ("hidden", "64"), ("env_kwargs", [1])):
        with pytest.raises(SettingsError) as err:
            validate_deep({"env_id": "CartPole-v1", key: value})
        assert err.value.key == key


def test_a_sweep_checks_each_environment_before_it_starts(tmp_path: pathlib.Path) -> None:
    """An environment a deep run cannot train on (wrong network, refused keywords) fails the
    config, naming the variant's key, before a sweep touches its output folder."""
    ok = {"agent": "dqn", "n": 1, "lr": 3e-4}
    for bad, key in (({"network": "minatar_cnn"}, "network"), ({"hidden": [0]}, "hidden")):
        scale = {"fixed": {"steps": 300, "seeds": [0]}, "variants": [ok, {**ok, **bad}]}
        doc = {"name": "x", "kind": "deep", "fixed": {"env_id": "CartPole-v1"}}
        doc["scales"] = {"quick": scale, "paper": scale}
        path = tmp_path / "x.yaml"
        path.write_text(yaml.safe_dump(doc))
        assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
        assert not (tmp_path / "out").exists()
        with pytest.raises(ConfigError, match=rf"variants\[1\]\.{key}:"):
            load_config(path)


def test_tensorboard_shows_episodes_and_a_resumed_run_as_one_straight_run(tmp_path):
    """With a real writer (tensorboardX), each episode's return and length are logged at
    the step it ended (as episodes.csv); a run killed at step 330 and resumed from its
    checkpoint at 200, and a finished run of 350 steps extended to 500 (its last partial
    interval at 350 dropped), show exactly what one uninterrupted run logs, nothing
    twice."""
    as_float32 = lambda x: float(np.float32(x))  # noqa: E731 - TensorBoard stores float32
    cfg = _small(seeds=[1, 2], steps=500, checkpoint_every=100, tensorboard=True)
    tables = run_training(cfg, tmp_path / "straight", progress=False)
    straight = _shown(tmp_path / "straight" / "tensorboard")
    ep = tables["episodes"]
    logged = sorted(e for e in straight if e[0].endswith(("/return", "/length")))
    expected = []
    for s, r, n, st in ep[["seed", "return", "length", "step"]].itertuples(index=False):
        expected += [(f"seed{s}/return", as_float32(r), st), (f"seed{s}/length", float(n), st)]
    assert len(ep) > 20 and logged == sorted(expected)
    m = tables["metrics"]
    assert ("seed2/loss", as_float32(m.loss.iloc[-1]), 500) in straight
    tests = tables["tests"]
    for seed in (1, 2):
        mean = as_float32(tests[tests.seed == seed]["return"].mean())
        assert [e for e in straight if e[0] == f"seed{seed}/test_return"] == [
            (f"seed{seed}/test_return", mean, 500)
        ]

    out = tmp_path / "killed"
    train_killed_at_330_then_resumed(cfg, out)
    starts = [
        [e[2] for e in f if e[0] == "START"] for f in _tensorboard_events(out / "tensorboard")
    ]
    assert starts == [[0], [200], [200]]  # one file per writer, none overwritten
    assert _shown(out / "tensorboard") == straight

    out = tmp_path / "extended"
    run_training(dataclasses.replace(cfg, steps=350), out, progress=False)
    (first,) = _tensorboard_events(out / "tensorboard")
    assert any(e[2] == 350 and e[0].endswith("/loss") for e in first)
    run_training(dataclasses.replace(cfg, steps=500), out, progress=False)
    assert _shown(out / "tensorboard") == straight
    # Trained again from the start in the same folder (resume=False): the old log is hidden.
    run_training(cfg, tmp_path / "straight", progress=False, resume=False)
    assert _shown(tmp_path / "straight" / "tensorboard") == straight


@pytest.mark.parametrize("start,end", [(1.0, 0.1), (1.0, 0.01), (0.1, 0.5)])
def test_epsilon_schedule_reaches_its_end_value_exactly(start: float, end: float) -> None:
    """eps is 1 for learning_starts steps, then linear from eps_start to eps_end over
    eps_decay_steps (halfway: their mean), then eps_end itself (the linear formula gave
    0.010000000000000009 for 1 -> 0.01, logged as such); a rising schedule rises (it was
    eps_end at once)."""
    cfg = _small(eps_start=start, eps_end=end, eps_decay_steps=100, learning_starts=50)
    trainer = Trainer(cfg.resolve())
    try:
        assert [trainer.epsilon(t) for t in (0, 49)] == [1.0, 1.0]
        assert trainer.epsilon(50) == start
        assert trainer.epsilon(100) == pytest.approx((start + end) / 2, abs=1e-12)
        assert [trainer.epsilon(t) for t in (150, 151, 10**6)] == [end] * 3
    finally:
        trainer.close()


def test_a_cap_too_short_for_bias_probes_is_warned_about(tmp_path, capsys) -> None:
    """MountainCar-v0 (cap 200) at gamma 0.99: a probe in a cut episode counts only with
    k >= 299 steps to the cut (0.99^298 = 0.0502 > 0.05 >= 0.99^299 = 0.0497), so a run
    whose episodes never terminate measures no bias: said before training, not left to an
    empty bias panel."""
    from maxminq.deep.bias_probes import bias_horizon

    assert 0.99**298 > 0.05 >= 0.99**299 and bias_horizon(0.99) == 299
    assert bias_horizon(0.9) == 29 and bias_horizon(1.0) is None  # 0.9^28 = 0.052
    argv = ["train", "--agent", "dqn", "--steps", "400", "--learning-starts", "100"]
    argv += ["--bias-probe-every", "5", "--eval-episodes", "0", "--no-progress", "--no-plot"]
    assert main([*argv, "--env", "MountainCar-v0", "--out", str(tmp_path / "mc")]) == 0
    err = capsys.readouterr().err
    assert "--max-episode-steps 200 with --gamma 0.99: only episodes that terminate" in err
    assert "299+" in err
    metrics = pd.read_csv(tmp_path / "mc" / "metrics.csv")
    assert len(metrics) == 1 and metrics["loss"].notna().all()  # it learned (one interval) ...
    assert (metrics["bias_n"] == 0).all()  # ... and measured no bias, as warned
    # The other caps and discounts (the command passes the resolved ones, as above).
    from maxminq.commands.train import _warn_if_cut_episodes_give_no_bias as warn

    for cap in (200, 500):
        warn(cap, 1.0)
        assert "gamma 1 a cut episode's probes never count" in capsys.readouterr().err
    for cap, gamma in ((299, 0.99), (500, 0.99), (None, 1.0)):
        warn(cap, gamma)
        assert capsys.readouterr().err == ""


def test_train_help_states_every_default() -> None:
    """Each option that takes a value says its default (a number, or the registry's): a
    run without --steps trains for the registry's 500,000 steps on CartPole-v1."""
    import argparse

    from maxminq.commands.train import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    for action in parser._actions:
        if action.required or action.nargs == 0:  # --env, --out; flags and --help
            continue
        assert "default" in action.help or "registry" in action.help, action.option_strings
    assert TrainConfig("CartPole-v1").resolve().steps == 500_000
    from maxminq.commands.evaluate import add_arguments as evaluate_arguments

    parser = argparse.ArgumentParser()
    evaluate_arguments(parser)
    for action in parser._actions:  # evaluate's options with a value default: it is named
        if action.default not in (None, argparse.SUPPRESS) and action.nargs != 0:
            assert f"{action.default:g}" in action.help, action.option_strings


def test_a_second_run_into_a_folder_in_use_is_refused_and_the_lock_dies_with_its_holder(
    tmp_path: pathlib.Path, capsys
) -> None:
    """While one 'maxminq train' writes in --out, another (even with --overwrite) and
    run_training into the same folder are one-line errors that touch nothing there; once
    the first process is killed, the folder can be used again."""
    import subprocess
    import time

    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--seeds", "0", "--out", str(out)]
    argv += ["--no-progress", "--no-plot"]
    code = f"from maxminq.cli import main; main({[*argv, '--steps', '10000000']!r})"
    holder = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "config.json").exists():  # written once the run holds the folder
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert main([*argv, "--steps", "300", "--overwrite"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--out:" in err[0] and "in use by another training run" in err[0]
        with pytest.raises(UsageError, match="in use by another training run"):
            run_training(TrainConfig(env_id="CartPole-v1", agent="dqn", steps=300), out)
        # the holder's run is untouched: its options, no tables of a 300-step run
        assert json.loads((out / "config.json").read_text())["steps"] == 10_000_000
        assert not (out / "runs.csv").exists() and holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
    assert main([*argv, "--steps", "300", "--eval-episodes", "1", "--overwrite"]) == 0
    assert (out / "runs.csv").exists()


def test_the_folder_lock_is_reentrant_in_its_thread_only(tmp_path: pathlib.Path) -> None:
    """'maxminq train' holds --out and run_training takes it again in the same thread; a
    run in another thread of the process is refused as another process's is."""
    import threading

    from maxminq.deep.run_folder import folder_lock

    refused: list[bool] = []

    def other_thread() -> None:
        try:
            with folder_lock(tmp_path):
                refused.append(False)
        except UsageError as err:
            refused.append("in use by another training run" in str(err))

    def in_other_thread() -> bool:
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        return refused.pop()

    with folder_lock(tmp_path):
        with folder_lock(tmp_path):  # re-entrant: no error
            pass
        assert in_other_thread()  # still held after the inner exit
    assert not in_other_thread()  # released


@pytest.mark.parametrize(("shape", "dtype"), [((8,), np.float32), ((4, 10, 10), np.uint8)])
def test_replay_nbytes_is_what_the_buffers_take(shape, dtype) -> None:
    # The memory check reads ReplayBuffers.nbytes; it must be the arrays' real size.
    buffers = ReplayBuffers(3, 50, shape, np.dtype(dtype))
    arrays = (buffers.obs, buffers.next_obs, buffers.action, buffers.reward, buffers.terminated)
    assert ReplayBuffers.nbytes(3, 50, shape, np.dtype(dtype)) == sum(a.nbytes for a in arrays)


def test_run_training_refuses_replay_buffers_beyond_memory(tmp_path) -> None:
    # From Python as from the command: 10^6 seeds x 10,000 CartPole transitions (480 GB).
    config = TrainConfig(env_id="CartPole-v1", agent="dqn", steps=20_000, seeds=range(10**6))
    with pytest.raises(UsageError, match=r"^--seeds: the replay buffers of 1000000 seeds"):
        run_training(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
