"""DQN against Maxmin DQN on an environment of your own, defined and registered in this script.

The environment is the paper's toy MDP (Lan et al. 2020, Fig. 1) as a Gymnasium env with
one-hot observations: from the start state A, action 0 stops (reward 0, episode over) and any
other action moves to state B (reward 0); in B every one of the M actions ends the episode
with a reward drawn from N(mu, 1), mu = -0.1 < 0. So going to B is worse than stopping, but
Q-learning's target for (A, go) is max_a Q(B, a), a max over M noisy estimates, which is
biased upwards: DQN is tempted into B. Maxmin DQN's target max_a min_i Q^i(B, a) is not
(Theorem 1: for M = 8 actions N = 4 is the least biased).

The script trains both agents with ``maxminq.deep.TrainConfig`` / ``run_training`` (all
seeds of one agent in one call), then prints

* how often each agent still went to B late in training (the temptation),
* the measured estimation bias over the second half of training per seed
  (``pooled_bias(metrics, second_half=True)``, the values ``maxminq compare`` averages),
* the comparison table of ``maxminq.analysis.compare_runs`` (``maxminq compare``),

and draws the learning curves with ``maxminq.analysis.plot_runs`` (``maxminq plot``).

Run:  python examples/own_env_maxmin_vs_dqn.py [--steps 20000] [--seeds 5] [--out DIR]
      [--overwrite] [--quick]

Run again with the same options, it reads the finished runs back; with more ``--steps`` it
extends them from their checkpoints; with other options it stops with a one-line error
unless ``--overwrite`` (``run_training(..., overwrite=True)``) replaces the runs.

Environment id: the run records ``own_env_maxmin_vs_dqn:NoisyGamble-v0`` (module:EnvId), so
any process that can import this file as the module ``own_env_maxmin_vs_dqn`` can rebuild
the environment. Run as a script, Python puts this file's folder first on ``sys.path``, so
training here works. ``maxminq evaluate`` (another process) needs the folder on the path too:

    PYTHONPATH=examples maxminq evaluate results/examples/own_env/maxmin --episodes 10

(A bare ``NoisyGamble-v0`` would also train here, but ``maxminq evaluate`` could not rebuild
it; ``__main__:NoisyGamble-v0`` would name maxminq's own entry point in that process.
``run_training`` warns about both, an ``EnvIdWarning``, before it trains.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

MODULE = "own_env_maxmin_vs_dqn"  # this file's name: the module part of the env id
ENV_ID = f"{MODULE}:NoisyGamble-v0"
# The feature-env defaults: 1,000 random steps, then eps falls from 1 to 0.01 in 1,000 steps.
EXPLORED = 2_000


class NoisyGamble(gym.Env):
    """The paper's two-state toy MDP. Observation: one-hot (A, B) as float32.

    A: action 0 ends the episode with reward 0; actions 1..M-1 move to B with reward 0.
    B: every action ends the episode with reward mu + sigma * N(0, 1).
    All randomness comes from ``self.np_random`` (seeded by ``reset``), so runs repeat.
    """

    metadata = {"render_modes": []}

    def __init__(self, n_actions: int = 8, mu: float = -0.1, sigma: float = 1.0) -> None:
        if n_actions < 2:
            raise ValueError(f"n_actions must be >= 2, got {n_actions}")
        self.mu, self.sigma = float(mu), float(sigma)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(n_actions)
        self._in_b = False

    def _obs(self) -> np.ndarray:
        return np.array([0.0, 1.0] if self._in_b else [1.0, 0.0], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start in A."""
        super().reset(seed=seed)  # seeds self.np_random
        self._in_b = False
        return self._obs(), {}

    def step(self, action):
        """(obs, reward, terminated, truncated, info)."""
        if not self._in_b:
            if int(action) == 0:  # stop: the safe choice, worth 0
                return self._obs(), 0.0, True, False, {}
            self._in_b = True  # go to B: worth gamma * mu < 0 in expectation
            return self._obs(), 0.0, False, False, {}
        reward = self.mu + self.sigma * float(self.np_random.standard_normal())
        return self._obs(), reward, True, False, {}


# Registered once per process (importing the module again must not re-register), with a
# string entry point, so that the id means the same class wherever the module is imported.
if ENV_ID.split(":")[1] not in gym.registry:
    gym.register(ENV_ID.split(":")[1], entry_point=f"{MODULE}:NoisyGamble", max_episode_steps=10)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    from maxminq.cli import OneLineParser

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, help="environment steps per seed (default 20,000)")
    p.add_argument(
        "--seeds",
        type=int,
        help="how many seeds per agent, 0..K-1, trained together (default 5; a count)",
    )
    p.add_argument("--n", type=int, default=4, help="Maxmin's N (default 4)")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results/examples/own_env"),
        help="output folder, created if needed: the two runs, comparison.csv, curves.png "
        "(default results/examples/own_env)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="delete both runs in --out and train anew, also one made with these options "
        "(without it, a run there with other options is refused)",
    )
    p.add_argument(
        "--quick", action="store_true", help="3,000 steps x 2 seeds, each unless given (for tests)"
    )
    args = p.parse_args(argv)
    from maxminq.cli import check_out_folder
    from maxminq.errors import UsageError

    try:  # one line now, not a traceback once the work is done
        check_out_folder(args.out, "--out")
    except UsageError as err:
        p.error(str(err))
    # --quick sets the scale of what was not given (it replaced --steps / --seeds given with it)
    if args.steps is None:
        args.steps = 3_000 if args.quick else 20_000
    if args.seeds is None:
        args.seeds = 2 if args.quick else 5
    if args.seeds < 1 or args.n < 1:
        p.error("--seeds and --n must be >= 1")
    if args.steps <= EXPLORED:
        p.error(f"--steps must exceed {EXPLORED} (random steps, then eps decays to 0.01)")
    return args


