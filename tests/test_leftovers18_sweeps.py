"""Session 18 leftovers of sweeps, the results store and Ray.

1. A deep run's id no longer depends on ``checkpoint_every`` or ``tensorboard`` (they cannot
   change its results): changing them in a config retrained every run. Runs at their
   defaults keep the ids they always had, and a store whose runs were swept with other
   values resumes as before (its runs are taken under their stored ids).
2. A YAML alias bomb ("billion laughs") in a config is refused in one line naming the file,
   before anything is built from it; it ran out of time or memory.
3. SIGHUP (the terminal closed) stops ``maxminq sweep`` as SIGTERM does: the workers get
   their grace, so a deep run checkpoints its step; under ``nohup`` the sweep goes on.
4. ``maxminq status`` names the worker process of a running run, not the sweep's.
5. Interrupted, a Ray sweep cancels its tasks gently and waits: a deep run checkpoints its
   step, as under the local backend.
6. A reader that may not write a folder (another user's) reads a copy of its database made
   under the folder lock, so it no longer keeps the owner's sweep out while it is open.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
import test_sweep_helpers as helpers
import torch
import yaml

from maxminq.cli import main
from maxminq.commands.sweep import dry_run, stale_run_ids
from maxminq.experiments.config import (
    MAX_NODES,
    ConfigError,
    RunSpec,
    expanded_size,
    load_config,
    parse_document,
)
from maxminq.experiments.registry import RunOutput
from maxminq.experiments.runner import SweepSummary, _drive, _Result, execute_run, run_sweep
from maxminq.experiments.store import WORKER_FILE, ResultsStore

REPO = Path(__file__).resolve().parents[1]

DEEP = """
name: ck
kind: deep
fixed: {{env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2{extra}}}
scales: {{quick: {{}}}}
"""


def _config(tmp_path: Path, extra: str = "", name: str = "ck.yaml"):
    path = tmp_path / name
    path.write_text(DEEP.format(extra=extra))
    return load_config(path, "quick")


def _hash_id(kind: str, settings: dict) -> str:
    """The run id as every version before this one made it: the SHA-256 of kind and all
    the settings (written out here, not taken from the package)."""
    text = json.dumps({"kind": kind, "settings": settings}, sort_keys=True, separators=(",", ":"))
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


# ----------------------------------------------------------------------------- 1. run ids
def test_checkpoint_every_and_tensorboard_do_not_change_a_deep_run_id(tmp_path) -> None:
    """Before: checkpoint_every 50 and tensorboard true gave another id, so the sweep
    trained the run again though its tables cannot differ."""
    plain = _config(tmp_path).runs[0]
    other = _config(tmp_path, ", checkpoint_every: 50, tensorboard: true", "b.yaml").runs[0]
    assert other.settings["checkpoint_every"] == 50 and other.settings["tensorboard"] is True
    assert other.run_id == plain.run_id
    # a setting that changes results still changes the id
    assert _config(tmp_path, ", lr: 0.01", "c.yaml").runs[0].run_id != plain.run_id


def test_runs_at_the_default_checkpoint_settings_keep_their_ids(tmp_path) -> None:
    """The ids of published configs and of every run swept at the defaults are those of
    before (checkpoint_every max(10,000, steps / 20) and tensorboard false hashed as they
    are): pinned for two shipped configs (quick: checkpoint_every 10,000; paper: 3.5e6
    steps, 175,000), and equal to the full-settings hash for a small run."""
    catcher = load_config(REPO / "configs" / "catcher.yaml", "quick").runs
    assert [r.run_id for r in catcher[:2]] == ["deep-cf546d08f466", "deep-dd6e15a5a62d"]
    paper = load_config(REPO / "configs" / "catcher.yaml", "paper").runs[0]
    assert paper.settings["checkpoint_every"] == 175_000
    assert paper.run_id == "deep-4666e76985b6"
    breakout = load_config(REPO / "configs" / "minatar_breakout.yaml", "quick").runs
    assert breakout[0].run_id == "deep-495c3632f660"
    run = _config(tmp_path).runs[0]
    assert run.run_id == _hash_id("deep", run.settings)


def test_a_grid_over_checkpoint_every_alone_is_one_run_given_twice(tmp_path) -> None:
    """Two runs that differ only in checkpoint_every compute the same thing: the config
    says so (it ran both before)."""
    path = tmp_path / "grid.yaml"
    path.write_text(DEEP.format(extra="") + "grid: {checkpoint_every: [100, 200]}\n")
    with pytest.raises(ConfigError, match=r"grid\.checkpoint_every: makes the same run as another"):
        load_config(path, "quick")


def _store_finished(out: Path, run: RunSpec) -> None:
    """``run`` stored finished in ``out`` as a sweep stores it (made-up tables)."""
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.save_tables(run, {"runs": pd.DataFrame({"seed": [0], "test_return": [9.5]})})
        store.mark_finished(run.run_id, "done")


def test_a_store_swept_with_other_checkpoint_settings_resumes_as_before(tmp_path) -> None:
    """A user's store of runs swept with checkpoint_every 50 (stored under the id every
    earlier version gave them, the hash of all settings): the same config, and the config
    with checkpoint_every changed, find the run finished (dry run, sweep: nothing trained,
    no stale runs), under its stored id."""
    old = _config(tmp_path, ", checkpoint_every: 50", "old.yaml").runs[0]
    legacy = RunSpec(_hash_id("deep", old.settings), old.kind, old.settings, old.config)
    assert legacy.run_id != old.run_id  # what the store holds is not today's id
    out = tmp_path / "out"
    _store_finished(out, legacy)
    for extra in (", checkpoint_every: 50", ", checkpoint_every: 70, tensorboard: true", ""):
        config = _config(tmp_path, extra, "now.yaml")
        assert "1 already done" in dry_run(config, out), extra
        assert stale_run_ids(out, [config]) == set()
        summary = run_sweep(config, out, workers=1, progress=False)
        assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0), extra
    with ResultsStore(out, create=False) as store:
        assert [r.run_id for r in store.records()] == [legacy.run_id]
        assert [r.status for r in store.records()] == ["done"]


def test_the_registry_records_the_checkpoint_settings_a_run_runs_with(tmp_path) -> None:
    """The same run swept again with checkpoint_every 70: a run not finished takes the new
    value in the registry (what load_results and status --runs show), as it runs with it;
    a finished one keeps 50, which it ran with. Before, the first registration's stayed."""
    first = _config(tmp_path, ", checkpoint_every: 50", "first.yaml").runs[0]
    done = RunSpec("deep-000000000001", "deep", dict(first.settings, seeds=[1]), "ck")
    out = tmp_path / "out"
    _store_finished(out, done)
    with ResultsStore(out, lock=True) as store:
        store.register([first])
        again = [
            RunSpec(r.run_id, r.kind, dict(r.settings, checkpoint_every=70), r.config)
            for r in (first, done)
        ]
        store.register(again)
        assert store.get(first.run_id).settings["checkpoint_every"] == 70
        assert store.get(done.run_id).settings["checkpoint_every"] == 50
        assert store.get(done.run_id).status == "done"


