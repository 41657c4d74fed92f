"""Session 20, second reading of the 'operator of your own' work (tests/test_journey20_bias.py):
a G of one's own through operator_bias, operator_expected_bias and FiniteMDP.learn handles
torch and float32 values and NumPy-only input alike, and the library's own functions are their
operators. Each test here failed before the fix it comes with."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from maxminq import operators
from maxminq.tabular.finite_mdp import random_mdp
from maxminq.theory import operator_bias, operator_expected_bias


def median_np(q: np.ndarray) -> np.ndarray:
    """max_a median_i: NumPy in, NumPy out."""
    return np.median(q, axis=-2).max(axis=-1)


def median_torch_out(q: np.ndarray) -> torch.Tensor:
    """The same G computed with torch: NumPy in, a torch tensor out (odd N: torch's median
    is NumPy's)."""
    return torch.as_tensor(q).median(dim=-2).values.max(dim=-1).values


def median_tensor_only(q: torch.Tensor) -> torch.Tensor:
    """A G written for tensors only (as in a deep agent): NumPy input has no .median."""
    return q.median(dim=-2).values.max(dim=-1).values


def test_the_librarys_own_function_is_its_operator_in_the_bias_functions() -> None:
    """operator_expected_bias(operators.maxmin, ...) said 'no closed form for a G function of
    your own ('maxmin')'; operator_bias(operators.maxmin, c=1) was Python's TypeError, and a c
    per sample for operators.weighted_double_q the 'batch shape (1,)' message fixed for names
    (FiniteMDP.learn already reads a library function as its name)."""
    # Theorem 1 (i) by hand, M = 4, N = 3: 1 - 2 Gamma(5) Gamma(4/3) / Gamma(16/3)
    by_hand = 1.0 - 2.0 * math.gamma(5) * math.gamma(4 / 3) / math.gamma(16 / 3)
    assert operator_expected_bias(operators.maxmin, 4, 3) == pytest.approx(by_hand, abs=1e-12)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="^maxmin takes no parameter 'c'$"):
        operator_bias(operators.maxmin, 4, 3, 1.0, 1.0, 100, rng, c=1.0)
    with pytest.raises(ValueError, match=r"c must be one number here .*got shape \(100,\)"):
        operator_bias(operators.weighted_double_q, 8, 2, 1.0, 1.0, 100, rng, c=np.full(100, 2.0))
    with pytest.raises(ValueError, match="no closed form .*'median_np'"):  # one's own: as before
        operator_expected_bias(median_np, 4, 3)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_learn_takes_a_g_that_returns_torch_tensors_as_operator_bias_does(mode: str) -> None:
    """operator_bias read a G's torch result as NumPy; FiniteMDP.learn passed both shape
    checks, then failed at the first update with td_target's 'must be all torch tensors or all
    NumPy arrays', which named neither G nor what to do. Now it learns what the NumPy G does."""
    mdp = random_mdp(4, 2, np.random.default_rng(0), gamma=0.8, reward_noise=0.5)
    q_star = mdp.q_star()
    steps = 30 if mode == "sync" else 400
    runs = [
        mdp.learn(g, 3, 1, steps, np.random.default_rng(1), mode=mode, q_star=q_star)
        for g in (median_np, median_torch_out)
    ]
    assert np.array_equal(runs[0].q, runs[1].q) and np.array_equal(runs[0].biases, runs[1].biases)
    assert runs[1].q.dtype == np.float64 and runs[1].counts.sum() > 0
    bias = [operator_bias(g, 4, 3, 1.0, 1.0, 500, np.random.default_rng(2)).bias for g in
            (median_np, median_torch_out)]  # fmt: skip
    assert bias[0] == bias[1]


def test_a_g_for_tensors_only_is_a_type_error_naming_it_and_what_it_is_given() -> None:
    """A G written for torch tensors failed inside itself with "'numpy.ndarray' object has no
    attribute 'median'" (operator_bias and learn alike), which said neither which function nor
    that G is given NumPy arrays."""
    rng = np.random.default_rng(0)
    mdp = random_mdp(4, 2, rng, gamma=0.8)
    message = (
        r"^operator 'median_tensor_only' failed on NumPy zeros of shape \(1, 3, 2\): "
        r"AttributeError: .*no attribute 'median' \(G is called as G\(q, \*\*.*\), q a float64 "
        r"NumPy array of shape \(\.\.\., N, A\); .*torch\.as_tensor\(q\)\)$"
    )
    with pytest.raises(TypeError, match=message):
        operator_bias(median_tensor_only, 4, 3, 1.0, 1.0, 100, rng)
    for mode in ("sync", "async"):
        with pytest.raises(TypeError, match=message):
            mdp.learn(median_tensor_only, 3, 1, 10, rng, mode=mode)
    with pytest.raises(ValueError, match=r"^weighted_double_q: c must be > 0"):  # the library's
        mdp.learn(operators.weighted_double_q, 2, 1, 10, rng, operator_kwargs={"c": -1.0})


