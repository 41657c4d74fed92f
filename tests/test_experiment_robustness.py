"""Adversarial checks of ``maxminq experiment toy-mdp``, ``experiment mountain-car`` and
``maxminq theory``: absurd option values and an --out folder that cannot be written end in one
line and exit status 2 before any work; a failed write (a full disk) names the file and leaves
no outputs of another setting beside the new ones; a dying worker is one line, a killed
command takes its workers with it; the progress bar counts runs, and no variance reads
'-0'. (Ordinary bad input, Ctrl-C and the batch independence of runs are tested in
test_cli_bad_input.py, test_toy_mdp.py, test_mountain_car.py and test_theory.py.)"""

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
import test_sweep_helpers as helpers

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


def _run_with_file_limit(argv: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """``maxminq ARGV`` in a subprocess that may write files of at most ``limit`` bytes
    (RLIMIT_FSIZE: a write beyond it fails with EFBIG, as on a full disk)."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from maxminq.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


# The first output each command writes (small), then the rest; a figure is > 20 kB.
EARLIER = {
    "toy": (TOY, "toy_mdp.csv", ["--mu", "-0.2"]),
    "mc": (MC, "mountain_car.csv", ["--sigma2", "1"]),
    "theory": (THEORY, "bias.csv", ["--seed", "1"]),
}


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
    proc = _run_with_file_limit([*argv, *other], 20_000)
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


def _die(task: dict[str, int]) -> None:
    """A task whose worker process dies at once (as one the OOM killer takes)."""
    os._exit(9)


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


TRAIN = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "50", "--no-progress"]
SWEEP = ["sweep", str(Path(__file__).resolve().parents[1] / "configs" / "toy_mdp.yaml"),
         "--no-progress"]  # fmt: skip


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
