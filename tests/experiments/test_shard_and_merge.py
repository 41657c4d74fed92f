"""One sweep on several machines without a cluster: ``maxminq sweep --shard K/M`` on each,
then ``maxminq merge`` of their folders, read as if one machine had run the whole sweep.

The sweeps are real (toy MDP, the tiny config of the sweep tests, 4 runs) and made once
for the module: one unsharded sweep and the two shards of 1/2 and 2/2; each test works on
copies of those folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.experiments.config import config_from_document
from maxminq.experiments.merge import merge_folders
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.shard import assign_shards, record_sweep, run_cost, shard_runs
from maxminq.experiments.store import ResultsStore, load_results

TOY_TEXT = TOY.format(runs=5, episodes=20)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``whole``: the tiny toy sweep on one machine; ``s1``, ``s2``: its two shards, each
    in a folder of its own (as on two machines)."""
    root = tmp_path_factory.mktemp("swept")
    config = root / "toy.yaml"
    config.write_text(TOY_TEXT)
    folders = {"config": config}
    for name, shard in (("whole", None), ("s1", "1/2"), ("s2", "2/2")):
        summary = run_sweep(config, root / name, workers=1, progress=False, shard=shard)
        assert summary.ok and summary.failed == 0
        folders[name] = root / name
    return folders


def _copy(swept: dict[str, Path], name: str, dest: Path) -> Path:
    shutil.copytree(swept[name], dest)
    return dest


def _done(folder: Path) -> set[str]:
    with ResultsStore(folder, create=False) as store:
        return {r.run_id for r in store.records() if r.status == "done"}


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> SHA-256 of its bytes), but the lock
    file, which names the last process that held the folder (a merge into it, a sweep
    turned away), and SQLite's side files of a connection a kill -9 left open: its index
    (``-shm``) and an empty log (``-wal``), which change nothing in the database."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.name in (".sweep.lock", "results.sqlite-shm"):
            continue
        if p.name == "results.sqlite-wal" and p.stat().st_size == 0:
            continue
        out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _table(folder: Path) -> pd.DataFrame:
    return load_results(folder)["toy_mdp"]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# ------------------------------------------------------------------------------ the split
UNEQUAL = """
name: unequal
kind: toy_mdp
fixed: {seed: 3, runs: 2}
grid: {mu: [0.1, -0.1, 0.2], episodes: [5, 10, 40]}
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: [2, 3]}
scales: {quick: {}}
"""

# The same config with its keys, axes and lists in another order.
UNEQUAL_REORDERED = """
scales: {quick: {}}
variants:
  - {n: [3, 2], algorithm: maxmin}
  - {n: 1, algorithm: q_learning}
grid: {episodes: [40, 5, 10], mu: [0.2, -0.1, 0.1]}
fixed: {runs: 2, seed: 3}
kind: toy_mdp
name: unequal
"""


@pytest.mark.parametrize("m", [1, 2, 3, 5, 27, 40])
def test_shards_partition_the_runs_whatever_their_order(m, tmp_path):
    import yaml

    config = config_from_document(yaml.safe_load(UNEQUAL), "unequal.yaml")
    runs = config.runs
    assert len(runs) == 27
    shards = [shard_runs(runs, _shard(k, m)) for k in range(1, m + 1)]
    ids = [r.run_id for part in shards for r in part]
    assert sorted(ids) == sorted(r.run_id for r in runs)  # union = all, each once
    assert len(ids) == len(set(ids))
    # the same split from the config written in another order, or its runs shuffled
    other = config_from_document(yaml.safe_load(UNEQUAL_REORDERED), "other.yaml")
    shuffled = list(other.runs)
    random.Random(5).shuffle(shuffled)
    assert assign_shards(shuffled, m) == assign_shards(runs, m)
    # balanced by cost: no shard exceeds another by more than the costliest run
    loads = [sum(run_cost(r) for r in part) for part in shards]
    assert max(loads) - min(loads) <= max(run_cost(r) for r in runs)
    if m <= 27:
        assert all(shards), "a shard without runs while others have several"


