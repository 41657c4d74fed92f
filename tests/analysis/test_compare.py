"""``maxminq compare``: final scores of finished deep runs and their tests against a baseline,
on run folders written by hand with known per-seed returns, so every expected number is
worked out here from its formula (Welch's t and df, pairs counted by hand), not by the code
under test."""

from __future__ import annotations

import importlib
import json
import math
import pathlib
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_results import _run, _welch
from own_env_classes import J22_ENVS as MODULE
from own_env_classes import J22_ENVS_SOURCE
from run_folders import finished_run, generalized_run
from scipy import stats
from user_modules import user_module

from maxminq.analysis.compare import compare_runs
from maxminq.analysis.runs import load_runs
from maxminq.analysis.tables import probability_of_improvement, welch_t_test
from maxminq.cli import main
from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import TrainConfig
from maxminq.deep.run_folder import TABLE_COLUMNS
from maxminq.deep.train import run_training


def test_scores_and_tests_against_hand_computed_values(tmp_path, capsys) -> None:
    """Two runs of 4 seeds, each seed's score the mean of its 2 test episodes: the printed
    and written mean, SE, IQM, difference, Welch p and P(improve) are the hand-computed ones,
    and the second-half bias is the mean +- SE of the seeds' second-half bias."""
    # Seed scores: A = [1, 2, 3, 6], B = [0, 2, 2, 5] (baseline).
    a = _run(
        tmp_path / "a",
        "maxmin-dqn",
        {0: [0, 2], 1: [2, 2], 2: [1, 5], 3: [6, 6]},
        bias={0: (100.0, 1.0), 1: (100.0, 3.0), 2: (-100.0, 2.0), 3: (0.0, 2.0)},
    )
    b = _run(tmp_path / "b", "dqn", {0: [0, 0], 1: [2, 2], 2: [2, 2], 3: [4, 6]})
    csv = tmp_path / "cmp.csv"
    assert main(["compare", str(a), str(b), "--baseline", "2", "--csv", str(csv)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    x, y = [1.0, 2.0, 3.0, 6.0], [0.0, 2.0, 2.0, 5.0]
    t, df, p = _welch(x, y)
    # Pairs (x_i, y_j), x_i > y_j counted 1, ties 1/2: x=1 beats 0 (1); x=2 beats 0, ties
    # 2 and 2 (2); x=3 beats 0, 2, 2 (3); x=6 beats all 4 (4): 10 of 16.
    improve = 10 / 16
    table = pd.read_csv(csv)
    assert list(table["run"]) == ["Maxmin DQN (N=2)", "DQN"]
    assert list(table["baseline"]) == [False, True]
    row = table.iloc[0]
    assert row["mean"] == pytest.approx(3.0)
    assert row["se"] == pytest.approx(math.sqrt(((4 + 1 + 0 + 9) / 3) / 4))
    assert row["iqm"] == pytest.approx(2.5)  # the middle two of 4: (2 + 3) / 2
    assert row["iqm_low"] <= 2.5 <= row["iqm_high"]
    assert row["iqm_low"] >= 1.0 and row["iqm_high"] <= 6.0  # resampled from the seeds
    assert row["diff"] == pytest.approx(3.0 - 2.25)
    assert row["t"] == pytest.approx(t) and row["df"] == pytest.approx(df)
    assert row["p"] == pytest.approx(p)
    assert row["p_improve"] == pytest.approx(improve)
    assert row["bias_mean"] == pytest.approx(2.0)  # the second half only: 1, 3, 2, 2
    assert row["bias_se"] == pytest.approx(math.sqrt(2 / 3) / 2)
    assert table.iloc[1][["diff", "p", "p_improve"]].isna().all()
    assert math.isnan(table.iloc[1]["bias_mean"])  # DQN's metrics have no probe

    lines = out.splitlines()
    maxmin = next(line for line in lines if line.startswith("Maxmin DQN (N=2)"))
    want = [f"3.00 +- {row['se']:.2f}", "2.50 [", "+2.00 +- 0.41", "+0.75", f"{p:.3f}", "0.62"]
    assert all(w in maxmin for w in want), maxmin
    assert "baseline" in next(line for line in lines if line.startswith("DQN "))
    assert "Welch's t-test, two-sided" in out and "rough" in out
    assert "nan" not in out.lower()
    assert out.endswith(f"table written to {csv}\n")

    # The same --seed prints the same table; the bootstrap is what the seed moves.
    assert main(["compare", str(a), str(b), "--baseline", "2"]) == 0
    again = capsys.readouterr().out
    assert again.splitlines() == lines[:-1]


def test_probability_of_improvement_counts_pairs() -> None:
    """[1, 2, 3] against [0, 2, 4]: 1 beats 0; 2 beats 0 and ties 2; 3 beats 0 and 2: 4.5
    of 9 pairs. Against [0, 2, 2]: 1 + (1 + 0.5 + 0.5) + 3 = 6 of 9. The two directions
    add up to 1."""
    assert probability_of_improvement([1, 2, 3], [0, 2, 4]) == pytest.approx(4.5 / 9)
    assert probability_of_improvement([1, 2, 3], [0, 2, 2]) == pytest.approx(6 / 9)
    assert probability_of_improvement([0, 2, 2], [1, 2, 3]) == pytest.approx(3 / 9)


def test_welch_is_undefined_without_two_seeds_or_any_spread() -> None:
    """A side with one value, or no spread in either: NaN (the command prints n/a), where
    scipy would give NaN or a p of 0 from t = +-inf; one side without spread is fine."""
    assert all(math.isnan(v) for v in welch_t_test([1.0], [1.0, 2.0]))
    assert all(math.isnan(v) for v in welch_t_test([5.0, 5.0], [7.0, 7.0]))
    t, df, p = welch_t_test([5.0, 5.0, 5.0], [6.0, 8.0])  # t = -2 / 1, df = 1
    assert (t, df) == pytest.approx((-2.0, 1.0)) and p == pytest.approx(2 * stats.t.sf(2, 1))


def test_one_seed_and_no_spread_are_n_a_with_the_reason(tmp_path, capsys) -> None:
    """A run of one seed has its mean alone (no SE, no CI) and n/a tests, saying why; two
    runs whose every seed scored the same (CartPole's 500) have no p, but P(improve) counts
    their pairs (all ties: 0.5). No NaN is printed; the CSV leaves those cells empty."""
    one = _run(tmp_path / "one", "maxmin-dqn", {0: [3.0, 5.0]})
    flat = _run(tmp_path / "flat", "dqn", {0: [500.0], 1: [500.0]})
    flat2 = _run(tmp_path / "flat2", "ddqn", {0: [500.0], 1: [500.0], 2: [500.0]})
    csv = tmp_path / "c.csv"
    assert main(["compare", str(flat), str(one), str(flat2), "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    lines = out.splitlines()
    row = next(line for line in lines if line.startswith("Maxmin DQN"))
    cells = re.split(r"\s{2,}", row)  # run, steps, seeds, score, mean, IQM, diff, p, P
    assert cells[2:] == ["1", "test", "4.00", "4.00", "-496.00"] + [
        "n/a (1 seed; a test needs 2 per run)",
        "n/a",
    ]  # mean and IQM alone: no SE, no interval
    row = next(line for line in lines if line.startswith("Double DQN"))
    assert "n/a (no spread" in row and row.rstrip().endswith("0.50")
    table = pd.read_csv(csv)
    assert table["p"].isna().all()
    assert math.isnan(table.loc[1, "p_improve"]) and table.loc[2, "p_improve"] == 0.5
    assert table.loc[1, "why_na"].startswith("1 seed")


def test_runs_without_tests_fall_back_to_the_training_return_and_say_so(tmp_path, capsys):
    """A run whose tests.csv has no rows is scored by its last 100-episode training return
    (7 + seed here, as written), its score column says 'last-100', and a warning names the
    mix of measures."""
    a = _run(tmp_path / "a", "maxmin-dqn", {0: [], 1: []})
    b = _run(tmp_path / "b", "dqn", {0: [1.0], 1: [3.0]})
    csv = tmp_path / "c.csv"
    assert main(["compare", str(a), str(b), "--csv", str(csv)]) == 0
    out, err = capsys.readouterr()
    table = pd.read_csv(csv)
    assert list(table["score"]) == ["last-100", "test"]
    assert table.loc[0, "mean"] == pytest.approx(7.5)
    assert "last-100 = " in out and "test = " in out
    assert "warning" in err and "not the same measure" in err


def test_a_diverged_seed_is_counted_and_its_fallback_score_said(tmp_path, capsys) -> None:
    """A seed that diverged (no test episodes) keeps the training return it reached, as in
    ``deep_final_scores``: the row says how many seeds diverged and where each score comes
    from; runs with another episode cap are warned about."""
    a = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [3.0], 2: []}, diverged=(2,))
    b = _run(tmp_path / "b", "ddqn", {0: [1.0], 1: [3.0]}, max_episode_steps=200)
    c = _run(tmp_path / "c", "ddqn", {0: [1.0], 1: [3.0]}, max_episode_steps=500)
    assert main(["compare", str(a), str(b), str(c)]) == 0
    out, err = capsys.readouterr()
    cells = re.split(r"\s{2,}", next(line for line in out.splitlines() if line.startswith("DQN")))
    assert cells[2:5] == ["3 (1 diverged)", "2 test + 1 last-100", f"{13 / 3:.2f} +- 2.40"]
    assert "not the same measure" in err  # test and training returns mixed
    assert "max_episode_steps" in err and "200" in err and "500" in err


def test_hand_made_runs_are_what_plot_reads_too(tmp_path) -> None:
    """The folders above pass the loader 'maxminq plot' uses (settings and whole tables),
    and plot draws them."""
    a = _run(tmp_path / "a", "maxmin-dqn", {0: [1.0], 1: [2.0]})
    cfgs, tables = load_runs([a])
    assert cfgs[0]["agent"] == "maxmin-dqn" and set(tables[0]) >= {"episodes", "tests", "runs"}
    assert main(["plot", str(a), "--out", str(tmp_path / "fig")]) == 0
    assert (tmp_path / "fig.png").is_file()


@pytest.mark.parametrize(
    ("case", "option"),
    [
        ("other env", "RUN_DIR"),
        ("other env_kwargs", "RUN_DIR"),
        ("baseline 3", "--baseline"),
        ("baseline 0", "--baseline"),
        ("csv parent a file", "--csv"),  # a missing parent folder is created (as plot --out)
        ("not a run", "RUN_DIR"),
        ("same run twice", "RUN_DIR"),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_writes_nothing(
    tmp_path, capsys, case: str, option: str
) -> None:
    a = _run(tmp_path / "a", "maxmin-dqn", {0: [1.0], 1: [2.0]})
    env = {"env_id": "Acrobot-v1"} if case == "other env" else {}
    kwargs = {"env_kwargs": {"gravity": -5.0}} if case == "other env_kwargs" else {}
    b = _run(tmp_path / "b", "dqn", {0: [1.0], 1: [2.0]}, **env, **kwargs)
    csv = tmp_path / ("missing/c.csv" if case == "csv parent a file" else "c.csv")
    if case == "csv parent a file":
        (tmp_path / "missing").write_text("a file where the folder would go")
    runs = [str(a), str(tmp_path) if case == "not a run" else str(b)]
    if case == "same run twice":  # another spelling of a's path
        runs = [str(a), str(b), str(tmp_path / "b" / ".." / "a")]
    base = case.split()[1] if case.startswith("baseline") else "1"
    assert main(["compare", *runs, "--baseline", base, "--csv", str(csv)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"maxminq compare: error: {option}:"), err
    if option == "RUN_DIR" and case not in ("not a run", "same run twice"):
        assert str(b) in lines[0]
    if case == "same run twice":
        assert lines[0].endswith(f"{runs[2]} is given twice (also as {a})")
    assert not csv.exists()
    assert not (tmp_path / "missing").exists() or case == "csv parent a file"


def test_one_run_is_its_summary_row_without_tests(tmp_path, capsys) -> None:
    """One RUN_DIR: the summary row, no comparison columns and no test footer."""
    a = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [3.0]})
    assert main(["compare", str(a)]) == 0
    out = capsys.readouterr().out
    assert "P(improve)" not in out and "Welch" not in out
    assert "2.00 +- 1.00" in next(line for line in out.splitlines() if line.startswith("DQN"))


def test_no_spread_within_runs_that_differ_is_n_a_but_counts_their_pairs() -> None:
    """Every seed of one run scored 500, every seed of the other 400: Welch's t is 100 / 0,
    so no p (the reason names the spread within each run, not equal runs), while each of the
    2 x 3 pairs is won: P(improve) 1."""
    from maxminq.analysis.compare import compare_table

    def scores(values: list[float]) -> pd.DataFrame:
        n = len(values)
        return pd.DataFrame(
            {"seed": range(n), "score": values, "source": "test", "diverged": False}
        )

    empty = np.array([])
    table = compare_table(
        ["a", "b"], [scores([500.0, 500.0]), scores([400.0] * 3)], [empty, empty], 1
    )
    a = table.iloc[0]
    assert math.isnan(a["p"]) and a["why_na"] == "no spread: in each run every seed scored the same"
    assert a["diff"] == 100.0 and a["p_improve"] == 1.0


def test_csv_is_refused_where_it_would_replace_a_runs_table(tmp_path, capsys) -> None:
    """--csv naming a table of a RUN_DIR (here its tests.csv) is a one-line error and the
    run's table is left as it was; another file in that folder is fine."""
    a = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [3.0]})
    before = (a / "tests.csv").read_bytes()
    assert main(["compare", str(a), "--csv", str(a / "tests.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maxminq compare: error: --csv: ") and err.count("\n") == 1
    assert (a / "tests.csv").read_bytes() == before
    assert main(["compare", str(a), "--csv", str(a / "compare.csv")]) == 0
    assert (a / "compare.csv").is_file()


def test_a_seed_without_any_score_is_named_in_a_warning(tmp_path, capsys) -> None:
    """A seed of the run's config with no finished episode (nor test) has no score: it is
    left out of the row (3 seeds, not 4) and named on stderr, not dropped silently."""
    folder = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [2.0], 2: [3.0]})
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(cfg | {"seeds": [0, 1, 2, 7]}))
    assert main(["compare", str(folder)]) == 0
    out, err = capsys.readouterr()
    row = next(line for line in out.splitlines() if line.startswith("DQN"))
    assert row.split()[2] == "3"  # steps, then seeds
    assert f"{folder}: no score for 1 seed (7: no episode finished), left out" in err