def gamble_rate(episodes, after: int):
    """Per seed, the fraction of episodes ending after step ``after`` that went to B (an
    episode through B lasts 2 steps, a stop 1)."""
    late = episodes[episodes["step"] > after]
    return late.groupby("seed")["length"].apply(lambda length: float((length == 2).mean()))


def main(argv: list[str] | None = None) -> int:
    """Train both agents, then print and plot the comparison."""
    args = parse_args(argv)
    # The id's module must be importable: true when run as a script (this folder is
    # sys.path[0]), made true here for other ways of calling main().
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)

    from maxminq.analysis import compare_runs, plot_runs
    from maxminq.deep import TrainConfig, pooled_bias, run_training
    from maxminq.errors import UsageError

    seeds = list(range(args.seeds))
    folders = {"maxmin": args.out / "maxmin", "dqn": args.out / "dqn"}
    tables = {}
    for key, agent, n in (("dqn", "dqn", 1), ("maxmin", "maxmin-dqn", args.n)):
        # Every option not given takes the feature-environment defaults of the paper
        # (`maxminq envs --env ...` lists them): RMSprop, MSE, buffer 10,000, target copy
        # every 200 steps, eps 1 -> 0.01 over 1,000 steps after 1,000 random ones.
        config = TrainConfig(
            env_id=ENV_ID,
            agent=agent,
            n=n,
            steps=args.steps,
            seeds=seeds,
            lr=1e-3,
            gamma=0.99,
            eval_episodes=100,
        )
        # resume=True (the default): a finished run with these options is read back, not
        # retrained; other options in the same folder are refused unless overwrite=True.
        try:
            tables[key] = run_training(
                config, folders[key], overwrite=args.overwrite, progress=False
            )
        except UsageError as err:  # e.g. other options than the run there: one line
            print(f"{Path(__file__).name}: error: {err}", file=sys.stderr)
            return 2

    print(f"{ENV_ID}: DQN vs Maxmin DQN (N = {args.n}), {args.steps:,} steps x {args.seeds} seeds")
    print(
        f"\nPer seed: share of episodes that went to B after step {EXPLORED:,} (when eps has "
        "reached 0.01; a greedy agent that stops goes there in ~0.9% of episodes), and the "
        "measured bias (estimate - return) pooled over the second half:"
    )
    summary = {}
    for key in ("dqn", "maxmin"):
        rate = gamble_rate(tables[key]["episodes"], after=EXPLORED)
        # Per seed, the probes of the metrics intervals starting at or after the midpoint,
        # pooled by count: the values compare_runs' bias_mean is the mean of.
        per_seed = pooled_bias(tables[key]["metrics"], second_half=True)
        bias = per_seed.set_index("seed")["bias_mean"]
        summary[key] = (rate, bias)
        print(
            f"  {key:7s} went to B: {' '.join(f'{r:.2f}' for r in rate)}   "
            f"bias: {' '.join(f'{b:+.3f}' for b in bias)}"
        )

    table = compare_runs([folders["maxmin"], folders["dqn"]], baseline=2)
    table.to_csv(args.out / "comparison.csv", index=False)
    shown = [
        "run",
        "steps",
        "seeds",
        "mean",
        "se",
        "bias_mean",
        "bias_se",
        "diff",
        "p",
        "p_improve",
    ]
    print(
        "\ncompare_runs (score: mean test return over 100 episodes with eps = 0.01; "
        "diff, p, p_improve: against DQN, baseline=2):"
    )
    print(table[shown].to_string(index=False, float_format=lambda x: f"{x:.3f}"))

    # Learning curves: `maxminq plot` from Python; returns [curves.png, curves.svg].
    figure = plot_runs(
        [folders["maxmin"], folders["dqn"]],
        args.out / "curves",
        panels=["return", "bias", "q"],
        title=f"{ENV_ID.split(':')[1]}, {args.seeds} seeds",
    )

    # Conclusions only as far as the numbers carry them.
    (r_dqn, b_dqn), (r_mm, b_mm) = summary["dqn"], summary["maxmin"]
    print(
        f"\nMean over seeds: went to B {r_dqn.mean():.3f} (DQN) vs {r_mm.mean():.3f} (Maxmin); "
        f"bias {b_dqn.mean():+.3f} vs {b_mm.mean():+.3f}."
    )
    checks = (
        ("went to B more often", r_dqn, r_mm),
        ("over-estimated more (measured bias)", b_dqn, b_mm),
    )
    for what, dqn, maxmin in checks:
        if dqn.min() > maxmin.max():
            print(f"Every DQN seed {what} than every Maxmin seed.")
        elif dqn.mean() > maxmin.mean():
            print(f"On average DQN {what} than Maxmin, but single seeds overlap.")
        else:
            print(f"Not shown at this scale: DQN {what} than Maxmin.")
    # plot_runs answers absolute paths; name the figure as the other files, under --out
    png = args.out / figure[0].name
    print(f"Wrote {png}, {args.out / 'comparison.csv'} and the runs in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
