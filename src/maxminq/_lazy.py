"""Package attributes imported on first use (PEP 562), so that importing a light submodule
does not pull in torch or matplotlib through its package's ``__init__``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def lazy_attributes(package: str, api: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``name`` in ``api`` is imported from
    the module ``api[name]`` when first asked for; any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        if name not in api:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(api[name]), name)

    return __getattr__


def lazy_dir(package: str, api: Mapping[str, str]) -> Callable[[], list[str]]:
    """A module-level ``__dir__`` for ``package``: the names of ``api``, its submodules and
    its dunders, so that ``dir()``, ``help()`` and tab completion show the lazy API (they
    listed only the helpers the ``__init__`` imports) and not those helpers."""

    def __dir__() -> list[str]:
        own = vars(sys.modules[package])
        kept = {k for k, v in own.items() if k.startswith("__") or isinstance(v, ModuleType)}
        return sorted(kept | set(api))

    return __dir__
