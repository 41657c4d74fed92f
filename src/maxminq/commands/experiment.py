"""``maxminq experiment``: the paper's toy MDP (Fig. 2, appendix C.1) and noisy Mountain Car
(Fig. 3, appendix C.2), vectorised over runs.

    maxminq experiment toy-mdp [--runs 5000] [--episodes 1000] [--mu 0.1 -0.1]
                               [--algorithms q_learning double_q maxmin] [--out DIR]
    maxminq experiment mountain-car [--runs 100] [--episodes 1000] [--sigma2 0 1 10 50]
                                    [--step-sizes 0.005 0.01 0.02 0.04 0.08]
                                    [--algorithms q_learning double_q averaged maxmin] [--out DIR]

``--algorithms`` takes operator names, optionally with the number of estimators (Maxmin,
Ensemble) or snapshots (Averaged, Historical Best) as ``name:N``; a bare ``maxmin`` means the
paper's N values (2, 4, 6, 8 on the toy MDP; 4 on Mountain Car, our choice: the paper does not
state it). Settings are spread over ``--workers`` processes (each runs all its runs as
vectorised lanes; Mountain Car settings are split into tasks of at most 200 runs). The tidy
CSV is written atomically once everything has finished, then the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from maxminq._progress import progress_bar
from maxminq.commands.sweep import warn_many_workers
from maxminq.errors import (
    INT64_MAX,
    UsageError,
    ascii_int,
    meant_whole,
)
from maxminq.experiments.store import remove_stale_temporaries
from maxminq.experiments.workers import (
    STOP_SIGNALS,
    UNGUARDED_EXIT,
    Warned,
    die_with_parent,
    exit_codes,
    ignore_terminal_signals_in_worker,
    named_spawn_context,
    refuse_unguarded_startup,
    session_function_error,
    show_once,
    warnings_for_driver,
    workers_ignore_sigint,
    workers_see_main,
)

TOY_FULL = {"runs": 5000, "episodes": 1000}
TOY_QUICK = {"runs": 300, "episodes": 300}
TOY_ALGORITHMS = ["q_learning", "double_q", "maxmin"]
TOY_MAXMIN_N = (2, 4, 6, 8)

MC_FULL: dict[str, Any] = {
    "runs": 100,
    "episodes": 1000,
    "sigma2": [0.0, 1.0, 10.0, 50.0],
    "step_sizes": [0.005, 0.01, 0.02, 0.04, 0.08],
}
MC_QUICK: dict[str, Any] = {
    "runs": 4,
    "episodes": 40,
    "sigma2": [0.0, 10.0],
    "step_sizes": [0.02, 0.08],
}
MC_ALGORITHMS = ["q_learning", "double_q", "averaged", "maxmin"]
#: What each command writes after its CSV (an earlier run's are removed once the CSV is in).
TOY_OUTPUTS = ("settings.json", "fig2_toy_mdp_distance.png", "figC1_toy_mdp_q_a_left.png",
               "toy_mdp_bias_vs_n.png")  # fmt: skip
MC_OUTPUTS = ("settings.json", "fig3a_mountain_car_sensitivity.png",
              "fig3b_mountain_car_curve.png", "figC2_mountain_car_curves.png",
              "mountain_car_step_sizes.csv")  # fmt: skip
MAX_SIGMA2 = 1e6  # noise sd 1000x the reward of -1; near 1e308 the figures' axes overflow
MC_DEFAULT_N: dict[str, tuple[int, ...]] = {
    "maxmin": (4,),
    "averaged": (4,),
    "ensemble": (4,),
    "historical_best": (4,),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register ``toy-mdp`` and ``mountain-car`` (values are validated in ``run``)."""
    sub = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    about = "toy MDP of Fig. 1: Fig. 2 and appendix Q(A, Left)"
    toy = sub.add_parser("toy-mdp", help=about, description=about)
    for key, what in (("runs", "runs per setting"), ("episodes", "episodes per run")):
        toy.add_argument(f"--{key}", help=f"{what} (default {TOY_FULL[key]}; "
                         f"--quick {TOY_QUICK[key]})")  # fmt: skip
    toy.add_argument(
        "--mu",
        nargs="*",
        default=["0.1", "-0.1"],
        help="mean reward of the actions in B (reward mu + U(-1, 1)), non-zero; one setting "
        "per value (default 0.1 -0.1)",
    )
    toy.add_argument("--batch-size", default="32",
                     help="replayed transitions per update (default 32)")  # fmt: skip
    toy.add_argument("--step-size", default="0.01", help="step size, > 0 (default 0.01)")
    about = "noisy Mountain Car: Fig. 3(a), 3(b), appendix"
    mc = sub.add_parser("mountain-car", help=about, description=about)
    for key, what in (
        ("runs", "runs per setting"),
        ("episodes", "episodes per run"),
        ("sigma2", f"reward noise variances, 0..{MAX_SIGMA2:g}"),
        ("step_sizes", "step sizes, > 0"),
    ):
        values = [MC_FULL[key], MC_QUICK[key]]
        full, quick = (" ".join(f"{v:g}" for v in x) if isinstance(x, list) else x for x in values)
        mc.add_argument(f"--{key.replace('_', '-')}", nargs="*" if key in ("sigma2", "step_sizes")
                        else None, help=f"{what} (default {full}; --quick {quick})")  # fmt: skip
    mc.add_argument("--step-size-per", default="tiling",
                    help="'tiling': each active weight moves by step size x TD error (default); "
                    "'total': the 8 tilings share it (step size / 8 each)")  # fmt: skip
    mc.add_argument("--batch-size", default="4", help="replayed transitions per update (default 4)")
    mc.add_argument(
        "--max-steps",
        default="5000",
        help="episode step cap, in agent steps (truncation; default 5000)",
    )
    for p, name, algos in (
        (toy, "toy_mdp", "q_learning double_q maxmin (N = 2, 4, 6, 8)"),
        (mc, "mountain_car", "q_learning double_q averaged:4 maxmin:4"),
    ):
        p.add_argument(
            "--algorithms",
            nargs="*",
            help="operators as name[:N][:key=value,...], e.g. maxmin:4 "
            "bias_corrected:sigma=0.5, or a G function of your own as "
            "module:function[:N][:key=value,...] (its module on PYTHONPATH, e.g. "
            f"my_ops:median_q:4) (default {algos})",
        )
        p.add_argument(
            "--update-every", default="1", help="agent steps per update, >= 1 (default 1)"
        )
        p.add_argument("--epsilon", default="0.1", help="eps-greedy exploration (default 0.1)")
        p.add_argument("--gamma", default="1", help="discount, in [0, 1] (default 1)")
        p.add_argument("--buffer-size", default="100", help="replay buffer size (default 100)")
        p.add_argument(
            "--update-members",
            default="1",
            help="estimators maxmin, ensemble and a G of your own update per step, each on "
            "its own mini-batch "
            "(Algorithm 1's subset; at most their N); the others update one (default 1)",
        )
        p.add_argument(
            "--seed", default="0", help="base seed, >= 0; run r uses (seed, r) (default 0)"
        )
        p.add_argument(
            "--workers",
            default=str(os.cpu_count() or 1),
            help=f"processes (default: the number of cores, {os.cpu_count() or 1})",
        )
        p.add_argument("--out", default=None, help=f"output folder (default results/{name})")
        p.add_argument(
            "--quick", action="store_true", help="small preset (< 1 min): the --quick values above"
        )
        p.add_argument("--no-progress", action="store_true", help="hide progress bars")


