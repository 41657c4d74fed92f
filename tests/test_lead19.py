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
