"""An example's ``--quick`` sets the scale of the options not given with it (examples/
README.md): a value given alongside it is kept, never silently replaced. (The other examples
with scale options are run that way in ``test_bias_review.py``.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _parse(name: str, *argv: str):  # noqa: ANN202 - the example's own Namespace
    """``examples/<name>``'s ``parse_args(argv)``, the module imported under its own name (as
    its environment id expects)."""
    stem = name.removesuffix(".py")
    spec = importlib.util.spec_from_file_location(stem, EXAMPLES / name)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(stem) or importlib.util.module_from_spec(spec)
    if stem not in sys.modules:
        sys.modules[stem] = module
        spec.loader.exec_module(module)
    return module.parse_args(list(argv))


def test_own_env_quick_keeps_steps_and_seeds_given() -> None:
    """'--quick --steps 5000 --seeds 3' trained 3,000 steps x 2 seeds and said nothing."""
    args = _parse("own_env_maxmin_vs_dqn.py", "--quick", "--steps", "5000", "--seeds", "3")
    assert (args.steps, args.seeds) == (5000, 3)
    args = _parse("own_env_maxmin_vs_dqn.py", "--quick", "--seeds", "1")
    assert (args.steps, args.seeds) == (3000, 1)  # --quick's steps, as not given
    args = _parse("own_env_maxmin_vs_dqn.py")
    assert (args.steps, args.seeds) == (20_000, 5)  # the defaults the docstring names
