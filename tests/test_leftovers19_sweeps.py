"""Session 19 leftovers of sweeps and the command line (h2).

1. A config whose runs differ only in a setting the run id leaves out (a deep run's
   ``checkpoint_every``, ``tensorboard``) is refused naming that setting and why; before,
   "makes the same run" with two runs that plainly differ.
2. ``worker.json`` (the worker pid ``maxminq status`` shows) no longer outlives its run:
   the worker removes it as the run ends, the sweep after a worker that died; ``status``
   ignores one whose process is gone. A failed run that left nothing else leaves no
   scratch folder.
3. SIGHUP ends a command with exit status 129 (128 + 1) and ``terminated by SIGHUP``, as
   a shell reports it; SIGTERM keeps 143 and ``terminated``.
4. A local pool's workers start with SIGHUP blocked: one sent before their initializer
   ignores it is discarded, not fatal to the worker.
5. A sweep with failed runs says what to do next; ``maxminq status --errors`` prints their
   tracebacks. ``maxminq status`` shows times to the second in UTC
   (``2026-11-24 01:15:04 UTC``, not ``2026-11-24T01:15:04.406328+00:00``), as does a sweep
   turned away from a busy folder; a folder that does not exist (yet: a sweep makes it once
   its config is loaded) is "no such folder", not "not a folder"; a run queued again
   (Ctrl-C, a worker that died) has a line saying why, and whether its scratch folder is
   kept for its next attempt.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest
import test_sweep_helpers as helpers

from maxminq import cli
from maxminq.cli import main
from maxminq.experiments.config import ConfigError, RunSpec, load_config
from maxminq.experiments.runner import SweepSummary, _drive, _Result
from maxminq.experiments.store import WORKER_FILE, ResultsStore, in_use_message, sweep_owner

DEEP = """
name: ck
kind: deep
fixed: {env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2, lr: 0.001}
scales: {quick: {}}
"""


# ---------------------------------------------------------------- 1. settings left out of ids
def test_a_grid_over_checkpoint_every_alone_says_the_run_id_leaves_it_out(tmp_path) -> None:
    """Before: 'grid: makes the same run as another of its combinations
    ({checkpoint_every: 200}, ...); give each run once', for runs that differ in it."""
    path = tmp_path / "grid.yaml"
    path.write_text(DEEP + "grid: {checkpoint_every: [100, 200]}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == (
        f"{path}: grid.checkpoint_every: makes the same run as another of its combinations "
        "({checkpoint_every: 200}, with the defaults filled in): checkpoint_every cannot "
        "change a run's results, so its run id leaves it out; give it one value for all runs "
        "(in fixed)"
    )


def test_variants_that_differ_only_in_tensorboard_name_it(tmp_path) -> None:
    """A variant asking for TensorBoard logs beside the same run without them."""
    path = tmp_path / "tb.yaml"
    path.write_text(DEEP + "variants: [{tensorboard: true, n: 1}, {n: 1}]\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: variants[1]: makes the same run as variants[0] ")
    assert "tensorboard cannot change a run's results, so its run id leaves it out" in message
    assert "\n" not in message


# ---------------------------------------------------------------------------- 2. worker.json
FLAKY = """
name: flaky
kind: theory_mc_flaky
fixed: {seed: 11, samples: 500, chunks: 1, M: 2}
grid: {N: [1, 3]}
scales: {quick: {}}
"""


def test_no_worker_file_outlives_a_kept_or_failed_run(tmp_path, theory_kinds, capsys) -> None:
    """``--keep-work``: the finished run's folder stays, without a worker file naming a
    process long gone; the failed run (N = 3), which left nothing else, leaves no folder.
    Before, both folders stayed, each with the worker file of its dead worker. The sweep
    then says what to do about the failure, and ``status --errors`` shows its traceback
    (before: its last line only, anywhere)."""
    config = tmp_path / "flaky.yaml"
    config.write_text(FLAKY)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    assert main([*argv, "--keep-work"]) == 1
    printed = capsys.readouterr().out.splitlines()
    with ResultsStore(out, create=False) as store:
        (done,) = [r.run_id for r in store.records() if r.status == "done"]
        (failed,) = [r.run_id for r in store.records() if r.status == "failed"]
    assert [p.name for p in (out / "work").iterdir()] == [done]
    assert not list(out.rglob(WORKER_FILE))
    assert printed[1:] == [
        f"  failed {failed}: ValueError: boom for N=3",
        f"  the same command runs the failed run(s) again; 'maxminq status {out} --errors' "
        "shows their tracebacks",
    ]
    assert main(["status", str(out), "--errors"]) == 1
    shown = capsys.readouterr().out.splitlines()
    at = shown.index(f"failed   {failed} (attempts 1): ValueError: boom for N=3")
    assert shown[at + 1] == "    Traceback (most recent call last):"
    assert any("in fail_unless_fixed" in line for line in shown[at + 2 :])
    assert shown[at + 2 :][-1] == "    ValueError: boom for N=3"


