"""Trained agents loaded back from model.pt: values, actions, episodes, `maxminq evaluate`."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from docs_text import page
from line_env import LineEnv
from PIL import Image

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import UsageError

N = 2


def _config(**kw) -> TrainConfig:
    base = dict(
        env_id="CartPole-v1",
        agent="maxmin-dqn",
        n=N,
        lr=1e-3,
        steps=600,
        seeds=[3, 5],
        eval_episodes=1,
        learning_starts=100,
        target_update=50,
        buffer_size=600,
        checkpoint_every=600,  # the final checkpoint holds the same online nets
    )
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("policy") / "run"
    run_training(_config(), out)
    return out


def _reference_values(run_dir: pathlib.Path, k: int, obs: np.ndarray) -> np.ndarray:
    """min over seed k's N online nets as plain nn.Modules, from the checkpoint file (not
    from model.pt): Algorithm 1's behaviour values."""
    state = torch.load(run_dir / "checkpoint" / "state.pt", weights_only=True)
    net = build_net("mlp", 2 * N, (4,), 2)
    net.flat.copy_(state["learner"]["online"])
    modules = net.to_modules()[k * N : (k + 1) * N]
    x = torch.as_tensor(obs, dtype=torch.float32).reshape(1, 4)
    with torch.no_grad():
        return torch.stack([m(x)[0] for m in modules]).min(0).values.numpy()


def _greedy_episode(run_dir: pathlib.Path, k: int, env_seed: int) -> tuple[float, int]:
    """One greedy episode of seed k, played with the reference values."""
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=env_seed)
    total, length, done = 0.0, 0, False
    while not done:
        obs, r, term, trunc, _ = env.step(int(np.argmax(_reference_values(run_dir, k, obs))))
        total, length, done = total + float(r), length + 1, term or trunc
    return total, length


