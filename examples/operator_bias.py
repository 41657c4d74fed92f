"""Estimation bias of every Generalized Q-learning operator, by Monte Carlo and in closed form.

Theorem 1's setting (Lan et al. 2020, section 4): the M actions of the next state all have the
same true value (0 here), and each of the N estimates of each action carries an independent
error drawn from U(-tau, tau). An operator G turns the N x M estimates into one bootstrap
value; its *bias* is E[G] - max_a Q*(s', a) = E[G]. This script

1. samples each operator's bootstrap value with ``theory.operator_bias``: seeded draws of
   the N x M estimates from a ``numpy.random.Generator``, in memory-bounded chunks, with
   ``operators.bootstrap`` applied to them,
2. sets the sampled mean against ``maxminq.theory``'s exact value
   (``operator_expected_bias``; for Maxmin, Theorem 1's ``expected_bias``),
3. reports the N that ``theory.choose_n`` recommends for M actions, and
4. checks the rest of Theorem 1 for Maxmin: the target's variance, Var[Q^min] of one action
   (ii, in closed form and by ``theory.monte_carlo_bias``) and Corollary 1's ratio.

It prints a table of sampled and exact biases for N = 1..8 and writes ``operator_bias.csv``
and ``operator_bias.png`` to ``--out``.

Run:  python examples/operator_bias.py [--actions 8] [--samples 400000] [--out DIR] [--quick]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

from maxminq import theory

# Operators whose member count N is free (for Averaged and Historical Best the members are K
# snapshots, drawn independently here: real snapshots of one table are correlated).
FREE_N = ("maxmin", "ensemble", "averaged", "historical_best")
# Operators with a fixed member count, and the keyword parameters we give them at tau = 1.
FIXED_N = {
    "q_learning": (1, {}),
    "double_q": (2, {}),
    "weighted_double_q": (2, {"c": 1.0}),  # Zhang et al.'s constant: the same at every tau
    # Lee et al.'s correction needs the errors' standard deviation: tau / sqrt(3) for U(-tau, tau).
    "bias_corrected": (1, {"sigma": 1.0 / math.sqrt(3.0)}),
}
#: Parameters that are a multiple of tau (FIXED_N gives them at tau = 1).
PER_TAU = ("sigma",)
# U(-tau, tau) is drawn as low + (high - low) u: 2 tau must be a finite double.
TAU_MAX = float(np.finfo(np.float64).max) / 2


def fixed_params(name: str, tau: float) -> dict[str, float]:
    """The parameters of fixed-N operator ``name`` for errors of half-width ``tau`` (sigma,
    the errors' standard deviation, scales with tau; it stayed 1 / sqrt(3) at every tau)."""
    return {k: v * tau if k in PER_TAU else v for k, v in FIXED_N[name][1].items()}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--actions", type=int, default=8, help="M, actions of equal value (default 8)")
    p.add_argument(
        "--n-max", type=int, default=8, help="largest N for the free-N operators (default 8)"
    )
    p.add_argument("--samples", type=int, help="Monte Carlo draws per cell (default 400,000)")
    p.add_argument(
        "--tau", type=float, default=1.0, help="half-width of the uniform errors (default 1)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/operator_bias"),
        help="output folder, created if needed: operator_bias.csv, operator_bias.png "
        "(default results/examples/operator_bias)",
    )
    p.add_argument(
        "--quick", action="store_true", help="20,000 draws per cell unless --samples (for tests)"
    )
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    if args.samples is None:  # --quick sets the scale, not a --samples given with it
        args.samples = 20_000 if args.quick else 400_000
    for name in ("actions", "n_max"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.seed < 0:  # else SeedSequence's ValueError, as a traceback
        p.error(f"--seed must be >= 0, got {args.seed}")
    if args.samples < 2:  # one draw has no standard error (it printed 0, and z = inf)
        p.error("--samples must be >= 2")
    if not 0 < args.tau <= TAU_MAX:  # inf and 1e308 ended in NumPy's OverflowError
        p.error(f"--tau must be > 0 and at most {TAU_MAX:.4g}")
    return args


def bias_table(args: argparse.Namespace) -> pd.DataFrame:
    """One row per (operator, N): sampled bias +- SE, variance, and the exact mean."""
    # One child stream per operator: adding an operator does not change the others' draws.
    names = [*FIXED_N, *FREE_N]
    streams = np.random.SeedSequence(args.seed).spawn(len(names))
    rows = []
    for name, stream in zip(names, streams, strict=True):
        rng = np.random.default_rng(stream)
        fixed = FIXED_N.get(name)
        ns = [fixed[0]] if fixed else list(range(1, args.n_max + 1))
        params = fixed_params(name, args.tau) if fixed else {}
        for n in ns:
            # gamma = 1: G's own error (every true value is 0)
            est = theory.operator_bias(
                name, args.actions, n, args.tau, 1.0, args.samples, rng, **params
            )
            mean, se, var = est.bias, est.bias_se, est.variance
            exact = theory.operator_expected_bias(name, args.actions, n, tau=args.tau, **params)
            rows.append(
                {
                    "operator": name,
                    "N": n,
                    "mc_bias": mean,
                    "mc_se": se,
                    "mc_variance": var,
                    "exact_bias": float(exact),
                }
            )
    table = pd.DataFrame(rows)
    table["z"] = (table["mc_bias"] - table["exact_bias"]) / table["mc_se"]
    return table


def maxmin_theorem_1(args: argparse.Namespace) -> pd.DataFrame:
    """Theorem 1 for Maxmin at each N: bias (i), the target's variance, Var[Q^min] (ii) in
    closed form and by Monte Carlo (``theory.monte_carlo_bias``: the min of N errors of one
    action, its own stream of ``--seed``), and Corollary 1's ratio Var[Q^min] / Var[Q].
    Var[Q^min] is in units of tau^2 (drawn at tau = 1: U(-tau, tau) is tau U(-1, 1), and
    tau^2 itself overflows past tau ~ 1e154)."""
    ns = np.arange(1, args.n_max + 1)
    # After the operators' streams (bias_table spawns len(FIXED_N) + len(FREE_N) children):
    # their draws do not change.
    stream = np.random.SeedSequence(args.seed, spawn_key=(len(FIXED_N) + len(FREE_N),))
    qmin = theory.monte_carlo_bias(1, ns, 1.0, 1.0, args.samples, np.random.default_rng(stream))
    return pd.DataFrame(
        {
            "N": ns,
            "expected_bias": theory.expected_bias(args.actions, ns, tau=args.tau),
            "target_variance": theory.target_variance(args.actions, ns, tau=args.tau),
            "var_qmin": theory.min_variance(ns),  # Theorem 1 (ii), in units of tau^2
            "mc_var_qmin": qmin.min_variance,
            "var_qmin_over_var_q": theory.variance_ratio(ns),  # Corollary 1 (samples split)
        }
    )


def save_figure(table: pd.DataFrame, args: argparse.Namespace, path: Path) -> None:
    """Sampled biases (points, +- 2 SE) on the exact curves, one colour per operator."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), layout="constrained")
    for i, (name, rows) in enumerate(table.groupby("operator", sort=False)):
        colour = f"C{i}"
        if name in FREE_N:
            # Averaged with independent snapshots *is* Ensemble here: draw it so both show.
            same = name == "averaged"
            ax.plot(rows["N"], rows["exact_bias"], color=colour, lw=1.2, ls=":" if same else "-")
            ax.errorbar(
                rows["N"],
                rows["mc_bias"],
                yerr=2 * rows["mc_se"],
                fmt="x" if same else "o",
                ms=6 if same else 3,
                color=colour,
                capsize=2,
                label=name + (" (= ensemble here)" if same else ""),
            )
        else:  # fixed member count: a dashed level, the sampled point at its own N
            ax.axhline(rows["exact_bias"].iloc[0], color=colour, ls="--", lw=1.0)
            ax.errorbar(
                rows["N"],
                rows["mc_bias"],
                yerr=2 * rows["mc_se"],
                fmt="s",
                ms=4,
                color=colour,
                capsize=2,
                label=f"{name} (N={rows['N'].iloc[0]})",
            )
    ax.axhline(0.0, color="black", lw=0.8)
    ax.set_xlabel("N (estimators, or snapshots for averaged / historical_best)")
    ax.set_ylabel("bias of the bootstrap value")
    ax.set_title(
        f"M = {args.actions} equal actions, errors U(-{args.tau:g}, {args.tau:g}); "
        f"lines exact, points Monte Carlo ({args.samples:,} draws)",
        fontsize="medium",
    )
    ax.legend(fontsize="small", ncol=2)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Simulate, compare with the closed forms, print and save."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    table = bias_table(args)
    table.to_csv(args.out / "operator_bias.csv", index=False)
    save_figure(table, args, args.out / "operator_bias.png")

    m = args.actions
    # Printed in units of tau (variances of tau^2): at --tau 1e-4 every bias printed as +0.000,
    # at 1e150 as a 150-digit number. The CSV keeps the values themselves.
    unit = args.tau
    units = "" if unit == 1 else f", in units of tau = {unit:g}"
    print(
        f"Bias of the bootstrap value, M = {m} actions, U(-{args.tau:g}, {args.tau:g}) errors, "
        f"{args.samples:,} draws per cell: Monte Carlo (exact){units}"
    )
    cells = table.assign(
        text=[
            f"{b / unit:+.3f} ({e / unit:+.3f})"
            for b, e in zip(table.mc_bias, table.exact_bias, strict=True)
        ]
    )
    free = cells[cells.operator.isin(FREE_N)].pivot(index="N", columns="operator", values="text")
    print(free[list(FREE_N)].to_string())
    for name, (n, _) in FIXED_N.items():
        row = cells[cells.operator == name].iloc[0]
        extra = "".join(f", {k}={v:.3g}" for k, v in fixed_params(name, args.tau).items())
        print(f"{name} (N={n}{extra}): {row.text}")

    # Theorem 1 for Maxmin and Corollary 1, from maxminq.theory.
    thm = maxmin_theorem_1(args)
    mc_maxmin = table[table.operator == "maxmin"].set_index("N")
    thm["mc_variance"] = mc_maxmin.loc[thm.N, "mc_variance"].to_numpy()
    print(
        "\nMaxmin, Theorem 1: (i) exact bias, the target's variance (exact; Monte Carlo: "
        "mc_variance), (ii) Var[Q^min] of one action (exact; Monte Carlo: mc_var_qmin); "
        "Corollary 1's Var[Q^min] / Var[Q]"
        + ("" if unit == 1 else f" (in units of tau = {unit:g} and tau^2)")
    )
    shown = thm.assign(  # the closed forms at tau = 1 (tau^2 overflowed past tau ~ 1e154)
        expected_bias=theory.expected_bias(m, thm.N.to_numpy()),
        target_variance=theory.target_variance(m, thm.N.to_numpy()),
        # the sample variance is samples x SE^2: in units of tau^2 without forming tau^2
        mc_variance=(mc_maxmin.loc[thm.N, "mc_se"].to_numpy() / unit) ** 2 * args.samples,
    )
    shown = shown[["N", "expected_bias", "target_variance", "mc_variance", "var_qmin",
                   "mc_var_qmin", "var_qmin_over_var_q"]]  # fmt: skip
    print(shown.to_string(index=False, float_format=lambda x: f"{x:.4f}"))

    # Conclusions computed from the numbers above, not asserted.
    worst = table.loc[table.z.abs().idxmax()]
    agree = bool((table.z.abs() < 4).all())
    print(
        f"\nLargest |Monte Carlo - exact| / SE: {abs(worst.z):.1f} ({worst.operator}, N={worst.N})"
        + (
            "; every cell within 4 SE of its exact value."
            if agree
            else "; some cells differ by more than 4 SE."
        )
    )
    best_mc = int(mc_maxmin.mc_bias.abs().idxmin())
    chosen = theory.choose_n(m, tau=args.tau, n_max=args.n_max)
    print(
        f"Least biased Maxmin N in 1..{args.n_max}: {best_mc} by simulation, {chosen} by "
        f"theory.choose_n (real zero at N = {theory.zero_bias_n(m):.2f})."
    )
    # Over / under only where the sample says so: 3 SE from zero (a sign alone printed
    # "under-estimates at N = 3 (-0.001)" with an SE of 0.002, M = 5, where the exact bias is
    # -0.0014).
    first, last = mc_maxmin.iloc[0], mc_maxmin.iloc[-1]
    if first.mc_bias > 3 * first.mc_se and last.mc_bias < -3 * last.mc_se:
        print(
            f"Maxmin over-estimates at N = 1 ({first.mc_bias / unit:+.3f}{units}) "
            f"and under-estimates at N = {args.n_max} ({last.mc_bias / unit:+.3f})."
        )
    else:
        unclear = [
            f"N = {n} ({row.mc_bias / unit:+.3f} +- {row.mc_se / unit:.3f})"
            # (--n-max 1: one row, named once; it read "at N = 1 (...) and N = 1 (...)")
            for n, row in ((1, first), (args.n_max, last))[: 1 if args.n_max == 1 else 2]
            if abs(row.mc_bias) <= 3 * row.mc_se
        ]
        if unclear:
            print(
                f"Maxmin's bias is within 3 SE of 0 at {' and '.join(unclear)}{units}: "
                "no sign at this many draws."
            )
    small = thm[thm.var_qmin_over_var_q < 1].N
    print(
        "Corollary 1 (samples split): Var[Q^min] < Var[Q] for "
        + (  # (it read "for N = none of 1..3")
            f"N = {', '.join(map(str, small))}."
            if len(small)
            else f"no N in 1..{args.n_max} (from N = 8 on)."
        )
    )
    print(f"Wrote {args.out / 'operator_bias.csv'} and {args.out / 'operator_bias.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
