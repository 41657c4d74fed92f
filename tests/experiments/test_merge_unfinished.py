"""``maxminq merge`` of a folder whose sweep did not finish (a laptop closed, a sweep
killed, runs failed): each unfinished run's scratch folder (``OUT/work/<run_id>``, the
checkpoints a run continues from) comes with the row the merge takes for it, so that the
next sweep into the merged folder continues the run instead of training it from the start.

Before, only an existing ``--out``'s own scratch was carried over (and not even that when a
``DIR`` held the run failed): the merged sweep trained every such run again, silently.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import sweep_kinds as helpers
from sweep_configs import CKPT_FOUR_RUNS

from maxminq.cli import main
from maxminq.experiments import merge as merge_module
from maxminq.experiments.config import load_config
from maxminq.experiments.merge import merge_folders
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import INTERRUPTED, ResultsStore, load_results

# Two runs of the checkpointing test kind: the first attempt of each stops (fails) after
# its first chunk, leaving a checkpoint; an attempt with that checkpoint finishes the run.
TWO_RUNS = """
name: tiny_ckpt
kind: theory_mc_ckpt
fixed: {seed: 11, samples: 2000, chunks: 3, M: 2}
grid: {N: [1, 2]}
scales: {quick: {}}
"""


# One deep run: CartPole, 120 steps, a checkpoint every 40.
DEEP_ONE = """
name: ck_merge
kind: deep
fixed: {env_id: CartPole-v1, agent: dqn, steps: 120, seeds: [0], learning_starts: 40,
        eval_episodes: 1, checkpoint_every: 40}
scales: {quick: {}}
"""


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def _registered(config: Path, out: Path) -> list[str]:
    """``out``: a results folder holding the config's runs, none run; their ids."""
    summary = run_sweep(config, out, workers=1, progress=False, shard="9/9")
    assert summary.total == 0
    with ResultsStore(out, create=False) as store:
        return sorted(r.run_id for r in store.records())


def _scratch(folder: Path, run_id: str, checkpoint: str, step: int | None = None) -> Path:
    """A scratch folder as a stopped run leaves it: a checkpoint, and (a deep run's)
    ``progress.json`` at ``step`` of 100."""
    work = folder / "work" / run_id
    work.mkdir(parents=True)
    (work / "checkpoint.json").write_text(checkpoint)
    if step is not None:
        (work / "progress.json").write_text(json.dumps({"step": step, "steps": 100}))
    return work


def _killed(folder: Path, run_id: str) -> None:
    """``run_id`` as a sweep killed during it leaves it (on another machine): 'running',
    with its worker's file naming a process that is gone."""
    with ResultsStore(folder, lock=True) as store:
        store.mark_running(run_id, host="laptop-b", pid=4242)
    work = folder / "work" / run_id
    (work / "worker.json").write_text(json.dumps({"host": "laptop-b", "pid": 4243}))


def _failed(folder: Path, run_id: str, error: str) -> None:
    with ResultsStore(folder, lock=True) as store:
        store.mark_running(run_id)
        store.mark_finished(run_id, "failed", error)


