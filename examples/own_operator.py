"""A bootstrap operator G of your own, measured three ways: bias, toy MDP, CartPole.

The G here is a mixture of Maxmin and Ensemble Q-learning with a parameter ``lam``:

    G(Q_s') = max_a [ lam * min_i Q^i(s', a) + (1 - lam) * mean_i Q^i(s', a) ],

``lam = 1`` is Maxmin's target, ``lam = 0`` Ensemble's. For every action the mixed value lies
between the min and the mean of the N estimates, so G lies between Maxmin's G and Ensemble's
on the same estimates. The script

1. samples its bias in Theorem 1's setting (M = 8 actions of equal true value 0, every one of
   the N estimates with an independent U(-1, 1) error) with ``theory.operator_bias``, next to
   Maxmin's, Ensemble's and Q-learning's, every operator on the same draws (one seed);
2. runs the paper's toy MDP (``tabular.toy_mdp.run_toy_mdp``) at mu = -0.1 with it, with
   Maxmin and with Q-learning, and sets Q(A, Left) after the last episode against its true
   value mu. A G of your own acts on, and is read out as, the mean of its N tables, the
   library's Maxmin the min (docs/classic-experiments.md, "A G function of your own"), so
   the script also runs G at lam = 1 (Maxmin's target with G's read-out): G at ``--lam``
   against it differs in the target only;
3. trains ``generalized-dqn`` with it and ``maxmin-dqn`` on CartPole-v1
   (``deep.TrainConfig`` / ``run_training``) and compares them with ``analysis.compare_runs``.

How maxminq finds G. Every tool takes G by the string ``'module:function'``
(``operators.load_operator``): here ``own_operator:mixed_q``, this file imported as the
module ``own_operator``. Run as a script, Python puts this file's folder first on
``sys.path``, so the import works (``main()`` puts it there for other callers too). The
function object defined in a script run as ``__main__`` (or in a notebook) is not enough
for the deep agents and the command line: a saved run and a worker process need a name
they can import again, so pass the string (the classic run functions, called in this
process, take such a function too, named ``__main__:mixed_q``). From the command line the
folder must be on ``PYTHONPATH``:

    PYTHONPATH=examples maxminq experiment toy-mdp --algorithms own_operator:mixed_q:4:lam=0.5
    PYTHONPATH=examples maxminq train --env CartPole-v1 --agent generalized-dqn \\
        --operator own_operator:mixed_q --n 4 --op-kwargs '{"lam": 0.5}' --out runs/mixed

G is called with NumPy arrays by ``theory.operator_bias`` and the toy MDP and with torch
tensors (float32, shape (B, N, A)) by ``generalized-dqn``, which wants a torch tensor back:
``mixed_q`` therefore handles both.

Run:  python examples/own_operator.py [--lam 0.5] [--n 4] [--samples 200000] [--runs 200]
      [--episodes 300] [--steps 20000] [--seeds 3] [--out DIR] [--overwrite] [--quick]

Run again with the same options, the CartPole runs are read back; with another ``--lam``,
``--n``, ``--steps`` below theirs or ``--seeds`` into the same ``--out`` it stops with a
one-line error unless ``--overwrite``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

MODULE = "own_operator"  # this file's name: the module part of the reference
OPERATOR = f"{MODULE}:mixed_q"
M_ACTIONS = 8  # Theorem 1's setting, as examples/operator_bias.py
MU = -0.1  # the toy MDP's mean reward in B: Left is worth mu < 0, Right 0


def mixed_q(q: Any, lam: float = 0.5) -> Any:
    """``max_a [lam min_i Q^i(s', a) + (1 - lam) mean_i Q^i(s', a)]`` for q of shape
    (..., N, A): a NumPy array (bias, toy MDP) or a torch tensor (generalized-dqn)."""
    if isinstance(q, np.ndarray):
        return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)
    return (lam * q.amin(dim=-2) + (1 - lam) * q.mean(dim=-2)).amax(dim=-1)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lam", type=float, default=0.5, help="G's weight on the min (default 0.5)")
    p.add_argument("--n", type=int, default=4, help="N for the toy MDP and CartPole (default 4)")
    p.add_argument("--n-max", type=int, default=8, help="largest N of the bias table (default 8)")
    p.add_argument("--samples", type=int, help="bias draws per cell (default 200,000)")
    p.add_argument("--runs", type=int, help="toy MDP runs per algorithm (default 200)")
    p.add_argument("--episodes", type=int, help="toy MDP episodes per run (default 300)")
    p.add_argument("--steps", type=int, help="CartPole steps per seed (default 20,000)")
    p.add_argument(
        "--seeds",
        type=int,
        help="how many CartPole seeds per agent, 0..K-1 (default 3; a count, not train's list)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the bias draws and the toy MDP (default 0)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/own_operator"),
        help="output folder, created if needed: bias.csv, toy_mdp.csv, comparison.csv, "
        "the two CartPole runs (default results/examples/own_operator)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="delete the CartPole runs in --out and train anew (without it, a run there "
        "with other options is refused)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="20,000 draws, 50 runs x 100 episodes, 1,500 steps x 1 seed, each unless "
        "given (for tests)",
    )
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    scale = {  # --quick sets the scale of what was not given
        "samples": (20_000, 200_000),
        "runs": (50, 200),
        "episodes": (100, 300),
        "steps": (1_500, 20_000),
        "seeds": (1, 3),
    }
    for name, (quick, full) in scale.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    for name in ("n", "n_max", "runs", "episodes", "seeds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.samples < 2:
        p.error("--samples must be >= 2")
    if args.seed < 0:
        p.error(f"--seed must be >= 0, got {args.seed}")
    if not 0.0 <= args.lam <= 1.0:  # outside, G is not between Maxmin and Ensemble
        p.error(f"--lam must be in [0, 1], got {args.lam}")
    if args.steps <= 1_000:
        p.error("--steps must exceed 1,000 (CartPole's random steps before learning)")
    return args


def bias_table(args: argparse.Namespace) -> pd.DataFrame:
    """Bias of G, Maxmin, Ensemble (N = 1..n_max) and Q-learning (N = 1) on the same draws."""
    from maxminq import theory

    ns = list(range(1, args.n_max + 1))
    cases = [("q_learning", [1], {}), ("maxmin", ns, {}), ("ensemble", ns, {})]
    cases.append((OPERATOR, ns, {"lam": args.lam}))
    rows = []
    for name, members, params in cases:
        for n in members:
            # A fresh generator of one seed per cell: every operator sees the same errors
            # (common random numbers), so their differences are G's, not the draws'.
            rng = np.random.default_rng([args.seed, n])
            est = theory.operator_bias(name, M_ACTIONS, n, 1.0, 1.0, args.samples, rng, **params)
            rows.append({"operator": name, "N": n, "bias": est.bias, "se": est.bias_se})
    return pd.DataFrame(rows)


def toy_table(args: argparse.Namespace) -> pd.DataFrame:
    """Q(A, Left) after the last episode per run (column ``label``): G at ``--lam`` and at
    lam = 1 (Maxmin's target, read out as G's), the library's Maxmin (N = n), Q-learning."""
    from maxminq.tabular.toy_mdp import run_toy_mdp

    frames = []
    for label, algorithm, n, extra in (
        (own_label(args.lam), OPERATOR, args.n, {"op_kwargs": {"lam": args.lam}}),
        (own_label(1.0), OPERATOR, args.n, {"op_kwargs": {"lam": 1.0}}),
        ("maxmin", "maxmin", args.n, {}),
        ("q_learning", "q_learning", 1, {}),
    ):
        if label in {f.label.iloc[0] for f in frames}:  # --lam 1: run once
            continue
        df = run_toy_mdp(
            mu=MU,
            algorithm=algorithm,
            n=n,
            runs=args.runs,
            episodes=args.episodes,
            seed=args.seed,
            **extra,
        )
        frames.append(df[df.episode == df.episode.max()].assign(label=label))
    return pd.concat(frames, ignore_index=True)


