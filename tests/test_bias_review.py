"""Adversarial review of maxminq as a bias researcher uses it (session 14): the Monte-Carlo
standard errors of ``maxminq.theory`` and the bias example, on the scales a user may pick.

Every expected value here is derived by hand from the law of the sampled errors, not taken
from maxminq: for n i.i.d. values of variance s2 and fourth central moment m4, the standard
error of the mean is sqrt(s2 / n) and that of the sample variance sqrt((m4 - s2^2) / n).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from maxminq import theory


def _max_uniform_variance(m: int, tau: float) -> float:
    """Var of the max of m i.i.d. U(-tau, tau): (2 tau)^2 times that of Beta(m, 1)."""
    return 4.0 * tau**2 * m / ((m + 1) ** 2 * (m + 2))


@pytest.mark.parametrize("tau", [1e-8, 1e-12])
def test_bias_se_survives_a_large_offset(tau: float) -> None:
    """Bias-corrected Q with sigma = 1 and tiny errors: the target sits near -1.42 with a
    spread of about 0.2 tau. The standard error of its mean was taken from raw moments
    (E[Z^2] - E[Z]^2), which cancels every digit of so small a spread: 10x too large at
    tau = 1e-8, noise at 1e-12."""
    samples, m = 20_000, 8
    est = theory.operator_bias(
        "bias_corrected", m, 1, tau, 1.0, samples, np.random.default_rng(0), sigma=1.0
    )
    truth = math.sqrt(_max_uniform_variance(m, tau) / samples)  # Z = max of M errors - const
    assert est.bias_se == pytest.approx(truth, rel=0.05, abs=0)
    assert est.variance == pytest.approx(_max_uniform_variance(m, tau), rel=0.05, abs=0)


# U(-tau, tau): variance tau^2 / 3, fourth central moment tau^4 / 5.
_VAR_SE_UNIT = math.sqrt(1 / 5 - 1 / 9)  # the sample variance's SE times sqrt(n) / tau^2


@pytest.mark.parametrize("tau", [1e-150, 1e-100, 1e70, 1e100, 1e150])
def test_monte_carlo_standard_errors_at_tiny_and_huge_tau(tau: float) -> None:
    """M = N = 1 (one uniform error): every standard error of ``monte_carlo_bias`` is known
    in closed form, and scales with tau. Raw sums of x^2 and x^4 underflowed to 0 below
    tau ~ 1e-75 (a standard error of 0, as if exact) and overflowed to NaN above ~ 1e75."""
    n = 20_000
    est = theory.monte_carlo_bias(1, 1, tau, 1.0, n, np.random.default_rng(1))
    var_se = _VAR_SE_UNIT / math.sqrt(n)  # in units of tau^2
    assert est.bias / tau == pytest.approx(0.0, abs=5 * math.sqrt(1 / 3 / n))
    assert est.bias_se / tau == pytest.approx(math.sqrt(1 / 3 / n), rel=0.05, abs=0)
    assert est.target_variance / tau**2 == pytest.approx(1 / 3, rel=0.05, abs=0)
    assert est.target_variance_se / tau**2 == pytest.approx(var_se, rel=0.1, abs=0)
    assert est.min_variance / tau**2 == pytest.approx(1 / 3, rel=0.05, abs=0)
    assert est.min_variance_se / tau**2 == pytest.approx(var_se, rel=0.1, abs=0)
    # N = 1: the ratio of two independent sample variances of the same law, ~ 1.
    assert est.variance_ratio == pytest.approx(1.0, abs=0.1)
    assert est.variance_ratio_se == pytest.approx(math.sqrt(2) * var_se * 3, rel=0.1, abs=0)


def test_monte_carlo_standard_errors_below_representable_variance() -> None:
    """tau = 1e-200: the variances (~1e-401) are below the smallest double, so they read 0;
    but the bias's standard error (~1e-203) and the variance ratio, a pure number, are
    representable and must not be 0 or NaN."""
    n, tau = 20_000, 1e-200
    est = theory.monte_carlo_bias(1, 1, tau, 1.0, n, np.random.default_rng(2))
    assert est.bias_se / tau == pytest.approx(math.sqrt(1 / 3 / n), rel=0.05, abs=0)
    assert est.variance_ratio == pytest.approx(1.0, abs=0.1)
    assert est.variance_ratio_se == pytest.approx(math.sqrt(2) * _VAR_SE_UNIT * 3 / math.sqrt(n),
                                                  rel=0.1, abs=0)  # fmt: skip


@pytest.mark.parametrize("call", ["monte_carlo_bias", "operator_bias"])
def test_tau_too_large_to_sample_is_a_value_error(call: str) -> None:
    """U(-tau, tau) with 2 tau past the largest double cannot be drawn: NumPy's
    OverflowError ('high - low range exceeds valid bounds') came out of the Monte Carlo;
    a ValueError naming tau now, as for any other bad tau."""
    rng = np.random.default_rng(0)
    args = (8, 4, 1e308, 1.0, 10, rng)
    with pytest.raises(ValueError, match="^tau must be at most 8.988e"):
        if call == "monte_carlo_bias":
            theory.monte_carlo_bias(*args)
        else:
            theory.operator_bias("maxmin", *args)


def test_the_largest_tau_that_can_be_sampled_is_taken() -> None:
    """The limit is inclusive, as its message says ('at most'; it said 'below'): with tau
    half the largest double, 2 tau is still finite and U(-tau, tau) is drawn."""
    limit = np.finfo(np.float64).max / 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor a RuntimeWarning for the variance's inf
        est = theory.monte_carlo_bias(8, 1, limit, 1.0, 10, np.random.default_rng(0))
    assert np.isfinite(est.bias) and abs(est.bias) <= limit
    assert est.target_variance == np.inf  # (tau^2 / 3 is past the largest double)


# --- examples/operator_bias.py ------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


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


# --- the other two examples: bad values and --quick ---------------------------------------------


def _example(name: str, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``examples/<name> --out out ARGS`` (no --quick unless given) as a user runs it."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=out.parent,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


@pytest.mark.parametrize(
    ("name", "option", "value"),
    [
        ("noisy_mountain_car.py", "--runs", "0"),
        ("noisy_mountain_car.py", "--episodes", "0"),
        ("noisy_mountain_car.py", "--sigma2", "-1"),
        ("noisy_mountain_car.py", "--step-sizes", "0"),
        ("noisy_mountain_car.py", "--seed", "-1"),
        ("generalized_q_random_mdp.py", "--reward-noise", "-1"),
        ("generalized_q_random_mdp.py", "--reward-noise", "nan"),
        ("generalized_q_random_mdp.py", "--seed", "-1"),
        ("operator_bias.py", "--seed", "-1"),
    ],
)
def test_examples_refuse_bad_values_in_one_line(
    tmp_path: Path, name: str, option: str, value: str
) -> None:
    """A bad value was a library traceback (UsageError / ValueError, exit status 1) after the
    --out folder had been created; now the usage error naming the option (exit status 2)
    before anything is written."""
    out = tmp_path / "out"
    proc = _example(name, out, option, value)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert option in proc.stderr.splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_quick_keeps_the_values_given(tmp_path: Path) -> None:
    """--quick set the scale and also threw away the values given with it: '--quick --sigma2
    10 --runs 2' ran sigma^2 = 0 and 50 with 5 runs, and said nothing. It now fills in only
    what was not given (as ``maxminq experiment --quick`` does)."""
    out = tmp_path / "mc"
    proc = _example("noisy_mountain_car.py", out, "--quick", "--sigma2", "10", "--runs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = pd.read_csv(out / "mountain_car.csv")
    assert set(raw.sigma2) == {10.0}
    assert set(raw.run) == {0, 1}
    assert raw.episode.max() == 60  # --quick's episodes, as not given
    # One variance: nothing to compare, so no claim about which algorithm the noise hurt
    # least (it printed 'Least affected by the reward noise here: ... (x1.00)').
    assert "Least affected" not in proc.stdout and "relative to" not in proc.stdout


def test_quick_keeps_samples_and_sweeps_given(tmp_path: Path) -> None:
    """As above for operator_bias.py's --samples and generalized_q_random_mdp.py's --sweeps
    (--quick replaced them by 20,000 and 1,000)."""
    out = tmp_path / "bias"
    proc = _example("operator_bias.py", out, "--quick", "--samples", "1000", "--n-max", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1,000 draws per cell" in proc.stdout

    out = tmp_path / "mdp"
    proc = _example("generalized_q_random_mdp.py", out, "--quick", "--sweeps", "300")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert pd.read_csv(out / "errors.csv").sweep.max() == 300


# --- maxminq experiment: an output name taken by a folder ---------------------------------------


@pytest.mark.parametrize(
    ("experiment", "taken", "args"),
    [
        ("toy-mdp", "toy_mdp.csv", ["--runs", "2", "--episodes", "2"]),
        ("toy-mdp", "fig2_toy_mdp_distance.png", ["--runs", "2", "--episodes", "2"]),
        ("mountain-car", "mountain_car_step_sizes.csv",
         ["--runs", "1", "--episodes", "1", "--sigma2", "0", "--step-sizes", "0.02"]),
    ],
)  # fmt: skip
def test_experiment_refuses_a_folder_where_an_output_goes(
    tmp_path: Path, experiment: str, taken: str, args: list[str]
) -> None:
    """A folder named like one of the outputs in --out was found only once the simulation had
    run (minutes at full scale): 'error: OUT/NAME: Is a directory', exit status 1, and for a
    figure or the step-size table the new CSV already written beside it. Now refused before
    any work, as ``maxminq theory`` does: one line naming --out, exit status 2, nothing
    written."""
    out = tmp_path / "out"
    (out / taken).mkdir(parents=True)
    cli = Path(sys.executable).with_name("maxminq")
    proc = subprocess.run(
        [str(cli), "experiment", experiment, "--out", str(out), "--workers", "1",
         "--algorithms", "q_learning", "--no-progress", *args],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "--out" in proc.stderr and taken in proc.stderr
    assert "simulated" not in proc.stdout  # refused before the work
    assert sorted(p.name for p in out.iterdir()) == [taken]  # nothing else written


# --- tabular Generalized Q-learning: the library's own G passed as a function --------------------


@pytest.mark.parametrize("name", ["double_q", "weighted_double_q"])
def test_library_operator_function_learns_as_its_name(name: str) -> None:
    """``generalized_q_learning`` takes 'a key of OPERATORS or a G function'. Passing the
    library's own ``operators.double_q`` skipped van Hasselt's swap: estimator 0 selected
    the action for every update, so each table was updated by another rule than with the
    name 'double_q' (last bias 0.100 against 0.078 on this MDP), and the recorded bias was
    of one role only."""
    from maxminq import operators
    from maxminq.tabular.finite_mdp import random_mdp

    mdp = random_mdp(4, 3, np.random.default_rng(0), gamma=0.8, reward_noise=1.0)
    q_star = mdp.q_star()
    by_name, by_function = (
        mdp.learn(op, 2, 1, 300, np.random.default_rng(1), q_star=q_star, init_scale=1.0)
        for op in (name, operators.OPERATORS[name])
    )
    np.testing.assert_array_equal(by_function.q, by_name.q)
    np.testing.assert_array_equal(by_function.biases, by_name.biases)


# --- theory: arguments of shapes that do not broadcast --------------------------------------------


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda: theory.t_mn([1, 2, 3], [1, 2]), "M, N"),
        (lambda: theory.expected_bias(8, [1, 2], tau=[1.0, 2.0, 3.0]), "N, tau"),
        (lambda: theory.target_variance([1, 2], 3, gamma=[0.5, 0.6, 0.7]), "M, gamma"),
        (lambda: theory.min_variance([1, 2], tau=[1.0, 2.0, 3.0]), "N, tau"),
        (lambda: theory.choose_n([1, 2], target=[0.0, 0.1, 0.2]), "M, target"),
        (
            lambda: theory.monte_carlo_bias(
                [1, 2], [1, 2, 3], 1.0, 1.0, 10, np.random.default_rng(0)
            ),
            "M, N",
        ),  # fmt: skip
        (
            lambda: theory.operator_bias(
                "maxmin", [1, 2], [1, 2, 3], 1.0, 1.0, 10, np.random.default_rng(0)
            ),
            "M, N",
        ),  # fmt: skip
        (lambda: theory.operator_expected_bias("ensemble", 8, [1, 2], [1.0, 2.0, 3.0]), "N, tau"),
    ],
)
def test_theory_names_the_arguments_that_do_not_broadcast(call, names: str) -> None:
    """The module promises 'ValueError naming the argument'; arguments whose shapes do not
    broadcast gave NumPy's 'operands could not be broadcast together with shapes (3,) (2,)'
    (or 'shape mismatch: ... arg 0 ... arg 1'), naming none."""
    with pytest.raises(ValueError, match=f"^{names} must broadcast together, got shapes"):
        call()


def test_choose_n_when_gamma_tau_underflows() -> None:
    """Theorem 1's bias is gamma tau (1 - 2 t_MN): which N is least biased does not depend on
    gamma tau > 0. choose_n multiplied gamma by tau first, so a product below the smallest
    double (1e-200 x 1e-200) made every bias 0 and answered N = 1, as for gamma = 0."""
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200) == 4  # as at gamma tau = 1 (README)
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, split=True) == 4
    # a target far below every bias (about -1e-400 at most): the most negative, N = n_max
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, target=-1e-300, n_max=50) == 50
    assert theory.choose_n(8, tau=1e-200, gamma=1e-200, target=1e-300, n_max=50) == 1
    assert theory.choose_n(8, tau=1e-200, gamma=0.0) == 1  # gamma = 0: every N unbiased


def test_operator_bias_memory_is_bounded_in_n_and_m() -> None:
    """The operator-bias example's own sampler drew 50,000 samples a chunk whatever N and M:
    50,000 x N x M doubles, 0.9 GB of peak memory at M = 200, N = 8 and 11 GB at M = 1,000,
    N = 20. It now calls ``theory.operator_bias``, whose chunks hold about 2^20 errors."""
    import tracemalloc

    m, n, samples = 500, 8, 20_000  # 8e7 errors: 640 MB in one chunk of 20,000 samples
    tracemalloc.start()
    try:
        est = theory.operator_bias("maxmin", m, n, 1.0, 1.0, samples, np.random.default_rng(0))
        mean, se = est.bias, est.bias_se
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6, f"peak {peak / 1e6:.0f} MB"
    # and still Theorem 1's mean: 1 - 2 Gamma(M+1) Gamma(1+1/N) / Gamma(M+1+1/N), by log-gamma
    from scipy.special import gammaln

    exact = 1 - 2 * math.exp(gammaln(m + 1) + gammaln(1 + 1 / n) - gammaln(m + 1 + 1 / n))
    assert abs(mean - exact) < 5 * se


@pytest.mark.parametrize("experiment", ["toy-mdp", "mountain-car"])
def test_experiment_update_members_no_algorithm_can_use(tmp_path: Path, experiment: str) -> None:
    """--update-members 2 with only one-table algorithms (here Double Q) was ignored without a
    word, while settings.json recorded update_members 2 (the Python API and ``maxminq train
    --agent dqn --update-members 2`` refuse it). Now a one-line error naming the option."""
    out = tmp_path / "out"
    cli = Path(sys.executable).with_name("maxminq")
    proc = subprocess.run(
        [str(cli), "experiment", experiment, "--out", str(out), "--runs", "1", "--episodes", "1",
         "--algorithms", "double_q", "q_learning", "--update-members", "2", "--workers", "1",
         "--no-progress"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "--update-members" in proc.stderr
    assert not out.exists()
