"""Plain single-run reference implementations of the toy MDP and noisy Mountain Car agents.

The obvious loops, written independently of ``maxminq``: pure Python lists, the targets of
each algorithm spelled out by hand (max, min, mean, Double Q's cross evaluation), Averaged Q
keeping real copies of its K latest tables, the tile coder written as ``floor(x + offset)``.
They draw their random numbers from the same SplitMix64 stream, in the same order, as the
vectorised agents document, so on equal seeds both must produce the same trajectory.
"""

from __future__ import annotations

import math

import numpy as np

MASK = (1 << 64) - 1


def run_seed(seed: int, run: int) -> int:
    """The 64-bit seed of run ``run``: first word of SeedSequence(seed).spawn(...)[run]."""
    child = np.random.SeedSequence(seed).spawn(run + 1)[run]
    return int(child.generate_state(1, dtype=np.uint64)[0])


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64, in Python integers."""

    def __init__(self, state: int) -> None:
        self.state = state & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return (self.next() >> 11) * 2.0**-53

    def integer(self, n: int) -> int:
        return int(self.uniform() * n)

    def normal(self) -> float:
        u1, u2 = self.uniform(), self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def eps_greedy(values: list[float], eps: float, rng: SplitMix64) -> int:
    if rng.uniform() < eps:
        return rng.integer(len(values))
    best = max(values)
    ties = [a for a, v in enumerate(values) if v == best]
    return ties[0] if len(ties) == 1 else ties[rng.integer(len(ties))]


def first_argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda a: (values[a], -a))


class Tables:
    """The M value tables of one run and how an algorithm reads and trains them.

    ``get(m)`` returns table m (a nested list indexed like the agent's values); Averaged and
    Historical Best keep ``history``: real copies of the newest K tables, newest first.
    """

    def __init__(self, algorithm: str, n: int, make, sigma: float = 0.0) -> None:
        self.algorithm, self.n, self.sigma = algorithm, n, sigma
        if algorithm in ("averaged", "historical_best"):
            first = make()
            self.history = [[row[:] for row in first] for _ in range(n)]
        else:
            self.tables = [make() for _ in range(n)]

    def behaviour(self, value_of) -> list[float]:
        """Values the eps-greedy policy acts on; ``value_of(table) -> list over actions``."""
        alg = self.algorithm
        if alg in ("averaged", "historical_best"):
            return value_of(self.history[0])
        per = [value_of(t) for t in self.tables]
        if alg == "maxmin":
            return [min(col) for col in zip(*per, strict=True)]
        if alg in ("double_q", "ensemble"):
            return [sum(col) / len(col) for col in zip(*per, strict=True)]
        return per[0]

    def choose(self, rng: SplitMix64) -> int:
        if self.algorithm in ("maxmin", "ensemble", "double_q") and self.n > 1:
            return rng.integer(self.n)
        return 0

    def subset(self, rng: SplitMix64, size: int, draw_batch) -> list[tuple[int, list]]:
        """Algorithm 1's S of ``size`` tables, each with its mini-batch (``draw_batch()``):
        the first as ``choose``, every further one the r-th (r drawn) of those left."""
        first = self.choose(rng)
        plan = [(first, draw_batch())]
        for _ in range(1, size):
            left = [m for m in range(self.n) if m not in [c for c, _ in plan]]
            plan.append((left[rng.integer(len(left))], draw_batch()))
        return plan

    def bootstrap(self, value_of, chosen: int) -> float:
        """G of the next state, written out per algorithm (independent of maxminq.operators)."""
        alg = self.algorithm
        if alg == "averaged":
            per = [value_of(t) for t in self.history]
            return max(sum(col) / len(col) for col in zip(*per, strict=True))
        if alg == "historical_best":
            return max(max(value_of(t)) for t in self.history)
        per = [value_of(t) for t in self.tables]
        if alg == "maxmin":
            return max(min(col) for col in zip(*per, strict=True))
        if alg == "ensemble":
            return max(sum(col) / len(col) for col in zip(*per, strict=True))
        if alg == "double_q":
            select, evaluate = per[chosen], per[1 - chosen]
            return evaluate[first_argmax(select)]
        if alg == "bias_corrected":
            # Lee et al.: max minus sigma E[max of A i.i.d. N(0, 1)]; for A = 3 actions that
            # is 3 / (2 sqrt(pi)) (David & Nagaraja, Order Statistics, the expected maximum).
            assert len(per[0]) == 3, "closed form only written out for 3 actions"
            return max(per[0]) - self.sigma * 1.5 / math.sqrt(math.pi)
        return max(per[0])

    def table_to_update(self, chosen: int):
        if self.algorithm in ("averaged", "historical_best"):
            new = [row[:] for row in self.history[0]]
            self.history = [new] + self.history[:-1]
            return new
        return self.tables[chosen]


# --- toy MDP ----------------------------------------------------------------------------------


def toy_reference(
    *,
    mu: float,
    algorithm: str,
    n: int,
    episodes: int,
    seed: int,
    run: int,
    epsilon: float = 0.1,
    step_size: float = 0.01,
    batch_size: int = 32,
    buffer_size: int = 100,
    update_every: int = 1,
    init_std: float = 0.1,
    gamma: float = 1.0,
    update_members: int = 1,
) -> tuple[list[float], list[float]]:
    """One run of the toy MDP; returns (P(Left | A) per episode, behaviour Q(A, Left))."""
    rng = SplitMix64(run_seed(seed, run))

    def make() -> list[list[float]]:
        return [[init_std * rng.normal() for _ in range(2)],
                [init_std * rng.normal() for _ in range(8)]]  # fmt: skip

    tables = Tables(algorithm, n, make)
    buffer: list[tuple[int, int, float, bool]] = []
    p_left, q_left = [], []
    s, t = 0, 0
    while len(p_left) < episodes:
        a = eps_greedy(tables.behaviour(lambda q, s=s: q[s]), epsilon, rng)
        if s == 0:
            r, term = 0.0, a == 1
        else:
            r, term = mu + 2.0 * rng.uniform() - 1.0, True
        if len(buffer) < buffer_size:
            buffer.append((s, a, r, term))
        else:
            buffer[t % buffer_size] = (s, a, r, term)
        if t % update_every == 0:
            plan = tables.subset(
                rng,
                update_members,
                lambda: [buffer[rng.integer(len(buffer))] for _ in range(batch_size)],
            )
            for chosen, batch in plan:  # each member in turn, G after the updates before it
                g = tables.bootstrap(lambda q: q[1], chosen)
                q = tables.table_to_update(chosen)
                for bs, ba, br, bterm in batch:
                    target = br + (0.0 if bterm else gamma * g)
                    q[bs][ba] += step_size * (target - q[bs][ba])
        if term:
            va = tables.behaviour(lambda q: q[0])
            if va[0] > va[1]:
                p_left.append(1 - epsilon / 2)
            elif va[0] < va[1]:
                p_left.append(epsilon / 2)
            else:
                p_left.append(0.5)
            q_left.append(va[0])
            s = 0
        else:
            s = 1
        t += 1
    return p_left, q_left


# --- Mountain Car -----------------------------------------------------------------------------


def mc_tiles(x: float, v: float) -> list[int]:
    """8 tilings of 8 x 8 tiles; tiling t shifted by t/8 (position) and 3t/8 (velocity) tiles."""
    xs = (x + 1.2) / 1.7 * 8
    vs = (v + 0.07) / 0.14 * 8
    return [t * 121 + math.floor(xs + t / 8) * 11 + math.floor(vs + 3 * t / 8) for t in range(8)]


def mc_step(x: float, v: float, a: int) -> tuple[float, float, bool]:
    """Sutton & Barto's Mountain Car, written from the book's equations."""
    v = min(max(v + 0.001 * (a - 1) - 0.0025 * math.cos(3 * x), -0.07), 0.07)
    x = x + v
    if x <= -1.2:
        x, v = -1.2, 0.0
    if x >= 0.5:
        return 0.5, v, True
    return x, v, False


def mountain_car_reference(
    *,
    algorithm: str,
    n: int,
    sigma2: float,
    step_size: float,
    episodes: int,
    seed: int,
    run: int,
    epsilon: float = 0.1,
    batch_size: int = 4,
    buffer_size: int = 100,
    update_every: int = 1,
    max_steps: int = 5000,
    gamma: float = 1.0,
    step_size_per: str = "tiling",
    sigma: float = 0.0,
    init_weight: float = 0.0,
    update_members: int = 1,
) -> tuple[list[int], list]:
    """One run of tile-coded noisy Mountain Car; returns (steps per episode, final tables).

    The tables are the N estimators (newest first for Averaged / Historical Best); ``sigma``
    is Bias-corrected Q's.
    """
    rng = SplitMix64(run_seed(seed, run))
    tables = Tables(algorithm, n, lambda: [[init_weight] * 3 for _ in range(8 * 121)], sigma)

    def values(w: list[list[float]], tiles: list[int]) -> list[float]:
        return [sum(w[f][a] for f in tiles) for a in range(3)]

    x, v = -0.6 + 0.2 * rng.uniform(), 0.0
    buffer: list[tuple[list[int], int, float, list[int], bool]] = []
    steps: list[int] = []
    t, length = 0, 0
    while len(steps) < episodes:
        tiles = mc_tiles(x, v)
        a = eps_greedy(tables.behaviour(lambda w, f=tiles: values(w, f)), epsilon, rng)
        r = -1.0 + math.sqrt(sigma2) * rng.normal()
        x2, v2, term = mc_step(x, v, a)
        length += 1
        item = (tiles, a, r, mc_tiles(x2, v2), term)
        if len(buffer) < buffer_size:
            buffer.append(item)
        else:
            buffer[t % buffer_size] = item
        if t % update_every == 0:
            plan = tables.subset(
                rng,
                update_members,
                lambda: [buffer[rng.integer(len(buffer))] for _ in range(batch_size)],
            )
            for chosen, batch in plan:  # each member in turn, G after the updates before it
                gs = [tables.bootstrap(lambda w, f=b[3]: values(w, f), chosen) for b in batch]
                w = tables.table_to_update(chosen)
                for (bt, ba, br, _, bterm), g in zip(batch, gs, strict=True):
                    target = br + (0.0 if bterm else gamma * g)
                    per_weight = step_size if step_size_per == "tiling" else step_size / 8
                    delta = per_weight * (target - sum(w[f][ba] for f in bt))
                    for f in bt:
                        w[f][ba] += delta
        if term or length >= max_steps:
            steps.append(length)
            length = 0
            x, v = -0.6 + 0.2 * rng.uniform(), 0.0
        else:
            x, v = x2, v2
        t += 1
    final = tables.history if algorithm in ("averaged", "historical_best") else tables.tables
    return steps, final
