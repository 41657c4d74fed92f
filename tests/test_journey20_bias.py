"""Session 20, a researcher studying estimation bias: operators as pure functions, Theorem 1 /
Corollary 1, an operator of their own, Theorem 2 on random MDPs. Each test here failed
before the fix it comes with."""

from __future__ import annotations

import numpy as np
import pytest
from docs_text import section
from scipy import integrate

from maxminq.tabular.finite_mdp import random_mdp
from maxminq.theory import operator_bias, operator_expected_bias


def lowest(q: np.ndarray) -> np.ndarray:
    """A G of one's own: the smallest of all N x A values (by hand: the minimum of N M
    independent U(-tau, tau) errors has mean -tau (NM - 1) / (NM + 1))."""
    return q.min(axis=(-2, -1))


def test_operator_bias_takes_a_g_function_of_ones_own() -> None:
    """operator_bias refused any G but the library's, by name ('operator_params: unknown
    operator <function lowest ...>'), though FiniteMDP.learn takes one."""
    est = operator_bias(lowest, 4, 3, 2.0, 0.5, 20_000, np.random.default_rng(0))
    exact = -0.5 * 2.0 * (12 - 1) / (12 + 1)
    assert est.samples == 20_000
    assert abs(est.bias - exact) < 4 * est.bias_se
    assert 0 < est.bias_se < 0.01


def test_a_g_function_of_the_wrong_shape_is_refused_by_name() -> None:
    """A G that also reduced the samples (one number for all) is a ValueError naming G and
    the shapes, before any sampling or learning: FiniteMDP.learn failed mid-run with
    'invalid index to scalar variable'."""
    rng = np.random.default_rng(0)

    def everything(q: np.ndarray) -> float:
        return float(np.max(q))

    with pytest.raises(ValueError, match=r"'everything' must map q of shape \(\.\.\., N, A\)"):
        operator_bias(everything, 4, 3, 1.0, 1.0, 100, rng)
    mdp = random_mdp(4, 2, rng, gamma=0.8)
    with pytest.raises(ValueError, match=r"'everything' .* got shape \(\) from \(1, 3, 2\)"):
        mdp.learn(everything, 3, 1, 10, rng)


def test_operator_expected_bias_says_it_has_no_closed_form_for_ones_own_g() -> None:
    with pytest.raises(ValueError, match="no closed form .*'lowest'.* operator_bias"):
        operator_expected_bias(lowest, 4, 3)


def _max_of_medians_of_3(m: int) -> float:
    """E[max of m medians of 3 U(-1, 1)], by hand: one median's CDF is 3F^2 - 2F^3 with
    F = (x + 1) / 2, and E[max] = 1 - int_{-1}^{1} CDF^m dx."""

    def cdf(x: float) -> float:
        f = (x + 1.0) / 2.0
        return 3.0 * f * f - 2.0 * f**3

    return 1.0 - integrate.quad(lambda x: cdf(x) ** m, -1.0, 1.0)[0]


def test_docs_own_operator_example_runs_and_its_numbers_are_what_it_gives() -> None:
    """The 'An operator of your own' block of docs/operators-and-theory.md runs (it needs
    operator_bias to take a G function), and the numbers the page quotes are its own."""
    text = section("operators-and-theory", "An operator of your own")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(block, scope)  # noqa: S102 (the docs' own example)
    est, res, mdp = scope["est"], scope["res"], scope["mdp"]
    exact = _max_of_medians_of_3(8)
    assert abs(est.bias - exact) < 4 * est.bias_se
    assert bool(scope["equal"]) and bool(scope["lipschitz"])
    q_star = mdp.q_star()
    assert res.errors[-1] < 0.05 * np.abs(q_star).max()
    words = " ".join(text.split())
    assert f"from {res.errors[0]:.2f} at the first record (sweep {res.error_updates[0]})" in words
    assert f"to {res.errors[-1]:.3f} at sweep 5,000" in words
    assert f"max |Q*| = {np.abs(q_star).max():.2f}" in words
    assert f"`est.bias` = {est.bias:.3f} +- {est.bias_se:.3f} (exactly {exact:.3f}" in words
    assert f"Ensemble's {operator_expected_bias('ensemble', 8, 3):.3f}" in words
    assert f"Maxmin's {operator_expected_bias('maxmin', 8, 3):.3f}" in words


