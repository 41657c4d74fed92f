"""The published runs in docs/runs against the README's numbers and docs/runs/README.md.

Every score is recomputed here with pandas/numpy from the published ``tests.csv`` (the
README's definition: each seed's mean return over its test episodes, then mean +- SE over
seeds, SE = std(ddof=1) / sqrt(seeds)) and Welch's p with scipy, not with maxminq's own
functions; the expected text is the README's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from docs_text import section
from helpers import REPO
from scipy import stats

from maxminq.deep.policy import MODEL_FILE, load_agent
from maxminq.errors import UsageError

ROOT = REPO


RUNS = ROOT / "docs" / "runs"


TABLES = ("config.json", "episodes.csv", "metrics.csv", "tests.csv", "runs.csv")


# Held back for its size (docs/runs/README.md says why); every other folder has its model.
NO_MODEL = {
    "minatar-asterix/maxmin-dqn",
    "minatar-breakout/maxmin-dqn",
    "minatar-space-invaders/maxmin-dqn",
    "minatar-seaquest/maxmin-dqn",
}


def seed_scores(run: str) -> pd.Series:
    """Each seed's mean test return, from the published tests.csv."""
    tests = pd.read_csv(RUNS / run / "tests.csv")
    return tests.groupby("seed")["return"].mean()


def mean_se(run: str, decimals: int) -> str:
    """'mean +- SE' over seeds, as the README prints it."""
    s = seed_scores(run).to_numpy()
    se = s.std(ddof=1) / np.sqrt(len(s))
    return f"{s.mean():.{decimals}f} +- {se:.{decimals}f}"


def welch_p(a: str, b: str) -> str:
    return f"{stats.ttest_ind(seed_scores(a), seed_scores(b), equal_var=False).pvalue:.3f}"


def glance_row(first_cell: str) -> str:
    """The row of README.md's 'What reproduces, at a glance' table that starts so."""
    text = section("README", "What reproduces, at a glance")
    rows = [r for r in text.splitlines() if r.startswith(f"| {first_cell}")]
    assert len(rows) == 1, f"README row {first_cell!r}: {len(rows)} found"
    return rows[0]


def published_table() -> dict[str, list[str]]:
    """docs/runs/README.md's table of runs: folder -> its cells."""
    rows = {}
    for line in (RUNS / "README.md").read_text().splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if "/" in cells[0]:  # a run's row, not the table of files
                rows[cells[0].strip("`")] = cells
    return rows


def seed_range(cell: str) -> list[int]:
    lo, hi = cell.split("-")
    return list(range(int(lo), int(hi) + 1))


def test_every_published_model_loads_and_the_checksummed_ones_verify(tmp_path) -> None:
    """``model.pt`` and checkpoints have digests of their own: two published models
    (MinAtar Seaquest, Space Invaders) carry model.pt's, which a shared digest would have
    to keep verifying. A byte changed in their weights is refused."""
    models = sorted(ROOT.glob("docs/runs/*/*/" + MODEL_FILE))
    assert len(models) == 17
    with_sum = []
    for path in models:
        agent = load_agent(path.parent)  # verifies the checksum where there is one
        assert agent.status and set(agent.status) <= {"done", "diverged"}
        if "sha256" in torch.load(path, weights_only=True):
            with_sum.append(path.parent.parent.name)
    assert with_sum == ["minatar-seaquest", "minatar-space-invaders"]
    # The check is real: one weight changed in a copy of a checksummed model is refused.
    state = torch.load(ROOT / "docs/runs" / with_sum[0] / "dqn" / MODEL_FILE, weights_only=True)
    state["online"][0, 0] += 1.0
    (tmp_path / "copy").mkdir()
    torch.save(state, tmp_path / "copy" / MODEL_FILE)
    with pytest.raises(UsageError, match="do not match their checksum"):
        load_agent(tmp_path / "copy")