def test_compare_runs_is_the_table_the_command_writes(tmp_path) -> None:
    """``compare_runs`` on the folders of the first test gives the CSV of ``maxminq compare
    --csv`` on them, byte for byte once written, with the hand-computed numbers; a bad
    baseline is the command's UsageError."""
    from maxminq.analysis.compare import compare_runs
    from maxminq.errors import UsageError

    a = _run(tmp_path / "a", "maxmin-dqn", {0: [0, 2], 1: [2, 2], 2: [1, 5], 3: [6, 6]})
    b = _run(tmp_path / "b", "dqn", {0: [0, 0], 1: [2, 2], 2: [2, 2], 3: [4, 6]})
    csv = tmp_path / "cmp.csv"
    argv = ["compare", str(a), str(b), "--baseline", "2", "--seed", "3", "--csv", str(csv)]
    assert main(argv) == 0
    table = compare_runs([str(a), b], baseline=2, seed=3)
    assert table.to_csv(index=False) == csv.read_text()
    pd.testing.assert_frame_equal(pd.read_csv(csv), table.replace({"why_na": {"": np.nan}}))
    # Seed scores A = [1, 2, 3, 6], B = [0, 2, 2, 5]: 10 of the 16 pairs won (first test).
    assert table["mean"].tolist() == pytest.approx([3.0, 2.25])
    assert table["p_improve"].iloc[0] == pytest.approx(10 / 16)
    assert table["baseline"].tolist() == [False, True]
    with pytest.raises(UsageError, match=r"^--baseline: .* \(1 to 2\), got 3$"):
        compare_runs([a, b], baseline=3)


