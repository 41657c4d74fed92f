"""The Generalized Q-learning G functions against naive per-sample Python loops."""

from __future__ import annotations

import math
import zlib
from functools import cache

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import erf

from maxminq import operators as ops


def naive_q_learning(rows: list[list[float]]) -> float:
    return max(rows[0])


def naive_maxmin(rows: list[list[float]]) -> float:
    actions = range(len(rows[0]))
    return max(min(row[a] for row in rows) for a in actions)


def naive_mean_max(rows: list[list[float]]) -> float:
    actions = range(len(rows[0]))
    return max(sum(row[a] for row in rows) / len(rows) for a in actions)


def naive_historical_best(rows: list[list[float]]) -> float:
    return max(max(row) for row in rows)


def _first_argmax(values: list[float]) -> int:
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def _first_argmin(values: list[float]) -> int:
    return _first_argmax([-v for v in values])


def naive_double_q(rows: list[list[float]]) -> float:
    return rows[1][_first_argmax(rows[0])]


def naive_weighted_double_q(rows: list[list[float]], c: float = 1.0) -> float:
    u, v = rows
    best, worst = _first_argmax(u), _first_argmin(u)
    gap = abs(v[best] - v[worst])
    beta = gap / (c + gap)
    return beta * u[best] + (1 - beta) * v[best]


