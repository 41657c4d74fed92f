"""Sweeps from a session without a script file, the sweep's progress bar, and a second
reading of one sweep on several machines (``--shard K/M``, ``maxminq merge``).

The session sweep is real (the tiny toy-MDP sweep of the sweep tests, 4 runs, 2 workers),
fed to ``python -`` on stdin as a notebook's or a heredoc's code is, once for the module.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import stdin_session
from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

TOY_TEXT = TOY.format(runs=5, episodes=20)

# Code read from stdin: __main__.__file__ is '<stdin>', a file that does not exist. No
# `if __name__ == "__main__":` guard, as in a notebook's cell.
STDIN_SWEEP = """
import json, pathlib, subprocess, threading
import __main__
import maxminq._progress
from maxminq.experiments.runner import run_sweep

# git's HEAD of the checkout maxminq runs from (None: not a checkout), as the sweep starts
source = pathlib.Path(maxminq.__file__).resolve().parents[2]
revision = None
if (source / ".git").exists():
    revision = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()

# A bar into a pipe redraws at most every LOG_INTERVAL s: here never between its start and
# its end, however long the sweep takes on a busy machine.
maxminq._progress.LOG_INTERVAL = 1e9

summary = run_sweep("toy.yaml", "out", workers=2, progress=True)
print(json.dumps({
    "ok": summary.ok, "done": summary.done, "failed": summary.failed,
    "failures": summary.failures,
    "threads": sorted(t.name for t in threading.enumerate()),
    "main_file": getattr(__main__, "__file__", None),
    "revision": revision,
}))
"""


@pytest.fixture(scope="module")
def stdin_sweep(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``python -`` running the tiny sweep with 2 workers and its bar on, stderr a pipe (as
    in a log or a captured notebook command): its summary (stdout) and stderr."""
    root = tmp_path_factory.mktemp("stdin_sweep")
    (root / "toy.yaml").write_text(TOY_TEXT)
    proc = stdin_session(STDIN_SWEEP, cwd=root)
    return {"root": root, "err": proc.stderr, **json.loads(proc.stdout.strip().splitlines()[-1])}


def test_a_sweep_from_stdin_runs_on_its_workers(stdin_sweep):
    """Spawned workers ran the main module's file again, '<cwd>/<stdin>', which does not
    exist: each printed a FileNotFoundError traceback, the pool broke and every run ended
    'failed: worker process died: BrokenProcessPool'."""
    assert stdin_sweep["failures"] == {}
    assert (stdin_sweep["ok"], stdin_sweep["done"], stdin_sweep["failed"]) == (True, 4, 0)
    assert "Traceback" not in stdin_sweep["err"]
    assert "<stdin>" not in stdin_sweep["err"]
    assert stdin_sweep["main_file"] == "<stdin>"  # hidden while spawning only, put back


def test_the_sweep_leaves_no_tqdm_monitor_thread(stdin_sweep):
    """The runner's bar was tqdm.auto's own, which starts tqdm's monitor thread and leaves
    it running after run_sweep returns (a notebook's kernel collected one)."""
    assert "tqdm_monitor" not in stdin_sweep["threads"]


def test_the_sweep_bar_in_a_pipe_is_drawn_at_its_start_and_end(stdin_sweep):
    """Written to a pipe or a file, the bar was redrawn at every pass of the runner's loop
    (twice a second, its counts refreshed each time): 14 to 79 lines for this 4-run sweep,
    7,200 an hour. Now as every bar of the library there: at most every LOG_INTERVAL s
    (a minute; here made longer than the sweep), and at its end, with the last counts."""
    draws = [line for line in stdin_sweep["err"].replace("\r", "\n").splitlines() if line]
    assert all(line.startswith("tiny_toy [quick]:") for line in draws), draws
    assert len(draws) == 2, draws  # the start, the end
    assert "0/4" in draws[0]
    assert "4/4" in draws[-1] and "done 4, running 0, failed 0" in draws[-1]


