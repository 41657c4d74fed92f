"""Session 18, classic side: leftovers of the tabular / tile-coding code and the report.

Each test reproduces what a user met before the fix: ``FiniteMDP.learn(reward_noise=...)``
failed with Python's "got multiple values" TypeError; a diverged toy run was logged as a
coin-flip policy (P(Left) 0.5); the experiment's CSV turned computed values beyond float32's
range into inf; the report's settings table rounded setting values to 3 digits and sorted
numbers as text."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from maxminq.tabular.finite_mdp import random_mdp
from maxminq.tabular.toy_mdp import run_toy_mdp

_MDP = random_mdp(3, 2, np.random.default_rng(0), reward_noise=0.2)


@pytest.mark.parametrize("key", ["reward_noise", "terminal", "P", "R", "gamma"])
def test_learn_names_an_mdp_setting_passed_as_an_option_and_what_to_do(key: str) -> None:
    with pytest.raises(TypeError) as err:
        _MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), **{key: 0.5})
    text = str(err.value)
    assert "\n" not in text and "multiple values" not in text
    assert text.startswith(f"learn: {key} is the MDP's own")
    assert f"dataclasses.replace(mdp, {key}=...)" in text


def test_the_advised_replace_learns_with_the_other_noise() -> None:
    """What the error advises works: the replaced MDP learns with its noise (a noiseless
    copy learns another table from the same random stream; the original keeps its noise)."""
    quiet = dataclasses.replace(_MDP, reward_noise=0.0)
    assert quiet.reward_noise == 0.0 and _MDP.reward_noise == 0.2
    a = quiet.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    b = _MDP.learn("maxmin", 2, 1, 20, np.random.default_rng(3)).q
    assert not np.allclose(a, b)


def test_a_diverged_toy_run_logs_no_policy_instead_of_a_coin_flip() -> None:
    """At step size 3 every update overshoots its target by twice the error, so the values
    at A blow up and turn NaN within about 100 episodes. Before: P(Left | A) was logged as 0.5
    (distance 0.45 at mu = 0.1), a coin flip, for a table whose greedy choice on NaN values is
    a fixed action; now such an episode logs NaN, and only such an episode."""
    df = run_toy_mdp(mu=0.1, algorithm="q_learning", n=1, runs=2, episodes=150, seed=0,
                     step_size=3.0)  # fmt: skip
    last = df.groupby("run").tail(1)
    assert last["q_a_left"].isna().all()  # diverged (the run's own record)
    assert last["p_left"].isna().all() and last["distance"].isna().all()
    # the early episodes, before any NaN, still log a greedy policy (0.05 or 0.95)
    early = df[df["episode"] <= 5]
    assert set(early["p_left"].round(6)) <= {0.05, 0.95}
    assert not (df["p_left"] == 0.5).any()


def test_the_toy_table_keeps_values_beyond_float32_instead_of_writing_inf() -> None:
    """The experiment command's CSV is the frame of ``_toy_task``: its float32 columns made
    a computed 1e47 (a diverging run) inf; such a column now stays float64, while a
    column whose values all fit keeps float32 (a 25% smaller CSV)."""
    from maxminq.commands.experiment import _toy_task

    base = {"algorithm": "q_learning", "n": 1, "runs": 2, "episodes": 40, "seed": 0}
    computed = run_toy_mdp(mu=0.1, step_size=3.0, **base)
    stored = _toy_task({"mu": 0.1, "step_size": 3.0, **base})
    q = computed["q_a_left"].to_numpy()
    assert np.nanmax(np.abs(q)) > 1e39  # the run went beyond float32's range
    np.testing.assert_array_equal(stored["q_a_left"].to_numpy(), q)  # NaN where NaN
    assert stored["p_left"].dtype == np.float32  # 0.05 / 0.95 / NaN fit
    plain = _toy_task({"mu": -0.1, **base})
    assert plain["q_a_left"].dtype == np.float32


def _records(settings: list[dict]) -> list[SimpleNamespace]:
    """Store records of one config ``demo`` (the fields ``_settings_rows`` reads)."""
    return [SimpleNamespace(config="demo", settings=s) for s in settings]


def test_the_settings_table_prints_values_as_the_paper_column_does() -> None:
    """The report's settings table rounded a float setting to 3 digits (two step sizes
    0.1234 and 0.1237 both read 0.123), sorted numbers as text (n: 10, 2, 4, 6, 8) and
    printed whole numbers without the thousands separator that ``maxminq reproduce``'s
    paper column, beside it, uses (1500000 against 1,500,000). One formatter serves both."""
    from maxminq.analysis.report import _settings_rows
    from maxminq.commands.reproduce import paper_difference
    from maxminq.experiments.config import RunSpec, SweepConfig

    settings = [
        {"algorithm": "maxmin", "n": n, "step_size": lr, "steps": 1_500_000, "runs": 4}
        for n in (2, 4, 6, 8, 10)
        for lr in (0.1234, 0.1237)
    ]
    (row,) = _settings_rows(_records(settings))
    assert row[:3] == ["demo", "10", "4"]
    assert row[3] == (
        "algorithm: maxmin; n: 2, 4, 6, 8, 10; step_size: 0.1234, 0.1237; steps: 1,500,000"
    )

    def config(scale: str, runs: list[dict]) -> SweepConfig:
        specs = [RunSpec(f"r{i}", "toy_mdp", s, "demo") for i, s in enumerate(runs)]
        return SweepConfig("demo", "toy_mdp", scale, Path("demo.yaml"), runs=specs)

    quick = config("quick", [{**s, "steps": 300} for s in settings])
    paper = config("paper", settings)
    # the paper column names the same values in the same words
    assert paper_difference(quick, paper) == "steps: 1,500,000"
    assert "steps: 1,500,000" in row[3]
    # and neither rounds two settings into one (the paper column's %g did at 7 digits)
    one = config("quick", [{"lr": 0.1, "runs": 4}])
    two = config("paper", [{"lr": 0.1234567, "runs": 4}, {"lr": 0.1234571, "runs": 4}])
    assert (
        paper_difference(one, two) == "2 settings x 4 runs (here 1 x 4); lr: 0.1234567, 0.1234571"
    )


def _toy_rows(mu: float, start: float, end: float, runs: int = 6) -> pd.DataFrame:
    """Q-learning rows at ``mu`` whose Q(A, Left) goes linearly from ``start`` to ``end``
    over 20 episodes, plus a little noise (fixed seed)."""
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        [
            dict(run_id="q", mu=mu, algorithm="q_learning", n=1, run=r, episode=ep, distance=0.0)
            | dict(q_a_left=start + (end - start) * ep / 19 + rng.normal(0, 0.001))
            for r in range(runs)
            for ep in range(20)
        ]
    )


def test_the_negative_mu_overestimation_claim_says_when_the_estimate_is_still_falling() -> None:
    """At mu = -0.1 the second-half Q(A, Left) sits above mu while it is still coming down
    from its start (over 5,000 episodes Q-learning's ends below mu): the claim's evidence
    now says so when the runs' last tenth lies below the tenth of episodes just past the
    middle at 95%, and only then. The verdict is unchanged (the same mean-vs-truth rule)."""
    from maxminq.analysis import claims as C

    def claim(toy: pd.DataFrame) -> C.Claim:
        (found,) = [c for c in C.toy_claims(toy) if c.text.startswith("Q-learning overest")]
        return found

    falling = claim(_toy_rows(-0.1, -0.02, -0.08))  # second half: -0.05 .. -0.08
    assert falling.status == C.SUPPORTED
    assert falling.evidence.startswith("second-half Q(A,Left) of Q-learning")
    # the last tenth (episodes 18, 19) against the second half's first (episodes 10, 11):
    # 8 episodes at a slope of -0.06 / 19
    found = re.search(r"; still falling: its last tenth of episodes ([0-9.]+) ± ", falling.evidence)
    assert found is not None and float(found.group(1)) == pytest.approx(8 * 0.06 / 19, abs=1e-3)
    assert falling.evidence.endswith(
        "below the tenth of episodes just past the middle (mean ± SE of the runs' change)"
    )
    flat = claim(_toy_rows(-0.1, -0.05, -0.05))
    rising = claim(_toy_rows(-0.1, -0.09, -0.05))
    assert flat.status == rising.status == C.SUPPORTED
    assert "still falling" not in flat.evidence + rising.evidence
    assert "still falling" not in claim(_toy_rows(-0.1, -0.02, -0.08, runs=2)).evidence
    positive = claim(_toy_rows(0.1, 0.2, 0.14))  # B is visited at mu > 0: no such note
    assert "still falling" not in positive.evidence
