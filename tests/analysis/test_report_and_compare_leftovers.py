"""Session 23, the analysis and report leftovers of session 22.

1. The report's Mountain Car section names the runs whose weights went non-finite (NaN or
   inf): their step tables look like any failing run's, only the final weights (read by the
   sweep into its registry note) tell them. Their steps count as recorded in the choice of
   the best step size (said under the table).
2. An operator's parameters (op_kwargs) read as the labels give them (``c=10``), not as
   JSON (``{"c": 10.0}``), wherever the report names a setting.
3. ``maxminq compare`` takes a keyword given at its default value as the same environment
   where the defaults can be read without importing a module of the user's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from run_folders import finished_run

from maxminq.analysis import claims as C
from maxminq.analysis import report as R
from maxminq.analysis import tables as T
from maxminq.analysis.compare import compare_runs
from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.experiments import runner
from maxminq.experiments.store import ResultsStore

# --- 1. Mountain Car runs whose weights went non-finite --------------------------------------

# Q-learning at sigma^2 = 50 with step size 2 (its weights go NaN/inf within 3 episodes) and
# at 0.02 (finite): the sweep notes the first from the final weights.
MC = {
    "name": "mc_blowup",
    "kind": "mountain_car",
    "fixed": {"seed": 0, "runs": 2, "episodes": 3, "sigma2": 50, "max_steps": 300},
    "grid": {"step_size": [2.0, 0.02]},
    "variants": [{"algorithm": "q_learning", "n": 1}],
    "scales": {"tiny": {}},
}


@pytest.fixture(scope="module")
def mc_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The sweep run once and its report: (folder, report.md, report.html)."""
    out = tmp_path_factory.mktemp("mc_nonfinite") / "out"
    runner.run_sweep(MC, out, scale="tiny", workers=1, progress=False)
    R.build_report(out, reps=50)
    return out, (out / "report.md").read_text(), (out / "report.html").read_text()


def _gone_run(out: Path) -> tuple[str, pd.DataFrame]:
    """The run id at step size 2, whose registry note says its weights went non-finite,
    and its stored table."""
    with ResultsStore(out, create=False) as store:
        recs = {r.settings["step_size"]: r for r in store.records()}
        assert "2 of 2 runs went non-finite" in (recs[2.0].error or "")
        assert recs[0.02].error is None
        return recs[2.0].run_id, store.read_tables(recs[2.0].run_id)["mountain_car"]


def _item(out: Path) -> str:
    """How the report names the run gone non-finite, its cap count taken from the stored
    steps here."""
    _, table = _gone_run(out)
    last = table.sort_values("episode").groupby("run").tail(1)
    at_cap = int((last["steps"] >= 300).sum())
    return (
        "Q-learning at σ² = 50, step size 2: 2 of 2 runs (last episode at the 300-step cap "
        f"in {at_cap} of 2)"
    )


def test_mountain_car_section_names_runs_whose_weights_went_nonfinite(mc_report) -> None:
    out, md, html = mc_report
    item = _item(out)
    section = md.split("### Mountain Car (steps in the last training episode")[1]
    section = section.split("\n#", 1)[0]  # up to the next heading
    notes = [line for line in section.splitlines() if "went non-finite" in line]
    assert len(notes) == 1, section  # before: no word of them
    note = notes[0]
    assert item in note and "step size 0.02" not in note
    assert "the best step size per algorithm and σ² is chosen with them in" in note
    assert item in html  # the HTML report says it too
    claims = md.split("### Mountain Car (")[1].split("###")[0]  # the claims of sigma^2 = 50
    assert f"Runs compared here whose weights went non-finite (NaN or inf): {item}" in claims


def test_report_command_prints_them(mc_report, capsys) -> None:
    """'maxminq report DIR' printed the claims these runs enter, not the runs ('maxminq
    sweep' and 'reproduce' name them as they run; a report rebuilt later did not)."""
    out, _, _ = mc_report
    assert main(["report", str(out), "--reps", "100"]) == 0
    printed = capsys.readouterr().out.splitlines()
    notes = [line for line in printed if "non-finite" in line]
    assert notes == [f"  note, Mountain Car, weights gone non-finite: {_item(out)}"]