def test_compare_runs_warns_what_the_command_prints(tmp_path, capsys) -> None:
    """From Python, what ``maxminq compare`` warns about is a CompareWarning at the caller's
    line: a seed of the settings without a score, test returns beside training returns, and
    another episode cap; the command prints the same sentences once each on stderr, in that
    order. Runs scored alike warn nothing."""
    import warnings

    from maxminq.analysis.compare import CompareWarning, compare_runs

    a = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [3.0]}, max_episode_steps=500)
    cfg = json.loads((a / "config.json").read_text())
    (a / "config.json").write_text(json.dumps(cfg | {"seeds": [0, 1, 7]}))
    b = _run(tmp_path / "b", "maxmin-dqn", {0: [], 1: []}, max_episode_steps=200)
    want = [
        f"{a}: no score for 1 seed (7: no episode finished), left out",
        "some scores are test returns, others training returns (last-100: seeds without test "
        "episodes, e.g. diverged); they are not the same measure",
        "the runs differ in max_episode_steps (episode cap): DQN 500, Maxmin DQN (N=2) 200",
    ]
    with pytest.warns(CompareWarning) as caught:
        table = compare_runs([a, b])
    assert [str(w.message) for w in caught] == want
    assert {w.filename for w in caught} == {__file__}
    assert table["seeds"].tolist() == [2, 2]  # seed 7 left out
    assert main(["compare", str(a), str(b)]) == 0
    assert capsys.readouterr().err.splitlines() == [f"maxminq compare: warning: {w}" for w in want]

    c = _run(tmp_path / "c", "ddqn", {0: [2.0], 1: [4.0]}, max_episode_steps=500)
    d = _run(tmp_path / "d", "dqn", {0: [1.0], 1: [5.0]}, max_episode_steps=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompareWarning)
        assert compare_runs([c, d])["seeds"].tolist() == [2, 2]


