"""Reproducibility and RL bookkeeping of deep training, against independent computations:
bias probes (estimate of the target side, discounted return of the episode), untouched
global random state, whole-file checks of the tables, and what a killed run leaves."""

from __future__ import annotations

import os
import pathlib
import pickle
import random

import numpy as np
import pandas as pd
import pytest
import torch
from deep_runs import _small as _train_small

from maxminq.deep.config import TrainConfig
from maxminq.deep.train import Trainer, read_tables, run_training
from maxminq.errors import UsageError


def _small(**kw) -> TrainConfig:
    """deep_runs.py's small CartPole run, with three nets and two seeds."""
    base = dict(n=3, steps=300, seeds=[0, 4], bias_every=300, learning_starts=30, target_update=25)
    return _train_small(**{**base, **kw})


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("run")
    run_training(_small(steps=60, seeds=[0], n=2, eval_episodes=1), out, progress=False)
    return out


@pytest.mark.parametrize(
    "agent,n,n_online,reduce",
    [
        ("maxmin-dqn", 3, 3, min),
        ("averaged-dqn", 3, 1, np.mean),
        ("ensemble-dqn", 3, 3, np.mean),
        ("ddqn", 1, 1, min),
        ("dqn", 1, 1, min),
    ],
)
def test_bias_is_the_target_sides_estimate_minus_the_discounted_return_that_followed(
    agent: str, n: int, n_online: int, reduce
) -> None:
    """Replayed step by step: every probed (s, a) is valued from the separate target modules
    (min over Maxmin's N, mean over Averaged's K snapshots and over Ensemble's N, DQN's and
    Double DQN's target net; not the online ones), and at the episode's end the bias is that
    value minus sum_k gamma^k r_{t+k} summed forwards here; a cut episode's probe is kept only if
    gamma^(steps to the cut) <= 0.05 (gamma 0.8, cap 15: 14 steps or more)."""
    cfg = _small(agent=agent, n=n, gamma=0.8, max_episode_steps=15, bias_probe_every=3)
    cfg = cfg.resolve()
    tr = Trainer(cfg)
    gamma = cfg.gamma
    expected: list[list[float]] = [[], []]
    probes: list[list[tuple[int, float]]] = [[], []]  # (step in episode, estimate)
    rewards: list[list[float]] = [[], []]
    kept_cut = dropped = online_differs = 0
    for t in range(cfg.steps - 1):  # the last step would log (and clear) the interval
        obs = torch.from_numpy(tr.obs.copy())
        targets = tr.learner.target.to_modules()
        online = tr.learner.online.to_modules()
        ended_before = len(tr.rows["episodes"])
        tr.train_step()
        pos = (tr.replay.pos - 1) % tr.replay.capacity
        ends = {row[0]: row for row in tr.rows["episodes"][ended_before:]}
        for s, seed in enumerate(cfg.seeds):
            a = int(tr.replay.action[s, pos])
            if t >= cfg.learning_starts and t % cfg.bias_probe_every == 0:
                with torch.no_grad():
                    qs = [targets[s * n + i](obs[s : s + 1])[0, a] for i in range(n)]
                    qo = [online[s * n_online + i](obs[s : s + 1])[0, a] for i in range(n_online)]
                est = float(reduce([float(q) for q in qs]))
                online_differs += abs(float(reduce([float(q) for q in qo])) - est) > 1e-4
                probes[s].append((len(rewards[s]), est))
            rewards[s].append(float(tr.replay.reward[s, pos]))
            if seed in ends:
                terminated = bool(ends[seed][5])
                length = len(rewards[s])
                assert ends[seed][4] == length
                for k, est in probes[s]:
                    g = sum(gamma**j * r for j, r in enumerate(rewards[s][k:]))
                    if terminated or gamma ** (length - k) <= 0.05:
                        expected[s].append(est - g)
                        kept_cut += not terminated
                    else:
                        dropped += 1
                probes[s], rewards[s] = [], []
    tr.close()
    for s in range(2):
        assert len(expected[s]) > 10
        np.testing.assert_allclose(tr.acc_bias[s], expected[s], rtol=1e-5, atol=1e-5)
    assert kept_cut and dropped and online_differs  # each case was met