class _DeadWorker:
    """A backend whose worker writes its file, then dies (killed: no clean-up) and the run
    fails (what _drive needs of a backend)."""

    workers = 1

    def submit(self, run: RunSpec, work_dir: Path) -> str:
        work_dir.mkdir(parents=True)
        (work_dir / "checkpoint.pt").write_bytes(b"state")  # to continue from
        (work_dir / WORKER_FILE).write_text('{"host": "h", "pid": 424242}')
        return run.run_id

    def wait(self, handles: list, timeout: float) -> list:
        return [(h, _Result(None, "worker process died: killed", "h", 0, 0.0)) for h in handles]


def test_the_sweep_removes_the_worker_file_of_a_worker_that_died(tmp_path) -> None:
    """The worker cannot remove its file when it is killed; the sweep does, and keeps the
    checkpoint beside it."""
    out = tmp_path / "out"
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        _drive(store, _DeadWorker(), [run], SweepSummary("c", "quick", out, 1), False, False)  # type: ignore[arg-type]
        assert store.get(run.run_id).status == "failed"
        assert sorted(p.name for p in store.work_dir(run.run_id).iterdir()) == ["checkpoint.pt"]


def _reaped() -> int:
    """The pid of a process of this host that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_status_does_not_name_a_worker_whose_process_is_gone(tmp_path, capsys) -> None:
    """A running run (its sweep, this process, holds the folder) whose folder holds the
    file of a worker of this host that is gone: status names the sweep, as while a worker
    starts. Before: 'worker pid N' for the dead process."""
    import socket

    out = tmp_path / "out"
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    dead = _reaped()
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id, host="sweephost", pid=4242)
        store.work_dir(run.run_id).mkdir(parents=True)
        (store.work_dir(run.run_id) / WORKER_FILE).write_text(
            f'{{"host": "{socket.gethostname()}", "pid": {dead}}}'
        )
        assert main(["status", str(out)]) == 0
        (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("running")]
        assert line.endswith("(sweephost, sweep pid 4242)"), line
        # a pid beyond any (a damaged or edited file): the same; before (h7), a traceback
        # (os.kill's OverflowError)
        (store.work_dir(run.run_id) / WORKER_FILE).write_text(
            f'{{"host": "{socket.gethostname()}", "pid": {2**40}}}'
        )
        assert main(["status", str(out)]) == 0
        (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("running")]
        assert line.endswith("(sweephost, sweep pid 4242)"), line
        # a live one is still named (this process stands in for it)
        (store.work_dir(run.run_id) / WORKER_FILE).write_text(
            f'{{"host": "{socket.gethostname()}", "pid": {os.getpid()}}}'
        )
        assert main(["status", str(out)]) == 0
        (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("running")]
        assert line.endswith(f"worker pid {os.getpid()})"), line


# ---------------------------------------------------------------------- 3. SIGHUP exit status
def _stopping_command(signum: int) -> types.ModuleType:
    """A command module whose run is stopped by ``signum`` (as a closed terminal or a
    scheduler stops a long command), with a resume hint as sweep's."""
    module = types.ModuleType("maxminq_test_stopped")
    module.RESUME_HINT = "the same command resumes"  # type: ignore[attr-defined]
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]

    def run(args: object) -> int:
        signal.raise_signal(signum)  # its handler runs before this returns
        return 0

    module.run = run  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    ("signum", "status", "word"),
    [(signal.SIGHUP, 129, "terminated by SIGHUP"), (signal.SIGTERM, 143, "terminated")],
    ids=["sighup", "sigterm"],
)
def test_a_stop_signal_gives_128_plus_its_number(
    signum, status, word, monkeypatch, capsys, sighup_default
) -> None:
    """SIGHUP: exit 129 (was 143, SIGTERM's) and a last line that names it."""
    monkeypatch.setitem(sys.modules, "maxminq_test_stopped", _stopping_command(signum))
    monkeypatch.setitem(cli.COMMANDS, "stopped", ("maxminq_test_stopped", "a test command"))
    monkeypatch.setitem(cli.HANGUP_COMMANDS, "stopped", False)
    assert main(["stopped"]) == status
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq stopped: {word}; the same command resumes"
    ]
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL


