"""Second reading of session 21's late changes: G functions that are not plain module-level
functions (a class, a method of a class, a classmethod, a callable instance, a partial, a
parameter before '/') named by load_operator / operator_reference / check_keywords and the
classic experiments' algorithm_name, each refused or named in one line that says why."""

from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

from maxminq import operators
from maxminq.errors import UsageError
from maxminq.tabular.agent import algorithm_name
from maxminq.tabular.finite_mdp import FiniteMDP

OPS = """
import numpy as np


def g(q, lam=0.5):
    return q.max(axis=-1).mean(axis=-1)


def by_position(q, lam, /):
    return q.max(axis=-1).mean(axis=-1)


class Ops:
    @staticmethod
    def st(q):
        return q.max(axis=-1).mean(axis=-1)

    @classmethod
    def cm(cls, q):
        return q.max(axis=-1).mean(axis=-1)

    def meth(self, q):
        return q.max(axis=-1).mean(axis=-1)

    alias = g  # a module function put in the class: Ops.alias(q) is g(q)


class CallG:
    def __call__(self, q, lam=0.5):
        return q.max(axis=-1).mean(axis=-1)


call_g = CallG()
"""


@pytest.fixture
def late_ops(tmp_path, monkeypatch):
    """The module late21_ops (above) importable from a temporary folder."""
    (tmp_path / "late21_ops.py").write_text(OPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "late21_ops", raising=False)
    import late21_ops

    return late21_ops


def _one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text
    return text


def test_a_class_is_no_g(late_ops) -> None:
    """'m:CallG' is callable, but G(q) made an instance: it was loaded as a G and then
    failed on zeros (FiniteMDP: 'CallG() takes no arguments' under advice about torch)."""
    with pytest.raises(ValueError) as err:
        operators.load_operator("late21_ops:CallG")
    assert "'late21_ops:CallG' is a class, not a G function" in _one_line(err.value)
    P = np.full((2, 2, 2), 0.5)
    with pytest.raises(TypeError) as err2:
        FiniteMDP(P, np.zeros((2, 2)), gamma=0.9).learn(
            late_ops.CallG, n=2, k=1, steps=2, rng=np.random.default_rng(0)
        )
    assert "'CallG' is a class, not a G function" in _one_line(err2.value)


def test_a_method_taking_self_is_no_g(late_ops) -> None:
    """'m:Ops.meth' loaded the plain function meth(self, q): q went in for self. A
    staticmethod, and a module function put in a class, are Gs."""
    with pytest.raises(ValueError) as err:
        operators.load_operator("late21_ops:Ops.meth")
    assert "is a method of class Ops" in _one_line(err.value)
    assert "@staticmethod" in str(err.value)
    assert operators.load_operator("late21_ops:Ops.st") is late_ops.Ops.st
    assert operators.load_operator("late21_ops:Ops.alias") is late_ops.g


def test_a_classmethod_is_named(late_ops) -> None:
    """A classmethod is a new bound method at each lookup: operator_reference said None
    (so the classic experiments called it 'a lambda, a closure or a function of __main__')."""
    assert operators.operator_reference(late_ops.Ops.cm) == "late21_ops:Ops.cm"
    assert algorithm_name(late_ops.Ops.cm) == "late21_ops:Ops.cm"
    # a bound method of an instance still has no name (the class's function is another G)
    assert operators.operator_reference(late_ops.Ops().meth) is None


def test_a_parameter_before_slash_is_said_so(late_ops) -> None:
    """def g(q, lam, /) with lam given by keyword: it said 'has no parameter 'lam' (it takes
    none)', though lam is its parameter."""
    with pytest.raises(TypeError) as err:
        operators.check_keywords(late_ops.by_position, "late21_ops:by_position", {"lam": 1})
    text = _one_line(err.value)
    assert "takes 'lam' by position only" in text and "it takes none" not in text


def test_an_instance_and_a_partial_are_said_what_they_are(late_ops) -> None:
    """run_toy_mdp(algorithm=...) with a callable instance or a functools.partial: it said
    'a lambda, a closure or a function of __main__', none of which they are."""
    with pytest.raises(UsageError) as err:
        algorithm_name(late_ops.call_g, "algorithm")
    text = _one_line(err.value)
    assert "a callable CallG object" in text and "lambda" not in text
    with pytest.raises(UsageError) as err:
        algorithm_name(functools.partial(late_ops.g, lam=0.3), "algorithm")
    text = _one_line(err.value)
    assert "functools.partial" in text and "op_kwargs" in text and "lambda" not in text
    # the instance by its name in its module is a G
    assert operators.load_operator("late21_ops:call_g") is late_ops.call_g


