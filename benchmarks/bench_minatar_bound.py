"""An upper bound on MinAtar Maxmin DQN (N = 8) / DQN env-steps/s, from measured arithmetic.

Maxmin DQN with N = 8 does everything a DQN training step does (act, env step, store,
sample, one network's forward, backward and optimiser step, one target evaluation) plus
evaluating 7 more target networks on the mini-batch and 7 more online networks on the state
it acts in (on greedy steps; ``bench_deep`` times steps at the final eps): the paper's
target ``max_a min_i Q_i(s', a)`` needs all N target nets on every next state, and its
behaviour ``argmax_a min_i Q_i(s, a)`` all N online nets. So

    time(Maxmin N=8 step) >= time(DQN step) + time(those 14 extra forward passes' GEMMs)

and ``DQN / Maxmin N=8 <= Y / (Y + X)``, with Y our DQN's step time and X the matrix
products of the extra passes alone, each timed at the fastest rate we measure for its
shape (a batched ``baddbmm`` over the 8 nets, or one plain ``mm`` with the same number of
multiply-adds, whichever is faster per net): no copies, no activations, no Python. A faster
DQN lowers the bound; only a slower one raises it.

Times are CPU seconds with one torch thread (less noisy on a shared machine), wall-clock
seconds with more. Run: ``.venv/bin/python benchmarks/bench_minatar_bound.py [--threads T]
[--steps K] [--reps R]`` (``--steps 2 --reps 2``: a check that it runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable

import bench_deep  # same folder: its batched_sps times full training steps
import torch
from _cli import Parser, positive_int  # same folder: one-line errors for bad options

from maxminq.deep.nets import build_net

ENV = "maxminq/MinAtar-Breakout-v0"
N = 8
REPS = 200  # default calls per timed block (--reps)


def per_call(fn: Callable[..., object], reps: int = REPS) -> float:
    """Median seconds of ``fn()`` over 5 blocks of ``reps`` calls (after a warm-up)."""
    for _ in range(min(20, reps)):
        fn()
    blocks = []
    for _ in range(5):
        t0 = bench_deep.clock()  # CPU or wall-clock time: see bench_deep.use_threads
        for _ in range(reps):
            fn()
        blocks.append((bench_deep.clock() - t0) / reps)
    return statistics.median(blocks)


def gemm_seconds_per_net(batch: int, channels: int, n_actions: int, reps: int = REPS) -> float:
    """Fastest measured seconds of one MinAtar net's matrix products on ``batch`` inputs:
    conv as im2col GEMM (16 x 9C @ 9C x 64B), 1024 -> 128 and 128 -> A layers (each timed
    by ``per_call`` with ``reps`` calls a block)."""
    g = torch.Generator().manual_seed(0)
    rows = batch * 64  # 8 x 8 conv positions per input
    cols = torch.rand(1, 9 * channels, rows, generator=g)
    total = 0.0
    for k, m_out in ((9 * channels, 16), (1024, 128), (128, n_actions)):
        if k == 9 * channels:  # conv: output channels x positions
            w, bias = torch.rand(1, N * m_out, k, generator=g), torch.rand(1, N * m_out, 1)
            batched = per_call(lambda w=w, b=bias: torch.baddbmm(b, w, cols), reps) / N
            w1 = torch.rand(m_out, k, generator=g)
            single = per_call(lambda w1=w1: w1 @ cols[0], reps)
        else:
            x = torch.rand(N, batch, k, generator=g)
            w, bias = torch.rand(N, k, m_out, generator=g), torch.rand(N, 1, m_out)
            batched = per_call(lambda x=x, w=w, b=bias: torch.baddbmm(b, x, w), reps) / N
            xs, w1 = x.reshape(N * batch, k), w[0]
            single = per_call(lambda xs=xs, w1=w1: xs @ w1, reps) / N
        total += min(batched, single)
    return total


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (one-line errors naming a bad option, exit 2)."""
    parser = Parser(description=__doc__.splitlines()[0])
    bench_deep.add_threads_option(parser)
    parser.add_argument(
        "--steps", type=positive_int, default=300, help="training steps timed per agent (300)"
    )
    parser.add_argument(
        "--reps",
        type=positive_int,
        default=REPS,
        help=f"calls per timed block of each matrix product (5 blocks, median; {REPS})",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Time DQN's and Maxmin N=8's training steps and the extra GEMMs; print the bound."""
    args = parse_args(argv)
    bench_deep.use_threads(args.threads)  # torch threads and the clock of every timing here
    probe = build_net("minatar_cnn", 1, (4, 10, 10), 6)  # Breakout: 4 channels, 6 actions
    channels, n_actions = probe.in_channels, probe.n_actions
    print(f"bench_minatar_bound: {ENV}, torch threads {args.threads}, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    dqn = 1.0 / bench_deep.batched_sps(ENV, "dqn", 1, 1, args.steps)  # seconds per step
    maxmin = 1.0 / bench_deep.batched_sps(ENV, "maxmin-dqn", N, 1, args.steps)
    target = gemm_seconds_per_net(32, channels, n_actions, args.reps)  # 32 next states
    act = gemm_seconds_per_net(1, channels, n_actions, args.reps)  # the one state acted in
    # Acting needs the online nets only on greedy steps (a fraction 1 - eps of them).
    greedy = 1.0 - bench_deep._config(ENV, "dqn", 1, 1).eps_end
    extra = (N - 1) * (target + greedy * act)
    print(f"DQN training step:                          {dqn * 1e3:7.3f} ms")
    print(f"Maxmin N={N} training step:                   {maxmin * 1e3:7.3f} ms")
    print(f"measured DQN / Maxmin N={N} speed:            {dqn / maxmin:7.3f}")
    print(f"GEMMs of one net, batch 32 / batch 1:       {target * 1e3:7.3f} / {act * 1e3:.3f} ms")
    print(f"GEMMs of the {N - 1} extra target + online nets: {extra * 1e3:7.3f} ms")
    print(f"bound DQN / (DQN + extra GEMMs):            {dqn / (dqn + extra):7.3f}")


if __name__ == "__main__":
    main()
