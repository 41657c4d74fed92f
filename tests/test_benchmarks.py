"""Smoke tests of the scripts in ``benchmarks/``: each runs as a user runs it (a subprocess
of this interpreter) at its tiniest settings, and its output must have the rows, units and
ratios that README's "Benchmarks" section quotes, every rate a positive finite number.
Speeds are not asserted (the machine is shared); that the scripts still run and still
print what README records is. Bad options must give one line naming the option, exit 2.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"  # a printed rate or ratio, thousands separators allowed
sys.path.insert(0, str(BENCH))  # to import the scripts (they import _cli.py from there)


def run_script(name: str, *args: str, timeout: float = 120) -> str:
    """Run ``benchmarks/NAME ARGS`` from the repository root; assert exit 0 and no traceback;
    return its standard output."""
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.stdout


def number(text: str) -> float:
    """A printed number (``1,234.5``) as a float."""
    return float(text.replace(",", ""))


def assert_rates(values: list[str], count: int) -> list[float]:
    """``count`` printed numbers, each a positive finite float."""
    assert len(values) == count, values
    floats = [number(v) for v in values]
    assert all(math.isfinite(v) and v > 0 for v in floats), floats
    return floats


def test_bench_sweep_resume_smoke(tmp_path: Path) -> None:
    folder = tmp_path / "resume"
    out = run_script("bench_sweep_resume.py", "--runs", "2", "--table-kb", "1", "--smoke",
                     "--dir", str(folder))  # fmt: skip
    head = re.search(
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} UTC, .+: 2 finished runs, [0-9]+ MiB "
        r"of tables \(built in [0-9]+ s\); per command: wall and CPU seconds$",
        out,
        re.M,
    )
    assert head, out
    labels = [  # --smoke times each kind once: no repeats, no --dry-run or plain status
        "sweep, all done (folder as written)",
        "sweep, all done, cold page cache",
        "sweep, all done, on a cp -r copy (first time)",
        "status --verify (hashes every file)",
    ]
    lines = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(lines) == len(labels), out
    for label, line in zip(labels, lines, strict=True):
        m = re.fullmatch(rf"  {re.escape(label)} +{NUM} s +{NUM} s CPU(  \(run_sweep: {NUM} s\))?",
                         line)  # fmt: skip
        assert m, (label, line)
        assert_rates(list(m.groups()[:2]), 2)
        assert (m.group(3) is not None) == label.startswith("sweep")
    assert not folder.exists()  # removed without --keep


# --- bad options: one line naming the option, exit 2, before anything is measured ----------


@pytest.mark.parametrize(
    ("script", "argv", "option"),
    [
        ("bench_sweep_resume", ["--runs", "0"], "--runs"),  # was: a ConfigError traceback
        ("bench_sweep_resume", ["--table-kb", "nan"], "--table-kb"),
        ("bench_sweep_resume", ["--dir", ""], "--dir"),  # was: the working folder deleted
        ("bench_sweep_resume", ["--reuse", "--dir", "/nonexistent/h6"], "--reuse"),
    ],
)
def test_bad_option_is_one_line_naming_it(script: str, argv: list[str], option: str,
                                          capsys) -> None:  # fmt: skip
    module = __import__(script)
    with pytest.raises(SystemExit) as exc:
        module.main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing measured or printed before the error
    lines = captured.err.splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and option in lines[0], captured.err


def test_sweep_resume_refuses_to_delete_a_folder_it_did_not_write(tmp_path: Path) -> None:
    """``--dir`` is emptied first: a folder holding anything else must be refused, not
    deleted (a user giving ``--dir results`` or ``--dir .`` lost the folder)."""
    keep = tmp_path / "mine" / "notes.txt"
    keep.parent.mkdir()
    keep.write_text("not a benchmark's")
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_sweep_resume.py"), "--runs", "1", "--table-kb", "1",
         "--dir", str(keep.parent)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "--dir" in proc.stderr and "notes.txt" in proc.stderr
    assert keep.read_text() == "not a benchmark's"
    assert sorted(p.name for p in keep.parent.iterdir()) == ["notes.txt"]
