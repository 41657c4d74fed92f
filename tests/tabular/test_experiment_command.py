"""``maxminq experiment toy-mdp`` / ``experiment mountain-car`` (and ``maxminq theory``) as
commands: absurd option values, an --out folder that cannot be written or where an output
goes, and an option of the other experiment end in one line and exit status 2 before any
work; a failed write (a full disk) names the file and leaves no outputs of another setting
beside the new ones; a dying worker or a G failing during the run is one line, a killed
command takes its workers with it; the progress bar counts runs, the summary counts in the
singular, and no variance reads '-0'. (Ordinary bad input, Ctrl-C and the batch independence
of runs are tested in project/test_cli_bad_input.py, tabular/test_toy_mdp.py,
linear/test_mountain_car.py and theory/test_theory.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import sweep_kinds as helpers
from helpers import REPO

from maxminq.cli import main
from maxminq.commands import experiment

HUGE = "99999999999999999999"  # above int64


TOY = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1",
       "--algorithms", "q_learning", "--workers", "1", "--no-progress"]  # fmt: skip


MC = ["experiment", "mountain-car", "--runs", "1", "--episodes", "1", "--max-steps", "30",
      "--sigma2", "10", "--step-sizes", "0.1", "--algorithms", "q_learning", "--workers", "1",
      "--no-progress"]  # fmt: skip


THEORY = ["theory", "--m-max", "4", "--n-max", "3", "--samples", "20",
          "--variance-samples", "20", "--no-progress"]  # fmt: skip


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """stderr, which must be exactly one line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def _run_with_file_limit(
    argv: list[str], limit: int, warm: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``maxminq ARGV`` in a subprocess that may write files of at most ``limit`` bytes
    (RLIMIT_FSIZE: a write beyond it fails with EFBIG, as on a full disk).

    With ``warm``, that process first runs ``maxminq WARM`` without the limit (its output
    hidden; it must succeed): whatever the command writes on first use besides its outputs
    is then in place. numba's on-disk cache is such a write, of files above 20 kB: a kernel
    the pytest process had compiled but whose entry was not on disk (the sources edited
    since pytest imported them, or numba's index rewritten by a concurrent xdist worker, a
    read-modify-write) was compiled again under the limit, and its cache file failed with
    'File too large' before the command wrote anything."""
    code = (
        "import contextlib, io, resource, sys\n"
        "from maxminq.cli import main\n"
        f"warm = {warm!r}\n"
        "if warm is not None:\n"
        "    hidden = io.StringIO()\n"
        "    with contextlib.redirect_stdout(hidden), contextlib.redirect_stderr(hidden):\n"
        "        status = main(warm)\n"
        "    if status != 0:\n"
        "        sys.exit(f'warm-up run failed ({status}): {hidden.getvalue()}')\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        f"sys.exit(main({argv!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)


# The first output each command writes (small), then the rest; a figure is > 20 kB.
EARLIER = {
    "toy": (TOY, "toy_mdp.csv", ["--mu", "-0.2"]),
    "mc": (MC, "mountain_car.csv", ["--sigma2", "1"]),
    "theory": (THEORY, "bias.csv", ["--seed", "1"]),
}


def _die(task: dict[str, int]) -> None:
    """A task whose worker process dies at once (as one the OOM killer takes)."""
    os._exit(9)


TRAIN = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "50", "--no-progress"]


SWEEP = ["sweep", str(REPO / "configs" / "toy_mdp.yaml"),
         "--no-progress"]  # fmt: skip


# Run as a script: 'maxminq experiment ARGS', killed (SIGKILL, as kill -9) while the file
# named by the first argument is written: its temporary is whole, not yet renamed into place.
KILLED_WHILE_WRITING = """
import os, signal, sys
from maxminq.experiments import store

atomic_write = store.atomic_write

def killed_while_writing(path, write):
    if path.name == sys.argv[1]:
        atomic_write(path, lambda tmp: (write(tmp), os.kill(os.getpid(), signal.SIGKILL)))
    return atomic_write(path, write)

store.atomic_write = killed_while_writing
from maxminq.cli import main
sys.exit(main(sys.argv[2:]))
"""


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


@pytest.mark.parametrize(
    ("experiment", "taken", "args"),
    [
        ("toy-mdp", "toy_mdp.csv", ["--runs", "2", "--episodes", "2"]),
        ("toy-mdp", "fig2_toy_mdp_distance.png", ["--runs", "2", "--episodes", "2"]),
        ("mountain-car", "mountain_car_step_sizes.csv",
         ["--runs", "1", "--episodes", "1", "--sigma2", "0", "--step-sizes", "0.02"]),
    ],
)  # fmt: skip
def test_experiment_refuses_a_folder_where_an_output_goes(
    tmp_path: Path, experiment: str, taken: str, args: list[str]
) -> None:
    """A folder named like one of the outputs in --out was found only once the simulation had
    run (minutes at full scale): 'error: OUT/NAME: Is a directory', exit status 1, and for a
    figure or the step-size table the new CSV already written beside it. Now refused before
    any work, as ``maxminq theory`` does: one line naming --out, exit status 2, nothing
    written."""
    out = tmp_path / "out"
    (out / taken).mkdir(parents=True)
    cli = Path(sys.executable).with_name("maxminq")
    proc = subprocess.run(
        [str(cli), "experiment", experiment, "--out", str(out), "--workers", "1",
         "--algorithms", "q_learning", "--no-progress", *args],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "--out" in proc.stderr and taken in proc.stderr
    assert "simulated" not in proc.stdout  # refused before the work
    assert sorted(p.name for p in out.iterdir()) == [taken]  # nothing else written


@pytest.mark.parametrize("experiment", ["toy-mdp", "mountain-car"])
def test_experiment_update_members_no_algorithm_can_use(tmp_path: Path, experiment: str) -> None:
    """--update-members 2 with only one-table algorithms (here Double Q) was ignored without a
    word, while settings.json recorded update_members 2 (the Python API and ``maxminq train
    --agent dqn --update-members 2`` refuse it). Now a one-line error naming the option."""
    out = tmp_path / "out"
    cli = Path(sys.executable).with_name("maxminq")
    proc = subprocess.run(
        [str(cli), "experiment", experiment, "--out", str(out), "--runs", "1", "--episodes", "1",
         "--algorithms", "double_q", "q_learning", "--update-members", "2", "--workers", "1",
         "--no-progress"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "--update-members" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "base, extra, option",
    [
        (TOY, ["--runs", HUGE], "--runs"),
        (TOY, ["--runs", "100000000000"], "--runs"),
        (TOY, ["--episodes", "9223372036854775807"], "--episodes"),
        (TOY, ["--batch-size", "10000000000"], "--batch-size"),
        (TOY, ["--buffer-size", HUGE], "--buffer-size"),
        (TOY, ["--update-every", HUGE], "--update-every"),
        (TOY, ["--algorithms", "maxmin:100000000000"], "--algorithms"),
        (MC, ["--max-steps", HUGE], "--max-steps"),
        (MC, ["--episodes", "99999999999999"], "--episodes"),
        (MC, ["--buffer-size", "10000000000"], "--buffer-size"),
        (MC, ["--algorithms", f"maxmin:{HUGE}"], "--algorithms"),
        (THEORY, ["--samples", HUGE], "--samples"),
        (THEORY, ["--variance-samples", HUGE], "--variance-samples"),
    ],
)
def test_absurdly_large_values_are_one_line_before_the_work(
    base: list[str], extra: list[str], option: str, tmp_path: Path, capsys
) -> None:
    """Values beyond int64 or beyond any machine's memory were a numba or numpy traceback
    (exit status 1) once the work had started; now one line naming the option, exit 2,
    and no output folder."""
    out = tmp_path / "out"
    assert main([*base, *extra, "--out", str(out)]) == 2
    line = _one_line(capsys)
    assert line.startswith(f"maxminq {base[0]}: error: {option}: "), line
    assert not out.exists()


@pytest.mark.parametrize("name", EARLIER)
def test_a_failed_write_leaves_no_outputs_of_the_earlier_setting(name: str, tmp_path: Path) -> None:
    """Run once, then again with another setting into the same folder on a disk that fills
    up after the first (small) file. The second run fails in one line naming the file it
    could not write (it said only 'File too large'), exit 1; and the folder must not hold the
    new table beside figures and tables of the earlier setting (mountain_car_step_sizes.csv
    of another sigma^2, the earlier seed's operator_bias.csv), which looked like one result."""
    base, first, other = EARLIER[name]
    out = tmp_path / "out"
    argv = [*base, "--out", str(out)]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # warm: the same setting into another folder first, without the limit, so that only the
    # outputs meet it (not numba's cache of a kernel compiled anew in that process)
    warm = [*base, "--out", str(tmp_path / "warm"), *other]
    proc = _run_with_file_limit([*argv, *other], 20_000, warm=warm)
    assert proc.returncode == 1, proc.stderr
    command = base[0]
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"maxminq {command}: error: {out}/"), proc.stderr
    assert "Traceback" not in proc.stderr
    left = {p.name: p.read_bytes() for p in out.iterdir()}
    assert left[first] != before[first]  # the new table is in place
    stale = [n for n in left if n in before and left[n] == before[n]]
    assert stale == [], f"outputs of the earlier setting left beside the new ones: {stale}"
    assert not [n for n in left if n.endswith(".tmp")]


def test_a_noise_variance_of_minus_zero_is_written_as_zero(tmp_path: Path) -> None:
    """'--sigma2 -0' passes the check (it equals 0) and was written as sigma2 '-0' in both
    CSVs and settings.json: a negative variance to whoever reads them."""
    out = tmp_path / "out"
    argv = [*MC, "--sigma2", "-0", "--out", str(out)]
    assert main(argv) == 0
    for name in ("mountain_car.csv", "mountain_car_step_sizes.csv"):
        frame = pd.read_csv(out / name, dtype={"sigma2": str})
        assert set(frame["sigma2"]) <= {"0", "0.0"}, (name, set(frame["sigma2"]))
    assert json.loads((out / "settings.json").read_text())["sigma2"] == [0.0]
    assert "-0" not in (out / "settings.json").read_text()


def test_a_worker_that_dies_is_one_error_not_a_traceback() -> None:
    """A worker killed (the OOM killer, kill -9) raised BrokenProcessPool through the
    command: a traceback. Now an OSError, which the command line prints as one line with
    exit status 1 (the work failed)."""
    with pytest.raises(OSError, match=r"^a worker process died .*nothing was written"):
        experiment._run_tasks(_die, [{"runs": 1}] * 3, 2, False, "test")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")
def test_workers_stop_when_the_command_is_killed(tmp_path: Path) -> None:
    """kill -9 of the command left its workers running their (minutes-long) tasks on the
    cores, unseen, until each finished. They now die with it (checked by polling /proc, with
    a generous bound)."""
    argv = [sys.executable, "-m", "maxminq.cli", *MC[:2], "--runs", "200", "--episodes",
            "1000", "--max-steps", "5000", "--sigma2", "1", "10", "--step-sizes", "0.1",
            "--algorithms", "maxmin:2", "--workers", "2", "--no-progress",
            "--out", str(tmp_path / "out")]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        workers = helpers.wait_for_workers(proc, within=60.0, poll=0.1)
        assert len(workers) == 2, "the workers did not start"
        time.sleep(0.5)  # into their tasks (any time would do: the check is their end)
        proc.kill()
        proc.wait()
        assert helpers.gone(workers, within=15.0), "workers outlived the killed command"
    finally:
        for w in workers:  # ours: started by this test
            if helpers.alive(w):
                os.kill(w, signal.SIGKILL)


# The probe lives in cli.check_out_folder, so every command with an --out folder has it.
@pytest.mark.parametrize(
    "base", [TOY, THEORY, TRAIN, SWEEP], ids=["experiment", "theory", "train", "sweep"]
)
def test_an_existing_folder_that_cannot_be_written_is_refused_before_the_work(
    base: list[str], tmp_path: Path
) -> None:
    """--out was checked by creating it, so an existing folder where nothing can be written
    (read-only, or a full disk: here RLIMIT_FSIZE 0) passed, and the work was lost when the
    first file failed (naming a temporary file). Now refused first: one line naming --out,
    exit 2, nothing simulated."""
    out = tmp_path / "out"
    out.mkdir()
    proc = _run_with_file_limit([*base, "--out", str(out)], 0)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"maxminq {base[0]}: error: --out: cannot write in {out} ")
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stdout == ""  # no "simulated in ..." line: refused before the work
    assert list(out.iterdir()) == []


