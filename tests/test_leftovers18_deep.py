"""Leftovers of the deep agents, settled in session 18:

* ``evaluate_agent`` (``maxminq evaluate``) names a ``NormalizeObservation`` /
  ``NormalizeReward`` wrapper in an ``EnvWarning``, as training does: their statistics,
  saved nowhere, start afresh in its episodes (it was silent, and returned other numbers);
* one check (``deep.replay.check_finite``) refuses NaN / inf observations and rewards in
  training (every seed's row) and in test and evaluation episodes (one step), with one
  wording that names the seed position or the episode, and float32's range for an inf;
* a seed whose networks hold NaN or inf is found at the same step, with the same
  episodes, whatever the other seeds in the run draw.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from line_env import StepsEnv

from maxminq.cli import main
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.env_checks import episode_observation
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, evaluate_agent, load_agent, save_model
from maxminq.deep.replay import ReplayBuffers, check_finite
from maxminq.deep.train import Trainer, run_training
from maxminq.errors import UsageError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def _obs_normalized(**kwargs):
    return gym.wrappers.NormalizeObservation(StepsEnv(**kwargs))


def _reward_normalized(**kwargs):
    return gym.wrappers.NormalizeReward(StepsEnv(**kwargs))


def _both_normalized(**kwargs):
    return gym.wrappers.NormalizeReward(gym.wrappers.NormalizeObservation(StepsEnv(**kwargs)))


def _register(entry, cap: int | None = 50) -> str:
    env_id = f"mmq-leftovers18-deep/{entry.__name__.strip('_')}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=cap)
    return env_id


def _model_run(folder: Path, env_id: str) -> Path:
    """A run folder with only a model.pt: a DQN's untrained networks (seeds 0 and 1) for
    StepsEnv's three features (what load_agent reads), written without training."""
    cfg = TrainConfig(env_id=env_id, agent="dqn", n=1, steps=100, seeds=[0, 1]).resolve()
    net = build_net("mlp", 2, (3,), 2)
    net.init_members([torch.Generator().manual_seed(s) for s in (0, 1)], 1)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (3,), ["done", "done"])
    return folder


# --- 1. evaluate names a wrapper whose statistics start afresh -------------------------------


@pytest.mark.parametrize(
    "entry,names,effects",
    [
        (_obs_normalized, "NormalizeObservation", ["observations on other scales"]),
        (_reward_normalized, "NormalizeReward", ["rewards scaled by these episodes"]),
        (
            _both_normalized,
            "NormalizeObservation and NormalizeReward",
            ["observations on other scales", "rewards scaled by these episodes"],
        ),
    ],
)
def test_evaluate_warns_about_a_normalize_wrapper_as_training_does(
    entry, names, effects, tmp_path
) -> None:
    """Training warns (and --resume refuses); evaluate_agent played on with statistics that
    start afresh, silently: the agent saw other scales, the returns were rescaled rewards."""
    agent = load_agent(_model_run(tmp_path / "run", _register(entry)))
    with pytest.warns(EnvWarning) as caught:
        evaluate_agent(agent, [0, 1], episodes=2)
    texts = [str(w.message) for w in caught if issubclass(w.category, EnvWarning)]
    assert len(texts) == 1, texts
    text = texts[0]
    assert f"is wrapped in {names}, whose running statistics were not saved" in text, text
    assert "one seed's to the next seed's" in text  # one environment plays every seed
    for effect in effects:
        assert effect in text, text
    assert text.endswith("(TransformObservation, TransformReward) and train again"), text