# --------------------------------------------- two ways to shard: sweep and reproduce
# An empty shard (shard 5 of 5 of 4 runs, 9 of 9 of 8) is a real sharded sweep that runs
# nothing: its folder registers the runs and records its shard at once.
OTHER_TEXT = TOY_TEXT.replace("name: tiny_toy", "name: other_toy").replace("seed: 7", "seed: 8")


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    """A folder of two configs (``maxminq reproduce --configs``): tiny_toy, other_toy."""
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "tiny_toy.yaml").write_text(TOY_TEXT)
    (folder / "other_toy.yaml").write_text(OTHER_TEXT)
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but the lock file (its bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".sweep.lock"
    }


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _reproduce(configs: Path, out: Path, only: str, *extra: str) -> list[str]:
    return ["reproduce", "--configs", str(configs), "--only", only, "--out", str(out),
            "--workers", "1", "--no-progress", *extra]  # fmt: skip


def test_a_sweep_shard_folder_refuses_a_plain_reproduce(configs, tmp_path, capsys):
    """A folder of 'maxminq sweep CONFIG --shard K/M' took a plain 'maxminq reproduce' of
    that config (and a reproduce --shard of it with other configs, another split): it ran
    the other machines' runs there, which the merge then found twice."""
    out = tmp_path / "s5"
    assert main(["sweep", str(configs / "tiny_toy.yaml"), "--shard", "5/5", "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    before = _files(out)
    assert main(_reproduce(configs, out, "tiny_toy")) == 2
    line = _one_line(capsys)
    assert line.startswith(f"maxminq reproduce: error: --shard: {out} holds shard 5/5 of "
                           "config tiny_toy (swept with --shard 5/5); no --shard ")  # fmt: skip
    assert "resume it with --shard 5/5" in line
    assert main(_reproduce(configs, out, "tiny_toy,other_toy", "--shard", "5/5")) == 2
    line = _one_line(capsys)
    assert "holds shard 5/5 of config tiny_toy (swept with --shard 5/5); --shard 5/5 of " in line
    assert "of configs other_toy, tiny_toy together would run other machines' runs" in line
    assert _files(out) == before  # nothing written: no report, no reproduce.json, no run
    # the same split: a reproduce --shard of that config alone goes on
    assert main(_reproduce(configs, out, "tiny_toy", "--shard", "5/5")) == 0


def test_a_reproduce_shard_folder_refuses_a_sweep_of_one_of_its_configs(configs, tmp_path, capsys):
    """'maxminq reproduce --shard K/M' splits the runs of all its configs together; a
    'maxminq sweep' of one of them into its folder (with the same --shard: another split of
    that config's runs; or none) was taken, and ran other machines' runs there."""
    out = tmp_path / "r9"
    assert main(_reproduce(configs, out, "tiny_toy,other_toy", "--shard", "9/9")) == 0
    capsys.readouterr()
    before = _files(out)
    config = str(configs / "tiny_toy.yaml")
    for shard in (["--shard", "9/9"], []):
        for extra in ([], ["--dry-run"]):
            assert main(["sweep", config, "--out", str(out), *shard, *extra]) == 2
            line = _one_line(capsys)
            assert line.startswith(
                f"maxminq sweep: error: --shard: {out} holds shard 9/9 of config tiny_toy "
                "(swept with --shard 9/9 of configs other_toy, tiny_toy together, as maxminq "
                "reproduce splits them); "
            )
            assert line.endswith(
                "resume it with --shard 9/9 of the same configs (other_toy, tiny_toy), or "
                "sweep into another --out and bring the folders together with 'maxminq merge'"
            )
    with pytest.raises(UsageError, match="holds shard 9/9 of config tiny_toy"):
        run_sweep(config, out, shard="9/9", progress=False)
    assert main(_reproduce(configs, out, "tiny_toy,other_toy")) == 2  # plain: refused too
    assert "no --shard would run other machines' runs" in _one_line(capsys)
    assert _files(out) == before
    assert main(_reproduce(configs, out, "tiny_toy,other_toy", "--shard", "9/9")) == 0


# ------------------------------------------------------------------------- the merge
def test_a_folder_copied_while_its_sweep_ran_is_said_so_under_the_merge(tmp_path, capsys):
    """A folder copied while its sweep ran holds runs 'running' and no tables of them: the
    merge left them to run, its line said only '0 finished ... 4 left to run', and its rows
    read 'interrupted (the sweep stopped during this run)'. Now a line under the summary
    says which folder had runs running, and to copy it again once its sweep has finished."""
    config = tmp_path / "toy.yaml"
    config.write_text(TOY_TEXT)
    copied = tmp_path / "copied"
    run_sweep(config, copied, shard="5/5", progress=False)  # registers the 4 runs, runs none
    with ResultsStore(copied, lock=True) as store:  # one in flight when it was copied
        running = store.records()[0].run_id
        store.mark_running(running)
    capsys.readouterr()
    assert main(["merge", str(copied), "--out", str(tmp_path / "merged")]) == 0
    said = capsys.readouterr()
    assert said.out.strip() == (
        f"merged 1 folder(s) into {tmp_path / 'merged'}: 4 runs, 0 finished (none); 4 left to run"
    )
    assert said.err.strip() == (
        f"1 run(s) were running in {copied} (copied while its sweep ran, or that sweep was "
        "stopped): left to run here; let that sweep finish and copy its folder again "
        "before merging, or sweep into --out"
    )
    with ResultsStore(tmp_path / "merged", create=False) as store:
        assert store.get(running).status == "pending"


def test_each_machines_versions_are_recorded_and_the_merge_names_differences(
    stdin_sweep, tmp_path, capsys
):
    """Nothing recorded which maxminq (git revision), numpy, ... a sweep's runs computed
    with: the folders of machines with other versions merged silently, and the report of a
    'maxminq reproduce' into the merged folder named only the versions of the machine that
    wrote it. Now each sweep records its versions in its folder, the merge keeps all and
    names those that differ, and reproduce.json (the report's header) names every one."""
    import platform
    from importlib import metadata

    import maxminq
    from maxminq.commands.reproduce import runs_software

    a = tmp_path / "a"  # the whole sweep, on one machine
    shutil.copytree(stdin_sweep["root"] / "out", a)
    with ResultsStore(a, create=False) as store:
        recorded = json.loads(store.meta("software:tiny_toy"))
    assert len(recorded) == 1
    here = recorded[0]
    assert here["maxminq"] == maxminq.__version__
    assert here["python"] == platform.python_version()
    assert here["numpy"] == metadata.version("numpy")
    revision = stdin_sweep["revision"]  # read by the script as its sweep started
    assert (here.get("git") or "").startswith(revision or "") and ("git" in here) == bool(revision)
    # the other machine: the same runs (a copy), swept with another revision of maxminq
    b = tmp_path / "b"
    shutil.copytree(a, b)
    other = {**here, "git": "abc1234"}
    with ResultsStore(b, lock=True) as store:
        store.set_meta({"software:tiny_toy": json.dumps([other])})
    merged = tmp_path / "merged"
    capsys.readouterr()
    assert main(["merge", str(a), str(b), "--out", str(merged)]) == 0
    err = capsys.readouterr().err.strip()
    assert err == (
        f"the folders' runs were computed with other software (git {here.get('git', 'none')} "
        f"in {a}, abc1234 in {b}): each run is merged as its folder computed it; sweep the "
        "runs again with one version to compare like with like"
    )
    with ResultsStore(merged, create=False) as store:
        assert json.loads(store.meta("software:tiny_toy")) == [here, other]
    assert main(["status", str(merged)]) == 0  # says so later too
    assert (
        f"versions: the runs here were computed with other software (git "
        f"{here.get('git', 'none')} / abc1234): machines merged with other versions, or a "
        "sweep resumed after an upgrade"
    ) in capsys.readouterr().out.splitlines()
    # what 'maxminq reproduce' into the merged folder writes to reproduce.json's software
    software = runs_software(merged)
    # both machines' (and this process's: the report's own, the same in a quiet checkout)
    assert {here.get("git", "none"), "abc1234"} <= set(software["git"].split(" / "))
    assert software["numpy"] == metadata.version("numpy")  # the same everywhere: once


def test_shards_of_different_splits_are_said_so_under_the_merge(tmp_path, capsys):
    """Machines that ran shards of different splits (--shard 5/5 here, 9/9 there: a typo
    in M) ran some runs twice and others nowhere; the merge only said 'N left to run'."""
    config = tmp_path / "toy.yaml"
    config.write_text(TOY_TEXT)
    for name, shard in (("a", "5/5"), ("b", "9/9")):  # empty shards: register, run nothing
        run_sweep(config, tmp_path / name, shard=shard, progress=False)
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out",
                 str(tmp_path / "merged")]) == 0  # fmt: skip
    assert capsys.readouterr().err.strip() == (
        f"tiny_toy: the folders ran --shard 5/5 in {tmp_path / 'a'}, 9/9 in {tmp_path / 'b'}: "
        "shards of different splits: some runs ran in two folders, others in none; a plain "
        "'maxminq sweep' (or 'reproduce') into --out runs what no folder finished"
    )


