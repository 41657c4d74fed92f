"""``maxminq experiment toy-mdp`` splits a setting of many runs into tasks, as Mountain Car
does: one setting of 5,000 runs was one task, so ``--workers 2`` left a core idle on it
and the progress bar stood at 0 until the whole setting was done. The split changes no
number: run r keeps its stream (seed, r), and the CSV is what one unsplit batch gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from maxminq.cli import main
from maxminq.commands import experiment
from maxminq.tabular.toy_mdp import run_toy_mdp

ARGV = ["experiment", "toy-mdp", "--runs", "5", "--episodes", "4", "--mu", "0.1", "-0.1",
        "--algorithms", "q_learning", "maxmin:2", "--workers", "1", "--no-progress"]  # fmt: skip


def _spy_tasks(monkeypatch) -> list[dict]:  # type: ignore[no-untyped-def]
    """The tasks the command hands to its real task runner."""
    seen: list[dict] = []
    real = experiment._run_tasks

    def spy(fn, tasks, *rest):  # type: ignore[no-untyped-def]
        seen.extend(tasks)
        return real(fn, tasks, *rest)

    monkeypatch.setattr(experiment, "_run_tasks", spy)
    return seen


def test_a_setting_of_many_runs_is_split_and_its_csv_is_the_unsplit_batchs(
    tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(experiment, "TOY_CHUNK_RUNS", 2)
    tasks = _spy_tasks(monkeypatch)
    assert main([*ARGV, "--out", str(tmp_path)]) == 0
    # 5 runs in chunks of at most 2: three tasks per setting, runs 0-1, 2, 3-4
    assert len(tasks) == 4 * 3
    for k in range(0, len(tasks), 3):
        part = tasks[k : k + 3]
        assert [(t["run_offset"], t["runs"]) for t in part] == [(0, 2), (2, 1), (3, 2)]
        assert len({(t["mu"], t["algorithm"], t["n"]) for t in part}) == 1
    out = capsys.readouterr().out
    assert "toy MDP: 4 settings (q_learning, maxmin:2) x 5 runs x 4 episodes simulated" in out

    csv = pd.read_csv(tmp_path / "toy_mdp.csv")
    for (mu, algorithm, n), got in csv.groupby(["mu", "algorithm", "n"], sort=False):
        whole = run_toy_mdp(mu=mu, algorithm=algorithm, n=n, runs=5, episodes=4, seed=0)
        assert got["run"].tolist() == whole["run"].tolist()
        assert got["episode"].tolist() == whole["episode"].tolist()
        for column in ("p_left", "distance", "q_a_left"):  # the CSV's float32 digits
            np.testing.assert_allclose(got[column], whole[column], rtol=1e-6, atol=1e-7)


def test_runs_gone_non_finite_are_counted_once_per_setting_over_its_chunks(
    tmp_path, capsys, monkeypatch
) -> None:
    """Step size 3 makes Q-learning's runs diverge (from episode 30 at seed 0): the note
    names the setting once with its runs out of all 5, not once per chunk out of 2."""
    monkeypatch.setattr(experiment, "TOY_CHUNK_RUNS", 2)
    argv = ["experiment", "toy-mdp", "--runs", "5", "--episodes", "40", "--mu", "0.1",
            "--algorithms", "q_learning", "--step-size", "3", "--workers", "1",
            "--no-progress"]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path)]) == 0
    whole = run_toy_mdp(mu=0.1, algorithm="q_learning", n=1, runs=5, episodes=40, seed=0,
                        step_size=3.0)  # fmt: skip
    values = whole[["p_left", "distance", "q_a_left"]].to_numpy(dtype=float)
    bad = whole[~np.isfinite(values).all(axis=1)]
    assert not bad.empty  # the premise: some runs diverge
    gone, first = bad["run"].nunique(), int(bad["episode"].min())
    err = capsys.readouterr().err
    assert err.count("q_learning at mu = +0.1") == 1, err
    assert (
        f"q_learning at mu = +0.1: {gone} of 5 runs went non-finite (NaN or inf) from episode "
        f"{first}"
    ) in err


def test_a_setting_above_the_chunk_size_is_two_tasks(tmp_path, monkeypatch) -> None:
    """1,001 runs of one setting (the default chunk: 1,000): two tasks, runs 0-499 and
    500-1,000, which two workers run at once (it was one task of 1,001 runs)."""
    tasks = _spy_tasks(monkeypatch)
    argv = ["experiment", "toy-mdp", "--runs", "1001", "--episodes", "1", "--mu", "0.1",
            "--algorithms", "q_learning", "--workers", "1", "--no-progress"]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path)]) == 0
    assert [(t["run_offset"], t["runs"]) for t in tasks] == [(0, 500), (500, 501)]
    csv = pd.read_csv(tmp_path / "toy_mdp.csv")
    assert csv["run"].tolist() == list(range(1001))


def test_a_session_gs_one_large_setting_still_runs_in_this_process(tmp_path) -> None:
    """A G of a notebook's (``__main__``) in one setting of 1,001 runs with ``--workers 2``:
    one setting ran in the command's own process, where ``__main__`` has G; split into two
    tasks it would need the worker processes, which cannot import it. It stays one task."""
    from helpers import stdin_session

    code = """
    import numpy as np
    from maxminq.cli import main

    def median_q(q):
        return np.median(q, axis=-2).max(axis=-1)

    print("rc", main(["experiment", "toy-mdp", "--algorithms", "__main__:median_q:3",
                      "--runs", "1001", "--episodes", "1", "--mu", "0.1", "--workers", "2",
                      "--no-progress", "--out", "toy"]))
    """
    proc = stdin_session(code, tmp_path)
    assert "rc 0" in proc.stdout.splitlines(), proc.stdout + proc.stderr
    assert "(1 worker(s))" in proc.stdout
    assert len((tmp_path / "toy" / "toy_mdp.csv").read_text().splitlines()) == 1 + 1001
