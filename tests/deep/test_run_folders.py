"""Reading run folders: damaged tables, folders of another kind or of many runs, a lost
model; each named in one line saying what to do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from deep_runs import _run
from generalized_runs import _small
from run_folders import finished_run

import maxminq.analysis as analysis
from maxminq.cli import main
from maxminq.deep import read_tables, run_training
from maxminq.errors import UsageError


def _not_runs(root: Path) -> dict[str, tuple[Path, str]]:
    """Folders of another kind given as RUN_DIR, each with the start of what the error must
    say of it."""
    stopped = finished_run(root / "stopped", [(0, 1000, -1.0, 5)], steps=1000,
                           train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    (stopped / "runs.csv").unlink()  # as while it trains, or once stopped
    (stopped / "checkpoint").mkdir()
    (stopped / "checkpoint" / "state.pt").write_bytes(b"a checkpoint")
    done = finished_run(root / "done", [(0, 1000, -1.0, 5)], steps=1000,
                        train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    (done / "checkpoint").mkdir()
    (done / "checkpoint" / "state.pt").write_bytes(b"a checkpoint")
    work = root / "sweep" / "work" / "deep-0123"  # a sweep's deep run, stopped
    work.mkdir(parents=True)
    (work / "config.json").write_text((stopped / "config.json").read_text())
    (root / "sweep" / "results.sqlite").write_bytes(b"")
    toy = root / "sweep" / "tables" / "toy_mdp-0123"  # a sweep's tabular run
    toy.mkdir(parents=True)
    (toy / "manifest.json").write_text('{"run_id": "toy_mdp-0123", "kind": "toy_mdp"}')
    (toy / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    return {
        "stopped": (stopped, f"{stopped} holds a run that has not finished training"),
        "work": (work, f"{work} holds a run that has not finished training"),
        "checkpoint": (
            done / "checkpoint",
            f"{done / 'checkpoint'} is a run's checkpoint; give the run's folder, {done}",
        ),
        "toy": (
            toy,
            f"{toy} holds a sweep's toy_mdp run, not a deep agent's ('maxminq report "
            f"{root / 'sweep'}' draws the sweep's figures)",
        ),
    }


@pytest.mark.usefixtures("torch_one_thread")
def test_read_tables_takes_a_str_as_its_docs_call_it_and_refuses_none_in_one_line(
    tmp_path,
) -> None:
    """docs/deep-agents.md calls read_tables("runs/maxmin"), which its hint (pathlib.Path)
    refused under mypy; None was a TypeError from pathlib."""
    import typing

    from maxminq.deep.run_folder import read_tables as read

    assert str in typing.get_args(typing.get_type_hints(read)["out_dir"])
    out = tmp_path / "run"
    run_training(_small(agent="dqn", n=1, steps=70, seeds=[0]), out, progress=False)
    assert read(str(out))["runs"]["seed"].tolist() == [0]
    with pytest.raises(UsageError, match=r"^out_dir: expected a path \(a str or pathlib\.Path\)"):
        read(None)


@pytest.mark.parametrize("command", ["evaluate", "compare", "plot"])
def test_a_folder_of_another_kind_is_named_for_what_it_is(command, tmp_path, capsys) -> None:
    """evaluate said '.../model.pt not found' of these, plot and compare '... holds no
    finished deep run'; a stopped run's folder gets the way to continue it."""
    for key, (folder, expected) in _not_runs(tmp_path).items():
        assert main([command, str(folder)]) == 2, key
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        assert err.startswith(f"maxminq {command}: error: RUN_DIR: {expected}"), err
        if key == "stopped":
            assert "the same 'maxminq train' command with --resume continues" in err
        if key == "work":  # the sweep continues its own runs
            assert "the same 'maxminq sweep' command continues" in err
    assert not list(tmp_path.rglob("*.png"))  # plot drew nothing


@pytest.mark.parametrize("name", ["compare_runs", "plot_runs"])
def test_the_python_api_names_a_folder_as_the_command_does(name, tmp_path) -> None:
    """compare_runs and plot_runs said '... holds no finished deep run' of a folder that
    does not exist and of any other folder that maxminq compare and plot name."""
    fn = getattr(analysis, name)
    command = name.removesuffix("_runs")
    missing = tmp_path / "missing"
    with pytest.raises(UsageError, match=f"^RUN_DIR: {re.escape(str(missing))} does not exist$"):
        fn([missing])
    for folder, expected in _not_runs(tmp_path).values():
        with pytest.raises(UsageError) as info:
            fn(folder)
        assert str(info.value).startswith(f"RUN_DIR: {expected}")
    toy = tmp_path / "sweep" / "tables" / "toy_mdp-0123"
    with pytest.raises(UsageError, match=f"'maxminq {command}' reads the runs of 'maxminq train'"):
        fn([toy])


@pytest.mark.parametrize(
    "call, option",
    [
        (lambda fn, run: fn(5), "RUN_DIR"),
        (lambda fn, run: fn([run, None]), "RUN_DIR"),
        (lambda fn, run: fn([bytes(run)]), "RUN_DIR"),
        (lambda fn, run: fn(""), "RUN_DIR"),  # the current folder
        (lambda fn, run: fn([run, ""]), "RUN_DIR"),
    ],
)
@pytest.mark.parametrize("name", ["compare_runs", "plot_runs"])
def test_a_folder_that_is_no_path_is_refused_naming_run_dir(name, call, option, tmp_path) -> None:
    """A TypeError naming nothing, or '' read as the current folder (which the command line
    refuses: 'expected a value, got an empty string')."""
    run = finished_run(tmp_path / "run", [(0, 1000, -1.0, 5)], steps=1000,
                       train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    with pytest.raises(UsageError, match=f"^{option}: expected "):
        call(getattr(analysis, name), run)


@pytest.mark.parametrize(
    "damage, what",
    [
        (lambda p: p.write_text(""), "is empty"),
        (lambda p: p.write_bytes(p.read_bytes()[:-3]), "is cut short"),
        (lambda p: p.write_text("seed,status,diverged_step\n"), "has a header but no rows"),
    ],
)
def test_a_damaged_runs_table_says_to_copy_or_train_again(damage, what, tmp_path, capsys):
    run = _run(tmp_path / "run")
    damage(run / "runs.csv")
    assert main(["compare", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run / 'runs.csv'} {what}" in err, err
    assert err.endswith(
        "copy it again from the original, or train the run again ('maxminq train' with the "
        f"options in {run / 'config.json'}, and --overwrite)\n"
    ), err


def test_a_damaged_table_of_a_sweep_says_to_run_the_sweep_again(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    run = _run(sweep / "tables" / "deep-0123")
    (run / "config.json").unlink()  # a sweep's table folder has none
    (run / "metrics.csv").write_text("")
    expected = (
        f"RUN_DIR: {run / 'metrics.csv'} is empty; copy it again from the original, or run "
        f"the sweep again ('maxminq sweep' with its config and --out {sweep}: it reruns "
        "this run)"
    )
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}$"):
        read_tables(run, "RUN_DIR")


@pytest.mark.parametrize("command", ["plot", "compare"])
def test_a_folder_of_runs_shows_the_command_taking_them(command, tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    for name in ("dqn", "maxmin"):
        _run(runs / name)
    assert main([command, str(runs)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq {command}: error: RUN_DIR: {runs} holds no run itself but 2 run folders: "
        f"{runs / 'dqn'} {runs / 'maxmin'}; give them as RUN_DIRs: "
        f"'maxminq {command} {runs / 'dqn'} {runs / 'maxmin'}'\n"
    )


def test_many_run_folders_are_given_as_a_pattern_when_it_matches_them_all(tmp_path, capsys):
    runs = tmp_path / "runs"
    for env in ("cart", "lunar", "acro"):
        for agent in ("dqn", "maxmin"):
            _run(runs / env / agent)
    assert main(["plot", str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"; give them as RUN_DIRs: 'maxminq plot {runs}/*/*'\n"), err
    (runs / "cart" / "notes").mkdir()  # the pattern would now take a folder that is no run
    assert main(["plot", str(runs)]) == 2
    err = capsys.readouterr().err
    first = " ".join(str(runs / p) for p in ("acro/dqn", "acro/maxmin", "cart/dqn", "cart/maxmin"))
    assert err.endswith(f"; give them as RUN_DIRs: 'maxminq plot {first} ...'\n"), err


def test_evaluate_on_a_folder_of_runs_says_to_evaluate_one(tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    for name in ("dqn", "maxmin"):
        _run(runs / name)
    assert main(["evaluate", str(runs)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"; evaluate one of them, e.g. 'maxminq evaluate {runs / 'dqn'}'\n"), err


def test_a_finished_run_without_its_model_says_it_was_lost(tmp_path, capsys) -> None:
    """model.pt is written before runs.csv, so a finished run without it lost it since (a
    copy that left it out); 'it is written when maxminq train finishes a run' read as if
    the run had not finished."""
    run = _run(tmp_path / "run")
    assert main(["evaluate", str(run)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq evaluate: error: RUN_DIR: {run / 'model.pt'} not found, though the run "
        "finished (runs.csv is there): it was left out of a copy or deleted; copy it again, "
        "or train the run again (--overwrite); plot and compare read the run without it\n"
    )
