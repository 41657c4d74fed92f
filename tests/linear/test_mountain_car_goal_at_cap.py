"""An episode that reaches the goal on the step cap's own step is not a truncated one: the
step-size table's ``capped`` (runs that never reached the goal) must not count it. Until
then ``capped`` was ``steps >= max_steps``, which counted such a run as failing."""

from __future__ import annotations

import pandas as pd
import pytest
from reference_loops import mountain_car_reference

from maxminq.analysis import classic_plots as cp
from maxminq.linear.mountain_car import run_mountain_car_grid

KW = {"algorithm": "q_learning", "n": 1, "seed": 0, "episodes": 1}


def _cap_hit_exactly() -> int:
    """The plain loop's first-episode lengths without a binding cap: run 0 reaches the goal
    on its ``cap``-th step, runs 1 and 2 only later (so, capped there, they are truncated).
    A cap changes nothing before it binds, so with ``max_steps = cap`` run 0 still reaches
    the goal on the cap's step."""
    free = [
        mountain_car_reference(sigma2=0.0, step_size=0.08, run=r, max_steps=5000, **KW)[0][0]
        for r in range(3)
    ]
    cap = free[0]
    assert cap < 5000 and free[1] > cap and free[2] > cap  # the case this file is about
    return cap


def test_the_grid_tells_the_goal_on_the_caps_step_from_a_truncation() -> None:
    cap = _cap_hit_exactly()
    df = run_mountain_car_grid(
        sigma2=[0.0], step_sizes=[0.08], runs=3, max_steps=cap, reached_goal=True, **KW
    )
    assert df.steps.tolist() == [cap, cap, cap]
    assert df.reached_goal.tolist() == [True, False, False]
    plain = run_mountain_car_grid(sigma2=[0.0], step_sizes=[0.08], runs=3, max_steps=cap, **KW)
    assert "reached_goal" not in plain.columns  # the API's table as before unless asked
    assert plain.steps.tolist() == df.steps.tolist()


def test_step_size_table_does_not_count_the_goal_on_the_caps_step(tmp_path) -> None:
    from maxminq.cli import main

    cap = _cap_hit_exactly()
    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "3", "--episodes", "1", "--max-steps",
            str(cap), "--sigma2", "0", "--step-sizes", "0.08", "--algorithms", "q_learning",
            "--workers", "1", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    table = pd.read_csv(out / "mountain_car_step_sizes.csv")
    assert table.capped.tolist() == [pytest.approx(2 / 3)]  # run 0 reached the goal
    assert table["mean"].tolist() == [cap]
    runs = pd.read_csv(out / "mountain_car.csv")  # its documented columns, unchanged
    assert list(runs.columns) == ["algorithm", "n", "sigma2", "step_size", "step_size_per",
                                  "run", "episode", "steps"]  # fmt: skip


def test_capped_reads_a_reached_goal_column_when_there_is_one() -> None:
    last = [(300, True), (300, False), (120, True), (80, True)]  # (steps, reached the goal)
    df = pd.DataFrame(
        [dict(algorithm="q_learning", n=1, sigma2=50.0, step_size=0.02, run=r, episode=1,
              steps=s, reached_goal=goal) for r, (s, goal) in enumerate(last)]
    )  # fmt: skip
    assert cp.mc_best_step_sizes(df, max_steps=300).capped.tolist() == [0.25]
    # steps alone cannot tell: both 300-step episodes count
    without = df.drop(columns="reached_goal")
    assert cp.mc_best_step_sizes(without, max_steps=300).capped.tolist() == [0.5]
