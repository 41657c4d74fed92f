"""Reading a run's measured estimation bias: ``pooled_bias`` against the raw probe values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from maxminq.deep.train import pooled_bias


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
    from test_deep_train import _small, _tensorboard_events

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
