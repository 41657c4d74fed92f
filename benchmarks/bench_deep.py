"""Env-steps/s of the batched deep agents vs a per-network Python loop (authors' style).

Measures, in ONE process and interleaved over several rounds (medians reported, so
machine-load drift hits every variant alike):

* DQN and Maxmin DQN with N = 2, 4, 8, one seed, (a) the batched ensemble of
  ``maxminq.deep`` and (b) a straightforward loop over N ``nn.Module`` networks with N
  ``torch.optim`` optimisers, written like the authors' code (acting: min over a Python
  loop of N forward passes; target: a loop over the N target nets; one net updated).
  The loop baseline gets a preallocated NumPy replay, so only the network loop differs.
* S = 1 vs S = 20 seeds in one process (batched), aggregate env-steps/s.

Every step after ``learning_starts`` is a full training step (act, env step, store, sample,
update), at the final exploration rate (the env's ``eps_end``: 0.01 LunarLander, 0.1
MinAtar), as in all but the first 0.1% (LunarLander) or 2% (MinAtar) of a paper-length run;
like the authors' code, both variants skip the greedy forward pass on exploring steps. With
one torch thread (the default) speeds are env-steps per CPU-second of this process
(``time.process_time``), which on a shared machine is far less noisy than wall-clock time;
on an idle machine the two agree. With ``--threads 2`` or more they are env-steps per wall-
clock second (CPU time would count the threads' spinning).

Run: ``.venv/bin/python benchmarks/bench_deep.py [--quick | --smoke] [--rounds R] [--steps K]
[--envs lunarlander minatar] [--threads T]`` (``--smoke``: a check that it runs, seconds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

from _cli import Parser, positive_int  # noqa: E402  (this folder: see _cli.py)

from maxminq.deep.config import TrainConfig  # noqa: E402
from maxminq.deep.nets import build_net  # noqa: E402
from maxminq.deep.train import Trainer  # noqa: E402
from maxminq.envs import make  # noqa: E402

LEARNING_STARTS = 200  # random steps first
WARM = 250  # steps before the clock starts: the random ones, then 50 training steps
# --smoke: a few of each, so that every code path runs in seconds (numbers meaningless)
SMOKE_LEARNING_STARTS, SMOKE_WARM, SMOKE_STEPS = 5, 8, 2
clock = time.process_time  # time.perf_counter with more than one torch thread (use_threads)


def _config(env_id: str, agent: str, n: int, seeds: int) -> TrainConfig:
    return TrainConfig(
        env_id=env_id,
        agent=agent,
        n=n,
        lr=1e-4,
        steps=10**9,
        seeds=list(range(seeds)),
        learning_starts=LEARNING_STARTS,
        eps_decay_steps=0,  # eps at its final value: the steady state of a run (see above)
        eval_episodes=0,
        checkpoint_every=0,
    ).resolve()


def batched_sps(env_id: str, agent: str, n: int, seeds: int, steps: int) -> float:
    """Aggregate env-steps/s of ``maxminq.deep`` (all seeds of one process)."""
    tr = Trainer(_config(env_id, agent, n, seeds))
    while tr.step < WARM:
        tr.train_step()
    t0 = clock()
    for _ in range(steps):
        tr.train_step()
    dt = clock() - t0
    tr.close()
    return steps * seeds / dt


class LoopAgent:
    """Maxmin DQN (N = 1: DQN) as N separate modules in Python loops, authors' style."""

    def __init__(self, cfg: TrainConfig, obs_shape: tuple[int, ...], n_actions: int) -> None:
        """N separate online and target nets (initialised as the batched agent's) and one
        optimizer each, from ``cfg``."""
        proto = build_net(cfg.network, cfg.n, obs_shape, n_actions)
        proto.init_members([torch.Generator().manual_seed(0)], cfg.n)
        self.nets = proto.to_modules()
        self.targets = proto.to_modules()
        kw = dict(cfg.optimizer_kwargs or {})
        if cfg.optimizer == "adam":
            self.opts = [torch.optim.Adam(m.parameters(), lr=cfg.lr, **kw) for m in self.nets]
        else:
            kw["centered"] = cfg.optimizer == "centered_rmsprop"
            self.opts = [torch.optim.RMSprop(m.parameters(), lr=cfg.lr, **kw) for m in self.nets]
        self.cfg, self.n_actions = cfg, n_actions

    def act(self, obs: np.ndarray, eps: float, rng: np.random.Generator) -> int:
        """Epsilon-greedy action on the minimum of the N online nets' values."""
        if rng.random() < eps:
            return int(rng.integers(self.n_actions))
        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32)[None]
            q = torch.stack([net(x) for net in self.nets]).min(0).values
        return int(q.argmax())

    def update(self, batch: tuple[torch.Tensor, ...], rng: np.random.Generator) -> None:
        """One Maxmin update: the target from all N target nets, one random net trained."""
        obs, act, rew, nxt, done = batch
        with torch.no_grad():
            q_next = torch.stack([t(nxt) for t in self.targets]).min(0).values.max(1).values
            y = rew + self.cfg.gamma * (1 - done) * q_next
        i = int(rng.integers(len(self.nets)))
        q = self.nets[i](obs).gather(1, act[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, y) if self.cfg.loss == "huber" else F.mse_loss(q, y)
        self.opts[i].zero_grad()
        loss.backward()
        if self.cfg.grad_clip:
            nn.utils.clip_grad_norm_(self.nets[i].parameters(), self.cfg.grad_clip)
        self.opts[i].step()

    def sync(self) -> None:
        """Copy every online net into its target net."""
        for t, m in zip(self.targets, self.nets, strict=True):
            t.load_state_dict(m.state_dict())


def loop_sps(env_id: str, n: int, steps: int) -> float:
    """Env-steps/s of the per-network loop baseline, one seed."""
    cfg = _config(env_id, "maxmin-dqn" if n > 1 else "dqn", n, 1)
    env = make(env_id, max_episode_steps=cfg.max_episode_steps)
    obs_shape, n_actions = env.observation_space.shape, int(env.action_space.n)
    agent = LoopAgent(cfg, obs_shape, n_actions)
    rng = np.random.default_rng(0)
    cap = cfg.buffer_size
    buf_o = np.zeros((cap, *obs_shape), np.float32)
    buf_n = np.zeros((cap, *obs_shape), np.float32)
    buf_a, buf_r, buf_d = np.zeros(cap, np.int64), np.zeros(cap, np.float32), np.zeros(cap)
    obs, _ = env.reset(seed=0)
    t0 = 0.0
    for t in range(WARM + steps):
        if t == WARM:
            t0 = clock()
        eps = 1.0 if t < cfg.learning_starts else cfg.eps_end
        a = agent.act(obs, eps, rng)
        nxt, r, term, trunc, _ = env.step(a)
        p = t % cap
        buf_o[p], buf_n[p], buf_a[p], buf_r[p], buf_d[p] = obs, nxt, a, r, float(term)
        obs = env.reset()[0] if (term or trunc) else nxt
        if t >= cfg.learning_starts:
            idx = rng.integers(0, min(t + 1, cap), cfg.batch_size)
            batch = tuple(
                torch.as_tensor(x[idx], dtype=dt)
                for x, dt in (
                    (buf_o, torch.float32),
                    (buf_a, torch.int64),
                    (buf_r, torch.float32),
                    (buf_n, torch.float32),
                    (buf_d, torch.float32),
                )
            )
            agent.update(batch, rng)
        if (t + 1) % cfg.target_update == 0:
            agent.sync()
    dt = clock() - t0
    env.close()
    return steps / dt


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """``--threads``, as this script and ``bench_minatar_bound.py`` take it."""
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch threads (default 1: CPU time; more: wall-clock time)",
    )


