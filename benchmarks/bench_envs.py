"""Random-policy throughput and episode statistics of every maxminq environment.

Measures, within one run (so ratios are comparable even on a loaded machine):

* single-env steps/s through ``maxminq.envs.make`` (Gymnasium wrappers included);
* batched env-steps/s through ``maxminq.envs.make_vector`` with B = 64 (native numba
  kernels for Catcher / Pixelcopter, ``SyncVectorEnv`` otherwise);
* the random policy's mean episode length and return (with standard errors) under the
  registered episode caps.

Usage: ``python benchmarks/bench_envs.py [--seconds 2] [--episodes 2000] [--other-episodes 300]
[--envs ID ...] [--out FILE.json]`` (docs/environments.md's random-policy table: ``--episodes 10000
--other-episodes 500``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from _cli import Parser, positive_float, positive_int  # this folder (_cli.py)
from tqdm import tqdm

from maxminq.cli import check_out_folder
from maxminq.envs import CATCHER_ID, PIXELCOPTER_ID, make, make_vector
from maxminq.errors import UsageError
from maxminq.experiments.store import atomic_write

ENV_IDS = [
    CATCHER_ID,
    PIXELCOPTER_ID,
    "LunarLander-v3",
    "maxminq/MinAtar-Asterix-v0",
    "maxminq/MinAtar-Breakout-v0",
    "maxminq/MinAtar-Seaquest-v0",
    "maxminq/MinAtar-SpaceInvaders-v0",
    "maxminq/MinAtar-Freeway-v0",
]


def single_speed(env_id: str, seconds: float, rng: np.random.Generator) -> tuple[float, float]:
    """Random-policy steps per second of one env (resetting at episode ends): (wall, CPU)."""
    env = make(env_id, seed=0)
    env.reset()
    n = env.action_space.n
    actions = rng.integers(0, n, size=1 << 16)
    steps, start, cpu = 0, time.perf_counter(), time.process_time()
    # at least one round: a process paused past ``seconds`` before its first check (a loaded
    # machine, a short --seconds) timed no step and printed a rate of 0
    while not steps or time.perf_counter() - start < seconds:
        for _ in range(256):
            _, _, term, trunc, _ = env.step(int(actions[steps & 0xFFFF]))
            steps += 1
            if term or trunc:
                env.reset()
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def batched_speed(
    env_id: str, seconds: float, rng: np.random.Generator, b: int = 64
) -> tuple[float, float]:
    """Random-policy env-steps per second of ``make_vector`` with ``b`` sub-envs: (wall, CPU)."""
    venv = make_vector(env_id, list(range(b)))
    venv.reset()
    n = venv.single_action_space.n
    actions = rng.integers(0, n, size=(1024, b))
    calls, start, cpu = 0, time.perf_counter(), time.process_time()
    while not calls or time.perf_counter() - start < seconds:  # one round at least, as above
        for _ in range(16):
            venv.step(actions[calls & 1023])
            calls += 1
    rates = calls * b / (time.perf_counter() - start), calls * b / (time.process_time() - cpu)
    venv.close()
    return rates


def episode_stats(env_id: str, episodes: int, rng: np.random.Generator) -> dict[str, float]:
    """Mean (and standard error of) episode length and return of the uniform random policy,
    over the first ``episodes / 50`` episodes of each of 50 seeded environments (taking
    whichever episodes end first across them would favour short ones)."""
    b = 50
    quota = -(-episodes // b)
    episodes = quota * b
    venv = make_vector(env_id, list(range(1000, 1000 + b)))
    venv.reset()
    n = venv.single_action_space.n
    ret = np.zeros(b)
    length = np.zeros(b, dtype=np.int64)
    count = np.zeros(b, dtype=np.int64)
    lengths: list[int] = []
    returns: list[float] = []
    with tqdm(total=episodes, desc=f"episodes {env_id}", leave=False) as bar:
        while len(lengths) < episodes:
            _, r, term, trunc, _ = venv.step(rng.integers(0, n, size=b))
            ret += r
            length += 1
            for i in np.flatnonzero(term | trunc):
                if count[i] < quota:
                    lengths.append(int(length[i]))
                    returns.append(float(ret[i]))
                    count[i] += 1
                    bar.update(1)
                ret[i], length[i] = 0.0, 0
    venv.close()
    ln, rt = np.array(lengths), np.array(returns)
    return {
        "episodes": episodes,
        "mean_length": float(ln.mean()),
        "se_length": float(ln.std(ddof=1) / np.sqrt(episodes)),
        "mean_return": float(rt.mean()),
        "se_return": float(rt.std(ddof=1) / np.sqrt(episodes)),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; a bad option or an unknown env id is one line naming it (exit 2)."""
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=positive_float, default=2.0, help="time per speed measurement (2)"
    )
    parser.add_argument(
        "--episodes",
        type=positive_int,
        default=2000,
        help="episodes for PLE games (2000; rounded up to a multiple of the 50 envs)",
    )
    parser.add_argument(
        "--other-episodes",
        type=positive_int,
        default=300,
        help="episodes for MinAtar / LunarLander (300; rounded up likewise)",
    )
    parser.add_argument(
        "--envs", nargs="+", default=ENV_IDS, help="env ids to measure (default: all eight)"
    )
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    if args.out is not None:  # else a folder or an unwritable place fails after the timing
        out = Path(args.out)
        if out.is_dir():
            parser.error(f"--out: {out} is a folder; give a file name, e.g. {out / 'envs.json'}")
        try:
            check_out_folder(out.parent, "--out")
        except UsageError as err:
            parser.error(str(err))
    for env_id in args.envs:  # a bad id fails here, not after the others' minutes
        try:
            env = make(env_id)
        except UsageError as err:
            parser.error(f"--envs: {str(err).removeprefix('--env: ')}")  # maxminq's option name
        space = env.action_space
        env.close()
        if not isinstance(space, gym.spaces.Discrete):  # the random policy draws integers
            parser.error(f"--envs: {env_id} has actions {space}; only Discrete ones are timed")
    return args


