"""``eval_every`` / ``maxminq train --eval-every``: evaluations during training (evals.csv).

Beyond the paper's protocol (which tests only after training): every ``eval_every`` steps
each live seed plays ``eval_every_episodes`` episodes with eps = ``eval_eps`` on
environments of its own, drawing from a fourth random stream of its seed. Checked here:
training is bitwise the same with and without them, a seed's evaluations do not depend on
the other seeds, the episodes follow an independent loop, and a killed and resumed run
writes the same evals.csv (and TensorBoard log) as one straight through.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from deep_runs import _deterministic, _shown, train_killed_at_330_then_resumed
from deep_runs import _small as _train_small

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import Trainer, _seed_streams, read_tables, run_training
from maxminq.errors import UsageError

TRAINING = ("episodes", "tests", "metrics", "runs")


COLUMNS = ["seed", "step", "episode", "return", "length", "terminated", "truncated"]


def _small(**kw) -> TrainConfig:
    """deep_runs.py's small CartPole run, evaluated 2 episodes every 100 steps."""
    return _train_small(**{"eval_every": 100, "eval_every_episodes": 2, **kw})


def _csv(path: pathlib.Path) -> pd.DataFrame:
    return pd.read_csv(path)


SWEEP = """
name: cp_evals
kind: deep
fixed: {env_id: CartPole-v1, agent: dqn, n: 1, steps: 200, seeds: [0, 1], learning_starts: 100,
        eval_episodes: 1}
variants:
  - {eval_every: 100, eval_every_episodes: 2}
scales: {quick: {}, paper: {}}
"""


def test_a_fourth_child_seed_sequence_leaves_the_first_three_unchanged() -> None:
    """numpy's ``SeedSequence.spawn`` numbers its children, and child i depends on i alone:
    the streams of training, initialisation and tests are those of ``spawn(3)`` (every
    earlier run), and the evaluation stream is another one."""
    for seed in (0, 5, 123):
        three, four = np.random.SeedSequence(seed).spawn(3), np.random.SeedSequence(seed).spawn(4)
        for a, b in zip(three, four[:3], strict=True):
            assert np.array_equal(a.generate_state(8), b.generate_state(8))
        train, gen, test, evals = _seed_streams(seed)
        old_train = np.random.default_rng(three[0]).random(5)
        assert np.array_equal(train.random(5), old_train)
        assert gen.initial_seed() == int(three[1].generate_state(1, np.uint64)[0] >> 1)
        assert np.array_equal(test.random(5), np.random.default_rng(three[2]).random(5))
        assert np.array_equal(evals.random(5), np.random.default_rng(four[3]).random(5))
        assert not np.array_equal(four[3].generate_state(8), four[2].generate_state(8))


def test_evaluations_leave_training_bitwise_unchanged(tmp_path: pathlib.Path) -> None:
    """The same run with evaluations every 150 steps (3 episodes, eps 0.3: their random
    stream is used often) has bitwise the training tables of the run without them; evals.csv
    has a row per seed, evaluation (steps 150 and 300 of 400, none at 0) and episode, and is
    read back. Without evaluations: no evals table, file or option in config.json."""
    plain = run_training(_train_small(seeds=[0, 1], eval_eps=0.3), tmp_path / "plain")
    cfg = _train_small(seeds=[0, 1], eval_eps=0.3, eval_every=150, eval_every_episodes=3)
    evaluated = run_training(cfg, tmp_path / "evals")
    for name in TRAINING:
        pd.testing.assert_frame_equal(
            _deterministic(plain)[name], _deterministic(evaluated)[name], check_exact=True
        )
    evals = evaluated["evals"]
    assert list(evals.columns) == COLUMNS
    keys = [(s, t, e) for s in (0, 1) for t in (150, 300) for e in (1, 2, 3)]
    assert list(evals[["seed", "step", "episode"]].itertuples(index=False, name=None)) == keys
    assert (evals["length"] >= 1).all() and (evals["return"] == evals["length"]).all()  # +1/step
    pd.testing.assert_frame_equal(read_tables(tmp_path / "evals")["evals"], evals)
    saved = json.loads((tmp_path / "evals" / "config.json").read_text())
    assert saved["eval_every"] == 150 and saved["eval_every_episodes"] == 3
    assert set(plain) == set(TRAINING) and not (tmp_path / "plain" / "evals.csv").exists()
    assert not {"eval_every", "eval_every_episodes"} & set(
        json.loads((tmp_path / "plain" / "config.json").read_text())
    )


