"""Adversarial checks of the analysis commands (``maxminq compare``, ``plot``, ``report``,
``evaluate``, ``status``) and ``maxminq.analysis``: each test names a way a demanding user
could be misled (a number that disagrees with the CSVs, a run's own files overwritten, a
traceback instead of one line) and checks, from the CSVs themselves, that it is not."""

from __future__ import annotations

import pathlib
import shutil

import pandas as pd
import pytest
from test_deep_train import _small

from maxminq.cli import main
from maxminq.deep.train import run_training

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A finished 400-step Maxmin DQN run of two seeds on CartPole-v1 (with model.pt)."""
    out = tmp_path_factory.mktemp("runs") / "maxmin"
    run_training(_small(seeds=[0, 1]), out, progress=False)
    return out


def _copy(run: pathlib.Path, tmp_path: pathlib.Path, name: str = "run") -> pathlib.Path:
    """A copy of a finished run to change (the module's run stays as trained)."""
    return pathlib.Path(shutil.copytree(run, tmp_path / name))


@pytest.mark.parametrize("table", ["tests", "episodes", "runs", "metrics"])
def test_evaluate_refuses_a_csv_that_is_one_of_the_runs_own_tables(
    trained: pathlib.Path, tmp_path: pathlib.Path, capsys, table: str
) -> None:
    """``maxminq evaluate RUN --csv RUN/tests.csv`` replaced the run's test episodes (the
    paper's protocol, eps 0.01, that ``compare`` scores) with its own greedy ones, silently:
    the run's score changed. It is refused in one line, exit 2, the file untouched."""
    run = _copy(trained, tmp_path)
    before = (run / f"{table}.csv").read_bytes()
    code = main(["evaluate", str(run), "--episodes", "1", "--no-progress",
                 "--csv", str(run / f"{table}.csv")])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("maxminq evaluate: error: --csv:") and len(err.splitlines()) == 1
    assert table in err
    assert (run / f"{table}.csv").read_bytes() == before
    # Another name in the run's folder is fine: the episodes are written there.
    assert main(["evaluate", str(run), "--episodes", "1", "--no-progress",
                 "--csv", str(run / "greedy.csv")]) == 0  # fmt: skip
    assert len(pd.read_csv(run / "greedy.csv")) == 2  # one episode of each of the 2 seeds