# --- validation (everything is checked before any work starts) -------------------------------


def _int(value: Any, option: str, minimum: int = 1, maximum: int = INT64_MAX) -> int:
    """``value`` as a whole number in ``minimum..maximum`` (by default up to the largest int64,
    as the kernels take them: a larger one was a numba traceback), else a UsageError. ASCII
    digits only, as every ``type=int`` option of ``maxminq`` (``int`` reads '١٠٠' as 100)."""
    try:
        x = ascii_int(str(value))
    except ValueError:
        # 1e3 or 1,000 for a count: say how to write it, as the other commands do ('2,4' is
        # two numbers, not 24)
        number = meant_whole(str(value))
        how = f" (write {number})" if number is not None and number >= minimum else ""
        raise UsageError(
            f"{option}: expected a whole number >= {minimum}, got {value!r}{how}"
        ) from None
    if x < minimum:
        raise UsageError(f"{option}: expected a whole number >= {minimum}, got {value!r}")
    if x > maximum:
        raise UsageError(f"{option}: expected a whole number <= {maximum}, got {value!r}")
    return x


def physical_memory() -> float:
    """This machine's memory in bytes (infinite where the OS does not say)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return math.inf


#: Bytes a result row takes at the least once gathered (the compact frame of ``_slim``).
ROW_BYTES = 30
# toy_mdp.csv on disk: about 45 bytes a row (2,675,164,441 bytes for the 60,000,000 rows of
# the paper's grid, measured 2026-11-23); a CSV of at least CSV_NOTE_BYTES gets a note first.
TOY_CSV_ROW_BYTES = 45
CSV_NOTE_BYTES = 10**9


def check_memory(need: int, scale: dict[str, float]) -> None:
    """Refuse, before any work, settings whose arrays cannot fit in this machine's memory.

    ``need`` is a lower bound on the bytes (the arrays the kernels and the gathered results
    certainly take); ``scale`` maps each option that drives it to its value over its default,
    and the error names the one furthest above (an absurd ``--runs`` or ``--batch-size`` was a
    MemoryError traceback, or one after hours of work)."""
    have = physical_memory()
    if need > have:
        option = max(scale, key=lambda k: scale[k])
        raise UsageError(
            f"{option}: these settings need at least {need / 1e9:.3g} GB of memory, more than "
            f"this machine's {have / 1e9:.3g} GB; make {option} smaller"
        )


def _floats(
    values: list[str] | None,
    option: str,
    *,
    positive: bool,
    nonzero: bool = False,
    maximum: float = math.inf,
) -> list[float]:
    """:func:`maxminq.tabular.agent.check_float_list` (the API's check, imported late)."""
    from maxminq.tabular.agent import check_float_list

    return check_float_list(values, option, positive=positive, nonzero=nonzero, maximum=maximum)


def _algorithms(
    tokens: list[str] | None, default: list[str], default_n: dict[str, tuple[int, ...]]
) -> list[tuple[str, int, dict[str, float]]]:
    """``--algorithms`` as (name, N, operator parameters); the same (name, N) twice is an
    error (it would give duplicate rows, or rows that the CSV cannot tell apart)."""
    from maxminq.tabular.agent import parse_algorithm

    if tokens is not None and len(tokens) == 0:
        raise UsageError("--algorithms: expected at least one algorithm, got an empty list")
    out: list[tuple[str, int, dict[str, float]]] = []
    given: dict[tuple[str, int], str] = {}
    for token in tokens or default:
        for name, n, kwargs in parse_algorithm(token, default_n):
            if (name, n) in given:
                what = f"{name} with N = {n}" if n != 1 else name
                raise UsageError(
                    f"--algorithms: {what} is given twice ({given[name, n]!r} and {token!r}); "
                    "give each once (the CSV tells settings apart by algorithm and n only"
                    + (
                        "; to compare parameters of one operator, give a sweep config one "
                        "variant per op_kwargs (docs/sweeps.md))"
                        if kwargs or any(k for a, m, k in out if (a, m) == (name, n))
                        else ")"
                    )
                )
            given[name, n] = token
            out.append((name, n, kwargs))
    return out


def _session_g_unreachable(
    algos: list[tuple[str, int, dict[str, float]]], workers: int, settings: int
) -> None:
    """A G of a notebook or an interactive session (``'__main__:median_q'``, which
    ``maxminq.cli.main(["experiment", ...])`` takes from one) with ``--workers`` > 1 and more
    than one setting: a one-line UsageError before any work. The spawned workers cannot
    import it (only a script's ``__main__``, run again in each worker, or a ``python -m``
    module's, has it there), and each of them failed with "module '__main__' has no
    'median_q'", which the user had just defined."""
    if workers == 1 or settings == 1:  # all run in this process, where __main__ has G
        return
    if workers_see_main():  # a script (each worker runs it again) or a python -m module
        return
    for name, _, _ in algos:
        if name.startswith("__main__:"):
            processes = f"the --workers {workers} worker processes"
            raise session_function_error(
                "--algorithms", name, processes, instead="use --workers 1, or "
            )


def _subset_sizes(
    u: int, algos: list[tuple[str, int, dict[str, float]]]
) -> dict[tuple[str, int], dict[str, int]]:
    """``--update-members`` ``u`` as each (algorithm, N)'s extra settings: maxmin, ensemble
    and a G of one's own take it (checked against N now, before any work), the others update
    one table."""
    from maxminq.tabular.agent import KIND_ESTIMATORS, algorithm_spec, check_update_members

    if u > 1 and all(algorithm_spec(a).kind != KIND_ESTIMATORS for a, _, _ in algos):
        # else ignored without a word, while settings.json recorded it (the API refuses it)
        names = ", ".join(dict.fromkeys(a for a, _, _ in algos))
        raise UsageError(
            f"--update-members: none of the algorithms ({names}) updates a subset of its "
            f"tables (only maxmin, ensemble and a G of your own ('module:function') do), "
            f"got {u}"
        )
    return {
        (a, n): {"update_members": check_update_members(a, n, u)}
        if u > 1 and algorithm_spec(a).kind == KIND_ESTIMATORS
        else {}
        for a, n, _ in algos
    }


def _algorithm_text(name: str, n: int, kwargs: dict[str, float]) -> str:
    """``maxmin:4``, ``bias_corrected:sigma=0.5``: how the summary line names a setting."""
    from maxminq.tabular.agent import algorithm_spec, op_params_text

    text = name if algorithm_spec(name).fixed_n is not None else f"{name}:{n}"
    return f"{text}:{op_params_text(kwargs)}" if kwargs else text


def _warn_nonfinite(tasks: list[dict[str, Any]], frames: list[pd.DataFrame]) -> None:
    """One stderr line naming the toy settings some of whose runs went non-finite (NaN or
    inf: too large a step size, a G of one's own that diverges), how many of their runs,
    from which episode; nothing when every value is finite. The figures name them too."""
    from maxminq.experiments.registry import nonfinite_text

    said = []
    for task, frame in zip(tasks, frames, strict=True):
        text = nonfinite_text(frame)
        if text:
            name = _algorithm_text(task["algorithm"], task["n"], task.get("op_kwargs") or {})
            said.append(f"{name} at mu = {task['mu']:+g}: {text}")
    if said:
        print(f"toy MDP: note: {'; '.join(said)}", file=sys.stderr, flush=True)


def _warn_nonfinite_weights(tasks: list[dict[str, Any]], frames: list[pd.DataFrame]) -> None:
    """One stderr line naming the Mountain Car settings some of whose runs' weights went
    NaN or inf (the table cannot tell them: their episodes run to the step cap), how many
    runs of how many; nothing when all stayed finite."""
    counts: dict[str, list[int]] = {}
    for task, frame in zip(tasks, frames, strict=True):
        name = _algorithm_text(task["algorithm"], task["n"], task.get("op_kwargs") or {})
        key = f"{name} at sigma2 = {task['sigma2'][0]:g}, step size {task['step_sizes'][0]:g}"
        seen = counts.setdefault(key, [0, 0])  # a setting's chunks of runs add up
        seen[0] += int(frame.attrs.get("nonfinite_runs", 0))
        seen[1] += int(task["runs"])
    from maxminq.analysis.style import count  # '1 of 1 run', as the toy MDP's note

    said = [f"{k}: {bad} of {count(runs, 'run')}" for k, (bad, runs) in counts.items() if bad]
    if said:
        print(f"mountain car: note: runs whose weights went non-finite (NaN or inf; their "
              f"episodes ran to the step cap): {'; '.join(said)}", file=sys.stderr,
              flush=True)  # fmt: skip


def _plot_frame(df: pd.DataFrame, algos: list[tuple[str, int, dict[str, float]]]) -> pd.DataFrame:
    """``df`` for the figures: with an ``op_kwargs`` column (JSON, as a stored sweep has it)
    when some setting has operator parameters, so that the legends name them
    (``Bias-corrected Q (sigma=0.5)``); the CSV keeps its documented columns."""
    texts = sorted({json.dumps(kw) for _, _, kw in algos if kw})
    if not texts:
        return df
    codes = np.full(len(df), -1, dtype=np.int8)  # -1: no parameters (NaN)
    for name, n, kw in algos:
        if kw:
            codes[((df.algorithm == name) & (df.n == n)).to_numpy()] = texts.index(json.dumps(kw))
    # pandas-stubs want categories as an Index; pandas takes any list-like
    return df.assign(op_kwargs=pd.Categorical.from_codes(codes, categories=texts))  # type: ignore[call-overload]


def _out_dir(value: str | None, name: str, outputs: tuple[str, ...]) -> Path:
    """The output folder, checked now: the last check before the work starts. A folder in it
    named like one of ``outputs`` (the files the command writes) is refused too: it was found
    only once the simulation was done, with the CSV already written beside it."""
    from maxminq.cli import check_out_folder

    path = Path(value) if value is not None else Path("results") / name
    out = check_out_folder(path, "--out", writes=f"experiment {name.replace('_', '-')}")
    for output in outputs:
        if (out / output).is_dir():
            raise UsageError(
                f"--out: {output} in {out} is a folder, where the experiment writes that file"
            )
    return out


def _common(args: argparse.Namespace) -> dict[str, Any]:
    from maxminq.tabular.agent import check_probability

    return {
        "seed": _int(args.seed, "--seed", minimum=0),
        "workers": _int(args.workers, "--workers"),
        "progress": not args.no_progress,
        "update_members": _int(args.update_members, "--update-members"),
        # The agent settings every task takes (the run functions' own names).
        "agent": {
            "update_every": _int(args.update_every, "--update-every"),
            "epsilon": check_probability(args.epsilon, "--epsilon"),
            "gamma": check_probability(args.gamma, "--gamma"),
            "buffer_size": _int(args.buffer_size, "--buffer-size"),
        },
    }


# --- running ---------------------------------------------------------------------------------


def _slim(df: pd.DataFrame, floats: list[str]) -> pd.DataFrame:
    """Compact dtypes for the tens of millions of rows of a full run (about 4x less memory):
    one shared categorical for ``algorithm``, int32 counters whose values fit in it (an
    episode of more than 2**31 - 1 steps, under a --max-steps above it, stays int64: int32
    wrapped it round to a negative count), float32 for ``floats`` whose finite values fit
    in it (a column with one beyond, |mu| > 3.4e38 or a diverging run's 1e47, stays
    float64: float32 wrote them as inf, not what was computed)."""
    from maxminq.tabular.agent import ALGORITHMS

    low, high = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    counters = [c for c in ("n", "run", "episode", "steps") if c in df]
    out = df.astype({c: "int32" for c in counters if df[c].between(low, high).all()})
    big = float(np.finfo(np.float32).max)
    fits = [c for c in floats if not (np.isfinite(out[c]) & (out[c].abs() > big)).any()]
    out = out.astype({c: "float32" for c in fits})
    # a G of one's own keeps its 'module:function' (not in the categories: it read as NaN)
    names = sorted({*ALGORITHMS, *out["algorithm"].unique()})
    out["algorithm"] = pd.Categorical(out["algorithm"], categories=names)
    return out


@contextlib.contextmanager
def _own_g_failures(algorithm: Any) -> Iterator[None]:
    """A G of one's own (``'module:function'``, tried on zeros before the run) that raises on
    the run's values: a one-line UsageError naming it, as ``maxminq theory --operator``
    says it, not a traceback through the simulation (nothing is written either way)."""
    try:
        yield
    except UsageError:
        raise
    except Exception as err:
        if not (isinstance(algorithm, str) and ":" in algorithm):  # the library's: a bug
            raise
        from maxminq.operators import raised_in_module

        if not raised_in_module(err, algorithm.rsplit(":", 1)[0]):  # not G's failure
            raise
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UsageError(
            f"--algorithms: operator {algorithm!r} failed during the run "
            f"({type(err).__name__}: {text}); nothing was written"
        ) from None


def _toy_task(kwargs: dict[str, Any]) -> pd.DataFrame:
    from maxminq.tabular.toy_mdp import run_toy_mdp

    # float32 keeps 7 significant digits of the metrics (and a 25% smaller CSV).
    with _own_g_failures(kwargs.get("algorithm")):
        return _slim(run_toy_mdp(**kwargs), ["p_left", "distance", "q_a_left"])


def _mc_task(kwargs: dict[str, Any]) -> pd.DataFrame:
    from maxminq.linear.mountain_car import run_mountain_car_grid

    with _own_g_failures(kwargs.get("algorithm")):  # the weights only to count NaN/inf
        # reached_goal: the step-size table's 'capped' tells an episode that reached the goal
        # on the cap's own step from one truncated there (steps alone cannot)
        got = run_mountain_car_grid(**kwargs, return_weights=True, reached_goal=True)
    frame, weights, _ = cast(tuple[pd.DataFrame, np.ndarray, np.ndarray], got)
    out = _slim(frame, [])
    # runs whose weights went NaN or inf (their episodes then run to the step cap)
    finite = np.isfinite(weights.reshape(len(weights), -1)).all(axis=1)
    out.attrs["nonfinite_runs"] = int((~finite).sum())
    return out


@contextlib.contextmanager
def _stop_signals_held() -> Iterator[None]:
    """Within, Ctrl-C, SIGTERM and SIGHUP are only noted; on leaving, the handlers are back
    and the first one noted is raised again (once). A signal mask cannot hold them back:
    it is the calling thread's, and the kernel hands a signal sent to the process to a
    thread that does not block it (numba's, the executor's), after which Python runs the
    handler in the main thread at once. Main thread only; an ignored signal stays so."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    held = [signum for signum, handler in previous.items() if handler not in (signal.SIG_IGN, None)]
    for signum in held:
        signal.signal(signum, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for signum in held:
            signal.signal(signum, previous[signum])
        if noted:
            signal.raise_signal(noted[0])  # runs the handler put back (Terminated, ...)


# The workers are spawned: each imports the calling script again (as __mp_main__), and a
# script that called maxminq.cli.main(["experiment", ...]) without the __main__ guard ran
# the experiment again there, whose own pool then failed to start: a traceback per worker,
# then "a worker process died". Such a worker (named WORKER_NAME-N, which its start-up
# already knows) now exits at once with UNGUARDED_EXIT, as run_sweep's do, and the command,
# seeing that status, stops with UNGUARDED.
WORKER_NAME = "maxminq-experiment-worker"
UNGUARDED = (
    "the worker processes import the calling script again, and it ran the experiment again "
    'in each of them; put the call under `if __name__ == "__main__":` (nothing was run or '
    "written; run it again once it is there), or use --workers 1"
)


def _refuse_worker_startup() -> None:
    """Stop a worker importing a script that runs the experiment without the ``__main__``
    guard (it exits with ``UNGUARDED_EXIT``, which :func:`_run_tasks` reports), or raise
    :data:`UNGUARDED` in any other spawned process importing it."""
    refuse_unguarded_startup(WORKER_NAME, UNGUARDED)


def _init_worker() -> None:
    """Worker initializer. Ctrl-C is the parent's business: a worker that raised
    KeyboardInterrupt could die holding the executor's queue locks and hang the parent.
    tqdm's default lock is a named semaphore; a terminated worker never unlinks it (and the
    resource tracker warns of a leak), while a worker's own lock syncs nothing across
    processes anyway (spawned workers each make their own), so a thread lock does the same."""
    ignore_terminal_signals_in_worker()  # Ctrl-C, SIGHUP: the parent stops the workers
    die_with_parent()
    import tqdm as tqdm_module

    tqdm_module.tqdm.set_lock(threading.RLock())


def _warnings_recorded(
    fn: Callable[[dict[str, Any]], pd.DataFrame], task: dict[str, Any]
) -> tuple[pd.DataFrame, list[Warned]]:
    """``fn(task)`` in a worker, with the :class:`~maxminq.errors.MaxminqWarning` warnings
    it gave (e.g. numba's kernel cache not written, in every worker that compiles) handed
    back for the parent to show: :func:`~maxminq.experiments.workers.warnings_for_driver`,
    as a sweep's runs do."""
    with warnings_for_driver() as said:
        frame = fn(task)
    return frame, said


def _stop_pool(pool: ProcessPoolExecutor, futures: list[Future]) -> None:
    """Stop ``pool`` at once: cancel queued tasks, kill the workers (a running task is one
    numba call that cannot be interrupted) and release the executor's queues."""
    # A second Ctrl-C, SIGTERM or SIGHUP (a terminal closed meanwhile) must not cut the
    # clean-up short (raised once the workers are gone).
    with _stop_signals_held():
        for fut in futures:
            fut.cancel()
        # The executor has no public way to stop running tasks; its worker processes are in
        # the private ``_processes`` (there since Python 3.2).
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            if proc.is_alive():
                proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _run_tasks(
    fn: Callable[[dict[str, Any]], pd.DataFrame],
    tasks: list[dict[str, Any]],
    workers: int,
    progress: bool,
    desc: str,
) -> list[pd.DataFrame]:
    """Run ``fn`` on every task, in ``workers`` processes; results in task order.

    On Ctrl-C (or any error) the workers are terminated before the exception propagates,
    so the command exits within about a second instead of after the running tasks.
    """
    # Counted in runs: a Mountain Car setting of more than 200 runs is several tasks, and a
    # bar counting tasks as "settings" showed 3/3 settings for one.
    bar = progress_bar(total=sum(t["runs"] for t in tasks), desc=desc, unit="run", enabled=progress)
    results: list[pd.DataFrame] = []
    try:
        if workers == 1 or len(tasks) == 1:
            for task in tasks:
                results.append(fn(task))
                bar.update(task["runs"])
        else:
            pool: ProcessPoolExecutor | None = None
            futures: list[Future] = []
            # The workers are spawned ignoring SIGINT, and a Ctrl-C meanwhile is raised once
            # they are (workers_ignore_sigint): a worker still importing when a terminal's
            # Ctrl-C reached the group printed a traceback, or died and broke the pool. (Not
            # SIGTERM: blocked here, it stays blocked in the workers, which the pool's
            # terminate() then cannot stop. Blocking both here was undone anyway, unseen: the
            # pool starts multiprocessing's resource tracker, which unblocks them.)
            procs: list[Any] = []  # the workers, kept: the pool forgets those that died
            try:
                with workers_ignore_sigint():
                    # Named workers: _refuse_worker_startup knows them (spawned, as before).
                    context = named_spawn_context(WORKER_NAME)
                    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                               initializer=_init_worker)  # fmt: skip
                    futures = [pool.submit(_warnings_recorded, fn, task) for task in tasks]
                procs = list((getattr(pool, "_processes", None) or {}).values())
                shown: set[Warned] = set()
                for task, fut in zip(tasks, futures, strict=True):
                    try:
                        frame, said = fut.result()
                        results.append(frame)
                        show_once(said, shown)  # once, as the command's one line
                    except BrokenProcessPool:
                        if UNGUARDED_EXIT in exit_codes(procs):  # the script, not the run
                            raise UsageError(UNGUARDED) from None
                        # Killed (OOM killer, kill -9): say so in one line (an OSError: the
                        # command line's exit status 1, a failure)
                        raise ChildProcessError(
                            "a worker process died (killed, e.g. for want of memory) before "
                            "its settings were done; nothing was written (fewer --workers or "
                            "--runs need less memory)"
                        ) from None
                    bar.update(task["runs"])
            except BaseException:
                if pool is not None:
                    _stop_pool(pool, futures)
                    # The traceback keeps this frame alive: drop the executor now so that its
                    # queues' semaphores are released before exit (else the resource tracker
                    # warns of leaked semaphores).
                    del pool, futures
                raise
            pool.shutdown(wait=True)
    finally:
        bar.close()
    return results