class _Endless(gym.Env):
    """Never ends by itself (reward 1 per step): without a time limit, an episode is endless."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.ones(2, np.float32), {}

    def step(self, action):
        return np.ones(2, np.float32), 1.0, False, False, {}


def _agent(folder: Path, fill: float | None = None):
    """A CartPole DQN run of seed 0 recorded as done, its networks untrained, or each
    parameter set to ``fill``."""
    cfg = TrainConfig(env_id="CartPole-v1", agent="dqn", n=1, steps=100, seeds=[0]).resolve()
    net = build_net("mlp", 1, (4,), 2)
    net.init_members([torch.Generator().manual_seed(0)], 1)
    if fill is not None:
        with torch.no_grad():
            net.flat.fill_(fill)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (4,), ["done"])
    return load_agent(folder)


@pytest.mark.usefixtures("torch_one_thread")
def test_loaded_values_and_actions_match_the_trained_networks(run_dir: pathlib.Path) -> None:
    agent = load_agent(run_dir)
    assert agent.seeds == [3, 5] and agent.status == ["done", "done"]
    assert agent.config.agent == "maxmin-dqn" and agent.config.n == N
    assert repr(agent) == (
        "TrainedAgent(agent='maxmin-dqn', n=2, env_id='CartPole-v1', steps=600, "
        "seeds=[3, 5], status=['done', 'done'])"
    )
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs = rng.normal(size=4).astype(np.float32)
        for k, seed in enumerate(agent.seeds):
            ref = _reference_values(run_dir, k, obs)
            np.testing.assert_allclose(agent.q_values(obs, seed), ref, rtol=1e-5, atol=1e-6)
            assert agent.act(obs, seed) == int(np.argmax(ref))


@pytest.mark.usefixtures("torch_one_thread")
def test_epsilon_actions_need_a_generator_and_explore(run_dir: pathlib.Path) -> None:
    agent = load_agent(run_dir)
    obs = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="rng"):
        agent.act(obs, 3, eps=0.5)
    rng = np.random.default_rng(1)
    actions = {agent.act(obs, 3, eps=1.0, rng=rng) for _ in range(50)}
    assert actions == {0, 1}  # eps = 1: uniformly random, both actions appear


@pytest.mark.usefixtures("torch_one_thread")
def test_evaluation_plays_the_greedy_policy_from_the_stated_resets(run_dir: pathlib.Path):
    agent = load_agent(run_dir)
    episodes = evaluate_agent(agent, [5], episodes=2, env_seed=10)
    assert list(episodes["episode"]) == [1, 2] and (episodes["seed"] == 5).all()
    for j in range(2):
        ret, length = _greedy_episode(run_dir, 1, env_seed=10 + j)
        assert episodes["return"][j] == ret and episodes["length"][j] == length
    again = evaluate_agent(agent, [5], episodes=2, env_seed=10)
    pd.testing.assert_frame_equal(episodes, again)


@pytest.mark.usefixtures("torch_one_thread")
def test_evaluation_measures_the_bias_at_the_start_state(run_dir, capsys) -> None:
    """q_first is the min over N of the reference nets at the reset observation, for the
    greedy action; CartPole pays 1 per step, so an episode of L steps has the discounted
    return (1 - 0.99^L) / 0.01; evaluate prints their mean difference per seed, over the
    episodes that terminated (or whose missing tail weighs 0.99^L <= 0.05)."""
    agent = load_agent(run_dir)
    episodes = evaluate_agent(agent, [3, 5], episodes=3, env_seed=7)
    for k, seed in enumerate([3, 5]):
        for j in range(3):
            row = episodes[(episodes.seed == seed) & (episodes.episode == j + 1)].iloc[0]
            obs, _ = gym.make("CartPole-v1").reset(seed=7 + j)
            ref = _reference_values(run_dir, k, obs)
            assert row["q_first"] == pytest.approx(ref.max(), rel=1e-5)
            length = row["length"]
            assert row["discounted_return"] == pytest.approx((1 - 0.99**length) / 0.01)
    assert main(["evaluate", str(run_dir), "--episodes", "3", "--env-seed", "7"]) == 0
    printed = capsys.readouterr().out
    means = []
    for seed in (3, 5):
        g = episodes[episodes.seed == seed]
        assert g["terminated"].all()  # (an untrained CartPole policy falls)
        b = (g["q_first"] - g["discounted_return"]).to_numpy()
        se = np.sqrt(((b - b.mean()) ** 2).sum() / 2) / np.sqrt(3)  # sample sd / sqrt(n)
        means.append(b.mean())
        assert f"seed {seed}: return" in printed
        assert f"start-state bias {b.mean():+.2f} +- {se:.2f} (3 episodes)" in printed
    # The line runs are compared by: the seeds' means, SE over the 2 seeds = |m0 - m1| / 2.
    over_seeds = f"{np.mean(means):+.2f} +- {abs(means[0] - means[1]) / 2:.2f} over 2 seeds"
    assert "all 2 seeds (mean +- SE over seeds): return " in printed
    assert f"start-state bias {over_seeds}" in printed


@pytest.mark.usefixtures("torch_one_thread")
def test_unknown_and_diverged_seeds_are_refused(tmp_path: pathlib.Path) -> None:
    cfg = _config(steps=200).resolve()
    tr = Trainer(cfg)
    while tr.step < 150:
        tr.train_step()
    tr.learner.online.params[0][N].fill_(float("nan"))  # seed 5's first member
    while tr.step < cfg.steps:
        tr.train_step()
    status = tr.tables()["runs"]["status"].tolist()
    assert status == ["done", "diverged"]
    save_model(tmp_path / MODEL_FILE, cfg, tr.learner.online, tr.obs_shape, status)
    tr.close()
    agent = load_agent(tmp_path)
    obs = np.zeros(4, dtype=np.float32)
    assert agent.act(obs, 3) in (0, 1)
    with pytest.raises(UsageError, match="--seeds: seed 5 diverged"):
        agent.act(obs, 5)
    with pytest.raises(UsageError, match="--seeds: this run trained seeds"):
        agent.q_values(obs, 4)
    with pytest.raises(UsageError, match="RUN_DIR"):
        load_agent(tmp_path / "missing")


@pytest.mark.usefixtures("torch_one_thread")
def test_cli_evaluate_prints_and_writes_csv_and_gif(run_dir, tmp_path, capsys) -> None:
    csv, gif = tmp_path / "new" / "eval.csv", tmp_path / "ep.gif"  # (its folder is made)
    argv = ["evaluate", str(run_dir), "--episodes", "2", "--env-seed", "4"]
    assert main([*argv, "--csv", str(csv), "--gif", str(gif), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "seed 3: return" in printed and "seed 5: return" in printed
    episodes = pd.read_csv(csv)
    assert list(episodes["seed"]) == [3, 3, 5, 5]
    ret, length = _greedy_episode(run_dir, 0, env_seed=4)
    assert episodes["return"][0] == ret
    # The GIF shows seed 3's first episode: reset frame + one per step, 40 ms each
    # (Pillow merges identical consecutive frames, adding up their durations).
    with Image.open(gif) as im:
        durations = []
        for i in range(im.n_frames):
            im.seek(i)
            durations.append(im.info["duration"])
    assert sum(durations) == 40 * (length + 1)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "extra,option",
    [
        (["--episodes", "0"], "--episodes"),
        (["--eps", "1.5"], "--eps"),
        (["--gif", "x.png"], "--gif"),
        (["--seeds", "9"], "--seeds"),
        (["--seeds", "3,5,3"], "--seeds"),  # seed 3's episodes would count twice
    ],
)
def test_cli_evaluate_bad_input_exits_2(run_dir, tmp_path, capsys, extra, option) -> None:
    assert main(["evaluate", str(run_dir), "--no-progress", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err


@pytest.mark.usefixtures("torch_one_thread")
def test_cli_evaluate_refuses_a_folder_as_output_file(run_dir, tmp_path, capsys) -> None:
    (tmp_path / "a.csv").mkdir()
    (tmp_path / "afile").write_text("x")
    # a folder named like the file; a file where its folder should be (failed only after
    # every episode was played)
    for csv, words in [("a.csv", "is a folder"), ("afile/x.csv", "is not a folder")]:
        argv = ["evaluate", str(run_dir), "--no-progress", "--csv", str(tmp_path / csv)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.count("--csv") == 1 and words in err


@pytest.mark.usefixtures("torch_one_thread")
def test_cli_evaluate_needs_a_finished_run(tmp_path, capsys) -> None:
    assert main(["evaluate", str(tmp_path), "--no-progress"]) == 2
    assert "RUN_DIR" in capsys.readouterr().err


@pytest.mark.usefixtures("torch_one_thread")
# The cap of 10 steps cuts the episodes: the cut-episode warning is expected here
@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_cli_evaluate_checks_the_environment_before_playing(tmp_path, capsys, monkeypatch):
    """--gif on an environment that cannot render was a traceback from gym.make; a run whose
    environment is not registered here was an error naming --env, which evaluate lacks."""
    env_id = "mmq-test/NoRender-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=LineEnv, max_episode_steps=10)
    out = tmp_path / "run"
    run_training(
        _config(env_id=env_id, steps=120, seeds=[0], checkpoint_every=0), out, progress=False
    )
    csv = tmp_path / "episodes.csv"
    argv = ["evaluate", str(out), "--no-progress", "--csv", str(csv)]
    assert main([*argv, "--gif", str(tmp_path / "e.gif")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--gif" in err and "render" in err
    assert not csv.exists()  # refused before any episode
    assert main(argv) == 0 and csv.exists()  # without --gif it plays
    capsys.readouterr()
    monkeypatch.delitem(gym.registry, env_id)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("maxminq evaluate: error: RUN_DIR:")
    assert "--env" not in err and env_id in err


@pytest.mark.usefixtures("torch_one_thread")
def test_an_environment_without_time_limit_is_warned_about_and_can_be_capped(tmp_path, capsys):
    """A test or evaluation episode on such an environment never finished, without a word
    (maxminq evaluate hung at 0 episodes); train and evaluate now say so, and evaluate
    takes --max-episode-steps."""
    env_id = "mmq-test/Endless-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=_Endless)  # no max_episode_steps
    out = tmp_path / "run"
    argv = ["train", "--env", env_id, "--agent", "dqn", "--steps", "40", "--eval-episodes", "0"]
    assert main([*argv, "--out", str(out), "--no-progress", "--no-plot"]) == 0
    assert "has no time limit" in capsys.readouterr().err
    csv = tmp_path / "e.csv"
    argv = ["evaluate", str(out), "--episodes", "2", "--no-progress", "--csv", str(csv)]
    assert main([*argv, "--max-episode-steps", "7"]) == 0
    assert "time limit" not in capsys.readouterr().err
    episodes = pd.read_csv(csv)
    assert list(episodes["length"]) == [7, 7] and list(episodes["return"]) == [7.0, 7.0]
    assert episodes["truncated"].all() and not episodes["terminated"].any()
    assert main([*argv, "--max-episode-steps", "0"]) == 2
    assert "--max-episode-steps" in capsys.readouterr().err
    api = evaluate_agent(load_agent(out), [0], episodes=1, max_episode_steps=4)
    assert list(api["length"]) == [4]
    # A paper environment without a cap (MinAtar) ends its episodes itself: no warning.
    argv = ["train", "--env", "maxminq/MinAtar-Breakout-v0", "--agent", "dqn", "--steps", "20"]
    argv += ["--eval-episodes", "0", "--out", str(tmp_path / "b"), "--no-progress", "--no-plot"]
    assert main(argv) == 0
    assert "time limit" not in capsys.readouterr().err


@pytest.mark.usefixtures("torch_one_thread")
def test_the_same_model_is_saved_as_the_same_bytes(tmp_path: pathlib.Path) -> None:
    """torch.save on a path names the archive's inner folder after the file: the random
    temporary name of the atomic write made two identical runs' model.pt differ."""
    net = build_net("mlp", N, (4,), 2)
    net.init_members([torch.Generator().manual_seed(0)], N)
    cfg = _config(seeds=[0]).resolve()
    for name in ("a.pt", "b.pt"):
        save_model(tmp_path / name, cfg, net, (4,), ["done"])
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()
    assert torch.equal(torch.load(tmp_path / "a.pt", weights_only=True)["online"], net.flat)