def test_operator_bias_names_a_per_sample_parameter_as_such() -> None:
    """A c per sample was refused as not broadcasting 'to the batch shape (1,)': the shape of
    the check's own zeros, not of anything the caller passed."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"c must be one number here .*got shape \(100,\)"):
        operator_bias("weighted_double_q", 8, 2, 1.0, 1.0, 100, rng, c=np.full(100, 2.0))


def _operator_bias_example(tmp_path, *args: str) -> str:
    """examples/operator_bias.py run in this process with ``args``; its stdout."""
    import contextlib
    import io
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "operator_bias.py"
    main = runpy.run_path(str(script))["main"]
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main([*args, "--out", str(tmp_path / "bias")]) == 0
    return text.getvalue()


def test_operator_bias_example_claims_a_sign_only_where_the_sample_shows_one(tmp_path) -> None:
    """M = 5, N = 3: the exact bias is -0.0014 (1 - 2 t_53, t_53 = Gamma(6) Gamma(4/3) /
    Gamma(19/3)); at 4,000 draws seed 1 drew -0.009 +- 0.005 and the example printed 'Maxmin
    ... under-estimates at N = 3 (-0.009)' on the sign alone (the examples' README: a sentence
    about an effect only when the numbers support it)."""
    text = _operator_bias_example(
        tmp_path, "--actions", "5", "--n-max", "3", "--samples", "4000", "--seed", "1"
    )
    assert "under-estimates" not in text
    assert "Maxmin's bias is within 3 SE of 0 at N = 3 (-0.009 +- 0.005)" in text
    assert "Var[Q^min] < Var[Q] for no N in 1..3 (from N = 8 on)." in text


@pytest.mark.parametrize(
    ("name", "n", "params"),
    [
        ("ensemble", 3, {}),
        ("weighted_double_q", 2, {"c": 1.0}),
        ("bias_corrected", 1, {"sigma": 1}),
    ],
)
def test_operator_expected_bias_over_no_m_is_empty_as_for_the_other_operators(name, n, params):
    """An empty M gave NumPy's 'cannot call `vectorize` on size 0 inputs unless `otypes` is
    set' for the operators computed by quadrature; expected_bias, operator_bias and the
    closed-form operators give an empty array."""
    out = operator_expected_bias(name, np.array([], dtype=int), n, **params)
    assert out.shape == (0,) and out.dtype == np.float64
    both = operator_expected_bias(name, [1, 2], n, **params)  # and a non-empty M as before:
    # M = 1 has no max to bias (bias_corrected: no correction either, E[max of 1 N(0,1)] = 0)
    assert both.shape == (2,) and both[0] == 0.0 and both[1] != 0.0


def test_bias_table_refuses_an_m_to_simulate_that_it_has_no_row_for() -> None:
    """bias_table(4, 3, mc_m=[8], ...) left every Monte-Carlo cell empty without a word (the
    command line checks --mc-m against --m-max; the Python function did not)."""
    from maxminq.analysis.theory_plots import bias_table

    with pytest.raises(ValueError, match=r"mc_m must hold whole numbers in 1..m_max \(4\), got 8"):
        bias_table(4, 3, [2, 8], 100, 0)
    with pytest.raises(ValueError, match="mc_m must be a sequence of M values"):
        bias_table(4, 3, 2, 100, 0)
    table = bias_table(4, 3, [2], 100, 0)
    assert table[table.M == 2].mc_samples.eq(100).all() and table.mc_bias.notna().sum() == 3


def test_async_learning_gives_a_g_of_ones_own_a_batch_axis_too() -> None:
    """Async mode gave G one state's (N K, A) values with no batch axis; a G that counted
    axes from the front passed the batched check and failed at the first transition with
    NumPy's 'axis 1 is out of bounds for array of dimension 1'. (Second reading: async mode
    now passes one state as a batch of one, (1, N K, A), so such a G learns there as in sync
    mode; tests/test_reading20_bias.py.)"""
    rng = np.random.default_rng(0)
    mdp = random_mdp(4, 2, rng, gamma=0.8)

    def front(q: np.ndarray) -> np.ndarray:
        return np.median(q, axis=1).max(axis=1)

    def end(q: np.ndarray) -> np.ndarray:
        return np.median(q, axis=-2).max(axis=-1)

    for mode in ("sync", "async"):
        runs = [mdp.learn(g, 3, 1, 10, np.random.default_rng(1), mode=mode) for g in (front, end)]
        assert runs[0].q.shape == (3, 4, 2) and np.array_equal(runs[0].q, runs[1].q)


def test_closed_form_variances_past_the_largest_double_are_inf_without_a_warning() -> None:
    """target_variance and min_variance at tau = 1e200 (tau^2 = 1e400, past the largest double)
    are inf, as the Monte Carlo's variance there, but warned 'overflow encountered in square'
    (an error under -W error); ordinary tau keeps its value: Theorem 1 (ii) at N = 3, tau = 2
    is 4 * 3 * 4 / (16 * 5) = 0.6."""
    import warnings

    from maxminq.theory import min_variance, target_variance

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert target_variance(8, 4, tau=1e200) == np.inf
        assert min_variance(4, 1e200) == np.inf
        assert min_variance(3, 2.0) == pytest.approx(0.6, rel=1e-15)
