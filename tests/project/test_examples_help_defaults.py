"""Every value option of every example says its default in ``--help``, and where argparse
holds the default (not set later by ``--quick``), the number said is the one it holds.
Before, ``generalized_q_random_mdp.py --help`` listed --states, --actions, --gamma and
--seed bare, ``operator_bias.py`` --n-max, --tau and --seed, ``noisy_mountain_car.py`` and
``own_operator.py`` their --seed; and the examples' --seeds, a count, did not say it is not
``maxminq train``'s list (``--seeds 0-4``)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys

import pytest
from helpers import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.py"))


def _parser(path, monkeypatch) -> argparse.ArgumentParser:  # noqa: ANN001
    """The parser the example's ``parse_args`` builds (caught as it parses ``[]``)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(path.stem)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, path.stem, module)
        spec.loader.exec_module(module)
    made: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):  # noqa: ANN001, ANN202
        made.append(self)
        return original(self, args, namespace)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
    module.parse_args([])
    return made[0]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_option_of_an_example_says_its_default(path, monkeypatch) -> None:
    parser = _parser(path, monkeypatch)
    for action in parser._actions:  # argparse has no public list of its actions
        if not action.option_strings or action.nargs == 0:  # -h, --quick, --overwrite
            continue
        option = action.option_strings[0]
        help_text = action.help or ""
        assert "default" in help_text, f"{path.name} {option}: {help_text!r}"
        said = re.search(r"default ([-\d.,]+)", help_text)
        if action.default is not None and said and isinstance(action.default, int | float):
            assert float(said.group(1).rstrip(".,").replace(",", "")) == action.default, (
                f"{path.name} {option}: help says {said.group(1)}, default is {action.default}"
            )


@pytest.mark.parametrize("name", ["own_env_maxmin_vs_dqn.py", "own_operator.py"])
def test_the_examples_seeds_say_they_are_a_count(name, monkeypatch) -> None:
    parser = _parser(REPO / "examples" / name, monkeypatch)
    (seeds,) = [a for a in parser._actions if "--seeds" in a.option_strings]
    assert "a count" in (seeds.help or "") and "0..K-1" in (seeds.help or "")