def paired_difference(toy: pd.DataFrame, label: str, other: str) -> tuple[float, float]:
    """Mean and standard error of ``label``'s Q(A, Left) minus ``other``'s, run by run: run
    r of every setting has the same seed (``run_toy_mdp``'s streams are (seed, r)), so the
    two are paired and the SE is the per-run differences' (the two SEs combined as if
    independent overstate it: their runs' values correlate)."""
    a = toy[toy.label == label].set_index("run").q_a_left
    b = toy[toy.label == other].set_index("run").q_a_left
    d = (a - b).dropna().to_numpy(dtype=float)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


def own_label(lam: float) -> str:
    """How G at ``lam`` is named in the printed tables."""
    return f"mixed_q (lam={lam:g})"


def train_cartpole(args: argparse.Namespace) -> dict[str, Path] | None:
    """Train generalized-dqn with G and maxmin-dqn (same N, lr, seeds); None on a refusal."""
    from maxminq.deep import TrainConfig, run_training
    from maxminq.errors import UsageError

    folders = {"mixed": args.out / "mixed", "maxmin": args.out / "maxmin"}
    for key, agent, extra in (
        ("mixed", "generalized-dqn", {"operator": OPERATOR, "op_kwargs": {"lam": args.lam}}),
        ("maxmin", "maxmin-dqn", {}),
    ):
        # The other options are CartPole's defaults (`maxminq envs --env CartPole-v1`);
        # the lr is given so that both agents learn at the same rate.
        config = TrainConfig(
            env_id="CartPole-v1",
            agent=agent,
            n=args.n,
            lr=3e-4,
            steps=args.steps,
            seeds=list(range(args.seeds)),
            eval_episodes=10,
            **extra,
        )
        try:
            run_training(config, folders[key], overwrite=args.overwrite, progress=False)
        except UsageError as err:  # e.g. another --lam than the run there: one line
            print(f"{Path(__file__).name}: error: {err}", file=sys.stderr)
            return None
    return folders


