"""Session 17, helper h4: the operators, the theory and the tabular code as a researcher of
estimation bias calls them, checked against numbers computed here by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq import operators as ops
from maxminq.tabular.finite_mdp import (
    FiniteMDP,
    episodic_mdp,
    generalized_q_learning,
    random_mdp,
    value_iteration,
)

# --- operator parameters in q's dtype ---------------------------------------------------------

_Q32 = np.array(
    [
        [[0.3, -1.2, 0.7, 0.1], [0.5, 0.2, -0.4, 0.9]],
        [[-0.6, 0.8, 0.25, 0.0], [1.1, -0.3, 0.6, 0.2]],
    ],
    dtype=np.float32,
)  # two samples of (U, V) over 4 actions


def _wdq_by_hand(q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Zhang et al.'s target, in float64, written out per sample."""
    out = []
    for (u, v), ci in zip(q.astype(np.float64), c, strict=True):
        best, worst = int(np.argmax(u)), int(np.argmin(u))
        gap = abs(v[best] - v[worst])
        beta = gap / (ci + gap)
        out.append(beta * u[best] + (1 - beta) * v[best])
    return np.array(out)


@pytest.mark.parametrize("form", ["numpy scalar", "list", "array"])
def test_a_parameter_keeps_float32_q_in_float32_and_both_backends_agree(form):
    """float32 tables with a per-sample c or sigma as a list or float64 array (or a np.float64
    scalar) gave float64 in NumPy (float32 in torch for the list): the documented "floating q
    keeps its dtype" and "the two backends agree bit for bit" both failed."""
    c = np.array([0.5, 2.0])
    sigma = np.array([0.25, 0.75])
    if form == "numpy scalar":
        c, sigma = np.float64(0.5), np.float64(0.25)
    as_param = {"numpy scalar": lambda x: x, "list": lambda x: list(x), "array": lambda x: x}[form]
    as_torch = {
        "numpy scalar": lambda x: x,
        "list": lambda x: list(x),
        "array": lambda x: torch.tensor(x),  # float64, as the NumPy array
    }[form]

    got = ops.weighted_double_q(_Q32, c=as_param(c))
    got_t = ops.weighted_double_q(torch.tensor(_Q32), c=as_torch(c))
    assert got.dtype == np.float32 and got_t.dtype == torch.float32
    np.testing.assert_array_equal(got, got_t.numpy())
    np.testing.assert_allclose(got, _wdq_by_hand(_Q32, np.broadcast_to(c, 2)), atol=1e-6)

    q1 = _Q32[:, :1]  # one table per sample
    got = ops.bias_corrected(q1, sigma=as_param(sigma))
    got_t = ops.bias_corrected(torch.tensor(q1), sigma=as_torch(sigma))
    assert got.dtype == np.float32 and got_t.dtype == torch.float32
    np.testing.assert_array_equal(got, got_t.numpy())
    e_max4 = 1.0293753730039641  # E[max of 4 N(0, 1)], tabulated (Harter 1961: 1.02938)
    hand = q1[:, 0].astype(np.float64).max(axis=-1) - np.broadcast_to(sigma, 2) * e_max4
    np.testing.assert_allclose(got, hand, rtol=0, atol=1e-6)  # float32 rounding


# --- finite MDPs: arguments a researcher may get wrong ----------------------------------------

_RNG_MDP = random_mdp(3, 2, np.random.default_rng(0))


def test_value_iteration_refuses_a_tolerance_it_can_never_meet():
    """tol <= 0 is never met: value iteration ran every sweep (10^6 by default, 18 s) and then
    blamed the MDP ("did not converge ... (improper?)"); the same for max_iter = 0."""
    P, R = _RNG_MDP.P, _RNG_MDP.R
    for tol in (-1.0, 0.0, float("nan")):
        with pytest.raises(ValueError, match=r"^tol must be a finite number > 0"):
            value_iteration(P, R, 0.9, tol=tol, max_iter=50)
    with pytest.raises(ValueError, match=r"^max_iter must be an integer >= 1"):
        value_iteration(P, R, 0.9, max_iter=0)
    with pytest.raises(ValueError, match=r"^tol must be"):
        _RNG_MDP.q_star(tol=0.0)
    # A reachable tolerance still converges: Q* = R at gamma = 0, by hand.
    np.testing.assert_array_equal(value_iteration(P, R, 0.0, tol=1e-9), R)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, "0.9"), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, None), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, np.array([0.9])), "gamma"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, b"0.9"), "gamma"),  # was taken as 0.9
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, np.True_), "gamma must be one real"),
        (lambda: FiniteMDP(_RNG_MDP.P, _RNG_MDP.R, 0.9, reward_noise="1"), "reward_noise"),
        (
            lambda: _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), step_power="0.7"),
            "step_power",
        ),
        (
            lambda: _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), init_scale="1"),
            "init_scale",
        ),
        (
            lambda: generalized_q_learning(
                _RNG_MDP.P,
                _RNG_MDP.R,
                0.9,
                "maxmin",
                2,
                1,
                5,
                np.random.default_rng(0),
                reward_noise=None,
            ),  # fmt: skip
            "reward_noise",
        ),
        (lambda: episodic_mdp(3, 2, np.random.default_rng(0), termination="0.2"), "termination"),
        (lambda: random_mdp(3.0, 2, np.random.default_rng(0)), "n_states"),
        (lambda: random_mdp(3, 2, np.random.default_rng(0), branching=2.0), "branching"),
        (lambda: episodic_mdp(3, 2.0, np.random.default_rng(0)), "n_actions"),
    ],
)
def test_a_bad_scalar_argument_is_a_value_error_naming_it(call, name):
    """A string, None or a one-element array (gamma) was a TypeError from a comparison inside
    ("'<=' not supported between instances of 'float' and 'str'") or was kept as an array; a
    float count failed inside NumPy ("'float' object cannot be interpreted as an integer")."""
    with pytest.raises(ValueError, match=name):
        call()


