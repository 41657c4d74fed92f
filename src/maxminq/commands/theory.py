"""``maxminq theory``: the Theorem 1 / Corollary 1 figure pair and the numbers behind it.

Writes to ``--out``:

* ``bias_heatmap.png``   E[Z_MN] over M = 1..m_max, N = 1..n_max (gamma * tau = 1);
* ``variance_ratio.png`` Corollary 1's Var[Q^min] / Var[Q] against N, with Monte Carlo;
* ``bias.csv``, ``variance.csv`` the tidy tables both figures are drawn from;
* ``operator_bias.png``, ``operator_bias.csv`` Theorem 1's experiment for every operator of
  ``maxminq.operators`` (bias and spread of the target against N, M = ``--operator-m``, beside
  the exact mean for uniform errors), with each ``--operator``'s G (one's own
  ``module:function``, at one N ``module:function:N``, or a library operator with other
  ``--op-kwargs``) added beside them if given;
* ``bias.csv``'s simulated cells have no figure here: ``theory_plots.plot_bias_against_n``
  draws them against Theorem 1.

The closed forms assume uniform errors; ``--noise normal`` simulates normal errors of the
same variance instead, so the Monte-Carlo columns (and points) show how far the theorem
carries beyond its assumption (the bias: closely; Corollary 1's variance ratio: not at all).
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from maxminq.errors import UsageError, ascii_int, is_digits

#: The files written to --out, in the order written (the report reads the first two).
OUTPUTS = (
    "bias.csv",
    "variance.csv",
    "bias_heatmap.png",
    "variance_ratio.png",
    "operator_bias.csv",
    "operator_bias.png",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``maxminq theory``."""
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="output folder, created if needed: bias.csv, variance.csv, operator_bias.csv and "
        "their figures (bias_heatmap.png, variance_ratio.png, operator_bias.png) replace an "
        "earlier run's there; other files stay",
    )
    parser.add_argument(
        "--m-max", type=int, default=100, help="largest M (actions), 1..10000; default 100"
    )
    parser.add_argument(
        "--n-max", type=int, default=20, help="largest N (estimators), 1..1000; default 20"
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=2000,
        help="Monte-Carlo samples per (M, N) cell of the bias table and per row of the "
        "every-operator table (operator_bias.csv), 3 or more; default 2000",
    )
    parser.add_argument(
        "--variance-samples",
        type=int,
        default=200_000,
        help="Monte-Carlo samples per N for the variance ratio, 3 or more; default 200000",
    )
    parser.add_argument(
        "--mc-m",
        type=str,
        default=None,
        help="comma-separated M values to simulate for the bias table "
        "(default: 1, 2, 4, ..., up to --m-max, and --m-max)",
    )
    parser.add_argument(
        "--noise",
        default="uniform",
        metavar="NOISE",
        help="error law of the Monte-Carlo columns: uniform (the theorem's) or normal with "
        "the same variance; default uniform",
    )
    parser.add_argument(
        "--operator-m",
        type=int,
        default=8,
        help="actions M of the every-operator figure (operator_bias.png), 1..10000; default 8 "
        "(the toy MDP's state B)",
    )
    parser.add_argument(
        "--operator",
        action="append",
        default=None,
        help="an operator to add to the every-operator figure and table (repeat it for more, "
        "a soft-min at two temperatures, a weighted double beside it): a library operator "
        "with other parameters (weighted_double_q with --op-kwargs '{\"c\": 10}') or "
        "module:function for a G of your own, e.g. my_ops:median_q (PYTHONPATH=. for a module "
        "of the current folder), simulated for N = 1..--n-max beside Maxmin's curve "
        "(its rows in operator_bias.csv: my_ops:median_q:w=0.7), or at one N alone, "
        "my_ops:my_double:2 for a G of two tables; default none",
    )
    parser.add_argument(
        "--op-kwargs",
        action="append",
        default=None,
        help="JSON keyword parameters of --operator, e.g. '{\"beta\": 20}'; with several "
        "--operator, one each in their order ('{}' for none); default none",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed; default 0")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _mc_m(text: str | None, m_max: int) -> list[int]:
    if text is None:
        powers = [2**k for k in range(m_max.bit_length()) if 2**k <= m_max]
        return sorted({*powers, m_max})
    try:
        values = [ascii_int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--mc-m: expected comma-separated integers, got {text!r}") from None
    if not values or any(not 1 <= v <= m_max for v in values):
        raise UsageError(f"--mc-m: expected integers in 1..--m-max ({m_max}), got {text!r}")
    return sorted(set(values))


def added_operator(
    reference: str | None, op_kwargs: str | None, m: int, n_max: int
) -> tuple[str, Any, dict[str, Any], int | None] | None:
    """The operator ``--operator`` adds to ``operator_bias_table``, ``(reference, g, params,
    members)`` (``g``: a library name, or the G function of one's own; ``members``: the one
    N a G of one's own runs at, given as ``module:function:N``, as a weighted double of
    one's own takes two tables, else None), or None when none is given or it
    is a library operator already drawn with these parameters. Imported by
    ``operators.load_operator``, its keywords checked (``operators.check_keywords``, a library
    operator's by ``operators.operator_params``) and tried on NumPy zeros of every N it is
    run with, before any work: UsageError naming ``--operator`` or ``--op-kwargs``."""
    from maxminq import operators
    from maxminq.cli import json_object

    params = json_object(op_kwargs, "--op-kwargs")
    if reference is None:
        if params is not None:
            raise UsageError("--op-kwargs: goes with --operator (the operator it is for)")
        return None
    params = dict(params or {})
    given = reference
    head, _, tail = reference.rpartition(":")
    members = None
    if ":" in head and is_digits(tail):  # module:function:N, one's own at one N
        reference, members = head, int(tail)
        if not 1 <= members <= 1000:
            raise UsageError(f"--operator: N after {head}: must be in 1..1000, got {members}")
        head, _, tail = reference.rpartition(":")
    if head and ("=" in tail or is_digits(tail)):  # the --algorithms spelling
        if is_digits(tail):
            raise _no_n_here(reference, head)
        pairs = dict(item.partition("=")[0::2] for item in tail.split(","))
        shown = ", ".join(f'"{k}": {v}' for k, v in pairs.items())
        raise UsageError(
            f"--operator: parameters go in --op-kwargs: --operator {head} --op-kwargs '{{{shown}}}'"
        )
    try:
        g = operators.load_operator(reference)
    except ValueError as err:
        raise UsageError(f"--operator: {err}") from None
    library = operators.operator_reference(g)
    if library in operators.OPERATORS and members is not None:  # maxminq.operators:maxmin:4
        raise _no_n_here(given, library)
    if library in operators.OPERATORS:
        from maxminq.analysis.theory_plots import OPERATOR_SETTINGS

        takes = operators.operator_params(library)
        unknown = sorted(set(params) - set(takes))
        if unknown:
            what = f"takes {', '.join(takes)}" if takes else "takes no parameters"
            raise UsageError(f"--op-kwargs: {library} {what}, not {', '.join(unknown)}")
        for key, value in params.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"--op-kwargs: {library} {key} must be a number, got {value!r}")
        params = {k: float(v) for k, v in params.items()}
        if library not in OPERATOR_SETTINGS:  # averaged: independent snapshots are ensemble's
            raise UsageError(
                f"--operator: {library} is not drawn on its own: with independent errors its K "
                "snapshots act as Ensemble Q's N members (the rows 'ensemble' of operator_bias.csv)"
            )
        members, drawn = OPERATOR_SETTINGS[library]
        try:  # the operator's own checks (c > 0, sigma given and >= 0)
            operators.bootstrap(library, np.zeros((1, members or 1, m)), **params)
        except (TypeError, ValueError) as err:
            raise UsageError(f"--op-kwargs: {str(err).splitlines()[0]}") from None
        defaults = {  # c = 1 unsaid is c = 1: drawn already, not a second row of that name
            k: float(v.default)
            for k, v in list(inspect.signature(operators.OPERATORS[library]).parameters.items())[1:]
            if isinstance(v.default, int | float) and not isinstance(v.default, bool)
        }
        if {**defaults, **params} == {**defaults, **drawn}:  # drawn already, with these
            return None
        return library, library, params, None
    try:
        operators.check_keywords(g, reference, params)
    except TypeError as err:
        raise UsageError(f"--op-kwargs: {err}") from None
    # every N of the table, as operator_bias calls it (one sample of M actions), one at a
    # time: the message names the N it failed at (it said N = 1 whatever N G failed at)
    for n in range(1, n_max + 1) if members is None else [members]:
        try:
            operators.own_operator(g, [(1, n, m)], reference, **params)
        except Exception as err:  # G's own failure too: the user's code, in one line here
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            own_failure = not text.startswith(f"operator {reference!r}")
            if own_failure:
                shape = f"(1, {n}, {m})"
                text = f"operator {reference!r} failed on NumPy zeros of shape {shape}: {text}"
            if params and _runs_on_zeros(g, (1, n, m), reference):
                # G runs there with its own defaults: the values given are what fails (this
                # named --operator for '{"beta": "x"}')
                raise UsageError(
                    f"--op-kwargs: {params} fail where the operator's defaults run: {text}"
                ) from None
            if own_failure and members is None:  # a G of two tables fails at N = 1
                text += f" (a G of one member count runs at it alone: {reference}:N)"
            raise UsageError(f"--operator: {text}") from None
    return reference, g, params, members


def added_operators(
    references: list[str] | None, kwargs: list[str] | None, m: int, n_max: int
) -> tuple[list[tuple[str, Any, dict[str, Any], int | None]], list[str]]:
    """Every ``--operator`` with its ``--op-kwargs`` (the k-th with the k-th; none, or one
    each), each checked by :func:`added_operator`: the operators to add, and the references
    of those drawn already (a library operator at the figure's own setting). UsageError
    for counts that do not pair, or one setting given twice (its rows would be one)."""
    from maxminq.analysis.theory_plots import operator_row_name

    references, kwargs = references or [], kwargs or []
    if kwargs and not references:
        raise UsageError("--op-kwargs: goes with --operator (the operator it is for)")
    if kwargs and len(kwargs) != len(references):
        raise UsageError(
            f"--op-kwargs: give one for each --operator, in their order ('{{}}' for one "
            f"without parameters): {len(references)} --operator, {len(kwargs)} --op-kwargs"
        )
    given: list[str | None] = list(kwargs) if kwargs else [None] * len(references)
    pairs = zip(references, given, strict=True)
    added, drawn = [], []
    names: dict[str, str] = {}  # each row name and the --operator that gave it
    for reference, op_kwargs in pairs:
        one = added_operator(reference, op_kwargs, m, n_max)
        if one is None:
            drawn.append(reference)
            continue
        name = operator_row_name(one[0], one[2])
        if name in names and names[name] != reference:  # 'my_ops:g' and 'my_ops:g:3': it
            # said 'my_ops:g is given twice', which the user had not typed
            raise UsageError(
                f"--operator: {names[name]} and {reference} would write their rows under "
                f"one name, {name}, in operator_bias.csv (one set in the figure); give one"
            )
        if name in names:
            raise UsageError(f"--operator: {name} is given twice (its rows would be one set)")
        names[name] = reference
        added.append(one)
    return added, drawn


def _no_n_here(given: str, library: str) -> UsageError:
    """The refusal of an N given with a library operator (``maxmin:4``): its figure runs
    Maxmin over N = 1..--n-max, Double Q at its own 2."""
    from maxminq.analysis.theory_plots import OPERATOR_SETTINGS

    fixed = OPERATOR_SETTINGS.get(library, (None, {}))[0]
    runs = "its curve runs over N = 1..--n-max" if fixed is None else f"it runs at N = {fixed}"
    return UsageError(f"--operator: takes no N here ({given!r}): {runs}; give --operator {library}")


def _runs_on_zeros(g: Any, shape: tuple[int, int, int], reference: str) -> bool:
    """Whether G, called with its own defaults, passes ``operators.own_operator``'s trial on
    NumPy zeros of ``shape``."""
    from maxminq import operators

    try:
        operators.own_operator(g, [shape], reference)
    except Exception:  # G's own failure, whatever it is: it does not run there
        return False
    return True


def _validate(args: argparse.Namespace) -> list[int]:
    ranges = (
        ("--m-max", args.m_max, 1, 10_000),
        ("--n-max", args.n_max, 1, 1_000),
        # 3: of 2 samples a variance has no standard error (the fourth-moment one is
        # always 0; theory reports NaN), and the tables would show none; numpy's sample
        # counts are int64: a traceback above 2**63 - 1.
        ("--samples", args.samples, 3, 2**63 - 1),
        ("--variance-samples", args.variance_samples, 3, 2**63 - 1),
        ("--operator-m", args.operator_m, 1, 10_000),
    )
    for option, value, low, high in ranges:
        if not low <= value <= high:
            raise UsageError(f"{option}: expected an integer in {low}..{high}, got {value}")
    from maxminq.theory import NOISES  # here: scipy would slow every option error by 0.4 s

    if args.noise not in NOISES:
        raise UsageError(f"--noise: expected {' or '.join(NOISES)}, got {args.noise!r}")
    if args.seed < 0:
        raise UsageError(f"--seed: expected a whole number >= 0, got {args.seed}")
    mc_m = _mc_m(args.mc_m, args.m_max)
    args.added, args.drawn = added_operators(
        args.operator, args.op_kwargs, args.operator_m, args.n_max
    )
    from maxminq.cli import check_out_folder

    check_out_folder(args.out, "--out", writes="theory")
    if (args.out / "results.sqlite").is_file() and (args.out / "theory").is_dir():
        # 'maxminq report OUT' reads OUT/theory (reproduce's), not tables written beside it
        raise UsageError(
            f"--out: {args.out} is a results folder whose theory is in {args.out / 'theory'}, "
            f"which 'maxminq report' reads; give --out {args.out / 'theory'}"
        )
    for name in OUTPUTS:  # else found only once the Monte Carlo is done, and half written
        if (args.out / name).is_dir():
            raise UsageError(
                f"--out: {name} in {args.out} is a folder, where theory writes that file"
            )
    return mc_m


def simulated_error_parts(
    mc_m: list[int],
    n_max: int,
    samples: int,
    variance_samples: int,
    operator_m: int = 0,
    added: Sequence[tuple[str, int | None]] = (),
) -> dict[str, int]:
    """How many errors each Monte Carlo draws: ``"bias"``, ``samples`` (N, M) tensors per
    simulated cell of the bias table; ``"variance"``, per N of the variance table N errors
    plus one single-estimator error per sample; ``"operators"``, ``samples`` (N,
    operator_m) tensors per row of the operator table (with the rows of ``added``, each the
    library name or ``'module:function'`` of an ``--operator`` and the one N it runs at, or
    None)."""
    from maxminq.analysis.theory_plots import OPERATOR_SETTINGS

    sum_n = n_max * (n_max + 1) // 2
    members = sum(sum_n if k is None else k for k, _ in OPERATOR_SETTINGS.values())
    for name, fixed in added:
        members += fixed or OPERATOR_SETTINGS.get(name, (None, {}))[0] or sum_n
    return {
        "bias": samples * sum(mc_m) * sum_n,
        "variance": variance_samples * (sum_n + n_max),
        "operators": samples * operator_m * members,
    }


#: Errors drawn per second, roughly (one core here: 0.8-2 x 10^8 by N and M).
_ERRORS_PER_SECOND = 1e8
#: Rows of bias.csv (one per M and N) computed and written per second, roughly (one core
#: here: 10^7 rows, --m-max 10000 --n-max 1000, took 3.3 min; the CSV is 0.7 GB).
_ROWS_PER_SECOND = 5e4
_BYTES_PER_ROW = 72
#: The options that shorten each Monte Carlo of simulated_error_parts (besides --n-max).
_PART_OPTIONS = {
    "bias": ["--mc-m", "--samples"],
    "variance": ["--variance-samples"],
    "operators": ["--operator-m", "--samples"],
}


def _duration(seconds: float) -> str:
    """``seconds`` as a rough duration a reader takes in at once: minutes up to two hours,
    then hours up to two days, then days (5,060 min reads as 84 h)."""
    for unit, size in (("days", 86400.0), ("h", 3600.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds / 60:,.0f} min"


def time_note(parts: dict[str, int], rows: int) -> str | None:
    """The note printed before a long silent wait (over a minute, roughly): what makes it
    long (the Monte Carlo's errors by part, :func:`simulated_error_parts`; bias.csv's
    ``rows``) and the options of the parts that do; None for a short run."""
    total = sum(parts.values())
    seconds = total / _ERRORS_PER_SECOND + rows / _ROWS_PER_SECOND
    if seconds <= 60:
        return None
    texts, options = [], []
    if total > 10 * _ERRORS_PER_SECOND:  # the Monte Carlo alone takes over 10 s
        texts.append(f"the Monte Carlo draws {total:.2g} errors")
        for part, count in parts.items():
            # a part of over 10 s and a tenth of the wait: its options shorten it
            if count > 10 * _ERRORS_PER_SECOND and count > 0.1 * seconds * _ERRORS_PER_SECOND:
                options += [o for o in _PART_OPTIONS[part] if o not in options]
    if rows > 10 * _ROWS_PER_SECOND:
        size = rows * _BYTES_PER_ROW / 1e9
        texts.append(f"bias.csv gets {rows:,} rows (M x N; about {size:.1f} GB)")
        options.append("--m-max")
    options.append("--n-max")
    return (
        f"{' and '.join(texts)}, roughly {_duration(seconds)} on one core; "
        f"{', '.join(options[:-1])} or {options[-1]} shorten it"
    )


def remove_empty_folders(folders: list[Path]) -> None:
    """Remove each of ``folders`` (deepest first) while it is empty; stop at the first that
    is not (a file was written, or someone else put one there) or cannot be removed."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _raised_by(err: BaseException, g: Any) -> bool:
    """Whether ``err`` is G's: raised in G's module, or ``theory.operator_bias``'s refusal of
    a value G gave (``operator 'name' gave inf ...``), not the library's own (a bug there
    keeps its traceback)."""
    if str(err).startswith(f"operator {getattr(g, '__name__', None)!r} gave "):
        return True
    from maxminq.operators import raised_in_module

    return raised_in_module(err, getattr(g, "__module__", None))


def _in_traceback(err: BaseException, g: Any) -> bool:
    """Whether G's own code (its ``__code__``) is among the frames ``err`` passed through."""
    code, tb = getattr(g, "__code__", None), err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return True
        tb = tb.tb_next
    return False


def run(args: argparse.Namespace) -> int:
    """Compute the tables, draw the figures, write all six files atomically."""
    mc_m = _validate(args)
    added = args.added  # (reference, g, params, members) of each --operator to add
    for reference in args.drawn:  # a library operator's own setting
        print(
            f"maxminq theory: note: --operator {reference} with these parameters is drawn "
            "already (its rows of operator_bias.csv); nothing is added",
            file=sys.stderr,
            flush=True,
        )
    errors = simulated_error_parts(
        mc_m, args.n_max, args.samples, args.variance_samples, args.operator_m,
        [(one[0], one[3]) for one in added],
    )  # fmt: skip
    note = time_note(errors, args.m_max * args.n_max)
    if note is not None:  # say so before a long silent wait
        print(f"maxminq theory: note: {note}", file=sys.stderr, flush=True)
    # Imported here so that option errors are reported before the heavier imports.
    from maxminq._progress import in_notebook, progress_bar, writes_to_terminal
    from maxminq.analysis.theory_plots import (
        bias_table,
        operator_bias_table,
        plot_bias_heatmap,
        plot_operator_bias,
        plot_variance_ratio,
        variance_table,
    )
    from maxminq.experiments.store import atomic_write  # creates --out
    from maxminq.operators import OPERATORS as OPERATOR_NAMES

    bias_seed, variance_seed = np.random.SeedSequence(args.seed).spawn(2)
    # One bar over the three tables' Monte Carlo, in errors drawn: the bias table's alone
    # reached 100% with most of the wait (the variance table's, at the defaults) to come.
    bar = progress_bar(
        total=sum(errors.values()),
        desc="Monte Carlo",
        unit=" errors",  # the rate reads "79.5k errors/s", not "79.5kerror/s"
        unit_scale=True,
        # in a terminal or a notebook (maxminq.cli.main there: its stderr is no terminal,
        # and the notebook showed no bar through the wait), not into a log
        enabled=not args.no_progress and (writes_to_terminal() or in_notebook()),
    )
    with bar:
        bias = bias_table(
            args.m_max, args.n_max, mc_m, args.samples, bias_seed, noise=args.noise, bar=bar
        )
        variance_rng = np.random.default_rng(variance_seed)
        variance = variance_table(
            args.n_max, args.variance_samples, variance_rng, noise=args.noise, bar=bar
        )
        # The third child of --seed (spawn(2) above made the first two): the other tables
        # keep their numbers.
        operator_seed = np.random.SeedSequence(args.seed, spawn_key=(2,))
        try:
            operators = operator_bias_table(
                args.operator_m, args.n_max, args.samples, operator_seed, noise=args.noise,
                bar=bar, extra=added,
            )  # fmt: skip
        except Exception as err:  # an --operator's G failing on random values: one line
            raisers = [one for one in added
                       if one[0] not in OPERATOR_NAMES and _raised_by(err, one[1])]  # fmt: skip
            if not raisers:  # the library's own: a bug, with its traceback
                raise
            # two Gs of one module: the one whose code raised it (its frame in the traceback)
            failed = ([one for one in raisers if _in_traceback(err, one[1])] or raisers)[0][0]
            text = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise UsageError(
                f"--operator: operator {failed!r} failed in the Monte Carlo "
                f"({type(err).__name__}: {text}); nothing was written"
            ) from None

    outputs = {
        "bias.csv": lambda p: bias.to_csv(p, index=False, float_format="%.10g"),
        "variance.csv": lambda p: variance.to_csv(p, index=False, float_format="%.10g"),
        "bias_heatmap.png": lambda p: plot_bias_heatmap(bias).savefig(p, format="png", dpi=150),
        "variance_ratio.png": lambda p: plot_variance_ratio(variance).savefig(
            p, format="png", dpi=150
        ),
        "operator_bias.csv": lambda p: operators.to_csv(p, index=False, float_format="%.10g"),
        "operator_bias.png": lambda p: plot_operator_bias(operators).savefig(
            p, format="png", dpi=150
        ),
    }
    from maxminq.analysis.classic_plots import remove_stale
    from maxminq.experiments.store import remove_stale_temporaries

    # A run killed while writing (kill -9) left its hidden .NAME.XXXXXXXX.tmp: these
    # outputs' only, not the user's other files in --out.
    remove_stale_temporaries(args.out / name for name in outputs)
    assert tuple(outputs) == OUTPUTS  # the names checked before the work
    # The folders the first write creates (deepest first): removed again if the command is
    # stopped (Ctrl-C, SIGTERM, a full disk) before a file is in place; the user's stay.
    new_folders = [p for p in (args.out, *args.out.parents) if not p.exists()]
    try:
        for k, (name, write) in enumerate(outputs.items()):
            atomic_write(args.out / name, write)
            if k == 0:  # the earlier run's others are of another setting now
                remove_stale(args.out, list(outputs)[1:])
    except BaseException:
        # A signal can land between a temporary's creation and atomic_write's cleanup.
        remove_stale_temporaries(args.out / name for name in outputs)
        remove_empty_folders(new_folders)
        raise
    # Printed once all are written: a reader that leaves early ('| head -1') ends the command
    # at its next print (BrokenPipeError), which must not leave half the outputs written.
    for name in outputs:
        print(args.out / name)
    from maxminq.theory import choose_n

    chosen = bias.loc[bias["chosen_n"], ["M", "N"]]
    sample = chosen[chosen["M"].isin([1, 2, 4, 8, 16, 32, 64, 100, args.m_max])]
    shown = []
    for m, n in sample.itertuples(index=False):
        # The table's N stops at --n-max; say so where the least biased N lies beyond it.
        best = choose_n(int(m))
        shown.append(f"M={m}: N={n}" + (f" (--n-max; choose_n gives {best})" if best > n else ""))
    print("choose_n: " + ", ".join(shown))
    return 0
