"""The checks of a G function of one's own before any work: its shape, dtype, whole
numbers, NaN on zeros, torch or NumPy only; the same words in the classic and deep paths."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from user_modules import user_module

from maxminq import operators
from maxminq.cli import main
from maxminq.tabular.finite_mdp import random_mdp
from maxminq.theory import operator_bias

NUMPY_ONLY = """

def min_q(q):
    return q.min(axis=-2).max(axis=-1)

def mixed(q, lam=0.5):
    return (lam * q.amin(dim=-2) + (1 - lam) * q.mean(dim=-2)).amax(dim=-1)
"""


@pytest.fixture
def own_ops(tmp_path):
    """The module above, importable as ``lead21_ops`` for the test, forgotten after."""
    with user_module(tmp_path, "lead21_ops", NUMPY_ONLY):
        yield


def train(tmp_path, capsys, *options: str) -> tuple[int, str]:
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    code = main([*argv, "--steps", "200", *options, "--out", str(out)])
    assert not out.exists()
    return code, capsys.readouterr().err.strip()


def soft_min_at_zero(q, beta=0.0):
    """A soft-min written from the formula: at beta = 0 it is 0/0 = NaN on every input."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)


def median_tensor_only(q: torch.Tensor) -> torch.Tensor:
    """A G written for tensors only (as in a deep agent): NumPy input has no .median."""
    return q.median(dim=-2).values.max(dim=-1).values


@pytest.mark.usefixtures("torch_one_thread")
def test_a_numpy_g_returning_whole_numbers_is_refused_as_the_deep_agents_refuse_it() -> None:
    """An action's index instead of its value: the deep agents refused it, the classic
    tools (own_operator) read it as float64 and learned from action numbers."""

    def argmax_g(q):
        return np.argmax(q.mean(axis=-2), axis=-1)

    with pytest.raises(ValueError) as err:
        operators.own_operator(argmax_g, [(2, 3, 4)], "my_ops:argmax_g")
    assert str(err.value) == (
        "operator 'my_ops:argmax_g' returned int64 values for NumPy zeros of shape (2, 3, 4); "
        "G must return the bootstrap values as floats (e.g. q.mean(axis=-2).max(axis=-1), not "
        "argmax)"
    )
    with pytest.raises(ValueError, match=r"^argmax_g returned torch\.int64 values for torch"):
        operators.check_on_zeros(
            lambda q: q.mean(dim=-2).argmax(dim=-1), "argmax_g", [(2, 3, 4)], {}, "torch"
        )


@pytest.mark.usefixtures("torch_one_thread")
def test_a_numpy_g_returning_nothing_says_so_not_that_it_gave_nan() -> None:
    """A G that forgot its return: np.asarray(None, float64) is NaN, and the message blamed a
    NaN value."""

    def no_return(q):
        q.max()

    with pytest.raises(ValueError, match=r"^operator 'no_return' returned a value of type "):
        operators.own_operator(no_return, [(3, 2)])


@pytest.mark.usefixtures("torch_one_thread")
def test_deep_and_classic_name_one_contract_in_the_same_words() -> None:
    """The shape and finiteness checks give one message per kind of array."""

    def nan_g(q):
        return q.sum(-1).sum(-1) + float("nan")

    for kind, zeros in (("numpy", "NumPy zeros"), ("torch", "torch zeros")):
        with pytest.raises(ValueError) as err:
            operators.check_on_zeros(nan_g, "G", [(4, 2, 3)], {}, kind)
        assert str(err.value) == (
            f"G gave nan on {zeros} of shape (4, 2, 3); G must give finite values for finite ones"
        )


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


def test_a_numpy_only_g_is_told_how_to_take_torch_tensors(own_ops, tmp_path, capsys):
    code, err = train(tmp_path, capsys, "--operator", "lead21_ops:min_q")
    assert code == 2 and "\n" not in err
    assert err.startswith(
        "maxminq train: error: --operator: lead21_ops:min_q failed on torch zeros"
    )
    assert "torch.as_tensor(g(q.numpy()))" in err


def test_a_misspelt_keyword_of_ones_own_g_names_it_and_the_ones_it_takes(own_ops, tmp_path, capsys):
    code, err = train(
        tmp_path, capsys, "--operator", "lead21_ops:mixed", "--op-kwargs", '{"lamb": 0.5}'
    )
    assert code == 2 and "\n" not in err
    assert "--op-kwargs: operator 'lead21_ops:mixed' has no parameter 'lamb'" in err
    assert "(its parameters: lam)" in err and "torch.as_tensor" not in err


def test_the_classic_experiments_and_the_deep_agents_say_alike_why_a_g_has_no_name(
    tmp_path, monkeypatch
) -> None:
    # One account (operators.unnamed_operator) for both: a G taken before its module was
    # reloaded was 'a lambda, a closure or a function of __main__' for the classic
    # experiments, which alone of the two did not tell it apart.
    import importlib

    from maxminq.deep import TrainConfig
    from maxminq.errors import UsageError
    from maxminq.tabular.agent import algorithm_name

    (tmp_path / "lead21_reload.py").write_text("def g(q):\n    return q.max(-1).max(-1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("lead21_reload")
    old = module.g
    importlib.reload(module)
    with pytest.raises(UsageError) as classic:
        algorithm_name(old, "algorithm")
    with pytest.raises(UsageError) as deep:
        TrainConfig(env_id="CartPole-v1", agent="generalized-dqn", operator=old, n=2).resolve()
    said = "'lead21_reload:g' now names another object than the function given"
    assert said in str(classic.value) and said in str(deep.value)
    assert str(classic.value).endswith("pass algorithm='lead21_reload:g' (or the module's "
                                       "function as it is now)")  # fmt: skip
    assert "pass operator='lead21_reload:g'" in str(deep.value)
    assert algorithm_name(module.g, "algorithm") == "lead21_reload:g"


def test_a_g_giving_nan_on_zeros_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    # It ran the toy MDP to exit 0 with NaN results and gave operator_bias a NaN bias, where
    # generalized-dqn already refused it ('G must give finite values for finite ones').
    import numpy as np

    from maxminq.theory import operator_bias

    with pytest.raises(ValueError, match=r"'soft_min_at_zero' gave nan on NumPy zeros"):
        operator_bias(soft_min_at_zero, 8, 4, 1.0, 1.0, 10, np.random.default_rng(0))
    (tmp_path / "lead21_soft.py").write_text(
        "import numpy as np\n\n"
        "def soft(q, beta=1.0):\n"
        "    with np.errstate(divide='ignore', invalid='ignore'):\n"
        "        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "toy"
    argv = ["experiment", "toy-mdp", "--algorithms", "lead21_soft:soft:4:beta=0"]
    code = main([*argv, "--runs", "2", "--episodes", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and not out.exists()
    assert "--algorithms" in err and "G must give finite values for finite ones" in err


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