def test_learning_refuses_a_q_star_that_is_not_finite():
    """A NaN in q_star made every recorded error and bias NaN, without a word."""
    q_star = _RNG_MDP.q_star()
    q_star[1, 0] = np.nan
    with pytest.raises(ValueError, match="q_star must be finite"):
        _RNG_MDP.learn("maxmin", 2, 1, 5, np.random.default_rng(0), q_star=q_star)


def test_too_many_members_for_double_q_names_n_and_k():
    """double_q with k = 2 snapshots said only "q must stack exactly 2 estimator(s) on axis -2,
    got 4": the 4 is n x k, which the caller never wrote."""
    with pytest.raises(ValueError, match=r"n = 2 estimators x k = 2 snapshots = 4 members"):
        _RNG_MDP.learn("double_q", 2, 2, 5, np.random.default_rng(0))
    # A bad parameter is G's own error first, the count only as context (it came first and
    # read as the cause: "n = 2 estimators x k = 1 snapshots = 2 members: ... c must be > 0").
    with pytest.raises(ValueError, match=r"^weighted_double_q: c must be > 0, got -1 \(G appl"):
        _RNG_MDP.learn(
            "weighted_double_q", 2, 1, 5, np.random.default_rng(0), operator_kwargs={"c": -1}
        )


# --- examples/operator_bias.py at another error scale -----------------------------------------


