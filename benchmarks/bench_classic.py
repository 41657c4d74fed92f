"""Throughput of the vectorised toy-MDP and Mountain Car agents vs the single-run loops.

Counts replayed transition updates per second (agent steps x mini-batch size), the issue's
unit, for: the vectorised agents at the paper's run counts in one process and in two
processes at once (both cores), and the plain single-run reference loops of
``tests/reference_loops.py`` on the same settings. Ratios are measured within this one run.

    .venv/bin/python benchmarks/bench_classic.py [--quick | --smoke] [--part toy|mountain-car]
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _cli import Parser  # noqa: E402  (this folder: one-line errors for bad options)
from reference_loops import mountain_car_reference, toy_reference  # noqa: E402

from maxminq.linear.mountain_car import run_mountain_car_grid  # noqa: E402
from maxminq.tabular.toy_mdp import run_toy_mdp  # noqa: E402

TOY_B, MC_B = 32, 4


def toy_vectorised(mu: float, runs: int, episodes: int) -> tuple[float, float, float]:
    """(replayed transitions, wall seconds, CPU seconds) of Maxmin N=4 on the toy MDP."""
    t, c = time.perf_counter(), time.process_time()
    df = run_toy_mdp(mu=mu, algorithm="maxmin", n=4, runs=runs, episodes=episodes, seed=1)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    return float(df.attrs["agent_steps"]) * TOY_B, dt, dc


def toy_reference_rate(episodes: int, min_seconds: float) -> tuple[float, float, float, int]:
    """(replayed transitions, wall seconds, CPU seconds, runs) of the plain single-run loop
    of ``tests/reference_loops.py`` (Maxmin N=4, mu = 0.1, seed 1), timed over its runs 0, 1,
    ... until ``min_seconds`` of wall time have passed (at least one run): one run of 200
    episodes takes about 10 ms, too short a time to measure on a shared machine.

    The loop does not count its steps, so they are taken from the vectorised agent's runs
    0, 1, ... of the same seed (under a millisecond), after checking that they are the same
    runs: equal P(Left | A) and Q(A, Left) after every episode."""
    results: list[tuple[list[float], list[float]]] = []
    t, c = time.perf_counter(), time.process_time()
    while not results or time.perf_counter() - t < min_seconds:
        results.append(
            toy_reference(mu=0.1, algorithm="maxmin", n=4, episodes=episodes, seed=1,
                          run=len(results))
        )  # fmt: skip
    dt, dc = time.perf_counter() - t, time.process_time() - c
    df = run_toy_mdp(mu=0.1, algorithm="maxmin", n=4, runs=len(results), episodes=episodes,
                     seed=1)  # fmt: skip
    for run, (p_left, q_left) in enumerate(results):
        lane = df[df["run"] == run]
        same = np.array_equal(lane["p_left"].to_numpy(), p_left) and np.array_equal(
            lane["q_a_left"].to_numpy(), q_left
        )
        if not same:  # the step count below would be another run's
            raise RuntimeError(f"run {run}: the reference loop and the vectorised agent differ")
    return float(df.attrs["agent_steps"]) * TOY_B, dt, dc, len(results)


def mc_vectorised(runs: int, settings: int, episodes: int) -> tuple[float, float, float]:
    """(replayed transitions, wall seconds, CPU seconds) of tile-coded Maxmin N=4."""
    sig = [10.0 + 0.01 * k for k in range(settings)]  # distinct settings (a repeat is refused)
    t, c = time.perf_counter(), time.process_time()
    df = run_mountain_car_grid(algorithm="maxmin", n=4, sigma2=sig, step_sizes=[0.04],
                               runs=runs, episodes=episodes, seed=1, batch_size=MC_B)  # fmt: skip
    dt, dc = time.perf_counter() - t, time.process_time() - c
    return float(df.steps.sum()) * MC_B, dt, dc


def _warm_up() -> None:
    """Compile or load the numba kernels (run once in every worker before timing)."""
    run_toy_mdp(mu=0.1, algorithm="maxmin", n=4, runs=4, episodes=2, seed=0)
    run_mountain_car_grid(algorithm="maxmin", n=4, sigma2=[1.0], step_sizes=[0.04], runs=2,
                          episodes=1, seed=0, max_steps=50)  # fmt: skip


def _pid_after(seconds: float) -> int:
    """Sleep, then return this worker's process id (to see which workers are ready)."""
    time.sleep(seconds)
    return os.getpid()


