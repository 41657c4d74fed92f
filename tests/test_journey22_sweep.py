"""Session 22, hE: a researcher reproducing a paper figure through a sweep of their own (a
small noisy Mountain Car grid, a tiny CartPole DQN / Maxmin DQN grid), interrupting and
resuming it, editing the config, running it on Ray and reading the report.

1. A config edited and swept again into its folder (``episodes`` 20 -> 30) was told "OUT
   also holds 18 run(s) of config NAME that it does not make (swept before an edit or at
   another scale)" without a word on what changed; the note now names the settings and
   their values (``episodes 20 (this config: 30)``).
2. More seeds of finished settings, swept as a config of the new seeds alone (what the
   report pools), got the same note, which told the user to use another ``--out``: it now
   says the report pools the seeds of each setting. A deep run's seed list changed from
   [0, 1] to [0, 1, 2] (a new run that trains 0 and 1 again) is told how to add seeds.
3. The report of that edited folder printed one caution line per table row (18 lines, each
   "2 run ids pooled; episodes 20 vs 30"), and its Markdown one paragraph joining them all;
   rows that pool alike are one line now, counting them and naming the first three.
4. A config without ``kind`` or ``scales`` was told "missing required key" only; the line
   now says what to write (the kinds; ``scales: {quick: {}}``).
5. ``--backend ray`` without ``--address`` printed Ray's "INFO ... Started a local Ray
   instance." into the sweep's output (with ``--address`` it was already kept out).
6. Ctrl-C in a deep sweep's first seconds left ``OUT/work/<run_id>/`` empty for every run in
   flight (and so ``OUT/work``).
7. ``maxminq report`` printed an undecided check as 'insufficient data' alone (no Double Q
   runs in a study without Double Q reads as 'run more seeds'), and did not print the boxes
   on deep runs shorter than the paper's or on environments outside it.
8. A variant ``{algorithm: q_learning}`` without the ``n`` the other variants give was told
   'fixed.n: required setting missing': the variant is named now.
9. A quick ``reproduce --configs`` of one's own configs (no paper scale) ended its note with
   'Run `maxminq reproduce --scale paper` for the full reproduction', which refuses them.
10. The deep table's note said '100 test episodes in the paper, fewer at quick scale' of a
    study at no scale: it gives the runs' own count and ε.
11. ``run_sweep(document, out)`` (a parsed config, as docs/sweeps.md offers) failed with
    'expected str, bytes or os.PathLike object, not dict'.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace as R

import pytest
from test_analysis_tables import toy_results

from maxminq.analysis.report import pooled_differences, pooled_summary
from maxminq.cli import main
from maxminq.experiments.config import ConfigError, RunSpec, config_from_document
from maxminq.experiments.store import ResultsStore

# A researcher's own tiny noisy Mountain Car sweep (never run here: registered only).
MC = {
    "name": "my_mc",
    "kind": "mountain_car",
    "fixed": {"seed": 0, "runs": 5, "episodes": 20, "max_steps": 500},
    "grid": {"sigma2": [0, 10], "step_size": [0.02, 0.08]},
    "variants": [{"algorithm": "q_learning", "n": 1}, {"algorithm": "maxmin", "n": [2, 4]}],
    "scales": {"tiny": {}},
}


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


def test_rows_pooling_alike_are_one_caution_line() -> None:
    base = {"algorithm": "maxmin", "n": 2, "sigma2": 0.0, "seed": 0, "runs": 5}
    records = [
        R(kind="mountain_car", settings=base | {"step_size": step, "episodes": episodes})
        for step in (0.01, 0.02, 0.04, 0.08)
        for episodes in (20, 30)
    ]
    # and one row that pools for another reason
    records += [
        R(kind="mountain_car", settings=base | {"n": 4, "step_size": 0.01, "gamma": gamma})
        for gamma in (0.5, 1.0)
    ]
    assert len(pooled_differences(records)) == 5  # one per row, as before
    assert pooled_summary(records) == [
        "mountain_car, 4 rows (algorithm maxmin, n 2, sigma2 0.0, step_size 0.01; algorithm "
        "maxmin, n 2, sigma2 0.0, step_size 0.02; algorithm maxmin, n 2, sigma2 0.0, "
        "step_size 0.04; and 1 more): 2 run ids pooled in each; episodes 20 vs 30",
        "mountain_car (algorithm maxmin, n 4, sigma2 0.0, step_size 0.01): 2 run ids pooled; "
        "gamma 0.5 vs 1.0",
    ]


def toy_store(out: Path, toy, episodes: tuple[int, ...]) -> None:
    """A store of ``toy`` (``toy_results``) rows, one run id per (mu, algorithm, n) and
    value of ``episodes`` (a config swept, edited, swept again)."""
    with ResultsStore(out) as store:
        for (mu, algorithm, n), own in toy.groupby(["mu", "algorithm", "n"]):
            for count in episodes:
                settings = {"mu": mu, "algorithm": algorithm, "n": n, "episodes": count}
                spec = RunSpec(f"toy-{mu}-{algorithm}-{n}-{count}", "toy_mdp", settings, "x")
                store.register([spec])
                store.mark_running(spec.run_id)
                table = own.drop(columns=["run_id", "config", "kind", "mu", "algorithm", "n"])
                store.save_tables(spec, {"toy_mdp": table.reset_index(drop=True)})
                store.mark_finished(spec.run_id, "done")


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


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (
            "kind",
            "kind: missing required key; give the run kind, one of deep, mountain_car, toy_mdp",
        ),  # fmt: skip
        (
            "scales",
            "scales: missing required key; give at least one scale (--scale picks "
            "one; quick is its default), e.g. scales: {quick: {}}",
        ),  # fmt: skip
        ("name", "name: missing required key; give the config a name"),
    ],
)
def test_a_missing_key_is_told_what_to_write(key: str, said: str) -> None:
    doc = {k: v for k, v in MC.items() if k != key}
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, "my.yaml", "tiny")
    assert str(err.value).startswith(f"my.yaml: {said}")
    assert "\n" not in str(err.value)


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


TOY = {
    "name": "my_toy",
    "kind": "toy_mdp",
    "fixed": {"seed": 0, "runs": 2, "episodes": 3, "mu": 0.1},
    "variants": [{"algorithm": "q_learning", "n": 1}, {"algorithm": "maxmin", "n": 2}],
    "scales": {"tiny": {}},
}


def test_ctrl_c_before_a_worker_wrote_anything_leaves_no_empty_folders(tmp_path, monkeypatch):
    """Ctrl-C in a deep sweep's first seconds (its workers still importing torch) left
    OUT/work/<run_id>/ empty for every run in flight, and so OUT/work: nothing to continue
    from. A stand-in backend plays the workers that made their folders, then the Ctrl-C."""
    from maxminq.experiments import runner
    from maxminq.experiments.store import load_results

    class Started:
        workers = 2

        def submit(self, run, work_dir):
            work_dir.mkdir(parents=True, exist_ok=True)  # as a worker does first
            return run.run_id

        def wait(self, handles, timeout):
            raise KeyboardInterrupt

        def abort(self):
            pass

    monkeypatch.setattr(runner, "_make_backend", lambda *a: Started())
    out = tmp_path / "out"
    config = config_from_document(TOY, "toy.yaml", "tiny")
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(config, out, workers=2, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [".sweep.lock", "results.sqlite"]
    with ResultsStore(out) as store:
        assert {r.status for r in store.records()} == {"pending"}
    assert load_results(out) == {}
    # A folder holding something (here a stand-in checkpoint) stays for the next attempt.
    kept = out / "work" / config.runs[0].run_id
    kept.mkdir(parents=True)
    (kept / "checkpoint").mkdir()
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(config, out, workers=2, progress=False)
    assert sorted(p.name for p in (out / "work").iterdir()) == [kept.name]


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_report_says_why_a_check_is_undecided(tmp_path, capsys) -> None:
    """A toy sweep of one's own without Double Q: ``maxminq report`` printed its Double Q
    checks as 'insufficient data' alone, which reads as 'run more seeds'; report.md said
    why. The printed line now says it too."""
    toy = toy_results(runs=2, episodes=10)
    toy_store(tmp_path, toy[toy.algorithm != "double_q"], (10,))
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    undecided = [line for line in printed if line.startswith("  insufficient data")]
    assert (
        "  insufficient data Double Q underestimates Q(A, Left) = μ (μ = +0.1, where it hurts) "
        "(no Double Q runs at μ = +0.1 in this folder)"
    ) in undecided
    assert (
        "  insufficient data Q-learning overestimates Q(A, Left) = μ (μ = +0.1) (2 runs (need 3))"
    ) in undecided


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_the_report_prints_that_deep_runs_are_short_or_off_the_paper(tmp_path, capsys) -> None:
    """A tiny Catcher study (1,500 steps) printed 'supported  Maxmin DQN >= DQN on Catcher'
    on the terminal with no word that its runs are a 2,000th of the paper's; the box saying
    so (and the one on environments the paper did not study) was in report.md alone."""
    from test_analysis_tables import deep_results
    from test_report import write_store

    ids = {"Catcher-v0": "maxminq/Catcher-v0", "Pixelcopter-v0": "CartPole-v1"}
    results = {
        name: df.assign(env_id=df["env_id"].map(ids), config="my_study")
        for name, df in deep_results(seeds=1, lrs=(1e-3,)).items()
    }
    results["tests"] = results["tests"].assign(eval_eps=0.05)  # 5 test episodes per seed
    write_store(tmp_path, results)
    assert main(["report", str(tmp_path), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        "  caution, deep runs shorter than the paper's (the deep claims describe runs of this "
        "length): Catcher 1,000 steps (the paper: 3,500,000)"
    ) in printed
    assert (
        "  note, environments outside the paper (the deep checks carry its statements over "
        "to them): CartPole-v1"
    ) in printed
    # and the deep table's note says how many test episodes these runs played, at which ε
    # (it said '100 in the paper, fewer at quick scale', of a study at no scale)
    text = " ".join((tmp_path / "report.md").read_text(encoding="utf-8").split())
    assert (
        "mean return of the test episodes (ε = 0.05; 5 per seed here, 100 at ε = 0.01 in the paper)"
    ) in text


def test_a_variant_lacking_what_the_others_give_is_named() -> None:
    doc = {**MC, "variants": [{"algorithm": "q_learning"}, {"algorithm": "maxmin", "n": [2, 4]}]}
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, "my.yaml", "tiny")
    assert str(err.value) == (
        "my.yaml: variants[0].n: required setting missing (other variants give it; give it "
        "here too, or in fixed for all)"
    )
    # missing everywhere: the place that gives it to all, as before
    doc = {**MC, "fixed": {k: v for k, v in MC["fixed"].items() if k != "seed"}}
    with pytest.raises(ConfigError, match=r"^my.yaml: fixed.seed: required setting missing$"):
        config_from_document(doc, "my.yaml", "tiny")


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