@pytest.mark.parametrize(
    ("row_start", "env", "decimals", "texts", "phrase"),
    [
        (  # "Maxmin N = 3 268 +- 6, DQN 217 +- 17, Averaged 204 +- 13, Double DQN 187 +- 46
            # (Maxmin vs DQN: every seed pair in Maxmin's favour, Welch p 0.047)"
            "Fig. 4, LunarLander",
            "lunarlander",
            0,
            {
                "maxmin-dqn": "Maxmin N = 3",
                "dqn": "DQN",
                "averaged-dqn": "Averaged",
                "ddqn": "Double DQN",
            },  # fmt: skip
            "every seed pair in Maxmin's favour",
        ),
        (  # "Maxmin N = 6 49.5 +- 2.4, DQN 37.9 +- 2.5 (every Maxmin seed above every DQN
            # seed; Welch p 0.016), Double DQN 29.5 +- 4.6, Averaged 46.9 +- 3.5 (...)"
            "Fig. 4, Pixelcopter: Maxmin better",
            "pixelcopter",
            1,
            {
                "maxmin-dqn": "Maxmin N = 6",
                "dqn": "DQN",
                "ddqn": "Double DQN",
                "averaged-dqn": "Averaged",
            },  # fmt: skip
            "every Maxmin seed above every DQN seed",
        ),
    ],
)
def test_fig4_rows(row_start: str, env: str, decimals: int, texts: dict, phrase: str) -> None:
    """Each agent's test return (mean +- SE over seeds) and Maxmin vs DQN as the README
    states them, from the published tests.csv."""
    row = glance_row(row_start)
    for run, text in texts.items():
        assert f"{text} {mean_se(f'{env}/{run}', decimals)}" in row, run
    assert f"Welch p {welch_p(f'{env}/maxmin-dqn', f'{env}/dqn')}" in row
    assert phrase in row
    assert seed_scores(f"{env}/maxmin-dqn").min() > seed_scores(f"{env}/dqn").max()


def test_pixelcopter_varying_n_row() -> None:
    # Row "Fig. 4(h), Pixelcopter": "test return 24.5 / 39.5 / 49.5 / 45.4 (N = 6 vs N = 2:
    # Welch p 0.029; ...)" for N = 2 / 4 / 6 / 8.
    row = glance_row("Fig. 4(h), Pixelcopter")
    runs = ["maxmin-dqn-n2", "maxmin-dqn-n4", "maxmin-dqn", "maxmin-dqn-n8"]
    means = " / ".join(f"{seed_scores(f'pixelcopter/{r}').mean():.1f}" for r in runs)
    assert f"test return {means}" in row
    p = welch_p("pixelcopter/maxmin-dqn", "pixelcopter/maxmin-dqn-n2")
    assert f"N = 6 vs N = 2: Welch p {p}" in row


def test_catcher_row() -> None:
    # Row "Fig. 4, Catcher": "both 58.8 (the ceiling)".
    row = glance_row("Fig. 4, Catcher")
    dqn, maxmin = (seed_scores(f"catcher/{r}").mean() for r in ("dqn", "maxmin-dqn"))
    assert f"{dqn:.1f}" == f"{maxmin:.1f}"
    assert f"both {dqn:.1f}" in row


def test_published_table_matches_each_config() -> None:
    table = published_table()
    folders = {str(p.parent.relative_to(RUNS)) for p in RUNS.glob("*/*/config.json")}
    assert set(table) == folders and len(folders) == 21
    for folder, cells in table.items():
        _, env, agent, n, lr, steps, seeds, env_kwargs, score, _ = cells
        config = json.loads((RUNS / folder / "config.json").read_text())
        assert config["env_id"] == env, folder
        assert config["agent"] == agent, folder
        assert config["n"] == int(n), folder
        assert config["lr"] == float(lr), folder
        assert config["steps"] == int(steps.replace(",", "")), folder
        assert config["seeds"] == seed_range(seeds), folder
        expected_kwargs = None if env_kwargs == "-" else json.loads(env_kwargs.strip("`"))
        assert config.get("env_kwargs") == expected_kwargs, folder
        decimals = len(score.split(" +- ")[0].partition(".")[2])
        assert mean_se(folder, decimals) == score, folder


