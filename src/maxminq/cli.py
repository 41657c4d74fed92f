"""The ``maxminq`` command line.

Each sub-command lives in ``maxminq.commands.<name>`` and defines
``add_arguments(parser)`` and ``run(args) -> int``. Only the chosen command's module
is imported, so ``maxminq theory`` does not pay for importing torch or ray.

SIGTERM (how SLURM, Kubernetes and ``timeout`` stop a job) is handled as Ctrl-C is: while a
command runs, it raises :class:`Terminated`, a KeyboardInterrupt, in the main thread, so
every command's Ctrl-C path runs (train first checkpoints the step under way, a sweep
requeues its runs in flight and stops its workers, giving a deep run up to ``STOP_GRACE`` s to
checkpoint its step, temporary files are removed); the command then ends with
``maxminq NAME: terminated`` and exit status 143 (128 + 15) instead of 130. SIGHUP (a
closed terminal) does the same for the long-running commands (:data:`HANGUP_COMMANDS` and
``sweep``), ending with ``maxminq NAME: terminated by SIGHUP`` and exit status 129
(128 + 1), as a shell reports a process that SIGHUP ended.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import shlex
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from maxminq import __version__
from maxminq.errors import (
    MaxminqError,
    MaxminqWarning,
    UsageError,
    ascii_float,
    ascii_int,
    closest,
    meant_whole,
)

COMMANDS: dict[str, tuple[str, str]] = {
    "theory": ("maxminq.commands.theory", "Theorem 1, Corollary 1, each operator's bias"),
    "experiment": ("maxminq.commands.experiment", "toy MDP and noisy Mountain Car experiments"),
    "train": ("maxminq.commands.train", "train DQN-family agents on a Gymnasium environment"),
    "plot": ("maxminq.commands.plot", "draw (and compare) the curves of 'train' runs"),
    "compare": ("maxminq.commands.compare", "final scores of 'train' runs, tested vs a baseline"),
    "evaluate": ("maxminq.commands.evaluate", "play episodes with a 'train' run's final agents"),
    "envs": ("maxminq.commands.envs", "list the registered environments and paper defaults"),
    "sweep": ("maxminq.commands.sweep", "run a sweep config (local or Ray), resumable"),
    "status": (
        "maxminq.commands.status",
        "show a sweep folder's run counts and failures, or how far a train run is",
    ),
    "merge": ("maxminq.commands.merge", "merge the results folders of one sweep's shards"),
    "report": ("maxminq.commands.report", "write the HTML/Markdown report for a results folder"),
    "reproduce": ("maxminq.commands.reproduce", "run every paper config and write the report"),
}


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """The long options of ``parser`` and of its sub-commands (``experiment toy-mdp``'s
    options are reported unknown by ``experiment``'s parser)."""
    names: list[str] = []
    for action in parser._actions:  # argparse has no public list of its actions
        names += [s for s in action.option_strings if s.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names += _option_strings(sub)
    return sorted(set(names))


def _sub_command_options(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """The long options that only some of ``parser``'s sub-commands take, each with the
    commands that do (``--sigma2``: ``['maxminq experiment mountain-car']``). An option
    argparse reports unknown although it is in this map was given to another one."""
    owners: dict[str, list[str]] = {}
    for action in parser._actions:  # argparse has no public list of its actions
        if isinstance(action, argparse._SubParsersAction):
            subs = action.choices
            for sub in subs.values():
                for option in _option_strings(sub):
                    owners.setdefault(option, []).append(sub.prog)
            return {k: v for k, v in owners.items() if len(v) < len(subs)}
    return owners


def explain_parse_error(parser: argparse.ArgumentParser, message: str) -> str:
    """argparse's ``message`` in the form of every other error of the command line, naming
    the option first (``--steps: expected a whole number, got '1e5'``), with a "did you
    mean" for a mistyped command, choice or option."""
    message = " ".join(message.split())
    bad_type = re.fullmatch(r"argument (\S+): invalid (int|float) value: (.*)", message)
    if bad_type:
        option, kind, value = bad_type.groups()
        if kind == "float":
            return f"{option}: expected a number, got {value}"
        whole = meant_whole(value)  # 1e5 or 1,000 for a count: say how to write it
        how = f" (write {whole})" if whole is not None else ""
        return f"{option}: expected a whole number, got {value}{how}"
    choice = re.fullmatch(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)", message)
    if choice:
        option, value, listed = choice.groups()
        choices = re.findall(r"'([^']*)'", listed)
        meant = closest(value, choices)
        if value == "help" and option == "COMMAND":
            hint = "; 'maxminq --help' lists the commands, 'maxminq COMMAND --help' their options"
        else:
            hint = f"; did you mean {meant}?" if meant else ""
        return f"{option}: unknown {value!r}{hint} (choose from {', '.join(choices)})"
    unknown = re.fullmatch(r"unrecognized arguments: (.*)", message)
    if unknown:
        options = _option_strings(parser)
        owners = _sub_command_options(parser)
        tokens = []
        for token in unknown.group(1).split():
            name = token.partition("=")[0]
            if token.startswith("--") and name in owners:  # another sub-command's option,
                # which 'did you mean' named as itself (toy-mdp given --sigma2)
                commands = " and ".join(f"'{prog}'" for prog in owners[name])
                tokens.append(f"{token} (an option of {commands} only)")
                continue
            # compared without their dashes, which every option shares: with them a word
            # of five letters was 'close' to --help ('--steps (did you mean --help?)')
            bare = closest(name.lstrip("-"), [o.removeprefix("--") for o in options])
            meant = f"--{bare}" if token.startswith("-") and bare else None
            tokens.append(f"{token} (did you mean {meant}?)" if meant else token)
        return f"unrecognized arguments: {' '.join(tokens)}"
    required = re.fullmatch(r"the following arguments are required: (.*)", message)
    if required:  # a missing sub-command: say which there are
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and subs[0].metavar in required.group(1).split(", "):
            return f"{message} ({' or '.join(subs[0].choices)})"
        return message
    return message.removeprefix("argument ")  # e.g. '--out: expected one argument'


def _unknown_options(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The tokens of ``argv`` that look like long options (``--name`` or ``--name=value``)
    which neither ``parser`` nor its sub-commands have or take as an abbreviation of one of
    their own (``experiment --quick``: toy-mdp's, which a missing EXPERIMENT explains)."""
    known = _option_strings(parser)
    out = []
    for token in argv:
        if token == "--":
            break
        name = token.partition("=")[0]
        if token.startswith("--") and not any(o.startswith(name) for o in known):
            out.append(token)
    return out


class _Parser(argparse.ArgumentParser):
    """argparse's parser, but a bad option is one line (``prog: error: message``, exit 2)
    like every other error of the command line, not the whole usage text first; ``type=int``
    and ``type=float`` take ASCII digits only."""

    _given: list[str] | None = None  # the arguments parsed last, for error()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """argparse's, with ``int`` and ``float`` read by :func:`maxminq.errors.ascii_int`
        and :func:`~maxminq.errors.ascii_float` (argparse looks an action's type up in this
        registry first; its error messages still say ``int`` and ``float``)."""
        super().__init__(*args, **kwargs)
        self.register("type", int, ascii_int)
        self.register("type", float, ascii_float)

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """argparse's, remembering ``args`` for :meth:`error`."""
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print ``message`` on one line (:func:`explain_parse_error`) and exit with
        status 2. argparse reports missing required arguments before unknown ones, so a
        mistyped option (``--outt``) read only 'required: --out': the unknown options,
        with their "did you mean", come first."""
        text = explain_parse_error(self, message)
        unknown = _unknown_options(self, self._given or [])
        if message.startswith("the following arguments are required") and unknown:
            unrecognized = f"unrecognized arguments: {' '.join(unknown)}"
            text = f"{explain_parse_error(self, unrecognized)}; {text}"
        self.exit(2, f"{self.prog}: error: {text}\n")


class OneLineParser(_Parser):
    """argparse's ``ArgumentParser`` with the ``maxminq`` command's conventions, for scripts
    of one's own (the scripts in ``examples/`` use it): a bad or mistyped option is one line,
    ``prog: error: message``, naming the option, with a "did you mean" (not argparse's usage
    text first), exit status 2; an empty value (``--out ''``, an unset shell variable) is
    refused as ``maxminq`` refuses it (:func:`reject_empty_values`)."""

    def parse_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's ``parse_args``, after refusing an empty value (one line, exit 2)."""
        argv = list(sys.argv[1:] if args is None else args)
        if "-h" not in argv and "--help" not in argv:
            try:
                reject_empty_values(self, argv)
            except UsageError as err:
                self.error(str(err))
        return super().parse_args(argv, namespace)


def reject_empty_values(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Raise UsageError for an empty argument (``--out ''``, ``--out=``, ``''``).

    argparse takes them, and ``Path('')`` is the current folder: ``--out ''`` (an unset
    shell variable) would write into the working directory, or fall back to a default.
    """
    actions = parser._actions  # argparse has no public list of its actions
    subs = [a for a in actions if isinstance(a, argparse._SubParsersAction)]
    nargs = {s: a.nargs for a in actions for s in a.option_strings}  # nargs 0: a flag
    positionals = [str(a.metavar or a.dest).upper() for a in actions if not a.option_strings]
    owner: str | None = None  # the option whose value(s) the next tokens are
    for i, token in enumerate(argv):
        if token == "--":
            return
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            if eq and not value:
                raise UsageError(f"{name}: expected a value, got an empty string")
            owner = None if eq or nargs.get(name) == 0 else name
            continue
        if token == "":
            if owner is None and not positionals:
                raise UsageError("unexpected argument '' (an empty string)")
            name = owner or "/".join(positionals)
            raise UsageError(f"{name}: expected a value, got an empty string")
        if owner is None and subs and token in subs[0].choices:  # e.g. experiment toy-mdp
            return reject_empty_values(subs[0].choices[token], argv[i + 1 :])
        if owner is not None and nargs.get(owner) not in ("*", "+"):
            owner = None  # its one value is read; what follows is positional


def _positions(parser: argparse.ArgumentParser, argv: list[str]) -> list[int]:
    """The indices of ``argv``'s tokens that are no option and no value of a one-value (or
    fixed-count) option of ``parser`` or its sub-commands: where a sub-command's name is
    one (in ``--out toy-mdp mountain-car`` 'toy-mdp' is the folder). A variadic option's
    values (``--sigma2 1 10``) end nowhere before the sub-command, so they are kept."""
    arity: dict[str, object] = {}
    for action in parser._actions:  # argparse has no public list of its actions
        arity |= {s: action.nargs for s in action.option_strings}
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                arity |= {s: a.nargs for a in sub._actions for s in a.option_strings}
    out, skip = [], 0
    for i, token in enumerate(argv):
        if skip:
            skip -= 1
        elif token.startswith("-") and token != "-":
            nargs = arity.get(token.partition("=")[0], 0)
            if "=" not in token and (nargs is None or isinstance(nargs, int)):
                skip = 1 if nargs is None else int(nargs)
        else:
            out.append(i)
    return out


def reject_options_before_sub_command(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Raise UsageError for an option of a sub-command given before it (``maxminq
    experiment --sigma2 1 mountain-car``), saying to put the sub-command first: argparse
    took the option's value for the sub-command ("EXPERIMENT: unknown '1'"), or the option
    for a mistyped one of its own ("--quick (did you mean --quick?)")."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs or not argv or not argv[0].startswith("-") or argv[0] in ("-h", "--help"):
        return
    option, choices = argv[0].partition("=")[0], subs[0].choices
    owners = [n for n, sub in choices.items() if option in _option_strings(sub)]
    if not owners:  # no sub-command's: argparse's "did you mean" says what was meant
        return
    given = [i for i in _positions(parser, argv) if argv[i] in choices]
    if not given and all(token.startswith("-") for token in argv):
        return  # argparse's "required: EXPERIMENT (toy-mdp or mountain-car)" says it
    if given:
        name, rest = argv[given[0]], argv[: given[0]] + argv[given[0] + 1 :]
    else:  # none given: one that takes the option
        name, rest = owners[0], argv
    example = " ".join([parser.prog, name, *(shlex.quote(t) for t in rest)])
    raise UsageError(f"{option}: put the sub-command first, e.g. {example}")


def json_object(text: str | None, option: str) -> dict | None:
    """The JSON object given to ``option`` (None when not given); UsageError naming it
    otherwise."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise UsageError(f"{option}: expected a JSON object, e.g. '{{\"key\": 1}}', got {text!r}")
    return value


#: What :func:`output_kind` finds in a folder, as the one-line errors name it.
OUTPUT_KINDS: dict[str, str] = {
    "sweep": "the results of 'maxminq sweep' or 'maxminq reproduce' (results.sqlite)",
    "train": "a 'maxminq train' run (config.json, runs.csv or checkpoint/)",
    "experiment toy-mdp": "the output of 'maxminq experiment toy-mdp' (settings.json)",
    "experiment mountain-car": "the output of 'maxminq experiment mountain-car' (settings.json)",
    "theory": "the tables of 'maxminq theory' (bias.csv, variance.csv)",
    "sweep part": "a part of a sweep's folder (its tables/ or work/, beside results.sqlite)",
}

#: For each command that writes a folder, the kinds of folder (:func:`output_kind`) it
#: writes into besides a new or empty one: its own, and for sweep, reproduce and theory each
#: other's (``maxminq report DIR`` reads a sweep's runs and the theory's tables together);
#: a sweep and ``maxminq experiment`` of one figure share their default folder (``maxminq
#: sweep configs/toy_mdp.yaml`` and ``maxminq experiment toy-mdp`` both write results/toy_mdp,
#: as the docs run them one after the other; their files do not clash, the report reads
#: the sweep's store).
WRITES_INTO: dict[str, tuple[str, ...]] = {
    "train": ("train",),
    "sweep": ("sweep", "theory", "experiment toy-mdp", "experiment mountain-car"),
    "reproduce": ("sweep", "theory", "experiment toy-mdp", "experiment mountain-car"),
    "theory": ("theory", "sweep"),
    "experiment toy-mdp": ("experiment toy-mdp", "sweep"),
    "experiment mountain-car": ("experiment mountain-car", "sweep"),
}


def output_kind(folder: Path) -> str | None:
    """Which command's output ``folder`` holds: a key of :data:`OUTPUT_KINDS`, or None
    (no folder, an empty one, or files of none of them)."""
    if not folder.is_dir():
        return None
    if (folder / "results.sqlite").is_file():
        return "sweep"
    for part in (folder, *folder.parents)[:3]:  # tables/, tables/<run_id>, work/<run_id>/...
        if part.name in ("tables", "work") and (part.parent / "results.sqlite").is_file():
            return "sweep part"
    if (folder / "config.json").is_file() and (
        (folder / "runs.csv").is_file() or (folder / "checkpoint").is_dir()
    ):
        return "train"
    try:
        kind = json.loads((folder / "settings.json").read_text(encoding="utf-8"))["experiment"]
    except (OSError, ValueError, KeyError, TypeError):
        kind = None
    if kind in ("toy-mdp", "mountain-car"):
        return f"experiment {kind}"
    if (folder / "bias.csv").is_file() and (folder / "variance.csv").is_file():
        return "theory"
    return None


def check_out_folder(path: Path, option: str, writes: str | None = None) -> Path:
    """Check, as the last step before any work, that the output folder ``path`` can be
    created (or is one): a path under a file, or where one cannot write, is a one-line
    UsageError now rather than a traceback once the work is done. Folders made for the test
    are removed again, so a run stopped before it writes leaves nothing. In a folder that
    exists a byte is written and removed: one that cannot take a file (read-only, a full
    disk) would otherwise fail only once the work is done. Returns ``path``.

    ``writes``: the command writing the folder (a key of :data:`WRITES_INTO`); a folder
    that holds another command's output (``maxminq train --out`` on a sweep's folder) is
    then refused, as the commands that read folders refuse one of another kind: the two
    commands' files mixed in one folder were each read as the other's."""
    import tempfile

    if path.exists() and not path.is_dir():
        raise UsageError(f"{option}: {path} exists and is not a folder")
    kind = None
    if writes is not None:
        try:
            kind = output_kind(path)
        except OSError:  # a folder one may not look into: the write check below names --out
            kind = None
    if writes is not None and kind is not None and kind not in WRITES_INTO[writes]:
        raise UsageError(
            f"{option}: {path} holds {OUTPUT_KINDS[kind]}; give 'maxminq {writes}' a folder "
            "of its own"
        )
    new = [p for p in (path, *path.parents) if not p.exists()]  # deepest first
    try:
        path.mkdir(parents=True, exist_ok=True)
        for folder in new:
            folder.rmdir()
    except OSError as err:
        raise UsageError(f"{option}: cannot create the folder {path} ({err.strerror})") from None
    except BaseException:  # Ctrl-C or SIGTERM mid-check: the folders made for it go too
        for folder in new:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    if path.is_dir():
        try:
            with tempfile.TemporaryFile(dir=path, prefix=".maxminq-write-check.") as probe:
                probe.write(b"x")
                probe.flush()
        except OSError as err:
            raise UsageError(f"{option}: cannot write in {path} ({err.strerror})") from None
    return path


@contextlib.contextmanager
def one_line_warnings(command: str) -> Iterator[None]:
    """Within, a :class:`MaxminqWarning` is shown as ``maxminq COMMAND: warning: ...`` on
    stderr (not Python's two lines of file, line number and source); others as usual."""
    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, MaxminqWarning):
            print(f"maxminq {command}: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():  # restores the filters and showwarning on leaving
        warnings.simplefilter("always", MaxminqWarning)  # each time, as an error would be
        warnings.showwarning = show
        yield


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP, :func:`hangup_as_terminate`) received while a command ran. A
    KeyboardInterrupt, so that every ``except KeyboardInterrupt`` and clean-up written for
    Ctrl-C applies unchanged; only :func:`main`'s last line and exit status (143 for
    SIGTERM, 129 for SIGHUP, not 130) tell them apart."""


# Set by the SIGTERM handler: a library may catch the KeyboardInterrupt and raise a plain
# one in its place (Ray's ray.wait turns any into its own), which must still read as SIGTERM.
_sigterm_received = threading.Event()
# The first stop signal the handlers took (SIGTERM or SIGHUP): main's exit status is
# 128 + it, as the shell reports a command that signal ended.
_stopped_by: list[int] = []


def _raise_terminated(signum: int, frame: object) -> None:
    """The SIGTERM handler: raise :class:`Terminated` where the main thread is."""
    _sigterm_received.set()
    if not _stopped_by:
        _stopped_by.append(signum)
    raise Terminated()


def _terminated_how() -> tuple[str, int]:
    """The last line's word and the exit status for a command stopped by SIGTERM or SIGHUP:
    ``terminated``, 143 (128 + 15); ``terminated by SIGHUP``, 129 (128 + 1), as a shell
    reports a process that signal ended."""
    signum = _stopped_by[0] if _stopped_by else int(signal.SIGTERM)
    if signum == signal.SIGTERM:
        return "terminated", 128 + signum
    return f"terminated by {signal.Signals(signum).name}", 128 + signum


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within, SIGTERM raises :class:`Terminated` in the main thread (as SIGINT raises
    KeyboardInterrupt); the previous handler is restored on leaving. Outside the main
    thread (``main`` called from another thread) Python cannot set handlers: nothing
    changes. Worker processes are spawned afresh and keep the default SIGTERM (die)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _sigterm_received.clear()
    _stopped_by.clear()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:  # None: a handler not set from Python, which cannot be put back; the default
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _output_to_devnull_if_hung_up() -> None:
    """Send stdout and stderr to /dev/null where writing fails (a terminal that hung up
    answers every write, even an empty one, with EIO): the stop's messages and a progress
    bar must not end the command with an OSError before it has stopped cleanly."""
    for fd in (1, 2):
        try:
            os.write(fd, b"")
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)


def _hang_up(signum: int, frame: object) -> None:
    """The SIGHUP handler: stop as on SIGTERM (:class:`Terminated`)."""
    _output_to_devnull_if_hung_up()
    _raise_terminated(signum, frame)


@contextlib.contextmanager
def hangup_as_terminate(workers: bool = True) -> Iterator[None]:
    """Within, SIGHUP (the terminal closed: an ssh session ended, a tmux session killed)
    stops the command as SIGTERM does: train checkpoints the step under way, a sweep
    requeues the runs in flight and a deep run checkpoints its step within the workers'
    grace (``runner.STOP_GRACE``); it then ends with ``terminated by SIGHUP`` and exit status
    129 (:func:`main`). Without it the command died at once, its workers with it.
    Only where SIGHUP would kill: under ``nohup`` (SIGHUP ignored) the command goes on as
    before, and a handler set by the caller stays. Worker processes ignore SIGHUP
    (``runner._worker_init``, ``experiment._init_worker``; until then they hold it blocked,
    ``workers.workers_ignore_sigint``): the driver stops them.

    ``workers``: the command starts worker processes, so multiprocessing's resource
    tracker is started here (see below); a command that starts none (``train``) need not
    pay for it. For long-running commands only (:data:`HANGUP_COMMANDS`)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGHUP"):
        yield
        return
    if signal.getsignal(signal.SIGHUP) != signal.SIG_DFL:
        yield
        return
    try:  # the default is back on leaving, also when the tracker cannot be started
        if workers:
            from maxminq.experiments.workers import start_resource_tracker

            # multiprocessing's resource tracker, which the first worker would start, is in
            # the group too and ignores only SIGINT and SIGTERM: started now, it ignores
            # SIGHUP (exec keeps an ignored signal), else it died and the driver printed its
            # tracebacks.
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            start_resource_tracker()
        signal.signal(signal.SIGHUP, _hang_up)
        yield
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


#: The long-running commands that stop on SIGHUP as on SIGTERM (:func:`hangup_as_terminate`),
#: each with whether it starts worker processes. ``sweep`` does it itself, around the sweep
#: only (not ``--dry-run``); quick commands (status, plot, ...) keep dying at once.
HANGUP_COMMANDS: dict[str, bool] = {"train": False, "experiment": True, "reproduce": True}


def stdout_to_devnull() -> None:
    """After a BrokenPipeError on stdout (the reader left: ``maxminq ... | head``), send
    the rest of the output to /dev/null, so that neither a later print nor the interpreter's
    final flush fails again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _top_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="maxminq",
        description="Maxmin Q-learning and the Generalized Q-learning family.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="commands:\n"
        + "\n".join(f"  {name:<11} {desc}" for name, (_, desc) in COMMANDS.items())
        + "\n\nRun 'maxminq COMMAND --help' for a command's options.",
    )
    parser.add_argument(
        "command", choices=list(COMMANDS), metavar="COMMAND", help="one of the commands below"
    )
    parser.add_argument("--version", action="version", version=f"maxminq {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``maxminq`` console script; returns the exit status (2: a
    one-line error; 130 / 143 / 129: interrupted, SIGTERM, SIGHUP). What argparse ends itself
    raises SystemExit as argparse does, called from Python too: ``--help`` and
    ``--version`` (status 0), an unknown command and an option argparse refuses (status 2,
    after its one line)."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # no command: the overview, as an error (a script's typo must not pass)
        _top_parser().print_help(sys.stderr)
        return 2
    top_options = ("--help", "--version")  # and argparse's abbreviations of them, '--vers'
    if argv[0].startswith("-") and not any(o.startswith(argv[0]) for o in ("-h", *top_options)):
        # argparse said only 'required: COMMAND' (for --versoin too)
        meant = closest(argv[0].lstrip("-").partition("=")[0], ["help", "version"])
        given = [a for a in argv if a in COMMANDS]
        if meant:
            hint = f"did you mean --{meant}?"
        elif given:
            hint = f"options come after the command: maxminq {given[0]} {argv[0]} ..."
        else:
            hint = "'maxminq --help' lists the commands, 'maxminq COMMAND --help' their options"
        print(f"maxminq: error: unknown option {argv[0]!r}; {hint}", file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help", "--version") or argv[0] not in COMMANDS:
        _top_parser().parse_args(argv[:1])
        return 2
    name = argv[0]
    try:  # importing a command takes up to a second (torch, pandas): Ctrl-C there is no bug
        module = importlib.import_module(COMMANDS[name][0])
    except KeyboardInterrupt:
        print(f"maxminq {name}: interrupted", file=sys.stderr)
        return 130
    parser = _Parser(prog=f"maxminq {name}", description=COMMANDS[name][1])
    module.add_arguments(parser)
    try:
        if "-h" not in argv and "--help" not in argv:
            reject_options_before_sub_command(parser, argv[1:])
            reject_empty_values(parser, argv[1:])
        args = parser.parse_args(argv[1:])
        with contextlib.ExitStack() as stack:
            stack.enter_context(one_line_warnings(name))
            stack.enter_context(sigterm_as_interrupt())
            if name in HANGUP_COMMANDS:
                stack.enter_context(hangup_as_terminate(HANGUP_COMMANDS[name]))
            return int(module.run(args) or 0)
    except MaxminqError as err:
        print(f"maxminq {name}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # a command may say how to go on (RESUME_HINT)
        hint = getattr(module, "RESUME_HINT", "")
        term = isinstance(err, Terminated) or _sigterm_received.is_set()
        how, status = _terminated_how() if term else ("interrupted", 130)
        print(f"maxminq {name}: {how}{'; ' + hint if hint else ''}", file=sys.stderr)
        return status
    except BrokenPipeError:  # e.g. 'maxminq envs | head': the reader left, nothing to say
        stdout_to_devnull()
        return 141
    except OSError as err:  # a file that cannot be written once the work is done (a folder
        # in its place, a full disk): one line naming it, not a traceback; exit 1, a failure
        path = err.filename2 or err.filename  # a rename names its target second
        where = f"{path}: " if path else ""
        print(f"maxminq {name}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
