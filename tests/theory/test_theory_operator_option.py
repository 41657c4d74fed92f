"""``maxminq theory --operator``: a G of one's own or a library operator with other parameters
drawn beside Maxmin, its errors in one line leaving nothing, and G parameters named like the
theory's own (``tau``) in the command and in ``operator_bias``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from user_modules import user_module

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
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS) as name:
        yield name


THEORY = ["theory", "--m-max", "8", "--n-max", "3", "--samples", "400"]


THEORY += ["--variance-samples", "100", "--operator-m", "4", "--no-progress"]


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