def _shard(k: int, m: int):  # noqa: ANN202 - a Shard
    from maxminq.experiments.shard import Shard

    return Shard(k, m)


def test_equal_runs_go_round_the_shards_in_turn():
    """Runs of one cost: shards differ by at most one run (4 runs on 3 machines: 2, 1, 1)."""
    import yaml

    config = config_from_document(yaml.safe_load(TOY_TEXT), "toy.yaml")
    sizes = [len(shard_runs(config.runs, _shard(k, 3))) for k in (1, 2, 3)]
    assert sorted(sizes) == [1, 1, 2]


@pytest.mark.parametrize("shard", ["0/2", "3/2", "1/0", "a/b", "1/2/3", "-1/2", "1.0/2", "2"])
def test_a_bad_shard_is_one_line_naming_it_exit_2_and_nothing_written(shard, tmp_path, capsys):
    (tmp_path / "toy.yaml").write_text(TOY_TEXT)
    out = tmp_path / "out"
    for extra in ([], ["--dry-run"]):
        argv = ["sweep", str(tmp_path / "toy.yaml"), "--out", str(out), f"--shard={shard}"]
        assert main([*argv, *extra]) == 2
        line = _one_line(capsys)
        assert line.startswith("maxminq sweep: error: --shard: expected K/M with 1 <= K <= M")
        assert line.endswith(f"got {shard!r}")
    assert not out.exists()
    with pytest.raises(UsageError, match="^--shard: expected K/M"):
        run_sweep(tmp_path / "toy.yaml", out, shard=shard, progress=False)
    assert not out.exists()


