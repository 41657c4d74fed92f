"""Lead, session 19: a sweep shows a run's cut-episode warning once (the run's last, with the
whole run's numbers), and training does not import scipy.stats."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd

from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import EnvWarning
from maxminq.experiments.registry import RunOutput
from maxminq.experiments.runner import execute_run


def _warns_as_a_deep_run_does(settings: dict, work: Path, resume: bool) -> RunOutput:
    warnings.warn("by step 60 of 200 it cut 6 episodes", CutEpisodesWarning, stacklevel=1)
    warnings.warn("no time limit", EnvWarning, stacklevel=1)
    warnings.warn("in all it cut 20 episodes", CutEpisodesWarning, stacklevel=1)
    return RunOutput({"runs": pd.DataFrame({"seed": [0]})})


def test_a_sweep_keeps_only_a_runs_last_cut_episodes_warning(tmp_path) -> None:
    """The driver shows a run's warnings when it ends: the early count ("by step 60") came
    with the end-of-run one ("in all"), two lines per run saying one thing; other warnings of
    the run all stay, in their order."""
    result = execute_run(_warns_as_a_deep_run_does, {}, str(tmp_path))
    assert result.error is None
    assert result.warned == [
        (EnvWarning, "no time limit"),
        (CutEpisodesWarning, "in all it cut 20 episodes"),
    ]


def test_training_does_not_import_scipy_stats_but_deep_train_still_exports_pooled_bias() -> None:
    """deep.train imported analysis.tables (and so scipy.stats, about a second of CPU in every
    train, sweep worker and evaluate process) only to re-export pooled_bias."""
    code = (
        "import sys, maxminq.deep.train as t\n"
        "print('scipy.stats' in sys.modules)\n"
        "from maxminq.deep.train import pooled_bias\n"
        "from maxminq.analysis.tables import pooled_bias as original\n"
        "print(pooled_bias is original)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


def test_a_shipped_config_named_outside_the_checkout_is_pointed_to(tmp_path, monkeypatch, capsys):
    """`maxminq sweep configs/toy_mdp.yaml` in a folder of one's own (as docs/sweeps.md shows
    it, from the checkout) said only "no such file": now it names the shipped file and the
    command that runs it from anywhere; a name maxminq does not ship keeps the bare error."""
    from maxminq.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "configs/toy_mdp.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "reproduce --only toy_mdp" in err
    shipped = Path(err.rsplit(", ", 1)[1])
    assert shipped.name == "toy_mdp.yaml" and shipped.is_file()
    assert main(["sweep", "my_grid.yaml"]) == 2
    assert capsys.readouterr().err.strip().endswith("my_grid.yaml: no such file")
    assert not any(tmp_path.iterdir())  # nothing written


def test_the_busy_folder_message_quotes_its_status_command_for_the_shell(tmp_path) -> None:
    """'maxminq status results/my runs shows its progress': copied, the shell read two
    folders; the failed-sweep hint quotes its folder (h7), the busy-folder line now too."""
    import pytest

    from maxminq.experiments.store import ResultsStore, StoreError, refuse_if_in_use

    out = tmp_path / "my runs"
    with ResultsStore(out, lock=True), pytest.raises(StoreError) as err:
        refuse_if_in_use(out)
    assert f"(maxminq status '{out}' shows its progress)" in str(err.value)