@pytest.mark.usefixtures("torch_one_thread")
def test_q_values_of_a_batch_and_of_a_wrong_shape(run_dir: pathlib.Path) -> None:
    """A batch (B, 4) was a reshape RuntimeError ('shape [1, 4] is invalid for input of
    size 12'); it now gives one row per observation, each the reference min over N."""
    agent = load_agent(run_dir)
    obs = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    batch = agent.q_values(obs, seed=5)
    assert batch.shape == (3, 2)
    for i in range(3):
        ref = _reference_values(run_dir, 1, obs[i])
        np.testing.assert_allclose(batch[i], ref, rtol=1e-5, atol=1e-6)
    assert agent.q_values(obs[:0], seed=5).shape == (0, 2)
    # act on a batch: one action per observation (was one int: the argmax over all B x A
    # values, e.g. 5 for a batch of 3 with 2 actions).
    greedy = agent.act(obs, seed=5)
    refs = [int(np.argmax(_reference_values(run_dir, 1, o))) for o in obs]
    assert greedy.shape == (3,) and greedy.tolist() == refs
    rngs = np.random.default_rng(2), np.random.default_rng(2)
    batch_actions = agent.act(obs, seed=5, eps=0.5, rng=rngs[0]).tolist()
    assert batch_actions == [agent.act(o, seed=5, eps=0.5, rng=rngs[1]) for o in obs]
    for bad in (np.zeros(3), np.zeros((2, 5)), np.zeros((2, 2, 4))):
        with pytest.raises(ValueError, match=r"obs has shape .* expected \(4,\)"):
            agent.q_values(bad, seed=5)