def test_report_lists_toy_settings_gone_nonfinite_one_line_each() -> None:
    """The toy MDP's lines for the command: the settings its table's note names, each alone
    (Q-learning: run 1 NaN from episode 3; Maxmin N = 2: runs 0 and 2 inf from 2 and 4)."""
    rows = []
    for algo, n, gone in (("q_learning", 1, {1: 3}), ("maxmin", 2, {0: 2, 2: 4})):
        for run in range(3):
            for ep in range(1, 6):
                q = np.inf if run in gone and ep >= gone[run] else 0.05
                rows.append((0.1, algo, n, run, ep, 0.5, 0.5, q))
    toy = pd.DataFrame(rows, columns=["mu", "algorithm", "n", "run", "episode", "p_left",
                                      "distance", "q_a_left"])  # fmt: skip
    assert R._toy_nonfinite_lines(toy) == [
        "Q-learning: 1 of 3 runs at mu = +0.1 went non-finite, at episode 3",
        "Maxmin Q (N=2): 2 of 3 runs at mu = +0.1 went non-finite, at episodes 2 to 4",
    ]


def test_a_best_step_size_with_runs_gone_nonfinite_is_marked() -> None:
    """The note marks a run among the table's best step sizes (its mean counts them) and
    names runs in the table's order (Q-learning before Averaged Q before Maxmin)."""

    def rec(run_id: str, algorithm: str, n: int, step: float, note: str) -> SimpleNamespace:
        settings = {"algorithm": algorithm, "n": n, "sigma2": 10.0, "step_size": step}
        return SimpleNamespace(
            run_id=run_id, kind="mountain_car", status="done", settings=settings, error=note
        )

    note = "{} went non-finite (NaN or inf weights) by episode 5"
    records = [
        rec(
            "m",
            "maxmin",
            4,
            0.08,
            "maxmin, n 4, sigma2 10, step_size 0.08: " + note.format("1 of 3 runs"),
        ),
        rec("a", "averaged", 2, 0.02, "averaged: " + note.format("3 of 3 runs")),
        rec("q", "q_learning", 1, 0.08, None),  # finite: no note
    ]
    rows = [(i, a, n, 10.0, s, run, 5, 100 + run) for i, a, n, s in
            [("m", "maxmin", 4, 0.08), ("a", "averaged", 2, 0.02), ("q", "q_learning", 1, 0.08)]
            for run in range(3)]  # fmt: skip
    mc = pd.DataFrame(rows, columns=["run_id", "algorithm", "n", "sigma2", "step_size", "run",
                                     "episode", "steps"])  # fmt: skip
    best = pd.DataFrame({"algorithm": ["maxmin"], "n": [4], "sigma2": [10.0], "step_size": [0.08]})
    items = R.mountain_car_nonfinite_items(records, mc, best)
    assert items == [
        "Averaged Q (K=2) at σ² = 10, step size 0.02: 3 of 3 runs",
        "Maxmin Q (N=4) at σ² = 10, step size 0.08: 1 of 3 runs (a best step size in the table)",
    ]
    assert R.mountain_car_nonfinite_note(records[2:]) == ""  # none gone: no note


def test_claims_note_names_only_the_runs_the_checks_compare() -> None:
    """Under the claims: the non-finite runs among the settings they compare (each
    algorithm's best at the highest σ², and all at the largest step size), not a run at a
    step size neither check uses. Steps per run are set here: at σ² = 50 Q-learning is best
    at 0.01 and went non-finite at 0.02 (neither best nor largest) and at 0.04 (largest)."""
    steps = {
        ("maxmin", 2, 0.01): 200, ("maxmin", 2, 0.02): 150, ("maxmin", 2, 0.04): 180,
        ("q_learning", 1, 0.01): 300, ("q_learning", 1, 0.02): 900, ("q_learning", 1, 0.04): 5000,
    }  # fmt: skip
    rows = [
        (f"{a}-{s}", a, n, 50.0, s, run, ep, 5000, value + run)
        for (a, n, s), value in steps.items()
        for run in range(3)
        for ep in (1, 2)
    ]
    mc = pd.DataFrame(rows, columns=["run_id", "algorithm", "n", "sigma2", "step_size", "run",
                                     "episode", "max_steps", "steps"])  # fmt: skip
    note = "q_learning: 3 of 3 runs went non-finite (NaN or inf weights) by episode 2"
    records = [
        SimpleNamespace(run_id=f"q_learning-{s}", kind="mountain_car", status="done",
                        settings={"algorithm": "q_learning", "n": 1, "sigma2": 50.0,
                                  "step_size": s}, error=note)
        for s in (0.02, 0.04)
    ]  # fmt: skip
    text = R._mc_claims_nonfinite(records, T.Tables(mountain_car=mc))
    assert "Q-learning at σ² = 50, step size 0.04: 3 of 3 runs" in text
    assert "step size 0.02" not in text


