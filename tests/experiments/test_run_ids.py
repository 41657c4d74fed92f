"""A deep run's id in a sweep does not depend on ``checkpoint_every`` or ``tensorboard`` (they
cannot change its results; changing them in a config retrained every run): runs at their
defaults keep the ids they always had, a store swept with other values resumes as before
(its runs are taken under their stored ids), and a run continues its checkpoint under other
checkpoint settings.
"""

from __future__ import annotations

import pytest
import sweep_kinds as helpers
import torch
from helpers import REPO
from sweep_configs import DEEP, _config, _hash_id, _store_finished

from maxminq.commands.sweep import dry_run, stale_run_ids
from maxminq.experiments.config import ConfigError, RunSpec, load_config
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

REPO = REPO


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
    with pytest.raises(ConfigError, match=r"grid\.checkpoint_every: makes the same run as another"):
        load_config(path, "quick")


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


def test_the_registry_records_the_checkpoint_settings_a_run_runs_with(tmp_path) -> None:
    """The same run swept again with checkpoint_every 70: a run not finished takes the new
    value in the registry (what load_results and status --runs show), as it runs with it;
    a finished one keeps 50, which it ran with. Before, the first registration's stayed."""
    first = _config(tmp_path, ", checkpoint_every: 50", "first.yaml").runs[0]
    done = RunSpec("deep-000000000001", "deep", dict(first.settings, seeds=[1]), "ck")
    out = tmp_path / "out"
    _store_finished(out, done)
    with ResultsStore(out, lock=True) as store:
        store.register([first])
        again = [
            RunSpec(r.run_id, r.kind, dict(r.settings, checkpoint_every=70), r.config)
            for r in (first, done)
        ]
        store.register(again)
        assert store.get(first.run_id).settings["checkpoint_every"] == 70
        assert store.get(done.run_id).settings["checkpoint_every"] == 50
        assert store.get(done.run_id).status == "done"


def test_a_run_continues_its_checkpoint_under_other_checkpoint_settings(
    tmp_path, torch_one_thread, monkeypatch
) -> None:
    """What the shared id relies on: a run stopped with a checkpoint written under
    checkpoint_every 50 (step 120) continues in the next sweep, which gives the same run
    checkpoint_every 70 (its work folder, as the next sweep's worker runs it), to the
    tables of the run trained without a stop, bitwise. (A guard of deep's result_key:
    it held before this change too.)"""
    from maxminq.deep import train
    from maxminq.deep.config import TrainConfig
    from maxminq.deep.train import run_training
    from maxminq.experiments.registry import execute_deep

    loaded: list[int] = []  # the steps of the checkpoints a run continued from
    load = train.Trainer.load_state_dict

    def noted(self: train.Trainer, state: dict) -> None:
        loaded.append(int(state["step"]))
        load(self, state)

    monkeypatch.setattr(train.Trainer, "load_state_dict", noted)

    first = _config(tmp_path, ", checkpoint_every: 50", "first.yaml").runs[0]
    again = _config(tmp_path, ", checkpoint_every: 70", "again.yaml").runs[0]
    assert first.run_id == again.run_id
    work = tmp_path / "work" / first.run_id
    assert run_training(TrainConfig(**first.settings), work, progress=False, stop_after=120) == {}
    with torch.random.fork_rng():
        resumed = execute_deep(again.settings, work, False).tables
        whole = run_training(TrainConfig(**again.settings), tmp_path / "whole", progress=False)
    assert loaded == [120]  # continued, not started again
    helpers.same_tables(dict(resumed), whole)
