"""``maxminq theory`` as a command: what it leaves in --out after a killed run, and its
behaviour on edge inputs (the numbers themselves are tested in test_theory.py)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers import rerun_while_late

from maxminq.cli import main
from maxminq.commands.theory import OUTPUTS

TINY = ["--m-max", "4", "--n-max", "3", "--samples", "100", "--variance-samples", "1000"]
TINY += ["--no-progress"]

# A process killed by SIGKILL while store.atomic_write writes `path`: the temporary it was
# writing stays behind, as after a kill -9 (or the OOM killer) of a command in its writes.
_KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from maxminq.experiments.store import atomic_write

def write(tmp):
    tmp.write_text("half a file")
    print(tmp, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

atomic_write(Path(sys.argv[1]), write)
"""


def killed_write(path: Path) -> Path:
    """Kill -9 a real ``atomic_write(path, ...)`` midway; returns the temporary it left."""
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITE, str(path)], capture_output=True, text=True
    )
    assert done.returncode == -9, done.stderr
    tmp = Path(done.stdout.strip())
    assert tmp.is_file() and tmp.parent == path.parent and tmp.name.startswith(f".{path.name}.")
    return tmp


def decoys(folder: Path, name: str) -> list[Path]:
    """Files a command must leave alone beside its output ``name``: a user's own
    temporaries of that name, and another program's atomic-write temporary."""
    files = [
        folder / f".{name}.tmp",
        folder / f".{name}.backup-1.tmp",
        folder / ".notes.txt.x1.tmp",
    ]
    for f in files:
        f.write_text("keep")
    return files


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
