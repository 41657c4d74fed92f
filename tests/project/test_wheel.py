"""The package as a user installs it: a wheel built from this tree, used from outside it.

The editable install of the test suite reads every file from ``src/``, so a module or data
file that a wheel leaves out (a config, ``py.typed``) or a path that only exists in a
checkout would pass every other test. Here the wheel is built from a copy of the tree
(``pip wheel`` without build isolation: nothing is downloaded; setuptools comes with the
venv), unpacked into a folder of its own and run from an empty working directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import REPO

ROOT = REPO


SRC = ROOT / "src" / "maxminq"


def _package_files() -> set[str]:
    """What the wheel must hold: every module and every config of ``src/maxminq``."""
    files = {p.relative_to(SRC.parent).as_posix() for p in SRC.rglob("*.py")}
    files |= {p.relative_to(SRC.parent).as_posix() for p in (SRC / "configs").glob("*.yaml")}
    return files | {"maxminq/py.typed"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, the folder it is unpacked into)."""
    base = tmp_path_factory.mktemp("wheel")
    tree = base / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", tree / "src", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(base / "dist"), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (base / "dist").glob("maxminq-*.whl")
    site = base / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return wheel, site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python *args`` with the unpacked wheel first on the path (before the editable
    install of this checkout), from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_holds_every_module_and_config_and_nothing_of_the_checkout(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    package = {n for n in names if not n.startswith("maxminq-")}  # less the dist-info
    assert package == _package_files()
    assert len([n for n in package if n.startswith("maxminq/configs/")]) >= 11
    metadata = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as z:
        assert "maxminq = maxminq.cli:main" in z.read(metadata).decode()


def test_the_installed_package_imports_and_finds_its_configs_from_anywhere(installed, tmp_path):
    """Every module imports from the unpacked wheel (not from ``src/``), and ``reproduce``'s
    config lookup, from a folder with no ``configs/``, lands on the shipped ones."""
    _, site = installed
    script = (
        "import importlib, pkgutil, maxminq\n"
        "from maxminq.commands.reproduce import find_configs_dir\n"
        "names = [m.name for m in pkgutil.walk_packages(maxminq.__path__, 'maxminq.')]\n"
        "for name in names: importlib.import_module(name)\n"
        "print(maxminq.__file__); print(len(names)); print(find_configs_dir(None))\n"
    )
    done = _run(site, tmp_path, "-c", script)
    assert done.returncode == 0, done.stderr[-2000:]
    where, count, configs = done.stdout.split("\n")[:3]
    assert Path(where) == site / "maxminq" / "__init__.py"
    assert int(count) == len([p for p in SRC.rglob("*.py") if p.name != "__init__.py"]) + len(
        [p for p in SRC.rglob("__init__.py") if p.parent != SRC]
    )
    assert Path(configs) == site / "maxminq" / "configs"


def test_the_installed_cli_plans_a_shipped_sweep(installed, tmp_path):
    """The command line from the wheel: a dry run of a shipped config (it loads, expands
    and counts the runs; nothing starts and nothing is written)."""
    _, site = installed
    config = site / "maxminq" / "configs" / "toy_mdp.yaml"
    done = _run(site, tmp_path, "-m", "maxminq", "sweep", str(config), "--out", "r", "--dry-run")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "toy_mdp [quick]" in done.stdout and "dry run: nothing started" in done.stdout
    assert not (tmp_path / "r").exists()
