"""Session 18 leftovers of sweeps, the results store and Ray.

1. A deep run's id no longer depends on ``checkpoint_every`` or ``tensorboard`` (they cannot
   change its results): changing them in a config retrained every run. Runs at their
   defaults keep the ids they always had, and a store whose runs were swept with other
   values resumes as before (its runs are taken under their stored ids).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from maxminq.commands.sweep import dry_run, stale_run_ids
from maxminq.experiments.config import ConfigError, RunSpec, load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

REPO = Path(__file__).resolve().parents[1]

DEEP = """
name: ck
kind: deep
fixed: {{env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2{extra}}}
scales: {{quick: {{}}}}
"""


def _config(tmp_path: Path, extra: str = "", name: str = "ck.yaml"):
    path = tmp_path / name
    path.write_text(DEEP.format(extra=extra))
    return load_config(path, "quick")


def _hash_id(kind: str, settings: dict) -> str:
    """The run id as every version before this one made it: the SHA-256 of kind and all
    the settings (written out here, not taken from the package)."""
    text = json.dumps({"kind": kind, "settings": settings}, sort_keys=True, separators=(",", ":"))
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


# ----------------------------------------------------------------------------- 1. run ids
def test_checkpoint_every_and_tensorboard_do_not_change_a_deep_run_id(tmp_path) -> None:
    """Before: checkpoint_every 50 and tensorboard true gave another id, so the sweep
    trained the run again though its tables cannot differ."""
    plain = _config(tmp_path).runs[0]
    other = _config(tmp_path, ", checkpoint_every: 50, tensorboard: true", "b.yaml").runs[0]
    assert other.settings["checkpoint_every"] == 50 and other.settings["tensorboard"] is True
    assert other.run_id == plain.run_id
    # a setting that changes results still changes the id
    assert _config(tmp_path, ", lr: 0.01", "c.yaml").runs[0].run_id != plain.run_id


def test_runs_at_the_default_checkpoint_settings_keep_their_ids(tmp_path) -> None:
    """The ids of published configs and of every run swept at the defaults are those of
    before (checkpoint_every max(10,000, steps / 20) and tensorboard false hashed as they
    are): pinned for two shipped configs (quick: checkpoint_every 10,000; paper: 3.5e6
    steps, 175,000), and equal to the full-settings hash for a small run."""
    catcher = load_config(REPO / "configs" / "catcher.yaml", "quick").runs
    assert [r.run_id for r in catcher[:2]] == ["deep-cf546d08f466", "deep-dd6e15a5a62d"]
    paper = load_config(REPO / "configs" / "catcher.yaml", "paper").runs[0]
    assert paper.settings["checkpoint_every"] == 175_000
    assert paper.run_id == "deep-4666e76985b6"
    breakout = load_config(REPO / "configs" / "minatar_breakout.yaml", "quick").runs
    assert breakout[0].run_id == "deep-495c3632f660"
    run = _config(tmp_path).runs[0]
    assert run.run_id == _hash_id("deep", run.settings)


def test_a_grid_over_checkpoint_every_alone_is_one_run_given_twice(tmp_path) -> None:
    """Two runs that differ only in checkpoint_every compute the same thing: the config
    says so (it ran both before)."""
    path = tmp_path / "grid.yaml"
    path.write_text(DEEP.format(extra="") + "grid: {checkpoint_every: [100, 200]}\n")
    with pytest.raises(ConfigError, match=r"grid: makes the same run as another"):
        load_config(path, "quick")


def _store_finished(out: Path, run: RunSpec) -> None:
    """``run`` stored finished in ``out`` as a sweep stores it (made-up tables)."""
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.save_tables(run, {"runs": pd.DataFrame({"seed": [0], "test_return": [9.5]})})
        store.mark_finished(run.run_id, "done")


def test_a_store_swept_with_other_checkpoint_settings_resumes_as_before(tmp_path) -> None:
    """A user's store of runs swept with checkpoint_every 50 (stored under the id every
    earlier version gave them, the hash of all settings): the same config, and the config
    with checkpoint_every changed, find the run finished (dry run, sweep: nothing trained,
    no stale runs), under its stored id."""
    old = _config(tmp_path, ", checkpoint_every: 50", "old.yaml").runs[0]
    legacy = RunSpec(_hash_id("deep", old.settings), old.kind, old.settings, old.config)
    assert legacy.run_id != old.run_id  # what the store holds is not today's id
    out = tmp_path / "out"
    _store_finished(out, legacy)
    for extra in (", checkpoint_every: 50", ", checkpoint_every: 70, tensorboard: true", ""):
        config = _config(tmp_path, extra, "now.yaml")
        assert "1 already done" in dry_run(config, out), extra
        assert stale_run_ids(out, [config]) == set()
        summary = run_sweep(config, out, workers=1, progress=False)
        assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0), extra
    with ResultsStore(out, create=False) as store:
        assert [r.run_id for r in store.records()] == [legacy.run_id]
        assert [r.status for r in store.records()] == ["done"]
