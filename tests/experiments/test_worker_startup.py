"""What a sweep's worker does while it starts up (imports the calling script, numpy...).

* ``run_sweep`` from a script without the ``if __name__ == "__main__":`` guard: the local
  backend's spawned workers import the calling script again, which runs ``run_sweep`` once
  more in each of them. That must end as one error in the calling process that names the
  fix, with no run recorded failed, so that the same sweep, once the script is guarded,
  runs every run.
* Ctrl-C while the workers start: a worker must not turn it into a traceback (or die and
  have its runs recorded failed); the driver stops the sweep with its one line.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sweep_kinds as helpers

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


# Toy-MDP runs far longer than the test: the interrupt always finds them in flight.
LONG_TOY = """
name: long_toy
kind: toy_mdp
fixed: {seed: 0, runs: 300, episodes: 100000}
grid: {mu: [0.1, -0.1]}
variants: [{algorithm: q_learning, n: 1}, {algorithm: double_q, n: 2}]
scales: {quick: {}}
"""


# A driver that spawns a worker inside workers_ignore_sigint, with a Ctrl-C to its main
# thread before (while the caller blocks SIGINT itself) or during the
# spawn. (Sent to the thread: the kernel could hand a process-wide one to a thread of
# OpenBLAS's instead.)
SPAWN_SCRIPT = """
import multiprocessing, os, signal, sys, threading, time
from maxminq.experiments.workers import start_resource_tracker, workers_ignore_sigint

def ignored(pid):  # whether process pid ignores SIGINT (bit 2 of SigIgn)
    line = next(l for l in open(f"/proc/{pid}/status") if l.startswith("SigIgn:"))
    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))

def ctrl_c():
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    before = sys.argv[1] == "before"
    if before:  # a caller that blocks SIGINT starts it first (starting it lifts a block)
        start_resource_tracker()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    if before:
        ctrl_c()
    try:
        try:
            with workers_ignore_sigint():
                if not before:
                    ctrl_c()
                worker = ctx.Process(target=time.sleep, args=(30,))
                worker.start()
                print("worker ignores SIGINT" if ignored(worker.pid) else "worker takes it")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for _ in range(3):  # the interpreter raises it at its next check
            time.sleep(0.01)
        print("Ctrl-C lost")
    except KeyboardInterrupt:
        print("Ctrl-C raised in the driver")
    print("driver ignores SIGINT" if ignored(os.getpid()) else "driver takes SIGINT")
    worker.kill()
    worker.join()
"""


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_while_the_workers_start_stops_the_sweep_with_one_line(tmp_path) -> None:
    # A terminal's Ctrl-C reaches every process of the group; on a busy machine the workers
    # can take it while Python starts or imports numpy, before their initializer ignores it,
    # and the driver take it late. Here they get it as soon as they exist, the whole group a
    # second later. A worker that raised KeyboardInterrupt then printed a traceback and died,
    # which broke the pool (its runs requeued, then run alone).
    config = tmp_path / "long_toy.yaml"
    config.write_text(LONG_TOY)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "maxminq.cli", "sweep", str(config), "--out", str(out),
           "--workers", "2", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        workers = helpers.wait_for_workers(proc)
        assert len(workers) == 2, "the workers never started"
        for worker in workers:
            os.kill(worker, signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours: started by this test
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "maxminq sweep: interrupted; finished runs are kept: the same command resumes"
    ], err
    assert helpers.gone(workers, within=5.0)
    counts, failed = store_state(out)
    assert failed == 0 and counts == {"pending": 4}, counts


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("when", ["before", "during"])
def test_workers_spawned_ignoring_sigint_and_a_ctrl_c_meanwhile_is_kept(tmp_path, when) -> None:
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), when], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "worker ignores SIGINT",  # from exec on: no KeyboardInterrupt while it starts
        "Ctrl-C raised in the driver",  # not discarded by the driver's SIG_IGN meanwhile
        "driver takes SIGINT",  # its handler is back
    ], proc.stderr
