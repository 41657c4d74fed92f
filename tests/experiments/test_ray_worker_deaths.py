"""A run whose Ray worker dies (a ``kill -9``, the OOM killer, Ray's memory monitor) runs
once more, as a run whose local worker dies does; it is failed only when its worker dies
again.

On the Ray backend such a run was failed at once (``ray task failed: WorkerCrashedError``,
exit status 1), though the run itself was fine: the local pool queues it again. Here a run
kind that SIGKILLs its own worker process on its first attempt (a marker file in its work
folder says it tried), and one that does so on every attempt, run through a real local Ray
of 2 CPUs.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from maxminq.experiments.config import config_from_document
from maxminq.experiments.registry import KINDS, RunKind, RunOutput
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore, load_results


def validate_k(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of a tiny run: its number ``k``."""
    return {"k": int(settings["k"])}


def killed(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """k = 1 kills its worker on its first attempt, k = 2 on every attempt (each attempt
    noted in ``tries``); otherwise, and k = 1's second attempt, one row."""
    k = settings["k"]
    if k in (1, 2):
        work_dir.mkdir(parents=True, exist_ok=True)
        tries = work_dir / "tries"
        tried = tries.read_text() if tries.exists() else ""
        tries.write_text(tried + "x")
        if k == 2 or not tried:
            os.kill(os.getpid(), signal.SIGKILL)
    return RunOutput({"t": pd.DataFrame({"k": [k], "k2": [k**2]})})


@pytest.fixture
def ray_kinds(monkeypatch: pytest.MonkeyPatch):
    """The kinds of this file, registered (and shipped to Ray's workers by value)."""
    import ray.cloudpickle

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # never joined: a Ray of its own
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    KINDS["ray_killed"] = RunKind("ray_killed", validate_k, killed)
    yield
    KINDS.pop("ray_killed", None)
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.slow
def test_a_run_whose_ray_worker_dies_runs_again_and_fails_only_twice(tmp_path, ray_kinds):
    doc = {"name": "deaths", "kind": "ray_killed", "grid": {"k": [1, 2, 3, 4]}}
    config = config_from_document({**doc, "scales": {"quick": {}}}, tmp_path / "deaths.yaml")
    out = tmp_path / "out"
    summary = run_sweep(config, out, backend="ray", workers=2, progress=False)
    assert (summary.done, summary.failed) == (3, 1), summary.failures
    (error,) = summary.failures.values()
    assert "WorkerCrashedError" in error
    assert sorted(load_results(out)["t"]["k"].tolist()) == [1, 3, 4]
    with ResultsStore(out) as store:
        rows = {rec.settings["k"]: (rec.status, rec.attempts) for rec in store.records()}
        (failed,) = [rec.run_id for rec in store.records() if rec.settings["k"] == 2]
        tries = (store.work_dir(failed) / "tries").read_text()
    assert rows == {1: ("done", 2), 2: ("failed", 2), 3: ("done", 1), 4: ("done", 1)}
    assert tries == "xx"  # two attempts, not more
