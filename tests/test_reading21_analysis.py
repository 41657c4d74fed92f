"""Second reading of this session's analysis of generalized-dqn runs (session 21)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd

from maxminq.analysis.compare import compare_runs


def _run_folder(folder: Path, operator: str, op_kwargs: dict | None) -> Path:
    """A finished one-seed generalized-dqn run folder as 'maxminq train' writes it."""
    folder.mkdir()
    cfg = {"agent": "generalized-dqn", "n": 3, "lr": 1e-3, "steps": 200, "operator": operator}
    cfg |= {"env_id": "CartPole-v1", "seeds": [0], "network": "mlp"}
    if op_kwargs is not None:
        cfg["op_kwargs"] = op_kwargs
    (folder / "config.json").write_text(json.dumps(cfg))
    ep = pd.DataFrame({"seed": 0, "step": [100, 200], "return": [10.0, 12.0]})
    ep["return_avg100"] = [10.0, 11.0]
    ep.to_csv(folder / "episodes.csv", index=False)
    m = pd.DataFrame({"seed": 0, "step": [200], "bias_mean": [1.0], "q_mean": [0.5]})
    m["bias_abs"], m["bias_std"], m["loss"] = 1.0, 0.0, 0.1
    m.to_csv(folder / "metrics.csv", index=False)
    pd.DataFrame({"seed": [0], "return": [1.0]}).to_csv(folder / "tests.csv", index=False)
    pd.DataFrame({"seed": [0], "status": ["done"]}).to_csv(folder / "runs.csv", index=False)
    return folder


def test_compare_csv_writes_op_kwargs_as_a_sweeps_tables_do(tmp_path: Path) -> None:
    """compare --csv's op_kwargs is the text of a sweep's summary/deep_final.csv and
    report ('{"lam":0.5,"w":1.0}', sorted, no spaces), so the two tables join on it; it
    wrote '{"lam": 0.5, "w": 1.0}', which matches no sweep row."""
    a = _run_folder(tmp_path / "a", "maxmin", None)
    b = _run_folder(tmp_path / "b", "my_ops:g", {"w": 1.0, "lam": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare_runs([a, b])
    assert list(table["op_kwargs"]) == ["", '{"lam":0.5,"w":1.0}']


def test_own_operator_compares_the_two_targets_run_by_run(monkeypatch) -> None:
    """examples/own_operator.py's 'lam=0.5 vs lam=1' sentence: the toy runs of both share
    their seeds (run r: (seed, r)), so the difference is the per-run differences' mean and
    SE. It combined the two SEs as if independent (np.hypot), at --quick '+0.012 +- 0.006:
    do not differ beyond 2 SE' where the paired SE is 0.003 (3.8 SE)."""
    import sys

    examples = Path(__file__).resolve().parent.parent / "examples"
    monkeypatch.syspath_prepend(str(examples))
    monkeypatch.delitem(sys.modules, "own_operator", raising=False)
    import own_operator

    spread = [-0.3, 0.1, 0.4, -0.2]  # run to run, shared by both settings
    other = [v - d for v, d in zip(spread[::-1], [0.011, 0.009] * 2, strict=True)]
    toy = pd.DataFrame(
        {
            "label": ["a"] * 4 + ["b"] * 4,
            "run": [0, 1, 2, 3, 3, 2, 1, 0],  # matched by run, not by row order
            "q_a_left": [*spread, *other],
        }
    )
    # b's runs 3, 2, 1, 0 are a's minus 0.011, 0.009, 0.011, 0.009: differences
    # [0.009, 0.011, 0.009, 0.011] by run, mean 0.01, SE 0.001 / sqrt(4) * sqrt(4/3).
    diff, se = own_operator.paired_difference(toy, "a", "b")
    assert abs(diff - 0.01) < 1e-12
    assert abs(se - 0.001 / 3**0.5) < 1e-12
