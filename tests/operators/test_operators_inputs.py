"""The operators as a researcher calls them directly: unusual dtypes, flags, parameters and
shapes, for NumPy and torch, and the compiled twins on the same inputs.

Expected values are worked out by hand in the comments (not produced by the code under test).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from maxminq import operators as ops
from maxminq.operators_jit import apply_operator, operator_code
from maxminq.operators_jit import td_target as jit_td_target

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


# Two tables U (member 0) and V (member 1), integer values, three actions.
_U, _V = [0, 5, 1], [10, 2, 0]


# By hand: a* = argmax U = 1, a_L = argmin U = 0.
_EXPECTED = {
    "q_learning": 5.0,  # max U
    "maxmin": 2.0,  # max(min(0, 10), min(5, 2), min(1, 0))
    "ensemble": 5.0,  # max(5, 3.5, 0.5)
    "averaged": 5.0,
    "historical_best": 10.0,
    "double_q": 2.0,  # V(a*)
    # gap = |V(a*) - V(a_L)| = |2 - 10| = 8, beta = 8/9: 8/9 * 5 + 1/9 * 2 = 42/9
    "weighted_double_q": 42 / 9,
    # max U - 0.5 * E[max of 3 N(0, 1)] = 5 - 0.5 * 3 / (2 sqrt(pi))
    "bias_corrected": 5.0 - 0.75 / math.sqrt(math.pi),
}


_ONE_TABLE = ("q_learning", "bias_corrected")


_PARAMS = {"bias_corrected": {"sigma": 0.5}}


def _stack(name: str, dtype: str, backend: str):
    """The (1, N, 3) stack of U (and V) in ``dtype`` for ``backend``."""
    q = np.array([[_U] if name in _ONE_TABLE else [_U, _V]], dtype=dtype)
    return q if backend == "numpy" else torch.from_numpy(q)


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


def test_compiled_operators_agree_with_numpy_on_nan_inf_and_ties() -> None:
    """Values drawn from {NaN, +-inf, +-0, +-1, 2}: many ties, NaN in every position, inf - inf
    inside Weighted Double Q. The compiled twin gives NumPy's value (NaN where NumPy gives
    NaN), equal as numbers: only the sign of a zero may differ (documented)."""
    from maxminq import operators
    from maxminq.operators_jit import apply_operator, operator_code

    rng = np.random.default_rng(7)
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])
    checked = 0
    for _ in range(3000):
        n, a = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        q = rng.choice(pool, size=(n, a))
        for name in operators.OPERATORS:
            fixed = {"q_learning": 1, "double_q": 2, "weighted_double_q": 2}.get(name)
            if name == "bias_corrected" or (fixed is not None and fixed != n):
                continue
            with np.errstate(invalid="ignore"):
                want = float(operators.bootstrap(name, q))
            got = apply_operator(operator_code(name), q)
            assert (math.isnan(want) and math.isnan(got)) or want == got, (name, q, want, got)
            checked += 1
    assert checked > 8000


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_q_gives_float64_and_the_float_answer_from_every_operator(dtype, backend):
    """Integer tables: maxmin and double_q kept the integer dtype while ensemble gave float64
    and weighted_double_q float32 (torch) or float64 (NumPy); with uint8, V(a*) - V(a_L)
    wrapped around (2 - 10 = 248), so weighted_double_q gave 4.988 instead of 42/9."""
    for name, expected in _EXPECTED.items():
        got = ops.bootstrap(name, _stack(name, dtype, backend), **_PARAMS.get(name, {}))
        assert str(got.dtype).endswith("float64"), (name, got.dtype)
        assert float(got[0]) == pytest.approx(expected, rel=1e-12), name
    for name in ("q_learning", "maxmin", "ensemble", "historical_best"):
        values = ops.action_values(name, _stack(name, dtype, backend))
        assert str(values.dtype).endswith("float64"), name


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_boolean_q_is_read_as_zero_and_one(backend):
    """Boolean tables gave bool results (maxmin), float64 (ensemble), or failed inside the
    formula: NumPy's "boolean subtract is not supported", torch's "argmax(): does not support
    bool input" (double_q)."""
    q = np.array([[[True, False], [False, False]]])  # U = (1, 0), V = (0, 0)
    x = q if backend == "numpy" else torch.from_numpy(q)
    # a* = 0, a_L = 1; gap 0, so beta = 0 and weighted_double_q is V(a*) = 0
    expected = {"maxmin": 0.0, "ensemble": 0.5, "historical_best": 1.0, "double_q": 0.0}
    expected["weighted_double_q"] = 0.0
    for name, value in expected.items():
        got = ops.bootstrap(name, x)
        assert str(got.dtype).endswith("float64") and float(got[0]) == value, name
    got = ops.bias_corrected(x[:, :1], sigma=1.0)  # 1 - E[max of 2 N(0, 1)] = 1 - 1/sqrt(pi)
    assert float(got[0]) == pytest.approx(1 - 1 / math.sqrt(math.pi), rel=1e-12)


