"""The first hour of a new user on the command line: the slips one makes while reading
README.md from the top (a mistyped command or option, a count written as 1e5, a folder of
the wrong kind given as RUN_DIR, seeds the run did not train, more seeds than memory) each
end in one line that names the option and says what to give instead."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from run_folders import finished_run
from sweep_kinds import tiny_train

from maxminq.cli import main


def _error(capsys) -> str:
    """The only line on stderr (nothing on stdout)."""
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert out == ""
    return lines[0]


def _exit_status(argv: list[str]) -> int:
    """main's exit status, also when argparse ends it with SystemExit."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def _folders(root: Path) -> dict[str, Path]:
    """Folders a new user gives as RUN_DIR by mistake, each as the command that wrote it
    leaves it (the marker files only)."""
    toy = root / "toy"
    toy.mkdir()
    (toy / "settings.json").write_text(json.dumps({"experiment": "toy-mdp", "runs": 3}))
    (toy / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    theory = root / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N\n")
    (theory / "variance.csv").write_text("N\n")
    (root / "file.txt").write_text("x")
    runs = root / "runs"
    for name in ("dqn", "maxmin"):
        finished_run(runs / name, [(0, 1000, -1.0, 5)], steps=1000, train={0: (1000, 1.0)},
                     tests={0: 1.0})  # fmt: skip
    return {
        "missing": root / "missing",
        "file": root / "file.txt",
        "toy": toy,
        "theory": theory,
        "parent": runs,
    }


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["trian"], "maxminq: error: COMMAND: unknown 'trian'; did you mean train? (choose from "),
        (["Train"], "maxminq: error: COMMAND: unknown 'Train'; did you mean train? (choose from "),
        (["help"], "maxminq: error: COMMAND: unknown 'help'; 'maxminq --help' lists the commands"),
        (
            ["experiment", "toy_mdp"],
            "maxminq experiment: error: EXPERIMENT: unknown 'toy_mdp'; did you mean toy-mdp? "
            "(choose from toy-mdp, mountain-car)",
        ),
        (
            ["experiment", "--quick"],
            "maxminq experiment: error: the following arguments are required: EXPERIMENT "
            "(toy-mdp or mountain-car)",
        ),
        (
            ["experiment", "toy-mdp", "--quik"],
            "maxminq experiment: error: unrecognized arguments: --quik (did you mean --quick?)",
        ),
        (
            ["theory", "--out", "x", "--outt", "y"],
            "maxminq theory: error: unrecognized arguments: --outt (did you mean --out?) y",
        ),
        (
            ["envs", "--format", "yaml"],
            "maxminq envs: error: --format: unknown 'yaml' (choose from table, json)",
        ),
    ],
)
def test_a_mistyped_word_gets_a_did_you_mean(argv, expected, tmp_path, monkeypatch, capsys):
    """argparse said "invalid choice" or "unrecognized arguments" and left the user to find
    the word meant; a missing EXPERIMENT did not say which there are."""
    monkeypatch.chdir(tmp_path)
    assert _exit_status(argv) == 2
    assert _error(capsys).startswith(expected)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1e5", "--steps: expected a whole number, got '1e5' (write 100000)"),
        ("1,500,000", "--steps: expected a whole number, got '1,500,000' (write 1500000)"),
        ("2.5", "--steps: expected a whole number, got '2.5'"),
    ],
)
def test_a_count_argparse_cannot_read_is_named_like_every_other_error(
    value, expected, tmp_path, capsys
):
    """'argument --steps: invalid int value: '1e5'' was argparse's wording, unlike the
    '--option: expected ..., got ...' of every other error, and did not say how to write it."""
    argv = ["train", "--env", "CartPole-v1", "--out", str(tmp_path / "r"), "--steps", value]
    assert _exit_status(argv) == 2
    assert _error(capsys) == f"maxminq train: error: {expected}"
    assert _exit_status([*argv[:-2], "--lr", "abc"]) == 2  # the same --out as above
    assert _error(capsys) == "maxminq train: error: --lr: expected a number, got 'abc'"
    assert not (tmp_path / "r").exists()


def test_evaluate_names_every_seed_the_run_did_not_train(tmp_path, capsys):
    """'--seeds 0-4' on a run of seeds 0 and 1 said 'not 2', as if only seed 2 were missing."""
    argv, _ = tiny_train(200, bias_every=100)  # seeds 0 and 1, model.pt included
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--seeds", "0-4", "--no-progress"]) == 2
    assert _error(capsys) == (
        "maxminq evaluate: error: --seeds: this run trained seeds 0, 1; not 2, 3, 4"
    )
    assert main(["evaluate", str(tmp_path / "run"), "--seeds", "1", "--episodes", "1"]) == 0
    assert "seed 1: return" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["plot", "compare", "evaluate"])