def use_threads(threads: int) -> None:
    """Give torch ``threads`` threads and set the :data:`clock` every timing here reads (also
    ``bench_minatar_bound.py``'s): CPU time with one thread, wall-clock time with more (CPU
    time would count the threads' spinning)."""
    global clock
    torch.set_num_threads(threads)
    clock = time.process_time if threads == 1 else time.perf_counter


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (one-line errors naming a bad option, exit 2)."""
    parser = Parser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    size.add_argument(
        "--smoke",
        action="store_true",
        help=f"checks that the script works, in seconds: learning starts after "
        f"{SMOKE_LEARNING_STARTS} steps, {SMOKE_STEPS} steps timed, 1 round; numbers meaningless",
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=None,
        help="interleaved rounds, medians reported (default 3; 1 with --quick or --smoke)",
    )
    parser.add_argument(
        "--steps",
        type=positive_int,
        default=None,
        help="timed training steps per measurement (default 500 LunarLander, 150 MinAtar; "
        "200 / 60 with --quick; S = 20 seeds: half as many)",
    )
    envs = ("lunarlander", "minatar")
    parser.add_argument(
        "--envs", nargs="+", choices=envs, default=list(envs), help="what to time (default both)"
    )
    add_threads_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run every measurement (interleaved rounds) and print tables with ratios."""
    args = parse_args(argv)
    use_threads(args.threads)
    global LEARNING_STARTS, WARM
    if args.smoke:
        LEARNING_STARTS, WARM = SMOKE_LEARNING_STARTS, SMOKE_WARM
        args.steps = args.steps or SMOKE_STEPS
    rounds = args.rounds or (1 if args.quick or args.smoke else 3)
    plans = {
        "LunarLander-v3": args.steps or (200 if args.quick else 500),
        "maxminq/MinAtar-Breakout-v0": args.steps or (60 if args.quick else 150),
    }
    wanted = {"lunarlander": "LunarLander-v3", "minatar": "maxminq/MinAtar-Breakout-v0"}
    plans = {env: steps for env, steps in plans.items() if env in map(wanted.get, args.envs)}
    what = "CPU" if args.threads == 1 else "wall-clock"
    print(f"bench_deep: {rounds} round(s), torch threads {args.threads} ({what} time), "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for env_id, steps in plans.items():
        res: dict[str, list[float]] = {}

        def rec(key: str, value: float, res: dict[str, list[float]] = res) -> None:
            res.setdefault(key, []).append(value)

        for _ in range(rounds):
            rec("batched dqn", batched_sps(env_id, "dqn", 1, 1, steps))
            rec("loop dqn", loop_sps(env_id, 1, steps))
            for n in (2, 4, 8):
                rec(f"batched maxmin N={n}", batched_sps(env_id, "maxmin-dqn", n, 1, steps))
                rec(f"loop maxmin N={n}", loop_sps(env_id, n, steps))
            s20 = max(steps // 2, 1)  # S = 20 steps are ~5x longer: half the steps, 10x the work
            rec("batched dqn S=20", batched_sps(env_id, "dqn", 1, 20, s20))
            rec("batched maxmin N=4 S=20", batched_sps(env_id, "maxmin-dqn", 4, 20, s20))
        med = {k: statistics.median(v) for k, v in res.items()}
        print(f"\n{env_id} (median env-steps/s over {rounds} round(s), {steps} steps each)")
        print("| agent | batched | per-net loop | batched / loop | batched / batched DQN |")
        print("|---|---|---|---|---|")
        for name in ("dqn", "maxmin N=2", "maxmin N=4", "maxmin N=8"):
            b, lp = med[f"batched {name}"], med[f"loop {name}"]
            print(f"| {name} | {b:.0f} | {lp:.0f} | {b / lp:.2f} | {b / med['batched dqn']:.2f} |")
        print(
            f"| loop maxmin N=8 / loop dqn | | | | {med['loop maxmin N=8'] / med['loop dqn']:.2f} |"
        )
        print("\n| seeds in one process | aggregate env-steps/s | vs S=1 |")
        print("|---|---|---|")
        for name, one in (("dqn", "batched dqn"), ("maxmin N=4", "batched maxmin N=4")):
            s20 = med[f"batched {name} S=20"]
            print(f"| {name}, S=1 | {med[one]:.0f} | 1.00 |")
            print(f"| {name}, S=20 | {s20:.0f} | {s20 / med[one]:.2f} |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