def main(argv: list[str] | None = None) -> int:
    """Measure G's bias, run the toy MDP and CartPole, print what was measured."""
    args = parse_args(argv)
    # OPERATOR's module must be importable: true when run as a script (this folder is
    # sys.path[0]), made true here for other ways of calling main().
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    args.out.mkdir(parents=True, exist_ok=True)
    label = own_label(args.lam)
    # CartPole first: a refused run (other options in --out) then leaves the folder as it was.
    folders = train_cartpole(args)
    if folders is None:
        return 2

    # 1. Bias in Theorem 1's setting.
    bias = bias_table(args)
    bias.to_csv(args.out / "bias.csv", index=False)
    wide = bias[bias.operator != "q_learning"].pivot(index="N", columns="operator", values="bias")
    wide = wide[["maxmin", OPERATOR, "ensemble"]].rename(columns={OPERATOR: label})
    print(
        f"1. Bias of the bootstrap value, M = {M_ACTIONS} actions, U(-1, 1) errors, "
        f"{args.samples:,} draws per cell (the same draws for every operator):"
    )
    print(wide.to_string(float_format=lambda x: f"{x:+.3f}"))
    q_row = bias[bias.operator == "q_learning"].iloc[0]
    print(
        f"q_learning (N=1): {q_row.bias:+.3f}; standard errors at most {bias.se.max():.3f} "
        "(bias.csv)"
    )
    own, low, high = wide[label], wide["maxmin"], wide["ensemble"]
    if ((own >= low) & (own <= high)).all():
        print(f"{label} lies between Maxmin and Ensemble at every N in 1..{args.n_max}.")
    least = int(own.abs().idxmin())
    print(
        f"Least biased N in 1..{args.n_max}: {least} for {label} ({own[least]:+.3f}), "
        f"{int(low.abs().idxmin())} for Maxmin ({low[low.abs().idxmin()]:+.3f})."
    )

    # 2. The toy MDP at mu = -0.1: Q(A, Left) is worth mu.
    toy = toy_table(args)
    toy.to_csv(args.out / "toy_mdp.csv", index=False)
    print(
        f"\n2. Toy MDP, mu = {MU}: Q(A, Left) after episode {args.episodes} "
        f"(true value {MU}), mean +- SE over {args.runs} runs; a G of your own reads it "
        "from the mean of its N tables, the library's maxmin from their min:"
    )
    summary = {}
    for (shown, n), rows in toy.groupby(["label", "n"], sort=False):
        values = rows.q_a_left.to_numpy(dtype=float)
        mean, se = values.mean(), values.std(ddof=1) / np.sqrt(len(values))
        summary[shown] = (mean - MU, se)
        print(f"  {shown:18s} N={n}  {mean:+.3f} +- {se:.3f}  bias {mean - MU:+.3f}")
    for shown, (b, se) in summary.items():
        if abs(b) > 2 * se:  # a sentence only where the bias is beyond 2 SE
            what = "over" if b > 0 else "under"
            print(f"{shown} {what}-estimates Q(A, Left) (bias {b:+.3f}, beyond 2 SE).")
        else:
            print(f"{shown}: no bias beyond 2 SE ({b:+.3f} +- {se:.3f}).")
    if args.lam != 1.0:  # the same read-out: the difference is the targets'
        diff, se_diff = paired_difference(toy, label, own_label(1.0))  # the same seeds
        if abs(diff) > 2 * se_diff:
            what = "higher" if diff > 0 else "lower"
            print(
                f"With the same read-out, {label}'s Q(A, Left) is {what} than with "
                f"Maxmin's target (lam=1) by {abs(diff):.3f} (beyond 2 SE, {se_diff:.3f})."
            )
        else:
            print(f"{label} and lam=1 do not differ beyond 2 SE ({diff:+.3f} +- {se_diff:.3f}).")

    # 3. CartPole-v1: generalized-dqn with G against maxmin-dqn (trained above).
    from maxminq.analysis import compare_runs

    table = compare_runs([folders["mixed"], folders["maxmin"]], baseline=2)
    table.to_csv(args.out / "comparison.csv", index=False)
    print(
        f"\n3. CartPole-v1, N = {args.n}, {args.steps:,} steps x {args.seeds} seed(s): mean "
        "test return over 10 episodes (eps = 0.01) and measured bias; diff and p against "
        "maxmin-dqn:"
    )
    shown = ["run", "agent", "mean", "se", "bias_mean", "bias_se", "diff", "p"]
    print(table[shown].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    p_value = table.p.iloc[0]
    if args.seeds < 2:
        print("One seed per agent: no test of the difference (give --seeds 2 or more).")
    elif np.isfinite(p_value) and p_value < 0.05:
        better = "higher" if table["diff"].iloc[0] > 0 else "lower"
        print(f"{label}'s test return is {better} than Maxmin DQN's (p = {p_value:.3f}).")
    else:
        print(f"The test returns do not differ at the 5% level (p = {p_value:.3f}).")
    own_row, mm_row = table.iloc[0], table.iloc[1]
    gap, gap_se = own_row.bias_mean - mm_row.bias_mean, np.hypot(own_row.bias_se, mm_row.bias_se)
    if args.seeds >= 2 and np.isfinite(gap_se) and abs(gap) > 2 * gap_se:
        what = "higher" if gap > 0 else "lower"
        print(
            f"{label}'s measured bias is {what} than Maxmin DQN's by {abs(gap):.3f} "
            f"(beyond 2 SE, {gap_se:.3f})."
        )
    elif args.seeds >= 2:
        print(f"The measured biases do not differ beyond 2 SE ({gap:+.3f} +- {gap_se:.3f}).")
    print(f"Wrote {args.out / 'bias.csv'}, toy_mdp.csv, comparison.csv and the runs in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