# E[max of M i.i.d. N(0, 1)]: M = 2, 3 in closed form (1/sqrt(pi), 3/(2 sqrt(pi))); larger M
# by a trapezoid rule on a fine grid (independent of the quadrature in operators.py); checked
# against Harter's (1961) table in test_expected_max_normal_table.
@cache
def naive_expected_max_normal(m: int) -> float:
    if m == 2:
        return 1 / math.sqrt(math.pi)
    if m == 3:
        return 1.5 / math.sqrt(math.pi)
    x = np.linspace(-12, 12, 200_001)
    pdf = np.exp(-(x**2) / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    y = x * m * pdf * cdf ** (m - 1)
    return float(np.sum((y[1:] + y[:-1]) / 2) * (x[1] - x[0]))


def naive_bias_corrected(rows: list[list[float]], sigma: float) -> float:
    return max(rows[0]) - sigma * naive_expected_max_normal(len(rows[0]))


CASES = [
    # name, naive reference, member counts to try
    ("q_learning", naive_q_learning, [1]),
    ("maxmin", naive_maxmin, [1, 2, 3, 5]),
    ("ensemble", naive_mean_max, [1, 2, 4]),
    ("averaged", naive_mean_max, [1, 3, 5]),
    ("historical_best", naive_historical_best, [1, 2, 6]),
    ("double_q", naive_double_q, [2]),
    ("weighted_double_q", naive_weighted_double_q, [2]),
]


LEADING = [(), (7,), (3, 4), (2, 3, 2)]


def _loop(reference, q: np.ndarray) -> np.ndarray:
    lead = q.shape[:-2]
    out = np.empty(lead)
    for idx in np.ndindex(lead):
        out[idx] = reference(q[idx].tolist())
    return out


ASSUMPTION_1 = ["q_learning", "maxmin", "ensemble", "averaged", "historical_best"]


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def stacked(draw, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Two stacks Q, Q' of the same shape (N, A); N = 1 for Q-learning."""
    n = 1 if name == "q_learning" else draw(st.integers(1, 5))
    a = draw(st.integers(1, 6))
    q = draw(arrays(np.float64, (n, a), elements=finite))
    # Q' is either independent or a small perturbation of Q (where violations would hide).
    if draw(st.booleans()):
        q2 = draw(arrays(np.float64, (n, a), elements=finite))
    else:
        q2 = q + draw(arrays(np.float64, (n, a), elements=st.floats(-1e-3, 1e-3)))
    return q, q2


_TWO_TABLES = [[1.0, 5.0, 2.0], [3.0, 2.0, 4.0]]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize(("name", "reference", "members"), CASES)
def test_operator_matches_naive_loop(backend, name, reference, members) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{name}/{backend}".encode()))
    for lead in LEADING:
        for n in members:
            for a in (1, 2, 5):
                q = rng.normal(size=(*lead, n, a))
                # Integer-valued copies create exact ties, which the argmax rules must break
                # like the naive loops (first maximal action).
                for values in (q, np.round(q)):
                    expected = _loop(reference, values)
                    x = values if backend == "numpy" else torch.from_numpy(values.copy())
                    before = x.copy() if backend == "numpy" else x.clone()
                    got = ops.OPERATORS[name](x)
                    if backend == "torch":
                        assert isinstance(got, torch.Tensor)
                    else:  # NumPy reductions return a NumPy scalar for 0-d results
                        assert isinstance(got, np.ndarray | np.generic)
                    assert tuple(got.shape) == lead
                    got = got if backend == "numpy" else got.numpy()
                    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
                    # Pure: the input is left untouched.
                    assert bool((before == x).all())


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bias_corrected_matches_naive(backend) -> None:
    rng = np.random.default_rng(5)
    for a in (1, 2, 3, 6):
        q = rng.normal(size=(4, 3, 1, a))
        sigma = np.abs(rng.normal(size=(4, 3)))
        expected = np.array(
            [
                [naive_bias_corrected(q[i, j].tolist(), sigma[i, j]) for j in range(3)]
                for i in range(4)
            ]
        )
        if backend == "torch":
            got = ops.bias_corrected(torch.from_numpy(q), torch.from_numpy(sigma)).numpy()
        else:
            got = ops.bias_corrected(q, sigma)
        np.testing.assert_allclose(got, expected, atol=1e-6)
    # sigma = 0 is Q-learning; a scalar sigma broadcasts.
    q = rng.normal(size=(5, 1, 4))
    np.testing.assert_allclose(ops.bias_corrected(q, 0.0), ops.q_learning(q))
    with pytest.raises(ValueError, match="give sigma"):  # no silent Q-learning
        ops.bias_corrected(q)
    np.testing.assert_allclose(
        ops.bias_corrected(q, 0.5), ops.q_learning(q) - 0.5 * naive_expected_max_normal(4), 1e-6
    )


def test_bias_corrected_with_a_constant_sigma_has_a_shifted_fixed_point() -> None:
    # The docstring's claim: with M actions everywhere and gamma < 1, value iteration with
    # G = bias_corrected converges to Q* - gamma sigma E_M / (1 - gamma), not to Q*.
    rng = np.random.default_rng(11)
    s_count, m, gamma, sigma = 5, 3, 0.9, 0.2
    p = rng.dirichlet(np.ones(s_count), size=(s_count, m))  # P[s, a, s']
    r = rng.uniform(-1, 1, size=(s_count, m))
    q_star = np.zeros((s_count, m))
    q_bc = np.zeros((s_count, m))
    for _ in range(600):  # 0.9^600 ~ 1e-28
        q_star = r + gamma * p @ q_star.max(axis=1)
        q_bc = r + gamma * p @ ops.bias_corrected(q_bc[:, None, :], sigma)
    shift = gamma * sigma * 1.5 / math.sqrt(math.pi) / (1 - gamma)  # E_3 = 3 / (2 sqrt(pi))
    np.testing.assert_allclose(q_bc, q_star - shift, atol=1e-9)
    assert shift > 1.0  # no small effect: larger than the rewards themselves
    # Assumption 1 (i) fails: G of one table is not its max.
    assert ops.bias_corrected(np.array([[1.0, 3.0]]), sigma) == pytest.approx(
        3.0 - sigma / math.sqrt(math.pi)
    )


def test_expected_max_normal_table() -> None:
    # Harter (1961), expected values of normal order statistics, largest of n = 4, 5, 6, 10.
    table = {4: 1.02938, 5: 1.16296, 6: 1.26721, 10: 1.53875}
    for m, value in table.items():
        assert naive_expected_max_normal(m) == pytest.approx(value, abs=1e-5)
        assert ops.expected_max_standard_normal(m) == pytest.approx(value, abs=1e-5)
    assert ops.expected_max_standard_normal(1) == 0.0


def test_weighted_double_q_limits_and_c() -> None:
    rng = np.random.default_rng(2)
    q = rng.normal(size=(50, 2, 4))
    # Huge c: beta -> 0, Double Q. Tiny c: beta -> 1, Q-learning on member 0.
    np.testing.assert_allclose(ops.weighted_double_q(q, c=1e12), ops.double_q(q), atol=1e-9)
    np.testing.assert_allclose(
        ops.weighted_double_q(q, c=1e-12), ops.q_learning(q[:, :1]), atol=1e-9
    )
    for c in (0.1, 3.0):
        expected = [naive_weighted_double_q(s.tolist(), c) for s in q]
        np.testing.assert_allclose(ops.weighted_double_q(q, c=c), expected, atol=1e-12)


def test_torch_gradients_flow_and_dtype_is_kept() -> None:
    q = torch.randn(6, 3, 4, dtype=torch.float32, requires_grad=True)
    out = ops.maxmin(q)
    assert out.dtype == torch.float32
    out.sum().backward()
    # Each sample's gradient reaches exactly one entry (the max over actions of the mins).
    assert torch.equal(q.grad.reshape(6, -1).sum(dim=1), torch.ones(6))


def test_bootstrap_dispatch_and_td_target() -> None:
    q = np.array([[[1.0, 5.0], [3.0, 2.0]]])
    assert ops.bootstrap("maxmin", q)[0] == 2.0
    assert ops.bootstrap("ensemble", q)[0] == 3.5
    assert ops.bootstrap("weighted_double_q", q, c=1.0)[0] == pytest.approx(
        naive_weighted_double_q(q[0].tolist(), 1.0)
    )
    with pytest.raises(ValueError, match="unknown operator"):
        ops.bootstrap("nope", q)
    r = np.array([1.0, 1.0, 1.0])
    done = np.array([0.0, 1.0, 0.0])
    g = np.array([2.0, 2.0, -4.0])
    np.testing.assert_allclose(ops.td_target(r, 0.5, done, g), [2.0, 1.0, -1.0])
    t = ops.td_target(torch.tensor(r), 0.5, torch.tensor(done), torch.tensor(g))
    np.testing.assert_allclose(t.numpy(), [2.0, 1.0, -1.0])


@pytest.mark.parametrize(
    ("name", "shape", "match"),
    [
        ("maxmin", (4,), r"\(\.\.\., N, A\)"),
        ("q_learning", (3, 2, 4), "exactly 1"),
        ("double_q", (3, 3, 4), "exactly 2"),
        ("weighted_double_q", (1, 4), "exactly 2"),
        ("bias_corrected", (2, 2, 3), "exactly 1"),
        # An empty member or action axis: was NumPy's "zero-size array to reduction ..." or
        # "attempt to get argmax of an empty sequence", naming no operator.
        ("maxmin", (3, 0), r"^maxmin: q needs at least one estimator and one action"),
        ("ensemble", (5, 0, 4), r"^ensemble: q needs at least one estimator"),
        ("q_learning", (1, 0), r"^q_learning: q needs at least one estimator and one action"),
        ("double_q", (2, 0), r"^double_q: q needs"),
        ("weighted_double_q", (7, 2, 0), r"^weighted_double_q: q needs"),
        ("historical_best", (0, 3), r"^historical_best: q needs"),
    ],
)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_operator_shape_errors(name, shape, match, backend) -> None:
    q = np.zeros(shape) if backend == "numpy" else torch.zeros(shape)
    with pytest.raises(ValueError, match=match):
        ops.OPERATORS[name](q)


def test_an_empty_batch_is_not_an_empty_axis() -> None:
    """A batch of zero samples is fine (zero bootstrap values), only N = 0 or A = 0 is not."""
    assert ops.maxmin(np.zeros((0, 2, 3))).shape == (0,)
    assert tuple(ops.double_q(torch.zeros((0, 2, 3))).shape) == (0,)


def test_parameter_errors() -> None:
    q = np.zeros((2, 2, 3))
    with pytest.raises(ValueError, match="c must be > 0"):
        ops.weighted_double_q(q, c=0.0)
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        ops.bias_corrected(np.zeros((2, 1, 3)), np.array([0.1, -0.1]))
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        ops.bias_corrected(np.zeros((2, 1, 3)), np.nan)
    # An infinite sigma subtracted inf: a -inf bootstrap (the CLI refused it, the API did not).
    with pytest.raises(ValueError, match="sigma must be finite"):
        ops.bias_corrected(np.zeros((2, 1, 3)), np.array([0.1, np.inf]))
    with pytest.raises(ValueError, match="sigma must be finite"):
        ops.bias_corrected(torch.zeros((2, 1, 3)), torch.tensor(float("inf")))
    with pytest.raises(TypeError, match="NumPy array or a torch tensor, got list"):
        ops.maxmin([[1.0, 2.0], [3.0, 4.0]])
    # A parameter array must broadcast to the batch shape (2,): one of shape (5, 2) made a
    # (5, 2) result from a batch of 2 samples, silently.
    for backend in (np.asarray, torch.as_tensor):
        with pytest.raises(ValueError, match=r"sigma must be a number or broadcast to .*\(2,\)"):
            ops.bias_corrected(backend(np.zeros((2, 1, 3))), backend(np.ones((5, 2))))
        with pytest.raises(ValueError, match=r"c must be a number or broadcast to"):
            ops.weighted_double_q(backend(np.zeros((2, 2, 3))), c=backend(np.ones((3, 1))))
    # An array c (one per sample) is checked element-wise (was NumPy's "truth value of an
    # array is ambiguous"), and True or "0.5" are not numbers (True was read as 1).
    qs = np.random.default_rng(3).normal(size=(4, 2, 3))
    cs = np.array([0.5, 1.0, 2.0, 4.0])
    expected = [naive_weighted_double_q(qs[i].tolist(), cs[i]) for i in range(4)]
    np.testing.assert_allclose(ops.weighted_double_q(qs, c=cs), expected, atol=1e-12)
    with pytest.raises(ValueError, match="c must be > 0 everywhere"):
        ops.weighted_double_q(q, c=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="sigma must be a number"):
        ops.bias_corrected(np.zeros((2, 1, 3)), True)
    with pytest.raises(ValueError, match="c must be a number"):
        ops.weighted_double_q(q, c="0.5")
    # A parameter array of the other backend: NumPy's "Concatenation operation is not
    # implemented", torch's "unsupported operand type", or a torch result from NumPy q.
    param = np.array([0.1, 0.2])
    for q_of, param_of, like in (
        (torch.as_tensor, np.asarray, "a torch tensor"),
        (np.asarray, torch.as_tensor, "a NumPy array"),
    ):
        with pytest.raises(ValueError, match=f"sigma must be a number or {like}, as q is"):
            ops.bias_corrected(q_of(np.zeros((2, 1, 3))), param_of(param))
        with pytest.raises(ValueError, match=f"weighted_double_q: c must be a number or {like}"):
            ops.weighted_double_q(q_of(np.zeros((2, 2, 3))), c=param_of(param))
    with pytest.raises(ValueError, match="m must be a whole number >= 1"):
        ops.expected_max_standard_normal(0)
    # A fractional m has no meaning (2.5 returned a number between m = 2 and m = 3).
    with pytest.raises(ValueError, match="m must be a whole number >= 1, got 2.5"):
        ops.expected_max_standard_normal(2.5)
    # A misspelt name is an unknown operator (was a bare KeyError: 'maxmn').
    with pytest.raises(ValueError, match="operator_params: unknown operator 'maxmn'"):
        ops.operator_params("maxmn")


@pytest.mark.parametrize("name", ASSUMPTION_1)
@settings(max_examples=100, deadline=None, derandomize=True)
@given(data=st.data())
def test_assumption_1_holds(name, data) -> None:
    op = ops.OPERATORS[name]
    q, q2 = data.draw(stacked(name))
    # (i) identical members: G is the max over actions.
    n = q.shape[0]
    same = np.repeat(q[:1], n, axis=0)
    assert op(same) == pytest.approx(np.max(q[0]), rel=1e-12, abs=1e-12)  # mean rounding
    # (ii) G is 1-Lipschitz in the max norm.
    assert abs(op(q) - op(q2)) <= np.max(np.abs(q - q2)) + 1e-9


def test_double_q_violates_assumption_1_ii_but_satisfies_i() -> None:
    # Swapping a tiny gap in the selector flips the selected action: G jumps by 10.
    eps = 1e-6
    q = np.array([[0.0, eps], [0.0, 10.0]])
    q2 = np.array([[eps, 0.0], [0.0, 10.0]])
    gap = abs(ops.double_q(q) - ops.double_q(q2))
    assert gap == pytest.approx(10.0) and gap > np.max(np.abs(q - q2))
    wgap = abs(ops.weighted_double_q(q) - ops.weighted_double_q(q2))
    assert wgap > 0.5 > np.max(np.abs(q - q2))
    same = np.array([[1.0, 3.0, 2.0], [1.0, 3.0, 2.0]])
    assert ops.double_q(same) == 3.0 and ops.weighted_double_q(same) == 3.0


@pytest.mark.parametrize("name", sorted(set(ops.OPERATORS) - {"bias_corrected"}))
def test_compiled_twin_equals_numpy_operator_bit_for_bit(name) -> None:
    from maxminq.operators_jit import apply_operator, operator_code

    members = {"q_learning": 1, "bias_corrected": 1, "double_q": 2, "weighted_double_q": 2}
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for n in sorted({members.get(name, 1), members.get(name, 3), members.get(name, 8)}):
        q = rng.normal(size=(300, n, 3)) * 10
        q[:100] = np.round(q[:100])  # integer values: many ties between actions and members
        q[100:110, :, 1] = q[100:110, :, 0]  # exact ties in the first two actions
        expected = ops.bootstrap(name, q)
        code = operator_code(name)
        got = np.array([apply_operator(code, np.ascontiguousarray(x)) for x in q])
        np.testing.assert_array_equal(got, expected)
        q[0, 0, 0] = np.nan  # a diverged estimate propagates as in NumPy
        assert np.isnan(apply_operator(code, q[0])) == np.isnan(ops.bootstrap(name, q[:1])[0])


def test_compiled_twins_only_for_default_parameters() -> None:
    from maxminq.operators_jit import operator_code

    assert operator_code("maxmin") >= 0
    assert operator_code("weighted_double_q", {"c": 2.0}) == -1
    assert operator_code("bias_corrected", {"sigma": 0.5}) == -1
    with pytest.raises(ValueError, match="bias_corrected: give sigma"):  # no silent sigma = 0
        operator_code("bias_corrected")
    assert ops.operator_params("bias_corrected") == {"sigma": True}
    assert ops.operator_params("weighted_double_q") == {"c": False}
    assert ops.operator_params("maxmin") == {}
    with pytest.raises(ValueError, match="unknown operator 'sarsa'"):
        operator_code("sarsa")


def test_compiled_td_target_equals_numpy_and_ignores_g_at_terminals() -> None:
    from maxminq.operators_jit import td_target

    rng = np.random.default_rng(7)
    r, g = rng.normal(size=500) * 5, rng.normal(size=500) * 50
    term = rng.random(500) < 0.3
    expected = ops.td_target(r, 0.99, term.astype(float), g)
    got = np.array([td_target(r[i], 0.99, bool(term[i]), g[i]) for i in range(500)])
    np.testing.assert_array_equal(got, expected)
    assert td_target(-1.0, 0.9, True, np.inf) == -1.0  # no bootstrap, even from a diverged G
    assert td_target(-1.0, 0.5, False, 4.0) == 1.0


@pytest.mark.parametrize(
    ("name", "q", "expected"),
    [
        ("q_learning", [_TWO_TABLES[0]], [1.0, 5.0, 2.0]),
        ("maxmin", _TWO_TABLES, [1.0, 2.0, 2.0]),
        ("ensemble", _TWO_TABLES, [2.0, 3.5, 3.0]),
        ("averaged", _TWO_TABLES, [2.0, 3.5, 3.0]),
        ("historical_best", _TWO_TABLES, [3.0, 5.0, 4.0]),
    ],
)
def test_action_values_are_what_the_operator_maximises(name, q, expected) -> None:
    """Hand-computed per-action estimates; their max is the operator's G; torch agrees."""
    q = np.array([q, q])  # a batch of two states
    per_action = ops.action_values(name, q)
    np.testing.assert_array_equal(per_action, [expected, expected])
    np.testing.assert_array_equal(ops.bootstrap(name, q), [max(expected)] * 2)
    np.testing.assert_array_equal(ops.action_values(name, torch.from_numpy(q)).numpy(), per_action)


@pytest.mark.parametrize(
    "name", ["q_learning", "maxmin", "ensemble", "averaged", "historical_best"]
)
def test_max_of_action_values_is_g_on_random_values(name) -> None:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q = rng.normal(size=(50, 1 if name == "q_learning" else 4, 6))
    np.testing.assert_array_equal(ops.action_values(name, q).max(-1), ops.bootstrap(name, q))


def test_action_values_of_the_two_table_operators_is_an_error() -> None:
    q = np.zeros((3, 2, 4))
    for name in ("double_q", "weighted_double_q", "bias_corrected"):
        with pytest.raises(ValueError, match=f"'{name}' has no per-action estimate"):
            ops.action_values(name, q)
    # A misspelt name is unknown, not an operator without an estimate (the old message).
    with pytest.raises(ValueError, match="unknown operator 'maxmim'; choose one of: averaged"):
        ops.action_values("maxmim", q)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_every_operator_propagates_a_nan_estimate(backend) -> None:
    """A diverged (NaN) estimate gives NaN, never a finite bootstrap: anywhere in q, except
    in the evaluating table of the two-table operators away from the selected action (2
    here: values increase along the actions). Double Q's argmax took a NaN as its choice
    and returned the other table's finite value."""
    params = {"bias_corrected": {"sigma": 0.5}}
    for name, op in ops.OPERATORS.items():
        n = 1 if name in ("q_learning", "bias_corrected") else 2
        two_table = name in ("double_q", "weighted_double_q")
        for member in range(n):
            for action in range(3):
                q = np.arange(2.0 * n * 3).reshape(2, n, 3)
                q[0, member, action] = np.nan
                x = q if backend == "numpy" else torch.from_numpy(q)
                got = np.asarray(op(x, **params.get(name, {})))
                unused = two_table and member == 1 and action == 1  # weighted: uses 0 and 2
                unused = unused or (name == "double_q" and member == 1 and action != 2)
                assert np.isnan(got[0]) != unused and np.isfinite(got[1]), (name, member, action)


def test_td_target_checks_its_inputs_and_takes_boolean_flags() -> None:
    r, g = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    t = ops.td_target(torch.tensor(r), 0.5, torch.tensor([True, False]), torch.tensor(g))
    np.testing.assert_allclose(t.numpy(), [1.0, 4.0])  # 1 + 0, 2 + 0.5 * 4
    np.testing.assert_allclose(ops.td_target(r, 0.5, np.array([True, False]), g), [1.0, 4.0])
    with pytest.raises(ValueError, match="one shape"):  # (2,) + (2, 1) would broadcast to (2, 2)
        ops.td_target(r, 0.5, np.zeros(2), g[:, None])
    with pytest.raises(ValueError, match="discount must be one number in"):
        ops.td_target(r, 1.5, np.zeros(2), g)
    # An array discount was NumPy's "truth value of an array is ambiguous"; text and True are
    # not discounts (True was read as 1); a 0-d array or tensor is one number.
    for bad in (np.array([0.5, 0.5]), torch.tensor([0.5, 0.5]), np.array([0.5]), "0.5", True):
        with pytest.raises(ValueError, match="td_target: discount must be one number in"):
            ops.td_target(r, bad, np.zeros(2), g)
    np.testing.assert_allclose(ops.td_target(r, np.float32(0.5), np.zeros(2), g), [2.5, 4.0])
    t = ops.td_target(torch.tensor(r), torch.tensor(0.5), torch.zeros(2), torch.tensor(g))
    np.testing.assert_allclose(t.numpy(), [2.5, 4.0])  # 1 + 0.5 * 3, 2 + 0.5 * 4
    # Mixed backends: torch flags with NumPy values failed with "Concatenation operation is
    # not implemented for NumPy arrays", NumPy flags with torch values with a bare TypeError.
    with pytest.raises(ValueError, match="all torch tensors or all NumPy arrays"):
        ops.td_target(r, 0.5, torch.tensor([True, False]), g)
    with pytest.raises(ValueError, match="got Tensor, ndarray, Tensor"):
        ops.td_target(torch.tensor(r), 0.5, np.array([True, False]), torch.tensor(g))
    assert ops.td_target(1.0, 0.5, 0.0, 4.0) == 3.0  # Python numbers are fine with either


def test_double_q_of_integer_values_is_float64_as_every_operator() -> None:
    """The NaN check must not fail on integer q (torch's isnan did); integer q is read as
    float64 by every operator (operators/test_operators_inputs.py)."""
    q = np.array([[1, 3, 2], [4, 5, 6]])  # member 0 picks action 1; member 1 gives 5
    for x in (q, torch.from_numpy(q)):
        got = ops.double_q(x)
        assert got == 5 and str(got.dtype).endswith("float64")
        assert got.dtype == ops.q_learning(x[..., :1, :]).dtype
        # Averages of integers are float64 in both (torch's mean refused integer tensors):
        # max_a of the column means (2.5, 4, 4) is 4.
        for name in ("ensemble", "averaged"):
            mean = ops.bootstrap(name, x)
            assert float(mean) == 4.0 and str(mean.dtype).endswith("float64"), name
        np.testing.assert_array_equal(np.asarray(ops.action_values("ensemble", x)), [2.5, 4, 4])
