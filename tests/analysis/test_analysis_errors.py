"""Adversarial checks of the analysis commands (``maxminq compare``, ``plot``, ``report``,
``evaluate``, ``status``) and ``maxminq.analysis``: each test names a way a demanding user
could be misled (a number that disagrees with the CSVs, a run's own files overwritten, a
traceback instead of one line) and checks, from the CSVs themselves, that it is not."""

from __future__ import annotations

import json
import math
import pathlib
import re
import shutil

import pandas as pd
import pytest
from deep_runs import _small
from run_folders import finished_run

from maxminq.cli import main
from maxminq.deep.train import run_training


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A finished 400-step Maxmin DQN run of two seeds on CartPole-v1 (with model.pt)."""
    out = tmp_path_factory.mktemp("runs") / "maxmin"
    run_training(_small(seeds=[0, 1]), out, progress=False)
    return out


def _copy(run: pathlib.Path, tmp_path: pathlib.Path, name: str = "run") -> pathlib.Path:
    """A copy of a finished run to change (the module's run stays as trained)."""
    return pathlib.Path(shutil.copytree(run, tmp_path / name))


def _hand_run(
    folder: pathlib.Path,
    metrics: list[tuple[int, int, float, int]],
    *,
    steps: int,
    diverged: dict[int, int] | None = None,
    agent: str = "dqn",
    env_id: str = "CartPole-v1",
    extra: dict | None = None,
) -> pathlib.Path:
    """A finished 'maxminq train' folder written by hand: seeds 0 and 1, the metrics rows
    (seed, step, bias_mean, bias_n), one training episode per seed ending at the seed's last
    metrics step with return 10 + seed, and one test episode of return 20 + 10 * seed for
    each seed that did not diverge (``diverged``: seed -> step)."""
    diverged = diverged or {}
    seeds = [0, 1]
    last = {s: max(step for seed, step, _, _ in metrics if seed == s) for s in seeds}
    return finished_run(
        folder, metrics, steps=steps, train={s: (last[s], 10.0 + s) for s in seeds},
        tests={s: 20.0 + 10 * s for s in seeds if s not in diverged}, diverged=diverged,
        agent=agent, env_id=env_id, extra=extra,
    )  # fmt: skip


BLOWUP = '''
import gymnasium as gym
import numpy as np


class Blowup(gym.Env):
    """Five steps of reward 1; now and then (drawn at reset) a reward that overflows the
    networks, so that some seeds of a run diverge and others do not."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.big, self.t = self.np_random.random() < 0.002, 0
        return np.array([1.0, 0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        reward = 3e38 if self.big else 1.0  # finite in float32 (an inf is an --env error)
        return np.array([0.0, 1.0], np.float32), reward, self.t >= 5, False, {}


gym.register("S13Blowup-v0", entry_point=Blowup, max_episode_steps=10)
'''


@pytest.mark.parametrize("table", ["tests", "episodes", "runs", "metrics"])
def test_evaluate_refuses_a_csv_that_is_one_of_the_runs_own_tables(
    trained: pathlib.Path, tmp_path: pathlib.Path, capsys, table: str
) -> None:
    """``maxminq evaluate RUN --csv RUN/tests.csv`` replaced the run's test episodes (the
    paper's protocol, eps 0.01, that ``compare`` scores) with its own greedy ones, silently:
    the run's score changed. It is refused in one line, exit 2, the file untouched."""
    run = _copy(trained, tmp_path)
    before = (run / f"{table}.csv").read_bytes()
    code = main(["evaluate", str(run), "--episodes", "1", "--no-progress",
                 "--csv", str(run / f"{table}.csv")])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("maxminq evaluate: error: --csv:") and len(err.splitlines()) == 1
    assert table in err
    assert (run / f"{table}.csv").read_bytes() == before
    # Nor another run's table: evaluate's episodes, or compare's table, in its place.
    other = _copy(trained, tmp_path, "other")
    kept = (other / f"{table}.csv").read_bytes()
    for argv in (["evaluate", str(run), "--episodes", "1", "--no-progress"], ["compare", str(run)]):
        assert main([*argv, "--csv", str(other / f"{table}.csv")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"maxminq {argv[0]}: error: --csv:") and table in err
    assert (other / f"{table}.csv").read_bytes() == kept
    # Another name in the run's folder is fine: the episodes are written there.
    assert main(["evaluate", str(run), "--episodes", "1", "--no-progress",
                 "--csv", str(run / "greedy.csv")]) == 0  # fmt: skip
    assert len(pd.read_csv(run / "greedy.csv")) == 2  # one episode of each of the 2 seeds


def test_the_second_half_of_a_run_whose_seeds_all_diverged_is_that_of_its_steps(
    tmp_path: pathlib.Path,
) -> None:
    """A 400-step run logging every 100 steps whose two seeds both diverged at step 250 has
    no metrics interval starting at or after its midpoint, 200: its bias over the second
    half is n/a. The midpoint was taken from the last logged step (200), so the interval
    (100, 200] of the first half was reported as the second half's bias."""
    from maxminq.analysis.compare import compare_runs
    from maxminq.analysis.tables import pooled_bias
    from maxminq.deep.train import read_tables

    rows = [(s, step, b, 4) for s in (0, 1) for step, b in ((100, 7.0), (200, 3.0 + s))]
    gone = _hand_run(tmp_path / "gone", rows, steps=400, diverged={0: 250, 1: 250})
    table = compare_runs([gone])
    assert table["bias_seeds"].tolist() == [0]
    assert math.isnan(table["bias_mean"].iloc[0])
    per_seed = pooled_bias(read_tables(gone)["metrics"], second_half=True, steps=400)
    assert per_seed["bias_n"].tolist() == [0, 0]
    # The same rows in a run of 200 steps: (100, 200] is its second half, pooled by count.
    whole = _hand_run(tmp_path / "whole", rows, steps=200)
    assert compare_runs([whole])["bias_mean"].iloc[0] == pytest.approx((3.0 + 4.0) / 2)
    with pytest.raises(ValueError, match="steps"):
        pooled_bias(read_tables(gone)["metrics"], steps=400)


def test_compare_warns_when_runs_trained_for_different_lengths_or_discounts(
    tmp_path: pathlib.Path, capsys
) -> None:
    """A DQN run of 3,000 steps against a Maxmin DQN run of 5,000 was tested (Welch's p,
    P(improve)) without a word: its labels do not name steps when the agents differ. Runs
    of other lengths, or whose bias is measured against returns of another discount, are
    now a CompareWarning (one stderr line each from the command); the numbers stay."""
    from maxminq.analysis.compare import CompareWarning, compare_runs

    rows = [(s, step, -1.0, 4) for s in (0, 1) for step in (1000, 2000, 3000)]
    short = _hand_run(tmp_path / "short", rows, steps=3000, extra={"gamma": 0.99})
    rows5 = [(s, step, -2.0, 4) for s in (0, 1) for step in (1000, 3000, 5000)]
    long = _hand_run(tmp_path / "long", rows5, steps=5000, agent="maxmin-dqn",
                     extra={"gamma": 0.9})  # fmt: skip
    with pytest.warns(CompareWarning) as caught:
        table = compare_runs([short, long])
    texts = [str(w.message) for w in caught]
    assert texts == [
        "the runs differ in steps (training length): DQN 3000, Maxmin DQN (N=1) 5000",
        "the runs differ in gamma (discount of the returns the bias is measured against): "
        "DQN 0.99, Maxmin DQN (N=1) 0.9",
    ]
    # the numbers are still those of the CSVs: test returns 20 and 30 per seed in each run
    assert table["mean"].tolist() == [25.0, 25.0] and table["diff"].iloc[1] == 0.0
    assert main(["compare", str(short), str(long)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"maxminq compare: warning: {t}" for t in texts]


def test_a_tested_run_with_an_unset_key_is_scored_once() -> None:
    """``deep_final_scores`` scores a run by its test episodes, else by its training
    average. It recognised the tested runs by tuples of their keys, and a tuple holding
    NaN (an unset N of DQN, which ``select_setting`` and ``summarize`` are written to
    handle) never equals another: each DQN seed was counted twice, once per source, which
    doubled its runs and shrank its standard error. Hand-made tables; the means are worked
    out here."""
    import numpy as np

    from maxminq.analysis import tables as T

    keys = {"env_id": "E", "agent": "dqn", "n": np.nan, "lr": 1e-3, "run_id": "r"}
    episodes = pd.DataFrame(
        [keys | {"seed": s, "step": step, "return": r}
         for s, rets in ((0, (1.0, 2.0)), (1, (3.0, 4.0)))
         for step, r in zip((10, 20), rets, strict=True)]
    )  # fmt: skip
    tests = pd.DataFrame(
        [keys | {"seed": s, "episode": e, "return": r}
         for s, rets in ((0, (5.0, 7.0)), (1, (6.0, 6.0)))
         for e, r in enumerate(rets, 1)]
    )  # fmt: skip
    # seed 2 has no test episode: scored by its training average, (8 + 10) / 2
    episodes = pd.concat([episodes, pd.DataFrame(
        [keys | {"seed": 2, "step": step, "return": r} for step, r in ((10, 8.0), (20, 10.0))]
    )], ignore_index=True)  # fmt: skip
    scores = T.deep_final_scores(T.Tables(episodes=episodes, tests=tests))
    got = sorted(zip(scores["seed"], scores["score"], scores["source"], strict=True))
    assert got == [(0, 6.0, "test"), (1, 6.0, "test"), (2, 9.0, "train_last100")]
    summary = T.deep_summary(T.Tables(episodes=episodes, tests=tests))
    assert summary["runs"].tolist() == [3]
    assert summary["mean"].iloc[0] == pytest.approx(7.0)


def test_a_figure_an_earlier_report_drew_is_not_shown_as_one_of_these_results(
    tmp_path: pathlib.Path,
) -> None:
    """A report lists every PNG in DIR/figures it did not draw as an 'Additional figure
    found in the results folder'. A figure of its own that an earlier report of the folder
    drew and this one does not (its data no longer allow it, e.g. a run left out after
    failing verification, or its drawing failed) was listed so, drawn from other data.
    Such files are now removed; a figure of the user's own stays listed."""
    from PIL import Image

    from maxminq.analysis.report import build_report

    figures = tmp_path / "figures"
    figures.mkdir()
    for name in ("deep_varying_n_pixelcopter", "mountain_car_curves_sigma2_10", "my_own"):
        Image.new("RGB", (8, 8), "white").save(figures / f"{name}.png")
    (figures / "deep_varying_n_pixelcopter.svg").write_text("<svg/>")
    report = build_report(tmp_path, results={}, theory_dir=tmp_path / "no_theory")
    md = report.markdown.read_text(encoding="utf-8")
    assert sorted(p.name for p in figures.iterdir()) == ["my_own.png"]
    assert "deep_varying_n_pixelcopter" not in md and "mountain_car_curves" not in md
    assert "figures/my_own.png" in md and "Additional figure found" in md


def test_one_folder_given_alone_is_one_run(trained: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """``compare_runs("runs/a")`` read the string as the folders 'r', 'u', 'n', ... and
    said 'RUN_DIR: r holds no finished deep run'; ``compare_runs(Path("runs/a"))`` raised a
    TypeError. One folder alone is one run, for ``plot_runs`` too; its numbers are those of
    its tests.csv (each seed's mean test return, then mean over seeds, worked out here)."""
    from maxminq.analysis import compare_runs, plot_runs

    per_seed = pd.read_csv(trained / "tests.csv").groupby("seed")["return"].mean()
    for given in (str(trained), trained):
        table = compare_runs(given)
        assert table["folder"].tolist() == [str(trained)]
        assert table["mean"].iloc[0] == pytest.approx(per_seed.mean())
        assert table["seeds"].iloc[0] == 2
    written = plot_runs(trained, tmp_path / "one.png", panels="return")
    assert [p.name for p in written] == ["one.png", "one.svg"]
    assert all(p.stat().st_size > 0 for p in written)


def test_published_refuses_a_sweeps_own_runs(tmp_path: pathlib.Path, capsys) -> None:
    """``maxminq report OUT --published OUT`` (or ``OUT/tables``) presented the sweep's own
    runs a second time, as 'finished maxminq train runs ... not trained by this command ...
    at full length'. A results folder, and run folders without the config.json of
    ``maxminq train`` (a sweep's stored runs), are refused in one line, exit 2, before any
    report is written."""
    from maxminq.experiments.store import ResultsStore

    out = tmp_path / "sweep"
    with ResultsStore(out):
        pass  # an empty results folder: results.sqlite
    rows = [(s, step, -1.0, 4) for s in (0, 1) for step in (100, 200)]
    stored = _hand_run(out / "tables" / "deep-0123456789ab", rows, steps=200)
    settings = json.loads((stored / "config.json").read_text())
    (stored / "config.json").unlink()  # a sweep stores its settings in manifest.json
    (stored / "manifest.json").write_text(json.dumps({"kind": "deep", "settings": settings}))
    for published in (out, out / "tables"):
        code = main(["report", str(out), "--published", str(published)])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1
        assert err.startswith("maxminq report: error: --published: ")
        assert not (out / "report.md").exists()


def test_plot_legend_says_which_runs_had_seeds_diverge(tmp_path: pathlib.Path) -> None:
    """A run whose seed diverged drew a curve that stops (its bias) or holds the return the
    seed reached, under a legend that said nothing of it: beside a healthy run it looked
    like a seed that learned no more. The default legend now says how many seeds diverged
    (from each run's runs.csv); a run without divergence keeps its plain label."""
    import matplotlib

    from maxminq.analysis import plot_runs

    rows = [(s, step, -1.0, 4) for s in (0, 1) for step in (100, 200, 300, 400)]
    healthy = _hand_run(tmp_path / "healthy", rows, steps=400)
    cut = [(0, step, -2.0, 4) for step in (100, 200, 300, 400)] + [(1, 100, -2.0, 4)]
    broken = _hand_run(tmp_path / "broken", cut, steps=400, agent="maxmin-dqn",
                       diverged={1: 150})  # fmt: skip
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text kept as text in the SVG
        written = plot_runs([healthy, broken], tmp_path / "both.png", panels="return,bias")
    svg = next(p for p in written if p.suffix == ".svg").read_text(encoding="utf-8")
    # the legend's entries (texts naming an agent): the healthy run's is a plain 'DQN'
    legend = [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg) if "DQN" in t]
    assert legend == ["DQN", "Maxmin DQN (N=1) (1 of 2 seeds diverged)"]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # the point
def test_evaluate_says_which_seeds_diverged_and_were_not_played(
    tmp_path: pathlib.Path, monkeypatch, capsys
) -> None:
    """``maxminq evaluate RUN`` plays the seeds that finished training and printed 'all 2
    seeds (mean +- SE over seeds)' for a run of 6 seeds of which 4 diverged, without a word
    of the 4: a mean over the survivors passed for the run's. It now names them. (A real
    run: an environment whose rare overflowing reward makes seeds 0, 1, 3 and 5 diverge.)"""
    from maxminq.deep.config import TrainConfig

    (tmp_path / "s13_blowup_env.py").write_text(BLOWUP)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = TrainConfig(env_id="s13_blowup_env:S13Blowup-v0", agent="dqn", steps=1500,
                         seeds=list(range(6)), learning_starts=100, eval_episodes=2)  # fmt: skip
    run_training(config, tmp_path / "run", progress=False)
    status = pd.read_csv(tmp_path / "run" / "runs.csv").set_index("seed")["status"]
    gone = [s for s, st in status.items() if st == "diverged"]
    assert 0 < len(gone) < 6  # the premise: some seeds diverged, some did not
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--episodes", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    played = 6 - len(gone)
    assert out[1].startswith(  # then their cause (runs.csv's diverged_cause)
        f"{len(gone)} seeds of 6 diverged during training and cannot act, not played: "
        + ", ".join(map(str, gone))
    )
    assert out[-1].startswith(f"all {played} seeds (mean +- SE over seeds)")


def test_compare_footer_says_why_a_seed_is_scored_by_its_training(
    tmp_path: pathlib.Path, capsys
) -> None:
    """A seed that diverged has no test episodes and is scored by its last-100 training
    average; the footer said '(the run has no test episodes)', false of a run whose other
    seeds were tested. It now gives both reasons; the scores are those of the CSVs (tests
    20 for seed 0; seed 1's training return 11)."""
    rows = [(s, step, -1.0, 4) for s in (0, 1) for step in (100, 200)]
    run = _hand_run(tmp_path / "run", rows, steps=200, diverged={1: 150})
    assert main(["compare", str(run)]) == 0
    out = capsys.readouterr().out
    assert "2 (1 diverged)" in out and "1 test + 1 last-100" in out
    assert "15.50" in out  # (20 + 11) / 2
    assert "the run has no test episodes" not in out
    assert "it diverged, or the run was trained" in " ".join(out.split())