def test_a_seeds_evaluations_do_not_depend_on_the_other_seeds(tmp_path: pathlib.Path) -> None:
    """Seed 0 alone and among seeds 7 and 3: the same evaluation rows, bitwise."""
    alone = run_training(_small(seeds=[0], eval_eps=0.3), tmp_path / "alone")
    among = run_training(_small(seeds=[7, 0, 3], eval_eps=0.3), tmp_path / "among")
    a, b = (t["evals"][t["evals"]["seed"] == 0].reset_index(drop=True) for t in (alone, among))
    assert len(a) == 4 * 2
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    seven = among["evals"][among["evals"]["seed"] == 7]["length"].to_numpy()
    assert not np.array_equal(a["length"].to_numpy(), seven)


def test_evaluation_episodes_follow_an_independent_loop() -> None:
    """The evaluation at step 100: 3 episodes on a new CartPole, each reset with a seed
    drawn from the seed's fourth stream, acting eps-greedily (eps 0.3, from that stream)
    on the min over the N = 2 online nets of step 100; the training episode in progress
    goes on as in a run without evaluations."""
    cfg = _small(seeds=[3], eval_every_episodes=3, eval_eps=0.3).resolve()
    tr, plain = Trainer(cfg), Trainer(dataclasses.replace(cfg, eval_every=0))
    while tr.step < 100:
        tr.train_step()
        plain.train_step()
    online = tr.learner.online.to_modules()
    rng = np.random.default_rng(np.random.SeedSequence(3).spawn(4)[3])
    env = gym.make("CartPole-v1", max_episode_steps=500)
    expected = []
    for episode in range(3):
        obs, _ = env.reset(seed=int(rng.integers(2**31 - 1)))
        total, length, done = 0.0, 0, False
        while not done:
            with torch.no_grad():
                x = torch.tensor(obs, dtype=torch.float32)[None]
                q = torch.minimum(online[0](x), online[1](x))[0]
            a = int(rng.integers(2)) if rng.random() < 0.3 else int(q.argmax())
            obs, r, term, trunc, _ = env.step(a)
            total, length, done = total + float(r), length + 1, term or trunc
        expected.append([3, 100, episode + 1, total, length, term, trunc])
    env.close()
    assert tr.rows["evals"] == expected
    while tr.step < 130:  # evaluations left training alone
        tr.train_step()
        plain.train_step()
    assert np.array_equal(tr.obs, plain.obs) and tr.ep_actions == plain.ep_actions
    assert tr.rows["episodes"] == plain.rows["episodes"] and len(tr.rows["episodes"]) > 3
    tr.close()
    plain.close()


@pytest.mark.parametrize("stop_after", [230, 300])
def test_resumed_run_writes_the_evals_of_an_uninterrupted_one(tmp_path, stop_after) -> None:
    """Killed between evaluations (230) or at one (300, also a checkpoint step), then
    resumed: the same evals.csv byte for byte, and the same other tables. Extending a
    finished run (350 -> 400 steps) gives the evaluations of one run straight through."""
    cfg = _small(seeds=[1, 2], checkpoint_every=100, steps=350, agent="averaged-dqn")
    full = run_training(cfg, tmp_path / "full", resume=False, progress=False)
    assert sorted(set(full["evals"]["step"])) == [100, 200, 300]
    out = tmp_path / "killed"
    assert run_training(cfg, out, stop_after=stop_after, progress=False) == {}
    assert not (out / "evals.csv").exists()
    resumed = run_training(cfg, out, progress=False)
    assert (out / "evals.csv").read_bytes() == (tmp_path / "full" / "evals.csv").read_bytes()
    for name in TRAINING:
        pd.testing.assert_frame_equal(
            _deterministic(full)[name], _deterministic(resumed)[name], check_exact=True
        )
    if stop_after == 300:  # once: extend the finished run to 400 steps
        longer = dataclasses.replace(cfg, steps=400, bias_every=100)
        straight = run_training(longer, tmp_path / "straight", progress=False)
        extended = run_training(longer, out, progress=False)
        assert sorted(set(extended["evals"]["step"])) == [100, 200, 300, 400]
        pd.testing.assert_frame_equal(extended["evals"], straight["evals"], check_exact=True)