def _pid_and(fn: Callable[..., tuple[float, ...]], args: tuple) -> tuple[int, tuple[float, ...]]:
    """``fn(*args)`` and the id of the process that ran it."""
    return os.getpid(), fn(*args)


class TwoWorkers:
    """Two spawned worker processes, each warmed up (``initializer``) before any timing, so
    that two jobs submitted at once run at once, one per core."""

    def __init__(self, initializer: Callable[..., None] = _warm_up, initargs: tuple = ()) -> None:
        """Start the two workers and wait until both have run ``initializer``."""
        ctx = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(2, mp_context=ctx, initializer=initializer,
                                        initargs=initargs)  # fmt: skip
        # A worker takes tasks only after its warm-up; one that is ready first may answer
        # both, so ask until both have answered (a fixed sleep does not ensure it under load).
        pids: set[int] = set()
        while len(pids) < 2:
            pids.update(self.pool.map(_pid_after, [0.2, 0.2]))

    def pair(
        self, fn: Callable[..., tuple[float, ...]], args_a: tuple, args_b: tuple
    ) -> tuple[float, float]:
        """Run ``fn(*args_a)`` and ``fn(*args_b)`` in the two workers at once; (sum of the
        results' first entries, wall seconds). Raises RuntimeError if one worker ran both."""
        t = time.perf_counter()
        fa = self.pool.submit(_pid_and, fn, args_a)
        fb = self.pool.submit(_pid_and, fn, args_b)
        (pa, ra), (pb, rb) = fa.result(), fb.result()
        wall = time.perf_counter() - t
        if pa == pb:
            raise RuntimeError("both jobs ran in one worker process: no two-core measurement")
        return ra[0] + rb[0], wall

    def __enter__(self) -> TwoWorkers:
        """The pool itself (its workers are ready)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Shut the workers down."""
        self.pool.shutdown()


# What each run size times: toy runs and episodes (the single-run loop runs the same number
# of episodes), Mountain Car episodes and its (runs, settings) lane plans, and the least
# wall time over which the toy single-run loop is timed (as many runs as it takes).
SIZES: dict[str, tuple[int, int, int, tuple[tuple[int, int], ...], float]] = {
    "full": (5000, 200, 5, ((100, 1), (100, 10)), 2.0),
    "quick": (5000, 60, 2, ((100, 1), (100, 10)), 1.0),
    "smoke": (100, 3, 1, ((10, 1), (10, 2)), 0.0),
}


def main(argv: list[str] | None = None) -> None:
    """Parse the options, warm up, run the chosen parts and print their rates and ratios."""
    parser = Parser(description=__doc__)
    size_group = parser.add_mutually_exclusive_group()
    size_group.add_argument("--quick", action="store_true", help="shorter runs")
    size_group.add_argument(
        "--smoke",
        action="store_true",
        help="tiny runs (seconds): checks that the script works; the numbers mean nothing",
    )
    parser.add_argument("--part", choices=("all", "toy", "mountain-car"), default="all",
                        help="which benchmark to run (default: both)")  # fmt: skip
    args = parser.parse_args(argv)
    size = SIZES["smoke" if args.smoke else "quick" if args.quick else "full"]
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}, load average (1 min) at start: {load:.1f}")

    _warm_up()
    with TwoWorkers() as workers:
        if args.part != "mountain-car":
            _toy(workers, size[0], size[1], size[4])
        if args.part != "toy":
            _mountain_car(workers, size[2], size[3])
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}")