def test_mountain_car_claims_name_the_k_chosen_for_averaged_q() -> None:
    """The checks take each algorithm's best N too: Maxmin's was named (N=4), Averaged Q's
    K was not ('Averaged Q step size 0.01', at paper scale one of K = 2, 4, 6, 8)."""
    steps = {("maxmin", 4): 150, ("averaged", 2): 400, ("averaged", 4): 250}
    rows = [
        (a, n, 50.0, s, run, 1, value + run + (100 if s == 0.02 else 0))
        for (a, n), value in steps.items()
        for s in (0.01, 0.02)
        for run in range(3)
    ]
    mc = pd.DataFrame(rows, columns=["algorithm", "n", "sigma2", "step_size", "run", "episode",
                                     "steps"])  # fmt: skip
    (claim,) = [
        c for c in C.mountain_car_claims(mc) if "Averaged Q's" in c.text and "best" in c.text
    ]
    assert claim.evidence.endswith(
        "settings: Maxmin step size 0.01, N=4; Averaged Q step size 0.01, K=4"
    )


# --- 2. op_kwargs as the labels write them ---------------------------------------------------


def _record(kind: str, settings: dict, config: str = "cfg") -> SimpleNamespace:
    return SimpleNamespace(kind=kind, settings=settings, config=config)


def test_settings_table_writes_operator_parameters_as_labels_do() -> None:
    base = {"algorithm": "weighted_double_q", "n": 2, "mu": 0.1, "runs": 3}
    records = [
        _record("toy_mdp", {**base, "op_kwargs": {"c": 10.0}}),
        _record("toy_mdp", {**base, "op_kwargs": {"c": 1.0}}),
        _record("toy_mdp", {**base, "algorithm": "maxmin"}),
    ]
    (row,) = R._settings_rows(records)
    assert "op_kwargs: c=1, c=10" in row[3] and "{" not in row[3]
    assert R.setting_texts([{"k": 2, "w": 0.5}, None], "op_kwargs") == ["unset", "k=2,w=0.5"]
    assert R.setting_text({}, "op_kwargs") == "none"


def test_final_performance_tables_write_operator_parameters_as_labels_do() -> None:
    # Mountain Car: one row per (algorithm, sigma2, op_kwargs), stored JSON as a sweep's
    best = pd.DataFrame({
        "algorithm": "weighted_double_q", "n": 2, "sigma2": 10.0, "step_size": 0.02,
        "op_kwargs": ['{"c":100.0}', '{"c":5.0}', '{"c":20.0}'], "runs": 3, "mean": 150.0,
        "se": 1.0, "iqm": 150.0, "iqm_low": 149.0, "iqm_high": 151.0,
    })  # fmt: skip
    head, rows = R._mc_table(best, ["op_kwargs"])
    column = head.index("op_kwargs")
    assert [r[column] for r in rows] == ["c=5", "c=20", "c=100"]  # by value, as the legends
    # toy MDP
    toy = pd.DataFrame(
        [(0.1, "weighted_double_q", 2, kw, run, ep, 0.5, 0.5, 0.1)
         for kw in ('{"c":10.0}', '{"c":1.0}') for run in range(3) for ep in range(1, 11)],
        columns=["mu", "algorithm", "n", "op_kwargs", "run", "episode", "p_left", "distance",
                 "q_a_left"],
    )  # fmt: skip
    head, rows, _ = R._toy_table(toy, ["op_kwargs"])
    assert [r[head.index("op_kwargs")] for r in rows] == ["c=1", "c=10"]
    # deep (a generalized-dqn run's G keys its rows)
    deep = pd.DataFrame({
        "env_id": "CartPole-v1", "agent": "generalized-dqn", "n": 2, "lr": 1e-3,
        "operator": "my_ops:f", "op_kwargs": ['{"w":0.7}', '{"w":0.25}'], "runs": 2,
        "mean": 1.0, "se": 0.1, "iqm": 1.0, "iqm_low": 0.9, "iqm_high": 1.1,
    })  # fmt: skip
    head, rows = R._deep_table(deep, ["operator", "op_kwargs"])
    assert [r[head.index("op_kwargs")] for r in rows] == ["w=0.25", "w=0.7"]


