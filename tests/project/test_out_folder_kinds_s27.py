"""The commands that write a folder (train, sweep, reproduce, theory, experiment) refuse a
folder that holds another command's output, as the commands that read folders (report,
plot, merge) refuse one of the wrong kind: one line naming --out and what the folder holds,
exit 2, nothing written. Before, ``maxminq train --out`` on a sweep's folder trained and
wrote its run beside results.sqlite (then 'maxminq plot' read the folder as the run and
'maxminq report' as the sweep), and a sweep or the theory wrote into a train run."""

from __future__ import annotations

from pathlib import Path

from run_folders import finished_run

from maxminq.cli import main
from maxminq.experiments.store import ResultsStore

THEORY = ["--m-max", "2", "--n-max", "2", "--samples", "3", "--variance-samples", "3"]
THEORY += ["--mc-m", "1", "--no-progress"]
TOY = ["--runs", "1", "--episodes", "2", "--mu", "0.1", "--algorithms", "q_learning"]
TOY += ["--workers", "1", "--no-progress"]
TRAIN = ["train", "--env", "CartPole-v1", "--steps", "50", "--no-progress"]


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_writers_refuse_a_folder_of_another_commands_output(tmp_path, capsys, unrendered_figures):
    run = finished_run(
        tmp_path / "run", [(0, 10, 0.5, 3)], steps=10, train={0: (10, 1.0)}, tests={0: 1.0}
    )
    sweep = tmp_path / "sweep"
    ResultsStore(sweep).close()  # an empty sweep folder: results.sqlite, as a sweep sets up
    part = sweep / "tables" / "toy_mdp-0123456789ab"  # one run's tables in it
    part.mkdir(parents=True)
    (part / "manifest.json").write_text("{}")
    toy, theory = tmp_path / "toy", tmp_path / "theory"
    assert main(["experiment", "toy-mdp", *TOY, "--out", str(toy)]) == 0
    assert main(["theory", "--out", str(theory), *THEORY]) == 0
    capsys.readouterr()
    before = {f: _files(f) for f in (run, sweep, toy, theory)}

    cases = [
        ([*TRAIN, "--out", str(sweep)], sweep, "results.sqlite", "train"),
        ([*TRAIN, "--out", str(toy)], toy, "experiment toy-mdp", "train"),
        ([*TRAIN, "--out", str(theory)], theory, "maxminq theory", "train"),
        (["theory", "--out", str(run), *THEORY], run, "'maxminq train' run", "theory"),
        (["theory", "--out", str(toy), *THEORY], toy, "experiment toy-mdp", "theory"),
        (["experiment", "toy-mdp", *TOY, "--out", str(run)], run, "train", "experiment toy-mdp"),
        (
            ["experiment", "mountain-car", "--out", str(toy)],
            toy,
            "toy-mdp",
            "experiment mountain-car",
        ),
        (["reproduce", "--only", "theory", "--out", str(run)], run, "train", "reproduce"),
        ([*TRAIN, "--out", str(part)], part, "part of a sweep's folder", "train"),
        (["theory", "--out", str(part.parent), *THEORY], part.parent, "tables/", "theory"),
    ]
    for argv, folder, holds, writer in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert err.startswith(f"maxminq {argv[0]}: error: --out: {folder} holds "), err
        assert holds in err and f"give 'maxminq {writer}" in err, err
        assert "a folder of its own" in err, err
    assert {f: _files(f) for f in (run, sweep, toy, theory)} == before

    # each still writes into a folder of its own kind (theory beside a sweep's runs, as
    # 'maxminq report' reads them together)
    assert main(["theory", "--out", str(theory), *THEORY]) == 0
    assert main(["theory", "--out", str(sweep), *THEORY]) == 0
    assert (sweep / "bias.csv").is_file()
    # and an experiment beside a sweep's runs: both default to results/toy_mdp
    # (test_out_folder_sweep_and_experiment_s27.py)
    assert main(["experiment", "toy-mdp", *TOY, "--out", str(sweep)]) == 0
    assert (sweep / "settings.json").is_file() and (sweep / "results.sqlite").is_file()
    capsys.readouterr()

    # a results folder with reproduce's theory/: its report reads that, not tables beside it
    (sweep / "theory").mkdir()
    assert main(["theory", "--out", str(sweep), *THEORY]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"'maxminq report' reads; give --out {sweep / 'theory'}\n"), err
    assert main(["theory", "--out", str(sweep / "theory"), *THEORY]) == 0
