"""Sweep configs and stores shared by the experiments tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from maxminq.experiments.config import RunSpec, load_config
from maxminq.experiments.store import ResultsStore

TOY_NAMED_SCALED = """
name: {name}
kind: toy_mdp
fixed: {{seed: 0, runs: 3, episodes: 4, algorithm: q_learning, n: 1}}
grid: {{mu: [0.1]}}
scales: {{{scale}: {{}}}}
"""


# A researcher's own tiny noisy Mountain Car sweep (never run here: registered only).
MC = {
    "name": "my_mc",
    "kind": "mountain_car",
    "fixed": {"seed": 0, "runs": 5, "episodes": 20, "max_steps": 500},
    "grid": {"sigma2": [0, 10], "step_size": [0.02, 0.08]},
    "variants": [{"algorithm": "q_learning", "n": 1}, {"algorithm": "maxmin", "n": [2, 4]}],
    "scales": {"tiny": {}},
}


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


TOY = {
    "name": "my_toy",
    "kind": "toy_mdp",
    "fixed": {"seed": 0, "runs": 2, "episodes": 3, "mu": 0.1},
    "variants": [{"algorithm": "q_learning", "n": 1}, {"algorithm": "maxmin", "n": 2}],
    "scales": {"tiny": {}},
}


DEEP = """
name: ck
kind: deep
fixed: {{env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2{extra}}}
scales: {{quick: {{}}}}
"""


def _config(tmp_path: Path, extra: str = "", name: str = "ck.yaml"):
    path = tmp_path / name
    path.write_text(DEEP.format(extra=extra))
    return load_config(path, "quick")


def _hash_id(kind: str, settings: dict) -> str:
    """The run id as every version before this one made it: the SHA-256 of kind and all
    the settings (written out here, not taken from the package)."""
    text = json.dumps({"kind": kind, "settings": settings}, sort_keys=True, separators=(",", ":"))
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def _store_finished(out: Path, run: RunSpec) -> None:
    """``run`` stored finished in ``out`` as a sweep stores it (made-up tables)."""
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.save_tables(run, {"runs": pd.DataFrame({"seed": [0], "test_return": [9.5]})})
        store.mark_finished(run.run_id, "done")


TOY_OWN_QUICK = """
name: own
kind: toy_mdp
fixed: {seed: 0, runs: 3, episodes: 4, algorithm: q_learning, n: 1}
grid: {mu: [0.1, -0.1]}
scales: {quick: {}}
"""


# Four runs of the checkpointing test kind (sweep_kinds, theory_mc_ckpt); swept with
# ``--shard 9/9`` they are all registered and none run (merge tests write their scratch).
CKPT_FOUR_RUNS = """
name: tiny_four
kind: theory_mc_ckpt
fixed: {seed: 11, samples: 2000, chunks: 3}
grid: {M: [2, 8], N: [1, 2]}
scales: {quick: {}}
"""
