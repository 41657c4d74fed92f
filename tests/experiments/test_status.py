"""``maxminq status``: what a sweep, experiment, theory or train-run folder holds, its
workers, checkpoints kept and queued runs."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from analysis_results import deep_results
from deep_runs import _run
from own_env_classes import J22_ENVS as MODULE
from own_env_classes import J22_ENVS_SOURCE
from sweep_configs import TOY_NAMED_SCALED as OWN
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.run_folder import folder_lock
from maxminq.deep.train import run_training
from maxminq.experiments.config import RunSpec, load_config
from maxminq.experiments.registry import RunOutput
from maxminq.experiments.runner import SweepSummary, _drive, _Result, execute_run
from maxminq.experiments.store import WORKER_FILE, ResultsStore, in_use_message, sweep_owner


def _table() -> RunOutput:
    return RunOutput({"t": pd.DataFrame({"a": [1]})})


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


FLAKY = """
name: flaky
kind: theory_mc_flaky
fixed: {seed: 11, samples: 500, chunks: 1, M: 2}
grid: {N: [1, 3]}
scales: {quick: {}}
"""


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


def _reaped() -> int:
    """The pid of a process of this host that has ended (and been reaped)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _queued_again(out: pathlib.Path) -> pathlib.Path:
    """A store with run t-1 queued again after an interrupt, its checkpoint in its scratch
    folder, which is returned."""
    run = RunSpec("t-1", "toy_mdp", {"x": 1}, "c")
    with ResultsStore(out) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.mark_pending(run.run_id, "interrupted (the sweep stopped)")
        work = store.work_dir(run.run_id)
    (work / "checkpoint").mkdir(parents=True)
    return work


