"""Second reading of session 19's deep commits (the split of deep/train.py, train_step's
methods, the early cut-episode warning).

1. The split moved code from ``maxminq.deep.train`` into ``deep.bias_probes``,
   ``deep.env_checks``, ``deep.run_folder`` and ``deep.step_boundary``, and cut the
   module's ``__all__`` down to five names: ``from maxminq.deep.train import
   bias_horizon`` (or ``BIAS_TAIL``, ``RUN_FILES``, ``CheckpointWarning``,
   ``warn_if_no_time_limit``, ``warn_if_normalized``) was an ImportError, and
   ``from maxminq.deep.train import *`` lost ten names it gave before. They are
   re-exported again, the very objects of their new homes.
2. The early cut-episode warning (eb69997) is given in the middle of training: under a
   warnings filter that makes it an error (``python -W error``, pytest's ``-W error``)
   ``run_training`` stopped there, its steps since the last checkpoint lost and no table
   written, and every resume stopped again at its next metrics interval, so the run could
   never finish (before that commit such a run trained to its end). The error now comes
   at the end, after the tables, as the end-of-run warning's always did.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import maxminq.deep.train as train
from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import TrainConfig

pytestmark = pytest.mark.usefixtures("torch_one_thread")

# deep.train's __all__ before the split (commit 195412d^), written out here.
_OLD_ALL = [
    "BIAS_TAIL",
    "FIGURE_FILES",
    "OPTIONAL_TABLES",
    "RUN_FILES",
    "TABLE_COLUMNS",
    "bias_horizon",
    "pooled_bias",
    "probe_counts",
    "Trainer",
    "check_resumable",
    "clear_run",
    "folder_lock",
    "run_training",
    "tensorboard_writer_class",
]

# Public names defined in deep.train before the split, and where they live now.
_MOVED = {
    "BIAS_TAIL": "maxminq.deep.config",
    "TABLE_COLUMNS": "maxminq.deep.run_folder",
    "OPTIONAL_TABLES": "maxminq.deep.run_folder",
    "FIGURE_FILES": "maxminq.deep.run_folder",
    "RUN_FILES": "maxminq.deep.run_folder",
    "read_tables": "maxminq.deep.run_folder",
    "check_resumable": "maxminq.deep.run_folder",
    "CheckpointWarning": "maxminq.deep.run_folder",
    "folder_lock": "maxminq.deep.run_folder",
    "clear_run": "maxminq.deep.run_folder",
    "probe_counts": "maxminq.deep.bias_probes",
    "bias_horizon": "maxminq.deep.bias_probes",
    "episode_observation": "maxminq.deep.env_checks",
    "warn_if_no_time_limit": "maxminq.deep.env_checks",
    "warn_if_normalized": "maxminq.deep.env_checks",
    "StepBoundary": "maxminq.deep.step_boundary",
}


def test_deep_train_keeps_every_public_name_it_had_before_the_split() -> None:
    """Each old public name is still importable from ``maxminq.deep.train``, as the same
    object as in its new module (a warning class too: a filter on either catches it), and
    ``import *`` still gives the old ``__all__``."""
    missing = [name for name in _MOVED if not hasattr(train, name)]
    assert missing == []
    for name, home in _MOVED.items():
        assert getattr(train, name) is getattr(importlib.import_module(home), name), name
    assert set(_OLD_ALL) <= set(train.__all__)
    star: dict[str, object] = {}
    exec("from maxminq.deep.train import *", star)
    assert set(_OLD_ALL) <= set(star)


class _Endless(gym.Env):
    """No episode ends by itself: the registered time limit (10 steps) cuts every one."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([1.0, 0.0], np.float32), {}

    def step(self, action):
        return np.array([1.0, 0.0], np.float32), 0.0, False, False, {}


_ENDLESS = "mmq-second-read19/Endless-v0"
if _ENDLESS not in gym.registry:
    gym.register(_ENDLESS, entry_point=_Endless, max_episode_steps=10)


def test_an_error_filter_on_the_early_cut_warning_does_not_stop_the_run_midway(
    tmp_path: Path,
) -> None:
    """200 steps of episodes all cut at 10 steps, learning from step 20, metrics every 20:
    the early warning is due at step 60 (40 cut steps >= 20% of 180). With the warning an
    error, the run still trains to its end, writes its tables, and then raises it, with
    the whole run's 20 episodes."""
    out = tmp_path / "run"
    cfg = TrainConfig(
        env_id=_ENDLESS,
        agent="dqn",
        steps=200,
        seeds=[0],
        gamma=0.99,  # a cut probe counts 299+ steps before the cut: none of a 10-step cap
        learning_starts=20,
        bias_every=20,
        buffer_size=200,
        batch_size=8,
        eval_episodes=0,
        checkpoint_every=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", CutEpisodesWarning)
        with pytest.raises(CutEpisodesWarning) as raised:
            train.run_training(cfg, out, progress=False)
    assert "it cut 20 of the 20 training episodes" in str(raised.value)
    assert "by step" not in str(raised.value)
    tables = train.read_tables(out, "--out")  # the run finished: runs.csv is there
    assert tables["episodes"]["step"].max() == 200
    assert len(tables["episodes"]) == 20