@pytest.mark.parametrize("folder", sorted(published_table()))
def test_published_folder_is_complete(folder: str) -> None:
    run = RUNS / folder
    config = json.loads((run / "config.json").read_text())
    files = {p.name for p in run.iterdir()}
    expected = set(TABLES) | (set() if folder in NO_MODEL else {"model.pt"})
    assert files == expected
    runs = pd.read_csv(run / "runs.csv")
    assert runs["seed"].tolist() == config["seeds"]
    assert (runs["status"] == "done").all()
    tests = pd.read_csv(run / "tests.csv")
    assert tests.groupby("seed").size().to_dict() == dict.fromkeys(
        config["seeds"], config["eval_episodes"]
    )
    # Training reached the configured length: each seed's last metrics row.
    metrics = pd.read_csv(run / "metrics.csv")
    assert metrics.groupby("seed")["step"].max().eq(config["steps"]).all()


@pytest.mark.parametrize(
    ("folder", "seed"), [("lunarlander/dqn", 0), ("pixelcopter/maxmin-dqn", 1)]
)
def test_published_runs_reproduce_their_first_steps(tmp_path: Path, folder: str, seed: int) -> None:
    """The published command, cut to 3,000 steps (1,000 random, 2,000 learning), plays the
    published seed's first episodes exactly: the claim of docs/runs/README.md that these
    runs reproduce. A seed's run does not depend on the other seeds or on --steps (the
    metrics interval and checkpoints aside, which do not touch training), so one seed at
    3,000 steps replays the start of a 4-seed run of millions of steps. Exact equality holds
    on CPUs whose float arithmetic matches the publishing machine's (x86-64, torch 2.13)."""
    from maxminq.deep import TrainConfig, run_training

    published = json.loads((RUNS / folder / "config.json").read_text())
    steps = 3000
    cfg = TrainConfig(
        **{**published, "steps": steps, "seeds": [seed], "eval_episodes": 1, "checkpoint_every": 0}
    )
    ours = run_training(cfg, tmp_path / "run", progress=False)["episodes"]
    theirs = pd.read_csv(RUNS / folder / "episodes.csv")
    theirs = theirs[(theirs["seed"] == seed) & (theirs["step"] <= steps)]
    columns = ["episode", "step", "return", "length", "terminated", "truncated"]
    assert len(theirs) > 10  # episodes from both the random and the learning phase
    pd.testing.assert_frame_equal(
        ours[columns].reset_index(drop=True),
        theirs[columns].reset_index(drop=True),
        check_exact=True,
        check_dtype=False,
    )


def test_minatar_row() -> None:
    # Row "Fig. 4, MinAtar": "Breakout at 500 k (2 seeds): ... DQN test 13.7 +- 2.7, Maxmin
    # N = 4 8.1 +- 1.0 (p 0.26)".
    row = glance_row("Fig. 4, MinAtar")
    assert f"DQN test {mean_se('minatar-breakout/dqn', 1)}" in row
    assert f"Maxmin N = 4 {mean_se('minatar-breakout/maxmin-dqn', 1)}" in row
    p = float(welch_p("minatar-breakout/maxmin-dqn", "minatar-breakout/dqn"))
    assert f"(p {p:.2f})" in row
    # "Space Invaders at 750 k (2 seeds): ... DQN test 29.2 +- 7.9, Maxmin N = 4 54.6 +- 9.9
    # (p 0.19)"
    invaders = row.split("Space Invaders at 750 k", 1)[1]
    assert f"DQN test {mean_se('minatar-space-invaders/dqn', 1)}" in invaders
    assert f"Maxmin N = 4 {mean_se('minatar-space-invaders/maxmin-dqn', 1)}" in invaders
    p = float(welch_p("minatar-space-invaders/maxmin-dqn", "minatar-space-invaders/dqn"))
    assert f"(p {p:.2f})" in invaders
    # "Seaquest at 500 k (2 seeds): both stall after early learning (test 0.54 +- 0.04 and
    # 0.59 +- 0.05)"
    seaquest = row.split("Seaquest at 500 k", 1)[1]
    scores = (mean_se(f"minatar-seaquest/{r}", 2) for r in ("dqn", "maxmin-dqn"))
    assert "(test {} and {})".format(*scores) in seaquest
