"""Bias probes of deep training: ``save_probes`` / ``maxminq train --save-probes`` writes
every scored probe in probes.csv, and ``pooled_bias`` reads a run's measured estimation
bias against the raw probe values.

Expected rows are derived from the episodes table and the probing rule (every
``bias_probe_every`` steps from ``learning_starts`` on; a probe counts if its episode
terminated or the time limit cut it k >= 1 steps later with gamma^k <= 0.05), and
expected returns by hand from an environment whose rewards are known.
"""

from __future__ import annotations

import json
import math
import pathlib

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from deep_runs import _small as _train_small
from line_env import LineEnv

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.train import pooled_bias, read_tables, run_training
from maxminq.errors import UsageError


def _interval_rows(seed: int, chunks: list[tuple[int, list[float]]]) -> list[list]:
    """Metrics rows as the trainer writes them: per interval (end step, probe biases) the
    mean, population sd, mean absolute value and count; NaN statistics without probes."""
    rows = []
    for step, values in chunks:
        b = np.asarray(values, dtype=float)
        if b.size:
            rows.append([seed, step, b.mean(), b.std(), np.abs(b).mean(), b.size])
        else:
            rows.append([seed, step, math.nan, math.nan, math.nan, 0])
    return rows


COLUMNS = [
    "seed",
    "episode",
    "step",
    "episode_step",
    "end_step",
    "terminated",
    "estimate",
    "return",
    "bias",
]


def _small(**kw) -> TrainConfig:
    """deep_runs.py's small CartPole run, with two seeds and every third probe kept."""
    base = dict(steps=350, seeds=[0, 1], eval_episodes=1, bias_probe_every=3, save_probes=True)
    return _train_small(**{**base, **kw})


def _csv(path: pathlib.Path) -> pd.DataFrame:
    return pd.read_csv(path)


def _expected_probes(episodes: pd.DataFrame, cfg: TrainConfig) -> pd.DataFrame:
    """(seed, episode, step, episode_step, end_step, terminated) of every probe that should
    be scored, from the episodes table alone."""
    rows = []
    for ep in episodes.itertuples(index=False):
        start = ep.step - ep.length  # the episode took the run's steps start .. step - 1
        for t in range(start, ep.step):
            if t < cfg.learning_starts or t % cfg.bias_probe_every:
                continue
            if ep.terminated or cfg.gamma ** (ep.step - t) <= 0.05:
                rows.append([ep.seed, ep.episode, t, t - start, ep.step, ep.terminated])
    expected = pd.DataFrame(rows, columns=COLUMNS[:6])
    return expected.sort_values(["seed", "step"]).reset_index(drop=True)


def _line_env() -> str:
    env_id = "mmq-test/ProbeLine-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=LineEnv, max_episode_steps=20)
    return env_id


SWEEP = """
name: cp_probes
kind: deep
fixed: {env_id: CartPole-v1, agent: dqn, n: 1, steps: 200, seeds: [0, 1], learning_starts: 100,
        eval_episodes: 1, bias_probe_every: 4}
variants:
  - {save_probes: true}
scales: {quick: {}, paper: {}}
"""