def test_float32_and_float16_keep_their_dtype():
    for backend in (np.asarray, torch.as_tensor):
        for dtype in ("float32", "float16"):
            q = backend(np.array([[[1.0, 2.0], [3.0, 0.5]]], dtype=dtype))
            for name in ("maxmin", "ensemble", "double_q", "weighted_double_q"):
                assert str(ops.bootstrap(name, q).dtype).endswith(dtype), (name, dtype)


def test_complex_and_object_q_are_one_line_errors():
    """max of complex numbers (ordered lexicographically by NumPy) is no action value."""
    bad = [
        np.ones((2, 3), dtype=complex),
        torch.ones((2, 3), dtype=torch.complex64),
        np.array([[1.0, 2.0], [3.0, None]], dtype=object),
    ]
    for q in bad:
        for name in ("maxmin", "ensemble", "double_q"):
            with pytest.raises(TypeError, match=f"^{name}: q must hold real numbers, got"):
                ops.bootstrap(name, q)
        with pytest.raises(TypeError, match="^maxmin: q must hold real numbers"):
            ops.action_values("maxmin", q)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_list_of_parameters_is_one_per_sample(backend):
    """A list c or sigma: torch failed with "can only concatenate list (not "Tensor") to list"
    and bias_corrected with "can't multiply sequence by non-int of type 'float'"."""
    q2 = np.array([[_U, _V], [_U, _V]], dtype=float)
    q1 = q2[:, :1]
    conv = np.asarray if backend == "numpy" else torch.from_numpy
    # c = 8: beta = 8/16 = 1/2, G = 5/2 + 2/2 = 3.5; c = 1: 42/9 (above)
    got = ops.weighted_double_q(conv(q2), c=[8.0, 1.0])
    np.testing.assert_allclose(np.asarray(got), [3.5, 42 / 9], rtol=1e-12)
    got = ops.bias_corrected(conv(q1), sigma=(0.0, 0.5))
    np.testing.assert_allclose(np.asarray(got), [5.0, _EXPECTED["bias_corrected"]], rtol=1e-12)
    assert type(got) is type(conv(q1))
    with pytest.raises(ValueError, match=r"c must be a number or broadcast to the batch shape"):
        ops.weighted_double_q(conv(q2), c=[1.0, 2.0, 3.0])


def test_a_complex_parameter_is_a_one_line_error():
    """sigma = 1j was "float() argument must be a string or a real number, not 'complex'"."""
    with pytest.raises(ValueError, match=r"^bias_corrected: sigma must be a number .*got 1j"):
        ops.bias_corrected(np.zeros((2, 1, 3)), sigma=1j)
    with pytest.raises(ValueError, match=r"^weighted_double_q: c must be a number"):
        ops.weighted_double_q(np.zeros((2, 2, 3)), c=[1j, 1.0])


@pytest.mark.parametrize("flag", [0.5, 2.0, -1.0, math.nan])
def test_a_terminal_flag_other_than_0_or_1_is_an_error(flag):
    """terminated = 0.5 bootstrapped fully in NumPy and torch (0.5 == 1 is false) while the
    compiled twin returned the reward alone (0.5 is truthy): three answers for one input,
    none of them r + gamma * 0.5 * G."""
    match = r"^td_target: terminated must be 0 or 1 \(or boolean\)"
    r, g = np.array([1.0, 1.0]), np.array([2.0, 2.0])
    flags = np.array([0.0, flag])
    for conv in (np.asarray, torch.from_numpy):
        with pytest.raises(ValueError, match=match):
            ops.td_target(conv(r), 0.9, conv(flags), conv(g))
        with pytest.raises(ValueError, match=match):
            ops.td_target(conv(r), 0.9, conv(flags.astype(np.float32)), conv(g))
    with pytest.raises(ValueError, match=match):
        ops.td_target(1.0, 0.9, flag, 2.0)
    with pytest.raises(ValueError, match=match):
        jit_td_target(1.0, 0.9, flag, 2.0)


def test_terminal_flags_of_every_kind_that_are_0_or_1_still_work():
    r, g = np.array([1.0, 1.0, 1.0]), np.array([2.0, -4.0, math.inf])
    expected = [1.0 + 0.5 * 2.0, 1.0, 1.0]  # bootstrap, terminal, terminal (inf ignored)
    flags = [0, 1, 1]
    for flag_dtype in ("float64", "float32", "int64", "int8", "bool"):
        f = np.array(flags, dtype=flag_dtype)
        np.testing.assert_array_equal(ops.td_target(r, 0.5, f, g), expected)
        got = ops.td_target(torch.from_numpy(r), 0.5, torch.from_numpy(f), torch.from_numpy(g))
        np.testing.assert_array_equal(got.numpy(), expected)
    for flag in (0, 1, 0.0, 1.0, True, False, np.float32(1.0), np.bool_(True)):
        want = 1.0 if flag else 2.0
        assert ops.td_target(1.0, 0.5, flag, 2.0) == want
        assert jit_td_target(1.0, 0.5, flag, 2.0) == want
    assert ops.td_target(np.zeros(0), 0.5, np.zeros(0), np.zeros(0)).shape == (0,)


