"""A classic (toy MDP) sweep whose runs went non-finite says so where the user looks first:
the sweep summary, status, reproduce and resume."""

from __future__ import annotations

import pathlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from maxminq.cli import main
from maxminq.experiments import runner
from maxminq.experiments.store import ResultsStore
from maxminq.tabular.toy_mdp import run_toy_mdp

# Two toy settings: Q-learning at step size 3 (its values go NaN/inf within ~30 episodes),
# and Q-learning at the paper's 0.01 (finite throughout).
TOY = {
    "name": "toy_blowup",
    "kind": "toy_mdp",
    "fixed": {"seed": 0, "runs": 4, "episodes": 60, "mu": 0.1, "buffer_size": 10},
    "grid": {"step_size": [3, 0.01]},
    "variants": [{"algorithm": "q_learning", "n": 1}],
    "scales": {"tiny": {}},
}


VALUES = ["p_left", "distance", "q_a_left"]


def _expected(frame: pd.DataFrame) -> tuple[int, int, int]:
    """(non-finite runs, runs, first episode), counted here from the stored table."""
    bad = ~np.isfinite(frame[VALUES].to_numpy(dtype=float)).all(axis=1)
    return (
        int(frame.loc[bad, "run"].nunique()),
        int(frame["run"].nunique()),
        int(frame.loc[bad, "episode"].min()),
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, runner.SweepSummary]:
    """The toy sweep run once into a folder."""
    out = tmp_path_factory.mktemp("nonfinite") / "out"
    summary = runner.run_sweep(TOY, out, scale="tiny", workers=1, progress=False)
    return out, summary


def _ids(out: Path) -> dict[float, str]:
    """step size -> run id of the sweep's two runs."""
    with ResultsStore(out, create=False) as store:
        return {r.settings["step_size"]: r.run_id for r in store.records()}


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


def test_sweep_summary_names_the_runs_gone_nonfinite(swept) -> None:
    out, summary = swept
    ids = _ids(out)
    assert summary.done == 2 and summary.diverged == 0 and summary.ok
    assert list(summary.nonfinite) == [ids[3.0]]  # the finite run is not named
    assert "2 done (1 with runs gone non-finite), 0 diverged" in summary.line()
    with ResultsStore(out, create=False) as store:
        frame = store.read_tables(ids[3.0])["toy_mdp"]
    gone, runs, first = _expected(frame)
    assert gone >= 1
    note = summary.nonfinite[ids[3.0]]
    assert note.startswith("q_learning, n 1, mu 0.1, step_size 3: ")
    assert f"{gone} of {runs} runs went non-finite (NaN or inf) from episode {first}" in note


def test_status_reads_the_note_from_the_store(swept, capsys) -> None:
    out, _ = swept
    ids = _ids(out)
    with ResultsStore(out, create=False) as store:
        rows = {r.run_id: r for r in store.records()}
    assert rows[ids[3.0]].status == "done" and "went non-finite" in (rows[ids[3.0]].error or "")
    assert rows[ids[0.01]].status == "done" and rows[ids[0.01]].error is None
    assert main(["status", str(out)]) == 0
    printed = capsys.readouterr().out
    lines = [ln for ln in printed.splitlines() if ln.startswith("nonfinite ")]
    assert lines == [f"nonfinite {ids[3.0]}: {rows[ids[3.0]].error}"]


def test_resume_runs_nothing_again_and_tables_are_the_run_functions(swept) -> None:
    out, _ = swept
    ids = _ids(out)
    again = runner.run_sweep(TOY, out, scale="tiny", workers=1, progress=False)
    assert (again.skipped, again.done, again.nonfinite) == (2, 0, {})
    with ResultsStore(out, create=False) as store:
        stored = store.read_tables(ids[3.0])["toy_mdp"]
    direct = run_toy_mdp(
        mu=0.1, algorithm="q_learning", n=1, runs=4, episodes=60, seed=0, step_size=3.0,
        buffer_size=10,
    )  # fmt: skip
    np.testing.assert_array_equal(
        stored[VALUES].to_numpy(dtype=float), direct[VALUES].to_numpy(dtype=float)
    )


def test_a_run_stored_before_reads_as_before(tmp_path: Path, capsys) -> None:
    """A done run without a note (every run stored before this session) prints no line."""
    doc = {**TOY, "grid": {"step_size": [0.01]}}
    out = tmp_path / "out"
    summary = runner.run_sweep(doc, out, scale="tiny", workers=1, progress=False)
    assert summary.nonfinite == {} and "1 done, 0 diverged" in summary.line()
    assert main(["status", str(out)]) == 0
    assert "nonfinite" not in capsys.readouterr().out