@pytest.mark.usefixtures("torch_one_thread")
def test_hidden_sizes_and_env_kwargs_reach_the_networks_and_every_environment(tmp_path, capsys):
    """``--hidden`` sizes the networks and ``--env-kwargs`` reaches the training, test and
    evaluation environments: with CartPole's ``sutton_barto_reward`` a step pays 0 and the
    termination -1 (the default pays +1 per step), so a terminated episode returns -1."""
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "300", "--seeds", "0"]
    argv += ["--learning-starts", "100", "--eval-episodes", "2", "--hidden", "32,16"]
    argv += ["--env-kwargs", '{"sutton_barto_reward": true}', "--out", str(out)]
    assert main([*argv, "--no-progress", "--no-plot"]) == 0
    agent = load_agent(out)
    assert agent.config.hidden == (32, 16)
    assert agent.config.env_kwargs == {"sutton_barto_reward": True}
    (net,) = agent._nets
    assert net.n_params == (4 * 32 + 32) + (32 * 16 + 16) + (16 * 2 + 2)
    episodes = pd.read_csv(out / "episodes.csv")
    assert (
        len(episodes) >= 3 and (episodes["return"] == -episodes["terminated"].astype(float)).all()
    )
    tests = pd.read_csv(out / "tests.csv")
    assert len(tests) == 2 and (tests["return"] <= 0).all()
    played = evaluate_agent(agent, [0], episodes=2)
    assert (played["return"] == -played["terminated"].astype(float)).all()
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith('DQN on CartPole-v1 {"sutton_barto_reward": true}, eps')
    # The loaded network is the trained one, as a plain nn.Module of those sizes.
    obs = np.array([0.01, -0.02, 0.03, 0.04], np.float32)
    (module,) = net.to_modules()
    with torch.no_grad():
        ref = module(torch.from_numpy(obs)[None])[0].numpy()
    np.testing.assert_allclose(agent.q_values(obs, 0), ref, rtol=1e-5, atol=1e-6)
    # Runs made before these options existed name neither: at their defaults they are left
    # out of the saved options, so such runs still resume and load.
    default = _config().resolve()
    assert default.hidden == (64, 64) and default.env_kwargs == {}
    saved = json.loads(default.result_key())
    assert "hidden" not in saved and "env_kwargs" not in saved
    loaded = TrainConfig.from_key(default.result_key())  # (the key omits checkpoint_every)
    assert dataclasses.replace(loaded, checkpoint_every=default.checkpoint_every) == default


