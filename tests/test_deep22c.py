"""Session 22, third reading of the deep runs: what a run wrote before this session's
changes (runs.csv without diverged_cause, tests.csv and evals.csv without the episode end
flags, checkpoints without the causes) resumes and reads with today's code; run_training
warns of evaluations rarer than the run is long, as the command did; evals.csv says how
each evaluation episode ended."""

from __future__ import annotations

import dataclasses
import warnings

import pandas as pd
import pytest
import torch

from maxminq.deep import TrainConfig, load_agent, read_tables, run_training
from maxminq.deep.config import NoEvaluationWarning
from maxminq.deep.policy import state_digest, torch_save

# The runs' episodes are cut at 12 steps on purpose (the flags' test): no bias numbers.
pytestmark = pytest.mark.filterwarnings("ignore::maxminq.deep.bias_probes.CutEpisodesWarning")


def _cfg(**kw) -> TrainConfig:
    """Three seeds of a tiny Maxmin DQN on CartPole, with evaluations during training whose
    episodes are cut at 12 steps (some end, some are cut)."""
    base = dict(
        env_id="CartPole-v1",
        agent="maxmin-dqn",
        n=2,
        seeds=[0, 1, 2],
        steps=160,
        learning_starts=40,
        bias_every=40,
        target_update=40,
        hidden=8,
        eval_episodes=2,
        eval_every=60,
        eval_every_episodes=2,
        max_episode_steps=12,
        checkpoint_every=0,
    )
    base.update(kw)
    return TrainConfig(**base)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    timing = [c for c in a.columns if c == "steps_per_s"]
    pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing))


def test_evals_table_says_how_each_evaluation_episode_ended(tmp_path):
    evals = run_training(_cfg(), tmp_path / "run", progress=False)["evals"]
    assert list(evals.columns)[-2:] == ["terminated", "truncated"]
    assert len(evals) == 3 * 2 * 2  # steps 60 and 120, two episodes, three seeds
    # cut at the 12-step limit exactly when it lasted 12 steps; shorter ones ended
    assert evals["truncated"].tolist() == (evals["length"] == 12).tolist()
    assert evals.loc[evals["length"] < 12, "terminated"].all()
    assert evals["truncated"].any() and evals["terminated"].any()
    read = read_tables(tmp_path / "run")["evals"]
    assert read["truncated"].tolist() == evals["truncated"].tolist()


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


def test_run_training_warns_of_evaluations_rarer_than_the_run_is_long(tmp_path, capsys):
    from maxminq.cli import main

    cfg = _cfg(seeds=[0], steps=50, eval_every=60, eval_episodes=0)
    with pytest.warns(NoEvaluationWarning) as caught:
        tables = run_training(cfg, tmp_path / "py", progress=False)
    assert tables["evals"].empty
    said = [str(w.message) for w in caught if w.category is NoEvaluationWarning]
    text = "--eval-every 60 > --steps 50: no evaluation runs (evals.csv holds only its header)"
    assert said == [text]
    with warnings.catch_warnings():  # an evaluation at the last step: no warning
        warnings.simplefilter("error", NoEvaluationWarning)
        run_training(dataclasses.replace(cfg, steps=60), tmp_path / "at_end", progress=False)
    # the command shows it once, as its one line
    argv = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--steps", "50", "--hidden", "8"]
    argv += ["--learning-starts", "40", "--eval-every", "60", "--eval-episodes", "0"]
    assert main([*argv, "--no-progress", "--no-plot", "--out", str(tmp_path / "cli")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "--eval-every" in line]
    assert err == ["maxminq train: warning: " + text]


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
