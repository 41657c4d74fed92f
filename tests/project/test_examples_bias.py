"""examples/operator_bias.py as a user runs it: its tables, standard errors and claims at
extreme scales, and the values it refuses."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from scipy import integrate, stats

EXAMPLES = REPO / "examples"


def _operator_bias_example(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``examples/operator_bias.py --quick --out out ARGS`` as a user runs it."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "operator_bias.py"), "--quick", "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=out.parent,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


def _expected_max_std_normal(m: int) -> float:
    """E[max of m i.i.d. N(0, 1)] = int x m phi(x) Phi(x)^(m-1) dx, by scipy's quadrature."""
    value, _ = integrate.quad(
        lambda x: x * m * stats.norm.pdf(x) * stats.norm.cdf(x) ** (m - 1), -np.inf, np.inf
    )
    return float(value)


def test_operator_bias_example_prints_small_errors_in_units_of_tau(tmp_path):
    """At --tau 1e-4 every printed bias was +0.000 (3 decimals of numbers of order 1e-4), so the
    table and the 'over-estimates at N = 1 (+0.000)' sentence said nothing; now they are in
    units of tau, and the exact values are the hand-derived ones for M = 2."""
    import subprocess
    import sys

    script = REPO / "examples" / "operator_bias.py"
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


def test_operator_bias_example_theorem_1_table_at_a_huge_tau(tmp_path):
    """At --tau 1e200 the Theorem 1 table printed the target variance as inf (tau^2 overflows
    a double); in units of tau^2 it is 4 M / ((M+1)^2 (M+2)) = 32/810 = 0.0395 for N = 1,
    M = 8 (the max of 8 uniforms), and the sampled variance near it."""
    import os
    import subprocess
    import sys

    script = REPO / "examples" / "operator_bias.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--samples", "20000", "--n-max", "1",
         "--tau", "1e200", "--out", str(tmp_path / "bias")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.split("Maxmin, Theorem 1")[1].splitlines()
    n, bias, target_var, mc_var, _, _, ratio = lines[2].split()  # (ii)'s columns
    assert (n, bias, target_var, ratio) == ("1", "0.7778", "0.0395", "1.0000")
    assert abs(float(mc_var) - 32 / 810) < 0.004  # 20,000 draws: SE of the variance ~ 0.0003


def test_operator_bias_example_corrects_with_the_errors_sd_at_any_tau(tmp_path: Path) -> None:
    """The example gives Bias-corrected Q 'the errors' standard deviation', tau / sqrt(3), but
    kept 1 / sqrt(3) whatever --tau was: at --tau 5 it reported +3.07 where the correction
    with the true sd leaves 5 x (-0.044) = -0.22."""
    out = tmp_path / "bias"
    proc = _operator_bias_example(out, "--tau", "5")
    assert proc.returncode == 0, proc.stderr
    row = pd.read_csv(out / "operator_bias.csv").set_index("operator").loc["bias_corrected"]
    m, tau = 8, 5.0
    exact = tau * ((m - 1) / (m + 1) - _expected_max_std_normal(m) / math.sqrt(3))  # -0.221
    assert row.exact_bias == pytest.approx(exact, rel=1e-6)
    assert abs(row.mc_bias - exact) < 5 * row.mc_se
    assert f"sigma={tau / math.sqrt(3):.3g}" in proc.stdout


def test_operator_bias_example_refuses_one_sample(tmp_path: Path) -> None:
    """One draw per cell has no standard error: it printed SE 0 and 'Largest |Monte Carlo -
    exact| / SE: inf ... some cells differ by more than 4 SE'."""
    out = tmp_path / "bias"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "operator_bias.py"), "--samples", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "--samples" in proc.stderr.splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("tau", ["inf", "1e309", "nan", "1e308"])
def test_operator_bias_example_refuses_a_tau_it_cannot_sample(tmp_path: Path, tau: str) -> None:
    """--tau inf or 1e308 (2 tau past the largest double) ended in NumPy's OverflowError
    traceback; now a usage error naming --tau, before anything is written."""
    out = tmp_path / "bias"
    proc = _operator_bias_example(out, "--tau", tau)
    assert proc.returncode == 2
    assert "--tau" in proc.stderr.splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("tau", ["1e-200", "1e200"])
def test_operator_bias_example_standard_errors_at_extreme_tau(tmp_path: Path, tau: str) -> None:
    """Sums of g^2 underflowed to 0 at --tau 1e-200 (SE 0: 'Largest |Monte Carlo - exact| /
    SE: inf; some cells differ by more than 4 SE') and overflowed at 1e200 (a traceback).
    The bias and its standard error scale with tau, so the verdict must be the one at tau = 1."""
    out = tmp_path / "bias"
    proc = _operator_bias_example(out, "--tau", tau)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out / "operator_bias.csv")
    scale = float(tau)
    assert (table.mc_se > 0).all() and np.isfinite(table.mc_se).all()
    # Maxmin N = 1 is the max of 8 uniforms: SE sqrt(Var / n), Var = 4 tau^2 M/((M+1)^2 (M+2)).
    row = table[(table.operator == "maxmin") & (table.N == 1)].iloc[0]
    assert row.mc_se / scale == pytest.approx(
        math.sqrt(4 * 8 / (81 * 10) / 20_000), rel=0.05, abs=0
    )
    assert "every cell within 4 SE of its exact value" in proc.stdout


def test_operator_bias_example_checks_theorem_1_ii(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/operator_bias.py's 'Theorem 1' table said it held Var[Q^min] (ii), but showed
    only Corollary 1's ratio: Theorem 1 (ii) was neither printed nor checked by simulation."""
    import importlib.util

    path = REPO / "examples" / "operator_bias.py"
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


def test_operator_bias_example_names_n_1_once_when_it_is_also_n_max(tmp_path) -> None:
    """--n-max 1 makes N = 1 both ends of the Maxmin column: the example's new 3-SE sentence
    read 'within 3 SE of 0 at N = 1 (+0.000 +- 0.013) and N = 1 (+0.000 +- 0.013)' (2,000
    draws). M = 1, N = 1 is a single U(-1, 1) error, exact bias 0."""
    import contextlib
    import io
    import runpy

    script = REPO / "examples" / "operator_bias.py"
    main = runpy.run_path(str(script))["main"]
    text = io.StringIO()
    args = ["--actions", "1", "--n-max", "1", "--samples", "200", "--out", str(tmp_path / "b")]
    with contextlib.redirect_stdout(text):
        assert main(args) == 0
    line = next(x for x in text.getvalue().splitlines() if "within 3 SE of 0" in x)
    assert line.startswith("Maxmin's bias is within 3 SE of 0 at N = 1 (")
    assert line.count("N = 1") == 1 and " and N = " not in line
