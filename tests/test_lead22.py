"""The lead's mends of session 22, each with the test that failed before it."""

from __future__ import annotations

import pathlib

import pytest

from tests.run_folders import finished_run


def test_compare_does_not_repeat_a_value_the_label_already_names(tmp_path: pathlib.Path) -> None:
    """Two DQN runs of 300 and 50 steps: their labels tell them apart by steps ('DQN, steps
    300'), and the warning that the runs differ in steps repeated the value after it
    ('DQN, steps 300 300'). A label without the setting still gets the value."""
    from maxminq.analysis.compare import CompareWarning, compare_runs

    def run(name: str, steps: int, agent: str = "dqn") -> pathlib.Path:
        rows = [(s, steps, -1.0, 4) for s in (0, 1)]
        train = {0: (steps, 10.0), 1: (steps, 11.0)}
        return finished_run(
            tmp_path / name, rows, steps=steps, train=train, tests={0: 20.0, 1: 30.0}, agent=agent
        )

    with pytest.warns(CompareWarning) as caught:
        compare_runs([run("long", 300), run("short", 50)])
    assert [str(w.message) for w in caught] == [
        "the runs differ in steps (training length): DQN, steps 300, DQN, steps 50"
    ]
    with pytest.warns(CompareWarning) as caught:
        compare_runs([run("dqn", 300), run("maxmin", 50, agent="maxmin-dqn")])
    assert [str(w.message) for w in caught] == [
        "the runs differ in steps (training length): DQN 300, Maxmin DQN (N=1) 50"
    ]
