"""``maxminq envs``: list the environment ids and their paper defaults."""

from __future__ import annotations

import argparse
import json

from maxminq.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq envs``."""
    parser.add_argument(
        "--env",
        default=None,
        help="show every default of this id: a paper environment, any registered Gymnasium "
        "id (non-paper ids get the feature-env defaults) or module:EnvId (default: the table "
        "of the paper environments)",
    )
    parser.add_argument(
        "--env-kwargs",
        default=None,
        help="JSON keywords to build --env with, for an environment of one's own whose "
        "constructor needs some, as train's --env-kwargs (default: none)",
    )
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="output format: table or json (default table)",
    )


def _fmt_lr(values: tuple[float, ...]) -> str:
    return ",".join(f"{v:g}" for v in values)


def table() -> str:
    """The registry as a fixed-width text table (one row per paper environment)."""
    from maxminq.envs.registry import PAPER_ENVS

    head = (
        "env_id",
        "net",
        "train_steps",
        "cap",
        "lr_sweep",
        "buffer",
        "target",
        "eps",
        "loss",
        "clip",
        "optimizer",
        "maxmin best (lr/N)",
    )
    rows = [head]
    for d in PAPER_ENVS.values():
        mm = d.best["maxmin-dqn"]
        rows.append(
            (
                d.env_id + ("" if d.paper else " *"),
                d.network,
                f"{d.train_steps:,}",
                "-" if d.max_episode_steps is None else f"{d.max_episode_steps:,}",
                _fmt_lr(d.lr_sweep),
                f"{d.buffer_size:,}",
                f"{d.target_update:,}",
                f"{d.eps_start:g}->{d.eps_end:g}/{d.eps_decay_steps:,}+{d.learning_starts:,}",
                d.loss,
                "-" if d.grad_clip is None else f"{d.grad_clip:g}",
                d.optimizer,
                f"{mm['lr']:g}/{mm['n']}"
                + ("" if d.best_source["maxmin-dqn"] == "authors" else "?"),
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append("* not in the paper;  ? assumed (not posted by the authors).")
    lines.append("eps = start->end / decay steps + random steps first.")
    for d in PAPER_ENVS.values():
        if d.env_kwargs:  # how the authors' code made the env (overridable by --env-kwargs)
            lines.append(f"{d.env_id} is made with {json.dumps(d.env_kwargs)}.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the table, or one id's defaults."""
    from maxminq.cli import json_object
    from maxminq.envs import get_env_defaults

    if args.env_kwargs is not None and args.env is None:
        raise UsageError("--env-kwargs: give --env too (the keywords build that environment)")
    if args.env is None:
        if args.format == "json":
            from maxminq.envs.registry import PAPER_ENVS

            print(json.dumps({k: v.as_dict() for k, v in PAPER_ENVS.items()}, indent=2))
        else:
            print(table())
        return 0
    if not args.env.strip():
        raise UsageError("--env: empty id; expected an id such as maxminq/Catcher-v0")
    d = get_env_defaults(args.env, json_object(args.env_kwargs, "--env-kwargs"))
    if args.format == "json":
        print(json.dumps(d.as_dict(), indent=2))
    else:
        for key, value in d.as_dict().items():
            print(f"{key:<18} {value}")
    return 0