def test_a_missing_dependency_is_not_a_pythonpath_matter(tmp_path, monkeypatch) -> None:
    """A module found on the path whose own import fails with ImportError (a module it
    imports is not installed; an ImportError it raises, over two lines) was told to put its
    folder on PYTHONPATH, where it was, with the error's every line."""
    (tmp_path / "late21_dep.py").write_text("import late21_not_installed\n\ndef g(q):\n    pass\n")
    (tmp_path / "late21_raises.py").write_text('raise ImportError("needs foo\\npip install foo")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as err:
        operators.load_operator("late21_dep:g")
    text = _one_line(err.value)
    assert "PYTHONPATH" not in text and "late21_dep.py, line 1" in text
    assert "install late21_not_installed (a module it imports)" in text
    with pytest.raises(ValueError) as err:
        operators.load_operator("late21_raises:g")
    text = _one_line(err.value)
    assert "PYTHONPATH" not in text and "ImportError: needs foo (" in text
    # a module that is not there still gets the PYTHONPATH advice
    with pytest.raises(ValueError, match="PYTHONPATH=. for the current folder"):
        operators.load_operator("late21_nowhere:g")


def test_a_torch_g_failing_over_many_lines_keeps_the_advice(tmp_path, monkeypatch) -> None:
    """torch.max(q, dim=-2) on a NumPy array fails with a message over five lines (every
    signature of max); the classic experiments kept its first line only, so the advice
    after it (wrap with torch.as_tensor(q)) was cut off, and FiniteMDP.learn printed all."""
    (tmp_path / "late21_torch.py").write_text(
        "import torch\n\ndef tmax(q):\n    return torch.max(q, dim=-2).values.amax(dim=-1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from maxminq.tabular.agent import own_operator_function

    with pytest.raises(UsageError) as err:
        own_operator_function("late21_torch:tmax", 2)
    text = _one_line(err.value)
    assert "received an invalid combination of arguments" in text
    assert text.endswith("a G written for torch tensors can take torch.as_tensor(q))")
    import late21_torch

    with pytest.raises(TypeError) as err2:
        operators.own_operator(late21_torch.tmax, [(2, 3)])
    assert "torch.as_tensor(q)" in _one_line(err2.value)


def test_generalized_dqn_says_what_a_class_or_an_instance_is(late_ops) -> None:
    """TrainConfig(operator=...) given a class or a callable instance called each 'a lambda,
    a closure or a function of __main__' (the instance as 'G'); a classmethod is named."""
    from maxminq.deep import TrainConfig

    def resolve(op):
        cfg = TrainConfig(env_id="CartPole-v1", agent="generalized-dqn", operator=op, n=2)
        return cfg.resolve()

    with pytest.raises(UsageError) as err:
        resolve(late_ops.CallG)
    text = _one_line(err.value)
    assert "'CallG' is a class, not a G function" in text and "lambda" not in text
    with pytest.raises(UsageError) as err:
        resolve(late_ops.call_g)
    text = _one_line(err.value)
    assert "a callable CallG object" in text and "'module:name'" in text
    assert "lambda" not in text
    assert resolve(late_ops.Ops.cm).operator == "late21_ops:Ops.cm"
    assert resolve("late21_ops:call_g").operator == "late21_ops:call_g"


def test_a_relative_module_name_is_said_so() -> None:
    """'.my_ops:g' failed inside importlib with 'TypeError: the 'package' argument is
    required ...' and importlib's own file and line."""
    with pytest.raises(ValueError) as err:
        operators.load_operator(".late21_ops:g")
    text = _one_line(err.value)
    assert "without a leading dot" in text and "importlib" not in text


def test_a_library_function_by_module_path_is_the_library_operator() -> None:
    """run_toy_mdp(algorithm='maxminq.operators:double_q') ran it as a G of one's own (no
    role swap, the lockstep path): another rule than 'double_q', which FiniteMDP.learn and
    generalized-dqn take it to be."""
    from maxminq.tabular.toy_mdp import run_toy_mdp

    assert algorithm_name("maxminq.operators:double_q") == "double_q"
    assert algorithm_name("maxminq.operators:maxmin") == "maxmin"
    kw = {"n": 2, "mu": -0.1, "runs": 2, "episodes": 3, "seed": 0}
    by_path = run_toy_mdp(algorithm="maxminq.operators:double_q", **kw)
    by_name = run_toy_mdp(algorithm="double_q", **kw)
    assert list(by_path["algorithm"].astype(str).unique()) == ["double_q"]
    assert by_path.equals(by_name)