def test_operator_bias_of_a_low_precision_g_is_the_float64_moments_of_its_values() -> None:
    """A G returning float16 (or float32) values had its moments summed in that precision:
    gamma * z stayed float16, and the bias at 100,000 draws moved by 5e-5 (float32: 3e-8) from
    the same values read as float64. Now both give the float64 statistics of G's values."""

    def half(q: np.ndarray) -> np.ndarray:
        return median_np(q).astype(np.float16)

    def half_as_float64(q: np.ndarray) -> np.ndarray:
        return median_np(q).astype(np.float16).astype(np.float64)

    low, wide = (operator_bias(g, 8, 3, 1.0, 0.9, 100_000, np.random.default_rng(3))
                 for g in (half, half_as_float64))  # fmt: skip
    assert (low.bias, low.bias_se, low.variance) == (wide.bias, wide.bias_se, wide.variance)


def test_bias_table_simulates_the_ms_of_an_iterator() -> None:
    """mc_m=iter([2]) passed the new check on mc_m, which read the iterator to its end, so no
    M was simulated (every Monte-Carlo cell NaN, without a word)."""
    from maxminq.analysis.theory_plots import bias_table

    table = bias_table(4, 3, iter([2]), 100, 0)
    assert table.mc_bias.notna().sum() == 3 and (table[table.M == 2].mc_samples == 100).all()


def test_async_mode_learns_the_operator_a_front_counting_g_computes_in_sync_mode() -> None:
    """Async mode passed one state's (N K, A) values without a batch axis. A G counting axes
    from the front, q.min(axis=1).max(axis=-1) (Maxmin for (states, N, A)), then took the min
    over actions and the max over members: it passed every check and learnt max_i min_a Q^i
    in async mode only (error 5.2 against Maxmin's 0.52 after 20,000 transitions here), while
    sync mode learnt Maxmin. Now both modes learn what operators.maxmin does, bit for bit."""
    mdp = random_mdp(5, 3, np.random.default_rng(0), gamma=0.8, reward_noise=0.5)
    q_star = mdp.q_star()

    def maxmin_front(q: np.ndarray) -> np.ndarray:
        return q.min(axis=1).max(axis=-1)

    own, library = (
        mdp.learn(g, 3, 1, 300, np.random.default_rng(1), mode="async", q_star=q_star)
        for g in (maxmin_front, "maxmin")
    )
    assert np.array_equal(own.q, library.q) and np.array_equal(own.biases, library.biases)
    assert library.counts.sum() == 300


def test_operator_bias_example_names_n_1_once_when_it_is_also_n_max(tmp_path) -> None:
    """--n-max 1 makes N = 1 both ends of the Maxmin column: the example's new 3-SE sentence
    read 'within 3 SE of 0 at N = 1 (+0.000 +- 0.013) and N = 1 (+0.000 +- 0.013)' (2,000
    draws). M = 1, N = 1 is a single U(-1, 1) error, exact bias 0."""
    import contextlib
    import io
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "operator_bias.py"
    main = runpy.run_path(str(script))["main"]
    text = io.StringIO()
    args = ["--actions", "1", "--n-max", "1", "--samples", "200", "--out", str(tmp_path / "b")]
    with contextlib.redirect_stdout(text):
        assert main(args) == 0
    line = next(x for x in text.getvalue().splitlines() if "within 3 SE of 0" in x)
    assert line.startswith("Maxmin's bias is within 3 SE of 0 at N = 1 (")
    assert line.count("N = 1") == 1 and " and N = " not in line


def test_weighted_double_qs_exact_bias_at_a_tau_near_the_largest_double_is_a_number() -> None:
    """operator_expected_bias('weighted_double_q', tau=1e308) was NaN with three warnings
    (tau u overflowed in E[beta]'s integrand: inf / inf), as target_variance warned there
    before 02a47df. By hand: E[beta] = 1 - E[c / (c + tau u)], and the latter is below
    (c / tau) ln(tau / c) ~ 1e-305 here, so the bias is tau (M-1)/(M+1) = 7/9 tau at M = 8."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tau in (1e308, 1.7e308):
            got = operator_expected_bias("weighted_double_q", 8, 2, tau)
            assert got == pytest.approx(7 / 9 * tau, rel=1e-12)
