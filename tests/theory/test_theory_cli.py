"""``maxminq theory`` as a command: what it leaves in --out after a killed run or a stop
before its first file, its progress bar and help, and its behaviour on edge inputs (the
numbers themselves are tested in theory/test_theory.py)."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, rerun_while_late
from killed_writes import decoys, killed_write

from maxminq.cli import main
from maxminq.commands.theory import OUTPUTS

TINY = ["--m-max", "4", "--n-max", "3", "--samples", "100", "--variance-samples", "1000"]


TINY += ["--no-progress"]


ROOT = REPO


# bias.csv of 1000 x 300 rows takes about 2 s to write here: the window for the signal. The
# Monte Carlo is kept tiny (one simulated M, three samples, operator M = 1).
SLOW_WRITE = ["--m-max", "1000", "--n-max", "300", "--samples", "3", "--variance-samples", "3",
              "--mc-m", "1", "--operator-m", "1", "--no-progress"]  # fmt: skip


def stop_theory_while_writing(out: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """:func:`stop_theory_once`, run again (helpers.rerun_while_late: at most 3 runs) while
    the signal provably came after the window: ``bias.csv`` was in place, or the command
    had finished (its last line printed). A late run's files are undone: the folders it
    created, or the files it wrote in the user's folder (kept, empty). Runs where the
    signal came in time are returned and checked as they are."""
    new_folders = [p for p in (out, *out.parents) if not p.exists()]
    user_folder = out.exists()

    def undo() -> None:
        if user_folder:
            for path in out.iterdir():
                path.unlink()
        else:
            shutil.rmtree(new_folders[-1])

    return rerun_while_late(
        lambda: stop_theory_once(out, signum),
        lambda done: (out / "bias.csv").exists() or "choose_n:" in done.stdout,
        undo,
    )


def stop_theory_once(out: Path, signum: int) -> subprocess.CompletedProcess[str]:
    """Start ``maxminq theory --out OUT``, send ``signum`` as soon as its first write has
    begun (:func:`first_write_begun`), and wait for the command to end."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "maxminq", "theory", "--out", str(out), *SLOW_WRITE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 60
    while not first_write_begun(out):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.002)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def first_write_begun(out: Path) -> bool:
    """Whether ``bias.csv``'s temporary is in OUT (or ``bias.csv`` itself: the signal then
    comes late). Not OUT alone: the check of --out before the Monte Carlo creates OUT and
    its new parents for a moment and removes them again; a signal then (seen under load)
    lands in that check, not in the write this file tests."""
    try:
        return any(p.name == "bias.csv" or p.name.startswith(".bias.csv.") for p in out.iterdir())
    except FileNotFoundError:
        return False