def test_pooled_bias_equals_the_statistics_of_all_probes_after_a_step() -> None:
    """Intervals of 1, 3 and 12 probes (and one of none): the pooled numbers are those of
    the probes taken together (np.mean / np.std / |.| on the concatenation), not the mean of
    the interval means; ``after`` leaves out the intervals ending at or before it."""
    rng = np.random.default_rng(7)
    a, b = list(rng.normal(-1, 2, 3)), list(rng.normal(2, 1, 12))
    chunks = {
        0: [(100, []), (200, [5.0]), (300, a), (400, b)],
        1: [(100, []), (200, []), (300, [-4.0, 6.0]), (400, [1.0])],
        2: [(100, []), (200, [3.0]), (300, []), (400, [])],
    }  # fmt: skip
    rows = [r for seed, c in chunks.items() for r in _interval_rows(seed, c)]
    cols = ["seed", "step", "bias_mean", "bias_std", "bias_abs", "bias_n"]
    metrics = pd.DataFrame(rows, columns=cols)
    for after in (0, 100, 200, 300):
        got = pooled_bias(metrics, after=after).set_index("seed")
        assert list(got.index) == [0, 1, 2]
        for seed, c in chunks.items():
            b = np.array([v for step, values in c if step > after for v in values])
            row = got.loc[seed]
            assert row["bias_n"] == b.size
            if b.size == 0:
                assert np.isnan(row[["bias_mean", "bias_std", "bias_abs"]].to_numpy(float)).all()
                continue
            assert row["bias_mean"] == pytest.approx(b.mean(), abs=1e-12)
            assert row["bias_std"] == pytest.approx(b.std(), abs=1e-9)
            assert row["bias_abs"] == pytest.approx(np.abs(b).mean(), abs=1e-12)
    # By hand, seed 1 after 0: probes -4, 6, 1 -> mean 1, sd sqrt((25 + 25 + 0) / 3).
    seed1 = pooled_bias(metrics).set_index("seed").loc[1]
    assert seed1["bias_mean"] == pytest.approx(1.0)
    assert seed1["bias_std"] == pytest.approx(math.sqrt(50 / 3))
    assert seed1["bias_abs"] == pytest.approx(11 / 3)  # (4 + 6 + 1) / 3, not (5 + 1) / 2


def test_tensorboard_logs_every_metrics_column_bias_n_included(tmp_path) -> None:
    """README: the metrics go to TensorBoard as seed<k>/<column>. The probe count bias_n
    (an int) was left out; each finite value of each column is logged at its row's step."""
    from deep_runs import _small, _tensorboard_events

    from maxminq.deep.run_folder import TABLE_COLUMNS
    from maxminq.deep.train import run_training

    out = tmp_path / "run"
    tables = run_training(_small(steps=300, tensorboard=True), out, progress=False)
    logged = {(tag, step): value for f in _tensorboard_events(out / "tensorboard")
              for tag, value, step in f}  # fmt: skip
    m = tables["metrics"]
    assert (m["bias_n"] > 0).any()
    for column in TABLE_COLUMNS["metrics"][2:]:
        if column == "steps_per_s":  # wall clock: the reader leaves it out
            continue
        for _, row in m.iterrows():
            key = (f"seed{int(row['seed'])}/{column}", int(row["step"]))
            if np.isfinite(row[column]):
                assert logged[key] == pytest.approx(row[column], rel=1e-6)
            else:
                assert key not in logged


@pytest.mark.usefixtures("torch_one_thread")
def test_probes_are_the_scored_ones_and_aggregate_to_the_metrics(tmp_path: pathlib.Path) -> None:
    """Rows: exactly the probes the rule scores (cut episodes included: a 30-step cap at
    gamma 0.9 keeps a probe only 29+ steps before the cut). Per seed and metrics interval
    (the one its episode ended in; the last one is partial), the rows' bias mean, std
    (ddof 0), mean |bias| and count are the metrics row's."""
    cfg = _small(max_episode_steps=30, gamma=0.9)
    tables = run_training(cfg, tmp_path, progress=False)
    probes = _csv(tmp_path / "probes.csv")
    assert list(probes.columns) == COLUMNS
    pd.testing.assert_frame_equal(probes, tables["probes"], check_exact=True)
    assert tables["episodes"]["truncated"].any() and tables["episodes"]["terminated"].any()
    expected = _expected_probes(tables["episodes"], cfg)
    assert (~expected["terminated"]).any()  # some cut-episode probes count
    pd.testing.assert_frame_equal(probes[COLUMNS[:6]], expected, check_exact=True)
    assert (probes["bias"] == probes["estimate"] - probes["return"]).all()

    metrics = _csv(tmp_path / "metrics.csv")
    m = cfg.bias_every
    assert metrics.groupby("seed")["step"].apply(list).tolist() == [[100, 200, 300, 350]] * 2
    interval = probes["end_step"].map(lambda e: min(math.ceil(e / m) * m, 350))
    for (seed, step), row in metrics.set_index(["seed", "step"]).iterrows():
        b = probes.loc[(probes["seed"] == seed) & (interval == step), "bias"].to_numpy()
        assert row["bias_n"] == len(b)
        if len(b) == 0:
            assert math.isnan(row["bias_mean"]) and step == 100  # no probe before learning
            continue
        assert row["bias_mean"] == np.mean(b)
        assert row["bias_std"] == np.std(b)
        assert row["bias_abs"] == np.mean(np.abs(b))
    assert metrics["bias_n"].sum() == len(probes)