def test_the_same_shard_on_two_machines_is_said_so_two_copies_of_one_are_not(
    stdin_sweep, tmp_path, capsys
):
    """Two machines that both ran --shard 1/2 (a command copied unedited) ran its runs
    twice and the other shard's nowhere: said under the merge. Two copies of one machine's
    folder (copied again once its sweep had finished) are merged without a word."""
    import sqlite3

    folders = {}
    for name in ("here", "again", "other"):
        folders[name] = tmp_path / name
        shutil.copytree(stdin_sweep["root"] / "out", folders[name])
        with ResultsStore(folders[name], lock=True) as store:  # as '--shard 1/2' records
            store.set_meta({"shard:tiny_toy": "1/2"})
    with sqlite3.connect(folders["other"] / "results.sqlite") as db:  # run on another host
        db.execute("UPDATE runs SET host = 'otherbox'")
    db.close()
    capsys.readouterr()
    argv = ["merge", str(folders["here"]), str(folders["again"])]
    assert main([*argv, "--out", str(tmp_path / "m1")]) == 0
    assert capsys.readouterr().err == ""
    argv = ["merge", str(folders["here"]), str(folders["other"])]
    assert main([*argv, "--out", str(tmp_path / "m2")]) == 0
    assert capsys.readouterr().err.strip() == (
        f"tiny_toy: the folders ran --shard 1/2 in {folders['here']}, 1/2 in "
        f"{folders['other']}: the same shard on two machines (a command copied from another "
        "machine?): its runs ran twice, another shard's nowhere; a plain 'maxminq sweep' (or "
        "'reproduce') into --out runs what no folder finished"
    )


