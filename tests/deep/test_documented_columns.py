"""The tables' columns as docs/deep-agents.md documents them (its table "The tables'
columns"): every column of every table named there, in the tables' order, and what the
table says of them checked against a real run, worked out from the other tables."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from docs_text import page

from maxminq.deep import TrainConfig, run_training
from maxminq.deep.run_folder import TABLE_COLUMNS

EVALUATE_COLUMNS = [
    "seed", "episode", "return", "length", "terminated", "truncated", "q_first",
    "discounted_return",
]  # fmt: skip


def _documented() -> dict[str, list[str]]:
    """Table name -> the columns the docs' table names for it, in order ('seed' first)."""
    text = page("deep-agents")
    start = text.index('<a name="the-tables-columns"></a>')
    rows = [line for line in text[start:].split("\n\n")[1].splitlines() if line.startswith("|")]
    found: dict[str, list[str]] = {}
    name = None
    for row in rows[2:]:  # after the header and its rule
        first, columns, _ = (cell.strip() for cell in row.strip("|").split("|"))
        if first:
            name = re.match(r"`([^`]+)`", first).group(1)
            found[name] = ["seed"]
        found[name] += [c for part in re.findall(r"`([^`]+)`", columns) for c in [part]]
    return found


def test_the_docs_name_every_column_of_every_table_in_order() -> None:
    documented = _documented()
    assert documented.pop("maxminq evaluate --csv") == EVALUATE_COLUMNS
    assert documented == {name: list(cols) for name, cols in TABLE_COLUMNS.items()}


def test_what_the_docs_say_of_the_columns_holds_in_a_run(tmp_path) -> None:
    cfg = TrainConfig(
        env_id="CartPole-v1", agent="maxmin-dqn", n=2, steps=700, seeds=[0, 1],
        learning_starts=200, eps_decay_steps=400, bias_every=300, buffer_size=700,
        eval_episodes=2, checkpoint_every=0, save_probes=True, eval_every=300,
        eval_every_episodes=2,
    )  # fmt: skip
    t = run_training(cfg, tmp_path / "run", progress=False)
    ep, metrics, probes, evals = t["episodes"], t["metrics"], t["probes"], t["evals"]
    for seed, e in ep.groupby("seed"):
        # step: the run's steps when the episode ended, its last step included
        assert e.step.tolist() == np.cumsum(e.length).tolist()
        assert e.episode.tolist() == list(range(1, len(e) + 1))
        # return_avg100: this episode and up to 99 before it
        by_hand = [e["return"].iloc[max(0, k - 99) : k + 1].mean() for k in range(len(e))]
        assert np.allclose(e.return_avg100, by_hand)
        # probes: the run's steps before the probe and its episode's; its episode's end
        p = probes[probes.seed == seed].merge(e, on="episode", suffixes=("", "_ep"))
        assert (p.end_step == p.step_ep).all()
        assert (p.step - p.episode_step == p.step_ep - p.length).all()  # the episode's start
    # metrics: one row per seed and interval, its last step; the last interval shorter
    assert metrics.seed.tolist() == [0, 0, 0, 1, 1, 1]
    assert metrics.step.tolist() == [300, 600, 700] * 2
    # epsilon at the interval's last step (step 300 is t = 299, 99 steps into the decay
    # that starts after 200 random ones: 1 - 0.99 * 99 / 400; at 600, 399 steps into it;
    # the decay is over at step 600 + 1, so 0.01 at 700)
    assert np.allclose(metrics.epsilon, [1 - 0.99 * 99 / 400, 1 - 0.99 * 399 / 400, 0.01] * 2)
    # steps_per_s: all live seeds together, the same in every seed's row of an interval
    assert (metrics.groupby("step").steps_per_s.nunique() == 1).all()
    # bias_*: the probes whose episode ended in the interval (end_step in it)
    for (seed, step), row in metrics.set_index(["seed", "step"]).iterrows():
        last = {300: 0, 600: 300, 700: 600}[step]
        b = probes[(probes.seed == seed) & (probes.end_step > last) & (probes.end_step <= step)]
        assert row.bias_n == len(b)
        if len(b):
            assert np.isclose(row.bias_mean, b.bias.mean())
            assert np.isclose(row.bias_std, b.bias.std(ddof=0))
            assert np.isclose(row.bias_abs, b.bias.abs().mean())
    assert np.allclose(probes.bias, probes.estimate - probes["return"])
    # probes' return: discounted from (s, a) on; CartPole pays 1 a step, the last one too,
    # and the probe's action is the step after its `step` steps: end_step - step rewards
    assert probes.terminated.all()  # CartPole's 500-step cap is not reached here
    rewards = probes.end_step - probes.step
    assert np.allclose(probes["return"], (1 - 0.99**rewards) / (1 - 0.99))
    # evals: the run's steps when the evaluation ran, its episodes numbered from 1
    assert evals.step.tolist() == [300, 300, 600, 600] * 2
    assert evals.episode.tolist() == [1, 2] * 4
    assert t["tests"].episode.tolist() == [1, 2] * 2
    assert isinstance(t["runs"], pd.DataFrame) and (t["runs"].diverged_step == -1).all()