def _toy(workers: TwoWorkers, runs: int, eps: int, ref_seconds: float) -> None:
    """Toy MDP: vectorised in one and two processes, and the single-run loop (timed over at
    least ``ref_seconds``)."""
    n_tr, dt, dc = toy_vectorised(0.1, runs, eps)
    toy_one, toy_cpu = n_tr / dt, n_tr / dc
    n_tr2, dt2 = workers.pair(toy_vectorised, (0.1, runs, eps), (-0.1, runs, eps))
    toy_two = n_tr2 / dt2
    ref_tr, ref_dt, ref_dc, _ = toy_reference_rate(eps, ref_seconds)
    toy_ref, toy_ref_cpu = ref_tr / ref_dt, ref_tr / ref_dc
    print(f"toy MDP, Maxmin N=4, batch {TOY_B}, {runs} runs x {eps} episodes:")
    print(f"  vectorised, 1 process : {toy_one / 1e6:8.1f} M replayed transitions/s wall, "
          f"{toy_cpu / 1e6:.1f} M per CPU-second")  # fmt: skip
    print(f"  vectorised, 2 processes: {toy_two / 1e6:8.1f} M/s wall (both cores)")
    print(f"  single-run loop       : {toy_ref / 1e6:8.3f} M/s wall, {toy_ref_cpu / 1e6:.3f} M per "
          f"CPU-second -> ratio {toy_two / toy_ref:,.0f}x (wall, 2 processes), "
          f"{toy_cpu / toy_ref_cpu:,.0f}x (per CPU-second)")  # fmt: skip


def _mountain_car(workers: TwoWorkers, mc_eps: int, plans: tuple[tuple[int, int], ...]) -> None:
    """Mountain Car: vectorised (each plan's lanes) in one and two processes, and the loop;
    ratios against the first plan and the last."""
    two_rates, cpu_rate = [], 0.0
    for runs, settings in plans:
        n_tr, dt, dc = mc_vectorised(runs, settings, mc_eps)
        one, cpu_rate = n_tr / dt, n_tr / dc
        n_tr2, dt2 = workers.pair(mc_vectorised, (runs, settings, mc_eps),
                                  (runs, settings, mc_eps))  # fmt: skip
        two_rates.append(n_tr2 / dt2)
        print(f"Mountain Car, Maxmin N=4, batch {MC_B}, {runs * settings} lanes "
              f"({settings} setting(s) x {runs} runs) x {mc_eps} episodes:")  # fmt: skip
        print(f"  vectorised, 1 process : {one / 1e6:8.2f} M replayed transitions/s wall, "
              f"{cpu_rate / 1e6:.2f} M per CPU-second")  # fmt: skip
        print(f"  vectorised, 2 processes: {two_rates[-1] / 1e6:8.2f} M/s  (both cores)")
    first, last = (r * s for r, s in (plans[0], plans[-1]))
    t, c = time.perf_counter(), time.process_time()
    steps, _ = mountain_car_reference(algorithm="maxmin", n=4, sigma2=10.0, step_size=0.04,
                                      episodes=1, seed=1, run=0, max_steps=1500)  # fmt: skip
    ref_dt, ref_dc = time.perf_counter() - t, time.process_time() - c
    mc_ref, mc_ref_cpu = sum(steps) * MC_B / ref_dt, sum(steps) * MC_B / ref_dc
    print(
        f"  single-run loop       : {mc_ref / 1e6:8.4f} M/s wall -> ratio "
        f"{two_rates[0] / mc_ref:,.0f}x ({first} lanes), {two_rates[-1] / mc_ref:,.0f}x "
        f"({last} lanes); per CPU-second {cpu_rate / mc_ref_cpu:,.0f}x ({last} lanes, 1 process)"
    )


if __name__ == "__main__":
    main()
