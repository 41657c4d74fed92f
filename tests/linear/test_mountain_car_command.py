"""``run_mountain_car`` and ``maxminq experiment mountain-car``: errors naming the
parameter, the summary's words."""

from __future__ import annotations

import pytest

from maxminq.cli import main

MC_API = {"algorithm": "maxmin", "n": 2, "sigma2": [0.0], "step_sizes": [0.01], "runs": 1,
          "episodes": 1, "seed": 0, "max_steps": 10}  # fmt: skip


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"sigma2": [-1.0]}, "sigma2: every value must be finite and >= 0"),
        ({"step_sizes": [0.0]}, "step_sizes: every value must be finite and > 0"),
        ({"runs": 0}, "runs: expected a whole number >= 1"),
        ({"algorithm": "dqn"}, "algorithm: unknown algorithm 'dqn'"),
        ({"max_steps": 0}, "max_steps: expected a whole number >= 1"),
        ({"step_size_per": "weight"}, "step_size_per: expected one of"),
        ({"run_offset": -1}, "run_offset: expected a whole number >= 0"),
    ],
)
def test_run_mountain_car_grid_errors_name_its_parameters(bad: dict, says: str) -> None:
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import run_mountain_car_grid

    with pytest.raises(UsageError) as err:
        run_mountain_car_grid(**{**MC_API, **bad})
    assert str(err.value).startswith(says), str(err.value)


def test_run_mountain_car_names_its_one_value_parameter() -> None:
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import run_mountain_car

    kw = {"algorithm": "maxmin", "n": 2, "runs": 1, "episodes": 1, "seed": 0}
    with pytest.raises(UsageError, match=r"^step_size: run_mountain_car takes one value; use "
                                         r"run_mountain_car_grid"):  # fmt: skip
        run_mountain_car(**kw, sigma2=0.0, step_size=[0.01, 0.02])


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ({"step_size": -1.0}, "step_size: expected a finite number > 0, got -1.0"),
        ({"step_size": "x"}, "step_size: expected a finite number > 0, got 'x'"),
        ({"sigma2": -1.0}, "sigma2: expected a finite number >= 0, got -1.0"),
    ],
)
def test_run_mountain_car_names_its_own_keyword(bad: dict, says: str) -> None:
    """run_mountain_car(step_size=-1) said 'step_sizes: every value must ...', the grid's
    keyword, which the caller never typed."""
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import run_mountain_car

    kw = {"algorithm": "maxmin", "n": 2, "sigma2": 0.0, "step_size": 0.01, "runs": 1,
          "episodes": 1, "seed": 0, "max_steps": 5}  # fmt: skip
    with pytest.raises(UsageError) as err:
        run_mountain_car(**{**kw, **bad})
    assert str(err.value) == says


def test_mountain_cars_summary_counts_one_of_a_kind_in_the_singular(tmp_path, capsys) -> None:
    """One algorithm, step size, run and episode (20 agent steps): the line said '1
    algorithms x 1 sigma2 x 1 step sizes (per tiling) x 1 runs x 1 episodes'."""
    argv = ["experiment", "mountain-car", "--algorithms", "q_learning", "--runs", "1"]
    argv += ["--episodes", "1", "--max-steps", "20", "--sigma2", "0", "--step-sizes", "0.1"]
    assert main([*argv, "--workers", "1", "--no-progress", "--out", str(tmp_path / "mc")]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines() if "agent steps in" in s]
    assert line.startswith(
        "mountain car: 1 algorithm x 1 sigma2 x 1 step size (per tiling) x 1 run x 1 episode "
        "= 20 agent steps in "
    ), line
