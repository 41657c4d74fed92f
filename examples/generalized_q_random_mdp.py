"""Theorem 2: tabular Generalized Q-learning converges to Q* on a random finite MDP.

Theorem 2 of Lan et al. (2020) says that every G meeting Assumption 1 (G of equal members is
their max; G is 1-Lipschitz in the max norm) makes tabular Generalized Q-learning converge
to Q* under Robbins-Monro step sizes. The operators of ``maxminq.operators`` that meet it are
``q_learning``, ``maxmin``, ``ensemble``, ``averaged`` and ``historical_best``. This script

1. draws a random discounted MDP with noisy rewards (``maxminq.tabular.finite_mdp.random_mdp``),
2. computes Q* by value iteration (``FiniteMDP.q_star``),
3. runs ``FiniteMDP.learn`` (synchronous sweeps, step sizes visits^-0.8) with each operator,
   recording the max-norm error max_i max_{s,a} |Q^i(s, a) - Q*(s, a)| along the way, and
4. prints the error at the start and at the end, and plots it against the sweeps.

Run:  python examples/generalized_q_random_mdp.py [--states 8] [--actions 4] [--sweeps 40000]
      [--out DIR] [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from maxminq.tabular.finite_mdp import random_mdp

# (operator, N estimators, K snapshots): Averaged and Historical Best work on the K most
# recent versions of one table; Maxmin and Ensemble on N tables.
SETTINGS = [
    ("q_learning", 1, 1),
    ("maxmin", 2, 1),
    ("maxmin", 4, 1),
    ("ensemble", 4, 1),
    ("averaged", 1, 4),
    ("historical_best", 1, 4),
]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--states", type=int, default=8, help="states of the random MDP (default 8)")
    p.add_argument("--actions", type=int, default=4, help="actions per state (default 4)")
    p.add_argument("--gamma", type=float, default=0.8, help="discount (default 0.8)")
    p.add_argument(
        "--reward-noise", type=float, default=0.5, help="sd of the reward noise (default 0.5)"
    )
    p.add_argument("--sweeps", type=int, help="synchronous sweeps per operator (default 40,000)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the MDP and the learners (default 0)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/random_mdp"),
        help="output folder, created if needed: final_errors.csv, errors.csv, errors.png "
        "(default results/examples/random_mdp)",
    )
    p.add_argument("--quick", action="store_true", help="1,000 sweeps unless --sweeps (for tests)")
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    if args.sweeps is None:  # --quick sets the scale, not a --sweeps given with it
        args.sweeps = 1000 if args.quick else 40_000
    for name in ("states", "actions", "sweeps"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1")
    if not 0 <= args.gamma < 1:
        p.error("--gamma must lie in [0, 1)")
    # else random_mdp's ValueError or SeedSequence's, as a traceback after --out was made
    if not 0 <= args.reward_noise < float("inf"):
        p.error(f"--reward-noise must be finite and >= 0, got {args.reward_noise}")
    if args.seed < 0:
        p.error(f"--seed must be >= 0, got {args.seed}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Learn with every operator of Assumption 1 and report the distance to Q*."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    # One stream for the MDP and one per learner, all from --seed.
    mdp_stream, *streams = np.random.SeedSequence(args.seed).spawn(1 + len(SETTINGS))
    mdp = random_mdp(
        args.states,
        args.actions,
        np.random.default_rng(mdp_stream),
        gamma=args.gamma,
        branching=min(3, args.states),
        reward_noise=args.reward_noise,
    )
    q_star = mdp.q_star()
    scale = float(np.abs(q_star).max())
    print(
        f"Random MDP: {args.states} states x {args.actions} actions, gamma {args.gamma}, "
        f"reward noise sd {args.reward_noise}; max |Q*| = {scale:.3f}"
    )

    curves, rows = [], []
    for (name, n, k), stream in zip(SETTINGS, streams, strict=True):
        res = mdp.learn(
            name,
            n,
            k,
            args.sweeps,
            np.random.default_rng(stream),
            update="all",  # every estimator updated in every sweep, each from its own sample
            step_power=0.8,  # alpha = visits^-0.8: Robbins-Monro (Assumption 2)
            q_star=q_star,  # errors and biases recorded every sweeps // 100 sweeps
        )
        label = name if n == k == 1 else f"{name} ({'N' if n > 1 else 'K'}={max(n, k)})"
        curves.append(
            pd.DataFrame(
                {
                    "operator": label,
                    "sweep": res.error_updates,
                    "max_error": res.errors,
                    "bias": res.biases,
                }
            )
        )
        tenth = res.errors[max(0, len(res.errors) // 10 - 1)]  # at 10% of the sweeps
        rows.append(
            {
                "operator": label,
                "start_error": scale,  # the tables start at zero
                "error_at_10pct": tenth,
                "final_error": res.max_error(q_star),
                "final_bias": res.biases[-1],
            }
        )
    curve = pd.concat(curves, ignore_index=True)
    curve.to_csv(args.out / "errors.csv", index=False)
    summary = pd.DataFrame(rows)
    summary["relative"] = summary.final_error / summary.start_error
    summary.to_csv(args.out / "final_errors.csv", index=False)

    print(
        f"\nMax-norm error |Q - Q*| after {args.sweeps:,} sweeps (from all-zero tables), and "
        "the bootstrap's bias mean_s G(Q_s) - V*(s):"
    )
    print(summary.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    # A statement only as strong as the numbers: the largest final error relative to |Q*|.
    worst = summary.loc[summary.relative.idxmax()]
    print(
        f"\nEvery operator ended with a max-norm error of at most {worst.relative:.1%} of "
        f"max |Q*| (largest: {worst.operator}, {worst.final_error:.4f})."
    )
    fell = int((summary.final_error < summary.error_at_10pct).sum())
    print(
        f"The error still fell between 10% of the sweeps and the end for {fell} of "
        f"{len(summary)} operators."
    )

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.0), layout="constrained")
    for label, rows_ in curve.groupby("operator", sort=False):
        ax.plot(rows_.sweep, rows_.max_error, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("synchronous sweeps")
    ax.set_ylabel(r"$\max_i \|Q^i - Q^*\|_\infty$")
    ax.set_title(f"Theorem 2 on a random MDP ({args.states} x {args.actions}, noisy rewards)")
    ax.legend(fontsize="small")
    fig.savefig(args.out / "errors.png", dpi=120)
    plt.close(fig)
    print(f"Wrote {args.out / 'final_errors.csv'}, errors.csv and errors.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