def test_a_run_continues_its_checkpoint_under_other_checkpoint_settings(
    tmp_path, torch_one_thread, monkeypatch
) -> None:
    """What the shared id relies on: a run stopped with a checkpoint written under
    checkpoint_every 50 (step 120) continues in the next sweep, which gives the same run
    checkpoint_every 70 (its work folder, as the next sweep's worker runs it), to the
    tables of the run trained without a stop, bitwise. (A guard of deep's result_key:
    it held before this change too.)"""
    from maxminq.deep import train
    from maxminq.deep.config import TrainConfig
    from maxminq.deep.train import run_training
    from maxminq.experiments.registry import execute_deep

    loaded: list[int] = []  # the steps of the checkpoints a run continued from
    load = train.Trainer.load_state_dict

    def noted(self: train.Trainer, state: dict) -> None:
        loaded.append(int(state["step"]))
        load(self, state)

    monkeypatch.setattr(train.Trainer, "load_state_dict", noted)

    first = _config(tmp_path, ", checkpoint_every: 50", "first.yaml").runs[0]
    again = _config(tmp_path, ", checkpoint_every: 70", "again.yaml").runs[0]
    assert first.run_id == again.run_id
    work = tmp_path / "work" / first.run_id
    assert run_training(TrainConfig(**first.settings), work, progress=False, stop_after=120) == {}
    with torch.random.fork_rng():
        resumed = execute_deep(again.settings, work, False).tables
        whole = run_training(TrainConfig(**again.settings), tmp_path / "whole", progress=False)
    assert loaded == [120]  # continued, not started again
    helpers.same_tables(dict(resumed), whole)


