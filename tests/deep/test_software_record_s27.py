"""What a finished run was computed with is in its folder (session 27): ``software.json``
lists, per stretch of steps, the versions and the torch thread count, so that a reviewer
re-running it elsewhere knows whether the same tables are promised (docs/deep-agents.md's
Threads). Before, only ``checkpoint/state.pt`` (a torch file, absent with
``--checkpoint-every 0`` and from published runs) held them."""

from __future__ import annotations

import json
import warnings
from importlib import metadata

from deep_runs import _small

from maxminq.deep import run_training
from maxminq.deep.run_folder import clear_run


def test_software_json_lists_each_stretch_with_its_versions_and_threads(tmp_path) -> None:
    out = tmp_path / "run"
    kw = dict(agent="dqn", n=1, learning_starts=50, checkpoint_every=10_000)
    cfg = _small(steps=150, **kw)
    assert run_training(cfg, out, progress=False, stop_after=60) == {}
    assert not (out / "software.json").exists()  # written with the tables, at the end
    run_training(cfg, out, progress=False)  # resumed at 60 on the same thread count
    first = json.loads((out / "software.json").read_text())
    assert len(first) == 1  # the same software throughout: one stretch, from step 0
    entry = first[0]
    assert entry["from_step"] == 0 and entry["threads"] == 1
    for name in ("torch", "numpy", "gymnasium"):  # read here from the installed metadata
        assert entry[name] == metadata.version(name)
    # Extended to 200 steps on two threads: a second stretch from the checkpoint's step.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CheckpointWarning naming the thread count
        run_training(_small(steps=200, **kw), out, progress=False, threads=2)
    second = json.loads((out / "software.json").read_text())
    assert second[0] == entry
    assert [e["from_step"] for e in second] == [0, 150]
    assert [e["threads"] for e in second] == [1, 2]
    clear_run(out)  # --overwrite: no stale record beside a new run's tables
    assert not (out / "software.json").exists()
