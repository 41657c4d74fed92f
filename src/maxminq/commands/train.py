"""``maxminq train``: train a DQN-family agent on a Gymnasium environment.

Example::

    maxminq train --env LunarLander-v3 --agent maxmin-dqn --n 4 --lr 3e-4 \\
        --steps 200000 --seeds 0-4 --out runs/lunar-maxmin

Every hyper-parameter not given takes the paper's default for that environment
(``maxminq envs`` lists them). All seeds run in one process as one batched model.
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import sys
from typing import TYPE_CHECKING

from maxminq.analysis.style import count
from maxminq.cli import json_object
from maxminq.errors import UsageError, ascii_int

if TYPE_CHECKING:
    import pandas as pd

    from maxminq.deep.config import TrainConfig

_HYPER: list[tuple[str, type, str]] = [
    ("network", str, "mlp or minatar_cnn"),
    ("max-episode-steps", int, "episode cap (truncation, bootstrapped)"),
    ("buffer-size", int, "replay capacity per seed"),
    ("batch-size", int, "mini-batch size"),
    ("gamma", float, "discount"),
    ("target-update", int, "steps between target-network copies (C)"),
    ("eps-start", float, "initial epsilon"),
    ("eps-end", float, "final epsilon"),
    ("eps-decay-steps", int, "steps of linear epsilon decay after learning starts"),
    ("learning-starts", int, "purely random steps before learning"),
    ("loss", str, "mse or huber"),
    ("grad-clip", float, "max gradient norm per network (<= 0: none)"),
    ("optimizer", str, "rmsprop, centered_rmsprop or adam"),
]


#: Steps from which a run starts with a line on its memory, checkpoints and how to watch it.
LONG_RUN = 100_000


def parse_seeds(text: str) -> list[int]:
    """'0-4' -> [0..4]; '0,3,7' -> [0, 3, 7]; '5' -> [5]; combinations like '0-2,9'; more
    than ``deep.config.MAX_SEEDS`` is refused before their list is built."""
    from maxminq.deep.config import MAX_SEEDS, _too_many_seeds

    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (ascii_int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                if len(seeds) + hi - lo + 1 > MAX_SEEDS:  # before a list of 10^8 is built
                    raise _too_many_seeds(len(seeds) + hi - lo + 1, text)
                seeds.extend(range(lo, hi + 1))
            else:
                seeds.append(ascii_int(part))
    except UsageError:  # a ValueError too
        raise
    except ValueError:
        raise UsageError(
            f"--seeds: expected seed numbers such as 0-4 (the five seeds 0 to 4) or 0,3,7, "
            f"got {text!r}"
        ) from None
    return seeds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq train`` (hyper-parameters default to the registry's)."""
    parser.epilog = (
        "(registry): the default is the paper's setting for --env, from maxminq's registry of "
        "environment defaults; for an id outside the paper (CartPole-v1, your own) the "
        "paper's feature-environment settings. 'maxminq envs --env ID' lists what a run on "
        "ID uses for each. Your own environment: --env module:EnvId, where importing module "
        "registers EnvId (gymnasium.register); PYTHONPATH=. puts a module of the current "
        "folder on the path."
    )
    parser.add_argument(
        "--env",
        required=True,
        help="Gymnasium id, e.g. LunarLander-v3, or module:EnvId for an environment that "
        "module registers",
    )
    parser.add_argument(
        "--agent",
        default="maxmin-dqn",
        help="dqn, ddqn, maxmin-dqn, averaged-dqn, ensemble-dqn or generalized-dqn (N nets "
        "as maxmin-dqn, bootstrapping with --operator) (default maxmin-dqn)",
    )
    parser.add_argument(
        "--operator",
        default=None,
        help="generalized-dqn's G: a library operator (maxmin, ensemble, weighted_double_q, "
        "...) or module:function for one of your own, e.g. my_ops:median_q (PYTHONPATH=. for "
        "a module of the current folder); the run folder records it, --resume needs it "
        "(required for generalized-dqn; default for the others: their own)",
    )
    parser.add_argument(
        "--op-kwargs",
        default=None,
        help="JSON keyword parameters of --operator, e.g. '{\"c\": 1.0}' (weighted_double_q) "
        "(default none)",
    )
    parser.add_argument(
        "--n",
        type=int,
        default=None,
        help="N (Maxmin/Ensemble) or K (Averaged); 1 for dqn and ddqn; for generalized-dqn "
        "its --operator's N where fixed (double_q, weighted_double_q: 2; q_learning, "
        "bias_corrected: 1) (registry)",
    )
    parser.add_argument("--lr", type=float, default=None, help="step size (registry)")
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="environment steps per seed (registry: the paper's length, e.g. 1,500,000 for "
        "LunarLander-v3, 500,000 for ids outside the paper)",
    )
    parser.add_argument(
        "--seeds",
        default="0",
        help="the seeds to run, all in one process: 0-4 (five seeds, 0 to 4), 0,3,7, or 5 (the "
        "one seed 5) (default 0)",
    )
    parser.add_argument("--out", required=True, type=pathlib.Path, help="output folder")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the checkpointed run in --out, read a finished one back, or extend "
        "it to a larger --steps",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a finished or checkpointed run in --out (refused otherwise)",
    )
    parser.add_argument(
        "--timeout-as-terminal",
        action="store_true",
        help="treat time-limit truncation as terminal (the original code's behaviour)",
    )
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=100,
        help="test episodes per seed after training (default 100; 0: none)",
    )
    parser.add_argument(
        "--eval-eps",
        type=float,
        default=0.01,
        help="epsilon of the test (and --eval-every) episodes (default 0.01)",
    )
    parser.add_argument(
        "--eval-every",
        type=int,
        default=0,
        metavar="K",
        help="beyond the paper: every K steps also play --eval-every-episodes episodes per "
        "seed with --eval-eps, on environments of their own (evals.csv; training unchanged); "
        "default 0: none",
    )
    parser.add_argument(
        "--eval-every-episodes",
        type=int,
        default=None,
        metavar="E",
        help="episodes per seed at each --eval-every evaluation (default 10)",
    )
    parser.add_argument(
        "--bias-every",
        type=int,
        default=None,
        help="metrics interval M in steps (default max(1000, steps / 200))",
    )
    parser.add_argument(
        "--bias-probe-every", type=int, default=10, help="steps between bias probes (default 10)"
    )
    parser.add_argument(
        "--save-probes",
        action="store_true",
        help="also write probes.csv: every scored bias probe (seed, step, episode_step, "
        "end_step, estimate, return, bias), not only the per-interval aggregates",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        help="steps between checkpoints (default max(10000, steps / 20); 0 disables)",
    )
    parser.add_argument(
        "--update-members",
        type=int,
        default=1,
        help="Maxmin/Ensemble members updated per step, each on its own mini-batch (default 1)",
    )
    parser.add_argument(
        "--optimizer-kwargs",
        default=None,
        help='JSON, e.g. \'{"alpha": 0.95, "eps": 0.01}\' (registry, for its optimizer; those '
        "given replace the registry's of that name, the others stay)",
    )
    parser.add_argument(
        "--hidden",
        default=None,
        help="hidden layer sizes, e.g. 256,256 (mlp; default 64,64) or one width (minatar_cnn's "
        "fully connected layer; default 128)",
    )
    parser.add_argument(
        "--env-kwargs",
        default=None,
        help="JSON keywords for the environment's constructor, e.g. '{\"gravity\": -5.0}' "
        "(default none; saved with the run, evaluate uses them too)",
    )
    parser.add_argument(
        "--tensorboard",
        action="store_true",
        help="also log the metrics and episode returns to OUT/tensorboard",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--no-plot", action="store_true", help="do not write curves.png/.svg")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1; 2+ speeds up one MinAtar run on a free machine)",
    )
    for name, typ, help_text in _HYPER:
        parser.add_argument(f"--{name}", type=typ, default=None, help=help_text + " (registry)")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Build and validate the ``TrainConfig`` (UsageError on bad input)."""
    from maxminq.deep.config import TrainConfig

    hidden = None
    if args.hidden is not None:
        try:
            hidden = tuple(int(h) for h in args.hidden.split(","))
        except ValueError:
            raise UsageError(
                f"--hidden: expected sizes separated by commas, e.g. 256,256, got {args.hidden!r}"
            ) from None
    if args.eval_every_episodes is not None and not args.eval_every:
        raise UsageError(
            "--eval-every-episodes: no evaluations to size without --eval-every K (default 0: "
            "none); give --eval-every too, or leave it out"
        )
    return TrainConfig(
        env_id=args.env,
        agent=args.agent,
        n=args.n,
        lr=args.lr,
        steps=args.steps,
        seeds=parse_seeds(args.seeds),
        timeout_as_terminal=args.timeout_as_terminal,
        eval_episodes=args.eval_episodes,
        eval_eps=args.eval_eps,
        eval_every=args.eval_every,
        eval_every_episodes=(
            TrainConfig.eval_every_episodes
            if args.eval_every_episodes is None
            else args.eval_every_episodes
        ),
        bias_every=args.bias_every,
        bias_probe_every=args.bias_probe_every,
        save_probes=args.save_probes,
        checkpoint_every=args.checkpoint_every,
        update_members=args.update_members,
        optimizer_kwargs=json_object(args.optimizer_kwargs, "--optimizer-kwargs"),
        tensorboard=args.tensorboard,
        hidden=hidden,
        env_kwargs=json_object(args.env_kwargs, "--env-kwargs"),
        operator=args.operator,
        op_kwargs=json_object(args.op_kwargs, "--op-kwargs"),
        **{name.replace("-", "_"): getattr(args, name.replace("-", "_")) for name, _, _ in _HYPER},
    )


def _prepare_out(out: pathlib.Path, resume: bool, overwrite: bool) -> None:
    """Check ``--out`` can hold the run; refuse to replace a run unless ``--overwrite``
    (then delete its outputs, so no stale table or figure is left beside the new ones)."""
    from maxminq.cli import check_out_folder
    from maxminq.deep.run_folder import clear_run

    check_out_folder(out, "--out", writes="train")
    # A checkpoint folder without state.pt (killed or interrupted during its first write)
    # holds no run: there is nothing --resume could continue.
    previous = (out / "runs.csv").exists() or (out / "checkpoint" / "state.pt").exists()
    if resume:
        if not previous:
            print(f"maxminq train: no checkpoint in {out}: starting a new run", file=sys.stderr)
        return
    if previous and not overwrite:
        raise UsageError(
            f"--out: {out} holds a run already; add --resume to continue it (or read it "
            "back), --overwrite to replace it, or choose another folder"
        )
    clear_run(out)  # the caller holds the folder's lock


def _warn_if_cut_episodes_give_no_bias(
    cap: int | None, gamma: float, learning_starts: int = 0, episodes: pd.DataFrame | None = None
) -> None:
    """Warn (stderr) when no probe in an episode the time limit cut can count (the cut must
    come ``bias_horizon(gamma)`` steps after the probe) and such episodes took at least
    ``deep.bias_probes.CUT_SHARE_WARNED`` of the steps since learning started (probes are
    taken every ``bias_probe_every`` of them, so about that share of the probes is lost),
    e.g. MountainCar-v0's cap of 200 at gamma 0.99: the bias numbers rest on the episodes
    that terminated, or there are none. Not for an environment whose episodes nearly all
    terminate, such as docs/deep-agents.md's Corridor (before, a warning before every run, there
    about a tenth of the probes, in its first few thousand steps). Without ``episodes``
    (none known yet) on the cap and gamma alone, without numbers. Without a cap (None), of
    the episodes the environment cut itself (``truncated=True``) in fewer than
    ``bias_horizon(gamma)`` steps, as training warns. For a finished run read back: a run
    trained warns itself (``deep.bias_probes.CutEpisodesCheck``), during training when it
    can tell and at its end."""
    from maxminq.deep.bias_probes import (
        CUT_SHARE_WARNED,
        CutTally,
        cut_episodes_message,
        cut_episodes_terms,
    )

    # No cap: as in training, the episodes the environment cut itself shorter than k (of
    # which nothing is known before there are episodes).
    why, shorter_than = cut_episodes_terms(cap, gamma)
    if why is None or (cap is None and episodes is None):
        return
    tally = None
    if episodes is not None:
        e = episodes
        tally = CutTally(0, 0, 0, 0).add(
            e["step"], e["length"], e["terminated"], e["truncated"], learning_starts, shorter_than
        )
        if tally.share < CUT_SHARE_WARNED:
            return
    message = cut_episodes_message(cap, gamma, why, tally)
    print(f"maxminq train: warning: {message}", file=sys.stderr)


def _file_id(path: pathlib.Path) -> tuple[int, int] | None:
    """(inode, mtime) of ``path``, None if absent: tables are replaced atomically, so a
    rewritten one has another."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def run(args: argparse.Namespace) -> int:
    """Validate everything (including the environment's observations), then train."""
    from maxminq.deep.config import start_env_id_check

    # A new interpreter's answer to whether it knows --env (EnvIdWarning), found while torch
    # is imported and the options and the environment are checked, not after them.
    start_env_id_check(args.env)
    from maxminq.deep.replay import quiet_float32_overflow
    from maxminq.deep.run_folder import folder_lock
    from maxminq.deep.train import (
        Trainer,
        long_run_note,
        run_training,
        tensorboard_writer_class,
    )

    quiet_float32_overflow()  # a value beyond float32: the --env error's one line says so
    if args.threads < 1:
        raise UsageError(f"--threads: expected a whole number >= 1, got {args.threads}")
    if args.resume and args.overwrite:
        raise UsageError("--overwrite: give either --resume or --overwrite, not both")
    config = config_from_args(args)
    resolved = config.resolve()
    need = Trainer.check_env(resolved)
    if resolved.tensorboard:
        tensorboard_writer_class()  # not installed: an error before --out is touched
    with contextlib.ExitStack() as held:
        if args.out.is_dir():  # a run training there now keeps its files (--overwrite too)
            held.enter_context(folder_lock(args.out))
        _prepare_out(args.out, args.resume, args.overwrite)
        before = _file_id(args.out / "runs.csv")  # unchanged after: a finished run read back
        if resolved.steps >= LONG_RUN and before is None:  # worth watching: what it takes
            print(f"maxminq train: {long_run_note(resolved, need, args.out)}", file=sys.stderr)
        try:
            tables = run_training(
                config,
                args.out,
                resume=args.resume,
                progress=not args.no_progress,
                threads=args.threads,
            )
        except KeyboardInterrupt as err:  # say what a rerun with --resume will find
            failed = getattr(err, "checkpoint_error", None)  # e.g. a full disk
            if failed is not None:
                path = failed.filename2 or failed.filename
                print(
                    "maxminq train: the checkpoint of the step it stopped at could not be "
                    f"written ({f'{path}: ' if path else ''}{failed.strerror or failed})",
                    file=sys.stderr,
                )
            if (args.out / "checkpoint" / "state.pt").exists():
                how = "--resume instead of --overwrite" if args.overwrite else "--resume"
                # The step, when run_training knows it: the interrupted step's checkpoint,
                # or the last one if the signal came outside the steps or a second time.
                step = getattr(err, "checkpoint_step", None)
                which = "the last checkpoint"
                if step is not None:
                    which = f"the checkpoint of step {step:,} (of {resolved.steps:,})"
                print(
                    f"maxminq train: {args.out}/checkpoint holds {which}; the same command "
                    f"with {how} continues from it",
                    file=sys.stderr,
                )
            else:
                k = resolved.checkpoint_every
                when = f"every {k} steps" if k else "--checkpoint-every 0"
                print(
                    f"maxminq train: no checkpoint was written yet ({when}): --resume would "
                    "start again",
                    file=sys.stderr,
                )
            raise
        read_back = before is not None and _file_id(args.out / "runs.csv") == before
        if read_back:  # a run trained here warned itself (deep.bias_probes.CutEpisodesCheck)
            _warn_if_cut_episodes_give_no_bias(
                resolved.max_episode_steps,
                resolved.gamma,
                resolved.learning_starts,
                tables["episodes"],
            )
        runs, tests = tables["runs"], tables["tests"]
        for _, row in runs.iterrows():
            t = tests[tests["seed"] == row["seed"]]["return"]
            score = (
                f"test return {t.mean():.2f} over {count(len(t), 'episode')}"
                if len(t)
                else "no test"
            )
            extra = ""
            if row["status"] == "diverged":  # and why, when recorded (G's values or the nets')
                cause = row.get("diverged_cause", "")
                extra = f" at step {row['diverged_step']}" + (f" ({cause})" if cause else "")
            print(f"seed {row['seed']}: {row['status']}{extra}, {score}")
        if read_back:  # writes nothing (e.g. into a published run): plot draws it on demand
            print(f"finished run read back from {args.out} (nothing trained, nothing written)")
        else:
            print(f"tables written to {args.out}")
        if not args.no_plot and not read_back:
            from maxminq.analysis import style
            from maxminq.analysis.figures import DEFAULT_PANELS, fig_training_runs, run_title
            from maxminq.analysis.runs import colour_key

            label = style.label(resolved.agent, resolved.n, resolved.operator, resolved.op_kwargs)
            title = run_title(label, resolved.env_id, len(resolved.seeds), tests)
            # A run with evaluations shows their returns beside the training return; one that
            # kept its probes, their distribution after the mean bias.
            first, *rest = DEFAULT_PANELS
            panels = (first, *["eval"] * ("evals" in tables), *rest)
            panels += ("bias_dist",) * ("probes" in tables)
            figure = fig_training_runs(
                [(label, colour_key(vars(resolved)), tables)], title, args.out, panels=panels
            )
            if figure is not None:
                print(f"figure written to {figure.png}")
        return 0
