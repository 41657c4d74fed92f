"""load_results with a single table or setting name given as a string (session 26): it
was iterated into its letters, so tables="metrics" matched no table and returned {} and
settings="alpha" kept no setting, without a word. One name is that one name now."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from maxminq.experiments.store import ResultsStore, load_results


@dataclass
class _Run:
    run_id: str
    kind: str
    config: str
    settings: dict = field(default_factory=dict)


def _store(folder) -> None:
    with ResultsStore(folder) as store:
        for i, alpha in enumerate((0.1, 0.2)):
            run = _Run(f"k-{i}", "k", "cfg", {"alpha": alpha, "m": 7})
            store.register([run])
            store.mark_running(run.run_id)
            tables = {
                "metrics": pd.DataFrame({"step": [1, 2, 3], "loss": [0.5, 0.25, 0.125]}),
                "episodes": pd.DataFrame({"episode": [0], "return": [float(i)]}),
            }
            store.save_tables(run, tables)
            store.mark_finished(run.run_id, "done")


def test_one_table_name_as_a_string_is_that_table(tmp_path) -> None:
    _store(tmp_path)
    one = load_results(tmp_path, tables="metrics")
    assert list(one) == ["metrics"]
    assert one["metrics"]["run_id"].tolist() == ["k-0"] * 3 + ["k-1"] * 3
    assert one["metrics"]["loss"].tolist() == [0.5, 0.25, 0.125] * 2
    # the same as the list of that one name
    pd.testing.assert_frame_equal(
        one["metrics"], load_results(tmp_path, tables=["metrics"])["metrics"]
    )


def test_one_setting_name_as_a_string_is_that_setting(tmp_path) -> None:
    _store(tmp_path)
    got = load_results(tmp_path, tables=["episodes"], settings="alpha")["episodes"]
    assert list(got.columns) == [
        "run_id",
        "config",
        "kind",
        "run_status",
        "alpha",
        "episode",
        "return",
    ]
    assert got["alpha"].tolist() == [0.1, 0.2]