def write_settings(out: Path, experiment: str, settings: dict[str, Any]) -> None:
    """``settings.json`` beside the CSV: every resolved setting of the command (the CSV's
    columns name only what varies between its rows), the maxminq version, atomically."""
    import maxminq
    from maxminq.experiments.store import atomic_write

    text = json.dumps(
        {"experiment": experiment, "maxminq": maxminq.__version__, **settings}, indent=2
    )
    atomic_write(out / "settings.json", lambda tmp: tmp.write_text(text + "\n"))


def write_csv_atomic(df: pd.DataFrame, path: Path) -> None:
    """Write ``df`` to ``path`` atomically (``maxminq.experiments.store.atomic_write``).

    Uses pyarrow's CSV writer when it is installed (about 8x faster than pandas on the
    tens of millions of rows of a full-scale run), pandas otherwise.
    """
    from maxminq.experiments.store import atomic_write

    def write(tmp: Path) -> None:
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv

            pacsv.write_csv(pa.Table.from_pandas(df, preserve_index=False), tmp)
        except ImportError:
            df.to_csv(tmp, index=False)

    atomic_write(path, write)


def run_toy(args: argparse.Namespace) -> int:
    """Validate, run every (mu, algorithm, n), write ``toy_mdp.csv`` and the figures."""
    preset = TOY_QUICK if args.quick else TOY_FULL
    runs = _int(args.runs if args.runs is not None else preset["runs"], "--runs")
    episodes = _int(args.episodes if args.episodes is not None else preset["episodes"],
                    "--episodes")  # fmt: skip
    mus = _floats(args.mu, "--mu", positive=False, nonzero=True)
    algos = _algorithms(args.algorithms, TOY_ALGORITHMS, {"maxmin": TOY_MAXMIN_N})
    batch = _int(args.batch_size, "--batch-size")
    step_size = _floats([args.step_size], "--step-size", positive=True)[0]
    common = _common(args)
    _session_g_unreachable(algos, common["workers"], len(mus) * len(algos))
    subset = _subset_sizes(common["update_members"], algos)
    out = _out_dir(args.out, "toy_mdp", ("toy_mdp.csv", *TOY_OUTPUTS))

    tasks = [
        {"mu": mu, "algorithm": a, "n": n, "runs": runs, "episodes": episodes,
         "seed": common["seed"], "batch_size": batch, "step_size": step_size,
         **common["agent"], **subset[a, n], **({"op_kwargs": kw} if kw else {})}
        for mu in mus for a, n, kw in algos
    ]  # fmt: skip
    from maxminq.tabular.toy_mdp import check_settings

    for task in tasks:  # every value checked before any work (e.g. --gamma 0, --step-size 0)
        check_settings(task)
    # One task holds all its runs as lanes (tables, buffer, mini-batch indices, metrics per
    # episode); the parent gathers every row.
    n_max = max(n for _, n, _ in algos)
    u_max = max(t.get("update_members", 1) for t in tasks)
    agent = common["agent"]
    lane = 192 * n_max + 16 * agent["buffer_size"] + 8 * batch * u_max + 16 * episodes
    check_memory(runs * lane + len(tasks) * runs * episodes * ROW_BYTES, {
        "--runs": runs / TOY_FULL["runs"], "--episodes": episodes / TOY_FULL["episodes"],
        "--buffer-size": agent["buffer_size"] / 100, "--batch-size": batch * u_max / 32,
        "--algorithms": n_max / max(TOY_MAXMIN_N),
    })  # fmt: skip
    # What a run killed while writing (kill -9) left: these outputs' temporaries only.
    remove_stale_temporaries(out / name for name in ("toy_mdp.csv", *TOY_OUTPUTS))
    rows = len(tasks) * runs * episodes  # the paper's grid: 60,000,000 rows, 2.7 GB
    if rows * TOY_CSV_ROW_BYTES >= CSV_NOTE_BYTES:  # the defaults' size surprised a newcomer
        size = rows * TOY_CSV_ROW_BYTES / 1e9
        print(f"toy MDP: note: toy_mdp.csv will hold {rows:,} rows (one per run and episode), "
              f"about {size:.1f} GB on disk; fewer --runs or --episodes (--quick: 300 x 300) "
              "make it smaller", file=sys.stderr, flush=True)  # fmt: skip
    start = time.perf_counter()
    used = min(common["workers"], len(tasks))  # the processes that run (at most one a task)
    warn_many_workers("experiment", used)  # all checked now
    frames = _run_tasks(_toy_task, tasks, common["workers"], common["progress"], "toy MDP")
    df = pd.concat(frames, ignore_index=True)
    wall = time.perf_counter() - start
    names = ", ".join(_algorithm_text(*a) for a in algos)
    print(f"toy MDP: {len(tasks)} setting{'s' * (len(tasks) != 1)} ({names}) x {runs:,} "
          f"run{'s' * (runs != 1)} x {episodes:,} episode{'s' * (episodes != 1)} "
          f"simulated in {wall:.1f} s ({used} worker(s))", flush=True)  # fmt: skip
    _warn_nonfinite(tasks, frames)
    from maxminq.analysis import classic_plots as cp  # before the clock: matplotlib's import

    t_csv = time.perf_counter()
    write_csv_atomic(df, out / "toy_mdp.csv")
    cp.remove_stale(out, TOY_OUTPUTS)
    write_settings(out, "toy-mdp", {
        "runs": runs, "episodes": episodes, "mu": mus,
        "algorithms": [_algorithm_text(*a) for a in algos], "seed": common["seed"],
        "batch_size": batch, "step_size": step_size, **common["agent"],
        "update_members": common["update_members"],
    })  # fmt: skip
    t_fig = time.perf_counter()
    shown = _plot_frame(df, algos)
    cp.save_figure(cp.toy_distance_figure(shown), out / "fig2_toy_mdp_distance.png")
    cp.save_figure(
        cp.toy_q_left_figure(shown, gamma=common["agent"]["gamma"]),
        out / "figC1_toy_mdp_q_a_left.png",
    )
    cp.save_figure(
        cp.toy_bias_vs_n_figure(shown, gamma=common["agent"]["gamma"]),
        out / "toy_mdp_bias_vs_n.png",
    )
    rows_text = f"{len(df):,} row{'s' * (len(df) != 1)}"
    print(f"toy MDP: wrote {out}/toy_mdp.csv ({rows_text}, {t_fig - t_csv:.1f} s) and "
          f"figures ({time.perf_counter() - t_fig:.1f} s)")  # fmt: skip
    return 0


