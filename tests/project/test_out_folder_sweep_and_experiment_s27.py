"""A sweep and 'maxminq experiment' of one figure share their default folder (the docs run
``maxminq sweep configs/toy_mdp.yaml`` and ``maxminq experiment toy-mdp``, both into
results/toy_mdp): each may write into the other's, as before the folder-kind check
(c8d345a), which refused the second; other pairs stay refused."""

import json
from pathlib import Path

import pytest

from maxminq.cli import check_out_folder
from maxminq.errors import UsageError
from maxminq.experiments.store import ResultsStore


def _experiment_folder(path: Path, kind: str) -> Path:
    path.mkdir()
    (path / "settings.json").write_text(json.dumps({"experiment": kind}))
    return path


@pytest.mark.parametrize("kind", ["toy-mdp", "mountain-car"])
def test_a_sweep_and_an_experiment_share_a_folder_either_way_round(
    tmp_path: Path, kind: str
) -> None:
    experiment = _experiment_folder(tmp_path / "exp", kind)
    for writer in ("sweep", "reproduce"):
        assert check_out_folder(experiment, "--out", writes=writer) == experiment
    sweep = tmp_path / "sweep"
    with ResultsStore(sweep):  # a real (empty) store: results.sqlite
        pass
    assert check_out_folder(sweep, "--out", writes=f"experiment {kind}") == sweep
    # the other experiment, train and theory are still refused an experiment's folder
    other = "mountain-car" if kind == "toy-mdp" else "toy-mdp"
    for writer in (f"experiment {other}", "train", "theory"):
        with pytest.raises(UsageError, match="a folder of its own"):
            check_out_folder(experiment, "--out", writes=writer)