def main(argv: list[str] | None = None) -> None:
    """Measure every env and print a Markdown table."""
    args = parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    for env_id in tqdm(args.envs, desc="envs"):
        # Warm up (numba compilation, imports) outside the timed region.
        single_speed(env_id, min(0.2, args.seconds), rng)
        batched_speed(env_id, min(0.2, args.seconds), rng)
        row: dict[str, object] = {"env_id": env_id}
        row["single_wall"], row["single_cpu"] = single_speed(env_id, args.seconds, rng)
        row["batched64_wall"], row["batched64_cpu"] = batched_speed(env_id, args.seconds, rng)
        n_ep = args.episodes if env_id in (CATCHER_ID, PIXELCOPTER_ID) else args.other_episodes
        row.update(episode_stats(env_id, n_ep, rng))
        rows.append(row)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| env | single steps/s | batched B=64 env-steps/s | random: episodes | "
        "mean length | mean return |"
    )
    print("|---|---:|---:|---:|---:|---:|")  # steps/s: wall-clock / per CPU-second
    for r in rows:
        print(
            f"| {r['env_id']} | {r['single_wall']:,.0f} / {r['single_cpu']:,.0f} "
            f"| {r['batched64_wall']:,.0f} / {r['batched64_cpu']:,.0f} "
            f"| {r['episodes']} | {r['mean_length']:.1f} ± {r['se_length']:.1f} "
            f"| {r['mean_return']:.2f} ± {r['se_return']:.2f} |"
        )
    if args.out:
        text = json.dumps({"load": os.getloadavg()[0], "rows": rows}, indent=2)
        atomic_write(Path(args.out), lambda tmp: tmp.write_text(text))


if __name__ == "__main__":
    main()