def test_plans_that_differ_under_other_maxminq_versions_say_so(stdin_sweep, tmp_path, capsys):
    """Folders whose plans differ were refused as 'another version of config X' only,
    though the machines ran one config file: another maxminq may make other runs (ids) of
    it. Where their recorded maxminq versions differ, the refusal names them."""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        shutil.copytree(stdin_sweep["root"] / "out", folder)
    with ResultsStore(a, create=False) as store:
        here = json.loads(store.meta("software:tiny_toy"))[0]
        plan = json.loads(store.meta("plan:tiny_toy"))
    # b: swept by another revision, which names one of the runs otherwise
    plan["runs"] = sorted([*plan["runs"][1:], "toy_mdp-000000000000"])
    with ResultsStore(b, lock=True) as store:
        store.set_meta(
            {
                "plan:tiny_toy": json.dumps(plan),
                "software:tiny_toy": json.dumps([{**here, "git": "abc1234"}]),
            }
        )
    capsys.readouterr()
    assert main(["merge", str(a), str(b), "--out", str(tmp_path / "merged")]) == 2
    line = _one_line(capsys)
    assert line.startswith(
        f"maxminq merge: error: DIR: {b} holds another version of config tiny_toy than {a}: "
    )
    assert line.endswith(
        f"; their sweeps ran other versions of maxminq (git {here.get('git', 'none')} in {a}, "
        f"abc1234 in {b}), which may make other runs of one config file: sweep every shard "
        "with one version"
    )
    assert not (tmp_path / "merged").exists()
