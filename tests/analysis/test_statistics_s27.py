"""The report's numbers recomputed independently (plain NumPy, not maxminq's statistics):
the toy MDP summary's IQM confidence intervals, drawn with ``--reps`` replicates as the
other tables' (docs/report.md, Statistics)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from analysis_results import toy_results, write_store

from maxminq.cli import main


def _percentile_iqm_ci(x: np.ndarray, reps: int, stream: list[int]) -> tuple[float, float]:
    """The documented interval by hand: ``reps`` resamples of the runs with replacement
    (indices from ``numpy.random.default_rng(stream)``), each one's mean after cutting
    floor(n / 4) values from each end, and the 2.5% and 97.5% quantiles of those."""
    n, cut = x.size, x.size // 4
    idx = np.random.default_rng(stream).integers(0, n, size=(reps, n))
    boot = np.sort(x[idx], axis=1)[:, cut : n - cut].mean(axis=1)
    low, high = np.quantile(boot, [0.025, 0.975])
    return float(low), float(high)


def test_toy_summary_iqm_ci_uses_the_reps_given(tmp_path: Path) -> None:
    toy = toy_results(runs=6, episodes=20)
    out = tmp_path / "res"
    write_store(out, {"toy_mdp": toy})
    reps = 3000
    assert main(["report", str(out), "--reps", str(reps)]) == 0
    csv = pd.read_csv(out / "summary" / "toy_mdp_final.csv")
    # Each setting's final value: the mean over its last 10% of episodes (0..19: 18, 19).
    tail = toy[toy["episode"] >= 18]
    per_run = tail.groupby(["mu", "algorithm", "n", "run"])[["distance", "q_a_left"]].mean()
    settings = per_run.groupby(level=["mu", "algorithm", "n"])
    assert len(csv) == settings.ngroups == 8
    for i, (key, runs) in enumerate(settings):  # setting i (sorted keys): stream [0, i]
        row = csv[
            np.isclose(csv["mu"], key[0]) & (csv["algorithm"] == key[1]) & (csv["n"] == key[2])
        ].iloc[0]
        for value, suffix in (("distance", "distance"), ("q_a_left", "q")):
            x = runs[value].to_numpy()
            assert row[f"runs_{suffix}"] == 6
            assert np.isclose(row[f"mean_{suffix}"], x.mean(), rtol=1e-12)
            assert np.isclose(row[f"se_{suffix}"], x.std(ddof=1) / np.sqrt(6), rtol=1e-12)
            low, high = _percentile_iqm_ci(x, reps, [0, i])
            # drawn with 200 replicates whatever --reps said: another interval
            assert np.isclose(row[f"iqm_low_{suffix}"], low, rtol=1e-12), (key, value)
            assert np.isclose(row[f"iqm_high_{suffix}"], high, rtol=1e-12), (key, value)