def _row(folder: Path, run_id: str) -> tuple[str, str | None]:
    with ResultsStore(folder, create=False) as store:
        rec = store.get(run_id)
        assert rec is not None
        return rec.status, rec.error


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` but the lock file (path -> SHA-256)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in (".sweep.lock", "results.sqlite-shm")
    }


def _uninterrupted(config: Path) -> pd.DataFrame:
    """Each run's table as the run function gives it in one go (no stop, no checkpoint)."""
    frames = []
    for run in load_config(config, "quick").runs:
        frame = helpers.execute_theory_mc(run.settings, Path("."), False).tables["bias"]
        frame.insert(0, "run_id", run.run_id)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True).sort_values(["run_id", "chunk"])


# ---------------------------------------------------------------- a real sweep continues
def test_a_stopped_shards_checkpoints_come_with_its_runs_and_the_next_sweep_continues_them(
    tmp_path, theory_kinds, capsys
):
    """Machine B's shard stopped with a run part done (its checkpoint in B/work); A's folder
    holds the other shard. Before, the merged folder had no B/work: the sweep into it
    trained the run from the start (this kind then stops after its first chunk again:
    failed). Now its checkpoint comes along, hard-linked, and the sweep continues it to the
    uninterrupted result in one attempt."""
    config = _config(tmp_path, TWO_RUNS)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    _registered(config, a)  # machine A's folder, its shard not run yet
    stopped = run_sweep(config, b, workers=1, progress=False, shard="2/2")
    assert stopped.failed == 1  # stopped after its first chunk
    (run_id,) = stopped.failures
    ckpt = b / "work" / run_id / "checkpoint.json"
    assert len(json.loads(ckpt.read_text())["rows"]) == 1  # one chunk of three done

    capsys.readouterr()
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"merged 2 folder(s) into {out}: 2 runs, 0 finished (none); 2 left to run, "
        f"1 of them from a checkpoint in {out / 'work'}"
    )
    copied = out / "work" / run_id / "checkpoint.json"
    assert copied.read_text() == ckpt.read_text()
    assert os.path.samefile(copied, ckpt)  # hard-linked: one file system here
    assert _row(out, run_id)[0] == "failed"  # the row taken with it: B's

    resumed = run_sweep(config, out, workers=1, progress=False, shard="2/2")
    assert (resumed.done, resumed.failed) == (1, 0), resumed.failures
    with ResultsStore(out, create=False) as store:
        assert store.get(run_id).attempts == 2  # B's stopped one, then the one here
    got = load_results(out)["bias"]
    expected = _uninterrupted(config)
    expected = expected[expected["run_id"] == run_id].reset_index(drop=True)
    got = got[list(expected.columns)].sort_values("chunk").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_a_killed_deep_runs_checkpoint_is_merged_and_continues_to_the_uninterrupted_tables(
    tmp_path, torch_one_thread, monkeypatch
):
    """A real deep run stopped at step 80 of 120 on machine B (its sweep killed: the row
    left 'running', a worker.json naming B's dead worker). The merged folder holds its
    checkpoint, without the worker's file; the dry run counts it as continuing from a
    checkpoint; the run, as the next sweep's worker runs it in the merged folder, loads the
    checkpoint of step 80 and ends with the tables of a run trained without a stop."""
    import torch

    from maxminq.commands.sweep import dry_run
    from maxminq.deep import train
    from maxminq.deep.config import TrainConfig
    from maxminq.experiments.registry import execute_deep

    config = _config(tmp_path, DEEP_ONE)
    b, out = tmp_path / "b", tmp_path / "merged"
    (run_id,) = _registered(config, b)
    (run,) = load_config(config, "quick").runs
    assert (
        train.run_training(
            TrainConfig(**run.settings), b / "work" / run_id, progress=False, stop_after=80
        )
        == {}
    )
    _killed(b, run_id)

    summary = merge_folders([b], out)
    assert summary.resumable == 1
    work = out / "work" / run_id
    assert os.path.samefile(
        work / "checkpoint" / "state.pt", b / "work" / run_id / "checkpoint" / "state.pt"
    )
    assert not (work / "worker.json").exists()  # no process runs it here
    assert _row(out, run_id) == ("pending", INTERRUPTED)
    assert "1 to run, 1 of them from a checkpoint in" in dry_run(load_config(config, "quick"), out)

    loaded: list[int] = []  # the steps of the checkpoints the run continued from
    load = train.Trainer.load_state_dict

    def noted(self: train.Trainer, state: dict) -> None:
        loaded.append(int(state["step"]))
        load(self, state)

    monkeypatch.setattr(train.Trainer, "load_state_dict", noted)
    with torch.random.fork_rng():
        resumed = execute_deep(run.settings, work.absolute(), False).tables
        whole = train.run_training(TrainConfig(**run.settings), tmp_path / "whole", progress=False)
    assert loaded == [80]  # continued, not started again
    helpers.same_tables(dict(resumed), whole)


# ------------------------------------------------------------------ which folder's scratch
def test_of_several_folders_scratch_the_furthest_comes_with_its_row_then_the_failed_one(
    tmp_path, theory_kinds
):
    """One run stopped in both A and B: B's got further (progress.json), so B's row and
    checkpoint are taken, though A's row is the failed one merge prefers without scratch
    (continuing from A's would redo B's extra steps). Another with no progress.json in
    either: the failed row's folder (B), with its checkpoint. A third stopped only in A,
    failed without a checkpoint in B: A's row and checkpoint (before, B's failed row was
    taken and A's checkpoint left behind). A fourth with scratch nowhere keeps its failed
    row and gets no scratch folder."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    further, tie, only_a, none = _registered(config, a)
    assert _registered(config, b) == [further, tie, only_a, none]

    _scratch(a, further, "A at 30", step=30)
    _failed(a, further, "boom in A")
    _scratch(b, further, "B at 60", step=60)
    _killed(b, further)
    _scratch(a, tie, "A's")
    _scratch(b, tie, "B's")
    _failed(b, tie, "boom in B")
    _scratch(a, only_a, "A's only")
    _failed(b, only_a, "no checkpoint in B")
    _failed(b, none, "nothing to continue from")

    summary = merge_folders([a, b], out)
    assert summary.resumable == 3
    assert "4 left to run, 3 of them from a checkpoint in" in summary.line()
    assert (out / "work" / further / "checkpoint.json").read_text() == "B at 60"
    assert _row(out, further) == ("pending", INTERRUPTED)  # B's row (it was running there)
    assert not (out / "work" / further / "worker.json").exists()
    assert (out / "work" / tie / "checkpoint.json").read_text() == "B's"
    assert _row(out, tie) == ("failed", "boom in B")
    assert (out / "work" / only_a / "checkpoint.json").read_text() == "A's only"
    assert _row(out, only_a) == ("pending", None)  # A's row, not B's failed one
    assert _row(out, none) == ("failed", "nothing to continue from")
    assert not (out / "work" / none).exists()
    with ResultsStore(out, create=False) as store:
        merged = {e["run_id"]: e["detail"] for e in store.events() if e["event"] == "merged"}
    assert merged[further] == f"from {b}, with its checkpoint"
    assert merged[none] == f"from {b}"


def test_out_keeps_its_own_checkpoint_when_a_dir_holds_the_run_failed(tmp_path, theory_kinds):
    """A second merge into an existing OUT whose run stopped with a checkpoint there, while
    the new DIR holds the same run failed without one. Before, the DIR's failed row was
    taken (the failed one first) and OUT's checkpoint dropped with the old OUT."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    out, b = tmp_path / "merged", tmp_path / "b"
    run_id = _registered(config, out)[0]
    _registered(config, b)
    _scratch(out, run_id, "OUT's", step=50)
    _failed(b, run_id, "failed in B")
    summary = merge_folders([b], out)
    assert summary.resumable == 1
    assert (out / "work" / run_id / "checkpoint.json").read_text() == "OUT's"
    assert _row(out, run_id) == ("pending", None)


def test_a_run_finished_in_one_folder_takes_no_scratch_from_another(tmp_path, theory_kinds):
    """Run X finished in A and stopped with a checkpoint in B: X is taken finished from A,
    and B's scratch of it is not copied (nothing will continue it). Run Y stopped in B only:
    its checkpoint comes, and only it is counted."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    x, y = _registered(config, a)[:2]
    _registered(config, b)
    runs = {r.run_id: r for r in load_config(config, "quick").runs}
    with ResultsStore(a, lock=True) as store:  # X stored as a sweep stores it
        store.mark_running(x)
        store.save_tables(runs[x], helpers.execute_theory_mc(runs[x].settings, a, False).tables)
        store.mark_finished(x, "done")
    _scratch(b, x, "B's of X", step=40)
    _scratch(b, y, "B's of Y", step=40)
    summary = merge_folders([a, b], out)
    assert (summary.finished, summary.resumable) == (1, 1)
    assert summary.line().endswith(f"3 left to run, 1 of them from a checkpoint in {out / 'work'}")
    assert _row(out, x)[0] == "done"
    assert not (out / "work" / x).exists()
    assert (out / "work" / y / "checkpoint.json").read_text() == "B's of Y"


def test_a_finished_runs_scratch_that_keep_work_kept_stays_kept(tmp_path, theory_kinds):
    """OUT's run X finished in a sweep with --keep-work, which kept its scratch folder (a
    deep run's model.pt, for maxminq evaluate). Before, a merge of another machine's
    folder into OUT dropped it with the old OUT, for good. Now it comes with X's row, and
    stays kept (the store's 'work kept', which the next sweep reads to leave it)."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    out, b = tmp_path / "merged", tmp_path / "b"
    x, y = _registered(config, out)[:2]
    _registered(config, b)
    runs = {r.run_id: r for r in load_config(config, "quick").runs}
    with ResultsStore(out, lock=True) as store:  # X stored as 'sweep --keep-work' stores it
        store.mark_running(x)
        store.save_tables(runs[x], helpers.execute_theory_mc(runs[x].settings, out, False).tables)
        store.mark_finished(x, "done", work_kept=True)
    (out / "work" / x).mkdir(parents=True)
    (out / "work" / x / "model.pt").write_bytes(b"the final networks")
    _scratch(out, y, "a checkpoint of Y", step=10)  # Y left pending with a checkpoint

    summary = merge_folders([b], out)
    assert (summary.finished, summary.resumable) == (1, 1)  # X kept; Y to continue
    assert (out / "work" / x / "model.pt").read_bytes() == b"the final networks"
    with ResultsStore(out, create=False) as store:
        assert store.work_kept(x)
        assert not store.work_kept(y)
    assert (out / "work" / y / "checkpoint.json").read_text() == "a checkpoint of Y"


# ----------------------------------------------------------------------------- atomic
def test_a_merge_interrupted_while_it_copies_a_checkpoint_leaves_out_as_it_was(
    tmp_path, theory_kinds, monkeypatch
):
    """Ctrl-C (or a kill) while the checkpoints are copied: the merged folder is built
    beside OUT, so OUT is as it was, and no half-copied folder stays beside it."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    out, b = tmp_path / "merged", tmp_path / "b"
    run_id = _registered(config, out)[0]
    _registered(config, b)
    _scratch(b, run_id, "B's", step=20)
    before = _snapshot(out)
    copy = merge_module._link_or_copy
    stopped: list[str] = []

    def interrupted(src: str, dst: str) -> None:
        if src.endswith("checkpoint.json"):
            stopped.append(src)
            raise KeyboardInterrupt
        copy(src, dst)

    monkeypatch.setattr(merge_module, "_link_or_copy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        merge_folders([b], out)
    assert stopped == [str(b / "work" / run_id / "checkpoint.json")]  # stopped copying it
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "config.yaml", "merged"]
    monkeypatch.setattr(merge_module, "_link_or_copy", copy)
    assert merge_folders([b], out).resumable == 1  # the same merge again
    assert (out / "work" / run_id / "checkpoint.json").read_text() == "B's"


def test_a_checkpoint_gone_while_it_is_copied_is_one_line_and_nothing_is_written(
    tmp_path, theory_kinds, monkeypatch, capsys
):
    """A DIR whose sweep started again during the merge (that run then finished and its
    scratch folder went): one line saying to merge again, exit 2, no OUT, no hidden folder
    left (not a FileNotFoundError naming a file of the scratch folder)."""
    config = _config(tmp_path, CKPT_FOUR_RUNS)
    b, out = tmp_path / "b", tmp_path / "merged"
    run_id = _registered(config, b)[0]
    work = _scratch(b, run_id, "B's", step=20)
    copy = merge_module._link_or_copy

    def gone_first(src: str, dst: str) -> None:
        (work / "checkpoint.json").unlink(missing_ok=True)
        copy(src, dst)

    monkeypatch.setattr(merge_module, "_link_or_copy", gone_first)
    capsys.readouterr()
    assert main(["merge", str(b), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"maxminq merge: error: DIR: {b}: the scratch folder of run {run_id} changed while it "
        "was copied (a sweep started there meanwhile?); run the merge again"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "config.yaml"]


def test_a_checkpoint_its_run_could_not_continue_from_comes_only_after_any_other(
    tmp_path, torch_one_thread
):
    """A's scratch is further on (progress.json at 90%), but A's run failed continuing from
    it (its checkpoint damaged: the real error a sweep records, CannotResumeError); B's,
    stopped at 40%, continues: B's row and checkpoint are taken, not A's, which would fail
    the run again in the merged folder."""
    from maxminq.experiments.registry import execute_deep
    from maxminq.experiments.runner import execute_run

    config = _config(tmp_path, DEEP_ONE)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    (run_id,) = _registered(config, a)
    _registered(config, b)
    (run,) = load_config(config, "quick").runs
    damaged = a / "work" / run_id
    (damaged / "checkpoint").mkdir(parents=True)
    (damaged / "checkpoint" / "state.pt").write_bytes(b"cut short")
    (damaged / "progress.json").write_text(json.dumps({"step": 108, "steps": 120}))
    result = execute_run(execute_deep, run.settings, str(damaged))  # as the sweep's worker
    assert result.output is None and "CannotResumeError: --resume:" in result.error
    with ResultsStore(a, lock=True) as store:
        store.mark_running(run_id)
        store.mark_finished(run_id, "failed", result.error)
    _scratch(b, run_id, "B's", step=48)
    _killed(b, run_id)

    merge_folders([a, b], out)
    assert (out / "work" / run_id / "checkpoint.json").read_text() == "B's"
    assert not (out / "work" / run_id / "checkpoint").exists()
    assert _row(out, run_id) == ("pending", INTERRUPTED)
