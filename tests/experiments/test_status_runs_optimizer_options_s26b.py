"""``maxminq status --runs`` shows a deep run's optimizer options in full, torch's defaults
filled in for those not given (as ``maxminq compare`` and ``plot`` label runs).

A MinAtar run swept before --optimizer-kwargs was merged over the registry's stored
``{"alpha": 0.9}`` and trained with torch's eps 1e-8; beside a run of today's
``{"alpha": 0.9, "eps": 0.01}`` it was shown as ``{"alpha":0.9}``, as if only alpha were
set. Runs registered by hand, the expected cells written out (torch.optim.RMSprop's
defaults: alpha 0.99, eps 1e-8).
"""

from __future__ import annotations

from pathlib import Path

from maxminq.cli import main
from maxminq.experiments.config import RunSpec
from maxminq.experiments.store import ResultsStore


def _deep(run_id: str, optimizer: str, options: dict, steps: int = 100) -> RunSpec:
    settings = {"env_id": "MinAtar/Breakout-v1", "agent": "dqn", "steps": steps,
                "optimizer": optimizer, "optimizer_kwargs": options}  # fmt: skip
    return RunSpec(run_id, "deep", settings, "b")


def _rows(out: str) -> dict[str, str]:
    """Run id -> its line of the --runs table."""
    return {line.split()[0]: line for line in out.splitlines() if line.startswith("deep-")}


def test_an_older_runs_options_are_shown_in_full(tmp_path: Path, capsys) -> None:
    with ResultsStore(tmp_path) as store:
        store.register([
            _deep("deep-00000000000a", "centered_rmsprop", {"alpha": 0.9}),  # swept before
            _deep("deep-00000000000b", "centered_rmsprop", {"alpha": 0.9, "eps": 0.01}),
        ])  # fmt: skip
    main(["status", str(tmp_path), "--runs"])
    rows = _rows(capsys.readouterr().out)
    assert '{"alpha":0.9,"eps":1e-08}' in rows["deep-00000000000a"]
    assert '{"alpha":0.9,"eps":0.01}' in rows["deep-00000000000b"]


def test_one_optimizer_spelled_two_ways_is_no_varying_setting(tmp_path: Path, capsys) -> None:
    with ResultsStore(tmp_path) as store:
        store.register([
            _deep("deep-00000000000c", "rmsprop", {}, steps=100),
            _deep("deep-00000000000d", "rmsprop", {"alpha": 0.99, "eps": 1e-8}, steps=200),
        ])  # fmt: skip
    main(["status", str(tmp_path), "--runs"])
    out = capsys.readouterr().out
    header = [line for line in out.splitlines() if line.startswith("run id")]
    assert len(header) == 1 and "steps" in header[0], out
    assert "optimizer_kwargs" not in header[0], out