def fig3b_figure(
    df: pd.DataFrame, sigma2: list[float], max_steps: int | None = None
) -> tuple[Any, str | None]:
    """Fig. 3(b), the learning curves at sigma^2 = 10, and a note when 10 was not run: then
    the middle value of ``sigma2`` (in the order given) stands in, and the title says so
    (and names the episode cap ``max_steps`` if given)."""
    from maxminq.analysis import classic_plots as cp

    if 10.0 in sigma2:
        s2, title, note = 10.0, "Fig. 3(b): σ² = 10", None
    else:
        s2 = sigma2[len(sigma2) // 2]
        title = f"Fig. 3(b) at σ² = {s2:g}, not 10"
        note = f"fig3b shows sigma^2 = {s2:g} (the paper's 10 is not among --sigma2)"
    return cp.mc_learning_curve_figure(df, [s2], title=title, max_steps=max_steps), note


def run_mountain_car(args: argparse.Namespace) -> int:
    """Validate, run every algorithm's (sigma2 x step size) grid, write CSV and figures."""
    preset = MC_QUICK if args.quick else MC_FULL
    runs = _int(args.runs if args.runs is not None else preset["runs"], "--runs")
    episodes = _int(args.episodes if args.episodes is not None else preset["episodes"],
                    "--episodes")  # fmt: skip
    sig = _floats(args.sigma2 if args.sigma2 is not None else [str(s) for s in preset["sigma2"]],
                  "--sigma2", positive=False, maximum=MAX_SIGMA2)  # fmt: skip
    sig = [s2 + 0.0 for s2 in sig]  # -0 passes as 0; written, it read as a negative variance
    steps = args.step_sizes if args.step_sizes is not None else preset["step_sizes"]
    alphas = _floats([str(s) for s in steps], "--step-sizes", positive=True)
    algos = _algorithms(args.algorithms, MC_ALGORITHMS, MC_DEFAULT_N)
    batch = _int(args.batch_size, "--batch-size")
    max_steps = _int(args.max_steps, "--max-steps")
    from maxminq.linear.mountain_car import check_step_size_per

    check_step_size_per(args.step_size_per)
    common = _common(args)
    chunks = -(-runs // 200)  # each setting's tasks (below)
    _session_g_unreachable(algos, common["workers"], len(algos) * len(sig) * len(alphas) * chunks)
    subset = _subset_sizes(common["update_members"], algos)
    out = _out_dir(args.out, "mountain_car", ("mountain_car.csv", *MC_OUTPUTS))

    # One task per (algorithm, sigma2, step size), split into chunks of at most 200 runs so
    # that many runs of one setting still spread over the workers (each lane's run is one
    # kernel call, so a task's size does not change its speed). Run r keeps its stream
    # (seed, r) whichever chunk it lands in.
    from maxminq.linear.mountain_car import N_FEATURES, N_TILINGS

    lanes = -(-runs // chunks)  # the largest task's
    n_max = max(n for _, n, _ in algos)
    u_max = max(x.get("update_members", 1) for x in subset.values())
    buffer = common["agent"]["buffer_size"]
    lane = 24 * N_FEATURES * n_max + 8 * (2 * N_TILINGS + 2) * buffer
    lane += 8 * batch * (u_max + N_TILINGS * n_max) + 8 * episodes
    rows = len(algos) * len(sig) * len(alphas) * runs * episodes
    check_memory(lanes * lane + rows * ROW_BYTES, {
        "--runs": runs / MC_FULL["runs"], "--episodes": episodes / MC_FULL["episodes"],
        "--buffer-size": buffer / 100, "--batch-size": batch * u_max / 4, "--algorithms": n_max / 4,
    })  # fmt: skip

    # after the memory check: --runs 10**11 made 5 * 10**8 chunk bounds (a MemoryError)
    bounds = [round(runs * k / chunks) for k in range(chunks + 1)]
    tasks = [
        {"algorithm": a, "n": n, "sigma2": [s2], "step_sizes": [alpha],
         "runs": bounds[k + 1] - bounds[k], "run_offset": bounds[k], "episodes": episodes,
         "seed": common["seed"], "batch_size": batch, **common["agent"],
         "max_steps": max_steps, "step_size_per": args.step_size_per, **subset[a, n],
         **({"op_kwargs": kw} if kw else {})}
        for a, n, kw in algos for s2 in sig for alpha in alphas for k in range(chunks)
    ]  # fmt: skip
    remove_stale_temporaries(out / name for name in ("mountain_car.csv", *MC_OUTPUTS))
    start = time.perf_counter()
    used = min(common["workers"], len(tasks))  # the processes that run (at most one a task)
    warn_many_workers("experiment", used)  # all checked now
    frames = _run_tasks(_mc_task, tasks, common["workers"], common["progress"], "mountain car")
    df = pd.concat(frames, ignore_index=True)
    df = df.sort_values(["algorithm", "n", "sigma2", "step_size", "run", "episode"], kind="stable")
    wall = time.perf_counter() - start
    names = ", ".join(_algorithm_text(*a) for a in algos)
    print(f"mountain car: {names} simulated in {wall:.1f} s", flush=True)
    _warn_nonfinite_weights(tasks, frames)
    df = df.reset_index(drop=True)
    # A constant column, so that the CSV alone says how its step sizes are to be read
    # (categorical: one byte per row on the tens of millions of rows of a full run).
    per = pd.Categorical.from_codes(  # type: ignore[call-overload]  # a list: as an Index
        np.zeros(len(df), dtype=np.int8), [args.step_size_per]
    )
    df.insert(df.columns.get_loc("step_size") + 1, "step_size_per", per)
    write_csv_atomic(df.drop(columns="reached_goal"), out / "mountain_car.csv")
    from maxminq.analysis import classic_plots as cp

    cp.remove_stale(out, MC_OUTPUTS)
    write_settings(out, "mountain-car", {
        "runs": runs, "episodes": episodes, "sigma2": sig, "step_sizes": alphas,
        "step_size_per": args.step_size_per, "max_steps": max_steps,
        "algorithms": [_algorithm_text(*a) for a in algos], "seed": common["seed"],
        "batch_size": batch, **common["agent"],
        "update_members": common["update_members"],
    })  # fmt: skip

    shown = _plot_frame(df, algos)
    cp.save_figure(cp.mc_sensitivity_figure(shown, max_steps),
                   out / "fig3a_mountain_car_sensitivity.png")  # fmt: skip
    fig3b, note = fig3b_figure(shown, sig, max_steps)
    if note:
        print(f"mountain car: {note}", flush=True)
    cp.save_figure(fig3b, out / "fig3b_mountain_car_curve.png")
    from maxminq.analysis.style import count  # '1 algorithm', not '1 algorithms'

    # Titled, so that the appendix panels too say how the step sizes are read.
    scale = f"{count(runs, 'run')} x {count(episodes, 'episode')}"
    curves = cp.mc_learning_curve_figure(
        shown, title=f"Appendix C.2: noisy Mountain Car, {scale}", max_steps=max_steps
    )
    cp.save_figure(curves, out / "figC2_mountain_car_curves.png")
    write_csv_atomic(cp.mc_best_step_sizes(df, max_steps), out / "mountain_car_step_sizes.csv")
    agent_steps = int(df.steps.sum())
    print(f"mountain car: {count(len(algos), 'algorithm')} x {len(sig)} sigma2 x "
          f"{count(len(alphas), 'step size')} (per {args.step_size_per}) x "
          f"{count(runs, 'run')} x {count(episodes, 'episode')} = {agent_steps:,} "
          f"agent steps in {wall:.1f} s ({used} worker(s)); wrote "
          f"{out}/mountain_car.csv and figures")  # fmt: skip
    return 0


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen experiment (first: this may be a worker importing the script)."""
    _refuse_worker_startup()
    if args.experiment == "toy-mdp":
        return run_toy(args)
    return run_mountain_car(args)
