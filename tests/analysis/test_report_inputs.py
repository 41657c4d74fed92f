"""``maxminq report`` given what it cannot report on: an experiment or train-run folder, an
empty results store, outputs it cannot write; one line saying what to run instead."""

from __future__ import annotations

import pytest
from run_folders import finished_run  # noqa: E402

from maxminq.cli import main  # noqa: E402


def test_report_of_an_experiment_folder_says_what_to_run(tmp_path, capsys) -> None:
    """``maxminq report results/toy_mdp`` (the folder 'maxminq experiment toy-mdp' wrote, a
    newcomer's first reproduction) said only "holds neither results.sqlite ... nor
    theory/bias.csv; nothing to report"; now it says whose output it is and which command
    puts that experiment into a report."""
    out = tmp_path / "toy"
    out.mkdir()  # what the command leaves (its settings.json names the experiment)
    (out / "settings.json").write_text('{"experiment": "toy-mdp", "runs": 5000}')
    (out / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"maxminq report: error: DIR: {out} holds the output of 'maxminq "
                          "experiment toy-mdp'")  # fmt: skip
    assert "'maxminq reproduce --only toy_mdp'" in err
    assert not (out / "report.html").exists()


@pytest.mark.parametrize("nested", [False, True])
def test_report_of_a_folder_of_train_runs_points_to_compare(nested: bool, tmp_path, capsys) -> None:
    """``maxminq report runs`` on a folder of 'maxminq train' runs (flat, or laid out as
    docs/runs is, <env>/<run>) named no command that reads them; now it names compare and
    plot with two of its runs (of one environment folder), and --published for the nested
    layout only (the one --published takes)."""
    root = tmp_path / "runs"
    base = root / "lunar" if nested else root
    for agent in ("dqn", "maxmin"):
        finished_run(base / agent, [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    if nested:
        finished_run(root / "cart" / "dqn", [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    assert main(["report", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    # nested: the environment folder with two runs (cart/ has one), not the first found
    assert f"(e.g. 'maxminq compare {base / 'dqn'} {base / 'maxmin'}')" in err, err
    assert ("--published" in err) is nested


def test_report_on_an_empty_results_store_says_so_and_writes_nothing(tmp_path, capsys) -> None:
    """A results.sqlite of 0 bytes (a sweep stopped before setting it up, a lost registry)
    read as no store: 'maxminq report' wrote a report of nothing and exited 0, where
    'maxminq status' called the store damaged. With theory tables beside it the report
    held the theory alone, silently without the sweep's runs."""
    (tmp_path / "results.sqlite").write_bytes(b"")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"maxminq report: error: DIR: {tmp_path / 'results.sqlite'} is empty (a sweep stopped "
        f"before setting it up, or a lost registry): no runs to report; run the sweep into "
        f"{tmp_path} again (the runs whose tables verify are kept, the others run again)"
    ]
    (tmp_path / "theory").mkdir()
    (tmp_path / "theory" / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n")
    assert main(["report", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith("; or move it aside to report the theory alone"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite", "theory"]


def test_report_refuses_outputs_it_cannot_write_before_any_work(tmp_path, capsys) -> None:
    """figures/ a file: every figure 'not drawn' in the report, exit 0; report.md a folder:
    'report.md: Is a directory' after the figures and tables were written."""
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    (theory / "figures").write_text("")
    assert main(["report", str(theory), "--reps", "100"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq report: error: DIR: {theory / 'figures'} exists and is not a folder"
    ]
    (theory / "figures").unlink()
    (theory / "report.md").mkdir()
    assert main(["report", str(theory), "--reps", "100"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq report: error: DIR: {theory / 'report.md'} is a folder; the report writes a "
        "file there"
    ]
    assert sorted(p.name for p in theory.iterdir()) == ["bias.csv", "report.md"]