@pytest.mark.usefixtures("torch_one_thread")
def test_return_is_the_discounted_return_of_the_episode(tmp_path: pathlib.Path) -> None:
    """LineEnv pays 1 on the step that reaches its last cell (terminated) and 0 otherwise,
    so from a probe at run step t in an episode ending at step e the return is
    gamma^(e - 1 - t), or 0 in an episode the 20-step limit cut, where at gamma 0.5 only
    probes 5+ steps before the cut count (0.5^5 <= 0.05 < 0.5^4)."""
    cfg = _small(env_id=_line_env(), gamma=0.5, steps=400, bias_probe_every=2, seeds=[3])
    tables = run_training(cfg, tmp_path, progress=False)
    probes = tables["probes"]
    cut = probes[~probes["terminated"]]
    done = probes[probes["terminated"]]
    assert len(cut) > 5 and len(done) > 5
    assert (cut["return"] == 0.0).all() and (cut["end_step"] - cut["step"] >= 5).all()
    assert (done["return"] == 0.5 ** (done["end_step"] - 1 - done["step"])).all()
    assert (probes["bias"] == probes["estimate"] - probes["return"]).all()
    # No probe 1-4 steps before a cut, and every scored one of each episode is there.
    expected = _expected_probes(tables["episodes"], cfg)
    pd.testing.assert_frame_equal(probes[COLUMNS[:6]], expected, check_exact=True)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("stop_after", [230, 350])
def test_resumed_run_writes_the_probes_of_an_uninterrupted_one(tmp_path, stop_after) -> None:
    """Killed mid-episode (230: probes of the running episode pending) or at the last step,
    then resumed: the same probes.csv, byte for byte. Extending a finished run to more steps
    gives the probes of one run straight through."""
    cfg = _small(checkpoint_every=100)
    run_training(cfg, tmp_path / "full", resume=False, progress=False)
    out = tmp_path / "killed"
    assert run_training(cfg, out, stop_after=stop_after, progress=False) == {}
    assert not (out / "probes.csv").exists()
    resumed = run_training(cfg, out, progress=False)
    full_bytes = (tmp_path / "full" / "probes.csv").read_bytes()
    assert (out / "probes.csv").read_bytes() == full_bytes
    assert len(resumed["probes"]) > 20
    if stop_after == 350:  # once: extend the finished run from 350 to 400 steps
        longer = _small(checkpoint_every=100, steps=400, bias_every=100)
        straight = run_training(longer, tmp_path / "straight", progress=False)
        extended = run_training(longer, out, progress=False)
        assert len(straight["probes"]) > len(resumed["probes"])
        pd.testing.assert_frame_equal(extended["probes"], straight["probes"], check_exact=True)


@pytest.mark.usefixtures("torch_one_thread")
def test_off_by_default_no_table_and_options_unchanged(tmp_path: pathlib.Path) -> None:
    """Default: no probes.csv, no probes table, and save_probes left out of the saved
    options (so earlier runs keep their options, run ids and checkpoints); a checkpoint
    made without probes cannot be continued with them (its earlier probes are gone)."""
    cfg = _small(save_probes=False, checkpoint_every=100)
    assert "save_probes" not in cfg.resolve().to_dict()
    assert "save_probes" not in json.loads(cfg.resolve().result_key())
    assert json.loads(_small().resolve().result_key())["save_probes"] is True
    out = tmp_path / "run"
    tables = run_training(cfg, out, progress=False)
    assert set(tables) == {"episodes", "tests", "metrics", "runs"}
    assert not (out / "probes.csv").exists()
    assert "save_probes" not in json.loads((out / "config.json").read_text())
    assert set(read_tables(out)) == set(tables)
    with pytest.raises(UsageError, match="--resume: .*--save-probes default \\(now True\\)"):
        run_training(_small(checkpoint_every=100), out, progress=False)
    # A run without probes in a folder that held one with them leaves no stale table.
    again = tmp_path / "again"
    run_training(_small(steps=150), again, progress=False)
    assert (again / "probes.csv").exists()
    run_training(_small(steps=150, save_probes=False), again, resume=False, progress=False)
    assert not (again / "probes.csv").exists() and "probes" not in read_tables(again)
    # A run that asked for probes needs its probes.csv to be read back.
    config = json.loads((again / "config.json").read_text())
    (again / "config.json").write_text(json.dumps({**config, "save_probes": True}))
    with pytest.raises(UsageError, match="out_dir: .*probes.csv is unreadable"):
        read_tables(again)