def test_evaluate_without_a_normalize_wrapper_does_not_warn(tmp_path) -> None:
    agent = load_agent(_model_run(tmp_path / "run", _register(StepsEnv)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = evaluate_agent(agent, [0, 1], episodes=2)
    assert table["length"].tolist() == [6] * 4


def test_the_command_names_the_wrapper_once_and_plays(tmp_path, capsys) -> None:
    run = _model_run(tmp_path / "run", _register(_obs_normalized))
    assert main(["evaluate", str(run), "--episodes", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if "NormalizeObservation" in ln]
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("maxminq evaluate: warning: mmq-leftovers18-deep/"), lines[0]
    assert "seed 0: return" in captured.out and "seed 1: return" in captured.out


def test_training_still_warns_in_its_own_words() -> None:
    """The training warning (now from the same function) keeps its text: --resume and the
    test episodes are what it concerns."""
    cfg = TrainConfig(
        env_id=_register(_reward_normalized), agent="dqn", steps=20, seeds=[0]
    ).resolve()
    with pytest.warns(EnvWarning, match="NormalizeReward, whose running statistics") as caught:
        Trainer(cfg).close()
    text = next(str(w.message) for w in caught if "NormalizeReward" in str(w.message))
    assert "are not in checkpoints (--resume refuses the run)" in text
    assert "start afresh in every new environment (the test episodes, maxminq evaluate)" in text


# --- 2. one finite check for training's rows and an episode's step ---------------------------


def _rows(s: int = 3, bad_row: int | None = None, value: float = np.nan) -> np.ndarray:
    obs = np.ones((s, 4), np.float32)
    if bad_row is not None:
        obs[bad_row, 2] = value
    return obs


def test_the_replay_and_an_episode_say_it_in_the_same_words() -> None:
    """'an observation (seed position 1 in --seeds) holds nan' in training, 'an observation
    of a test or evaluation episode (...) is nan as float32' in an episode: one wording now,
    each naming where the value came from."""
    buffers = ReplayBuffers(3, 10, (4,), np.dtype(np.float32))
    ok = np.zeros(3)
    with pytest.raises(UsageError) as err:
        buffers.add(_rows(), ok, ok, _rows(bad_row=1), ok)
    assert str(err.value) == (
        "--env: an observation (seed position 1 in --seeds) is nan as float32; observations "
        "must be finite numbers"
    )
    with pytest.raises(UsageError) as err:
        episode_observation(_rows(1, 0)[0], (4,), "X-v0", "seed 5's episode 2, step()")
    assert str(err.value) == (
        "--env: an observation of a test or evaluation episode (seed 5's episode 2, step()) is "
        "nan as float32; observations must be finite numbers"
    )


def test_an_inf_names_float32s_range_in_an_episode_too() -> None:
    """1e39 from a float64 environment is inf as float32: training said so (the range), a
    test or evaluation episode only 'is inf', a value the environment never returned."""
    with pytest.raises(UsageError, match=r"float32 holds \+-3\.4e\+38 at most: beyond, inf\)$"):
        episode_observation(np.full(4, 1e39), (4,), "X-v0", "seed 0's episode 1, step()")
    with pytest.raises(UsageError, match=r"^--env: a reward of .* is inf as float32; .*3\.4e\+38"):
        episode_observation(np.ones(4), (4,), "X-v0", "seed 0's episode 1, step()", 1e39)
    buffers = ReplayBuffers(2, 10, (4,), np.dtype(np.float32))
    ok = np.zeros(2)
    with pytest.raises(
        UsageError, match=r"^--env: a reward \(seed position 1 in --seeds\) is -inf.*3\.4e\+38"
    ):
        buffers.add(_rows(2), ok, np.array([0.0, -1e39]), _rows(2), ok)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_the_first_bad_row_and_value_are_named(value) -> None:
    obs = _rows(4, 2, value)
    obs[3, 0] = np.nan  # a later row: not the one named
    with pytest.raises(UsageError, match=rf"\(seed position 2 in --seeds\) is {value} as float32"):
        check_finite(lambda s: f"(seed position {s} in --seeds)", np.zeros(4, np.float32), obs)
    # In a uint8 replay buffer (MinAtar's), a NaN is named as such, not as a uint8 value.
    buffers = ReplayBuffers(4, 10, (4,), np.dtype(np.uint8))
    ok = np.zeros(4)
    with pytest.raises(UsageError, match=rf"seed position 2 in --seeds\) is {value} as float32"):
        buffers.add(np.ones((4, 4)), ok, ok, obs, ok)


def test_large_finite_values_pass_both_ways() -> None:
    """The quick test sums squares: 1e20 squared is beyond float32 though 1e20 is finite
    there; the exact test decides, and lets it (and a reward at float32's maximum) through."""
    big = np.full((2, 4), 1e20, np.float32)
    top = float(np.finfo(np.float32).max)
    buffers = ReplayBuffers(2, 10, (4,), np.dtype(np.float32))
    buffers.add(big, np.zeros(2), np.array([top, -top]), big, np.zeros(2))
    assert buffers.size == 1 and (buffers.next_obs[:, 0] == 1e20).all()
    arr = episode_observation(big[0], (4,), "X-v0", "seed 0's episode 1, step()", top)
    assert arr.dtype == np.float32 and (arr == np.float32(1e20)).all()
    check_finite("here", 0.0, big[0])  # nothing raised
    with pytest.raises(UsageError, match=r"a reward here is nan as float32"):
        check_finite("here", None, big[0])  # None reads as NaN, as before


# --- 3. a seed's divergence does not depend on the other seeds -------------------------------


def _poisoned_at(seeds: list[int], step: int) -> pd.DataFrame:
    """Seed 0's episodes and divergence step when its online networks turn to inf before
    ``step`` (a step at which seed 0 explores and seed 3 acts greedily)."""
    cfg = TrainConfig(
        env_id=_register(StepsEnv), agent="dqn", steps=step + 3, seeds=seeds,
        learning_starts=10, eps_start=0.5, eps_end=0.5, buffer_size=100, batch_size=4,
        eval_episodes=0, checkpoint_every=0, bias_every=10,
    ).resolve()  # fmt: skip
    tr = Trainer(cfg)
    try:
        while tr.step < step:
            tr.train_step()
        for p in tr.learner.online.params:
            p[seeds.index(0)].fill_(float("inf"))
        while tr.step < cfg.steps:
            tr.train_step()
        tables = tr.tables()
    finally:
        tr.close()
    ep, runs = tables["episodes"], tables["runs"]
    return ep[ep["seed"] == 0].reset_index(drop=True), runs[runs["seed"] == 0]


def test_a_diverging_seed_is_found_as_it_would_be_alone() -> None:
    """The acting forward pass runs only when some seed acts greedily, and it marked every
    seed with non-finite values as diverged, so a seed that explored then stopped before its
    environment step when another seed acted greedily, and after it (found by its update)
    alone: its last episode was in the table or not depending on the other seeds."""
    step = _exploring_step()
    alone_ep, alone_runs = _poisoned_at([0], step)
    among_ep, among_runs = _poisoned_at([0, 3], step)
    assert alone_runs["diverged_step"].tolist() == [step + 1]  # found by its update
    assert among_runs["diverged_step"].tolist() == [step + 1]
    assert alone_ep["step"].iloc[-1] == step + 1  # its episode ended at that very step
    pd.testing.assert_frame_equal(alone_ep, among_ep, check_exact=True)


def _exploring_step() -> int:
    """A step t >= 10 (learning) after which an episode of StepsEnv ends (6 steps each: t + 1
    a multiple of 6), at which seed 0 explores and seed 3 acts greedily (eps = 0.5): read
    from their training streams as the trainer draws them (deep.train.SeedUniforms)."""
    from maxminq.deep.train import SeedUniforms, _seed_streams

    streams = [_seed_streams(s)[0] for s in (0, 3)]
    for rng in streams:  # the first episode's reset seed, drawn before the uniforms
        rng.integers(2**31 - 1)
    uniforms = SeedUniforms(streams, 4 + 4)
    for t in range(200):
        u = uniforms.next()
        if t >= 10 and (t + 1) % 6 == 0 and u[0, 0] < 0.5 <= u[1, 0]:
            return t
    raise AssertionError("no such step in 200")


# --- 4. a value beyond float32: the commands' error line alone --------------------------------


class _HugeReward(StepsEnv):
    """StepsEnv whose reward at step 3 of an episode is 1e39 (finite, beyond float32)."""

    def step(self, action):
        obs, reward, *rest = super().step(action)
        return obs, (1e39 if self.t == 3 else reward), *rest


def test_the_commands_show_the_float32_error_without_numpys_overflow_warning(tmp_path, capsys):
    """NumPy's 'RuntimeWarning: overflow encountered in cast' (two lines of file and source)
    came before the one-line --env error, which already names float32's range."""
    env_id = _register(_HugeReward)
    argv = ["train", "--env", env_id, "--agent", "dqn", "--steps", "20", "--no-plot"]
    argv += ["--learning-starts", "10", "--no-progress", "--out", str(tmp_path / "run")]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(argv) == 2
    assert not [w for w in seen if w.category is RuntimeWarning], [str(w.message) for w in seen]
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("maxminq train: error: --env: a reward (seed position 0"), err
    # evaluate: the test-episode step's reward
    run = _model_run(tmp_path / "model", env_id)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 2
    assert not [w for w in seen if w.category is RuntimeWarning], [str(w.message) for w in seen]
    err = capsys.readouterr().err
    assert err.startswith("maxminq evaluate: error: --env: a reward of a test or eval"), err
    assert err.count("\n") == 1, err


# --- 5. a seed's mini-batch products are its own too ------------------------------------------


class _FiveActions(StepsEnv):
    """StepsEnv with five actions (reward 1 for action 1): an output layer of 5 units."""

    action_space = gym.spaces.Discrete(5)


def test_minatar_mini_batch_values_of_a_seed_are_its_own_at_an_odd_batch_size() -> None:
    """One batched product over all seeds rounded a member's Q-values by its position for
    some mini-batch shapes (here MinAtar's 6 actions at 33 rows), so the targets and updates
    of a seed in a multi-seed run were not those of the seed alone; only one-row products
    (acting, probes) were made per seed."""
    seeds = [torch.Generator().manual_seed(s) for s in (5, 9)]
    both = build_net("minatar_cnn", 2, (4, 10, 10), 6)
    both.init_members(seeds, 1)
    x = torch.rand((2, 33, 4, 10, 10), generator=torch.Generator().manual_seed(1)).round()
    together = both.forward_shared(x, 1)
    for s in range(2):
        alone = build_net("minatar_cnn", 1, (4, 10, 10), 6)
        alone.flat.copy_(both.flat[s : s + 1])
        assert torch.equal(together[s], alone.forward_shared(x[s : s + 1], 1)[0]), s
    # The update's forward too (the rows of the updated members, one per seed).
    act = torch.zeros((2, 33), dtype=torch.int64)
    y = torch.zeros((2, 33))
    _, q_sa, grad = both.loss_and_grad(both.flat, x, act, y, "huber", 2)
    for s in range(2):
        _, q1, g1 = both.loss_and_grad(both.flat[s : s + 1], x[s : s + 1], act[:1], y[:1], "huber")
        assert torch.equal(q_sa[s], q1[0]) and torch.equal(grad[s], g1[0]), s


def test_a_seeds_tables_are_its_own_at_a_batch_size_that_rounds_by_position(tmp_path) -> None:
    """README: a seed's tables are bitwise identical alone or among other seeds. They were
    not with 5 actions and --batch-size 5 (nor MinAtar's 6 at an odd size): the mini-batch
    products of all seeds were one product."""

    def seed0(seeds: list[int], out: str) -> dict[str, pd.DataFrame]:
        cfg = TrainConfig(
            env_id=_register(_FiveActions), agent="maxmin-dqn", n=2, steps=150, seeds=seeds,
            learning_starts=20, batch_size=5, buffer_size=100, eval_episodes=2,
            checkpoint_every=0, bias_every=50, eps_decay_steps=50,
        )  # fmt: skip
        tables = run_training(cfg, tmp_path / out, progress=False)
        return {
            k: t[t["seed"] == 0].drop(columns="steps_per_s", errors="ignore").reset_index(drop=True)
            for k, t in tables.items()
        }

    alone, among = seed0([0], "alone"), seed0([3, 0], "among")
    assert len(alone["metrics"]) == 3 and alone["metrics"]["loss"].notna().all()
    for name in ("episodes", "tests", "metrics", "runs"):
        pd.testing.assert_frame_equal(alone[name], among[name], check_exact=True)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("rows", [1, 32, 33])
def test_every_stacked_product_gives_each_seed_its_own_values(n, rows) -> None:
    """nets.linear takes one product for all seeds only where it was found to equal each
    seed's own product (MinAtar's output layer of N = 4 nets per seed, one row: one product
    here, 7x faster than a product per seed); whichever it takes, each seed's values are
    bitwise those of its product alone, also for shapes where one product is not (N = 1)."""
    from maxminq.deep.nets import linear

    gen = torch.Generator().manual_seed(rows * 10 + n)
    for seeds in (2, 3, 5):
        for k_in, k_out in [(128, 6), (64, 5), (64, 4)]:
            m = seeds * n
            h = torch.rand((m, rows, k_in), generator=gen)
            w = torch.rand((m, k_in, k_out), generator=gen) - 0.5
            b = torch.rand((m, 1, k_out), generator=gen) - 0.5
            out = linear(b, h, w, seeds)
            for s in range(seeds):
                own = torch.baddbmm(
                    b[s * n : (s + 1) * n], h[s * n : (s + 1) * n], w[s * n : (s + 1) * n]
                )
                assert torch.equal(out[s * n : (s + 1) * n], own), (seeds, k_in, k_out, s)


def test_minatar_values_of_maxmin_with_four_nets_are_each_seeds_own() -> None:
    """Acting and probing values of Maxmin DQN (N = 4) on MinAtar, where the output layer is
    now one product for all seeds: each seed's are those of a learner of that seed alone."""
    from maxminq.deep.agents import Learner

    shape = (4, 10, 10)
    obs = (torch.rand((3, *shape), generator=torch.Generator().manual_seed(2)) < 0.3).float()
    action = torch.tensor([0, 5, 3])

    def learner(seeds: list[int]) -> Learner:
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        lr = Learner("maxmin-dqn", 4, gens, "minatar_cnn", shape, 6, "rmsprop", 1e-3)
        with torch.no_grad():
            lr.online.flat.mul_(3.0)
            lr.target.flat.copy_(lr.target.flat * 2.0 - 0.01)
        return lr

    many = learner([11, 12, 13])
    est, greedy = many.estimate(obs, action), many.greedy_values(obs)
    for pos, seed in enumerate([11, 12, 13]):
        one = learner([seed])
        assert torch.equal(one.estimate(obs[pos : pos + 1], action[pos : pos + 1])[0], est[pos])
        assert torch.equal(one.greedy_values(obs[pos : pos + 1])[0], greedy[pos])
