"""operators.load_operator / operator_reference: naming a G function in configs and on the CLI."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from maxminq import operators
from maxminq.operators import load_operator, operator_reference


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


def mixed_g(q, lam=0.5):
    """lam * Maxmin + (1 - lam) * Ensemble, per action, then the max (a G with a keyword)."""
    return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)


def open_g(q, **params):
    """A G that takes any keyword (and ignores them)."""
    return q.max(axis=-1).max(axis=-1)


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
