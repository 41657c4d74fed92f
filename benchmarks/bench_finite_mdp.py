"""Updates/s of the tabular Generalized Q-learning solver: vectorised sync sweeps vs loops.

Compares, in ONE process and interleaved over several rounds (medians reported, so machine
load drifts hit every variant alike), on a random MDP with Maxmin (N = 4):

* ``sync``: ``generalized_q_learning(mode="sync")``, one NumPy-vectorised sweep over all
  (s, a) per update, G evaluated once per sweep for every state;
* ``loop``: the same sweep written as a per-(s, a) Python loop (G called per sample);
* ``async``: ``generalized_q_learning(mode="async")``, one transition per update.

Run: ``.venv/bin/python benchmarks/bench_finite_mdp.py [--quick]``.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from _cli import Parser  # this folder: one-line errors for bad options

from maxminq.operators import maxmin
from maxminq.tabular.finite_mdp import generalized_q_learning, random_mdp


def loop_sweeps(
    P: np.ndarray,
    R: np.ndarray,
    gamma: float,
    n: int,
    sweeps: int,
    rng: np.random.Generator,
    step_power: float = 0.8,
) -> np.ndarray:
    """Reference: Algorithm 1's update, one (s, a) at a time in Python."""
    S, A = R.shape
    q = np.zeros((n, S, A))
    counts = np.zeros((n, S, A))
    cdf = np.cumsum(P, axis=-1)
    for _ in range(sweeps):
        new = q.copy()
        for s in range(S):
            for a in range(A):
                nxt = min(int(np.searchsorted(cdf[s, a], rng.random(), side="right")), S - 1)
                i = int(rng.integers(n))
                target = R[s, a] + gamma * maxmin(q[:, nxt, :])
                counts[i, s, a] += 1
                new[i, s, a] += counts[i, s, a] ** -step_power * (target - new[i, s, a])
        q = new
    return q


def main(argv: list[str] | None = None) -> None:
    """Time the three variants in interleaved rounds; print their medians and ratios."""
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and updates")
    args = parser.parse_args(argv)
    rounds, sweeps = (3, 20) if args.quick else (5, 60)
    S, A, n = 50, 4, 4
    mdp = random_mdp(S, A, np.random.default_rng(0), gamma=0.9, branching=5)
    rates: dict[str, list[float]] = {"sync": [], "loop": [], "async": []}
    for r in range(rounds):
        rng = np.random.default_rng(r)
        t = time.perf_counter()
        generalized_q_learning(mdp.P, mdp.R, mdp.gamma, "maxmin", n, 1, sweeps * 10, rng)
        rates["sync"].append(sweeps * 10 * S * A / (time.perf_counter() - t))
        t = time.perf_counter()
        loop_sweeps(mdp.P, mdp.R, mdp.gamma, n, sweeps, rng)
        rates["loop"].append(sweeps * S * A / (time.perf_counter() - t))
        steps = sweeps * S * A
        t = time.perf_counter()
        generalized_q_learning(mdp.P, mdp.R, mdp.gamma, "maxmin", n, 1, steps, rng, mode="async")
        rates["async"].append(steps / (time.perf_counter() - t))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"random MDP S={S} A={A}, Maxmin N={n}, {rounds} rounds (medians, updates/s)")
    for k, v in med.items():
        print(f"  {k:<6} {v:>12,.0f}   x{v / med['loop']:.1f} vs loop")


if __name__ == "__main__":
    main()
