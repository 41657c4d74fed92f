"""operators.load_operator / operator_reference: naming a G function in configs and on the CLI."""

from __future__ import annotations

import functools
import sys
import textwrap

import numpy as np
import pytest

from maxminq import operators
from maxminq.errors import UsageError
from maxminq.operators import load_operator, operator_reference
from maxminq.tabular.agent import algorithm_name
from maxminq.tabular.finite_mdp import FiniteMDP


@pytest.fixture
def my_ops(tmp_path, monkeypatch):
    """A module of one's own on sys.path, holding a median G, a constant and a class."""
    (tmp_path / "my_ops_for_load.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            def median_q(q):
                return np.median(q, axis=-2).max(axis=-1)

            class Holder:
                @staticmethod
                def min_q(q):
                    return q.min(axis=-2).max(axis=-1)

            NOT_A_G = 3
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_ops_for_load

    yield my_ops_for_load
    import sys

    sys.modules.pop("my_ops_for_load", None)


def mixed_g(q, lam=0.5):
    """lam * Maxmin + (1 - lam) * Ensemble, per action, then the max (a G with a keyword)."""
    return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)


def open_g(q, **params):
    """A G that takes any keyword (and ignores them)."""
    return q.max(axis=-1).max(axis=-1)


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


def test_library_names_are_the_library_functions():
    for name, fn in operators.OPERATORS.items():
        assert load_operator(name) is fn
        assert operator_reference(fn) == name


def test_module_function_loads_and_round_trips(my_ops):
    g = load_operator("my_ops_for_load:median_q")
    assert g is my_ops.median_q
    q = np.array([[1.0, 5.0], [3.0, 2.0], [2.0, 0.0]])  # medians over members: 2, 2
    assert float(g(q)) == 2.0
    assert operator_reference(g) == "my_ops_for_load:median_q"
    nested = load_operator("my_ops_for_load:Holder.min_q")
    assert nested is my_ops.Holder.min_q
    assert operator_reference(nested) == "my_ops_for_load:Holder.min_q"


def test_functions_without_an_importable_name_have_no_reference():
    assert operator_reference(lambda q: q.max(axis=-1).max(axis=-1)) is None

    def local_g(q):
        return q.max(axis=-1).max(axis=-1)

    assert operator_reference(local_g) is None  # '<locals>' in its qualname


@pytest.mark.parametrize(
    ("reference", "words"),
    [
        ("maxmn", ["'maxmn'", "maxmin", "'module:function'"]),
        ("no_such_module_xyz:g", ["'no_such_module_xyz'", "PYTHONPATH"]),
        ("my_ops_for_load:missing", ["has no 'missing'"]),
        ("my_ops_for_load:NOT_A_G", ["is a int", "not a G function"]),
        (":median_q", ["'module:function'"]),
        ("my_ops_for_load:", ["'module:function'"]),
        ("", ["'module:function'"]),
    ],
)
def test_bad_references_name_themselves_in_one_line(my_ops, reference, words):
    with pytest.raises(ValueError) as info:
        load_operator(reference)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("def g(q:\n    return q\n", ["SyntaxError", "broken_ops_for_load.py, line 1"]),
        ("raise RuntimeError('needs a GPU')\n", ["RuntimeError: needs a GPU", "line 1"]),
    ],
)
def test_a_module_failing_at_import_is_one_line(tmp_path, monkeypatch, source, words):
    (tmp_path / "broken_ops_for_load.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as info:
        load_operator("broken_ops_for_load:g")
    message = str(info.value)
    assert "\n" not in message and "importing 'broken_ops_for_load' failed" in message
    for word in words:
        assert word in message


def test_train_with_a_module_failing_at_import_exits_2_in_one_line(tmp_path, monkeypatch, capsys):
    from maxminq.cli import main

    (tmp_path / "broken_ops_for_train.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    code = main(
        [*argv, "--operator", "broken_ops_for_train:g", "--steps", "200", "--out", str(out)]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err
    assert "--operator" in err and "RuntimeError: half written" in err
    assert not out.exists()


def test_finite_mdp_learn_takes_a_g_by_its_module_function_name(my_ops):
    from maxminq.tabular.finite_mdp import random_mdp

    mdp = random_mdp(5, 3, np.random.default_rng(1), gamma=0.8)
    by_name = mdp.learn("my_ops_for_load:median_q", 3, 1, 40, np.random.default_rng(2))
    by_function = mdp.learn(my_ops.median_q, 3, 1, 40, np.random.default_rng(2))
    assert np.array_equal(by_name.q, by_function.q)
    with pytest.raises(ValueError, match="has no 'nope'"):
        mdp.learn("my_ops_for_load:nope", 3, 1, 40, np.random.default_rng(2))


def test_a_misspelt_keyword_of_ones_own_g_is_named_with_the_ones_it_takes():
    from maxminq.theory import operator_bias

    with pytest.raises(TypeError) as info:
        operators.own_operator(mixed_g, [(2, 3)], lamb=0.5)
    assert str(info.value) == "operator 'mixed_g' has no parameter 'lamb' (its parameters: lam)"
    with pytest.raises(TypeError, match="'mixed_g' has no parameter 'lamb'"):
        operator_bias(mixed_g, 4, 2, 1.0, 1.0, 100, np.random.default_rng(0), lamb=0.5)
    operators.own_operator(open_g, [(2, 3)], anything=1.0)  # **params takes any keyword
    wrapped = operators.own_operator(mixed_g, [(2, 3)], lam=1.0)
    q = np.array([[1.0, 5.0, 0.0], [3.0, 2.0, 0.0]])
    assert float(wrapped(q, lam=1.0)) == 2.0  # Maxmin's value at lam = 1


def test_a_misspelt_keyword_on_the_command_line_is_one_line(tmp_path, monkeypatch, capsys):
    from maxminq.cli import main

    (tmp_path / "mixed_ops_for_cli.py").write_text(
        "def mixed(q, lam=0.5):\n"
        "    return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "toy"
    argv = ["experiment", "toy-mdp", "--algorithms", "mixed_ops_for_cli:mixed:2:lamb=0.5"]
    code = main([*argv, "--runs", "2", "--episodes", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and not out.exists()
    assert "--algorithms" in err and "has no parameter 'lamb' (its parameters: lam)" in err
    assert "torch" not in err  # (the old message advised torch.as_tensor)


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
