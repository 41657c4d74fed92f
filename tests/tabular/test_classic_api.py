"""The classic experiments' Python API (run_toy_mdp and friends): errors naming the
parameter, counts past int64, arrays too large before any seeding."""

from __future__ import annotations

import numpy as np
import pytest

TOY_API = {"mu": -0.1, "algorithm": "maxmin", "n": 2, "runs": 2, "episodes": 2, "seed": 0}


MC_API = {"algorithm": "maxmin", "n": 2, "sigma2": [0.0], "step_sizes": [0.01], "runs": 1,
          "episodes": 1, "seed": 0, "max_steps": 10}  # fmt: skip


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


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"mu": 0}, "mu: expected a finite non-zero number"),
        ({"runs": 0}, "runs: expected a whole number >= 1"),
        ({"algorithm": "maxmni"}, "algorithm: unknown algorithm 'maxmni' (did you mean maxmin?)"),
        ({"algorithm": "double_q", "n": 3}, "n: double_q uses exactly n = 2, got 3"),
        ({"gamma": 0}, "gamma: the toy MDP needs gamma > 0"),
        ({"step_size": 0}, "step_size: expected a finite number > 0"),
        ({"update_members": 3}, "update_members: maxmin has n = 2 estimators, got 3"),
        ({"seed": -1}, "seed: expected a whole number >= 0"),
        ({"algorithm": "hc22_no_such_module:g"}, "algorithm: operator 'hc22_no_such_module:g'"),
    ],
)
def test_run_toy_mdp_errors_name_its_parameters(bad: dict, says: str) -> None:
    from maxminq.errors import UsageError
    from maxminq.tabular.toy_mdp import run_toy_mdp

    with pytest.raises(UsageError) as err:
        run_toy_mdp(**{**TOY_API, **bad})
    assert str(err.value).startswith(says), str(err.value)


def test_the_command_line_and_a_sweep_check_still_name_the_options() -> None:
    """The same bad values through check_settings (the CLI's and a sweep's check before any
    run): the command line's options, which experiments.registry reads back as config keys."""
    from maxminq.errors import UsageError
    from maxminq.linear import mountain_car
    from maxminq.tabular import toy_mdp

    for bad, says in [({"mu": 0}, "--mu: "), ({"runs": 0}, "--runs: "),
                      ({"algorithm": "maxmni"}, "--algorithms: unknown algorithm"),
                      ({"gamma": 0}, "--gamma: ")]:  # fmt: skip
        with pytest.raises(UsageError) as err:
            toy_mdp.check_settings({**TOY_API, **bad})
        assert str(err.value).startswith(says)
    mc = {**MC_API, "step_size": MC_API["step_sizes"]}
    del mc["step_sizes"]
    with pytest.raises(UsageError, match="^--max-steps: "):
        mountain_car.check_settings({**mc, "max_steps": 0})


def test_run_ids_past_int64_are_refused_instead_of_merging_two_runs() -> None:
    """run_offset = 2**63 - 1 with two runs: NumPy made the ids floats, both 9.223372036854776e18,
    and the lanes' seeds came from those floats, so the two 'independent' runs were one run
    twice. Now a UsageError names --run-offset; the largest offset that fits still gives two
    distinct ids and two different runs."""
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import run_mountain_car_grid
    from maxminq.tabular import toy_mdp

    toy = {"mu": 0.1, "algorithm": "q_learning", "n": 1, "runs": 2, "episodes": 30, "seed": 0}
    for offset in (2**63 - 1, 2**64):
        with pytest.raises(UsageError, match="^run_offset: run ids .* below 2\\*\\*63"):
            toy_mdp.run_toy_mdp(**toy, run_offset=offset)
        with pytest.raises(UsageError, match="--run-offset"):
            toy_mdp.check_settings({**toy, "run_offset": offset})
        with pytest.raises(UsageError, match="^run_offset:"):
            run_mountain_car_grid(
                algorithm="q_learning", n=1, sigma2=[0.0], step_sizes=[0.01], runs=2,
                episodes=1, seed=0, run_offset=offset, max_steps=10,
            )  # fmt: skip
    df = toy_mdp.run_toy_mdp(**toy, run_offset=2**63 - 2)
    assert df["run"].dtype == np.int64
    assert sorted(set(df["run"])) == [2**63 - 2, 2**63 - 1]
    first, second = (g["q_a_left"].to_numpy() for _, g in df.groupby("run"))
    assert not np.array_equal(first, second)  # two streams, not one run twice
    mc = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[0.0], step_sizes=[0.01], runs=2, episodes=1,
        seed=0, run_offset=2**63 - 2, max_steps=10,
    )  # fmt: skip
    assert mc["run"].dtype == np.int64 and mc["run"].tolist() == [2**63 - 2, 2**63 - 1]