# ------------------------------------------------------------------- shards and merge
def test_two_shards_merged_read_as_the_unsharded_sweep(swept, tmp_path, capsys, unrendered_figures):
    whole, s1, s2 = swept["whole"], swept["s1"], swept["s2"]
    assert _done(s1) and _done(s2) and not _done(s1) & _done(s2)  # disjoint, both worked
    assert _done(s1) | _done(s2) == _done(whole)
    out = tmp_path / "merged"
    assert main(["merge", str(s1), str(s2), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"4 runs, 4 finished (2 from {s1}, 2 from {s2}); 0 left to run" in said
    pd.testing.assert_frame_equal(_table(out), _table(whole), check_exact=True)

    def status(folder: Path, *options: str) -> str:
        assert main(["status", str(folder), *options]) == 0
        return capsys.readouterr().out.replace(str(folder), "FOLDER")

    for options in ((), ("--runs",), ("--verify",)):
        assert status(out, *options) == status(whole, *options)
    assert "shard 1/2 here" in status(s1)  # a shard's folder says so; the merged one not
    for folder in (out, whole):
        assert main(["report", str(folder), "--reps", "100"]) == 0
    capsys.readouterr()
    for name in ("summary/toy_mdp_final.csv",):
        assert (out / name).read_bytes() == (whole / name).read_bytes()

    def report(folder: Path) -> list[str]:  # the header names the folder and the time
        lines = (folder / "report.md").read_text().splitlines()
        return [line for line in lines if "Results folder:" not in line]

    assert report(out) == report(whole)


def test_dry_run_lists_the_shards_runs_whatever_is_done(swept, tmp_path, capsys):
    config = swept["config"]

    def listed(out: Path) -> list[str]:
        assert main(["sweep", str(config), "--out", str(out), "--shard", "2/2", "--dry-run"]) == 0
        return [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]

    fresh = listed(tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()
    assert len(fresh) == 2 and set(fresh) == _done(swept["s2"])
    # the same runs where they are done, and where other shards' runs are done
    assert listed(_copy(swept, "s2", tmp_path / "s2")) == fresh
    merged = tmp_path / "merged"
    merge_folders([swept["s1"]], merged)
    assert listed(merged) == fresh


def test_a_shards_folder_refuses_another_shard_or_none_and_resumes_its_own(swept, tmp_path, capsys):
    s1 = _copy(swept, "s1", tmp_path / "s1")
    before = _snapshot(s1)
    config = str(swept["config"])
    for shard in (["--shard", "2/2"], [], ["--shard", "1/3"]):
        for extra in ([], ["--dry-run"]):
            assert main(["sweep", config, "--out", str(s1), *shard, *extra]) == 2
            line = _one_line(capsys)
            assert line.startswith(f"maxminq sweep: error: --shard: {s1} holds shard 1/2 of ")
            assert "resume it with --shard 1/2" in line
    with pytest.raises(UsageError, match="holds shard 1/2"):
        run_sweep(config, s1, progress=False)
    assert _snapshot(s1) == before  # nothing written
    summary = run_sweep(config, s1, shard="1/2", progress=False)
    assert (summary.total, summary.skipped, summary.done) == (2, 2, 0)


def test_a_run_done_in_both_with_the_same_results_is_taken_once(swept, tmp_path, capsys):
    out = tmp_path / "merged"
    assert main(["merge", str(swept["whole"]), str(swept["s1"]), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "2 finished in several folders with the same results, taken once" in said
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)


def _rewrite_a_table(folder: Path, run_id: str) -> None:
    """The run's table with one value changed, its manifest updated to match: a run that
    verifies, with other numbers (another machine's floating point)."""
    tables = folder / "tables" / run_id
    manifest = json.loads((tables / "manifest.json").read_text())
    entry = manifest["tables"]["toy_mdp"]
    frame = pd.read_csv(tables / entry["file"])
    number = [c for c in frame.columns if frame[c].dtype == float][-1]
    frame.loc[0, number] += 1e-9
    data = frame.to_csv(index=False, lineterminator="\n").encode()
    (tables / entry["file"]).write_bytes(data)
    entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (tables / "manifest.json").write_text(json.dumps(manifest))


def test_a_run_done_in_both_with_different_results_is_refused_or_kept_first(
    swept, tmp_path, capsys
):
    a = _copy(swept, "s1", tmp_path / "a")
    b = _copy(swept, "s1", tmp_path / "b")
    run_id = sorted(_done(a))[0]
    _rewrite_a_table(b, run_id)
    out = tmp_path / "merged"
    assert main(["merge", str(a), str(b), "--out", str(out)]) == 2
    line = _one_line(capsys)
    assert f"run {run_id} finished with different results in {a} and {b} (table toy_mdp" in line
    assert "--keep-first" in line
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["a", "b"]
    assert main(["merge", str(b), str(a), "--out", str(out), "--keep-first"]) == 0
    err = capsys.readouterr().err
    assert f"kept first: run {run_id} finished with different results in {b} and {a}" in err
    pd.testing.assert_frame_equal(_table(out), _table(b), check_exact=True)


def test_pending_or_failed_in_one_folder_and_done_in_another_is_done(swept, tmp_path):
    s2 = _copy(swept, "s2", tmp_path / "s2")
    failed = sorted(_done(swept["s1"]))[0]  # s1's, pending in s2: failed there now
    with ResultsStore(s2) as store:
        store.mark_running(failed)
        store.mark_finished(failed, "failed", "Traceback ...\nRuntimeError: out of memory")
    out = tmp_path / "merged"
    summary = merge_folders([s2, swept["s1"]], out)
    assert (summary.runs, summary.finished) == (4, 4)
    with ResultsStore(out, create=False) as store:
        assert store.counts()["done"] == 4
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)


def test_folders_of_another_config_or_an_edited_one_are_refused(swept, tmp_path, capsys):
    import yaml

    def edited(text: str, scale: str = "quick") -> Path:
        """A copy of s2 whose sweep registered (and planned) the config ``text``, as a
        sweep of it into the folder does before it runs anything."""
        folder = _copy(swept, "s2", tmp_path / f"edited{len(list(tmp_path.iterdir()))}")
        config = config_from_document(yaml.safe_load(text), "toy.yaml", scale)
        with ResultsStore(folder) as store:
            store.register(config.runs)
            record_sweep(store, config.name, scale, config.runs, None)
        return folder

    s1 = swept["s1"]
    mu = TOY_TEXT.replace("mu: [0.1, -0.1]", "mu: [0.1, -0.2]")
    paper = TOY_TEXT.replace("paper: {}", "paper: {fixed: {episodes: 30}}")
    name = TOY_TEXT.replace("name: tiny_toy", "name: other_toy")
    cases = [
        (mu, "quick", "another version of config tiny_toy than {s1}: mu -0.2 (in {s1}: -0.1, 0.1)"),
        (
            paper,
            "paper",
            "another version of config tiny_toy than {s1}: scale paper (in {s1}: quick)",
        ),
        (name, "quick", "hold different configs: other_toy (only in {f})"),
    ]
    out = tmp_path / "merged"
    for text, scale, said in cases:
        folder = edited(text, scale)
        assert main(["merge", str(s1), str(folder), "--out", str(out)]) == 2
        line = _one_line(capsys)
        assert said.format(s1=s1, f=folder) in line, line
        assert not out.exists()


def test_merging_into_an_existing_output_adds_another_machines_runs(swept, tmp_path, capsys):
    out = tmp_path / "merged"
    merge_folders([swept["s1"]], out)  # the first machine's runs; the second's still pending
    assert _done(out) == _done(swept["s1"])
    (out / "notes.txt").write_text("kept\n")
    s2 = _copy(swept, "s2", tmp_path / "s2")
    run_id = sorted(_done(s2))[0]
    logs = s2 / "tensorboard" / run_id
    logs.mkdir(parents=True)
    (logs / "events.out").write_text("log\n")
    assert main(["merge", str(s2), "--out", str(out)]) == 0
    assert "4 runs, 4 finished (2 from " in capsys.readouterr().out
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)
    assert (out / "notes.txt").read_text() == "kept\n"
    assert (out / "tensorboard" / run_id / "events.out").read_text() == "log\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # and a sweep into it has nothing left to do (no shard recorded: any may go on)
    summary = run_sweep(swept["config"], out, progress=False)
    assert (summary.skipped, summary.done) == (4, 0)


# --------------------------------------------------------------- an interrupted merge
def test_ctrl_c_during_a_merge_leaves_the_output_absent_or_as_before(
    swept, tmp_path, monkeypatch, capsys
):
    from maxminq.experiments import merge

    copied = []
    copy_tables = merge._copy_tables

    def interrupted(*args):  # noqa: ANN202
        copied.append(args[1])
        if len(copied) == 3:
            raise KeyboardInterrupt
        return copy_tables(*args)

    monkeypatch.setattr(merge, "_copy_tables", interrupted)
    out = tmp_path / "out" / "merged"
    assert main(["merge", str(swept["s1"]), str(swept["s2"]), "--out", str(out)]) == 130
    assert "interrupted; --out is as it was, or merged whole" in capsys.readouterr().err
    assert len(copied) == 3 and os.listdir(tmp_path / "out") == []  # no OUT, no temporary
    monkeypatch.setattr(merge, "_copy_tables", copy_tables)
    merge_folders([swept["s1"]], out)
    before = _snapshot(out)
    monkeypatch.setattr(merge, "_copy_tables", interrupted)
    copied.clear()
    assert main(["merge", str(swept["s2"]), "--out", str(out)]) == 130
    assert len(copied) == 3 and _snapshot(out) == before
    assert os.listdir(tmp_path / "out") == ["merged"]


KILLED_MERGE = """
import os, signal, sys
from maxminq.experiments import merge

real = getattr(merge, sys.argv[1])
def killed(*args):
    if sys.argv[1] == "_copy_tables" and not hasattr(killed, "once"):
        killed.once = True  # the first run's tables copied, then killed
        real(*args)
        return None
    os.kill(os.getpid(), signal.SIGKILL)
setattr(merge, sys.argv[1], killed)
merge.merge_folders(sys.argv[3:], sys.argv[2])
"""


@pytest.mark.parametrize("moment", ["_copy_tables", "_exchange"])
def test_kill_9_during_a_merge_leaves_the_output_as_before(moment, swept, tmp_path):
    out = tmp_path / "merged"
    merge_folders([swept["s1"]], out)
    before = _snapshot(out)
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_MERGE, moment, str(out), str(swept["s2"])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _snapshot(out) == before
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".merged.merge-")]
    assert len(left) == 1  # the killed merge's temporary folder, beside OUT
    merge_folders([swept["s2"]], out)  # the next merge removes it and merges
    assert [p.name for p in tmp_path.iterdir()] == ["merged"]
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)