@pytest.mark.usefixtures("torch_one_thread")
def test_cli_save_probes_writes_probes_csv_and_reads_it_back(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    argv = [
        "train",
        "--env",
        "CartPole-v1",
        "--agent",
        "dqn",
        "--steps",
        "250",
        "--learning-starts",
        "100",
        "--bias-probe-every",
        "4",
        "--eval-episodes",
        "1",
        "--out",
        str(out),
        "--no-progress",
        "--no-plot",
    ]
    assert main([*argv, "--save-probes"]) == 0
    probes = _csv(out / "probes.csv")
    assert list(probes.columns) == COLUMNS and len(probes) > 5
    assert (probes["step"] % 4 == 0).all() and probes["step"].min() >= 100
    assert json.loads((out / "config.json").read_text())["save_probes"] is True
    assert _csv(out / "metrics.csv")["bias_n"].sum() == len(probes)
    before = (out / "probes.csv").read_bytes()
    assert main([*argv, "--save-probes", "--resume"]) == 0  # read back, not trained again
    assert "finished run read back" in capsys.readouterr().out
    assert (out / "probes.csv").read_bytes() == before

    # Without the flag the same command trains anew (--overwrite): the old table is gone.
    assert main([*argv, "--overwrite"]) == 0
    assert not (out / "probes.csv").exists()


@pytest.mark.usefixtures("torch_one_thread")
def test_sweep_setting_stores_the_probes_table(tmp_path: pathlib.Path) -> None:
    """``save_probes: true`` in a sweep: the run stores probes.csv beside its other tables
    (in its manifest), ``load_results`` returns it, and it adds up to the metrics."""
    from maxminq.experiments.runner import run_sweep
    from maxminq.experiments.store import ResultsStore, load_results

    (tmp_path / "probes.yaml").write_text(SWEEP)
    out = tmp_path / "out"
    assert run_sweep(tmp_path / "probes.yaml", out, workers=1, progress=False).ok
    with ResultsStore(out) as store:
        (rec,) = store.records()
        assert rec.settings["save_probes"] is True
        stored = store.read_tables(rec.run_id)
    results = load_results(out)
    probes = results["probes"]
    assert len(probes) > 10 and list(probes.columns[-len(COLUMNS) :]) == COLUMNS
    pd.testing.assert_frame_equal(probes[COLUMNS], stored["probes"], check_exact=True)
    assert (probes["step"] % 4 == 0).all()
    assert results["metrics"]["bias_n"].sum() == len(probes)
    # The report reads every table but the probes (it has no use for them).
    from maxminq.analysis.report import load_store

    report_tables = load_store(out)
    assert "probes" not in report_tables
    assert set(report_tables) == set(results) - {"probes"}
    pd.testing.assert_frame_equal(report_tables["metrics"], results["metrics"])


@pytest.mark.usefixtures("torch_one_thread")
def test_cli_figure_adds_the_bias_distribution_panel_when_probes_are_kept(tmp_path) -> None:
    """``maxminq train`` draws return, bias and Q; with ``--save-probes`` also the
    per-probe bias distribution (``bias_dist``): one more panel in curves.svg."""
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "250"]
    argv += ["--learning-starts", "100", "--eval-episodes", "1", "--no-progress"]

    def panels(*extra: str) -> int:
        out = tmp_path / "-".join(["run", *extra])
        assert main([*argv, *extra, "--out", str(out)]) == 0
        return (out / "curves.svg").read_text().count('<g id="axes_')

    assert panels() == 3
    assert panels("--save-probes") == 4