def test_runs_in_folders_of_one_name_are_told_apart_by_their_parents(tmp_path) -> None:
    """Two sets of seeds of one setting in runs/x/dqn and runs/y/dqn were both labelled
    'DQN' (the folder's name alone); the labels now take as many trailing parts of the
    path as tell them apart, and a run in a folder of another name keeps its plain label."""
    from maxminq.analysis.compare import compare_runs

    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    x = _run(tmp_path / "x" / "dqn", "dqn", {0: [1.0], 1: [3.0]})
    y = _run(tmp_path / "y" / "dqn", "dqn", {2: [2.0], 3: [4.0]})
    m = _run(tmp_path / "y" / "mm", "maxmin-dqn", {0: [2.0], 1: [4.0]})
    table = compare_runs([x, y, m])
    assert table["run"].tolist() == ["DQN, x/dqn", "DQN, y/dqn", "Maxmin DQN (N=2)"]


def test_compare_warnings_collects_the_comparisons_and_shows_the_others() -> None:
    """What compare and the report's published section say about a comparison is collected
    in order; any other warning inside (e.g. numpy's) is shown, not swallowed."""
    import warnings

    from maxminq.analysis.compare import CompareWarning, compare_warnings

    with pytest.warns(RuntimeWarning, match="^other$"), compare_warnings() as texts:
        warnings.warn("first", CompareWarning, stacklevel=1)
        warnings.warn("other", RuntimeWarning, stacklevel=1)
        warnings.warn("second", CompareWarning, stacklevel=1)
    assert texts == ["first", "second"]


