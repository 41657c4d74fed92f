"""Second reading of session 19's deep commits (the split of deep/train.py, train_step's
methods, the early cut-episode warning).

1. The split moved code from ``maxminq.deep.train`` into ``deep.bias_probes``,
   ``deep.env_checks``, ``deep.run_folder`` and ``deep.step_boundary``, and cut the
   module's ``__all__`` down to five names: ``from maxminq.deep.train import
   bias_horizon`` (or ``BIAS_TAIL``, ``RUN_FILES``, ``CheckpointWarning``,
   ``warn_if_no_time_limit``, ``warn_if_normalized``) was an ImportError, and
   ``from maxminq.deep.train import *`` lost ten names it gave before. They are
   re-exported again, the very objects of their new homes.
"""

from __future__ import annotations

import importlib

import maxminq.deep.train as train

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
