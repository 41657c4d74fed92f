"""``software.json`` of a finished run, second reading (session 27): it is on disk (synced)
before ``runs.csv`` marks the run finished, as the tables are, and so is ``config.json``
(a finished run is read back by its options; both were only renamed into place, so a crash
of the machine could leave them empty beside a synced ``runs.csv``); and a run resumed from a
checkpoint written before checkpoints kept the list (no ``software`` key) records what that
checkpoint kept instead: its ``platform`` since an unknown step (``from_step`` null), or,
from a checkpoint without even that, nothing before the step it resumed from."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import torch
from deep_runs import _small

from maxminq.deep import run_training
from maxminq.deep.policy import state_digest


def _fsynced_names(monkeypatch) -> list[str]:
    """The names of the files ``os.fsync`` is called on from now on, in order (the real
    fsync still runs: this only watches)."""
    names: list[str] = []
    real = os.fsync

    def watched(fd: int) -> None:
        names.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", watched)
    return names


def _without(path, *keys: str) -> None:
    """Rewrite the checkpoint ``path`` as an earlier maxminq wrote it: without ``keys``
    (its checksum recomputed, as that version computed it over what it held)."""
    state = torch.load(path, weights_only=True)
    for key in keys:
        del state[key]
    state.pop("sha256")
    state["sha256"] = state_digest(state)
    torch.save(state, path)


def test_software_json_synced_before_runs_csv_and_old_checkpoints(tmp_path, monkeypatch) -> None:
    cfg = _small(agent="dqn", n=1, steps=120, learning_starts=40, checkpoint_every=10_000)
    first = tmp_path / "a"
    assert run_training(cfg, first, progress=False, stop_after=40) == {}
    platform = torch.load(first / "checkpoint" / "state.pt", weights_only=True)["platform"]
    second = tmp_path / "b"
    shutil.copytree(first, second)
    _without(first / "checkpoint" / "state.pt", "software")
    _without(second / "checkpoint" / "state.pt", "software", "platform")

    synced = _fsynced_names(monkeypatch)
    run_training(cfg, first, progress=False)
    # atomic writes' temporary files: ".NAME.XXXXXXXX.tmp"
    files = [n.split(".")[1] for n in synced if n.startswith(".") and n.endswith(".tmp")]
    wanted = [n for n in files if n in ("config", "software", "runs")]
    assert wanted == ["config", "software", "runs"], synced
    monkeypatch.undo()

    # An old checkpoint's platform (torch, NumPy, Gymnasium, maxminq, threads): since when
    # is unknown; from the resumed step on, this run's full record.
    record = json.loads((first / "software.json").read_text())
    assert record[0] == {"from_step": None, **platform}
    assert len(record) == 2 and record[1]["from_step"] == 40
    assert record[1]["threads"] == platform["threads"] == 1
    assert record[1]["torch"] == platform["torch"] == torch.__version__
    # A checkpoint older still (no platform either): nothing is known before step 40.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_training(cfg, second, progress=False)
    older = json.loads((second / "software.json").read_text())
    assert [entry["from_step"] for entry in older] == [40]
    assert older[0] == record[1]
