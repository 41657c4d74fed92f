"""The ``maxminq`` command line.

Each sub-command lives in ``maxminq.commands.<name>`` and defines
``add_arguments(parser)`` and ``run(args) -> int``. Only the chosen command's module
is imported, so ``maxminq theory`` does not pay for importing torch or ray.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from maxminq import __version__
from maxminq.errors import MaxminqError

COMMANDS: dict[str, tuple[str, str]] = {
    "theory": ("maxminq.commands.theory", "Theorem 1 / Corollary 1 figures and tables"),
    "experiment": ("maxminq.commands.experiment", "toy MDP and noisy Mountain Car experiments"),
    "train": ("maxminq.commands.train", "train DQN-family agents on a Gymnasium environment"),
    "plot": ("maxminq.commands.plot", "draw (and compare) the curves of 'train' runs"),
    "evaluate": ("maxminq.commands.evaluate", "play episodes with a 'train' run's final agents"),
    "envs": ("maxminq.commands.envs", "list the registered environments and paper defaults"),
    "sweep": ("maxminq.commands.sweep", "run a sweep config (local or Ray), resumable"),
    "status": ("maxminq.commands.status", "show a sweep folder's run counts and failures"),
    "report": ("maxminq.commands.report", "write the HTML/Markdown report for a results folder"),
    "reproduce": ("maxminq.commands.reproduce", "run every paper config and write the report"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="maxminq",
        description="Maxmin Q-learning and the Generalized Q-learning family.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n"
        + "\n".join(f"  {name:<11} {desc}" for name, (_, desc) in COMMANDS.items())
        + "\n\nRun 'maxminq COMMAND --help' for a command's options.",
    )
    parser.add_argument("command", choices=list(COMMANDS), metavar="COMMAND")
    parser.add_argument("--version", action="version", version=f"maxminq {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``maxminq`` console script; returns the exit status."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "--version") or argv[0] not in COMMANDS:
        _top_parser().parse_args(argv[:1] or ["--help"])
        return 2
    name = argv[0]
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=f"maxminq {name}", description=COMMANDS[name][1])
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except MaxminqError as err:
        print(f"maxminq {name}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"maxminq {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. 'maxminq envs | head': the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