def test_tensorboard_logs_each_evaluation_and_a_resumed_run_shows_it_once(tmp_path) -> None:
    """With --tensorboard, seed<k>/eval_return is each seed's mean evaluation return at each
    evaluation step (evals.csv); a run killed at 330 and resumed from its checkpoint at 200
    (an evaluation step) shows exactly what the straight run logs."""
    cfg = _small(seeds=[1, 2], steps=350, checkpoint_every=100, tensorboard=True)
    tables = run_training(cfg, tmp_path / "straight", progress=False)
    straight = _shown(tmp_path / "straight" / "tensorboard")
    evals = tables["evals"]
    expected = []
    for seed in (1, 2):
        for step in (100, 200, 300):
            rows = evals[(evals["seed"] == seed) & (evals["step"] == step)]["return"]
            assert len(rows) == 2
            mean = float(np.float32((rows.iloc[0] + rows.iloc[1]) / 2))
            expected.append((f"seed{seed}/eval_return", mean, step))
    assert sorted(e for e in straight if e[0].endswith("/eval_return")) == sorted(expected)

    out = tmp_path / "killed"
    train_killed_at_330_then_resumed(cfg, out)
    assert _shown(out / "tensorboard") == straight


def test_off_by_default_and_left_out_of_the_options_at_their_defaults(tmp_path) -> None:
    """Left out of to_dict / result_key at their defaults (the episodes also while there are
    no evaluations), so earlier run folders, checkpoints and sweep run ids stay valid; a
    checkpoint made without evaluations cannot be continued with them (its earlier ones are
    missing); a run that asked for evaluations needs its evals.csv to be read back."""

    def options(**kw) -> dict:
        return json.loads(_train_small(**kw).resolve().result_key())

    plain = options()
    assert "eval_every" not in plain and "eval_every_episodes" not in plain
    assert options(eval_every=0, eval_every_episodes=5) == plain
    assert options(eval_every=50) == {**plain, "eval_every": 50}
    assert options(eval_every=50, eval_every_episodes=5) == {
        **plain,
        "eval_every": 50,
        "eval_every_episodes": 5,
    }
    assert TrainConfig.from_key(json.dumps(plain)).eval_every_episodes == 10
    out = tmp_path / "run"
    cfg = _train_small(steps=200, checkpoint_every=100)
    assert run_training(cfg, out, stop_after=100, progress=False) == {}
    with pytest.raises(UsageError, match=r"--resume: .*--eval-every default \(now 100\)"):
        run_training(dataclasses.replace(cfg, eval_every=100), out, progress=False)
    # A run with evaluations, then without in the same folder: no stale evals.csv.
    again = tmp_path / "again"
    run_training(_small(steps=150), again, progress=False)
    assert (again / "evals.csv").exists()
    run_training(_train_small(steps=150), again, resume=False, progress=False)
    assert not (again / "evals.csv").exists() and "evals" not in read_tables(again)
    config = json.loads((again / "config.json").read_text())
    (again / "config.json").write_text(json.dumps({**config, "eval_every": 100}))
    with pytest.raises(UsageError, match="out_dir: .*evals.csv is unreadable"):
        read_tables(again)


@pytest.mark.parametrize(
    "given,option,message",
    [
        (["--eval-every", "-1"], "--eval-every", "must be >= 0"),
        (["--eval-every", "100", "--eval-every-episodes", "0"], "--eval-every-episodes", ">= 1"),
        # Alone it would be ignored: no evaluation runs without --eval-every.
        (["--eval-every-episodes", "5"], "--eval-every-episodes", "no evaluations to size"),
    ],
)
def test_bad_values_are_one_line_before_out_is_made(tmp_path, capsys, given, option, message):
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--steps", "200", "--out", str(out), *given]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"maxminq train: error: {option}: ") and err.count("\n") == 1
    assert message in err and not out.exists()


def test_cli_writes_evals_and_draws_the_eval_panel(tmp_path, capsys) -> None:
    """``maxminq train --eval-every`` writes evals.csv and adds the eval panel to its
    figure; ``maxminq plot --panels eval`` draws it, and refuses, in one line, a run
    trained without --eval-every."""
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "250"]
    argv += ["--learning-starts", "100", "--eval-episodes", "1", "--no-progress"]
    out = tmp_path / "run"
    assert (
        main([*argv, "--eval-every", "100", "--eval-every-episodes", "2", "--out", str(out)]) == 0
    )
    evals = _csv(out / "evals.csv")
    assert list(evals.columns) == COLUMNS and evals["step"].tolist() == [100, 100, 200, 200]
    assert (out / "curves.svg").read_text().count('<g id="axes_') == 4
    plain = tmp_path / "plain"
    assert main([*argv, "--out", str(plain), "--no-plot"]) == 0
    capsys.readouterr()
    figure = tmp_path / "eval.png"
    assert main(["plot", str(out), "--panels", "return,eval", "--out", str(figure)]) == 0
    assert figure.exists()
    assert main(["plot", str(plain), "--panels", "eval"]) == 2
    err = capsys.readouterr().err
    assert "--panels: eval" in err and "no evals.csv" in err and err.count("\n") == 1
    # evaluations rarer than the run is long: said before training, and only the header
    late = tmp_path / "late"
    argv_late = [*argv, "--eval-every", "300", "--out", str(late), "--no-plot"]
    assert main(argv_late) == 0
    assert "warning: --eval-every 300 > --steps 250: no evaluation runs" in capsys.readouterr().err
    assert _csv(late / "evals.csv").empty
    assert main([*argv, "--eval-every", "250", "--out", str(tmp_path / "last"), "--no-plot"]) == 0
    assert "--eval-every" not in capsys.readouterr().err  # one evaluation, at the last step


