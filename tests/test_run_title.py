"""The title of one run's curves figure: the test return's standard error needs two seeds."""

from __future__ import annotations

import pandas as pd

from maxminq.analysis.figures import run_title


def test_two_seeds_give_mean_and_standard_error() -> None:
    # seed means 1 and 3: mean 2, sd sqrt(2), SE sqrt(2) / sqrt(2) = 1
    tests = pd.DataFrame({"seed": [0, 0, 1, 1], "return": [0.0, 2.0, 3.0, 3.0]})
    title = run_title("DQN", "CartPole-v1", 2, tests)
    assert title == "DQN on CartPole-v1, 2 seeds; test return 2.0 +- 1.0"


def test_one_seed_has_no_standard_error() -> None:
    tests = pd.DataFrame({"seed": [5, 5], "return": [4.0, 6.0]})
    title = run_title("DQN", "CartPole-v1", 1, tests)
    assert title == "DQN on CartPole-v1, 1 seed; test return 5.0"
