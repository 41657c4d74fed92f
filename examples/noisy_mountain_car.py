"""Fig. 3 in small: tile-coded agents on Mountain Car with noisy rewards, from Python.

The paper's noisy Mountain Car (Lan et al. 2020, Fig. 3 and appendix C.2): every reward of
-1 is replaced by a draw from N(-1, sigma^2). Q-learning's max over noisy action values
over-estimates more as sigma^2 grows, and the paper reports that Maxmin Q-learning keeps
learning where Q-learning and Averaged Q-learning break down. This script

1. runs each algorithm on a grid of reward variances x step sizes as one vectorised batch
   (``maxminq.linear.mountain_car.run_mountain_car_grid``; run r of every setting shares a
   random stream, so settings are compared on common random numbers),
2. picks, per algorithm and sigma^2, the step size with the fewest steps in the last
   episode, as the paper does (``maxminq.analysis.classic_plots.mc_best_step_sizes``), and
3. prints that table and draws Fig. 3(a) and the learning curves with the library's own
   figure functions (``mc_sensitivity_figure``, ``mc_learning_curve_figure``).

Run:  python examples/noisy_mountain_car.py [--runs 30] [--episodes 300] [--sigma2 0 10 50]
      [--step-sizes 0.005 0.02] [--out DIR] [--quick]

The command-line twin is ``maxminq experiment mountain-car`` (all cores, the paper's grid).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

# The paper's four algorithms; N = K = 4 for Maxmin and Averaged (the paper does not say).
ALGORITHMS = [("q_learning", 1), ("double_q", 2), ("averaged", 4), ("maxmin", 4)]


#: The --quick scale, for whatever of these options is not given.
QUICK = {"runs": 5, "episodes": 60, "sigma2": [0.0, 50.0], "step_sizes": [0.02]}
DEFAULTS = {"runs": 30, "episodes": 300, "sigma2": [0.0, 10.0, 50.0], "step_sizes": [0.005, 0.02]}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options, checked before anything is written (a bad value is a one-line
    usage error, exit status 2, naming the option)."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, help="independent runs per setting (default 30)")
    p.add_argument("--episodes", type=int, help="episodes per run (default 300)")
    p.add_argument("--sigma2", type=float, nargs="+", help="reward variances (default 0 10 50)")
    p.add_argument("--step-sizes", type=float, nargs="+", help="step sizes (default 0.005 0.02)")
    p.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/mountain_car"),
        help="output folder, created if needed: mountain_car.csv, best_step_sizes.csv, "
        "sensitivity.png, curves.png (default results/examples/mountain_car)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="5 runs x 60 episodes, sigma^2 0 and 50, step size 0.02 (each unless given)",
    )
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    # --quick sets the scale of what was not given (it overrode the values given with it)
    for key, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    from maxminq.errors import UsageError
    from maxminq.linear.mountain_car import check_settings

    try:  # the library's own checks (they were a traceback, after --out had been made)
        if args.seed < 0:
            raise UsageError(f"--seed: expected a whole number >= 0, got {args.seed}")
        for algorithm, n in ALGORITHMS:
            check_settings({"algorithm": algorithm, "n": n, "sigma2": args.sigma2,
                            "step_size": args.step_sizes, "runs": args.runs,
                            "episodes": args.episodes})  # fmt: skip
    except UsageError as err:
        p.error(str(err))
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the grid per algorithm, then summarise and plot."""
    args = parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from maxminq.analysis.classic_plots import (
        mc_best_step_sizes,
        mc_learning_curve_figure,
        mc_sensitivity_figure,
        save_figure,
    )
    from maxminq.analysis.style import count
    from maxminq.linear.mountain_car import MC_DEFAULTS, run_mountain_car_grid

    args.out.mkdir(parents=True, exist_ok=True)
    cap = MC_DEFAULTS["max_steps"]  # an episode truncated there never reached the goal
    frames = []
    for algorithm, n in ALGORITHMS:
        start = time.perf_counter()
        # Every value was checked in parse_args (a bad one is a one-line usage error there).
        # reached_goal: the share of runs stuck at the cap below does not count an episode
        # that reached the goal on the cap's own step (its steps alone cannot tell).
        frames.append(
            run_mountain_car_grid(
                algorithm=algorithm, n=n, sigma2=args.sigma2, step_sizes=args.step_sizes,
                runs=args.runs, episodes=args.episodes, seed=args.seed, reached_goal=True,
            )
        )  # fmt: skip
        print(f"{algorithm} (N={n}): {time.perf_counter() - start:.1f} s")
    df = pd.concat(frames, ignore_index=True)
    df.drop(columns="reached_goal").to_csv(args.out / "mountain_car.csv", index=False)

    table = mc_best_step_sizes(df, max_steps=cap)
    best = table[table.best].copy()
    best.to_csv(args.out / "best_step_sizes.csv", index=False)
    print(
        f"\nSteps in the last episode (mean +- SE over {count(args.runs, 'run')}) at each "
        f"algorithm's best step size (in brackets); episodes end at {cap:,} steps at the latest:"
    )
    best["steps"] = [
        f"{m:6.1f} +- {se:4.1f} ({a:g})"
        for m, se, a in zip(best["mean"], best["se"], best["step_size"], strict=True)
    ]
    print(best.pivot(index=["algorithm", "n"], columns="sigma2", values="steps").to_string())
    print("\nShare of runs whose last episode hit the cap, at every step size:")
    capped = table.pivot(index=["algorithm", "n", "step_size"], columns="sigma2", values="capped")
    print(capped.to_string(float_format=lambda x: f"{x:.2f}"))

    # How much each algorithm lost from the smallest to the largest variance, measured (with
    # one variance there is nothing to compare: it named an algorithm at x1.00).
    lo, hi = min(args.sigma2), max(args.sigma2)
    if lo < hi:
        mean = best.set_index(["algorithm", "sigma2"])["mean"]
        growth = {alg: mean[(alg, hi)] / mean[(alg, lo)] for alg, _ in ALGORITHMS}
        print(f"\nLast-episode steps at sigma^2 = {hi:g} relative to sigma^2 = {lo:g}:")
        print("  " + ", ".join(f"{alg} x{g:.2f}" for alg, g in growth.items()))
        robust = min(growth, key=growth.get)
        print(f"Least affected by the reward noise here: {robust} (x{growth[robust]:.2f}).")

    save_figure(mc_sensitivity_figure(df, max_steps=cap), args.out / "sensitivity.png")
    curves = mc_learning_curve_figure(
        df, title=f"Noisy Mountain Car, {count(args.runs, 'run')}", max_steps=cap
    )
    save_figure(curves, args.out / "curves.png")
    print(
        f"Wrote {args.out / 'best_step_sizes.csv'}, mountain_car.csv, sensitivity.png, curves.png"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
