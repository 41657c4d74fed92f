"""``maxminq reproduce``: --only names, configs of one's own beside the shipped ones, its
help, and runs stored under an older id."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from analysis_results import toy_results
from sweep_configs import TOY_NAMED_SCALED as OWN
from sweep_configs import _config, _hash_id, _store_finished, toy_store

from maxminq.cli import main
from maxminq.commands import reproduce
from maxminq.commands.reproduce import combined_sweep, register_runs
from maxminq.experiments.config import RunSpec
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore


def _reproduce_args(**given: object) -> argparse.Namespace:
    """``maxminq reproduce``'s parsed options (its defaults), with ``given`` over them."""
    parser = argparse.ArgumentParser()
    reproduce.add_arguments(parser)
    args = parser.parse_args([])
    for key, value in given.items():
        setattr(args, key, value)
    return args


def test_only_runs_its_config_beside_one_without_the_scale(tmp_path, monkeypatch) -> None:
    """A study's configs/ holds one config with a quick scale and one with only its own
    ('tiny'). Before, ``--only mine`` stopped at the other one: 'configs/other.yaml:
    scales: no scale 'quick''."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="quick"))
    (tmp_path / "configs" / "other.yaml").write_text(OWN.format(name="other", scale="tiny"))
    _, _, configs, with_theory, _ = reproduce.plan(_reproduce_args(only="mine", out=tmp_path / "o"))
    assert [c.name for c in configs] == ["mine"]
    assert not with_theory


def test_only_a_shipped_name_missing_from_own_configs_says_how(tmp_path, monkeypatch, capsys):
    """``--only toy_mdp`` where ./configs (read instead of the shipped configs) has no
    toy_mdp: the error names the shipped config and the --configs that runs it. Before, the
    folder's other config stopped it first (no 'quick' scale), and once that was fixed the
    error listed only the folder's names, as if maxminq had no toy_mdp."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="tiny"))
    assert main(["reproduce", "--only", "toy_mdp", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    package = reproduce.package_configs_dir()
    assert err.startswith("maxminq reproduce: error: --only: unknown name(s) toy_mdp; ")
    assert "expected comma-separated names from: mine, theory; " in err
    assert f"add --configs {package} to run the shipped toy_mdp" in err
    assert "no scale 'quick'" not in err  # the shipped name: the other config is beside it
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_only_an_unknown_name_also_names_a_config_that_did_not_load(
    tmp_path, monkeypatch, capsys
) -> None:
    """A name that is no file's may be the name inside a config that did not load at this
    scale: the error says which one did not, as it is not read otherwise."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text(OWN.format(name="study", scale="tiny"))
    assert main(["reproduce", "--only", "study", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--only: unknown name(s) study; expected comma-separated names from: a, theory" in err
    assert "; not read at --scale quick: configs/a.yaml: scales: no scale 'quick'" in err
    assert "--configs" not in err  # no shipped config of that name


def test_the_shipped_config_hint_adds_configs_beside_ones_own(tmp_path, monkeypatch, capsys):
    """The hint's command is run as given: it must do what it says."""
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN.format(name="mine", scale="quick"))
    assert main(["sweep", "configs/toy_mdp.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err
    package = reproduce.package_configs_dir()
    command = f"maxminq reproduce --only toy_mdp --configs {package}"
    assert f"'{command}' runs it from any folder" in err
    argv = shlex.split(command)[1:]  # the hint's command (less the program), parsed
    parser = argparse.ArgumentParser()
    reproduce.add_arguments(parser)
    args = parser.parse_args([*argv[1:], "--out", str(tmp_path / "o")])
    _, _, configs, _, _ = reproduce.plan(args)
    assert [c.name for c in configs] == ["toy_mdp"]
    # the report of an experiment's folder gives the same command
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "settings.json").write_text('{"experiment": "toy-mdp"}')
    assert main(["report", str(tmp_path / "exp")]) == 2
    assert f"('{command}' runs it into one)" in capsys.readouterr().err


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_a_quick_reproduction_of_own_configs_is_not_sent_to_scale_paper(tmp_path) -> None:
    """``maxminq reproduce --configs myconfigs`` (configs with a quick scale only): the
    report ended 'Run `maxminq reproduce --scale paper` for the full reproduction', which
    refuses those configs ('no scale paper')."""
    import json

    from maxminq.analysis.report import build_report

    toy_store(tmp_path, toy_results(runs=2, episodes=10), (10,))
    meta = {"scale": "quick", "configs": [{"name": "x", "kind": "toy_mdp", "runs": 8}]}
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    build_report(tmp_path, reps=100)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Its configs have no `paper` scale, so `maxminq reproduce --scale paper`" in text
    assert "for the full reproduction" not in text
    meta["configs"][0]["paper"] = "runs: 5000"  # a config with a paper scale, as shipped
    (tmp_path / "reproduce.json").write_text(json.dumps(meta))
    build_report(tmp_path, reps=100)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Run `maxminq reproduce --scale paper` for the full reproduction." in text


def test_reproduce_leaves_no_run_pending_beside_the_one_stored_under_its_older_id(
    tmp_path: Path,
) -> None:
    """A folder holding a finished run under its older id (checkpoint_every 50): reproduce's
    registration and sweep find it done and register nothing else, so no run is left
    pending (the report's caution would say a rerun completes it; it never would)."""
    config = _config(tmp_path, ", checkpoint_every: 50")
    (run,) = config.runs
    legacy = RunSpec(_hash_id("deep", run.settings), run.kind, run.settings, run.config)
    assert legacy.run_id != run.run_id
    out = tmp_path / "out"
    _store_finished(out, legacy)
    register_runs(out, [config])
    summary = run_sweep(combined_sweep([config], "quick"), out, workers=1, progress=False)
    assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0)
    with ResultsStore(out, create=False) as store:
        records = store.records()
    assert [(r.run_id, r.status) for r in records] == [(legacy.run_id, "done")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_reproduce_help_lists_the_names_only_takes(capsys) -> None:
    """``reproduce --help`` lists, under --only, 'theory' and every config installed with
    the package (those of its configs folder). Before, the
    names were found only in the error of a wrong one."""
    import maxminq
    from maxminq.cli import main

    shipped = sorted((Path(maxminq.__file__).parent / "configs").glob("*.yaml"))
    assert len(shipped) >= 10
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    only = text[text.index("--only NAMES ") : text.index("--configs DIR ")]
    assert "theory" in only
    for path in shipped:
        assert f" {path.stem}," in only or f" {path.stem} " in only, (path.stem, only)


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGHUP")
def test_reproduce_help_lists_the_names_of_the_folder_only_reads(
    tmp_path, monkeypatch, capsys
) -> None:
    """In a folder with a ``configs`` folder of its own (which reproduce reads without
    --configs), ``--help`` lists its names under --only, not the installed configs, which
    ``--only`` then refuses. Before (185a74a), the installed ones, whatever the folder."""
    from maxminq.cli import main

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "my_sweep.yaml").write_text("name: my_sweep\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    only = text[text.index("--only NAMES ") : text.index("--configs DIR ")]
    assert only.endswith("those of the default --configs (configs): my_sweep "), only
    assert "catcher" not in only
