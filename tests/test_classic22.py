"""Session 22, classic and theory leftovers (hC): ``maxminq theory --operator``, the classic run
functions' Python-API errors, and a bias researcher's journey through docs/operators-and-theory.md.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxminq.cli import main

MODULE = "hc22_ops"
OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def median_q(q, w=1.0):
        return (w * np.median(q, axis=-2) + (1 - w) * q.mean(axis=-2)).max(axis=-1)


    def every_axis(q):
        return np.max(q)  # reduces every axis: not a G


    def shifted_min(q, tau=0.0):  # Maxmin's target moved up by tau (a parameter named tau)
        return q.min(axis=-2).max(axis=-1) + tau


    def breaks_on_noise(q):
        if np.any(q != 0):
            raise RuntimeError("cannot take noise")
        return q.max(axis=(-2, -1))
    """
)


@pytest.fixture
def own_ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module above, importable in this process."""
    folder = tmp_path / "ops"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(OWN_OPS)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return MODULE


THEORY = ["theory", "--m-max", "8", "--n-max", "3", "--samples", "400"]
THEORY += ["--variance-samples", "100", "--operator-m", "4", "--no-progress"]


# --- 1. maxminq theory --operator ---------------------------------------------------------------


def test_theory_draws_an_own_g_beside_maxmin(own_ops: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*THEORY, "--out", str(out), "--operator", f"{own_ops}:median_q"]
    assert main([*args, "--op-kwargs", '{"w": 0.7}']) == 0
    table = pd.read_csv(out / "operator_bias.csv")
    own = table[table["operator"] == f"{own_ops}:median_q:w=0.7"]
    assert list(own["N"]) == [1, 2, 3]  # N = 1..--n-max, as Maxmin's curve
    assert own["expected_bias"].isna().all()  # no closed form for a G of one's own
    # N = 1: the median of one is that value, so G is Q-learning's max: (M-1)/(M+1) = 0.6
    first = own.iloc[0]
    assert abs(first["bias"] - 0.6) < 3 * first["bias_se"] + 1e-9
    # the library's rows are still all there, Maxmin's among them
    assert {"maxmin", "ensemble", "q_learning"} <= set(table["operator"])


def test_theory_adds_a_library_operator_with_other_parameters(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*THEORY, "--out", str(out), "--operator", "weighted_double_q"]
    assert main([*args, "--op-kwargs", '{"c": 10}']) == 0
    table = pd.read_csv(out / "operator_bias.csv").set_index("operator")
    row = table.loc["weighted_double_q:c=10"]
    assert row["N"] == 2  # its own member count
    # its exact mean (uniform errors): E[beta] (M-1)/(M+1), E[beta] = int_0^2 u/(c+u) (2-u)/2
    u = np.linspace(0.0, 2.0, 200_001)
    e_beta = np.trapezoid(u / (10.0 + u) * (2.0 - u) / 2.0, u)
    assert row["expected_bias"] == pytest.approx(e_beta * 3 / 5, rel=1e-6)
    assert table.loc["weighted_double_q", "expected_bias"] != row["expected_bias"]  # c = 1


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--operator", "{m}:no_such"], "--operator: operator '{m}:no_such'"),
        (["--operator", "{m}:median_q", "--op-kwargs", '{{"lam": 1}}'], "--op-kwargs: "),
        (["--operator", "{m}:every_axis"], "--operator: operator '{m}:every_axis' must map"),
        (["--operator", "{m}:breaks_on_noise"], "failed in the Monte Carlo (RuntimeError"),
        (["--op-kwargs", '{{"c": 1}}'], "--op-kwargs: goes with --operator"),
        (["--operator", "{m}:median_q:w=0.7"], """--op-kwargs '{{"w": 0.7}}'"""),
        (["--operator", "maxmin:4"], "--operator: takes no N here"),
        (["--operator", "weighted_double_q", "--op-kwargs", '{{"c": -1}}'], "--op-kwargs: "),
        (["--operator", "weighted_double_q", "--op-kwargs", '{{"x": 1}}'], "takes c, not x"),
    ],
)
def test_theory_operator_errors_are_one_line_and_leave_nothing(
    own_ops: str, extra: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "out"
    args = [part.format(m=own_ops) for part in extra]
    assert main([*THEORY, "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert says.format(m=own_ops) in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "new").exists()  # nothing half-written, not even the folder


# --- 2. the classic run functions' Python-API errors name their parameters ---------------------

TOY_API = {"mu": -0.1, "algorithm": "maxmin", "n": 2, "runs": 2, "episodes": 2, "seed": 0}
MC_API = {"algorithm": "maxmin", "n": 2, "sigma2": [0.0], "step_sizes": [0.01], "runs": 1,
          "episodes": 1, "seed": 0, "max_steps": 10}  # fmt: skip


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


# --- 4. the bias researcher's journey ----------------------------------------------------------


def test_operator_bias_takes_a_g_parameter_named_as_its_own(own_ops: str) -> None:
    """A soft operator's temperature is often called tau, the name of the errors' half-width
    in operator_bias(name, M, N, tau, ...): **params could not take it ('got multiple values
    for argument tau'). op_kwargs, as the toy MDP and FiniteMDP.learn take G's parameters,
    can."""
    import importlib

    from maxminq.theory import expected_bias, operator_bias, operator_expected_bias

    g = importlib.import_module(own_ops).shifted_min
    est = operator_bias(g, 8, 4, 1.0, 1.0, 20_000, np.random.default_rng(3), op_kwargs={"tau": 0.5})
    assert abs(est.bias - (expected_bias(8, 4) + 0.5)) < 4 * est.bias_se  # Maxmin's, + 0.5
    # the library's parameters that way too, and a name given twice is refused
    wdq = operator_expected_bias("weighted_double_q", 8, 2, op_kwargs={"c": 10.0})
    assert wdq == operator_expected_bias("weighted_double_q", 8, 2, c=10.0)
    with pytest.raises(ValueError, match="'c' is given in op_kwargs and as a keyword"):
        operator_expected_bias("weighted_double_q", 8, 2, op_kwargs={"c": 10.0}, c=1.0)


def test_theory_operator_takes_a_parameter_named_tau(own_ops: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [*THEORY, "--out", str(out), "--operator", f"{own_ops}:shifted_min"]
    assert main([*args, "--op-kwargs", '{"tau": 0.25}']) == 0
    table = pd.read_csv(out / "operator_bias.csv").set_index(["operator", "N"])
    own = table.loc[f"{own_ops}:shifted_min:tau=0.25"]
    from maxminq.theory import expected_bias

    exact = expected_bias(4, own.index.to_numpy()) + 0.25  # --operator-m 4
    assert (abs(own["bias"] - exact) < 4 * own["bias_se"]).all()


def test_operator_bias_example_checks_theorem_1_ii(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/operator_bias.py's 'Theorem 1' table said it held Var[Q^min] (ii), but showed
    only Corollary 1's ratio: Theorem 1 (ii) was neither printed nor checked by simulation."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "examples" / "operator_bias.py"
    spec = importlib.util.spec_from_file_location("hc22_operator_bias_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    argv = ["--samples", "20000", "--n-max", "4", "--actions", "3", "--out", str(tmp_path)]
    assert example.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(k for k, line in enumerate(lines) if line.split()[:1] == ["N"] and
              "var_qmin" in line.split())  # fmt: skip
    header = lines[at].split()
    table = lines[at + 1 : at + 5]
    rows = [dict(zip(header, map(float, line.split()), strict=True)) for line in table]
    for row in rows:  # Lemma 1 (iv): Var of the min of N U(-1, 1) is 4N / ((N+1)^2 (N+2))
        n = row["N"]
        assert row["var_qmin"] == pytest.approx(4 * n / ((n + 1) ** 2 * (n + 2)), abs=1e-4)
        assert abs(row["mc_var_qmin"] - row["var_qmin"]) < 0.01  # SE ~ 0.002 at 20,000 draws


def test_corollary_1s_fixed_budget_is_one_keyword_of_the_closed_forms() -> None:
    """Corollary 1's fair comparison (a budget of samples shared by the N estimators, so each
    one's tau grows as sqrt(N)) was choose_n(split=True) only: the bias and variances in that
    setting had to be rescaled by hand (N * target_variance(M, N), sqrt(N) * bias)."""
    from scipy.special import gamma as gamma_fn

    from maxminq.theory import expected_bias, min_variance, target_variance

    m, n, tau, gamma = 8, 4, 0.5, 0.9
    t = gamma_fn(m + 1) * gamma_fn(1 + 1 / n) / gamma_fn(m + 1 + 1 / n)  # Theorem 1 (i)
    assert expected_bias(m, n, tau, gamma, split=True) == pytest.approx(
        gamma * tau * np.sqrt(n) * (1 - 2 * t), rel=1e-12
    )
    # Corollary 1: Var[Q^min] on the split budget over one estimator's Var[Q] on all of it
    ratio = min_variance(n, tau, split=True) / min_variance(1, tau)
    assert ratio == pytest.approx(12 * n**2 / ((n + 1) ** 2 * (n + 2)), rel=1e-12)
    # N = 1: the target of the max of M U(-tau, tau): variance 4 tau^2 M / ((M+1)^2 (M+2))
    one = 4 * tau**2 * m / ((m + 1) ** 2 * (m + 2))
    assert target_variance(m, 1, tau, 1.0, split=True) == pytest.approx(one, rel=1e-12)
    assert target_variance(m, n, tau, split=True) == pytest.approx(
        n * target_variance(m, n, tau), rel=1e-12
    )
    with pytest.raises(ValueError, match="split must be True or False"):
        expected_bias(m, n, split="yes")
