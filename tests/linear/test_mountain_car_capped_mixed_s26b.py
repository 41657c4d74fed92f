"""``mc_best_step_sizes``'s ``capped`` on a table whose ``reached_goal`` column is missing for
some rows (frames of ``run_mountain_car_grid`` with and without ``reached_goal=True``
concatenated, as a user comparing algorithms does): those rows are read by their steps.
``astype(bool)`` read their NaN as True, a goal reached, so runs that all hit the cap were
counted as never capped (0.0 instead of 1.0)."""

from __future__ import annotations

import pandas as pd

from maxminq.analysis import classic_plots as cp
from maxminq.linear.mountain_car import run_mountain_car_grid


def test_rows_without_reached_goal_are_read_by_their_steps() -> None:
    # Three runs per algorithm capped at 30 steps: the goal is out of reach (from the valley
    # floor it takes about 100 steps), so every episode is a truncation and capped is 1.
    kw = {"n": 2, "sigma2": [1.0], "step_sizes": [0.05], "runs": 3, "episodes": 2, "seed": 0,
          "max_steps": 30}  # fmt: skip
    told = run_mountain_car_grid(algorithm="maxmin", reached_goal=True, **kw)
    plain = run_mountain_car_grid(algorithm="double_q", **kw)
    assert (told.steps == 30).all() and not told.reached_goal.any()
    table = cp.mc_best_step_sizes(pd.concat([told, plain], ignore_index=True), max_steps=30)
    assert dict(zip(table.algorithm, table.capped, strict=True)) == {"maxmin": 1.0, "double_q": 1.0}


def test_a_missing_value_counts_by_steps_and_a_goal_on_the_caps_step_does_not() -> None:
    nan = float("nan")  # what pd.concat puts in the rows of a frame without the column
    last = [(300, True), (300, False), (300, nan), (120, nan)]  # (steps, reached the goal)
    df = pd.DataFrame(
        [dict(algorithm="q_learning", n=1, sigma2=50.0, step_size=0.02, run=r, episode=1,
              steps=s, reached_goal=goal) for r, (s, goal) in enumerate(last)]
    )  # fmt: skip
    # runs 1 (truncated) and 2 (at the cap, nothing said) of 4; not run 0 (the goal on the
    # cap's step) nor run 3 (120 steps)
    assert cp.mc_best_step_sizes(df, max_steps=300).capped.tolist() == [0.5]