def test_check_distinct_refuses_one_path_object_given_twice(tmp_path) -> None:
    """From Python the same Path object can come twice (it passed an identity check)."""
    from maxminq.analysis.runs import check_distinct
    from maxminq.errors import UsageError

    a, b = tmp_path / "a", tmp_path / "b"
    check_distinct([a, b])
    with pytest.raises(UsageError, match=rf"^RUN_DIR: {re.escape(str(a))} is given twice$"):
        check_distinct([a, b, a])


def test_csv_removes_the_temporaries_a_killed_compare_left(tmp_path, capsys) -> None:
    """A compare killed (kill -9) while writing --csv left a hidden .NAME.XXXXXXXX.tmp beside
    it; the next compare to that file removes it, and nothing else."""
    from killed_writes import decoys, killed_write

    a = _run(tmp_path / "a", "dqn", {0: [1.0], 1: [2.0]})
    b = _run(tmp_path / "b", "maxmin-dqn", {0: [3.0], 1: [4.0]})
    csv = tmp_path / "out" / "c.csv"
    csv.parent.mkdir()
    left = killed_write(csv)
    keep = decoys(csv.parent, "c.csv")
    assert main(["compare", str(a), str(b), "--csv", str(csv)]) == 0
    assert not left.exists() and all(p.read_text() == "keep" for p in keep)
    assert len(pd.read_csv(csv)) == 2


