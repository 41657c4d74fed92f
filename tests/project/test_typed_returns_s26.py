"""What a type checker is told a call returns is what it returns. ``run_mountain_car_grid``
was typed ``DataFrame | tuple[DataFrame, ndarray, ndarray]`` whatever ``return_weights``,
so ``run_mountain_car_grid(...).groupby(...)`` and ``pd.concat([run_mountain_car_grid(...)])``
(examples/noisy_mountain_car.py) failed ``mypy --strict`` in a user's script; its overloads
type the table alone for ``return_weights=False`` (the default) and the tuple for ``True``.
Read from the source (running mypy here would take a cold cache tens of seconds), and
checked against what the calls return."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

import maxminq.linear.mountain_car as mc

SMALL = dict(algorithm="maxmin", n=2, sigma2=[0.0], step_sizes=[0.5], runs=1, episodes=1, seed=0)


def _overloads(path: Path, name: str) -> dict[str, str]:
    """``{annotation of return_weights: return annotation}`` of the ``@overload``s of
    ``name`` in ``path``."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        if not (isinstance(node, ast.FunctionDef) and node.name == name):
            continue
        if not any(ast.unparse(d) in ("overload", "typing.overload") for d in node.decorator_list):
            continue
        (arg,) = [a for a in node.args.kwonlyargs if a.arg == "return_weights"]
        assert arg.annotation is not None and node.returns is not None
        out[ast.unparse(arg.annotation)] = ast.unparse(node.returns)
    return out


def test_run_mountain_car_grid_is_typed_by_return_weights() -> None:
    typed = _overloads(Path(mc.__file__), "run_mountain_car_grid")
    assert typed == {
        "Literal[False]": "pd.DataFrame",
        "Literal[True]": "tuple[pd.DataFrame, np.ndarray, np.ndarray]",
        "bool": "pd.DataFrame | tuple[pd.DataFrame, np.ndarray, np.ndarray]",
    }
    table = mc.run_mountain_car_grid(**SMALL)  # the default: return_weights=False
    assert type(table) is pd.DataFrame
    got = mc.run_mountain_car_grid(**SMALL, return_weights=True)
    assert isinstance(got, tuple) and len(got) == 3
    assert type(got[0]) is pd.DataFrame
    assert isinstance(got[1], np.ndarray) and isinstance(got[2], np.ndarray)


def test_train_config_seeds_is_typed_as_what_resolve_takes() -> None:
    """``TrainConfig.seeds`` was typed ``list[int]``, so ``TrainConfig(..., seeds=range(5))``,
    which its own error message suggests, and ``seeds=np.arange(5)``, which its repr
    documents, failed ``mypy --strict``; resolved, the seeds are a list."""
    import dataclasses
    import types
    import typing

    import maxminq.deep.config as config
    from maxminq.deep import TrainConfig

    (seeds,) = [f for f in dataclasses.fields(TrainConfig) if f.name == "seeds"]
    declared = eval(str(seeds.type), vars(config))  # the annotation, as a type checker reads it
    union = typing.get_origin(declared) in (typing.Union, types.UnionType)
    members = typing.get_args(declared) if union else (declared,)
    kinds = tuple(typing.get_origin(a) or a for a in members)
    for given in ([0, 1], (0, 1), range(2), np.arange(2)):
        assert isinstance(given, kinds), given
        resolved = TrainConfig(env_id="CartPole-v1", seeds=given).resolve().seeds
        assert resolved == [0, 1] and type(resolved) is list
