"""Package attributes imported on first use (PEP 562), so that importing a light submodule
does not pull in torch or matplotlib through its package's ``__init__``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def submodules(package: str) -> list[str]:
    """The names of ``package``'s public modules and subpackages, found on disk (none is
    imported): ``['agent', 'finite_mdp', 'toy_mdp']`` for ``maxminq.tabular``."""
    import pkgutil  # here, not at the top: ``import maxminq`` does not pay for it

    path = getattr(sys.modules[package], "__path__", [])
    return sorted(m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_"))


def lazy_attributes(package: str, api: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``name`` in ``api`` is imported from
    the module ``api[name]`` when first asked for, and a module of the package
    (:func:`submodules`) is imported when first asked for as an attribute, as Python's own
    ``import maxminq.tabular.finite_mdp`` would (``import maxminq;
    maxminq.tabular.finite_mdp`` was an AttributeError); any other name is an
    AttributeError."""

    def __getattr__(name: str) -> Any:
        if name in api:
            return getattr(importlib.import_module(api[name]), name)
        if not name.startswith("_") and name in submodules(package):
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def lazy_dir(
    package: str, api: Mapping[str, str], *, modules: bool = False
) -> Callable[[], list[str]]:
    """A module-level ``__dir__`` for ``package``: the names of ``api``, its submodules
    imported so far and its dunders, so that ``dir()``, ``help()`` and tab completion show
    the lazy API (they listed only the helpers the ``__init__`` imports) and not those
    helpers; with ``modules``, every one of its modules too (:func:`submodules`, imported
    or not: the API of a package of modules, ``maxminq.tabular``)."""

    def __dir__() -> list[str]:
        own = vars(sys.modules[package])
        kept = {k for k, v in own.items() if k.startswith("__") or isinstance(v, ModuleType)}
        return sorted(kept | set(api) | set(submodules(package) if modules else ()))

    return __dir__