def test_operator_bias_example_prints_small_errors_in_units_of_tau(tmp_path):
    """At --tau 1e-4 every printed bias was +0.000 (3 decimals of numbers of order 1e-4), so the
    table and the 'over-estimates at N = 1 (+0.000)' sentence said nothing; now they are in
    units of tau, and the exact values are the hand-derived ones for M = 2."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "operator_bias.py"
    out = tmp_path / "bias"
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--samples", "4000", "--actions", "2",
         "--n-max", "3", "--tau", "1e-4", "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**__import__("os").environ, "MPLBACKEND": "Agg"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout
    assert "in units of tau = 0.0001" in text
    # Q-learning with M = 2: E[max of 2 U(-1, 1)] = 1/3; Maxmin N = 2: 1 - 2 t_22 = -1/15.
    assert "(+0.333)" in text.split("q_learning (N=1):")[1].splitlines()[0]
    maxmin_n2 = next(line for line in text.splitlines() if line.startswith("2 "))
    assert "(-0.067)" in maxmin_n2.split()[2]
    # The CSV keeps the values themselves (not in units of tau).
    import pandas as pd

    table = pd.read_csv(out / "operator_bias.csv")
    row = table[(table.operator == "q_learning")].iloc[0]
    assert abs(row.exact_bias - 1e-4 / 3) < 1e-15


# --- counts past the kernels' int64 ------------------------------------------------------------


def test_a_count_past_int64_is_a_usage_error_from_python_and_sweep_checks():
    """max_steps=10**30 (or update_every=2**64) passed every check of run_mountain_car /
    run_toy_mdp and of a sweep config's check_settings, then failed in numba's type inference
    (a long TypingError traceback after compiling); the command line's own check stopped it
    there only."""
    from maxminq.errors import UsageError
    from maxminq.linear import mountain_car
    from maxminq.tabular import toy_mdp

    mc = {"algorithm": "maxmin", "n": 2, "sigma2": [0.0], "step_size": [0.1], "runs": 1,
          "episodes": 1, "max_steps": 10**30}  # fmt: skip
    int64_max = "9223372036854775807"
    with pytest.raises(UsageError, match=rf"^--max-steps: expected a whole number <= {int64_max},"):
        mountain_car.check_settings(mc)
    with pytest.raises(UsageError, match="^max_steps:"):
        mountain_car.run_mountain_car(
            algorithm="q_learning", n=1, sigma2=0.0, step_size=0.1, runs=1, episodes=1, seed=0,
            max_steps=2**63,
        )  # fmt: skip
    toy = {"algorithm": "q_learning", "n": 1, "mu": 0.1, "runs": 1, "episodes": 1}
    with pytest.raises(UsageError, match="--update-every"):
        toy_mdp.check_settings({**toy, "update_every": 2**64})
    with pytest.raises(UsageError, match="^episodes:"):
        toy_mdp.run_toy_mdp(**{**toy, "episodes": 2**63}, seed=0)
    # The largest int64 itself is a count the kernels take (checked, not run).
    mountain_car.check_settings({**mc, "max_steps": 2**63 - 1})


def test_too_many_runs_fail_on_their_arrays_before_hours_of_seeding(monkeypatch):
    """Each run's stream costs about 20 us to seed, and the runs were seeded before their
    arrays were made: run_toy_mdp(runs=10**9) spent hours seeding before the MemoryError. The
    arrays come first now (and a bad seed is still refused first)."""
    from maxminq.errors import UsageError
    from maxminq.linear import mountain_car
    from maxminq.tabular import agent, toy_mdp

    def seeding(seed, runs):
        if np.size(runs) > 1000:
            raise AssertionError("seeded every run before making the arrays")
        return agent.lane_seeds(seed, runs)

    monkeypatch.setattr(toy_mdp, "lane_seeds", seeding)
    monkeypatch.setattr(mountain_car, "lane_seeds", seeding)
    with pytest.raises(MemoryError):  # (10^9, 4, 2, 8) float64 tables: 512 GB
        toy_mdp.run_toy_mdp(mu=0.1, algorithm="maxmin", n=4, runs=10**9, episodes=1, seed=0)
    with pytest.raises(MemoryError):  # (10^9, 968, 1, 3) float64 weights: 23 TB
        mountain_car.run_mountain_car(
            algorithm="q_learning", n=1, sigma2=0.0, step_size=0.1, runs=10**9, episodes=1, seed=0
        )
    with pytest.raises(UsageError, match="^seed:"):
        toy_mdp.run_toy_mdp(mu=0.1, algorithm="maxmin", n=4, runs=10**9, episodes=1, seed=-1)
    # Small runs are seeded as before: run r's stream is SeedSequence(seed, spawn_key=(r,)).
    df = toy_mdp.run_toy_mdp(mu=0.1, algorithm="q_learning", n=1, runs=2, episodes=3, seed=5)
    solo = toy_mdp.run_toy_mdp(
        mu=0.1, algorithm="q_learning", n=1, runs=1, episodes=3, seed=5, run_offset=1
    )
    np.testing.assert_array_equal(df[df.run == 1].q_a_left.to_numpy(), solo.q_a_left.to_numpy())


def test_operator_bias_example_theorem_1_table_at_a_huge_tau(tmp_path):
    """At --tau 1e200 the Theorem 1 table printed the target variance as inf (tau^2 overflows
    a double); in units of tau^2 it is 4 M / ((M+1)^2 (M+2)) = 32/810 = 0.0395 for N = 1,
    M = 8 (the max of 8 uniforms), and the sampled variance near it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "operator_bias.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--samples", "20000", "--n-max", "1",
         "--tau", "1e200", "--out", str(tmp_path / "bias")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("Maxmin, Theorem 1")[1].splitlines()
    n, bias, target_var, mc_var, _, _, ratio = lines[2].split()  # (ii)'s columns since S22
    assert (n, bias, target_var, ratio) == ("1", "0.7778", "0.0395", "1.0000")
    assert abs(float(mc_var) - 32 / 810) < 0.004  # 20,000 draws: SE of the variance ~ 0.0003


def test_an_estimator_count_past_int64_is_a_usage_error():
    """n = 2**70 passed resolve_algorithm (and a sweep config's check_settings), then NumPy
    said "Maximum allowed dimension exceeded", naming nothing."""
    from maxminq.errors import UsageError
    from maxminq.tabular import toy_mdp
    from maxminq.tabular.agent import parse_algorithm

    toy = {"algorithm": "maxmin", "n": 2**70, "mu": 0.1, "runs": 1, "episodes": 1}
    with pytest.raises(UsageError, match=r"^--algorithms: maxmin needs n <= 9223372036854775807"):
        toy_mdp.check_settings(toy)
    with pytest.raises(UsageError, match=r"^n: maxmin needs n <="):
        toy_mdp.run_toy_mdp(**toy, seed=0)
    with pytest.raises(UsageError, match=r"^--algorithms: ensemble needs n <="):
        parse_algorithm(f"ensemble:{2**64}", {})
