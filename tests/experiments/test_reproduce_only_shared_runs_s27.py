"""``maxminq reproduce --only A`` after an edit of config A leaves A's runs of its earlier
version out of the report, but not a run that config B (not selected) shares: that run is
B's too, and ``maxminq report`` shows it. Before, every run registered under A that the
edited A no longer makes was left out, B's shared one with it (and B's rows lost a run).
The store is built as ``register_runs`` builds it (no run is executed: which runs are left
out depends on the registry alone).
"""

from __future__ import annotations

from pathlib import Path

from maxminq.commands.reproduce import register_runs, report_stale_runs
from maxminq.experiments.config import config_from_document

FIXED = {"algorithm": "q_learning", "n": 1, "seed": 0, "runs": 2, "episodes": 5}


def _config(tmp_path: Path, name: str, mus: list[float]):
    doc = {"name": name, "kind": "toy_mdp", "fixed": FIXED, "grid": {"mu": mus}}
    return config_from_document({**doc, "scales": {"quick": {}}}, tmp_path / f"{name}.yaml")


def test_only_a_edited_config_leaves_out_its_own_earlier_runs_not_anothers(tmp_path):
    out = tmp_path / "out"
    a_before, b = _config(tmp_path, "a", [0.05, 0.2]), _config(tmp_path, "b", [0.2])
    register_runs(out, [a_before, b])  # reproduce of both, before the edit
    a_after = _config(tmp_path, "a", [0.1])  # edited: 0.05 and 0.2 dropped, 0.1 added
    register_runs(out, [a_after])  # reproduce --only a
    ids = {r.settings["mu"]: r.run_id for r in [*a_before.runs, *a_after.runs]}
    assert b.runs[0].run_id == ids[0.2]  # the run a and b share
    # a's own run of 0.05 is of an earlier version; 0.2 is b's as well, 0.1 a's as it is
    assert report_stale_runs(out, [a_after]) == {ids[0.05]}
    assert report_stale_runs(out, [a_after, b]) == {ids[0.05]}  # b makes 0.2 itself
    b_after = _config(tmp_path, "b", [0.3])  # both edited and both selected: 0.2 is stale
    assert report_stale_runs(out, [a_after, b_after]) == {ids[0.05], ids[0.2]}
