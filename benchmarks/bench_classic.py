"""Throughput of the vectorised toy-MDP and Mountain Car agents vs the single-run loops.

Counts replayed transition updates per second (agent steps x mini-batch size), the issue's
unit, for: the vectorised agents at the paper's run counts in one process and in two
processes at once (both cores), and the plain single-run reference loops of
``tests/reference_loops.py`` on the same settings. Ratios are measured within this one run.

    .venv/bin/python benchmarks/bench_classic.py [--quick] [--part toy|mountain-car]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

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


def _pair(fn, args_a, args_b) -> tuple[float, float]:
    """Run two jobs in two processes at once; (total transitions, wall seconds)."""
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx, initializer=_warm_up) as pool:
        # start both workers (each runs the warm-up) before the clock starts
        list(pool.map(time.sleep, [0.5, 0.5]))
        t = time.perf_counter()
        fa, fb = pool.submit(fn, *args_a), pool.submit(fn, *args_b)
        ta, tb = fa.result()[0], fb.result()[0]
        return ta + tb, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--part", choices=("all", "toy", "mountain-car"), default="all",
                        help="which benchmark to run (default: both)")  # fmt: skip
    args = parser.parse_args()
    q = args.quick
    load = os.getloadavg()[0]
    print(f"cores: {os.cpu_count()}, load average (1 min) at start: {load:.1f}")

    _warm_up()
    if args.part != "mountain-car":
        _toy(q)
    if args.part != "toy":
        _mountain_car(q)
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}")


def _toy(q: bool) -> None:
    """Toy MDP: vectorised in one and two processes, and the single-run loop."""
    eps = 60 if q else 200
    n_tr, dt, dc = toy_vectorised(0.1, 5000, eps)
    toy_one, toy_cpu = n_tr / dt, n_tr / dc
    n_tr2, dt2 = _pair(toy_vectorised, (0.1, 5000, eps), (-0.1, 5000, eps))
    toy_two = n_tr2 / dt2
    t, c = time.perf_counter(), time.process_time()
    ref_eps = 60 if q else 200
    toy_reference(mu=0.1, algorithm="maxmin", n=4, episodes=ref_eps, seed=1, run=0)
    ref_dt, ref_dc = time.perf_counter() - t, time.process_time() - c
    ref_steps = run_toy_mdp(mu=0.1, algorithm="maxmin", n=4, runs=1, episodes=ref_eps, seed=1)
    toy_ref = ref_steps.attrs["agent_steps"] * TOY_B / ref_dt  # same run, same step count
    toy_ref_cpu = ref_steps.attrs["agent_steps"] * TOY_B / ref_dc
    print(f"toy MDP, Maxmin N=4, batch {TOY_B}, 5000 runs x {eps} episodes:")
    print(f"  vectorised, 1 process : {toy_one / 1e6:8.1f} M replayed transitions/s wall, "
          f"{toy_cpu / 1e6:.1f} M per CPU-second")  # fmt: skip
    print(f"  vectorised, 2 processes: {toy_two / 1e6:8.1f} M/s wall (both cores)")
    print(f"  single-run loop       : {toy_ref / 1e6:8.3f} M/s wall, {toy_ref_cpu / 1e6:.3f} M per "
          f"CPU-second -> ratio {toy_two / toy_ref:,.0f}x (wall, 2 processes), "
          f"{toy_cpu / toy_ref_cpu:,.0f}x (per CPU-second)")  # fmt: skip


def _mountain_car(q: bool) -> None:
    """Mountain Car: vectorised (100 and 1,000 lanes) in one and two processes, and the loop."""
    mc_eps = 2 if q else 5
    for runs, settings in ((100, 1), (100, 10)):
        n_tr, dt, dc = mc_vectorised(runs, settings, mc_eps)
        one, cpu = n_tr / dt, n_tr / dc
        n_tr2, dt2 = _pair(mc_vectorised, (runs, settings, mc_eps), (runs, settings, mc_eps))
        two = n_tr2 / dt2
        print(f"Mountain Car, Maxmin N=4, batch {MC_B}, {runs * settings} lanes "
              f"({settings} setting(s) x {runs} runs) x {mc_eps} episodes:")  # fmt: skip
        print(f"  vectorised, 1 process : {one / 1e6:8.2f} M replayed transitions/s wall, "
              f"{cpu / 1e6:.2f} M per CPU-second")  # fmt: skip
        print(f"  vectorised, 2 processes: {two / 1e6:8.2f} M/s  (both cores)")
        if settings == 1:
            mc_two_100 = two
        mc_two_best, mc_cpu_best = two, cpu
    t, c = time.perf_counter(), time.process_time()
    steps, _ = mountain_car_reference(algorithm="maxmin", n=4, sigma2=10.0, step_size=0.04,
                                      episodes=1, seed=1, run=0, max_steps=1500)  # fmt: skip
    ref_dt, ref_dc = time.perf_counter() - t, time.process_time() - c
    mc_ref, mc_ref_cpu = sum(steps) * MC_B / ref_dt, sum(steps) * MC_B / ref_dc
    print(
        f"  single-run loop       : {mc_ref / 1e6:8.4f} M/s wall -> ratio "
        f"{mc_two_100 / mc_ref:,.0f}x (100 lanes), {mc_two_best / mc_ref:,.0f}x (1000 lanes); "
        f"per CPU-second {mc_cpu_best / mc_ref_cpu:,.0f}x (1000 lanes, 1 process)"
    )


if __name__ == "__main__":
    main()
