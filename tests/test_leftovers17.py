"""Leftovers of session 16, settled in session 17:

* ``evaluate_agent``'s arguments out of range (``max_episode_steps=0`` among them) are a
  one-line UsageError naming the option of ``maxminq evaluate``, before any episode;
* ``maxminq.cli.main(["experiment", ...])`` from a script without the ``__main__`` guard
  (the experiment's spawned workers import the script again) is one clear error naming the
  fix, with nothing written to ``--out``;
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# A user's script that runs a small experiment through the command line's main(), on two
# spawned workers; {call} is its last statement, with or without the __main__ guard.
EXPERIMENT_SCRIPT = """
import sys

from maxminq.cli import main


def experiment():
    argv = sys.argv[2:] + ["--quick", "--workers", "2", "--no-progress", "--out", sys.argv[1]]
    print("status", main(["experiment", *argv]))


{call}
"""
UNGUARDED = "experiment()\n"
GUARDED = 'if __name__ == "__main__":\n    experiment()\n'
# Small settings of each experiment (--quick, made smaller), with two tasks for the workers.
EXPERIMENTS = {
    "toy-mdp": ["toy-mdp", "--runs", "3", "--episodes", "4", "--algorithms", "q_learning",
                "double_q"],
    "mountain-car": ["mountain-car", "--runs", "2", "--episodes", "1", "--max-steps", "20",
                     "--sigma2", "0", "--step-sizes", "0.02", "0.08", "--algorithms",
                     "q_learning"],
}  # fmt: skip


def _run_script(
    tmp_path: Path, call: str, out: Path, argv: list[str]
) -> subprocess.CompletedProcess:
    script = tmp_path / ("guarded.py" if call == GUARDED else "unguarded.py")
    script.write_text(EXPERIMENT_SCRIPT.format(call=call))
    return subprocess.run(
        [sys.executable, str(script), str(out), *argv],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_an_unguarded_script_running_an_experiment_gets_one_error_naming_the_fix(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    bad = _run_script(tmp_path, UNGUARDED, out, EXPERIMENTS[name])
    assert bad.returncode == 0, bad.stderr  # the script itself goes on after main()
    assert bad.stdout.splitlines() == ["status 2"], bad.stdout  # main's usage-error status
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1, bad.stderr  # no worker's traceback, no "worker died"
    assert lines[0].startswith("maxminq experiment: error: "), lines[0]
    assert 'put the call under `if __name__ == "__main__":`' in lines[0]
    assert "--workers 1" in lines[0]
    assert not out.exists()  # nothing written, not even the folder
    if name != "toy-mdp":  # the fix, once (the figures take seconds)
        return
    good = _run_script(tmp_path, GUARDED, out, EXPERIMENTS[name])
    assert good.returncode == 0, good.stderr
    assert good.stdout.splitlines()[-1] == "status 0", good.stdout
    assert (out / f"{name.replace('-', '_')}.csv").is_file()