@pytest.mark.parametrize(
    "leftover",
    [
        [".worker.json.k2j4h_8x.tmp"],  # the worker killed while writing its file
        ["config.json", "progress.json", ".progress.json.a1b2c3d4.tmp"],
        ["config.json", "checkpoint/.state.pt.zz9y8x7w.tmp"],  # killed in its first save
    ],
)
def test_status_does_not_call_a_folder_without_progress_kept(tmp_path, capsys, leftover) -> None:
    """Before: 'OUT/work/RUN is kept for its next attempt' for each of these folders, which
    hold nothing a run continues from (it starts over without a checkpoint)."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec("t-1", "toy_mdp", {"x": 1}, "c")])
        store.mark_running("t-1")
        store.mark_pending("t-1", "interrupted (the sweep stopped)")
        work = store.work_dir("t-1")
    for name in leftover:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("{}")
    assert main(["status", str(out)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[-1] == "pending  t-1 (attempts 1): interrupted (the sweep stopped)"


def test_status_still_names_a_folder_with_a_checkpoint_kept(tmp_path, capsys) -> None:
    """The other side: a checkpoint file (beside a killed write's temporary and the worker's
    file) is what the next attempt continues from."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec("t-1", "toy_mdp", {"x": 1}, "c")])
        store.mark_running("t-1")
        store.mark_pending("t-1", "interrupted (the sweep stopped)")
        work = store.work_dir("t-1")
    (work / "checkpoint").mkdir(parents=True)
    (work / "checkpoint" / "state.pt").write_bytes(b"state")
    (work / ".worker.json.k2j4h_8x.tmp").write_text("{}")
    (work / WORKER_FILE).write_text("{}")
    assert main(["status", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"pending  t-1 (attempts 1): interrupted (the sweep stopped); {work} is kept for its "
        "next attempt"
    )


def test_dry_run_counts_the_runs_that_continue_from_a_checkpoint(tmp_path, capsys) -> None:
    """Two runs left: one with a checkpoint in its scratch folder, one with only a killed
    write's temporary (which starts over)."""
    path = tmp_path / "own.yaml"
    path.write_text(OWN.replace("mu: [0.1]", "mu: [0.1, -0.1]").format(name="own", scale="quick"))
    config = load_config(path, "quick")
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(config.runs)
        first, second = (store.work_dir(r.run_id) for r in config.runs)
    (first / "checkpoint").mkdir(parents=True)
    (first / "checkpoint" / "state.pt").write_bytes(b"state")
    second.mkdir()
    (second / ".config.json.abcd1234.tmp").write_text("{")
    assert main(["sweep", str(path), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        f"own [quick]: 2 runs, 0 already done in {out}, 2 to run, 1 of them from a checkpoint "
        f"in {out / 'work'}: 24 episodes (dry run: nothing started)\n"
    )


def test_status_names_the_checkpoint_a_killed_sweeps_run_keeps(tmp_path, capsys) -> None:
    """A sweep SIGKILLed mid-run leaves its run 'running' (stale); one with a checkpoint,
    one without. Before: '(interrupted; will be re-run)' for both."""
    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register([RunSpec(f"t-{i}", "toy_mdp", {"x": i}, "c") for i in (1, 2)])
        store.mark_running("t-1")
        store.mark_running("t-2")
        work = store.work_dir("t-1")
    (work / "checkpoint").mkdir(parents=True)
    (work / "checkpoint" / "state.pt").write_bytes(b"state")
    (store.work_dir("t-2")).mkdir()
    (store.work_dir("t-2") / "progress.json").write_text("{}")
    assert main(["status", str(out)]) == 0
    stale = [line for line in capsys.readouterr().out.splitlines() if line.startswith("stale")]
    assert [line.split(" (", 1)[1] for line in stale] == [
        f"interrupted; will be re-run; {work} is kept for its next attempt)",
        "interrupted; will be re-run)",
    ]


def test_status_of_an_experiment_folder_names_the_command(tmp_path, capsys) -> None:
    out = tmp_path / "toy"
    out.mkdir()  # what 'maxminq experiment toy-mdp' leaves (its settings.json names it)
    (out / "settings.json").write_text('{"experiment": "toy-mdp", "runs": 300}')
    (out / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    assert main(["status", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"maxminq status: error: DIR: {out} holds the output of 'maxminq experiment toy-mdp', "
        "whose figures are drawn there already; status reads the folder of 'maxminq sweep' or "
        "'maxminq reproduce' ("
    )
    assert err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["settings.json", "toy_mdp.csv"]


def test_the_busy_folder_message_quotes_its_status_command_for_the_shell(tmp_path) -> None:
    """'maxminq status results/my runs shows its progress': copied, the shell read two
    folders; the failed-sweep hint quotes its folder, the busy-folder line now too."""
    import pytest

    from maxminq.experiments.store import ResultsStore, StoreError, refuse_if_in_use

    out = tmp_path / "my runs"
    with ResultsStore(out, lock=True), pytest.raises(StoreError) as err:
        refuse_if_in_use(out)
    assert f"(maxminq status '{out}' shows its progress)" in str(err.value)


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
        # a pid beyond any (a damaged or edited file): the same; before, a traceback
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


def test_status_names_what_reads_a_theory_folder(tmp_path, capsys) -> None:
    """'maxminq status' on the folder of 'maxminq theory' said 'no results.sqlite here; is
    this a sweep output folder?', naming no command that reads it."""
    (tmp_path / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n")
    assert main(["status", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq status: error: DIR: {tmp_path} holds the tables of 'maxminq theory', no "
        f"sweep's runs; 'maxminq report {tmp_path}' reads them"
    ]


def test_status_config_guesses_a_name_typed_in_another_case(tmp_path, capsys) -> None:
    """'--config deep_catcher' for deep_Catcher-v0: the list of names, and no guess."""
    from analysis_results import write_store

    write_store(tmp_path, deep_results(seeds=1, lrs=(1e-3,)))
    assert main(["status", str(tmp_path), "--config", "deep_catcher"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq status: error: --config: no config 'deep_catcher' here (did you mean "
        "deep_Catcher-v0?); known: deep_Catcher-v0, deep_Pixelcopter-v0"
    ]
    assert main(["status", str(tmp_path), "--config", "zzz"]) == 2
    assert "'zzz' here; known: deep_Catcher-v0" in capsys.readouterr().err


def _train_run_line(capsys, argv: list[str]) -> str:
    """The one stdout line of 'maxminq status' on a 'maxminq train' run (exit 0, no error:
    it was an error, exit 2, though train's own messages send the user here)."""
    assert main(argv) == 0
    out = capsys.readouterr()
    assert out.err == ""
    lines = out.out.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_status_on_a_train_run_names_the_commands_that_read_it(tmp_path, capsys) -> None:
    """It said 'no results.sqlite here; is this a sweep output folder?', naming no command
    (report and a folder of runs already named them)."""
    run = _run(tmp_path / "run")
    assert _train_run_line(capsys, ["status", str(run)]) == (
        f"{run}: one 'maxminq train' run, finished; 'maxminq plot {run}' and 'maxminq compare "
        f"{run}' read it"
    )


def test_status_while_the_sweep_removes_a_queued_runs_scratch(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    work = _queued_again(out)
    listdir = pathlib.Path.iterdir

    def iterdir(self: pathlib.Path):  # the run ended: its scratch goes as status looks
        if self == work:
            shutil.rmtree(work)
        return listdir(self)

    monkeypatch.setattr(pathlib.Path, "iterdir", iterdir)
    assert main(["status", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.splitlines()[3:] == [
        "pending  t-1 (attempts 1): interrupted (the sweep stopped)"
    ]


# A 'maxminq train' run folder, of a user's own environment, stopped or still training.


@pytest.fixture(scope="module")
def own_module(tmp_path_factory):
    """A user's module of environments (own_env_classes.J22_ENVS_SOURCE), imported."""
    with user_module(tmp_path_factory.mktemp("own_envs"), MODULE, J22_ENVS_SOURCE) as name:
        yield importlib.import_module(name)


@pytest.fixture(scope="module")
def stopped_run(own_module, tmp_path_factory):
    """A run stopped after 40 of 200 steps, as a kill leaves it (a checkpoint, progress)."""
    out = tmp_path_factory.mktemp("runs") / "line"
    config = TrainConfig(
        env_id=f"{MODULE}:J22Line-v0",
        agent="dqn",
        steps=200,
        seeds=[0],
        learning_starts=20,
        buffer_size=100,
        batch_size=8,
        eval_episodes=1,
        checkpoint_every=40,
    )
    assert run_training(config, out, progress=False, stop_after=40) == {}
    return out


def test_status_on_a_stopped_train_run_says_how_far_and_how_to_continue(
    stopped_run, capsys
) -> None:
    """It said 'no results.sqlite here; is this a sweep output folder?'."""
    assert json.loads((stopped_run / "progress.json").read_text())["step"] == 40
    line = _train_run_line(capsys, ["status", str(stopped_run)])
    head, returns = line.split(" (last 100 episodes)); ")
    trained = json.loads((stopped_run / "progress.json").read_text())["return_avg100"]
    # how far, and its return so far; no speed or time left for a run that is not training
    assert head == (
        f"{stopped_run}: one 'maxminq train' run, not training (stopped or killed, last at "
        f"step 40 of 200 (20%), training return {trained:.3g}"
    )
    assert returns == (
        "the same 'maxminq train' command with --resume continues it from its checkpoint; "
        f"'maxminq plot {stopped_run}' and 'maxminq compare {stopped_run}' read it once it "
        "has finished"
    )


def test_status_on_a_train_run_in_progress_says_it_is_training(stopped_run, capsys) -> None:
    with folder_lock(stopped_run):  # what a live 'maxminq train' holds on its folder
        line = _train_run_line(capsys, ["status", str(stopped_run)])
    # how far, its speed and the time left (from progress.json), then what reads it
    assert "run, training now, at step 40 of 200 (20%), " in line
    assert " steps/s, about " in line and " left as of " in line
    assert "--resume" not in line
    # the probe released its lock: a run can train there again
    fd = os.open(stopped_run, os.O_RDONLY)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_status_on_a_run_stopped_before_its_first_progress_says_so(stopped_run, tmp_path, capsys):
    """Stopped in its first steps (config.json only: no checkpoint, no progress.json yet)."""
    early = tmp_path / "early"
    early.mkdir()
    (early / "config.json").write_text((stopped_run / "config.json").read_text())
    line = _train_run_line(capsys, ["status", str(early)])
    assert line.endswith(
        "run, not training (stopped or killed, early, before its first progress.json); the "
        "same 'maxminq train' command with --resume trains it (it has no checkpoint to "
        "continue from); "
        f"'maxminq plot {early}' and 'maxminq compare {early}' read it once it has finished"
    )