def test_compiled_td_target_checks_its_discount_as_numpy_does():
    """The compiled twin took discount = 2 (r + 2 G) where the NumPy one refused it."""
    for gamma in (1.5, -0.1, math.nan):
        with pytest.raises(ValueError, match=r"^td_target: discount must be one number in"):
            ops.td_target(1.0, gamma, 0.0, 2.0)
        with pytest.raises(ValueError, match=r"^td_target: discount must be in \[0, 1\]"):
            jit_td_target(1.0, gamma, False, 2.0)
    assert jit_td_target(1.0, 1.0, False, 2.0) == 3.0 and jit_td_target(1.0, 0.0, 0, 2.0) == 1.0


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("maxmin", (0, 3)),  # read memory past the array: a garbage number
        ("maxmin", (2, 0)),  # no action: returned 0.0
        ("double_q", (2, 0)),  # garbage
        ("weighted_double_q", (1, 3)),  # read member 1 past the array: garbage
        ("double_q", (3, 3)),  # silently ignored member 2
        ("q_learning", (2, 3)),  # silently ignored member 1
    ],
)
def test_compiled_twins_refuse_the_shapes_the_operators_refuse(name, shape):
    q = np.arange(math.prod(shape), dtype=float).reshape(shape)
    with pytest.raises(ValueError):
        ops.bootstrap(name, q)
    with pytest.raises(ValueError, match="^apply_operator: "):
        apply_operator(operator_code(name), q)


def test_compiled_twins_agree_with_the_operators_on_infinities_nans_and_signed_zeros():
    """Every (N, A) up to (4, 4) drawn from inf, -inf, NaN, +-0 and a few numbers: the compiled
    value equals NumPy's (NaN where NumPy is NaN; the sign of a zero is not compared)."""
    rng = np.random.default_rng(11)
    specials = np.array([math.inf, -math.inf, math.nan, -0.0, 0.0, 1.0, -1.0, 2.0])
    counts = {"q_learning": [1], "double_q": [2], "weighted_double_q": [2]}
    with np.errstate(invalid="ignore"):  # inf - inf, inf / inf: NaN, as intended
        for name in sorted(set(ops.OPERATORS) - {"bias_corrected"}):
            code = operator_code(name)
            for n in counts.get(name, [1, 2, 3, 4]):
                for a in (1, 2, 3, 4):
                    q = rng.choice(specials, size=(200, n, a))
                    expected = ops.bootstrap(name, q)
                    got = np.array([apply_operator(code, x) for x in q])
                    np.testing.assert_array_equal(got, expected, err_msg=f"{name} {n}x{a}")


def test_a_plain_number_flag_with_a_0d_tensor_value():
    """td_target(1.0, 0.5, True, torch.tensor(2.0)) failed with torch's many-line "where()
    received an invalid combination of arguments" (~True is the integer -2); plain numbers
    go with either backend, as the docstring says."""
    for flag, want in ((True, 1.0), (1.0, 1.0), (0, 2.0), (False, 2.0)):  # r + 0.5 * 2 = 2
        got = ops.td_target(1.0, 0.5, flag, torch.tensor(2.0))
        assert isinstance(got, torch.Tensor) and float(got) == want, flag
        got = ops.td_target(torch.tensor(1.0), 0.5, flag, torch.tensor(math.inf))
        assert float(got) == (1.0 if want == 1.0 else math.inf), flag


def test_torch_and_numpy_agree_bit_for_bit_except_long_means():
    """Same values, both backends: equal bit for bit, except the mean of 5 or more members
    (Ensemble, Averaged), which torch sums in another order than NumPy's left to right: there
    they agree to the last bits only (as the module docstring says)."""
    rng = np.random.default_rng(5)
    counts = {"q_learning": [1], "bias_corrected": [1], "double_q": [2]}
    counts["weighted_double_q"] = [2]
    for name in ops.OPERATORS:
        params = _PARAMS.get(name, {})
        for n in counts.get(name, range(1, 10)):
            q = rng.normal(size=(2000, n, 5)) * 100
            q[:500] = np.round(q[:500])  # ties
            expected = ops.bootstrap(name, q, **params)
            got = ops.bootstrap(name, torch.from_numpy(q), **params).numpy()
            if name in ("ensemble", "averaged") and n >= 5:
                np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-12)
            else:
                np.testing.assert_array_equal(got, expected, err_msg=f"{name} N={n}")


