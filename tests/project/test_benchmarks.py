"""Smoke tests of the scripts in ``benchmarks/``: each runs as a user runs it (a subprocess
of this interpreter) at its tiniest settings, and its output must have the rows, units and
ratios that README's "Benchmarks" section quotes, every rate a positive finite number.
Speeds are not asserted (the machine is shared); that the scripts still run and still
print what README records is. Bad options must give one line naming the option, exit 2.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO

ROOT = REPO


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


def _ready_late_if_second(flag_dir: str) -> None:
    """Worker initializer: the second worker to start is ready 2.5 s after the first (as
    when one worker's warm-up is slower on a loaded machine)."""
    try:
        os.close(os.open(os.path.join(flag_dir, "first"), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        time.sleep(2.5)


def _meet(flag_dir: str, me: str, other: str) -> tuple[float]:
    """A job that needs no CPU and ends once the other job of its pair has started: 0.5 when
    it met it, 0.0 when it waited a minute in vain (the two did not run at once)."""
    Path(flag_dir, me).touch()
    deadline = time.monotonic() + 60
    while not Path(flag_dir, other).exists():
        if time.monotonic() > deadline:
            return (0.0,)
        time.sleep(0.01)
    return (0.5,)


def test_bench_finite_mdp_quick() -> None:
    out = run_script("bench_finite_mdp.py", "--quick")
    assert re.search(r"random MDP S=50 A=4, Maxmin N=4, 3 rounds \(medians, updates/s\)", out)
    rows = dict(re.findall(rf"^  (sync|loop|async)\s+{NUM}\s+x[0-9.]+ vs loop$", out, re.M))
    assert set(rows) == {"sync", "loop", "async"}, out
    assert_rates(list(rows.values()), 3)
    assert re.search(r"^  loop\s+[0-9,]+\s+x1\.0 vs loop$", out, re.M), out


def test_bench_envs_smallest(tmp_path: Path) -> None:
    ids = ["maxminq/Catcher-v0", "LunarLander-v3", "maxminq/MinAtar-Breakout-v0"]
    out_json = tmp_path / "envs.json"
    out = run_script(
        "bench_envs.py", "--seconds", "0.02", "--episodes", "1", "--other-episodes", "1",
        "--envs", *ids, "--out", str(out_json),
    )  # fmt: skip
    assert re.search(r"^machine: .+, [0-9]+ cores, load [0-9.]+$", out, re.M), out
    header = "| env | single steps/s | batched B=64 env-steps/s | random: episodes |"
    assert header in out
    for env_id in ids:
        # wall / CPU rates, single and batched; 50 episodes (one per seeded env); mean ± s.e.
        row = re.search(
            rf"^\| {re.escape(env_id)} \| {NUM} / {NUM} \| {NUM} / {NUM} \| 50 \| "
            rf"{NUM} ± {NUM} \| (-?[0-9.]+) ± {NUM} \|$",
            out,
            re.M,
        )
        assert row, (env_id, out)
        assert_rates(list(row.groups()[:5]), 5)
    rows = json.loads(out_json.read_text())["rows"]
    assert [r["env_id"] for r in rows] == ids
    for r in rows:
        for key in ("single_wall", "single_cpu", "batched64_wall", "batched64_cpu"):
            assert math.isfinite(r[key]) and r[key] > 0, (key, r)
        assert r["episodes"] == 50 and r["mean_length"] >= 1


def test_bench_deep_smoke() -> None:
    out = run_script("bench_deep.py", "--smoke", "--envs", "lunarlander", "minatar")
    assert re.search(r"^bench_deep: 1 round\(s\), torch threads 1 \(CPU time\), load", out, re.M)
    for env_id in ("LunarLander-v3", "maxminq/MinAtar-Breakout-v0"):
        head = f"\n{env_id} (median env-steps/s over 1 round(s), 2 steps each)\n"
        assert head in out, out
        part = out.split(head, 1)[1].split("\n\n", 2)
        net_table, seed_table = part[0], part[1]
        assert net_table.startswith(
            "| agent | batched | per-net loop | batched / loop | batched / batched DQN |"
        )
        for agent in ("dqn", "maxmin N=2", "maxmin N=4", "maxmin N=8"):
            row = re.search(rf"^\| {agent} \| {NUM} \| {NUM} \| {NUM} \| {NUM} \|$",
                            net_table, re.M)  # fmt: skip
            assert row, (agent, net_table)
            batched, loop, ratio, vs_dqn = assert_rates(list(row.groups()), 4)
            # the ratios are the printed rates' quotients (to the printed rounding)
            assert ratio == pytest.approx(batched / loop, abs=0.01 + 0.01 * ratio)
        assert re.search(r"^\| dqn \| [0-9]+ \| [0-9]+ \| [0-9.]+ \| 1\.00 \|$", net_table, re.M)
        loop_row = re.search(rf"^\| loop maxmin N=8 / loop dqn \| \| \| \| {NUM} \|$",
                             net_table, re.M)  # fmt: skip
        assert loop_row, net_table
        assert_rates([loop_row.group(1)], 1)
        assert seed_table.startswith("| seeds in one process | aggregate env-steps/s | vs S=1 |")
        for agent in ("dqn", "maxmin N=4"):
            one = re.search(rf"^\| {agent}, S=1 \| {NUM} \| 1\.00 \|$", seed_table, re.M)
            twenty = re.search(rf"^\| {agent}, S=20 \| {NUM} \| {NUM} \|$", seed_table, re.M)
            assert one and twenty, (agent, seed_table)
            assert_rates([one.group(1), *twenty.groups()], 3)
    assert re.search(r"^load average at the end: [0-9.]+ \([0-9]+ cores\)$", out, re.M)


def test_bench_minatar_bound_smallest() -> None:
    out = run_script("bench_minatar_bound.py", "--steps", "2", "--reps", "2")
    assert "bench_minatar_bound: maxminq/MinAtar-Breakout-v0, torch threads 1" in out
    labels = {
        "dqn": r"DQN training step:",
        "maxmin": r"Maxmin N=8 training step:",
        "measured": r"measured DQN / Maxmin N=8 speed:",
        "extra": r"GEMMs of the 7 extra target \+ online nets:",
        "bound": r"bound DQN / \(DQN \+ extra GEMMs\):",
    }
    got = {}
    for key, label in labels.items():
        m = re.search(rf"^{label}\s+{NUM}( ms)?$", out, re.M)
        assert m, (label, out)
        got[key] = assert_rates([m.group(1)], 1)[0]
    per_net = re.search(rf"^GEMMs of one net, batch 32 / batch 1:\s+{NUM} / {NUM} ms$", out, re.M)
    assert per_net, out
    assert_rates(list(per_net.groups()), 2)
    # the bound is Y / (Y + X) of the printed times, below 1 since X > 0
    assert got["bound"] < 1
    assert got["bound"] == pytest.approx(got["dqn"] / (got["dqn"] + got["extra"]), abs=2e-3)
    assert got["measured"] == pytest.approx(got["dqn"] / got["maxmin"], abs=2e-3)


def test_bench_classic_smoke() -> None:
    out = run_script("bench_classic.py", "--smoke")
    assert re.search(r"^cores: [0-9]+, load average \(1 min\) at start: [0-9.]+$", out, re.M)
    toy = re.search(
        rf"^toy MDP, Maxmin N=4, batch 32, ([0-9]+) runs x ([0-9]+) episodes:\n"
        rf"  vectorised, 1 process : +{NUM} M replayed transitions/s wall, {NUM} M per "
        rf"CPU-second\n"
        rf"  vectorised, 2 processes: +{NUM} M/s wall \(both cores\)\n"
        rf"  single-run loop       : +{NUM} M/s wall, {NUM} M per CPU-second -> ratio "
        rf"{NUM}x \(wall, 2 processes\), {NUM}x \(per CPU-second\)$",
        out,
        re.M,
    )
    assert toy, out
    assert_rates(list(toy.groups()), 9)
    lanes = re.findall(
        rf"^Mountain Car, Maxmin N=4, batch 4, ([0-9]+) lanes \(([0-9]+) setting\(s\) x "
        rf"([0-9]+) runs\) x ([0-9]+) episodes:\n"
        rf"  vectorised, 1 process : +{NUM} M replayed transitions/s wall, {NUM} M per "
        rf"CPU-second\n"
        rf"  vectorised, 2 processes: +{NUM} M/s  \(both cores\)$",
        out,
        re.M,
    )
    assert len(lanes) == 2, out
    for row in lanes:
        assert_rates(list(row), 7)
        assert int(row[0]) == int(row[1]) * int(row[2])
    small, large = lanes[0][0], lanes[1][0]
    loop = re.search(
        rf"^  single-run loop       : +{NUM} M/s wall -> ratio {NUM}x \({small} lanes\), "
        rf"{NUM}x \({large} lanes\); per CPU-second {NUM}x \({large} lanes, 1 process\)$",
        out,
        re.M,
    )
    assert loop, out
    assert_rates(list(loop.groups()), 4)
    assert re.search(r"^load average \(1 min\) at end: [0-9.]+$", out, re.M)


def test_bench_sweep_resume_smoke(tmp_path: Path) -> None:
    """The smoke run's output; and, without --keep, it removes the folders it made: --dir
    and its new parent (was test_theory_leftovers' test_sweep_resume_removes_the_folders_it_
    made, a second run of the same script for that check alone)."""
    folder = tmp_path / "new" / "resume"  # a folder it makes, and its parent
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
    assert not folder.exists() and not folder.parent.exists()  # removed without --keep
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("script", "argv", "option"),
    [
        ("bench_deep", ["--rounds", "0"], "--rounds"),  # was: the default rounds, silently
        ("bench_deep", ["--rounds", "-1"], "--rounds"),  # was: KeyError after the runs
        ("bench_deep", ["--threads", "0"], "--threads"),  # was: RuntimeError from torch
        ("bench_deep", ["--steps", "0"], "--steps"),
        ("bench_deep", ["--envs"], "--envs"),  # was: an empty report
        ("bench_deep", ["--quick", "--smoke"], "--smoke"),
        ("bench_minatar_bound", ["--steps", "0"], "--steps"),  # was: ZeroDivisionError
        ("bench_minatar_bound", ["--threads", "0"], "--threads"),
        ("bench_minatar_bound", ["--reps", "0"], "--reps"),
        ("bench_envs", ["--seconds", "0"], "--seconds"),  # was: rates of 0 printed
        ("bench_envs", ["--seconds", "nan"], "--seconds"),
        ("bench_envs", ["--seconds", "-1"], "--seconds"),
        ("bench_envs", ["--episodes", "0"], "--episodes"),  # was: nan in the table and JSON
        ("bench_envs", ["--other-episodes", "0"], "--other-episodes"),
        ("bench_envs", ["--envs", "Foo-v0"], "--envs"),  # was: a traceback
        ("bench_envs", ["--envs", "Pendulum-v1"], "--envs"),  # continuous actions
        ("bench_envs", ["--envs"], "--envs"),  # was: an empty table
        ("bench_envs", ["--out", ""], "--out"),
        ("bench_envs", ["--out", "/"], "--out"),  # was: a traceback after all the timing
        ("bench_envs", ["--out", "/etc/hostname/envs.json"], "--out"),  # under a file: same
        ("bench_sweep_resume", ["--runs", "0"], "--runs"),  # was: a ConfigError traceback
        ("bench_sweep_resume", ["--table-kb", "nan"], "--table-kb"),
        ("bench_sweep_resume", ["--dir", ""], "--dir"),  # was: the working folder deleted
        ("bench_sweep_resume", ["--reuse", "--dir", "/nonexistent/h6"], "--reuse"),
        ("bench_classic", ["--quick", "--smoke"], "--smoke"),
        ("bench_classic", ["--part", "foo"], "--part"),
        ("bench_finite_mdp", ["--rounds", "3"], "--rounds"),
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


def test_two_workers_time_a_pair_at_once_when_one_worker_is_ready_late(tmp_path: Path) -> None:
    """The "2 processes" rate must time two jobs running at once. Before, a fixed 0.5 s task
    per worker was to ensure both were warmed up, but a worker ready first took both tasks,
    then both timed jobs: one process, timed as two."""
    import bench_classic

    with bench_classic.TwoWorkers(_ready_late_if_second, (str(tmp_path),)) as workers:
        # each job waits for the other to start: both meet only when they run at once (no
        # wall-clock bound, which a loaded machine could exceed)
        total, _ = workers.pair(_meet, (str(tmp_path), "a", "b"), (str(tmp_path), "b", "a"))
    assert total == 1.0


@pytest.mark.parametrize(
    ("script", "argv", "expected"),
    [
        ("bench_classic", ["--part", "toi"], "--part: unknown 'toi'; did you mean toy?"),
        ("bench_classic", ["--quik"], "--quik (did you mean --quick?)"),
        ("bench_deep", ["--envs", "minatr"], "--envs: unknown 'minatr'; did you mean minatar?"),
        ("bench_deep", ["--rounds", "0"], "error: --rounds: expected an integer >= 1, got '0'"),
        # an empty value is refused for every option (maxminq.cli.reject_empty_values)
        ("bench_envs", ["--envs", ""], "--envs: expected a value, got an empty string"),
        ("bench_classic", ["--part="], "--part: expected a value, got an empty string"),
    ],
)
def test_bad_option_is_worded_as_the_package_cli(script: str, argv: list[str], expected: str,
                                                 capsys) -> None:  # fmt: skip
    """The scripts' errors read as ``maxminq``'s (its explain_parse_error and
    reject_empty_values): the option first, not argparse's 'argument --part: invalid choice',
    a did-you-mean for a typo, an empty value refused as such."""
    module = __import__(script)
    with pytest.raises(SystemExit) as exc:
        module.main(argv)
    assert exc.value.code == 2
    assert expected in capsys.readouterr().err


def test_toy_reference_rate_times_many_runs_and_counts_their_own_steps(monkeypatch) -> None:
    """bench_classic timed the toy single-run loop over one run (about 10 ms at 200
    episodes: noise on a shared machine); it now runs it until ``min_seconds`` have passed,
    and the transitions it divides by are the steps those runs took: counted here in the
    reference loop itself (one eps-greedy choice per agent step), x the batch of 32."""
    import bench_classic
    import reference_loops

    steps = 0
    choose = reference_loops.eps_greedy

    def counted(*args):  # the real choice, counted
        nonlocal steps
        steps += 1
        return choose(*args)

    monkeypatch.setattr(reference_loops, "eps_greedy", counted)
    transitions, wall, cpu, runs = bench_classic.toy_reference_rate(20, 0.3)
    assert runs > 1 and wall >= 0.3 and cpu > 0
    assert steps > 20 * runs  # at least one step an episode, some of two
    assert transitions == 32 * steps
