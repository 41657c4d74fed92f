"""A small sweep declared in Python, run into an SQLite results store, queried back, run again.

A sweep config is a grid of runs of one kind (here ``toy_mdp``, the paper's two-state MDP of
Fig. 1-2). This script

1. writes the config as a YAML string and validates it with ``maxminq.experiments.config``
   (``parse_document`` + ``config_from_document``: the same checks as a config file),
2. runs it with the local process pool (``maxminq.experiments.runner.run_sweep``) into
   ``--out`` (``results.sqlite`` plus one folder of tables per run),
3. reads every finished run's tables back (``maxminq.experiments.store.load_results``) and
   prints, per setting, Q(A, Left) and P(Left) over the last 10% of episodes, and
4. runs the same sweep again: every run is found finished and verified, so nothing runs.

Run:  python examples/sweep_in_python.py [--out DIR] [--workers 2] [--quick]

The same config as a file runs from the shell with ``maxminq sweep FILE --out DIR``, and
``maxminq status DIR --runs`` lists its runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

# Scales may have any names (one is enough); `full` is this script's default scale, far
# below the paper's (configs/toy_mdp.yaml has that: 5,000 runs x 1,000 episodes).
CONFIG = """
name: toy_mdp_example
kind: toy_mdp
description: Q-learning, Double Q and Maxmin (N = 2, 4) on the toy MDP, both signs of mu.
fixed:
  seed: 0
grid:
  mu: [0.1, -0.1]            # mean reward in state B; Left is worth mu (gamma = 1)
variants:                    # a union of settings, each crossed with the grid
  - {algorithm: q_learning, n: 1}
  - {algorithm: double_q, n: 2}
  - {algorithm: maxmin, n: [2, 4]}
scales:
  quick:
    fixed: {runs: 20, episodes: 150}
  full:
    fixed: {runs: 300, episodes: 600}
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/sweep"),
        help="output folder, created if needed: the results store, summary.csv "
        "(default results/examples/sweep)",
    )
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--quick", action="store_true", help="20 runs x 150 episodes (for tests)")
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    if args.workers < 1:
        p.error("--workers must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the sweep twice and print what is in the store in between."""
    args = parse_args(argv)
    from maxminq.experiments.config import config_from_document, parse_document
    from maxminq.experiments.runner import run_sweep
    from maxminq.experiments.store import load_results

    scale = "quick" if args.quick else "full"
    # The path only names the config in error messages (a bad key says where it came from).
    config = config_from_document(parse_document(CONFIG), "<sweep_in_python.CONFIG>", scale)
    print(f"{config.name} [{scale}]: {len(config.runs)} runs; ids depend only on the settings:")
    for run in config.runs[:3]:
        print(
            f"  {run.run_id}  {run.settings['algorithm']} n={run.settings['n']} "
            f"mu={run.settings['mu']}"
        )
    print("  ...")

    summary = run_sweep(config, args.out, workers=args.workers, progress=False)
    print("first run: ", summary.line())
    if not summary.ok:  # a failed run's traceback is in the store; show its last line
        for run_id, error in summary.failures.items():
            print(f"  {run_id} failed: {error}")
        return 1

    # One DataFrame per table over all finished runs, the settings as columns.
    df = load_results(args.out, config=config.name)["toy_mdp"]
    last = df[df["episode"] >= 0.9 * df["episode"].max()]  # the last 10% of episodes
    table = (
        last.groupby(["mu", "algorithm", "n"])[["q_a_left", "p_left"]]
        .mean()
        .reset_index()
        .sort_values(["mu", "algorithm", "n"], ascending=[False, True, True])
    )
    table["q_bias"] = table["q_a_left"] - table["mu"]  # true Q(A, Left) = gamma * mu = mu
    table.to_csv(args.out / "summary.csv", index=False)
    print(f"\nLast 10% of episodes, mean over runs ({df['run'].nunique()} runs per setting):")
    print(table.to_string(index=False, float_format=lambda x: f"{x:+.3f}"))
    for mu, rows in table.groupby("mu", sort=False):
        q = rows.set_index(["algorithm", "n"])["q_bias"]
        print(
            f"mu = {mu:+g}: Q(A, Left) bias ranges from {q.min():+.3f} ({q.idxmin()[0]} "
            f"N={q.idxmin()[1]}) to {q.max():+.3f} ({q.idxmax()[0]} N={q.idxmax()[1]})"
        )

    # Run it again: every run is done and its files verify against the manifest, so none runs.
    start = time.perf_counter()
    again = run_sweep(config, args.out, workers=args.workers, progress=False)
    print("\nsecond run:", again.line(), f"({time.perf_counter() - start:.1f} s)")
    ran = again.done + again.diverged + again.failed
    print(f"runs executed by the second call: {ran} (skipped {again.skipped} of {again.total})")
    print(
        f"Wrote {args.out / 'results.sqlite'}, {args.out / 'tables'} and {args.out / 'summary.csv'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
