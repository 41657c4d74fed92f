"""Noisy Mountain Car on edge settings the other tests leave out: the step cap at one step
(truncation bootstraps, worked out by hand), one table of every kind against Q-learning,
and a one-transition buffer, a mini-batch of one, eps at 0 and 1, and updates rarer than
episodes against the plain single-run loop."""

from __future__ import annotations

import numpy as np
import pytest
from reference_loops import mountain_car_reference

from maxminq.linear.mountain_car import run_mountain_car_grid


@pytest.mark.parametrize(("algorithm", "n"), [("q_learning", 1), ("maxmin", 2), ("averaged", 2)])
@pytest.mark.parametrize(("gamma", "expected"), [(1.0, 0.49), (0.0, 0.45)])
def test_a_truncated_step_bootstraps_by_hand(algorithm, n, gamma, expected) -> None:
    """One episode of one step (max_steps = 1, the cap binds: the goal is ~100 steps away),
    reward exactly -1 (sigma^2 = 0), every weight 0.5, so every q value is 8 x 0.5 = 4; one
    update of one replayed transition moves the 8 active weights of the action taken by
    alpha * (r + gamma * 4 - 4) each: 0.5 + 0.01 * (-1) = 0.49 at gamma = 1 (the cap is no
    terminal: the next state's 4 is bootstrapped), 0.5 + 0.01 * (-1 - 4) = 0.45 at gamma = 0.
    Every other weight stays 0.5."""
    df, w, cur = run_mountain_car_grid(
        algorithm=algorithm, n=n, sigma2=[0.0], step_sizes=[0.01], runs=1, episodes=1, seed=0,
        max_steps=1, batch_size=1, buffer_size=1, init_weight=0.5, gamma=gamma,
        return_weights=True,
    )  # fmt: skip
    assert df.steps.tolist() == [1]
    changed = [m for m in range(n) if (w[0, m] != 0.5).any()]
    assert len(changed) == 1  # one table trained (Maxmin's chosen one, the new snapshot)
    if algorithm == "averaged":
        assert changed == [cur[0]]
    moved = np.flatnonzero(w[0, changed[0]] != 0.5)
    assert moved.size == 8  # the 8 active tiles of one action
    np.testing.assert_allclose(w[0, changed[0], moved], expected, rtol=0, atol=1e-12)
    others = np.delete(w[0], changed[0], axis=0)
    assert (others == 0.5).all()  # the tables not updated (Maxmin's other, the old snapshot)


@pytest.mark.parametrize("algorithm", ["maxmin", "ensemble", "averaged", "historical_best"])
def test_one_table_of_any_kind_is_q_learning(algorithm: str) -> None:
    kw = {"sigma2": [10.0], "step_sizes": [0.05], "runs": 2, "episodes": 2, "seed": 3,
          "max_steps": 300, "return_weights": True}  # fmt: skip
    q_df, q_w, _ = run_mountain_car_grid(algorithm="q_learning", n=1, **kw)
    df, w, _ = run_mountain_car_grid(algorithm=algorithm, n=1, **kw)
    assert df.steps.tolist() == q_df.steps.tolist()
    np.testing.assert_array_equal(w, q_w)


@pytest.mark.parametrize(
    "settings",
    [
        {"algorithm": "q_learning", "n": 1, "batch_size": 1, "buffer_size": 1, "max_steps": 1,
         "episodes": 5},
        {"algorithm": "maxmin", "n": 3, "batch_size": 1, "max_steps": 30, "epsilon": 1.0},
        {"algorithm": "maxmin", "n": 3, "batch_size": 1, "max_steps": 30, "epsilon": 0.0},
        {"algorithm": "averaged", "n": 2, "batch_size": 1, "max_steps": 60, "update_every": 4},
        {"algorithm": "double_q", "n": 2, "batch_size": 3, "max_steps": 30, "gamma": 0.0},
        {"algorithm": "q_learning", "n": 1, "batch_size": 3, "max_steps": 20,
         "update_every": 1000},
    ],
)  # fmt: skip
def test_edge_settings_follow_the_plain_loop(settings: dict) -> None:
    kw = {"seed": 11, "episodes": 3, **settings}
    for s2 in (0.0, 3.0):
        df, w, cur = run_mountain_car_grid(
            sigma2=[s2], step_sizes=[0.05], runs=2, return_weights=True, **kw
        )
        for run in range(2):
            steps, tables = mountain_car_reference(sigma2=s2, step_size=0.05, run=run, **kw)
            assert df[df.run == run].steps.tolist() == steps
            n = kw["n"]
            for m, table in enumerate(tables):
                slot = (cur[run] - m) % n if kw["algorithm"] == "averaged" else m
                np.testing.assert_allclose(w[run, slot], np.ravel(table), rtol=0, atol=1e-10)
