"""Finished 'maxminq train' run folders written by hand, for tests that need a run's tables
with numbers chosen in the test (so the expected scores and biases can be worked out there)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def finished_run(
    folder: Path,
    metrics: list[tuple[int, int, float, int]],
    *,
    steps: int,
    train: dict[int, tuple[int, float]],
    tests: dict[int, float],
    diverged: dict[int, int] | None = None,
    agent: str = "dqn",
    env_id: str = "CartPole-v1",
    extra: dict | None = None,
) -> Path:
    """Write the folder: config.json (``agent`` N = 1, lr 1e-3, ``steps``, the seeds of
    ``train``, updated by ``extra``); one training episode per seed, ``train[seed]`` = (its
    last step, its return), of length 10; one test episode per seed of ``tests`` with that
    return; the metrics rows (seed, step, bias_mean, bias_n); runs.csv marking the seeds of
    ``diverged`` (seed -> step) so, the others done. The tables' columns, written out here,
    are checked to be those 'maxminq train' writes."""
    from maxminq.deep.run_folder import TABLE_COLUMNS

    diverged = diverged or {}
    folder.mkdir(parents=True)
    seeds = sorted(train)
    cfg = {"env_id": env_id, "agent": agent, "n": 1, "lr": 1e-3, "steps": steps, "seeds": seeds}
    (folder / "config.json").write_text(json.dumps(cfg | (extra or {})))
    tables = {
        "episodes": pd.DataFrame(
            [[s, 1, train[s][0], train[s][1], 10, train[s][1], True, False] for s in seeds],
            columns=["seed", "episode", "step", "return", "length", "return_avg100"]
            + ["terminated", "truncated"],
        ),
        "tests": pd.DataFrame(
            [[s, 1, float(r), 10, True, False] for s, r in sorted(tests.items())],
            columns=["seed", "episode", "return", "length", "terminated", "truncated"],
        ),
        "metrics": pd.DataFrame(
            [[s, step, 0.1, 1.0, m, 0.0, abs(m), n, 0.01, 100.0] for s, step, m, n in metrics],
            columns=["seed", "step", "loss", "q_mean", "bias_mean", "bias_std", "bias_abs"]
            + ["bias_n", "epsilon", "steps_per_s"],
        ),
        "runs": pd.DataFrame(
            {
                "seed": seeds,
                "status": ["diverged" if s in diverged else "done" for s in seeds],
                "diverged_step": [diverged.get(s, -1) for s in seeds],
                "diverged_cause": "",
            },
            columns=["seed", "status", "diverged_step", "diverged_cause"],
        ),
    }
    for name, table in tables.items():
        assert table.columns.tolist() == list(TABLE_COLUMNS[name]), name
        table.to_csv(folder / f"{name}.csv", index=False)
    return folder


def generalized_run(
    folder: Path,
    operator: str,
    op_kwargs: dict | None = None,
    returns: tuple[float, float] = (10.0, 12.0),
) -> Path:
    """A finished one-seed generalized-dqn run folder (N = 3, CartPole, 200 steps, G
    ``operator`` with ``op_kwargs``) as 'maxminq train' writes it, with made-up numbers: the
    training ``returns`` at steps 100 and 200, one metrics row (bias 1.0), a test return of 1.0."""
    folder.mkdir()
    cfg = {"agent": "generalized-dqn", "n": 3, "lr": 1e-3, "steps": 200, "operator": operator}
    cfg |= {"env_id": "CartPole-v1", "seeds": [0], "network": "mlp", "op_kwargs": op_kwargs}
    (folder / "config.json").write_text(json.dumps(cfg))
    ep = pd.DataFrame({"seed": 0, "step": [100, 200], "return": list(returns)})
    ep["return_avg100"] = [returns[0], (returns[0] + returns[1]) / 2]
    ep.to_csv(folder / "episodes.csv", index=False)
    m = pd.DataFrame({"seed": 0, "step": [200], "bias_mean": [1.0], "q_mean": [0.5]})
    m["bias_abs"], m["bias_std"], m["loss"] = 1.0, 0.0, 0.1
    m.to_csv(folder / "metrics.csv", index=False)
    pd.DataFrame({"seed": [0], "return": [1.0]}).to_csv(folder / "tests.csv", index=False)
    pd.DataFrame({"seed": [0], "status": ["done"]}).to_csv(folder / "runs.csv", index=False)
    return folder
