"""``maxminq theory`` and the benchmark scripts: what they leave behind when stopped, and
what they delete.

* ``maxminq theory --out NEW`` stopped by Ctrl-C (SIGINT) or SIGTERM before its first file
  is in place must not leave the empty folder (nor empty parents) it created; a folder the
  user already had stays. Tested for real: a ``maxminq`` process gets the signal once the
  temporary of ``bias.csv`` appears, while it writes that 300,000-row table (about 2 s here).
* ``benchmarks/bench_sweep_resume.py --reuse`` without ``--keep`` must not delete the store
  it reused (an earlier ``--keep`` run's, possibly the user's only copy).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import rerun_while_late

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

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


# --- bench_sweep_resume.py --reuse ----------------------------------------------------------


def run_resume(*args: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/bench_sweep_resume.py --smoke ARGS`` from the repository root."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep_resume.py"), "--smoke", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env=dict(os.environ),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_sweep_resume_reuse_without_keep_keeps_the_reused_store(tmp_path: Path) -> None:
    """``--reuse`` times a store an earlier ``--keep`` run left; without ``--keep`` it
    deleted that store at the end (a second --reuse then failed: 'holds no store')."""
    sys.path.insert(0, str(BENCH))  # the script and its _cli.py
    import bench_sweep_resume

    folder = tmp_path / "resume"  # what a --runs 2 --table-kb 1 --keep run leaves, built
    (folder / "out").mkdir(parents=True)  # here by the script's own functions (faster)
    bench_sweep_resume.write_config(folder / "bench.yaml", 2)
    bench_sweep_resume.build_store(folder / "bench.yaml", folder / "out", 1.0)
    db = folder / "out" / "results.sqlite"
    assert db.is_file()
    tables = sorted(p.relative_to(folder) for p in (folder / "out" / "tables").rglob("*.csv"))
    assert len(tables) == 2
    reused = run_resume("--reuse", "--dir", str(folder))  # no --keep
    assert "2 finished runs" in reused.stdout and "(reused)" in reused.stdout
    assert db.is_file()  # was: the whole --dir deleted
    assert sorted(p.relative_to(folder) for p in (folder / "out" / "tables").rglob("*.csv")) == (
        tables
    )
    assert not (folder / "copy").exists()  # the copy this run made is its own: removed


@pytest.mark.parametrize("argv", [["--runs", "600"], ["--table-kb", "1500"]])
def test_sweep_resume_reuse_refuses_store_options(tmp_path: Path, argv: list[str]) -> None:
    """``--reuse`` times the store as it is: ``--runs``/``--table-kb`` beside it were
    ignored in silence (the header then printed the store's own count)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep_resume.py"), "--reuse", *argv,
         "--dir", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f"error: {argv[0]}: not with --reuse" in lines[0], proc.stderr


# --- maxminq theory: the note on a long wait names the options that shorten it ------------


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


# --- maxminq theory: one progress bar over all three Monte Carlos ---------------------------


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


def test_sweep_resume_keeps_an_empty_folder_the_user_gave(tmp_path: Path) -> None:
    """``--dir`` may be an empty folder of the user's (made with mkdir, a mount point): the
    script removed the folder itself at the end; only what it wrote in it goes now."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    run_resume("--runs", "1", "--table-kb", "1", "--dir", str(folder))
    assert folder.is_dir() and sorted(folder.iterdir()) == []


# That it removes the folders it made (--dir and a new parent) is checked on the smoke run
# of test_benchmarks' test_bench_sweep_resume_smoke, which makes them.


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