# ------------------------------------------------------------------------- reproduce
def test_reproduce_runs_its_shard_only_and_says_how_to_finish(swept, tmp_path, capsys):
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(swept["config"], configs / "tiny_toy.yaml")
    out = tmp_path / "r1"
    argv = ["reproduce", "--configs", str(configs), "--only", "tiny_toy", "--out", str(out)]
    argv += ["--workers", "1"]
    assert main([*argv, "--shard", "4/3"]) == 2
    assert _one_line(capsys).startswith("maxminq reproduce: error: --shard: expected K/M")
    assert not out.exists()
    assert main([*argv, "--shard", "1/2", "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "shard 1/2: 2 runs (of 4), 0 already done, 2 done" in said
    assert "'maxminq merge FOLDER1 FOLDER2 ... --out MERGED', then 'maxminq reproduce" in said
    assert _done(out) == _done(swept["s1"])  # the same split as the sweep's
    assert not (out / "report.html").exists() and not (out / "theory").exists()
    assert main([*argv, "--shard", "2/2"]) == 2
    assert "holds shard 1/2 of config reproduce (tiny_toy)" in _one_line(capsys)


def test_without_an_atomic_exchange_out_moves_aside_for_a_moment_and_comes_back(
    swept, tmp_path, monkeypatch
):
    """On a file system without RENAME_EXCHANGE (NFS) an existing OUT is swapped by two
    renames; a kill between them leaves it aside, and the next merge puts it back."""
    from maxminq.experiments import merge

    monkeypatch.setattr(merge, "_exchange", lambda a, b: False)
    out = tmp_path / "merged"
    merge_folders([swept["s1"]], out)
    merge_folders([swept["s2"]], out)
    assert [p.name for p in tmp_path.iterdir()] == ["merged"]
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)
    # killed after the first rename: OUT aside, no OUT
    aside = tmp_path / ".merged.merge-previous"
    before = _snapshot(out)
    os.rename(out, aside)
    merge_folders([swept["s2"]], out)  # put back first, then merged (nothing new)
    assert not aside.exists()
    pd.testing.assert_frame_equal(_table(out), _table(swept["whole"]), check_exact=True)
    before = _snapshot(out)
    # beside an OUT: which to keep is the user's choice; nothing is deleted
    shutil.copytree(out, aside)
    with pytest.raises(UsageError, match=r"^--out: .*merge-previous is the folder"):
        merge_folders([swept["s2"]], out)
    assert _snapshot(aside) == before == _snapshot(out)


def test_a_folder_of_an_older_maxminq_without_a_plan_is_checked_by_its_runs(swept, tmp_path):
    """A folder swept before sweeps recorded their plan: its registered runs of the config
    stand for it; they must hold the other folders' plan."""
    old = _copy(swept, "whole", tmp_path / "old")
    with ResultsStore(old) as store:
        store.set_meta(dict.fromkeys(store.meta_items("plan:"), None))
    out = tmp_path / "merged"
    summary = merge_folders([old, swept["s2"]], out)
    assert (summary.finished, summary.same_twice) == (4, 2)
    with ResultsStore(out, create=False) as store:  # the recorded plan, not one made up
        plan = json.loads(store.meta("plan:tiny_toy") or "{}")
        assert plan.get("scale") == "quick" and len(plan["runs"]) == 4
    with ResultsStore(old) as store:  # an older folder of an edited config: 3 of 4 runs
        gone = sorted(_done(swept["s2"]))[0]
        store._conn.execute("DELETE FROM members WHERE run_id=?", (gone,))
    with pytest.raises(UsageError, match="holds another version of config tiny_toy"):
        merge_folders([old, swept["s2"]], tmp_path / "other")


def test_a_folder_a_sweep_is_writing_is_refused(swept, tmp_path, capsys):
    s2 = _copy(swept, "s2", tmp_path / "s2")
    out = tmp_path / "merged"
    with ResultsStore(s2, lock=True):  # as a sweep holds it
        assert main(["merge", str(swept["s1"]), str(s2), "--out", str(out)]) == 2
        assert _one_line(capsys).startswith(f"maxminq merge: error: DIR: {s2} is in use by ")
        merge_folders([swept["s1"]], out)
        before = _snapshot(out)
        in_use = pytest.raises(UsageError, match=f"^--out: {out} is in use by")
        with ResultsStore(out, lock=True), in_use:  # a sweep in OUT
            merge_folders([swept["s1"]], out)
    assert _snapshot(out) == before


def test_only_the_temporary_folders_of_killed_merges_are_removed(tmp_path):
    """A merge running now holds its temporary folder's lock until the folder is in place:
    another merge into the same OUT leaves it alone."""
    from maxminq.experiments.merge import remove_killed_merges

    running = tmp_path / ".merged.merge-abc123.tmp"
    killed = tmp_path / ".merged.merge-def456.tmp"
    other = tmp_path / ".other.merge-abc123.tmp"  # a merge into another OUT
    for folder in (killed, other):
        ResultsStore(folder, lock=True).close()
    with ResultsStore(running, lock=True) as store:
        store.close_database()  # as the merge holds it while it renames it
        remove_killed_merges(tmp_path / "merged")
        assert running.is_dir() and not killed.exists() and other.is_dir()


def test_the_documented_shard_dry_run_is_what_the_sweep_prints(tmp_path, monkeypatch, capsys):
    """docs/sweeps.md, "Several machines without a cluster": its --dry-run lines."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "sweeps.md"
    text = docs.read_text().split('<a name="several-machines"></a>', 1)[1]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    command = next(ln for ln in block.splitlines() if ln.endswith("--dry-run"))
    documented = [ln[1:].strip() for ln in block.splitlines() if ln.startswith("#   ")]
    monkeypatch.chdir(tmp_path)
    argv = command.split()[1:]
    argv[1] = str(docs.parents[1] / argv[1])  # configs/catcher.yaml of the checkout
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == documented[0]
    assert printed[1].strip() == documented[1].split("  ... ")[0].strip()
    assert len(printed) == 1 + 30 and not (tmp_path / "results").exists()


def _with_metrics(folder: Path, run_id: str, loss: list[float], speed: list[float]) -> None:
    """Store the run again with a deep run's ``metrics`` table beside its own: the learning
    numbers (``loss``) and the machine's speed (``steps_per_s``)."""
    from maxminq.experiments.config import RunSpec

    with ResultsStore(folder) as store:
        rec = store.get(run_id)
        assert rec is not None
        tables = store.read_tables(run_id)
        tables["metrics"] = pd.DataFrame({"step": [50, 100], "loss": loss, "steps_per_s": speed})
        store.save_tables(RunSpec(run_id, rec.kind, rec.settings, rec.config), tables)


def test_a_run_whose_tables_differ_only_in_its_speed_has_the_same_results(swept, tmp_path):
    """A deep run trained on two machines: its metrics' steps_per_s is each machine's speed
    (it always differs); the rest decides."""
    a = _copy(swept, "s1", tmp_path / "a")
    b = _copy(swept, "s1", tmp_path / "b")
    run_id = sorted(_done(a))[0]
    _with_metrics(a, run_id, [0.5, 0.25], [812.5, 790.0])
    _with_metrics(b, run_id, [0.5, 0.25], [402.0, 415.25])
    summary = merge_folders([a, b], tmp_path / "merged")
    assert summary.same_twice == 2 and not summary.kept_first
    speed = load_results(tmp_path / "merged")["metrics"]["steps_per_s"]
    assert speed.tolist() == [812.5, 790.0]  # the first folder's
    _with_metrics(b, run_id, [0.5, 0.375], [402.0, 415.25])
    with pytest.raises(UsageError, match=f"run {run_id} .* \\(table metrics differs\\)"):
        merge_folders([a, b], tmp_path / "other")
