"""Warnings that a sweep's runs give in their workers (an environment without a time limit,
episodes cut by it, runs that never learn) reach the sweep's caller once, as warnings of the
driver naming the config's keys: the command prints one line, not Python's two lines from
every worker."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import EnvWarning
from maxminq.experiments.config import config_from_document
from maxminq.experiments.registry import KINDS, RunKind, RunOutput
from maxminq.experiments.runner import execute_run, run_sweep


def _warns_as_a_deep_run_does(settings: dict, work: Path, resume: bool) -> RunOutput:
    warnings.warn("by step 60 of 200 it cut 6 episodes", CutEpisodesWarning, stacklevel=1)
    warnings.warn("no time limit", EnvWarning, stacklevel=1)
    warnings.warn("in all it cut 20 episodes", CutEpisodesWarning, stacklevel=1)
    return RunOutput({"runs": pd.DataFrame({"seed": [0]})})


HERE = Path(__file__).resolve().parent


MESSAGE = "Line-v0 has no time limit: a test episode the policy never ends never finishes"


def validate_warn(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings of a warning run: its number ``k``."""
    return {"k": int(settings["k"])}


def execute_warn(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Warn as a deep run on an uncapped environment does (twice), and of something else
    once, then return one row."""
    warnings.warn(MESSAGE, EnvWarning, stacklevel=2)
    warnings.warn(MESSAGE, EnvWarning, stacklevel=2)
    warnings.warn("not a maxminq warning", RuntimeWarning, stacklevel=2)
    return RunOutput({"t": pd.DataFrame({"k": [settings["k"]]})})


def register() -> None:
    """The kind of this file (also for a script that runs a sweep of it)."""
    KINDS["warn17"] = RunKind("warn17", validate_warn, execute_warn)


DOC = {"name": "warns", "kind": "warn17", "grid": {"k": [1, 2, 3, 4]}, "scales": {"quick": {}}}


CLI = """
import sys
sys.path.insert(0, {tests!r})
sys.path.insert(1, {tests!r} + "/..")
import test_sweep_warnings as kinds
from maxminq.cli import main

if __name__ == "__main__":
    kinds.register()
    raise SystemExit(main(sys.argv[1:]))
"""


@pytest.fixture
def warn_kind():
    """The kind of this file, registered while a test runs."""
    register()
    yield
    KINDS.pop("warn17", None)


@pytest.mark.usefixtures("torch_one_thread")
def test_a_sweep_says_once_that_its_runs_never_learn(tmp_path, capsys):
    """The sweep warns before it starts; each run's run_training now warns too, which its
    driver passed on as a second line of the same news. A real sweep of one 60-step run."""
    from maxminq.cli import main
    from maxminq.deep.config import NeverLearnsWarning

    (tmp_path / "idle.yaml").write_text(
        textwrap.dedent(
            """
            name: idle
            kind: deep
            fixed: {env_id: CartPole-v1}
            scales:
              quick:
                fixed: {steps: 60, seeds: [0], learning_starts: 100}
                variants: [{agent: dqn, n: 1}]
            """
        )
    )
    argv = ["sweep", str(tmp_path / "idle.yaml"), "--out", str(tmp_path / "o")]
    assert main([*argv, "--workers", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1 deep run(s) with steps <= learning_starts never learn" in err[0]
    with pytest.warns(NeverLearnsWarning):  # the filter ends with the command
        warnings.warn("again", NeverLearnsWarning, stacklevel=1)


def test_a_runs_warning_names_config_keys_in_a_sweep() -> None:
    """What a deep run's worker warned of, as the sweep process shows it (once)."""
    import warnings

    from maxminq.deep.bias_probes import CutEpisodesWarning
    from maxminq.experiments.runner import _Result, _show_warnings

    said = (
        "--max-episode-steps 100 with --gamma 0.99: only episodes that terminate give bias "
        "numbers; --env my:Env-v0"
    )
    result = _Result(None, None, "h", 1, 0.0, warned=[(CutEpisodesWarning, said)])
    shown: set = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _show_warnings(result, shown)
        _show_warnings(result, shown)  # a second run with the same warning: not again
    assert [str(w.message) for w in caught] == [
        "max_episode_steps 100 with gamma 0.99: only episodes that terminate give bias "
        "numbers; env_id my:Env-v0"
    ]
    assert caught[0].category is CutEpisodesWarning


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


def test_a_warning_of_every_run_reaches_the_caller_once(tmp_path, warn_kind):
    """Four runs in two workers, each warning twice: the caller of run_sweep gets the
    EnvWarning once (it was printed by the workers, and never reached the caller)."""
    config = config_from_document(DOC, tmp_path / "warns.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run_sweep(config, tmp_path / "out", workers=2, progress=False)
    assert summary.done == 4
    ours = [w for w in caught if issubclass(w.category, EnvWarning)]
    assert [str(w.message) for w in ours] == [MESSAGE]


def test_the_command_prints_a_run_warning_as_one_line(tmp_path):
    """`maxminq sweep`: the runs' EnvWarning is one line, `maxminq sweep: warning: ...`,
    once; warnings of other kinds stay where they arose (the workers' stderr)."""
    config = tmp_path / "warns.yaml"
    config.write_text("name: warns\nkind: warn17\ngrid: {k: [1, 2, 3, 4]}\nscales: {quick: {}}\n")
    script = tmp_path / "cli17w.py"
    script.write_text(CLI.format(tests=str(HERE)))
    cmd = [sys.executable, str(script), "sweep", str(config), "--out", str(tmp_path / "out")]
    proc = subprocess.run(cmd + ["--workers", "2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines.count(f"maxminq sweep: warning: {MESSAGE}") == 1, proc.stderr
    assert not any("EnvWarning" in line or "warnings.warn(" in line for line in lines)
    assert sum("RuntimeWarning: not a maxminq warning" in line for line in lines) == 4