# ----------------------------------------------------------------------------- 2. alias bombs
def _laughs(levels: int, width: int = 9) -> list[str]:
    """Lines of nested anchors: level k holds ``width`` aliases of level k - 1."""
    lines = [f"  x0: &a0 [{', '.join(['lol'] * width)}]"]
    for k in range(1, levels):
        lines.append(f"  x{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]")
    return lines


BOMBS = {
    # a setting, a name (its error message printed the value), a grid axis, merge keys
    "fixed": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\nscales: {{quick: {{}}}}\n",
    "name": "kind: toy_mdp\nfixed:\n{laughs}\nname: *a8\nscales: {{quick: {{}}}}\n",
    "grid": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\ngrid:\n  mu: *a8\nscales: {{quick: {{}}}}\n",
}
MERGES = "\n".join(
    ["  m0: &m0 {k0: 1, k1: 2}"]
    + [f"  m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], z{i}: 1}}" for i in range(1, 30)]
)


@pytest.mark.parametrize("where", [*BOMBS, "merge"])
def test_an_alias_bomb_is_refused_in_one_line_naming_the_file(tmp_path, where: str) -> None:
    """Nine levels of nine aliases (9^9 values) or 29 levels of doubling merge keys, each
    file well under the size limit: one line naming the file and what to do. (Before, the
    checks walked the expanded values or printed them in an error: no answer within
    minutes, gigabytes of memory.)"""
    text = (
        f"name: b\nkind: toy_mdp\nfixed:\n{MERGES}\nscales: {{quick: {{}}}}\n"
        if where == "merge"
        else BOMBS[where].format(laughs="\n".join(_laughs(9)))
    )
    path = tmp_path / f"{where}.yaml"
    path.write_text(text)
    assert path.stat().st_size < 2_000
    with pytest.raises(ConfigError) as err:
        load_config(path, "quick")
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert f"expand to more than {MAX_NODES:,} values" in message
    assert "write the values out" in message


def test_expanded_size_counts_each_use_of_an_anchor() -> None:
    """The count the limit applies to, on documents small enough to count by hand: an
    anchored list of 2 used twice in a list is 1 + 2 * (1 + 2) = 7 nodes; a mapping is
    itself plus its keys and values; a merge counts the merged mapping once more."""

    def size(text: str, limit: int = MAX_NODES) -> int | None:
        return expanded_size(yaml.compose(text, Loader=yaml.SafeLoader), limit)

    assert size("[&a [1, 2], *a]") == 7
    assert size("{k: &a [1, 2], j: *a}") == 1 + 2 * 1 + 2 * 3
    assert size("{b: &b {x: 1}, c: {<<: *b, y: 2}}") == 1 + 2 + 3 + (1 + 2 + 3 + 1)
    assert size("[&a [1, 2], *a]", limit=6) is None  # over the limit
    assert size("&a [1, *a]") is None  # endless


def test_configs_with_a_few_aliases_still_load(tmp_path) -> None:
    """Anchors, aliases and merge keys as configs use them are unchanged: a scale that
    reuses the top level's grid, and a variant merged from a base."""
    doc = parse_document(
        "name: t\nkind: toy_mdp\ngrid: &g {mu: [0.1, -0.1]}\n"
        "fixed: {runs: 2, episodes: 3, seed: 1}\n"
        "variants:\n  - &base {algorithm: q_learning, n: 1}\n  - {<<: *base, algorithm: maxmin,"
        " n: 2}\nscales: {quick: {grid: *g}}\n"
    )
    assert doc["variants"][1] == {"algorithm": "maxmin", "n": 2}
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert len(load_config(path, "quick").runs) == 4


