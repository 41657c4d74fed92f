"""A seed whose values go non-finite (diverged): the step it is recorded at, its cause (its
G or its networks), its test and evaluation episodes, the seeds that can still act, and the
words of a run whose every seed diverged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from deep_runs import _run
from generalized_runs import _small
from line_env import StepsEnv
from wrapped_env_runs import _register

from maxminq.analysis.runs import _diverged_note
from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, load_agent, save_model
from maxminq.deep.train import Trainer
from maxminq.errors import UsageError


def _trained(cfg, fill: float | None) -> tuple[dict[str, pd.DataFrame], Trainer]:
    """``cfg`` trained to its last step, seed position 1's online nets then set to ``fill``
    (None: left), and its test episodes played."""
    tr = Trainer(cfg)
    try:
        while tr.step < cfg.steps:
            tr.train_step()
        if fill is not None:
            tr.learner.online.flat[1:2].fill_(fill)
        tr.evaluate()
        return tr.tables(), tr
    finally:
        tr.close()


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


def _two_seeds(folder: Path, status: list[str]) -> Path:
    """A CartPole DQN run of seeds 0 and 1 with ``status``, its networks untrained, and
    its runs.csv (as evaluate reads RUN_DIR)."""
    cfg = TrainConfig(env_id="CartPole-v1", agent="dqn", n=1, steps=100, seeds=[0, 1]).resolve()
    net = build_net("mlp", 2, (4,), 2)
    net.init_members([torch.Generator().manual_seed(s) for s in (0, 1)], 1)
    _run(folder)
    save_model(folder / MODEL_FILE, cfg, net, (4,), status)
    return folder


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize(
    "fill,cause",
    [
        (float("nan"), "networks: its networks held NaN or inf in a test episode"),
        (1e30, "networks: its action values in a test episode were inf (beyond float32)"),
    ],
)
def test_a_seed_that_cannot_act_in_its_test_episodes_is_diverged_not_scored(
    fill: float, cause: str
) -> None:
    """Its nets NaN after the last update (no later step to find them), or values beyond
    float32: np.argmax took action 0 and the test returns were recorded as the policy's;
    now the seed is recorded as diverged at the last step, with no test rows, as act()
    refuses such values. Seed 0 is tested exactly as before."""
    cfg = _small(agent="dqn", n=1, steps=100, eval_episodes=2).resolve()
    tables, _ = _trained(cfg, fill)
    plain, _ = _trained(cfg, None)
    runs = tables["runs"].set_index("seed")
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 100
    assert runs.loc[1, "diverged_cause"].startswith(cause)
    assert tables["tests"]["seed"].tolist() == [0, 0]
    pd.testing.assert_frame_equal(tables["tests"], plain["tests"][plain["tests"]["seed"] == 0])


@pytest.mark.usefixtures("torch_one_thread")
def test_the_model_of_a_seed_diverged_in_its_test_episodes_refuses_to_act(tmp_path, capsys) -> None:
    """model.pt records what the test episodes found: load_agent refuses that seed."""
    cfg = _small(agent="dqn", n=1, steps=100, eval_episodes=1)
    out = tmp_path / "run"
    original = Trainer.evaluate

    def evaluate(self, progress=False):  # the last update left seed 1's nets NaN
        self.learner.online.flat[1:2].fill_(float("nan"))
        original(self, progress)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Trainer, "evaluate", evaluate)
        run_training(cfg, out, progress=False)
    agent = load_agent(out)
    assert agent.status == ["done", "diverged"]
    with pytest.raises(UsageError, match=r"^--seeds: seed 1 diverged during training"):
        agent.act(np.zeros(4, np.float32), seed=1)
    # maxminq evaluate says why it is not played (runs.csv's cause), in its one line
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "1 seed of 2 diverged during training and cannot act, not played: 1 (networks: its "
        "networks held NaN or inf in a test episode (after its last update))"
    )


@pytest.mark.usefixtures("torch_one_thread")
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


@pytest.mark.usefixtures("torch_one_thread")
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


def test_a_diverged_seed_names_the_seeds_that_can_act(tmp_path, capsys) -> None:
    run = _two_seeds(tmp_path / "run", ["diverged", "done"])
    assert main(["evaluate", str(run), "--seeds", "0", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "maxminq evaluate: error: --seeds: seed 0 diverged during training and cannot act; "
        "give one that can: 1\n"
    )


def test_a_run_whose_every_seed_diverged_says_to_train_again(tmp_path, capsys) -> None:
    run = _two_seeds(tmp_path / "run", ["diverged", "diverged"])
    assert main(["evaluate", str(run), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"maxminq evaluate: error: RUN_DIR: every seed of {run} diverged (at the step in its "
        "runs.csv); nothing can act: train it again, e.g. with a smaller --lr\n"
    )
    with pytest.raises(UsageError, match=r"cannot act; no seed of this run can .*smaller --lr$"):
        load_agent(run).act(np.zeros(4, np.float32), 1)


def test_one_seed_of_one_diverged_reads_in_the_singular() -> None:
    assert _diverged_note(pd.DataFrame({"status": ["diverged"]})) == " (1 of 1 seed diverged)"
    runs = pd.DataFrame({"status": ["diverged", "done", "done", "done"]})
    assert _diverged_note(runs) == " (1 of 4 seeds diverged)"


@pytest.mark.usefixtures("torch_one_thread")
def test_a_diverged_seed_is_recorded_at_the_step_whose_update_made_it_non_finite(
    tmp_path,
) -> None:
    """A step size far too large (RMSprop, 1e30, no clipping) makes the loss overflow
    within a few updates; runs.csv names, per seed, the step whose update first left NaN/inf
    in that seed's networks (found here by stepping a Trainer by hand and looking at the
    weights after every step), not the step after it."""
    config = TrainConfig(
        env_id="CartPole-v1",
        agent="dqn",
        steps=40,
        seeds=[0, 1, 2],
        learning_starts=20,
        buffer_size=200,
        checkpoint_every=0,
        eval_episodes=0,
        optimizer="rmsprop",
        lr=1e30,
        grad_clip=-1,
    )
    trainer = Trainer(config.resolve())
    first: dict[int, int] = {}
    try:
        with torch.random.fork_rng():
            while trainer.step < 40:
                trainer.train_step()
                weights = trainer.learner.online.flat.reshape(3, trainer.learner.n_online, -1)
                for s in range(3):
                    if s not in first and not torch.isfinite(weights[s]).all():
                        first[s] = trainer.step
    finally:
        trainer.close()
    assert sorted(first) == [0, 1, 2] and min(first.values()) > 20  # after learning starts
    with torch.random.fork_rng():
        runs = run_training(config, tmp_path / "run", progress=False)["runs"]
    assert runs["status"].tolist() == ["diverged"] * 3
    np.testing.assert_array_equal(runs["diverged_step"], [first[0], first[1], first[2]])