def test_the_progress_bar_counts_runs_not_tasks_as_settings(tmp_path: Path, capsys) -> None:
    """450 runs of one Mountain Car setting are three tasks (at most 200 runs each); the bar
    showed '3/3 setting'. It counts runs now."""
    argv = [*MC, "--runs", "450", "--max-steps", "5", "--out", str(tmp_path / "out")]
    argv.remove("--no-progress")
    assert main(argv) == 0
    bar = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "450/450" in bar and "run/s" in bar, bar


def test_a_gamma_so_small_that_left_is_worth_zero_is_refused(capsys) -> None:
    """gamma = 5e-324 passes 'gamma > 0', but gamma * mu underflows to 0: Left and Right tie
    as with gamma = 0, and the distance would be measured against Left. One line, exit 2."""
    from maxminq.cli import main

    argv = ["experiment", "toy-mdp", "--runs", "1", "--episodes", "2", "--algorithms",
            "q_learning", "--mu", "0.1", "--no-progress"]  # fmt: skip
    assert main([*argv, "--gamma", "5e-324"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq experiment: error: --gamma: gamma * mu")


@pytest.mark.parametrize(
    ("base", "name"),
    [(TOY, "toy_mdp.csv"), (TOY, "fig2_toy_mdp_distance.png"), (MC, "mountain_car.csv")],
)
def test_a_killed_experiments_temporary_is_removed_by_the_next_run_and_nothing_else(
    tmp_path: Path, base: list[str], name: str
) -> None:
    """kill -9 while a table or figure was written left its hidden temporary
    (.NAME.XXXXXXXX.tmp, as large as a full run's CSV) in --out for good: the next run of
    the same command replaced the outputs but not that. It now removes the temporaries of
    its own outputs that a killed run left; files it does not own stay, also hidden
    temporaries of other names and files that only look like its own."""
    out = tmp_path / "out"
    argv = [*base, "--out", str(out)]
    script = tmp_path / "killed.py"
    script.write_text(KILLED_WHILE_WRITING)
    proc = subprocess.run([sys.executable, str(script), name, *argv], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    stale = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].startswith(f".{name}."), stale
    others = [f".{name}.backup-1.tmp", f".{name}.tmp", ".notes.csv.abcd1234.tmp", "notes.tmp"]
    for other in others:  # not written by atomic_write (or by it for another file)
        (out / other).write_text("the user's")
    assert main(argv) == 0
    left = sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp"))
    assert left == sorted(others)
    assert all((out / other).read_text() == "the user's" for other in others)


def test_toy_mdp_says_how_large_its_csv_will_be(tmp_path, monkeypatch, capsys) -> None:
    """'maxminq experiment toy-mdp' at its defaults (the paper's grid, to reproduce Fig. 2)
    wrote a 2.7 GB toy_mdp.csv (60,000,000 rows) without a word; now a CSV of 1 GB or more is
    announced on stderr before the work, with its rows and size and how to shrink it. The
    threshold is lowered here so that a tiny run crosses it (1,200 runs x 1 episode x one
    setting = 1,200 rows); the summary line prints its counts with thousands separators."""
    from maxminq.commands import experiment

    argv = ["experiment", "toy-mdp", "--runs", "1200", "--episodes", "1", "--mu", "0.1"]
    argv += ["--algorithms", "q_learning", "--workers", "1", "--no-progress"]
    monkeypatch.setattr(experiment, "CSV_NOTE_BYTES", 1200 * 45)
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "toy MDP: note: toy_mdp.csv will hold 1,200 rows (one per run and episode), about "
        "0.0 GB on disk; fewer --runs or --episodes (--quick: 300 x 300) make it smaller\n"
    )
    assert "x 1,200 runs x 1 episode simulated in" in captured.out
    assert len((tmp_path / "a" / "toy_mdp.csv").read_text().splitlines()) == 1 + 1200


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["experiment", "toy-mdp", "--quick", "--sigma2", "1"],
            "--sigma2 (an option of 'maxminq experiment mountain-car' only) 1",
        ),
        (
            ["experiment", "mountain-car", "--quick", "--mu", "0.1", "--gama", "1"],
            "--mu (an option of 'maxminq experiment toy-mdp' only) 0.1 --gama (did you mean "
            "--gamma?) 1",
        ),
    ],
)
def test_an_option_of_the_other_experiment_names_its_command(tmp_path, capsys, argv, said) -> None:
    """Before: '--sigma2 (did you mean --sigma2?)', the option itself as the fix."""
    with pytest.raises(SystemExit) as info:  # argparse's exit
        main([*argv, "--out", str(tmp_path / "o")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == f"maxminq experiment: error: unrecognized arguments: {said}\n"
    assert not (tmp_path / "o").exists()


def test_experiment_warns_of_more_workers_than_cores(tmp_path, monkeypatch, capsys) -> None:
    """One core here (os.cpu_count patched), two settings, --workers 2: warned once every
    value is checked, as the work starts (here stopped there: the work is not the test's)."""
    from maxminq.commands import experiment
    from maxminq.errors import UsageError

    def stop(*args: object) -> None:
        raise UsageError("stopped before the work")

    monkeypatch.setattr("os.cpu_count", lambda: 1)
    monkeypatch.setattr(experiment, "_run_tasks", stop)
    for name, only in (("toy-mdp", ["--mu", "0.1"]), ("mountain-car", ["--sigma2", "0"])):
        argv = ["experiment", name, "--quick", *only, "--algorithms", "q_learning", "double_q",
                "--workers", "2", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
        assert main(argv) == 2
        assert capsys.readouterr().err.splitlines() == [
            "maxminq experiment: warning: --workers 2 is more than this machine's 1 cores: "
            "each worker is a process with its own memory, and they slow each other down",
            "maxminq experiment: error: stopped before the work",
        ]
    # one setting runs in this process: no warning, whatever --workers says
    argv = ["experiment", "toy-mdp", "--quick", "--mu", "0.1", "--algorithms", "q_learning",
            "--workers", "2", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == "maxminq experiment: error: stopped before the work\n"


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


@pytest.mark.parametrize(
    ("argv", "example"),
    [
        # 'toy-mdp' is the folder: the sub-command is mountain-car (was 'experiment toy-mdp
        # --out mountain-car', which writes a toy MDP run into a folder named mountain-car)
        (["--out", "toy-mdp", "mountain-car"], "mountain-car --out toy-mdp"),
        (["--quick", "--out", "toy-mdp", "mountain-car", "--runs", "3"],
         "mountain-car --quick --out toy-mdp --runs 3"),
        (["--out=toy-mdp", "mountain-car"], "mountain-car --out=toy-mdp"),
        # a variadic option's values end nowhere before the sub-command: as before
        (["--sigma2", "1", "10", "mountain-car"], "mountain-car --sigma2 1 10"),
    ],
)  # fmt: skip
def test_the_example_puts_the_sub_command_first_not_an_options_value(
    argv: list[str], example: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", *argv]) == 2
    out = capsys.readouterr()
    option = argv[0].partition("=")[0]
    assert out.err.splitlines() == [
        f"maxminq experiment: error: {option}: put the sub-command first, e.g. maxminq "
        f"experiment {example}"
    ]
    assert out.out == "" and list(tmp_path.iterdir()) == []


def test_the_toy_summary_counts_one_of_a_kind_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["experiment", "toy-mdp", "--algorithms", "maxmin:2", "--mu", "0.1", "--runs", "1",
            "--episodes", "1", "--workers", "1", "--no-progress",
            "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("toy MDP: 1 setting (maxmin:2) x 1 run x 1 episode simulated"), first
