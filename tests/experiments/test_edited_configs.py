"""A researcher's sweep of their own, edited and swept again into its folder: the note names
the settings that changed and their values (it said only that OUT holds runs the config does
not make), more seeds of finished settings are no edit to warn of (the report pools the
seeds of each setting), the report of an edited folder says its caution once (not one line
per table row), a local Ray of its own keeps its INFO lines out of the sweep's output, and
``run_sweep`` takes a parsed config document as docs/sweeps.md offers.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as R

import pytest
from analysis_results import toy_results
from sweep_configs import MC, TOY, toy_store

from maxminq.cli import main
from maxminq.experiments.config import ConfigError, RunSpec, config_from_document
from maxminq.experiments.store import ResultsStore


def edited(doc: dict, **fixed: object) -> dict:
    """``doc`` with ``fixed`` settings changed, as a user edits a config."""
    return {**doc, "fixed": {**doc["fixed"], **fixed}}


def swept(out: Path, doc: dict) -> None:
    """Register ``doc``'s runs in ``out``'s store, as a sweep of it left them (the note
    reads which runs a folder holds, not their tables)."""
    config = config_from_document(doc, "c.yaml", "tiny")
    with ResultsStore(out) as store:
        store.register(list(config.runs))


def dry_run_note(tmp_path: Path, doc: dict, out: Path, capsys) -> str:
    """What ``maxminq sweep CONFIG --dry-run`` prints on stderr for ``doc``."""
    import yaml

    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["sweep", str(path), "--scale", "tiny", "--out", str(out), "--dry-run"]) == 0
    return capsys.readouterr().err


def test_an_edited_config_is_told_which_settings_its_old_runs_have(tmp_path, capsys):
    out = tmp_path / "out"
    swept(out, MC)
    err = dry_run_note(tmp_path, edited(MC, episodes=30), out, capsys)
    assert "also holds 12 run(s) of config my_mc that it does not make" in err
    assert "they differ in episodes 20 (this config: 30))" in err
    assert "use another --out to keep them apart" in err
    # A step size taken out of the grid: its old value, and what the config has now.
    doc = {**MC, "grid": {**MC["grid"], "step_size": [0.02]}}
    err = dry_run_note(tmp_path, doc, out, capsys)
    assert "also holds 6 run(s)" in err and "step_size 0.08 (this config: 0.02)" in err
    # A step size added: the old runs are all made again, nothing to note.
    doc = {**MC, "grid": {**MC["grid"], "step_size": [0.02, 0.04, 0.08]}}
    assert "note" not in dry_run_note(tmp_path, doc, out, capsys)


def test_new_seeds_of_finished_settings_are_no_edit_to_warn_of(tmp_path, capsys):
    from maxminq.commands.sweep import stale_note

    def deep_runs(seeds: list[int]) -> R:
        """A deep config's runs (settings as a sweep stores them; no environment built)."""
        runs = [
            RunSpec(f"deep-{agent}-{seeds}", "deep", {"agent": agent, "seeds": seeds}, "my_deep")
            for agent in ("dqn", "maxmin-dqn")
        ]
        return R(name="my_deep", runs=runs)

    out = tmp_path / "out"
    with ResultsStore(out) as store:
        store.register(deep_runs([0, 1]).runs)
    note = stale_note(out, deep_runs([2]))
    assert note is not None and "also holds 2 run(s) of config my_deep with other seeds" in note
    assert "the report pools the seeds of each setting" in note
    assert "another --out" not in note
    # [0, 1] -> [0, 1, 2]: a new run training 0 and 1 again, pooled twice by the report.
    note = stale_note(out, deep_runs([0, 1, 2]))
    assert note is not None and "seeds [0, 1] (this config: [0, 1, 2])" in note
    assert "to add seeds to finished runs, sweep a config with only the new seeds" in note
    # A tabular run's seed alike (its runs are the streams (seed, 0), (seed, 1), ...).
    out = tmp_path / "mc"
    swept(out, MC)
    err = dry_run_note(tmp_path, edited(MC, seed=1), out, capsys)
    assert "with other seeds, seed 0 (this config: 1): the report pools" in err


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_report_of_an_edited_folder_says_its_caution_once(tmp_path, capsys) -> None:
    toy = toy_results(runs=2, episodes=10)
    toy_store(tmp_path, toy, (10, 20))
    rows = toy.groupby(["mu", "algorithm", "n"]).ngroups
    assert rows > 3
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    cautions = [line for line in printed if "caution" in line]
    assert len(cautions) == 1, cautions  # before: one line per row
    assert cautions == [
        f"  caution, runs of different experiments pooled: toy_mdp, {rows} rows ("
        + cautions[0].split(" rows (", 1)[1].split("):")[0]
        + "): 2 run ids pooled in each; episodes 10 vs 20"
    ]
    assert f"and {rows - 3} more" in cautions[0]
    md = (tmp_path / "report.md").read_text()
    assert md.count("episodes 10 vs 20") == 1


def test_a_local_ray_of_its_own_keeps_its_info_lines_out(monkeypatch) -> None:
    """Ray's logging level is what decides the "Started a local Ray instance." INFO line;
    a stand-in ray module records what ``ray.init`` is asked (no Ray started)."""
    import logging

    from maxminq.experiments import runner

    asked: dict = {}
    ray = R(is_initialized=lambda: False, init=lambda **kw: asked.update(kw))
    backend = runner._RayBackend.__new__(runner._RayBackend)
    backend._init(ray, 2, None)
    assert asked["address"] == "local" and asked["num_cpus"] == 2
    assert asked.get("logging_level") == logging.WARNING


def test_run_sweep_takes_a_parsed_document(tmp_path, monkeypatch) -> None:
    """docs/sweeps.md: 'From Python, a config is a file or a parsed document (a dict)'; but
    run_sweep(dict, out) failed with 'expected str, bytes or os.PathLike object, not dict'."""
    from maxminq.experiments import runner

    class Stopped:  # stands in for the workers: Ctrl-C as soon as runs are in flight
        workers = 1

        def submit(self, run, work_dir):
            return run.run_id

        def wait(self, handles, timeout):
            raise KeyboardInterrupt

        def abort(self):
            pass

    monkeypatch.setattr(runner, "_make_backend", lambda *a: Stopped())
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(TOY, out, scale="tiny", progress=False)
    with ResultsStore(out) as store:
        assert sorted(r.settings["algorithm"] for r in store.records("my_toy")) == [
            "maxmin",
            "q_learning",
        ]
    # checked as a file is, and named in its errors; nothing written
    bad = edited(TOY, episodes=0)
    with pytest.raises(ConfigError, match=r"^<config document>: fixed\.episodes: "):
        runner.run_sweep(bad, tmp_path / "bad", scale="tiny", progress=False)
    with pytest.raises(TypeError, match="expected a config file's path, a parsed document"):
        runner.run_sweep(42, tmp_path / "bad", progress=False)  # type: ignore[arg-type]
    assert not (tmp_path / "bad").exists()