def test_compare_does_not_repeat_a_value_the_label_already_names(tmp_path: pathlib.Path) -> None:
    """Two DQN runs of 300 and 50 steps: their labels tell them apart by steps ('DQN, steps
    300'), and the warning that the runs differ in steps repeated the value after it
    ('DQN, steps 300 300'). A label without the setting still gets the value."""
    from maxminq.analysis.compare import CompareWarning, compare_runs

    def run(name: str, steps: int, agent: str = "dqn") -> pathlib.Path:
        rows = [(s, steps, -1.0, 4) for s in (0, 1)]
        train = {0: (steps, 10.0), 1: (steps, 11.0)}
        return finished_run(
            tmp_path / name, rows, steps=steps, train=train, tests={0: 20.0, 1: 30.0}, agent=agent
        )

    with pytest.warns(CompareWarning) as caught:
        compare_runs([run("long", 300), run("short", 50)])
    assert [str(w.message) for w in caught] == [
        "the runs differ in steps (training length): DQN, steps 300, DQN, steps 50"
    ]
    with pytest.warns(CompareWarning) as caught:
        compare_runs([run("dqn", 300), run("maxmin", 50, agent="maxmin-dqn")])
    assert [str(w.message) for w in caught] == [
        "the runs differ in steps (training length): DQN 300, Maxmin DQN (N=1) 50"
    ]


