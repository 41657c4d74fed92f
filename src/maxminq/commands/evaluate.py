"""``maxminq evaluate RUN_DIR``: play episodes with the trained agents of a finished
``maxminq train`` run (its ``model.pt``), print each seed's mean return, and optionally
write the episodes as CSV and one episode as an animated GIF.

Example::

    maxminq evaluate runs/lunar-maxmin --episodes 20 --gif runs/lunar-maxmin/episode.gif
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from maxminq.analysis.style import count, label
from maxminq.errors import UsageError, one_line
from maxminq.experiments.store import atomic_write

if TYPE_CHECKING:
    import pandas as pd

    from maxminq.deep.config import TrainConfig

GIF_MAX_FRAMES = 2000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq evaluate``."""
    parser.add_argument("run", type=Path, metavar="RUN_DIR", help="a 'maxminq train' folder")
    parser.add_argument("--episodes", type=int, default=10, help="episodes per seed (default 10)")
    parser.add_argument(
        "--eps", type=float, default=0.0, help="epsilon of the episodes (default 0: greedy)"
    )
    parser.add_argument(
        "--seeds",
        default=None,
        help="training seeds to play, as train's --seeds: 0-4 or 0,3,7 (default: every seed that "
        "finished training)",
    )
    parser.add_argument(
        "--env-seed",
        type=int,
        default=0,
        help="episode j starts from reset(seed=ENV_SEED + j) (default 0)",
    )
    parser.add_argument(
        "--max-episode-steps",
        type=int,
        default=None,
        help="cap each episode at this many steps (default: the run's cap, if any)",
    )
    parser.add_argument("--csv", type=Path, default=None, help="also write the episodes here")
    parser.add_argument(
        "--gif",
        type=Path,
        default=None,
        help=f"record the first seed's first episode as an animated GIF (at most "
        f"{GIF_MAX_FRAMES} frames)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _check(args: argparse.Namespace) -> None:
    from maxminq.cli import check_out_folder

    if args.episodes < 1:
        raise UsageError(f"--episodes: expected a whole number >= 1, got {args.episodes}")
    if not 0.0 <= args.eps <= 1.0:
        raise UsageError(f"--eps: expected a probability in [0, 1], got {args.eps}")
    if args.max_episode_steps is not None and args.max_episode_steps < 1:
        raise UsageError(
            f"--max-episode-steps: expected a whole number >= 1, got {args.max_episode_steps}"
        )
    if args.env_seed < 0:
        raise UsageError(f"--env-seed: expected a whole number >= 0, got {args.env_seed}")
    for option, path, suffix in (("--csv", args.csv, ".csv"), ("--gif", args.gif, ".gif")):
        if path is not None and path.suffix.lower() != suffix:
            raise UsageError(f"{option}: expected a file name ending in {suffix}, got {path}")
        if path is not None and path.is_dir():  # found before the episodes, not after
            raise UsageError(f"{option}: {path} is a folder; give a file name")
        if path is not None:  # a file in its folder's place, not after the episodes
            check_out_folder(path.parent, option)
    if args.csv is not None:  # RUN_DIR/tests.csv would replace what compare scores
        from maxminq.commands.compare import refuse_run_table

        refuse_run_table(args.csv, [args.run])


def run(args: argparse.Namespace) -> int:
    """Check the options and the run, then play, print and write."""
    _check(args)
    from maxminq.commands.train import parse_seeds
    from maxminq.deep.policy import evaluate_agent, load_agent
    from maxminq.deep.replay import quiet_float32_overflow

    quiet_float32_overflow()  # a value beyond float32: the --env error's one line says so
    agent = load_agent(args.run)  # RUN_DIR checked first (deep.policy.check_run_folder)
    c = agent.config
    _check_env(c, args.gif is not None, args.env_seed)
    if args.seeds is None:
        seeds = [s for s, st in zip(agent.seeds, agent.status, strict=True) if st == "done"]
        if not seeds:
            raise UsageError(
                f"RUN_DIR: every seed of {args.run} diverged (at the step in its runs.csv); "
                "nothing can act: train it again, e.g. with a smaller --lr"
            )
    else:
        seeds = parse_seeds(args.seeds)
        absent = [s for s in seeds if s not in agent.seeds]
        if absent:  # every one named, not only the first met
            raise UsageError(
                f"--seeds: this run trained seeds {', '.join(map(str, agent.seeds))}; "
                f"not {', '.join(map(str, absent))}"
            )
    frames: list | None = [] if args.gif is not None else None
    episodes = evaluate_agent(
        agent,
        seeds,
        args.episodes,
        eps=args.eps,
        env_seed=args.env_seed,
        progress=not args.no_progress,
        frames=frames,
        max_frames=GIF_MAX_FRAMES,
        max_episode_steps=args.max_episode_steps,
    )
    env = c.env_id + (f" {json.dumps(c.env_kwargs)}" if c.env_kwargs else "")  # its variant
    # The run's name as plot and compare give it (DQN, Maxmin DQN (N=4)), not its option.
    # generalized-dqn names its G (two such runs read alike without), as plot's legend does.
    name = label(c.agent, c.n, c.operator, c.op_kwargs)
    print(f"{name} on {env}, eps = {args.eps}, {count(args.episodes, 'episode')}:")
    if args.seeds is None:  # the mean over seeds below is not the run's: say who is missing
        gone = [s for s, st in zip(agent.seeds, agent.status, strict=True) if st != "done"]
        if gone:
            # and why, where runs.csv says (G's values or the nets'): seeds of one cause together
            why = _causes(args.run)
            by_cause: dict[str, list[str]] = {}
            for s in gone:
                by_cause.setdefault(why.get(s, ""), []).append(str(s))
            who = "; ".join(
                ", ".join(seeds) + (f" ({cause})" if cause else "")
                for cause, seeds in by_cause.items()
            )
            print(
                f"{count(len(gone), 'seed')} of {len(agent.seeds)} diverged during training "
                f"and cannot act, not played: {who}"
            )
    returns, biases = [], []
    for seed, g in episodes.groupby("seed", sort=False):
        r = g["return"]
        length = g["length"].mean()
        bias = _start_bias(g, c.gamma)
        returns.append(r.mean())
        biases += [bias[0]] if bias else []
        print(
            f"seed {seed}: return {_mean_se(r)}{' (mean +- SE)' * (len(r) > 1)}, "
            f"length {length:.1f}, " + _bias_text(bias)
        )
    if len(returns) > 1:  # what runs are compared by: one number per seed, SE over seeds
        import pandas as pd

        bias_part = (
            f"start-state bias {_mean_se(pd.Series(biases), '+.2f')} over "
            f"{count(len(biases), 'seed')}"
            if biases
            else "start-state bias n/a"
        )
        print(
            f"all {len(returns)} seeds (mean +- SE over seeds): return "
            f"{_mean_se(pd.Series(returns))}, {bias_part}"
        )
    if args.csv is not None:
        atomic_write(args.csv, lambda tmp: episodes.to_csv(tmp, index=False))
        print(f"episodes written to {args.csv}")
    if frames is not None:
        _write_gif(args.gif, frames, frame_ms=40)
        print(f"episode of seed {seeds[0]} written to {args.gif} ({len(frames)} frames)")
    return 0


def _causes(run: Path) -> dict[int, str]:
    """Each diverged seed's ``diverged_cause`` in the run's ``runs.csv`` (none where the file
    or the column is missing, or cannot be read: model.pt alone is enough to evaluate)."""
    import pandas as pd

    try:
        runs = pd.read_csv(Path(run) / "runs.csv")
        return {
            int(seed): cause
            for seed, cause in zip(runs["seed"], runs["diverged_cause"], strict=True)
            if isinstance(cause, str) and cause
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _mean_se(x: pd.Series, fmt: str = ".2f") -> str:
    """``mean +- SE`` of ``x``; a single value alone (it has no standard error, not one of 0)."""
    if len(x) < 2:
        return f"{x.mean():{fmt}}"
    return f"{x.mean():{fmt}} +- {x.std() / math.sqrt(len(x)):.2f}"


def _start_bias(g: pd.DataFrame, gamma: float) -> tuple[float, pd.Series] | None:
    """Q(s_0, a_0) - discounted return over the episodes ``g`` that count as in training
    (terminated, or cut where the missing tail weighs gamma^length <= BIAS_TAIL): their
    mean and the per-episode values; None if no episode counts."""
    from maxminq.deep.bias_probes import probe_counts

    kept = g[probe_counts(g["terminated"], g["length"].astype(float), gamma)]
    if kept.empty:
        return None
    bias = kept["q_first"] - kept["discounted_return"]
    return float(bias.mean()), bias


def _bias_text(bias: tuple[float, pd.Series] | None) -> str:
    """A seed's start-state bias as printed: mean +- SE over its counted episodes."""
    if bias is None:
        return "start-state bias n/a (every episode cut short)"
    return f"start-state bias {_mean_se(bias[1], '+.2f')} ({count(len(bias[1]), 'episode')})"


def _check_env(config: TrainConfig, gif: bool, env_seed: int) -> None:
    """The run's environment (with its env keywords) can be built here (and render frames
    for ``--gif``), checked before any episode is played."""
    import numpy as np

    env_id = config.env_id
    try:
        config.make_env().close()
    except UsageError as err:  # the run names it: not an option of this command
        why = str(err).removeprefix("--env: ")
        if why.startswith("unknown environment"):
            # A bare id that a script registered before training: the run cannot import it.
            why += (
                " (an id registered by the training script: train with 'module:EnvId' so "
                "that evaluate imports the module, or import it in Python and use "
                "maxminq.deep.evaluate_agent)"
            )
        raise UsageError(f"RUN_DIR: the run's environment: {why}") from None
    if not gif:
        return
    try:
        # Gymnasium's own warnings (e.g. a render_mode missing from the env's metadata) would
        # print before the one-line error; played episodes show them again if it renders.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = config.make_env(render_mode="rgb_array")
            try:
                env.reset(seed=env_seed)
                frame = env.render()
            finally:
                env.close()
    except Exception as err:  # noqa: BLE001 - any failure of the environment, one line
        why = one_line(err)
        raise UsageError(
            f"--gif: {env_id} cannot render rgb_array frames ({type(err).__name__}: {why})"
        ) from None
    # Gymnasium's rgb_array is uint8 (H, W, 3); a float frame failed in Pillow after the
    # episodes had been played.
    ok = isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[2] in (3, 4)
    if not (ok and frame.dtype == np.uint8):
        what = (
            f"{frame.dtype} array of shape {frame.shape}"
            if isinstance(frame, np.ndarray)
            else type(frame).__name__
        )
        raise UsageError(
            f"--gif: {env_id}'s render() gave a {what}, not an RGB(A) frame (H, W, 3 or 4) of uint8"
        )


def _write_gif(path: Path, frames: list, frame_ms: int) -> None:
    """An animated GIF of RGB frames (Pillow, which matplotlib already needs)."""
    from PIL import Image

    if not frames or frames[0] is None:
        raise UsageError("--gif: the environment returned no rgb_array frames to record")
    images = [Image.fromarray(f) for f in frames]
    atomic_write(
        path,
        lambda tmp: images[0].save(
            tmp,
            format="GIF",
            save_all=True,
            append_images=images[1:],
            duration=frame_ms,  # GIF delays count in 10 ms units
            loop=0,
        ),
    )