def test_a_folder_that_is_not_a_run_is_named_for_what_it_is(command, tmp_path, capsys):
    """plot and compare said 'X holds no finished deep run (runs.csv with the config.json
    ...)' of a folder that does not exist, of the output of 'maxminq experiment' or 'maxminq
    theory' and of the folder holding the runs; evaluate said 'X/model.pt not found'."""
    folders = _folders(tmp_path)
    expected = {
        "missing": f"{folders['missing']} does not exist",
        "file": f"{folders['file']} is a file; give the folder 'maxminq train --out' wrote",
        "toy": f"{folders['toy']} holds the output of 'maxminq experiment toy-mdp'",
        "theory": f"{folders['theory']} holds the output of 'maxminq theory'",
        "parent": f"{folders['parent']} holds no run itself but 2 run folders: "
        f"{folders['parent'] / 'dqn'} {folders['parent'] / 'maxmin'}",
    }
    for key, folder in folders.items():
        assert main([command, str(folder)]) == 2
        line = _error(capsys)
        assert line.startswith(f"maxminq {command}: error: RUN_DIR: {expected[key]}"), line
        if key in ("toy", "theory"):
            reads = f"'maxminq {command}' reads the runs of 'maxminq train' (deep agents)"
            assert line.endswith(reads)
    assert not (folders["toy"] / "curves.png").exists()


def test_evaluate_on_a_sweep_run_says_where_the_networks_are_kept(tmp_path, capsys):
    """A sweep's tables/<run_id> holds no model.pt: '... model.pt not found; it is written
    when maxminq train finishes a run' did not say that --keep-work keeps it elsewhere."""
    tables = tmp_path / "sweep" / "tables" / "deep-0123"
    finished_run(tables, [(0, 1000, -1.0, 5)], steps=1000, train={0: (1000, 1.0)}, tests={0: 1.0})
    (tables / "config.json").unlink()  # a sweep's run folder has its manifest instead
    (tables / "manifest.json").write_text(json.dumps({"kind": "deep", "settings": {}}))
    (tmp_path / "sweep" / "results.sqlite").write_bytes(b"")
    assert main(["evaluate", str(tables)]) == 2
    line = _error(capsys)
    assert "holds a sweep run's tables, not its networks" in line
    assert "'maxminq sweep --keep-work'" in line and str(tmp_path / "sweep/work/deep-0123") in line
    assert main(["evaluate", str(tmp_path / "sweep")]) == 2
    assert "is a sweep folder; a sweep keeps its runs' tables, not their networks" in _error(capsys)


def test_compare_csv_in_a_new_folder_is_written_as_plot_and_evaluate_do(tmp_path, capsys):
    """'compare --csv new/c.csv' was refused ('the folder ... does not exist') where 'plot
    --out new/f.png' and 'evaluate --csv new/e.csv' create the folder."""
    runs = []
    for k, score in enumerate((1.0, 3.0)):
        runs.append(tmp_path / f"run{k}")
        train = {0: (1000, score), 1: (1000, score)}
        finished_run(runs[-1], [(0, 1000, -1.0, 5), (1, 1000, -2.0, 5)], steps=1000,
                     train=train, tests={0: score, 1: score + 1})  # fmt: skip
    csv = tmp_path / "new" / "deeper" / "c.csv"
    assert main(["compare", *map(str, runs), "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert list(table["mean"]) == [1.5, 3.5]  # the seeds' test returns, averaged by hand
    assert f"table written to {csv}" in capsys.readouterr().out


def test_more_seeds_than_memory_is_refused_before_out_is_touched(tmp_path, capsys):
    """'--seeds 0-20000' on CartPole reached 15 GB before its first step (on the way to the
    OOM killer), and '--seeds 0-100000000' spent a minute building the list of seeds."""
    out = tmp_path / "run"
    base = ["train", "--env", "CartPole-v1", "--agent", "dqn", "--out", str(out)]
    assert main([*base, "--seeds", "0-100000000"]) == 2
    assert _error(capsys) == (
        "maxminq train: error: --seeds: 0-100000000 is more than 1,000,000 seeds, which one run "
        "cannot hold (each seed has an environment and replay buffer of its own)"
    )
    # 10^6 seeds x 10,000 transitions x (2 x 4 float32 + int64 + 2 float32) = 480 GB
    assert main([*base, "--seeds", "0-999999", "--steps", "20000"]) == 2
    line = _error(capsys)
    assert line.startswith(
        "maxminq train: error: --seeds: the replay buffers of 1000000 seeds x 10,000 "
        "transitions need 480 GB, more than this machine's"
    ), line
    assert not out.exists()


def test_env_id_in_the_wrong_case_gets_a_suggestion(tmp_path, capsys) -> None:
    # 'lunarlander' (how people write it) got no suggestion where 'LunarLander' got one.
    out = tmp_path / "unused"
    assert main(["train", "--env", "lunarlander", "--steps", "10", "--out", str(out)]) == 2
    assert "did you mean LunarLander-v" in _error(capsys)
    assert not out.exists()


def test_unknown_agent_gets_a_suggestion_and_a_plain_list(tmp_path, capsys) -> None:
    # 'maxmin' printed "choose one of ('dqn', 'ddqn', ...)", a Python tuple, and no guess.
    out = tmp_path / "x"
    assert main(["train", "--env", "CartPole-v1", "--agent", "maxmin", "--out", str(out)]) == 2
    err = _error(capsys)
    assert "did you mean maxmin-dqn?" in err and "('dqn'" not in err, err
    assert "dqn, ddqn, maxmin-dqn, averaged-dqn, ensemble-dqn" in err, err
    assert not out.exists()
