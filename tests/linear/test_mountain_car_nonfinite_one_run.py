"""The Mountain Car command's note on runs whose weights went non-finite counts one run in
the singular, as the toy MDP's note, the figures' titles and the summary line do
(``style.count``): a one-run smoke test at a diverging step size read '1 of 1 runs'."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maxminq.cli import main


def test_one_diverged_run_of_one_is_counted_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from maxminq.linear.mountain_car import run_mountain_car_grid

    args = ["experiment", "mountain-car", "--runs", "1", "--episodes", "4", "--max-steps",
            "150", "--sigma2", "50", "--step-sizes", "2", "--algorithms", "q_learning",
            "--workers", "1", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    # the run's weights, from the library: they did go non-finite, so the note is due
    _, weights, _ = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[50], step_sizes=[2.0], runs=1, episodes=4,
        seed=0, max_steps=150, return_weights=True,
    )  # fmt: skip
    assert not np.isfinite(weights).all()
    lines = [ln for ln in err.splitlines() if "non-finite" in ln]
    assert lines == [
        "mountain car: note: runs whose weights went non-finite (NaN or inf; their episodes "
        "ran to the step cap): q_learning at sigma2 = 50, step size 2: 1 of 1 run"
    ]