# ------------------------------------------------------------ 4. SIGHUP before the initializer
SPAWN_SCRIPT = """
import multiprocessing, os, signal, time
from maxminq.experiments.workers import ignore_terminal_signals_in_worker, workers_ignore_sigint

def worker(go):
    go.recv()  # the driver sent it SIGHUP meanwhile, before this initializer
    ignore_terminal_signals_in_worker()
    time.sleep(0.05)  # a SIGHUP still pending would be delivered now

def pending(pid):  # whether SIGHUP waits in process pid (ShdPnd or SigPnd)
    lines = [l for l in open(f"/proc/{pid}/status") if l.startswith(("ShdPnd:", "SigPnd:"))]
    return any(int(l.split()[1], 16) & (1 << (signal.SIGHUP - 1)) for l in lines)

if __name__ == "__main__":
    got = []
    signal.signal(signal.SIGHUP, lambda signum, frame: got.append(signum))  # as the CLI's
    ctx = multiprocessing.get_context("spawn")
    go, tell = ctx.Pipe(duplex=False)
    with workers_ignore_sigint():
        proc = ctx.Process(target=worker, args=(go,))
        proc.start()
        os.kill(os.getpid(), signal.SIGHUP)  # the driver's own: handled, not lost
    os.kill(proc.pid, signal.SIGHUP)  # the terminal closed while the worker starts up
    deadline = time.monotonic() + 20
    while proc.exitcode is None and not pending(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.005)
    tell.send("go")
    proc.join(20)
    print(f"worker exit {proc.exitcode}")
    print(f"driver handled {len(got)} SIGHUP")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_survives_a_hangup_before_its_initializer(tmp_path) -> None:
    """Before: the worker died of it (exit -1), which broke a sweep's pool and failed the
    run in flight, though the driver stops its workers itself."""
    script = tmp_path / "spawn.py"
    script.write_text(SPAWN_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False,
        preexec_fn=helpers.default_sighup,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["worker exit 0", "driver handled 1 SIGHUP"], proc.stderr


# ------------------------------------------------------------------------ 5. status wording
def test_status_shows_times_to_the_second_in_utc(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id)
        assert main(["status", str(out)]) == 0
        shown = capsys.readouterr().out.splitlines()
        owner = sweep_owner(out)
        assert owner is not None and "+00:00" in owner  # the lock keeps its ISO time
        busy = in_use_message(out, owner)
    when = r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
    assert re.fullmatch(rf"{re.escape(str(out))}: sweep running, pid \d+ on \S+ {when}", shown[0])
    (line,) = [x for x in shown if x.startswith("running")]
    assert re.fullmatch(rf"running  t-1 {when} \(.*\)", line), line
    assert re.search(rf"in use by another sweep \(pid \d+ on \S+ {when}\);", busy), busy


def test_status_of_a_folder_not_made_yet_says_so(tmp_path, capsys) -> None:
    assert main(["status", str(tmp_path / "results")]) == 2
    assert capsys.readouterr().err == (
        f"maxminq status: error: DIR: {tmp_path / 'results'}: no such folder; give the --out "
        "of a sweep\n"
    )


def test_status_says_why_a_run_is_queued_again_and_what_it_keeps(tmp_path, capsys) -> None:
    """After Ctrl-C a deep run that had trained for hours was one of 'pending 2', its
    checkpoint unmentioned. A run queued again now has its line: why, and its scratch folder
    when that holds more than the worker file. A run never started has none."""
    out = tmp_path / "out"
    runs = [RunSpec(f"t-{i}", "toy_mdp", {"x": i}, "c") for i in (1, 2, 3)]
    with ResultsStore(out) as store:
        store.register(runs)
        for run, why in ((runs[0], "interrupted (the sweep stopped)"), (runs[1], "run alone")):
            store.mark_running(run.run_id)
            store.mark_pending(run.run_id, why)
        work = store.work_dir("t-1")
        (work / "checkpoint").mkdir(parents=True)
        (work / "checkpoint" / "state.pt").write_bytes(b"state")  # an empty folder keeps nothing
        (store.work_dir("t-2")).mkdir()
        (store.work_dir("t-2") / WORKER_FILE).write_text("{}")
    assert main(["status", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[3:] == [
        f"pending  t-1 (attempts 1): interrupted (the sweep stopped); {work} is kept for its "
        "next attempt",
        "pending  t-2 (attempts 1): run alone",
    ]