# --- 3. compare: a keyword at its default is the same environment ----------------------------


def _run(folder: Path, env_kwargs: dict | None, env_id: str = "CartPole-v1") -> Path:
    """A finished two-seed DQN run on ``env_id`` trained with ``env_kwargs``."""
    return finished_run(
        folder, [(0, 50, 0.5, 3), (1, 50, 0.4, 3)], steps=100,
        train={0: (90, 1.0), 1: (95, 2.0)}, tests={0: 1.0, 1: 3.0}, env_id=env_id,
        extra={"env_kwargs": env_kwargs},
    )  # fmt: skip


def test_compare_takes_a_keyword_at_its_default_as_the_same_environment(tmp_path, capsys):
    # CartPole-v1's constructor: sutton_barto_reward=False
    plain = _run(tmp_path / "plain", None)
    given = _run(tmp_path / "given", {"sutton_barto_reward": False})
    assert main(["compare", str(plain), str(given)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CartPole-v1, final score per seed")
    table = compare_runs([plain, given])  # the Python API too
    assert list(table["mean"]) == [2.0, 2.0]
    # a registered spec's own keywords count as defaults: FrozenLake-v1 registers map_name
    # '4x4'; a tuple default (reward_schedule) equals the JSON list a run stores
    lake = _run(tmp_path / "lake", None, "FrozenLake-v1")
    same = _run(
        tmp_path / "lake4", {"map_name": "4x4", "reward_schedule": [1, 0, 0]}, "FrozenLake-v1"
    )
    assert len(compare_runs([lake, same])) == 2


def test_compare_names_the_keyword_that_differs_with_its_default(tmp_path, capsys):
    plain = _run(tmp_path / "plain", None)
    other = _run(tmp_path / "other", {"sutton_barto_reward": True})
    assert main(["compare", str(plain), str(other)]) == 2
    assert capsys.readouterr().err == (
        f"maxminq compare: error: RUN_DIR: {other} ran CartPole-v1 with --env-kwargs "
        f'{{"sutton_barto_reward": true}}, {plain} with none; returns of different '
        "environments cannot be compared (they differ in sutton_barto_reward true vs false "
        "(default))\n"
    )
    lake = _run(tmp_path / "lake", None, "FrozenLake-v1")
    eight = _run(tmp_path / "lake8", {"map_name": "8x8"}, "FrozenLake-v1")
    with pytest.raises(UsageError, match=r'map_name "8x8" vs "4x4" \(default\)'):
        compare_runs([lake, eight])


def test_compare_keeps_its_message_where_defaults_would_import_the_users_module(tmp_path):
    """'module:Name-v0' is not imported to read its defaults: the message says what to do."""
    given = _run(tmp_path / "given", {"n": 6}, "my_pkg_never_imported:Chain-v0")
    plain = _run(tmp_path / "plain", None, "my_pkg_never_imported:Chain-v0")
    with pytest.raises(UsageError) as err:
        compare_runs([given, plain])
    assert str(err.value).endswith(
        "(a keyword given at its default value counts as another environment too: train "
        "the runs to compare with the same --env-kwargs)"
    )
    assert "my_pkg_never_imported" not in sys.modules


def test_published_runs_with_a_keyword_at_its_default_share_one_table(tmp_path):
    """The report's published section groups runs by environment as compare tells it: a
    DQN run without keywords and one given CartPole's default were two environments (two
    tables, the second 'No DQN run: no tests')."""
    root = tmp_path / "published"
    _run(root / "cartpole" / "dqn", None)
    given = _run(root / "cartpole" / "given", {"sutton_barto_reward": False})
    other = _run(root / "cartpole" / "other", {"sutton_barto_reward": True})
    groups = R.published_runs(root).groups
    assert sorted([p.name for p in g] for g in groups) == [["dqn", "given"], ["other"]]
    assert [other] in groups and given not in [p for g in groups if other in g for p in g]
