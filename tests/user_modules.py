"""A module of the user's own, written by a test into a temporary folder and importable for
that test only (``with user_module(folder, name, source): ...``): the G functions and
environments that tests hand to maxminq as ``module:name``.

On the way out it forgets the module everywhere the test may have left it: its folder on
``sys.path`` (and on ``PYTHONPATH``, for spawned workers), the module in ``sys.modules``
(whoever imported it: the test, maxminq or a fixture), and the gymnasium ids its import
registered. ``monkeypatch.delitem(sys.modules, name, raising=False)`` could not express the
middle one: the module is not there yet when the test starts, so nothing is restored.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym


@contextlib.contextmanager
def user_module(folder: Path, name: str, source: str, *, workers: bool = False) -> Iterator[str]:
    """Writes ``source`` as ``folder/name.py`` and puts ``folder`` first on ``sys.path``
    (with ``workers``, also as ``PYTHONPATH``, so that spawned workers import it too); yields
    ``name`` without importing it. Everything is undone on exit, as described above."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    path = str(folder)
    environ = os.environ.get("PYTHONPATH")
    sys.modules.pop(name, None)
    sys.path.insert(0, path)
    if workers:
        os.environ["PYTHONPATH"] = path
    importlib.invalidate_caches()
    try:
        yield name
    finally:
        sys.modules.pop(name, None)
        if path in sys.path:
            sys.path.remove(path)
        if workers:
            if environ is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = environ
        for env_id in [i for i, spec in gym.registry.items() if _from(spec, name)]:
            del gym.registry[env_id]


def _from(spec: gym.envs.registration.EnvSpec, name: str) -> bool:
    """Whether an id's entry point is defined in the module ``name``."""
    entry = spec.entry_point
    if isinstance(entry, str):
        return entry.split(":")[0] == name
    return getattr(entry, "__module__", None) == name
