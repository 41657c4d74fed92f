"""Every module of maxminq's subpackages as an attribute after a bare ``import maxminq``, as
the package docstring lists them (``maxminq.tabular.finite_mdp``,
``maxminq.linear.mountain_car``, ``maxminq.experiments.runner``): each was an
AttributeError (only ``from maxminq.tabular.finite_mdp import ...`` worked), while mypy
accepted it; and ``dir()`` (tab completion) of ``maxminq.tabular``, ``maxminq.linear`` and
``maxminq.experiments`` was empty. Neither imports a module before it is asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import maxminq

SRC = Path(maxminq.__file__).parent


def _run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _modules_on_disk(package: str) -> list[str]:
    """The public .py modules of src/maxminq/<package>, listed here independently."""
    folder = SRC / package
    return sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_"))


def test_modules_of_the_subpackages_are_attributes_imported_on_first_use() -> None:
    out = _run(
        "import sys, maxminq, numpy as np\n"
        "mdp = maxminq.tabular.finite_mdp.random_mdp(3, 2, np.random.default_rng(0))\n"
        "print(type(mdp).__name__, mdp.P.shape)\n"
        "print(maxminq.linear.mountain_car.run_mountain_car.__name__)\n"
        "print(maxminq.experiments.runner.run_sweep.__name__)\n"
        "print(maxminq.experiments.store.load_results.__name__)\n"
        "print(maxminq.analysis.style.__name__, maxminq.deep.config.__name__)\n"
        "print(maxminq.cli.OneLineParser.__name__)\n"
        "import maxminq.tabular.finite_mdp as f\n"
        "print(f is maxminq.tabular.finite_mdp)\n"
    )
    assert out == [
        "FiniteMDP (3, 2, 3)",
        "run_mountain_car",
        "run_sweep",
        "load_results",
        "maxminq.analysis.style maxminq.deep.config",  # light modules of the lazy APIs
        "OneLineParser",
        "True",
    ]


def test_dir_lists_a_packages_modules_without_importing_them() -> None:
    out = _run(
        "import sys, maxminq.tabular as t, maxminq.linear as l, maxminq.experiments as e\n"
        "for p in (t, l, e):\n"
        "    print([n for n in dir(p) if not n.startswith('_')])\n"
        "print(sorted(m for m in sys.modules if m.startswith('maxminq.')))\n"
        "print('pandas' in sys.modules, 'torch' in sys.modules)\n"
    )
    assert eval(out[0]) == _modules_on_disk("tabular") == ["agent", "finite_mdp", "toy_mdp"]
    assert eval(out[1]) == _modules_on_disk("linear") == ["mountain_car", "tiles"]
    assert eval(out[2]) == _modules_on_disk("experiments")
    assert {"config", "runner", "store"} <= set(eval(out[2]))
    # what the imports above load, and no module of theirs
    loaded = ["maxminq._lazy", "maxminq.experiments", "maxminq.linear", "maxminq.operators"]
    assert eval(out[3]) == [*loaded, "maxminq.tabular"]
    assert out[4] == "False False"


def test_a_name_that_is_no_module_is_still_an_attribute_error() -> None:
    out = _run(
        "import maxminq\n"
        "for name in ('maxminq.tabular.finite_mpd', 'maxminq.linear._lazy', 'maxminq.clii'):\n"
        "    try:\n"
        "        eval(name)\n"
        "    except AttributeError as err:\n"
        "        print(err)\n"
        "print(hasattr(maxminq.experiments, '_ipython_canary_method_should_not_exist_'))\n"
    )
    assert out == [
        "module 'maxminq.tabular' has no attribute 'finite_mpd'",
        "module 'maxminq.linear' has no attribute '_lazy'",
        "module 'maxminq' has no attribute 'clii'",
        "False",
    ]
