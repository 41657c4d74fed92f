"""``run_mountain_car_grid(reached_goal=True)`` on the lockstep path too: the kernels record a
truncated episode's length negated, and both ways of running them (the per-lane kernel of a
compiled operator, the lockstep loop of a G of one's own) must turn the sign into the same
``reached_goal`` and positive ``steps``. tests/linear/test_mountain_car_goal_at_cap.py checks
the per-lane kernel only."""

from __future__ import annotations

import numpy as np
from reference_loops import mountain_car_reference

from maxminq.linear.mountain_car import run_mountain_car_grid

KW = {"n": 1, "seed": 0, "sigma2": [0.0], "step_sizes": [0.08]}


def max_by_hand(q: np.ndarray) -> np.ndarray:
    """Q-learning's G written out: the one table's largest action value (a G of one's own
    runs on the lockstep NumPy path)."""
    return np.asarray(q)[..., 0, :].max(axis=-1)


def test_the_lockstep_path_tells_the_goal_on_the_caps_step_from_a_truncation() -> None:
    # the plain loop without a binding cap: run 0 reaches the goal on step `cap`, runs 1 and 2
    # later (a cap changes nothing before it binds)
    free = [
        mountain_car_reference(algorithm="q_learning", n=1, sigma2=0.0, step_size=0.08,
                               episodes=1, seed=0, run=r, max_steps=5000)[0][0]
        for r in range(3)
    ]  # fmt: skip
    cap = free[0]
    assert cap < 5000 and min(free[1:]) > cap
    df = run_mountain_car_grid(
        algorithm=max_by_hand, runs=3, episodes=1, max_steps=cap, reached_goal=True, **KW
    )
    assert df.steps.tolist() == [cap, cap, cap]
    assert df.reached_goal.tolist() == [True, False, False]


def test_both_paths_give_the_same_steps_and_goals_over_many_episodes() -> None:
    """Lanes that end episodes at different steps (some at the goal, some at the cap) on the
    lockstep path: the steps are the plain loop's, positive, every episode shorter than the
    cap reached the goal, and the per-lane kernel gives the same table."""
    cap, episodes = 500, 6
    kw = {**KW, "runs": 3, "episodes": episodes, "max_steps": cap, "reached_goal": True}
    lockstep = run_mountain_car_grid(algorithm=max_by_hand, **kw)
    per_lane = run_mountain_car_grid(algorithm="q_learning", **kw)
    for run in range(3):
        steps, _ = mountain_car_reference(algorithm="q_learning", n=1, sigma2=0.0,
                                          step_size=0.08, episodes=episodes, seed=0, run=run,
                                          max_steps=cap)  # fmt: skip
        assert lockstep[lockstep.run == run].steps.tolist() == steps
    assert (lockstep.steps > 0).all()
    short = lockstep.steps < cap
    assert short.any() and (~short).any()  # both kinds of episode end are here
    assert lockstep.reached_goal[short].all()
    assert not lockstep.reached_goal[~short].all()  # truncations among the cap's episodes
    cols = ["run", "episode", "steps", "reached_goal"]
    assert lockstep[cols].equals(per_lane[cols])