@pytest.mark.usefixtures("torch_one_thread")
# The cap of 30 steps cuts the episodes: the cut-episode warning is expected here
@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_readme_trained_agent_example_plays_the_runs_environment(tmp_path, monkeypatch) -> None:
    """docs/deep-agents.md's "Using a trained agent" block, run on a run trained with env keywords
    and a cap of its own: its environment is the run's (CartPole's ``sutton_barto_reward``
    pays 0 per step where the default pays +1; cap 30, not CartPole-v1's 500)."""
    section = page("deep-agents").split("**Using a trained agent.**", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'load_agent("runs/lunar-maxmin")' in block
    cfg = _config(seeds=[0], steps=150, eval_episodes=0, env_kwargs={"sutton_barto_reward": True})
    run_training(dataclasses.replace(cfg, max_episode_steps=30), tmp_path / "run", progress=False)
    monkeypatch.chdir(tmp_path)
    code = block.replace("runs/lunar-maxmin", "run")
    ns: dict = {}
    exec(compile(code, "docs/deep-agents.md", "exec"), ns)
    env = ns["env"]
    assert env.spec.max_episode_steps == 30
    env.reset(seed=1)
    rewards = [env.step(0)[1] for _ in range(5)]  # pushing left: 5 steps are not enough to fall
    assert rewards == [0.0] * 5
    assert ns["q"].shape == (2,) and len(ns["episodes"]) == 10
    assert (ns["episodes"]["length"] <= 30).all()


@pytest.mark.usefixtures("torch_one_thread")
def test_start_state_bias_counts_episodes_as_training_does() -> None:
    """Terminated episodes count; a cut one only if 0.99^length <= 0.05 (length >= 299)."""
    from maxminq.commands.evaluate import _bias_text, _start_bias

    rows = {"terminated": [False, False, True], "length": [298, 299, 5]}
    rows |= {"q_first": [0.0, 10.0, 4.0], "discounted_return": [100.0, 7.0, 5.0]}
    g = pd.DataFrame(rows)
    mean, values = _start_bias(g, 0.99)
    assert mean == 1.0 and values.tolist() == [3.0, -1.0]  # (3 - 1) / 2
    # SE: sample sd of (3, -1) is 2 sqrt(2), over sqrt(2) episodes: 2
    assert _bias_text((mean, values)) == "start-state bias +1.00 +- 2.00 (2 episodes)"
    assert _start_bias(g.iloc[:1], 0.99) is None
    assert _bias_text(None) == "start-state bias n/a (every episode cut short)"
    # One counted episode has no standard error: not "+- 0.00".
    one = _start_bias(g.iloc[[0, 2]], 0.99)
    assert one is not None and _bias_text(one) == "start-state bias -1.00 (1 episode)"


def test_a_nan_network_refuses_to_act_instead_of_playing_action_0(tmp_path) -> None:
    """np.argmax of [nan, nan] is 0: the seed played action 0 throughout and evaluate
    reported its returns as a policy's."""
    agent = _agent(tmp_path / "run", float("nan"))
    expected = "--seeds: seed 0's networks hold NaN or inf"
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        agent.act(np.zeros(4, np.float32))
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        agent.act(np.zeros((3, 4), np.float32), eps=0.5, rng=np.random.default_rng(0))
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}"):
        evaluate_agent(agent, [0], 1, progress=False)


def test_values_beyond_float32_refuse_to_act(tmp_path) -> None:
    agent = _agent(tmp_path / "run", 1e30)  # finite weights whose values overflow to inf
    assert not np.isfinite(agent.q_values(np.zeros(4, np.float32))).all()
    with pytest.raises(UsageError, match=r"^--seeds: seed 0's action values at this obs.*inf"):
        agent.act(np.zeros(4, np.float32))


def test_a_nan_observation_is_named(tmp_path) -> None:
    agent = _agent(tmp_path / "run")
    obs = np.array([0.0, np.nan, 0.0, 0.0], np.float32)
    with pytest.raises(ValueError, match=r"^act: obs holds nan; give a finite observation$"):
        agent.act(obs)
    assert agent.act(np.zeros(4, np.float32)) in (0, 1)  # a finite one still acts