# ----------------------------------------------------------------------------- 3. SIGHUP
CLI = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"
HUNG = """
name: hung
kind: deep
fixed: {env_id: CartPole-v1, agent: maxmin-dqn, n: 2, lr: 0.001, steps: 4000, seeds: [0],
        learning_starts: 40, buffer_size: 200, target_update: 30, eval_episodes: 2,
        checkpoint_every: 4000}
scales: {quick: {}}
"""


def test_a_hangup_stops_a_sweep_like_sigterm_and_its_deep_run_checkpoints(tmp_path) -> None:
    """SIGHUP to the sweep's process group (a closed terminal signals it all) while its
    deep run trains (step 100 reported; the only periodic checkpoint would be step 4,000):
    the worker is asked to stop and checkpoints the step it is at; the sweep ends as on
    SIGTERM (exit 129, the resume line), no worker left, the run queued again. Before, the
    driver and its worker died at once (exit -1): no checkpoint, the run left 'running'."""
    config = tmp_path / "hung.yaml"
    config.write_text(HUNG)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,  # its own group, as a terminal's foreground job
        preexec_fn=helpers.default_sighup,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while (
            proc.poll() is None
            and time.monotonic() < deadline
            and not any(helpers.progress_step(w) >= 100 for w in out.glob("work/*"))
        ):
            workers[:] = helpers.workers(proc.pid) or workers
            time.sleep(0.01)
        assert proc.poll() is None, proc.communicate()
        assert any(helpers.progress_step(w) >= 100 for w in out.glob("work/*")), "no training"
        os.killpg(proc.pid, signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # ours
            proc.kill()
            proc.communicate()
    assert proc.returncode == 129, err
    assert err.strip().splitlines() == [
        "maxminq sweep: terminated by SIGHUP; finished runs are kept: the same command resumes"
    ], err
    assert workers and helpers.gone(workers), "the worker outlived the sweep"
    (work,) = out.glob("work/*")
    step = int(torch.load(work / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000
    with ResultsStore(out, create=False) as store:
        assert [r.status for r in store.records()] == ["pending"]


def test_under_nohup_a_hangup_does_not_stop_the_sweep(tmp_path) -> None:
    """With SIGHUP ignored, as ``nohup`` starts a command, the sweep does not take it over:
    SIGHUP to its group once its runs are under way changes nothing, every run finishes."""
    config = tmp_path / "theory.yaml"
    config.write_text(helpers.THEORY_CONFIG.format(kind="theory_mc", samples=5_000))
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    script = [sys.executable, str(Path(__file__).parent / "test_sweep_helpers.py")]

    def nohup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = subprocess.Popen([*script, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=nohup)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and helpers.started_runs(out) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None and helpers.started_runs(out) >= 1, proc.communicate()
        os.killpg(proc.pid, signal.SIGHUP)
        stdout, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # ours
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "8 runs, 0 already done, 8 done" in stdout


HUNG_UP_TERMINAL = """
import os, pty, sys
from maxminq.cli import _output_to_devnull_if_hung_up
master, slave = pty.openpty()
os.dup2(slave, 1); os.dup2(slave, 2)
os.close(master)  # the terminal is gone: its writes fail with EIO
try:
    os.write(2, b"x")
except OSError:
    pass
else:
    sys.exit(3)
_output_to_devnull_if_hung_up()
print("the stop's message", flush=True)
sys.stderr.write("and the bar\\n"); sys.stderr.flush()
"""


def test_after_a_hangup_the_stop_writes_to_devnull_not_to_the_dead_terminal() -> None:
    """Once the terminal hung up, every write to it fails (EIO), which would end the stop
    with an OSError before the workers had their grace: stdout and stderr then go to
    /dev/null (output that still works is kept: the test above reads the sweep's line)."""
    done = subprocess.run([sys.executable, "-c", HUNG_UP_TERMINAL], capture_output=True)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------------- 4. status
def _table() -> RunOutput:
    return RunOutput({"t": pd.DataFrame({"a": [1]})})


def test_status_names_the_worker_that_runs_a_run(tmp_path, capsys) -> None:
    """While a run runs (its sweep holding the folder, registered as pid 999999 on
    'sweephost'), ``maxminq status`` shows the worker process running it (here this one),
    which a user can watch or stop; before, the sweep's pid, which the first line already
    names."""
    out = tmp_path / "out"
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    seen: dict[str, str] = {}

    def execute(settings: dict, work_dir: Path, progress: bool) -> RunOutput:
        assert main(["status", str(out)]) == 0
        seen["status"] = capsys.readouterr().out
        return _table()

    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id, host="sweephost", pid=999_999)
        result = execute_run(execute, {}, str(store.work_dir(run.run_id)))
    assert result.error is None, result.error
    (line,) = [x for x in seen["status"].splitlines() if x.startswith("running")]
    assert line.endswith(f"({result.host}, worker pid {os.getpid()})"), line
    assert "999999" not in line


class _Backend:
    """A backend that runs each run at once in this process (what _drive needs of one),
    noting whether the run's folder still held a worker file when it was submitted."""

    workers = 1

    def __init__(self) -> None:
        self.stale: list[bool] = []

    def submit(self, run: RunSpec, work_dir: Path) -> str:
        self.stale.append((work_dir / WORKER_FILE).exists())
        return run.run_id

    def wait(self, handles: list, timeout: float) -> list:
        return [(h, _Result(_table(), None, "h", 1, 0.0)) for h in handles]


def test_the_worker_file_of_an_earlier_attempt_is_gone_before_the_next_starts(
    tmp_path,
) -> None:
    """A run's scratch folder is kept between attempts (its checkpoints): the worker file
    an earlier attempt's worker wrote there would name a dead process as this attempt's
    until its worker starts. The sweep removes it before it hands the run over."""
    out = tmp_path / "out"
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    backend = _Backend()
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.work_dir(run.run_id).mkdir(parents=True)
        (store.work_dir(run.run_id) / WORKER_FILE).write_text('{"host": "h", "pid": 424242}')
        summary = SweepSummary("c", "quick", out, 1)
        _drive(store, backend, [run], summary, False, True)  # type: ignore[arg-type]
        assert store.get(run.run_id).status == "done"
    assert backend.stale == [False]


# ----------------------------------------------------------------------------- 5. Ray
RAY_DEEP = HUNG.replace("name: hung", "name: on_ray")


@pytest.mark.parametrize("hangup", [False, True], ids=["sigterm", "sighup-to-group"])
def test_a_terminated_ray_sweep_lets_its_deep_run_checkpoint_its_step(
    tmp_path, hangup: bool
) -> None:
    """SIGTERM to a Ray sweep while its deep run trains (step 100 reported; its only
    periodic checkpoint would be that of step 4,000): the task is cancelled gently (Ray
    raises a KeyboardInterrupt through its SIGINT handler, which the training defers to the
    end of its step) and waited for, so the run's folder holds a checkpoint of a step >= 100;
    exit 143 (SIGHUP: 129) and the one line, the run queued again. Before, Ray was shut down at
    once and the run kept no step. The same for SIGHUP to the sweep's process group (a
    closed terminal), which Ray's own processes in the group died of at once before the
    Ray of a sweep was started with SIGHUP ignored."""
    config = tmp_path / "ray.yaml"
    config.write_text(RAY_DEEP)
    out = tmp_path / "out"
    argv = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    argv += ["--backend", "ray"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=hangup,  # its own group, as a terminal's foreground job
        preexec_fn=helpers.default_sighup,
    )
    ready = lambda: any(helpers.progress_step(w) >= 100 for w in out.glob("work/*"))  # noqa: E731
    sig = signal.SIGHUP if hangup else signal.SIGTERM
    status, err = helpers.terminate_when(proc, ready, timeout=180, group=hangup, sig=sig)
    lines = [line for line in err.strip().splitlines() if "INFO worker.py" not in line]
    assert status == (129 if hangup else 143), err
    assert lines[-1:] == [
        f"maxminq sweep: terminated{' by SIGHUP' if hangup else ''}; finished runs are kept: "
        "the same command resumes"
    ], err
    (work,) = out.glob("work/*")
    step = int(torch.load(work / "checkpoint" / "state.pt", weights_only=True)["step"])
    assert 100 <= step < 4000
    with ResultsStore(out, create=False) as store:
        assert [r.status for r in store.records()] == ["pending"]


# ----------------------------------------------------------------------------- 6. readers
KEEP_OPEN = """
import sys
from maxminq.experiments.store import ResultsStore
store = ResultsStore({out!r}, create=False)
print("open", flush=True)
sys.stdin.readline()
print(sorted(r.status for r in store.records()), store.read_tables("r-1")["t"]["a"].tolist(),
      flush=True)
store.close()
"""


def _as_nobody(argv: list[str]) -> list[str]:
    """``argv`` as a user who may not write what root wrote, when the tests run as root."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]


def _writable(base: Path, on: bool) -> None:
    for path in [base, *base.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if on else mode & ~(stat.S_IWUSR | stat.S_IWGRP))


def test_a_reader_that_may_not_write_the_folder_does_not_keep_its_sweep_out(tmp_path) -> None:
    """Another user keeps a store of this folder open (a notebook's load_results, a
    ResultsStore left open). Before, the folder's owner could not start a sweep there until
    that reader closed ('is being read by a process that may not write it'). Now the reader
    holds a copy made under the folder lock: the owner's sweep starts and writes at once,
    and the reader still reads whole, consistent data (its copy, and the verified tables)."""
    base = Path(tempfile.mkdtemp(prefix="maxminq-h3-"))  # not tmp_path: its parent is 0700
    base.chmod(0o755)
    out = base / "out"
    runs = [RunSpec(f"r-{k}", "toy_mdp", {"k": k}, "c") for k in (1, 2)]
    with ResultsStore(out, lock=True) as store:
        store.register(runs)
        for run in runs:
            store.mark_running(run.run_id)
            store.save_tables(run, {"t": pd.DataFrame({"a": [run.settings["k"]]})})
            store.mark_finished(run.run_id)
    assert not (out / "results.sqlite-wal").exists()  # closed cleanly: the immutable path
    _writable(base, False)
    reader = subprocess.Popen(
        _as_nobody([sys.executable, "-c", KEEP_OPEN.format(out=str(out))]),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=base, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    try:
        assert reader.stdout.readline() == "open\n", reader.stderr.read()
        _writable(base, True)  # the owner may write again
        with ResultsStore(out, lock=True) as store:  # before: StoreError, being read
            store.mark_pending("r-2", "again")
            store.mark_running("r-2")
        answer, errors = reader.communicate("\n", timeout=60)
        assert reader.returncode == 0, errors
        assert answer.strip() == "['done', 'done'] [1]"  # its copy: as when it opened
        with ResultsStore(out, create=False) as store:
            assert sorted(r.status for r in store.records()) == ["done", "running"]
    finally:
        if reader.poll() is None:  # ours
            reader.kill()
            reader.communicate()
        _writable(base, True)
        shutil.rmtree(base)


def test_a_sweep_waits_for_a_reader_copying_the_database(tmp_path) -> None:
    """A reader copying a large database holds the folder lock shared for longer than the
    second a sweep used to wait before it gave up ('is being read by ...'): the sweep now
    waits for such readers (up to READER_WAIT s), then starts. Here a reader's shared lock
    is released after 1.5 s."""
    import fcntl
    import threading

    out = tmp_path / "out"
    ResultsStore(out, lock=True).close()  # the folder and its lock file
    fh = open(out / ".sweep.lock")  # noqa: SIM115 - released by the timer
    fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    timer = threading.Timer(1.5, fh.close)
    timer.start()
    try:
        with ResultsStore(out, lock=True) as store:
            store.register([RunSpec("r-1", "toy_mdp", {"k": 1}, "c")])
        assert fh.closed  # it was held until the timer released it
    finally:
        timer.cancel()
        fh.close()