def theory_note(tmp_path: Path, *argv: str) -> str:
    """The first stderr line of ``maxminq theory ARGV`` (the note, printed before the work;
    the command is stopped right after it)."""
    out = tmp_path / "note"
    proc = subprocess.Popen(
        [sys.executable, "-m", "maxminq", "theory", "--out", str(out), *argv, "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline().strip()
    finally:
        proc.kill()
        proc.wait()
    assert not out.exists()
    return line


def test_theory_removes_the_temporaries_of_a_killed_run(tmp_path: Path, capsys) -> None:
    """A theory run killed (kill -9) while writing its tables or figures left hidden
    .NAME.XXXXXXXX.tmp files in --out for good, one more per kill; the next run removes
    those of its own outputs only."""
    out = tmp_path / "t"
    out.mkdir()
    left = [killed_write(out / "bias.csv"), killed_write(out / "operator_bias.png")]
    keep = decoys(out, "bias.csv")
    assert main(["theory", "--out", str(out), *TINY]) == 0
    assert not any(p.exists() for p in left)
    assert all(p.read_text() == "keep" for p in keep)
    hidden = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
    assert hidden == sorted(p.name for p in keep)
    assert (out / "bias.csv").read_text().startswith("M,N,")


def test_theory_killed_by_sigkill_as_a_process_then_rerun(tmp_path: Path, capsys) -> None:
    """The same for real: the command itself is killed with SIGKILL as soon as its first
    output is in place (mid-writes), then rerun; no temporary of its outputs is left."""
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "maxminq", "theory", "--out", str(out), *TINY]

    def kill_after_the_first_write() -> subprocess.Popen:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not (out / "bias.csv").exists() and proc.poll() is None:
            time.sleep(0.002)  # bias.csv appears once renamed into place, the first write
        os.kill(proc.pid, 9)
        proc.wait()
        return proc

    # On a loaded machine this process may not run for seconds after seeing bias.csv: the
    # command then made its last write (or finished) before the kill, a run that tests
    # nothing here; it is removed and run again (at most 3 runs).
    proc = rerun_while_late(
        kill_after_the_first_write,
        lambda proc: proc.returncode == 0 or (out / "operator_bias.png").exists(),
        lambda: shutil.rmtree(out),
    )
    assert proc.returncode == -9 and (out / "bias.csv").is_file()
    assert not (out / "operator_bias.png").exists()  # killed before its last write
    left = killed_write(out / "variance_ratio.png")  # what a kill one write later leaves
    # the rerun in this process (the killed command above is the process under test)
    assert main(["theory", "--out", str(out), *TINY]) == 0, capsys.readouterr().err
    assert not left.exists()
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_an_output_that_is_a_folder_is_refused_before_the_monte_carlo(tmp_path, capsys):
    """A folder named like one of the outputs (operator_bias.png/) was found only after the
    whole Monte Carlo (minutes at the default sizes), with exit status 1 and bias.csv
    already replaced; it is a usage error before any work, and --out is left as it was."""
    for name in ("bias.csv", "variance_ratio.png"):
        out = tmp_path / name.replace(".", "_")
        (out / name).mkdir(parents=True)
        (out / "variance.csv").write_text("an earlier run's\n")
        assert main(["theory", "--out", str(out), *TINY]) == 2
        err = capsys.readouterr().err.strip()
        assert err == (
            f"maxminq theory: error: --out: {name} in {out} is a folder, where theory "
            "writes that file"
        )
        assert sorted(p.name for p in out.iterdir()) == sorted([name, "variance.csv"])
        assert (out / "variance.csv").read_text() == "an earlier run's\n"


def test_two_samples_are_refused_and_three_give_standard_errors(tmp_path, capsys) -> None:
    """Of 2 samples every variance's standard error came out exactly 0 (the variance ratio
    '5.3 +- 0' for N = 1, whose ratio is 1), printed as if exact; 2 is refused, and from 3
    samples on every such standard error is positive."""
    small = ["--m-max", "2", "--n-max", "2", "--no-progress"]
    for option in ("--samples", "--variance-samples"):
        out = tmp_path / option
        assert main(["theory", "--out", str(out), *small, option, "2"]) == 2
        err = capsys.readouterr().err.strip()
        assert (
            err == f"maxminq theory: error: {option}: expected an integer in 3..{2**63 - 1}, got 2"
        )
        assert not out.exists()
    out = tmp_path / "three"
    assert (
        main(["theory", "--out", str(out), *small, "--samples", "3", "--variance-samples", "3"])
        == 0
    )
    import pandas as pd

    bias = pd.read_csv(out / "bias.csv").dropna(subset=["mc_bias"])
    variance = pd.read_csv(out / "variance.csv")
    operators = pd.read_csv(out / "operator_bias.csv")
    assert len(bias) == 4 and (bias["mc_target_variance_se"] > 0).all()
    # the rows checked are there (.all() of no row holds): N = 1, 2 of --n-max 2 in both
    assert variance["N"].tolist() == [1, 2]
    assert (variance[["mc_min_variance_se", "mc_variance_ratio_se"]] > 0).all().all()
    assert set(operators.loc[operators["operator"] == "maxmin", "N"]) == {1, 2}
    assert (operators["variance_se"] > 0).all()


def test_a_large_table_is_announced_before_the_wait(tmp_path) -> None:
    """--m-max 10000 --n-max 1000 makes bias.csv 10^7 rows (0.7 GB, over 3 minutes here) with
    a tiny Monte Carlo; the note on a long wait counted the Monte Carlo alone, so the command
    was silent. Now the note comes first and names the table's size and its options."""
    out = tmp_path / "big"
    argv = [sys.executable, "-m", "maxminq", "theory", "--out", str(out), "--m-max", "10000"]
    argv += ["--n-max", "1000", "--mc-m", "1", "--samples", "3", "--variance-samples", "3"]
    argv += ["--operator-m", "1", "--no-progress"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:  # the note comes before the work (seconds); the work alone takes minutes
        ready, _, _ = select.select([proc.stderr], [], [], 30)
        line = proc.stderr.readline().strip() if ready else ""
    finally:
        proc.kill()
        proc.wait()
    assert line.startswith("maxminq theory: note: bias.csv gets 10,000,000 rows (M x N; about ")
    assert line.endswith(" min on one core; --m-max or --n-max shorten it")
    assert not (out / "bias.csv").exists()


def test_a_reader_leaving_early_does_not_cut_the_writes_short(tmp_path) -> None:
    """'maxminq theory --out DIR | head -1': the path printed after the first write ended the
    command (broken pipe, exit 141) with four of the six outputs unwritten and the earlier
    run's removed. The paths are printed once all are written."""
    out = tmp_path / "t"
    argv = [sys.executable, "-m", "maxminq", "theory", "--out", str(out), *TINY]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as 'head -1' does: the rest of the output has no reader
    err = proc.stderr.read()
    proc.wait()
    assert first.strip() == str(out / "bias.csv")
    # 141, the command's quiet exit on a broken pipe, unless all was in the pipe by then
    assert proc.returncode in (0, 141) and err == ""
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)


@pytest.mark.parametrize(
    ("signum", "status", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_theory_stopped_before_writing_removes_the_folders_it_created(
    tmp_path: Path, signum: int, status: int, word: str
) -> None:
    out = tmp_path / "new" / "theory"  # both folders are new: both are the command's
    done = stop_theory_while_writing(out, signum)
    assert done.returncode == status, done.stderr
    assert done.stderr.strip().endswith(f"maxminq theory: {word}"), done.stderr
    assert not (out / "bias.csv").exists()  # the signal came before the first file was in
    assert not out.exists() and not out.parent.exists()  # was: an empty folder left behind
    assert sorted(tmp_path.iterdir()) == []


def test_theory_stopped_before_writing_keeps_a_folder_the_user_had(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()  # the user's, empty: the command must not remove it
    done = stop_theory_while_writing(out, signal.SIGINT)
    assert done.returncode == 130, done.stderr
    assert out.is_dir() and sorted(out.iterdir()) == []  # kept; no temporary left either


@pytest.mark.parametrize(
    ("argv", "options", "duration"),
    [
        # 2.3e12 errors, all in the variance table: only --variance-samples (or --n-max)
        # shortens it; the note named --mc-m and --samples, which change nothing there
        # (2.3e12 errors at 1e8 a second: 6.4 h, was printed as 383 min)
        (["--variance-samples", "10000000000"], "--variance-samples or --n-max", "6 h"),
        # 4.5e13 errors (5.2 days), nearly all in the every-operator table of M = 10000
        (
            [
                "--operator-m",
                "10000",
                "--n-max",
                "1000",
                "--mc-m",
                "1",
                "--samples",
                "3000",
                "--variance-samples",
                "3",
            ],
            "--operator-m, --samples or --n-max",
            "5 days",
        ),  # fmt: skip
        # the bias table's Monte Carlo (4.8e12 of 4.83e12 errors: 13.4 h): as before
        (
            ["--samples", "100000000", "--operator-m", "1"],
            "--mc-m, --samples or --n-max",
            "13 h",
        ),  # fmt: skip
    ],
)
def test_theory_long_wait_note_names_the_options_of_the_slow_part(
    tmp_path: Path, argv: list[str], options: str, duration: str
) -> None:
    line = theory_note(tmp_path, *argv)
    assert line.startswith("maxminq theory: note: the Monte Carlo draws "), line
    assert line.endswith(f", roughly {duration} on one core; {options} shorten it"), line


def test_theory_progress_bar_counts_every_monte_carlo(tmp_path: Path) -> None:
    """The bar counted the bias table's errors only, so it stood at 100% while the variance
    and operator tables (at the defaults three times as long) were drawn in silence. Hand
    count for --m-max 4 --n-max 3 (simulated M 1, 2, 4; sum of N = 6), --samples 100,
    --variance-samples 1000: bias 100 x 7 x 6 = 4,200; variance 1000 x (6 + 3) = 9,000;
    operators 100 x 8 x (1 + 2 + 2 + 1 + 3 x 6) = 19,200; in all 32,400."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()  # stderr a terminal: the bar is shown
    # 24 x 120 characters (a new pty is 0 wide, and tqdm then draws an empty bar)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "maxminq", "theory", "--out", str(tmp_path / "t"),
             "--m-max", "4", "--n-max", "3", "--samples", "100", "--variance-samples", "1000"],
            stdout=subprocess.DEVNULL, stderr=follower, cwd=ROOT, timeout=120, check=False,
        )  # fmt: skip
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the pty's other end is closed and drained
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    assert proc.returncode == 0
    states = [s.strip() for s in b"".join(chunks).decode().replace("\n", "\r").split("\r")]
    states = [s for s in states if s.startswith("Monte Carlo")]
    assert states, b"".join(chunks)
    assert "32.4k/32.4k" in states[-1], states[-1]  # was: 'Monte Carlo bias' ... 4.20k/4.20k
    assert re.search(r" [0-9.]+k? errors/s\]$", states[-1]), states[-1]  # was: '803kerror/s'
    assert all("32.4k/32.4k" in s for s in states if "100%" in s)  # 100% only at the end


def test_variance_table_with_a_bar_gives_the_same_numbers() -> None:
    """variance_table draws one N at a time (so that a bar can follow); its numbers must be
    those of theory.monte_carlo_bias's one call over all N, bit for bit (the same rng draws,
    in the same order), with a bar or without."""
    import io

    import numpy as np
    from tqdm import tqdm

    from maxminq.analysis.theory_plots import variance_table
    from maxminq.theory import monte_carlo_bias

    ns = np.arange(1, 7)
    for noise in ("uniform", "normal"):
        one_call = monte_carlo_bias(1, ns, 1.0, 1.0, 500, np.random.default_rng(3), noise=noise)
        plain = variance_table(6, 500, np.random.default_rng(3), noise=noise)
        with tqdm(total=500 * (21 + 6), file=io.StringIO()) as bar:
            barred = variance_table(6, 500, np.random.default_rng(3), noise=noise, bar=bar)
            assert bar.n == 500 * (21 + 6)  # sum of N + 1 over N = 1..6, per sample
        columns = ("min_variance", "min_variance_se", "variance_ratio", "variance_ratio_se")
        for table in (plain, barred):
            for column in columns:
                np.testing.assert_array_equal(
                    table[f"mc_{column}"].to_numpy(), getattr(one_call, column), err_msg=column
                )


def test_theory_help_says_what_each_sample_count_drives() -> None:
    """--samples also sets the every-operator table's samples (its help named the bias table
    only, so a user shortening that table's wait did not know which option to use); both
    counts need 3 or more; --out names the six files it replaces."""
    import argparse

    from maxminq.commands.theory import OUTPUTS, add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    lines = {a.option_strings[0]: str(a.help) for a in parser._actions if a.option_strings}
    assert "operator_bias.csv" in lines["--samples"] and "3 or more" in lines["--samples"]
    assert "3 or more" in lines["--variance-samples"]
    assert all(name in lines["--out"] for name in OUTPUTS), lines["--out"]


@pytest.mark.parametrize("stop_at", [1, 2])
def test_a_signal_during_the_out_check_leaves_no_folder(tmp_path: Path, monkeypatch, stop_at):
    """The check of --out before any work (every command that writes a folder) creates the
    folder and its new parents, then removes them. A Ctrl-C or SIGTERM in between (before
    the first removal, or between two) left the empty folders behind: a run stopped before
    it wrote anything left 'new/theory' or 'new'. Here the signal's exception is raised
    by the ``stop_at``-th removal."""
    from maxminq.cli import check_out_folder

    rmdir, calls = Path.rmdir, []

    def interrupted_rmdir(self: Path) -> None:
        calls.append(self)
        if len(calls) == stop_at:
            raise KeyboardInterrupt
        rmdir(self)

    monkeypatch.setattr(Path, "rmdir", interrupted_rmdir)
    with pytest.raises(KeyboardInterrupt):
        check_out_folder(tmp_path / "new" / "theory", "--out")
    assert sorted(tmp_path.iterdir()) == []
