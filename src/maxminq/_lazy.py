"""Package attributes imported on first use (PEP 562), so that importing a light submodule
does not pull in torch or matplotlib through its package's ``__init__``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, api: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``name`` in ``api`` is imported from
    the module ``api[name]`` when first asked for; any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        if name not in api:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(api[name]), name)

    return __getattr__
