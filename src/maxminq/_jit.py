"""``njit``: numba's ``njit`` with an on-disk cache that cannot go stale across modules.

numba keys a cached kernel on its own source file only. Our kernels inline helpers from
other files (``tabular/agent.py``, ``linear/tiles.py``, ``operators_jit.py``, ``envs/_rng.py``),
so after an edit of a helper alone (a ``git pull`` into an editable install) numba would
load the old machine code and run it without a word. Every kernel is therefore cached in a
folder named after a hash of all of maxminq's kernel sources (the files that use ``njit``):
any change to any of them starts a fresh cache (about 2.5 MB). Folders of earlier sources
are deleted on import once untouched for :data:`STALE_AFTER_DAYS` days (a process that may
still compile into one has had a week to finish).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

from maxminq.errors import MaxminqWarning, outside_stacklevel

PACKAGE_DIR = Path(__file__).resolve().parent


def kernel_sources(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The package's Python files that define or inline numba kernels, in a fixed order."""
    return sorted(
        p for p in package_dir.rglob("*.py") if p != Path(__file__) and "njit" in p.read_text()
    )


def sources_hash(paths: list[Path], root: Path = PACKAGE_DIR) -> str:
    """A hash of the files' paths (relative to ``root``) and contents: 16 hex digits."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


#: Where the kernels are cached: ``__pycache__/numba-<hash of the kernel sources>``.
CACHE_DIR = PACKAGE_DIR / "__pycache__" / f"numba-{sources_hash(kernel_sources())}"
#: Cache folders of other sources untouched this long are deleted on import.
STALE_AFTER_DAYS = 7


def prune_stale_caches(cache_dir: Path = CACHE_DIR, days: float = STALE_AFTER_DAYS) -> list[Path]:
    """Delete the ``numba-*`` folders beside ``cache_dir`` (other kernel sources) whose
    last change is more than ``days`` old; best effort (a folder that cannot be deleted
    stays). A folder's last change is that of the newest entry in it. Returns the folders
    deleted."""
    cutoff = time.time() - days * 86400
    deleted = []
    for folder in cache_dir.parent.glob("numba-*"):
        with contextlib.suppress(OSError):  # gone already, or not ours to delete
            if folder == cache_dir or not folder.is_dir():
                continue
            # numba writes into subfolders, which leaves the folder's own mtime behind
            newest = max(p.stat().st_mtime for p in [folder, *folder.rglob("*")])
            if newest < cutoff:
                shutil.rmtree(folder)
                deleted.append(folder)
    return deleted


prune_stale_caches()


class CacheNotWrittenWarning(MaxminqWarning):
    """A compiled kernel could not be saved in numba's on-disk cache (a full disk, a quota, a
    file-size limit): the work goes on, and the kernel compiles again in the next process."""


_cache_write_failed = False  # warned once per process: every kernel would say the same


def _save_or_go_on(save: Callable[..., None]) -> Callable[..., None]:
    """numba's ``Cache.save_overload`` that lets the work go on when the save fails with an
    OSError: numba raised it through the kernel's first call, so a run died on its cache (an
    optional speed-up) after the compilation had worked. numba writes each cache file under
    a temporary name first and deletes that on failure, and reads a missing file as a miss."""

    def save_overload(*args: Any) -> None:
        global _cache_write_failed
        try:
            save(*args)
        except OSError as err:
            if not _cache_write_failed:
                _cache_write_failed = True
                warnings.warn(
                    f"numba's kernel cache could not be written ({err.strerror or err}) in "
                    f"{CACHE_DIR}: the kernels compile again in every new process",
                    CacheNotWrittenWarning,
                    # at the user's line that ran the kernel, past numba's dispatcher
                    stacklevel=outside_stacklevel(os.path.dirname(numba.__file__)),
                )

    return save_overload


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit(cache=True, **options)``, cached under :data:`CACHE_DIR`; usable bare
    (``@njit``) or with options (``@njit(inline="always")``). A cache that cannot be written
    is a :class:`CacheNotWrittenWarning`, not an error."""

    def compile_cached(fn: Callable[..., Any]) -> Any:
        # numba reads it once, when the kernel is declared. The ignores: numba.config sets
        # its options at run time, so its module has no CACHE_DIR for mypy.
        before = numba.config.CACHE_DIR  # type: ignore[attr-defined]
        numba.config.CACHE_DIR = str(CACHE_DIR)  # type: ignore[attr-defined]
        try:
            kernel = numba.njit(cache=True, **options)(fn)
        finally:
            numba.config.CACHE_DIR = before  # type: ignore[attr-defined]
        cache = getattr(kernel, "_cache", None)  # numba has no public hook for the save
        if cache is not None and hasattr(cache, "save_overload"):
            cache.save_overload = _save_or_go_on(cache.save_overload)
        return kernel

    if args and callable(args[0]) and len(args) == 1 and not options:
        return compile_cached(args[0])
    if args:
        raise TypeError("njit: options must be given by keyword")
    return compile_cached