def test_experiment_says_which_settings_went_nonfinite(tmp_path: Path, capsys) -> None:
    args = ["experiment", "toy-mdp", "--runs", "3", "--episodes", "60", "--mu", "0.1",
            "--algorithms", "q_learning", "--step-size", "3", "--buffer-size", "10",
            "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    frame = pd.read_csv(tmp_path / "toy_mdp.csv")
    gone, runs, first = _expected(frame)
    lines = [ln for ln in err.splitlines() if "non-finite" in ln]
    assert lines == [
        f"toy MDP: note: q_learning at mu = +0.1: {gone} of {runs} runs went non-finite "
        f"(NaN or inf) from episode {first}"
    ]


def test_mountain_car_run_with_nonfinite_weights_is_named(tmp_path: Path) -> None:
    """Mountain Car's table holds steps only (a diverged run's episodes run to the cap), so
    its runs gone non-finite were not even seen by the report: the note comes from the final
    weights. The stored table is run_mountain_car's, as before."""
    from maxminq.linear.mountain_car import run_mountain_car, run_mountain_car_grid

    fixed = {"seed": 0, "runs": 3, "episodes": 4, "max_steps": 150, "sigma2": 50}
    doc = {
        "name": "mc_blowup",
        "kind": "mountain_car",
        "fixed": fixed,
        "grid": {"step_size": [2.0, 0.01]},
        "variants": [{"algorithm": "q_learning", "n": 1}],
        "scales": {"tiny": {}},
    }
    out = tmp_path / "out"
    summary = runner.run_sweep(doc, out, scale="tiny", workers=1, progress=False)
    ids = _ids(out)
    _, weights, _ = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[50], step_sizes=[2.0], runs=3, episodes=4,
        seed=0, max_steps=150, return_weights=True,
    )  # fmt: skip
    gone = int((~np.isfinite(weights.reshape(3, -1)).all(axis=1)).sum())
    assert gone >= 1
    assert list(summary.nonfinite) == [ids[2.0]] and summary.done == 2
    assert summary.nonfinite[ids[2.0]] == (
        f"q_learning, n 1, sigma2 50, step_size 2: {gone} of 3 runs went non-finite "
        "(NaN or inf weights) by episode 4"
    )
    with ResultsStore(out, create=False) as store:
        stored = store.read_tables(ids[2.0])["mountain_car"]
    direct = run_mountain_car(
        algorithm="q_learning", n=1, sigma2=50, step_size=2.0, runs=3, episodes=4, seed=0,
        max_steps=150,
    )  # fmt: skip
    np.testing.assert_array_equal(stored["steps"].to_numpy(), direct["steps"].to_numpy())


def test_edited_config_note_shows_whole_numbers_as_written() -> None:
    """The edited-config note showed ``op_kwargs {"c": 5.0} (this config: {"c": 10.0})``
    of a config that says ``c: 10`` (stored settings hold floats)."""
    from maxminq.commands.sweep import edit_differences

    old = [{"op_kwargs": {"c": 5.0}, "step_size": 3.0, "runs": 4}]
    new = [{"op_kwargs": {"c": 10.0}, "step_size": 0.5, "runs": 4}]
    assert edit_differences(old, new) == [
        'op_kwargs {"c": 5} (this config: {"c": 10})',
        "step_size 3 (this config: 0.5)",
    ]


def test_experiment_mountain_car_says_which_settings_went_nonfinite(tmp_path: Path, capsys) -> None:
    """``maxminq experiment mountain-car`` at a step size whose weights blow up printed
    nothing of it (its CSV shows those runs at the step cap only)."""
    from maxminq.linear.mountain_car import run_mountain_car_grid

    args = ["experiment", "mountain-car", "--runs", "3", "--episodes", "4", "--max-steps",
            "150", "--sigma2", "50", "--step-sizes", "2", "--algorithms",
            "q_learning", "--no-progress", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    _, weights, _ = run_mountain_car_grid(
        algorithm="q_learning", n=1, sigma2=[50], step_sizes=[2.0], runs=3, episodes=4,
        seed=0, max_steps=150, return_weights=True,
    )  # fmt: skip
    gone = int((~np.isfinite(weights.reshape(3, -1)).all(axis=1)).sum())
    assert gone >= 1
    lines = [ln for ln in err.splitlines() if "non-finite" in ln]
    assert lines == [
        "mountain car: note: runs whose weights went non-finite (NaN or inf; their episodes "
        f"ran to the step cap): q_learning at sigma2 = 50, step size 2: {gone} of 3 runs"
    ]
