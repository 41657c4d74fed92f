"""bench_envs' timers run one round of steps at least: a process paused past ``seconds``
before its first check (a loaded machine, the tests' --seconds 0.02) timed no step and
printed a rate of 0 (test_bench_envs_smallest failed so, once, in a full run beside other
work). A budget of 0 seconds is that pause, made certain."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))  # bench_envs imports _cli from its folder
import bench_envs  # noqa: E402


@pytest.mark.parametrize("timer", [bench_envs.single_speed, bench_envs.batched_speed])
def test_a_budget_spent_before_the_first_check_still_times_steps(timer) -> None:
    wall, cpu = timer("maxminq/Catcher-v0", 0.0, np.random.default_rng(0))
    assert np.isfinite([wall, cpu]).all() and wall > 0 and cpu > 0, (wall, cpu)