def test_training_neither_reads_nor_moves_the_global_random_state(tmp_path) -> None:
    """Other global seeds give the same tables, and NumPy's, torch's and Python's global
    generators are where they were (every stream is the seed's own)."""
    cfg = _small(steps=150, seeds=[1], n=2, eval_episodes=2)
    tables = []
    for k, seed in enumerate((1, 2)):
        np.random.seed(seed)  # noqa: NPY002 - the global state is what is tested
        torch.manual_seed(seed)
        random.seed(seed)
        legacy = np.random.get_state  # noqa: NPY002
        before = (pickle.dumps(legacy()), torch.get_rng_state(), random.getstate())
        tables.append(run_training(cfg, tmp_path / str(k), progress=False))
        assert pickle.dumps(legacy()) == before[0]
        assert torch.equal(torch.get_rng_state(), before[1]) and random.getstate() == before[2]
    for name in ("episodes", "tests"):
        pd.testing.assert_frame_equal(tables[0][name], tables[1][name], check_exact=True)


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda b: b[:-7], "cut short"),
        (lambda b: b"", "is empty"),
        (lambda b: b'seed,"episode\n1,2\n', "is not a table"),
    ],
)
def test_read_tables_names_a_damaged_file(finished, tmp_path, damage, message) -> None:
    run = tmp_path / "copy"
    run.mkdir()
    for f in finished.glob("*.csv"):
        (run / f.name).write_bytes(f.read_bytes())
    assert len(read_tables(run)["episodes"]) == len(pd.read_csv(finished / "episodes.csv"))
    path = run / "metrics.csv"
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(UsageError) as err:
        read_tables(run, "--out")
    text = str(err.value)
    assert text.startswith(f"--out: {path} ") and message in text and "\n" not in text
    path.unlink()
    # from Python the message names the argument one passed
    with pytest.raises(UsageError, match=r"^out_dir: .*metrics\.csv is unreadable"):
        read_tables(run)


def test_a_resumed_run_removes_what_killed_writes_left(tmp_path) -> None:
    """A kill during an atomic write leaves its temporary file (a checkpoint's is as large
    as the replay buffers); the run that continues deletes them, and nothing else."""
    cfg = _small(steps=80, seeds=[0], n=2, eval_episodes=1, checkpoint_every=40)
    out = tmp_path / "run"
    assert run_training(cfg, out, progress=False, stop_after=40) == {}
    stale = [out / "checkpoint" / ".state.pt.k1ll3d_.tmp", out / ".metrics.csv.abc123.tmp"]
    keep = [out / "checkpoint" / "notes.txt", out / ".hidden.tmp"]
    for p in stale + keep:
        p.write_bytes(b"partial")
    tables = run_training(cfg, out, progress=False)
    assert not any(p.exists() for p in stale) and all(p.exists() for p in keep)
    assert tables["episodes"]["step"].max() <= 80 and len(tables["tests"]) == 1


def test_checkpoint_model_and_tables_are_synced_to_disk_before_their_rename(
    tmp_path, monkeypatch
) -> None:
    """The file renamed into place as state.pt, model.pt or a table was fsync'ed first (the
    inode survives the rename): a machine crash cannot leave a complete-looking file cut
    short, nor runs.csv (a finished run's mark) beside tables that never reached the disk."""
    synced: set[int] = set()
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.add(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    out = tmp_path / "run"
    run_training(_small(steps=40, seeds=[0], n=2, eval_episodes=1, checkpoint_every=40), out)
    tables = [out / f"{name}.csv" for name in ("episodes", "tests", "metrics", "runs")]
    for path in (out / "checkpoint" / "state.pt", out / "model.pt", *tables):
        assert path.stat().st_ino in synced
