"""``run_sweep`` from a script without the ``if __name__ == "__main__":`` guard.

The local backend's spawned workers import the calling script again, which runs
``run_sweep`` once more in each of them. That must end as one error in the calling process
that names the fix, with no run recorded failed, so that the same sweep, once the script is
guarded, runs every run.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

# Two toy-MDP runs (Q-learning, mu = +-0.1) of 2 x 5 episodes: the smallest real sweep.
SCRIPT = '''
import sys

from maxminq.experiments.config import config_from_document, parse_document
from maxminq.experiments.runner import run_sweep

CONFIG = """
name: guard_test
kind: toy_mdp
fixed: {{seed: 0, runs: 2, episodes: 5}}
grid: {{mu: [0.1, -0.1]}}
variants: [{{algorithm: q_learning, n: 1}}]
scales: {{quick: {{}}}}
"""


def sweep():
    config = config_from_document(parse_document(CONFIG), "<guard test>", "quick")
    print(run_sweep(config, sys.argv[1], workers=2, progress=False).line())


{call}
'''
UNGUARDED = "sweep()\n"
GUARDED = 'if __name__ == "__main__":\n    sweep()\n'


def run_script(tmp_path: Path, call: str, out: Path) -> subprocess.CompletedProcess[str]:
    """Write the script with ``call`` as its last statement and run it on ``out``."""
    script = tmp_path / ("guarded.py" if call == GUARDED else "unguarded.py")
    script.write_text(SCRIPT.format(call=call))
    return subprocess.run(
        [sys.executable, str(script), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def store_state(out: Path) -> tuple[dict[str, int], int]:
    """Run counts by status, and how many 'failed' events the store ever logged."""
    con = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True)
    try:
        counts = dict(con.execute("SELECT status, COUNT(*) FROM runs GROUP BY status"))
        failed = con.execute("SELECT COUNT(*) FROM events WHERE event='failed'").fetchone()[0]
    finally:
        con.close()
    return counts, failed


def test_unguarded_script_gets_one_error_and_the_guarded_one_runs_everything(tmp_path) -> None:
    out = tmp_path / "results"
    bad = run_script(tmp_path, UNGUARDED, out)
    assert bad.returncode == 1, bad.stderr
    assert bad.stdout == ""  # no summary: the sweep did not pretend to finish
    last = bad.stderr.strip().splitlines()[-1]
    assert last.startswith("maxminq.errors.UsageError: run_sweep: "), bad.stderr
    assert 'put the call under `if __name__ == "__main__":`' in last
    # One traceback (the script's own): the workers exit quietly, and the error is not
    # chained to the pool's BrokenProcessPool.
    assert bad.stderr.count("Traceback") == 1, bad.stderr
    assert "BrokenProcessPool" not in bad.stderr and "in use by another sweep" not in bad.stderr
    assert store_state(out) == ({"pending": 2}, 0)

    good = run_script(tmp_path, GUARDED, out)
    assert good.returncode == 0, good.stderr
    assert "2 runs, 0 already done, 2 done, 0 diverged, 0 failed" in good.stdout
    assert store_state(out) == ({"done": 2}, 0)
    assert len(list((out / "tables").glob("*/toy_mdp.csv"))) == 2
