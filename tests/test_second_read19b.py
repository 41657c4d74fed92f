"""Second reading (b) of session 19's commits: h1's test-speed changes, h8's deep fixes and
the lead's lazy ``pooled_bias`` of ``maxminq.deep.train``.

1. 141fef0 made ``maxminq.deep.train.pooled_bias`` a lazy attribute (a module
   ``__getattr__``, so that training does not import scipy.stats). A type checker that
   sees a module ``__getattr__`` returning ``Any`` takes every name it cannot find in the
   module for ``Any``: ``from maxminq.deep.train import run_trainin`` (a typo) passed mypy
   in a user's code (maxminq ships ``py.typed``), and so did any misspelt attribute; the
   package ``maxminq.deep``'s lazy API had the same hole. Both are hidden from type
   checkers now (which see the real imports under ``TYPE_CHECKING``). And ``dir()`` (so
   ``help()``, ``inspect.getmembers`` and tab completion) no longer listed ``pooled_bias``
   in ``maxminq.deep.train``, which it did before: a module ``__dir__`` adds it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import maxminq.deep

DEEP = Path(maxminq.deep.__file__).parent
SRC = DEEP.parent  # src/maxminq


def _is_type_checking(test: ast.expr) -> bool | None:
    """``True`` for ``TYPE_CHECKING`` (or ``typing.TYPE_CHECKING``), ``False`` for its
    ``not``, ``None`` for any other condition."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) else test
    name = getattr(inner, "id", None) or getattr(inner, "attr", None)
    if name != "TYPE_CHECKING":
        return None
    return not negated


def _checker_sees(body: list[ast.stmt]) -> list[str]:
    """The module-level names a type checker (mypy: ``TYPE_CHECKING`` is true for it, both
    branches of any other ``if``) sees bound in ``body``."""
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.If):
            checking = _is_type_checking(node.test)
            if checking is not False:
                names += _checker_sees(node.body)
            if checking is not True:
                names += _checker_sees(node.orelse)
        elif isinstance(node, ast.Try):
            names += _checker_sees(node.body)
    return names


def test_no_module_shows_a_type_checker_a_module_getattr() -> None:
    """With a module ``__getattr__`` in sight, mypy types every unknown name of the module
    as that function's result (``Any``): misspelt imports from ``maxminq.deep``,
    ``maxminq.deep.train`` and (lead) ``maxminq.analysis`` passed. (Checked with mypy
    itself too: ``from maxminq.deep.train import run_trainin`` is an attr-defined error
    now, and ``pooled_bias`` keeps its real signature from the ``TYPE_CHECKING`` import.)"""
    seen = {
        str(path.relative_to(SRC)): _checker_sees(ast.parse(path.read_text(encoding="utf-8")).body)
        for path in sorted(SRC.rglob("*.py"))
    }
    assert len(seen) > 50 and "analysis/__init__.py" in seen  # the whole package is read
    assert [name for name, names in seen.items() if "__getattr__" in names] == []
    # what the checker sees of pooled_bias instead: the real import
    source = (DEEP / "train.py").read_text(encoding="utf-8")
    assert "from maxminq.analysis.tables import pooled_bias as pooled_bias" in source


def test_deep_train_dir_lists_pooled_bias_again() -> None:
    """Before the lazy attribute, ``pooled_bias`` was an ordinary import of the module, so
    in its ``dir()``; ``dir()`` must still list it, and what it lists must resolve."""
    import maxminq.deep.train as train
    from maxminq.analysis.tables import pooled_bias

    listed = dir(train)
    assert "pooled_bias" in listed and "run_training" in listed
    assert set(train.__all__) <= set(listed)
    assert train.pooled_bias is pooled_bias
    assert all(hasattr(train, name) for name in listed)
