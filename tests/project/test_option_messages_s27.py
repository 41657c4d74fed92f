"""The same bad value of an option several commands share is the same one line in each:
--workers (sweep, reproduce: 'expected an integer >= 1, got 0'; experiment: 'expected a
whole number >= 1, got '0'') and --seed (theory: 'expected a non-negative integer';
compare and experiment: 'expected a whole number >= 0')."""

from __future__ import annotations

from helpers import REPO
from run_folders import finished_run

from maxminq.cli import main


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"maxminq {argv[0]}: error: "), err
    return err.partition(": error: ")[2]


def test_workers_and_seed_read_alike_in_every_command(tmp_path, capsys):
    out = ["--out", str(tmp_path / "out")]
    toy = ["experiment", "toy-mdp", "--runs", "1", "--episodes", "2", "--no-progress", *out]
    with_workers = [
        ["sweep", str(REPO / "configs" / "toy_mdp.yaml"), "--dry-run", *out],
        ["reproduce", "--only", "theory", "--no-progress", *out],
        toy,
    ]
    for value in ("0", "abc"):
        said = {_error(capsys, [*argv, "--workers", value]) for argv in with_workers}
        assert said == {f"--workers: expected a whole number >= 1, got '{value}'\n"}

    run = finished_run(
        tmp_path / "run", [(0, 10, 0.5, 3)], steps=10, train={0: (10, 1.0)}, tests={0: 1.0}
    )
    with_seed = [
        ["theory", "--m-max", "2", "--n-max", "2", "--no-progress", *out],
        ["compare", str(run)],
        toy,
    ]
    said = {_error(capsys, [*argv, "--seed", "-1"]).replace("'", "") for argv in with_seed}
    assert said == {"--seed: expected a whole number >= 0, got -1\n"}
    assert not (tmp_path / "out").exists()