def test_td_target_names_a_list_argument():
    """Lists were read as one number: [0, 1] was "terminated must be 0 or 1 ..., got [0, 1]",
    a list next_value "can't multiply sequence by non-int of type 'float'", a list flag beside
    arrays "must have one shape, got (2,), (), (2,)"."""
    match = r"^td_target: {} must be a NumPy array, a torch tensor or a number, got list"
    with pytest.raises(ValueError, match=match.format("reward")):
        ops.td_target([1.0, 2.0], 0.5, [0, 1], [3.0, 4.0])
    with pytest.raises(ValueError, match=match.format("terminated")):
        ops.td_target(np.ones(2), 0.5, [0, 1], np.ones(2))
    with pytest.raises(ValueError, match=match.format("next_value")):
        ops.td_target(1.0, 0.5, 0, [3.0])


def test_weighted_double_q_with_an_infinite_gap_is_nan_everywhere():
    """U = (0, 1): a* = 1, a_L = 0; V(a_L) = inf makes the gap inf and beta inf / inf, NaN
    (documented), in NumPy, torch and the compiled twin alike; a finite V gives a number."""
    q = np.array([[0.0, 1.0], [math.inf, 2.0]])
    with np.errstate(invalid="ignore"):
        assert np.isnan(ops.weighted_double_q(q))
    assert math.isnan(float(ops.weighted_double_q(torch.from_numpy(q))))
    assert math.isnan(apply_operator(operator_code("weighted_double_q"), q))
    q[1, 0] = 3.0  # gap 1, beta 1/2: (1 + 2) / 2
    assert ops.weighted_double_q(q) == 1.5


def test_a_boolean_parameter_is_refused_in_every_form():
    """c = True was refused but np.True_, a boolean array or a boolean tensor was read as 1."""
    for c in (np.True_, np.array([True, True]), [True, True]):
        with pytest.raises(ValueError, match=r"^weighted_double_q: c must be a number"):
            ops.weighted_double_q(np.zeros((2, 2, 3)), c=c)
    with pytest.raises(ValueError, match=r"^bias_corrected: sigma must be a number"):
        ops.bias_corrected(torch.zeros((2, 1, 3)), sigma=torch.tensor([True, False]))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_action_values_never_share_memory_with_q(backend):
    """Q-learning's per-action estimate was a view of q: subtracting the true values from it
    in place (a bias study's first step) changed the caller's q."""
    q = np.array([[[1.0, 2.0, 3.0]]])
    x = q if backend == "numpy" else torch.from_numpy(q)
    for name in ("q_learning", "maxmin", "ensemble", "averaged", "historical_best"):
        values = ops.action_values(name, x)
        values -= 10.0
        np.testing.assert_array_equal(q, [[[1.0, 2.0, 3.0]]], err_msg=name)


def test_td_target_names_a_pandas_column():
    """A DataFrame's columns passed the shape check and failed in pandas: "The truth value of
    a Series is ambiguous"."""
    import pandas as pd

    df = pd.DataFrame({"r": [1.0, 2.0], "done": [0.0, 1.0], "g": [3.0, 4.0]})
    with pytest.raises(ValueError, match=r"^td_target: reward must be a NumPy array, .* Series"):
        ops.td_target(df.r, 0.5, df.done, df.g)
    got = ops.td_target(df.r.to_numpy(), 0.5, df.done.to_numpy(), df.g.to_numpy())
    np.testing.assert_array_equal(got, [2.5, 2.0])  # 1 + 0.5 * 3; terminal: 2


@pytest.mark.parametrize(
    ("c", "shown"),
    [
        (np.ones(100, dtype=bool), "a bool ndarray of shape (100,)"),
        (torch.ones(100, dtype=torch.bool), "a torch.bool Tensor of shape (100,)"),
        (np.array(["a"] * 100), "a <U1 ndarray of shape (100,)"),
        ([True] * 100, "a list of 100 values starting True"),
    ],
)
def test_a_refused_array_parameter_is_named_in_one_line(c, shown) -> None:
    """Boolean (and unconvertible) c / sigma arrays were refused with their full repr in the
    message: a 100-value NumPy or torch array made a ValueError of 8 to 12 lines."""
    q = torch.zeros((100, 2, 3)) if isinstance(c, torch.Tensor) else np.zeros((100, 2, 3))
    with pytest.raises(ValueError) as info:
        ops.weighted_double_q(q, c=c)
    assert str(info.value) == f"weighted_double_q: c must be a number (or array), got {shown}"
    q1 = q[:, :1]
    with pytest.raises(ValueError, match=r"^bias_corrected: sigma must be a number") as info:
        ops.bias_corrected(q1, sigma=c)
    assert "\n" not in str(info.value)