def test_eval_panel_draws_each_seeds_mean_and_their_mean() -> None:
    """The eval panel of one run of two seeds: a thin line per seed through its mean return
    per evaluation, and a line through their mean (band: one standard error), numbers by
    hand."""
    from maxminq.analysis.figures import training_runs_figure

    episodes = pd.DataFrame(
        {"seed": [0, 1], "episode": [1, 1], "step": [50, 60], "return": [1.0, 2.0]}
        | {"length": [1, 2], "return_avg100": [1.0, 2.0]}
    )
    evals = pd.DataFrame(
        [
            [0, 100, 1, 10.0, 10],
            [0, 100, 2, 20.0, 20],  # seed 0 at 100: 15
            [1, 100, 1, 30.0, 30],
            [1, 100, 2, 40.0, 40],  # seed 1 at 100: 35
            [0, 200, 1, 50.0, 50],
            [0, 200, 2, 50.0, 50],  # seed 0 at 200: 50
            [1, 200, 1, 70.0, 70],
            [1, 200, 2, 90.0, 90],  # seed 1 at 200: 80
        ],
        columns=COLUMNS[:5],
    )
    fig = training_runs_figure(
        [("run", "dqn", {"episodes": episodes, "evals": evals})], "t", ["eval"]
    )
    (ax,) = fig.axes
    lines = [(list(line.get_xdata()), list(line.get_ydata())) for line in ax.get_lines()]
    assert lines == [
        ([100, 200], [15.0, 50.0]),
        ([100, 200], [35.0, 80.0]),
        ([100.0, 200.0], [25.0, 65.0]),  # the mean of the two seeds
    ]
    (band,) = ax.collections  # mean +- sd / sqrt(2): sd of (15, 35) and of (50, 80)
    low = band.get_paths()[0].vertices[:, 1]
    assert min(low) == pytest.approx(25.0 - np.sqrt(200) / np.sqrt(2))
    with pytest.raises(ValueError, match="eval needs each run's evals table"):
        training_runs_figure([("run", "dqn", {"episodes": episodes})], "t", ["eval"])


def test_sweep_setting_stores_the_evals_table(tmp_path: pathlib.Path) -> None:
    """``eval_every`` in a sweep: stored in the run's settings only when given (run ids of
    settings without it unchanged), and the run stores evals.csv beside its other tables;
    the report does not read it."""
    from maxminq.analysis.report import load_store
    from maxminq.experiments.registry import validate_deep
    from maxminq.experiments.runner import run_sweep
    from maxminq.experiments.store import ResultsStore

    plain = validate_deep({"env_id": "CartPole-v1", "agent": "dqn"})
    given = validate_deep({"env_id": "CartPole-v1", "agent": "dqn", "eval_every": 100})
    assert "eval_every" not in plain and given == {**plain, "eval_every": 100}
    (tmp_path / "evals.yaml").write_text(SWEEP)
    out = tmp_path / "out"
    assert run_sweep(tmp_path / "evals.yaml", out, workers=1, progress=False).ok
    with ResultsStore(out) as store:
        (rec,) = store.records()
        assert rec.settings["eval_every"] == 100 and rec.settings["eval_every_episodes"] == 2
        stored = store.read_tables(rec.run_id)
    assert stored["evals"][["seed", "step"]].values.tolist() == [
        [0, 100],
        [0, 100],
        [0, 200],
        [0, 200],
        [1, 100],
        [1, 100],
        [1, 200],
        [1, 200],
    ]
    assert "evals" not in load_store(out)


def test_a_diverged_seed_is_not_evaluated_after_it_diverged() -> None:
    """Seed 4 marked diverged: the next evaluation plays only seed 6's 2 episodes (the
    eval panel's mean is then over the live seeds, as its caption says)."""
    tr = Trainer(_small(seeds=[4, 6]).resolve())
    tr._diverge(0)
    tr.evaluate_during_training()
    assert [(row[0], row[2]) for row in tr.rows["evals"]] == [(6, 1), (6, 2)]
    tr.close()
