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


def test_reproduce_names_the_runs_gone_nonfinite_as_sweep_does(tmp_path: pathlib.Path, capsys):
    """``maxminq reproduce`` said '(4 with runs gone non-finite)' in its summary (make demo's
    quick Mountain Car at step size 0.08) without naming them, as ``maxminq sweep`` does,
    one line each; it printed its failed runs that way only."""
    import yaml

    from maxminq.cli import main

    configs = tmp_path / "configs"
    configs.mkdir()
    toy = {
        "name": "toy_blowup",
        "kind": "toy_mdp",
        "fixed": {"seed": 0, "runs": 4, "episodes": 60, "mu": 0.1, "buffer_size": 10},
        "grid": {"step_size": [3, 0.01]},
        "variants": [{"algorithm": "q_learning", "n": 1}],
        "scales": {"quick": {}},
    }
    (configs / "toy_blowup.yaml").write_text(yaml.safe_dump(toy))
    common = ["--configs", str(configs), "--workers", "1", "--no-progress"]
    assert (
        main(["sweep", str(configs / "toy_blowup.yaml"), "--out", str(tmp_path / "s"), *common[2:]])
        == 0
    )
    swept = [line for line in capsys.readouterr().out.splitlines() if "non-finite " in line]
    assert len(swept) == 1 and "q_learning, n 1, mu 0.1, step_size 3: 4 of 4 runs" in swept[0]
    out = tmp_path / "r"
    assert main(["reproduce", "--out", str(out), "--only", "toy_blowup", *common]) == 0
    said = capsys.readouterr().out.splitlines()
    assert [line for line in said if "non-finite " in line] == [swept[0]]
