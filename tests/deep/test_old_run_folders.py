"""Run folders written by earlier versions (tables without the diverged cause or episode-end
flags, old checkpoints) resume, read, evaluate and plot."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from deep_runs import _cfg
from generalized_runs import _small

from maxminq.deep import load_agent, read_tables, run_training
from maxminq.deep.policy import state_digest, torch_save


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    timing = [c for c in a.columns if c == "steps_per_s"]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing))


@pytest.mark.usefixtures("torch_one_thread")
def test_a_published_runs_table_without_causes_reads_with_empty_ones(tmp_path) -> None:
    """runs.csv of the published runs (and every run before the column) has no
    diverged_cause: read back with '' for each seed, so the column is always there."""
    out = tmp_path / "run"
    run_training(_small(agent="dqn", n=1, steps=70), out, progress=False)
    (out / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n1,diverged,65\n")
    runs = read_tables(out)["runs"]
    assert runs.columns.tolist() == ["seed", "status", "diverged_step", "diverged_cause"]
    assert runs["diverged_cause"].tolist() == ["", ""]


@pytest.mark.usefixtures("torch_one_thread")
def test_published_tests_tables_still_read_without_the_flags():
    tests = read_tables("docs/runs/lunarlander/dqn")["tests"]
    assert list(tests.columns) == ["seed", "episode", "return", "length"]
    assert len(tests) > 0
    assert isinstance(tests, pd.DataFrame)


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_a_checkpoint_of_the_old_format_resumes_to_the_same_tables(tmp_path):
    """A checkpoint written before this session (no diverged_cause; evaluation rows of
    five columns) resumes: every table as an uninterrupted run's, except the flags of the
    evaluations before the checkpoint, which it never recorded (left empty)."""
    cfg = _cfg(checkpoint_every=80)
    whole = run_training(cfg, tmp_path / "whole", progress=False)
    out = tmp_path / "old"
    run_training(cfg, out, progress=False, stop_after=80)
    path = out / "checkpoint" / "state.pt"
    state = torch.load(path, weights_only=True)
    del state["diverged_cause"], state["sha256"]
    state["rows"]["evals"] = [row[:5] for row in state["rows"]["evals"]]
    assert len(state["rows"]["evals"]) == 6  # the evaluation at step 60
    state["sha256"] = state_digest(state)
    torch_save(state, path)
    resumed = run_training(cfg, out, progress=False)
    for name in ("episodes", "tests", "metrics", "runs"):
        _same(resumed[name], whole[name])
    evals, want = resumed["evals"], whole["evals"]
    before = evals["step"] <= 80
    assert before.sum() == 6
    flags = ["terminated", "truncated"]
    assert evals.loc[before, flags].isna().all().all()
    _same(evals.loc[~before].astype({f: bool for f in flags}), want.loc[~before])
    _same(evals.drop(columns=flags), want.drop(columns=flags))
    # its table reads back, the unknown flags empty
    read = read_tables(out)["evals"]
    assert read.loc[read["step"] <= 80, flags].isna().all().all()


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_an_old_finished_folder_reads_evaluates_and_plots(tmp_path, capsys):
    """A finished run written before this session (its tables as then: no diverged_cause,
    no end flags in tests.csv and evals.csv) is read by read_tables, load_agent, maxminq
    evaluate, plot and compare."""
    from maxminq.cli import main

    out = tmp_path / "old"
    run_training(_cfg(steps=130, eval_every=120), out, progress=False)
    for name, drop in (("runs", ["diverged_cause"]), ("tests", ["terminated", "truncated"])):
        table = pd.read_csv(out / f"{name}.csv")
        table.drop(columns=drop).to_csv(out / f"{name}.csv", index=False)
    evals = pd.read_csv(out / "evals.csv")
    evals.drop(columns=["terminated", "truncated"]).to_csv(out / "evals.csv", index=False)
    tables = read_tables(out)
    assert tables["runs"]["diverged_cause"].tolist() == ["", "", ""]
    assert list(tables["tests"].columns) == ["seed", "episode", "return", "length"]
    assert load_agent(out).seeds == [0, 1, 2]
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    assert main(["plot", str(out), "--panels", "return,eval"]) == 0
    assert main(["compare", str(out)]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")
def test_a_seed_diverged_in_an_old_checkpoint_says_its_cause_was_not_recorded(tmp_path):
    """A checkpoint written before the causes were kept, with a seed diverged in it: the
    resumed run's runs table says the cause was not recorded (an empty cell read as a seed
    that never diverged), and the seed that trained on has none."""
    cfg = _cfg(seeds=[0, 1], steps=60, eval_every=0, eval_episodes=0, checkpoint_every=30)
    out = tmp_path / "old"
    run_training(cfg, out, progress=False, stop_after=30)
    path = out / "checkpoint" / "state.pt"
    state = torch.load(path, weights_only=True)
    del state["diverged_cause"], state["sha256"]
    state["active"], state["diverged_step"] = [True, False], [-1, 25]
    state["sha256"] = state_digest(state)
    torch_save(state, path)
    runs = run_training(cfg, out, progress=False)["runs"]
    assert runs["status"].tolist() == ["done", "diverged"]
    assert runs["diverged_step"].tolist() == [-1, 25]
    assert runs["diverged_cause"][0] == ""
    assert runs["diverged_cause"][1].startswith("not recorded: a checkpoint written before")
    assert read_tables(out)["runs"]["diverged_cause"].tolist() == runs["diverged_cause"].tolist()
