"""The software a sweep's runs computed with, recorded in its results folder.

A sweep that runs anything records the versions it ran with (:func:`software_versions`:
maxminq, its git revision from a source checkout, Python and the distributions that decide
what the runs compute) in the store's ``meta`` table, under ``software:<config>``: the
list of every distinct set of versions that swept the config into the folder (a folder
resumed after an upgrade holds two). ``maxminq merge`` brings the lists of the machines'
folders together and says when they differ (a machine with another maxminq revision or
another numpy: its runs were computed otherwise), and ``maxminq reproduce`` names every
version the folder's runs ran with in ``reproduce.json`` (the report's header), not only
the machine's that wrote the report.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SOFTWARE_PREFIX = "software:"  # meta key: software:<config name>

#: The distributions whose versions decide what the runs compute, recorded with a sweep
#: and in ``reproduce.json`` (``software``) and printed in the report's header.
SOFTWARE = ("numpy", "scipy", "pandas", "numba", "torch", "gymnasium", "minatar")


def _git_revision(folder: Path) -> str | None:
    """``abc1234`` (``abc1234, uncommitted changes`` when tracked files differ) of the git
    checkout ``folder`` is in, or None outside one or without git."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                              text=True, timeout=10, check=True)  # fmt: skip
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + (", uncommitted changes" if dirty else "") if head else None


def software_versions() -> dict[str, str]:
    """The versions runs compute with here: maxminq (and, from a source checkout, its git
    revision), Python and each installed distribution of :data:`SOFTWARE`, in that order.
    Read from the installed metadata: nothing heavy (torch) is imported. Read once per
    process (the code it runs is the code it imported: a commit made meanwhile is not it)."""
    return dict(_versions_here())


@functools.cache
def _versions_here() -> dict[str, str]:
    """:func:`software_versions`, read once."""
    import platform
    from importlib import metadata

    import maxminq

    out = {"maxminq": maxminq.__version__}
    source = Path(maxminq.__file__).resolve().parents[2]
    if (source / ".git").exists():  # an editable install from a clone
        revision = _git_revision(source)
        if revision:
            out["git"] = revision
    out["python"] = platform.python_version()
    for name in SOFTWARE:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _versions_list(text: str | None) -> list[dict[str, str]]:
    """The list of version sets a ``software:`` entry holds ([] for none or a damaged one)."""
    try:
        value = json.loads(text) if text else []
    except ValueError:
        return []
    if not isinstance(value, list):
        return []
    return [{str(k): str(v) for k, v in item.items()} for item in value if isinstance(item, dict)]


def _union(lists: Sequence[Sequence[Mapping[str, str]]]) -> list[dict[str, str]]:
    """The distinct version sets of ``lists``, in the order first seen."""
    out: list[dict[str, str]] = []
    for versions in lists:
        for item in versions:
            if dict(item) not in out:
                out.append(dict(item))
    return out


def record_software(store: Any, name: str, versions: Mapping[str, str] | None = None) -> None:
    """Add ``versions`` (default: :func:`software_versions`) to those that swept config
    ``name`` into ``store``'s folder (nothing when they are there already)."""
    versions = dict(versions if versions is not None else software_versions())
    key = SOFTWARE_PREFIX + name
    known = _versions_list(store.meta(key))
    if versions not in known:
        store.set_meta({key: json.dumps([*known, versions], separators=(",", ":"))})


def folder_software(meta: Mapping[str, str]) -> dict[str, list[dict[str, str]]]:
    """Config name -> the version sets that swept it, from a store's ``meta`` entries."""
    return {
        key[len(SOFTWARE_PREFIX) :]: _versions_list(value)
        for key, value in meta.items()
        if key.startswith(SOFTWARE_PREFIX)
    }


def merged_entries(folders: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The ``software:`` entries of a folder merged from folders with ``meta`` entries
    ``folders``: per config, the distinct version sets of all of them."""
    per: dict[str, list[list[dict[str, str]]]] = {}
    for meta in folders:
        for name, versions in folder_software(meta).items():
            per.setdefault(name, []).append(versions)
    return {
        SOFTWARE_PREFIX + name: json.dumps(_union(lists), separators=(",", ":"))
        for name, lists in per.items()
    }


def differences(version_sets: Sequence[Mapping[str, str]]) -> dict[str, list[str]]:
    """Name -> its distinct versions, for the names whose versions differ between
    ``version_sets`` (one that lacks a name, e.g. ``git`` outside a checkout, reads
    ``none``)."""
    names: list[str] = []
    for item in version_sets:
        names += [k for k in item if k not in names]
    out: dict[str, list[str]] = {}
    for name in names:
        seen: list[str] = []
        for item in version_sets:
            value = item.get(name, "none")
            if value not in seen:
                seen.append(value)
        if len(seen) > 1:
            out[name] = seen
    return out


def combined(version_sets: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """One name -> version text for all of ``version_sets``: a name with several versions
    reads them all (``0.1.0 / 0.2.0``), in the order first seen."""
    out: dict[str, str] = {}
    for item in version_sets:
        for name in item:
            if name not in out:
                values: list[str] = []
                for other in version_sets:
                    value = other.get(name, "none")
                    if value not in values:
                        values.append(value)
                out[name] = " / ".join(values)
    return out
