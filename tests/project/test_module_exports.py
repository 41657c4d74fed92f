"""What maxminq's modules export: deep.train's public names after its split, lazy
attributes a type checker sees, imports training does not need."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import maxminq.deep
import maxminq.deep.train as train

# deep.train's __all__ before the split (commit 195412d^), written out here.
_OLD_ALL = [
    "BIAS_TAIL",
    "FIGURE_FILES",
    "OPTIONAL_TABLES",
    "RUN_FILES",
    "TABLE_COLUMNS",
    "bias_horizon",
    "pooled_bias",
    "probe_counts",
    "Trainer",
    "check_resumable",
    "clear_run",
    "folder_lock",
    "run_training",
    "tensorboard_writer_class",
]


# Public names defined in deep.train before the split, and where they live now.
_MOVED = {
    "BIAS_TAIL": "maxminq.deep.config",
    "TABLE_COLUMNS": "maxminq.deep.run_folder",
    "OPTIONAL_TABLES": "maxminq.deep.run_folder",
    "FIGURE_FILES": "maxminq.deep.run_folder",
    "RUN_FILES": "maxminq.deep.run_folder",
    "read_tables": "maxminq.deep.run_folder",
    "check_resumable": "maxminq.deep.run_folder",
    "CheckpointWarning": "maxminq.deep.run_folder",
    "folder_lock": "maxminq.deep.run_folder",
    "clear_run": "maxminq.deep.run_folder",
    "probe_counts": "maxminq.deep.bias_probes",
    "bias_horizon": "maxminq.deep.bias_probes",
    "episode_observation": "maxminq.deep.env_checks",
    "warn_if_no_time_limit": "maxminq.deep.env_checks",
    "warn_if_normalized": "maxminq.deep.env_checks",
    "StepBoundary": "maxminq.deep.step_boundary",
}


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


def test_training_does_not_import_scipy_stats_but_deep_train_still_exports_pooled_bias() -> None:
    """deep.train imported analysis.tables (and so scipy.stats, about a second of CPU in every
    train, sweep worker and evaluate process) only to re-export pooled_bias."""
    code = (
        "import sys, maxminq.deep.train as t\n"
        "print('scipy.stats' in sys.modules)\n"
        "from maxminq.deep.train import pooled_bias\n"
        "from maxminq.analysis.tables import pooled_bias as original\n"
        "print(pooled_bias is original)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


@pytest.mark.usefixtures("torch_one_thread")
def test_deep_train_keeps_every_public_name_it_had_before_the_split() -> None:
    """Each old public name is still importable from ``maxminq.deep.train``, as the same
    object as in its new module (a warning class too: a filter on either catches it), and
    ``import *`` still gives the old ``__all__``."""
    missing = [name for name in _MOVED if not hasattr(train, name)]
    assert missing == []
    for name, home in _MOVED.items():
        assert getattr(train, name) is getattr(importlib.import_module(home), name), name
    assert set(_OLD_ALL) <= set(train.__all__)
    star: dict[str, object] = {}
    exec("from maxminq.deep.train import *", star)
    assert set(_OLD_ALL) <= set(star)


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