def test_compare_csv_writes_op_kwargs_as_a_sweeps_tables_do(tmp_path: Path) -> None:
    """compare --csv's op_kwargs is the text of a sweep's summary/deep_final.csv and
    report ('{"lam":0.5,"w":1.0}', sorted, no spaces), so the two tables join on it; it
    wrote '{"lam": 0.5, "w": 1.0}', which matches no sweep row."""
    a = generalized_run(tmp_path / "a", "maxmin")
    b = generalized_run(tmp_path / "b", "my_ops:g", {"w": 1.0, "lam": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare_runs([a, b])
    assert list(table["op_kwargs"]) == ["", '{"lam":0.5,"w":1.0}']


@pytest.fixture(scope="module")
def own_module(tmp_path_factory):
    """A user's module of environments (own_env_classes.J22_ENVS_SOURCE), imported."""
    with user_module(tmp_path_factory.mktemp("own_envs"), MODULE, J22_ENVS_SOURCE) as name:
        yield importlib.import_module(name)


def test_compare_says_why_a_run_has_no_bias(own_module, tmp_path, capsys) -> None:
    """A run without a bias measured in its second half showed 'n/a' in the bias column,
    and with no run measured the column was left out, neither with a word on why: here one
    run never passed --learning-starts (where probing starts), and a run of 80 steps at the
    default --bias-every (1,000) has no metrics interval that starts in its second half."""
    base = dict(
        env_id=f"{MODULE}:J22Line-v0",
        steps=80,
        seeds=[0, 1],
        buffer_size=100,
        batch_size=8,
        eval_episodes=2,
        checkpoint_every=0,
    )
    runs = {
        "unprobed": TrainConfig(agent="maxmin-dqn", n=2, learning_starts=80, **base),
        "probed": TrainConfig(agent="dqn", learning_starts=10, bias_every=20, **base),
        "short": TrainConfig(agent="ddqn", learning_starts=10, **base),  # bias_every 1,000
    }
    with warnings.catch_warnings():  # the cap of 20 cuts episodes: not what is tested
        warnings.simplefilter("ignore", CutEpisodesWarning)
        for name, config in runs.items():
            run_training(config, tmp_path / name, progress=False)
    capsys.readouterr()

    def compare(*names: str) -> list[str]:
        assert main(["compare", *(str(tmp_path / n) for n in names)]) == 0
        return capsys.readouterr().out.splitlines()

    rows = compare("probed", "unprobed", "short")
    assert "bias +- SE" in rows[1]
    assert all(
        "n/a" in next(r for r in rows if r.startswith(f"{label}  "))
        for label in ("Maxmin DQN (N=2)", "Double DQN")
    )
    assert "n/a" not in next(r for r in rows if r.startswith("DQN  ")).split("test")[1][:40]
    footer = " ".join(r.strip() for r in rows)
    assert (
        "bias: none measured in the second half of training of Maxmin DQN (N=2): its 80 steps "
        "never passed --learning-starts, where probing starts; of Double DQN: no metrics "
        "interval (--bias-every 1,000) starts in the second half of its 80 steps; a smaller "
        "--bias-every gives some"
    ) in footer
    rows = compare("unprobed")
    assert "bias +- SE" not in rows[1]  # no run measured one: no column
    assert (
        "bias: none measured in the second half of training: its 80 steps never passed "
        "--learning-starts, where probing starts"
    ) in " ".join(r.strip() for r in rows)
    assert not any("none measured" in r for r in compare("probed"))


def test_compare_of_other_env_kwargs_says_none_and_what_to_do(tmp_path, capsys) -> None:
    """'--env-kwargs {"n": 6}' (the constructor's default) against a run without: the line
    read 'with env_kwargs {"n": 6}, runs/b with {}' and left the user to guess why the same
    environment was 'different'."""
    runs = []
    for name, kwargs in (("with", {"n": 6}), ("without", None)):
        folder = tmp_path / name
        folder.mkdir()
        cfg = {"env_id": "my_pkg:Chain-v0", "agent": "dqn", "n": 1, "lr": 1e-3, "steps": 10}
        (folder / "config.json").write_text(json.dumps(cfg | {"seeds": [0], "env_kwargs": kwargs}))
        values = {"seed": 0, "status": "done", "diverged_step": -1, "episode": 1, "step": 5}
        values |= {"return": 1.0, "length": 5, "return_avg100": 1.0, "terminated": True}
        values["truncated"] = False
        for table in ("episodes", "tests", "metrics", "runs"):  # one seed, never scored here
            columns = TABLE_COLUMNS[table]
            row = ",".join(str(values.get(c, "")) for c in columns)
            lines = [",".join(columns), *([row] if table in ("episodes", "runs") else [])]
            (folder / f"{table}.csv").write_text("\n".join(lines) + "\n")
        runs.append(str(folder))
    assert main(["compare", *runs]) == 2
    assert capsys.readouterr().err == (
        f"maxminq compare: error: RUN_DIR: {runs[1]} ran my_pkg:Chain-v0 with --env-kwargs "
        f'none, {runs[0]} with {{"n": 6}}; returns of different environments cannot be '
        "compared (a keyword given at its default value counts as another environment too: "
        "train the runs to compare with the same --env-kwargs)\n"
    )
