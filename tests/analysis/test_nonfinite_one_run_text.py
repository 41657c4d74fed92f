"""The report's list of Mountain Car settings whose runs went non-finite counts one run in
the singular: a one-run setting read '1 of 1 runs' (hS2's reading of 035015b, which made the
classic figures and the command's note singular but not this list)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from maxminq.analysis import report as R


def test_one_run_of_one_reads_run() -> None:
    settings = {"algorithm": "q_learning", "n": 1, "sigma2": 50.0, "step_size": 0.08}
    note = "q_learning, n 1, sigma2 50, step_size 0.08: 1 of 1 run went non-finite (NaN or inf)"
    record = SimpleNamespace(
        run_id="q", kind="mountain_car", status="done", settings=settings, error=note
    )
    mc = pd.DataFrame(
        [("q", "q_learning", 1, 50.0, 0.08, 0, 5, 300)],
        columns=["run_id", "algorithm", "n", "sigma2", "step_size", "run", "episode", "steps"],
    )
    best = pd.DataFrame({"algorithm": [], "n": [], "sigma2": [], "step_size": []})
    assert R.mountain_car_nonfinite_items([record], mc, best) == [
        "Q-learning at σ² = 50, step size 0.08: 1 of 1 run"
    ]
