"""Run kinds: how one expanded run's settings are validated and executed.

A *run kind* connects a sweep config (``kind: toy_mdp``) to the function of another module
that does the actual experiment. The runner knows nothing about experiments: it validates
settings with :attr:`RunKind.validate` before anything starts, and a worker calls
:attr:`RunKind.execute` (a module-level function, so it pickles by reference for process
pools and Ray) which returns a :class:`RunOutput`.

Shipped kinds:

``toy_mdp``       :func:`maxminq.tabular.toy_mdp.run_toy_mdp` (Fig. 2 and appendix), table
                  ``toy_mdp``; all runs of a setting are vectorised in one call.
``mountain_car``  :func:`maxminq.linear.mountain_car.run_mountain_car` (Fig. 3), table
                  ``mountain_car``.
``deep``          :func:`maxminq.deep.train.run_training` with a
                  :class:`maxminq.deep.config.TrainConfig` (Fig. 4 and appendix); the seeds of
                  one setting are one vectorised call; tables ``episodes``, ``tests``,
                  ``metrics``, ``runs``; checkpoints in the run's work folder so a killed run
                  resumes.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from maxminq.errors import CannotResumeError, MaxminqError, closest, one_line


class SettingsError(MaxminqError):
    """A run's settings are invalid; ``key`` names the offending setting when known."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


@dataclass
class RunOutput:
    """What a run returns: its tables, and ``diverged`` when the run stopped on NaN/inf."""

    tables: dict[str, pd.DataFrame]
    status: Literal["done", "diverged"] = "done"
    note: str | None = None


@dataclass(frozen=True)
class RunKind:
    """A named run kind: settings validator and executor (both importable functions)."""

    name: str
    validate: Callable[[dict[str, Any]], dict[str, Any]]
    execute: Callable[[dict[str, Any], Path, bool], RunOutput]
    description: str = ""
    keys: tuple[str, ...] = field(default=())
    # Settings -> the settings its run id is made from, when some cannot change results
    # (None: all of them; see maxminq.experiments.config.run_id_for).
    identity: Callable[[dict[str, Any]], dict[str, Any]] | None = None


KINDS: dict[str, RunKind] = {}


def register_kind(kind: RunKind) -> RunKind:
    """Add (or replace) a run kind; returns it."""
    KINDS[kind.name] = kind
    return kind


def unknown_key(key: str, allowed: list[str], what: str = "setting") -> str:
    """The message for a misspelt ``key``: the keys ``allowed``, then the one it most likely
    meant (``eval_episode``: ``eval_episodes``), as a mistyped option or agent is told."""
    close = closest(key, allowed)
    meant = f"; did you mean {close}?" if close else ""
    return f"unknown {what}; expected one of {', '.join(allowed)}{meant}"


def _import(path: str) -> Any:
    """``"pkg.module:attr"`` (or ``attr.attr``) -> the attribute (ImportError and
    AttributeError pass through)."""
    module, _, attr = path.partition(":")
    # sys.modules first: import_module's own lookup cost 0.2 ms, four times per run
    # validated (a 3,000-run config spent 0.65 s here).
    obj: Any = sys.modules.get(module) or importlib.import_module(module)
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj


def _pydantic_error(err: ValidationError) -> SettingsError:
    """First error of a pydantic ValidationError as a :class:`SettingsError`."""
    first = err.errors()[0]
    loc = [str(p) for p in first.get("loc", ())]
    key = loc[0] if loc else None
    where = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:])
    message = first.get("msg", "invalid value")
    return SettingsError(key, f"{message}{' at ' + where.lstrip('.') if where else ''}")


def _check_extras(settings: Mapping[str, Any], known: set[str], func_path: str) -> None:
    """Settings beyond the model's must be keyword parameters of the run function.

    When the run function is not importable yet, or takes ``**params``, extra settings are
    passed through and the run function itself rejects what it does not know.
    """
    extras = [k for k in settings if k not in known]
    if not extras:
        return
    try:
        params = inspect.signature(_import(func_path)).parameters
    except (ImportError, AttributeError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    for key in extras:
        if key not in params or key == "progress":
            allowed = sorted(set(params) - {"progress"})
            raise SettingsError(key, unknown_key(key, allowed))


class _Tabular(BaseModel):
    """Settings shared by the tabular and tile-coding run kinds."""

    model_config = ConfigDict(extra="allow", strict=False)

    algorithm: str = Field(min_length=1)
    n: int = Field(ge=1)
    runs: int = Field(ge=1)
    episodes: int = Field(ge=1)
    seed: int = Field(ge=0)


class ToyMDPSettings(_Tabular):
    """One toy-MDP setting (paper Fig. 1-2): reward mean ``mu`` at state B."""

    mu: float = Field(allow_inf_nan=False)


class MountainCarSettings(_Tabular):
    """One noisy Mountain Car setting (paper Fig. 3): reward ~ N(-1, sigma2)."""

    sigma2: float = Field(ge=0, allow_inf_nan=False)
    step_size: float = Field(gt=0, allow_inf_nan=False)


TOY_MDP_FUNC = "maxminq.tabular.toy_mdp:run_toy_mdp"
TOY_MDP_DEFAULTS = "maxminq.tabular.toy_mdp:TOY_DEFAULTS"
MOUNTAIN_CAR_FUNC = "maxminq.linear.mountain_car:run_mountain_car"
MOUNTAIN_CAR_GRID_FUNC = "maxminq.linear.mountain_car:run_mountain_car_grid"
MOUNTAIN_CAR_DEFAULTS = "maxminq.linear.mountain_car:MC_DEFAULTS"
RESOLVE_ALGORITHM = "maxminq.tabular.agent:resolve_algorithm"
OPTIONAL_PARAMS = "maxminq.tabular.agent:OPTIONAL_PARAMS"
TRAIN_CONFIG = "maxminq.deep.config:TrainConfig"
TRAIN_FUNC = "maxminq.deep.train:run_training"
TRAIN_ENV_CHECK = "maxminq.deep.train:Trainer.check_env"


def _optional(path: str) -> Any:
    """The attribute at ``path``, or ``None`` while that module does not exist yet."""
    try:
        return _import(path)
    except (ImportError, AttributeError):
        return None


def _check_values(check_path: str, completed: dict[str, Any]) -> None:
    """Run the run function's own value checks (``check_settings``) on complete settings, so
    that a value only the run function knows to be bad fails before any work starts."""
    check = _optional(check_path)
    if check is None:
        return
    try:
        check(completed)
    except MaxminqError as err:
        option, _, message = str(err).partition(": ")
        key = option.removeprefix("--").replace("-", "_") if option.startswith("--") else None
        key = {"step_sizes": "step_size", "algorithms": "algorithm"}.get(key or "", key)
        # a message in a config's words when the check gives one (tabular.agent's
        # ConfigWordedError: 'op_kwargs: {sigma: 1}', not the command line's 'name:sigma=1')
        message = getattr(err, "config_message", None) or message
        message = message.rsplit(", got ", 1)[0]  # the config error adds the value itself
        raise SettingsError(key, message or str(err)) from None
    except (TypeError, ValueError) as err:  # e.g. a list where a number belongs
        raise SettingsError(None, f"invalid setting value ({err})") from None


def _canonical(completed: dict[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Checked tabular settings in one spelling per run, so that runs computing the same
    thing get the same id: a whole number given for a float setting (``gamma: 1``) is that
    float, operator parameters are floats (a G of one's own keeps whole numbers, which it may
    index with: ``{k: 1}`` and ``{k: 1.0}`` are two runs of it), and ``update_members: 1``
    and ``op_kwargs: {}`` (the defaults) are left out, as in the runs stored before those
    settings existed."""
    out = dict(completed)
    for key, default in defaults.items():
        value = out.get(key)
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            out[key] = float(value)
    if out.get("update_members") == 1:
        del out["update_members"]
    if "op_kwargs" in out:
        given = out.pop("op_kwargs") or {}
        algorithm = out.get("algorithm")  # 'module:function' (tabular.agent.is_own_operator)
        own = isinstance(algorithm, str) and ":" in algorithm  # a G of one's own: ints as given
        op_kwargs = {
            k: v if own and type(v) is int else float(v) for k, v in given.items()
        }  # fmt: skip
        if op_kwargs:
            out["op_kwargs"] = op_kwargs
    return out


def _validate_tabular(
    model: type[BaseModel], func: str, defaults_path: str, settings: dict[str, Any]
) -> dict[str, Any]:
    """Types and ranges by ``model``; algorithm/N by the tabular package's own check;
    other keys must be parameters the run function knows. The returned settings are
    complete: the run function's defaults are filled in, so a run's id and its stored
    settings say exactly what ran."""
    known = set(model.model_fields)
    defaults = _optional(defaults_path)
    optional = _optional(OPTIONAL_PARAMS) or ()
    if isinstance(defaults, Mapping):
        # Unknown keys first: a misspelt required key (``algoritm``) was reported as the
        # correct one missing, and the line never named the typo.
        for key in settings:
            if key not in known and key not in defaults and key not in optional:
                allowed = sorted(known | set(defaults) | set(optional))
                raise SettingsError(key, unknown_key(key, allowed))
    # Pydantic's lax mode turned a quoted number into one ("10" -> 10) for the model's own
    # fields only; every other numeric setting (step_size, epsilon, the deep ones) refuses
    # a string. Refused here too: one rule, and docs/sweeps.md's "a value of the wrong type is
    # caught". (Integrality stays pydantic's: 2.0 -> 2, 2.5 refused.)
    for key, info in model.model_fields.items():
        if key in settings and info.annotation in (int, float):
            problem = _type_problem(settings[key], "float")
            if problem:
                raise SettingsError(key, problem)
    try:
        parsed: Any = model.model_validate(settings)  # a model with algorithm and n
    except ValidationError as err:
        raise _pydantic_error(err) from None
    resolve = _optional(RESOLVE_ALGORITHM)
    if resolve is not None:
        try:
            resolve(parsed.algorithm, parsed.n)
        except MaxminqError as err:
            key = "n" if "estimators" in str(err) or " n = " in str(err) else "algorithm"
            worded = getattr(err, "config_message", None)  # in a config's words, if given
            raise SettingsError(key, worded or str(err).split(": ", 1)[-1]) from None
    if isinstance(defaults, Mapping):
        extras = [k for k in settings if k not in known]
        for key in extras:  # all known (checked above)
            # The default's type tells what the value must be; without this a string where
            # a number belongs fails inside the run function's check with no key to name.
            default = defaults.get(key)
            if isinstance(default, bool):
                problem = _type_problem(settings[key], "bool")
            elif isinstance(default, (int, float)):  # integrality is check_settings' job
                problem = _type_problem(settings[key], "float")
            elif isinstance(default, str):
                problem = _type_problem(settings[key], "str")
            else:
                problem = None
            if problem:
                raise SettingsError(key, problem)
        completed = {**defaults, **parsed.model_dump()}
        _check_values(func.rsplit(":", 1)[0] + ":check_settings", completed)
        return _canonical(completed, defaults)
    _check_extras(settings, known, func)
    return parsed.model_dump()


def validate_toy_mdp(settings: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete toy-MDP settings (types coerced, defaults filled in)."""
    return _validate_tabular(ToyMDPSettings, TOY_MDP_FUNC, TOY_MDP_DEFAULTS, settings)


def validate_mountain_car(settings: dict[str, Any]) -> dict[str, Any]:
    """Validate and complete Mountain Car settings (types coerced, defaults filled in)."""
    return _validate_tabular(
        MountainCarSettings, MOUNTAIN_CAR_FUNC, MOUNTAIN_CAR_DEFAULTS, settings
    )


def execute_toy_mdp(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Run one toy-MDP setting (all its runs in one vectorised call)."""
    frame = _import(TOY_MDP_FUNC)(**settings, progress=progress)
    return RunOutput({"toy_mdp": frame}, note=nonfinite_note(frame, settings))


def execute_mountain_car(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Run one Mountain Car setting (all its runs in one vectorised call)."""
    # The grid of this one setting is run_mountain_car's table (which calls it so), and gives
    # the final weights: runs whose weights went NaN or inf get a note (their steps stay
    # finite, at the step cap, so the table cannot tell them).
    grid = dict(settings)
    sigma2, step_size = grid.pop("sigma2"), grid.pop("step_size")
    frame, weights, _ = _import(MOUNTAIN_CAR_GRID_FUNC)(
        **grid, sigma2=[sigma2], step_sizes=[step_size], progress=progress, return_weights=True
    )
    return RunOutput({"mountain_car": frame}, note=mountain_car_note(weights, settings))


def mountain_car_note(weights: Any, settings: Mapping[str, Any]) -> str | None:
    """The registry note of a Mountain Car run some of whose runs' weights went NaN or inf
    (final ``weights``, one lane per run): ``q_learning, n 1, sigma2 50, step_size 2: 3 of 3
    runs went non-finite (NaN or inf weights) by episode 5``; ``None`` when all are finite.
    The episode each went is not recorded (the table holds steps only; theirs at the cap)."""
    import numpy as np

    w = np.asarray(weights, dtype=float)
    bad = ~np.isfinite(w.reshape(len(w), -1)).all(axis=1)
    if not bad.any():
        return None
    runs = len(w)
    episodes = settings.get("episodes")
    when = f" by episode {episodes:,}" if isinstance(episodes, int) else ""
    text = f"{int(bad.sum())} of {runs} run{'s' if runs != 1 else ''} went non-finite"
    return _named(settings, ("n", "sigma2", "step_size")) + f": {text} (NaN or inf weights){when}"


#: The count in a classic run's note (:func:`mountain_car_note`, :func:`nonfinite_text`).
_NONFINITE_COUNT = re.compile(r"(\d[\d,]*) of (\d[\d,]*) runs? went non-finite")


def nonfinite_count(note: object) -> tuple[str, str] | None:
    """``('50', '50')`` from a run's registry note ``...: 50 of 50 runs went non-finite
    ...`` (how many of how many, as written); None for any other note (or none). The
    reader of the notes this module writes, so that their wording lives here only."""
    found = _NONFINITE_COUNT.search(note) if isinstance(note, str) else None
    return (found[1], found[2]) if found else None


#: The toy MDP's value columns; a run with NaN or inf in any of them went non-finite.
TOY_VALUES = ("p_left", "distance", "q_a_left")


def nonfinite_text(frame: pd.DataFrame, values: Sequence[str] = TOY_VALUES) -> str | None:
    """``'19 of 20 runs went non-finite (NaN or inf) from episode 3'`` when some runs
    (``run``) of a classic frame of one setting went non-finite (NaN or inf in any of
    ``values``: too large a step size, a G of one's own that diverges), from the episode the
    first of them did (counted by ``analysis.tables.nonfinite_runs``, as the figures' and
    the report's notes); ``None`` when every value is finite (or the frame has none of
    ``values``)."""
    import numpy as np

    from maxminq.analysis.style import count
    from maxminq.analysis.tables import nonfinite_runs

    present = [v for v in values if v in frame.columns]
    if not present or frame.empty or "run" not in frame.columns:
        return None
    finite = np.isfinite(frame[present].to_numpy(dtype=float)).all(axis=1)
    marked = frame.assign(_setting=0, _finite=np.where(finite, 0.0, np.nan))
    table = nonfinite_runs(marked, ["_setting"], "_finite")
    if table.empty:
        return None
    r = table.iloc[0]
    return (
        f"{int(r['nonfinite'])} of {count(int(r['runs']), 'run')} went non-finite (NaN or inf) "
        f"from episode {int(r['first']):,}"
    )


def nonfinite_note(frame: pd.DataFrame, settings: Mapping[str, Any]) -> str | None:
    """The registry note of a toy-MDP run some of whose runs went non-finite (one line:
    ``q_learning, n 1, mu 0.1, step_size 3: 19 of 20 runs went non-finite (NaN or inf)
    from episode 3``), else ``None``. The run stays ``done`` (finished, not run again; its
    tables as stored); a ``done`` run's note is this one only (deep runs' notes go with
    ``diverged``): the sweep's summary and ``maxminq status`` name the run by it."""
    text = nonfinite_text(frame)
    if text is None:
        return None
    return f"{_named(settings, ('n', 'mu', 'step_size'))}: {text}"


def _named(settings: Mapping[str, Any], keys: Sequence[str]) -> str:
    """A classic run's setting in a note: ``q_learning, n 1, mu 0.1, step_size 3``."""
    from maxminq.analysis.style import number_text  # 3, not 3.0: as a config writes it

    named = [str(settings.get("algorithm", "?"))]
    shown = {k: settings[k] for k in keys if k in settings}
    named += [
        f"{k} {number_text(v) if isinstance(v, int | float) else v}" for k, v in shown.items()
    ]
    return ", ".join(named)


def _coerce(value: Any, annotation: str) -> Any:
    """YAML numbers to the dataclass field's type (``1.5e6`` -> int for an int field)."""
    if isinstance(value, bool) or value is None:
        return value
    if annotation.startswith("int") and isinstance(value, float) and value.is_integer():
        return int(value)
    if annotation.startswith("float") and isinstance(value, int):
        return float(value)
    return value


_OPTION = re.compile(r"--([a-z][a-z0-9-]*)")
_OPTION_KEYS = {"env": "env_id"}  # command-line option -> setting key, where they differ


def option_key(option: str) -> str:
    """The setting key of a command-line option (without its dashes): ``max-episode-steps``
    -> ``max_episode_steps``, ``env`` -> ``env_id``."""
    return _OPTION_KEYS.get(option, option.replace("-", "_"))


def options_to_keys(message: str) -> str:
    """``message`` with every ``--option`` replaced by its setting key (:func:`option_key`)."""
    return _OPTION.sub(lambda m: option_key(m.group(1)), message)


_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "a mapping",
}
_IS_TYPE: dict[str, Callable[[Any], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
}


def _type_problem(value: Any, annotation: str) -> str | None:
    """'expected ...' when ``value`` cannot be of the dataclass field type ``annotation``
    (its text, e.g. ``"int | None"``), else None. Checked before the value reaches the
    training config, whose comparisons would otherwise fail with a TypeError that names no
    setting (``'<' not supported between 'str' and 'int'``)."""
    parts = [p.strip().split("[", 1)[0] for p in annotation.split("|")]
    if value is None and "None" in parts:
        return None
    known = [p for p in parts if p in _IS_TYPE]
    if not known or any(_IS_TYPE[p](value) for p in known):
        return None
    return "expected " + " or ".join(_TYPE_WORDS[p] for p in known)


def validate_deep(settings: dict[str, Any]) -> dict[str, Any]:
    """Validate deep settings with the deep module's own ``TrainConfig.resolve()``.

    Returns the *resolved* configuration (every default filled in from the environment
    registry), so the run id and the stored settings name exactly what is trained.
    """
    train_config = _optional(TRAIN_CONFIG)
    if train_config is None:
        raise SettingsError(None, "deep agents unavailable (maxminq.deep.config not importable)")
    fields = {f.name: str(f.type) for f in dataclasses.fields(train_config)}
    for key in settings:
        if key not in fields:
            raise SettingsError(key, unknown_key(key, list(fields)))
    kwargs = {k: _coerce(v, fields[k]) for k, v in settings.items()}
    for key, value in kwargs.items():
        problem = _type_problem(value, fields[key])
        if problem:
            raise SettingsError(key, problem)
    if not isinstance(kwargs.get("seeds", [0]), list) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in kwargs.get("seeds", [0])
    ):
        raise SettingsError("seeds", "expected a list of integers")
    for f in dataclasses.fields(train_config):
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if no_default and f.name not in kwargs:
            raise SettingsError(f.name, "required setting missing")
    try:
        resolved = train_config(**kwargs).resolve()
        _check_environment(resolved)
    except TypeError as err:
        raise SettingsError(None, str(err)) from None
    except (ValueError, MaxminqError) as err:
        message = one_line(err)
        match = _OPTION.search(message)
        name = option_key(match.group(1)) if match else None
        message = message.split(": ", 1)[-1] if message.startswith("--") else message
        raise SettingsError(name if name in fields else None, message) from None
    return json.loads(json.dumps(resolved.to_dict()))


_CHECKED_ENVIRONMENTS: set[str] = set()


def _check_environment(config: Any) -> None:
    """Build the environment of a resolved deep config and check that it suits the run
    (``Trainer.check_env``: spaces, observations, the env keywords; generalized-dqn's G on
    torch zeros), once per distinct (env, keywords, network, cap, and G with what it is tried
    on) in a process: a sweep then fails before it starts, not run by run."""
    checked = [config.env_id, config.env_kwargs, config.network, config.max_episode_steps]
    if getattr(config, "operator", None) is not None:
        checked += [config.operator, config.op_kwargs, config.n, config.batch_size]
    key = json.dumps(checked, sort_keys=True)
    if key not in _CHECKED_ENVIRONMENTS:
        _import(TRAIN_ENV_CHECK)(config)
        _CHECKED_ENVIRONMENTS.add(key)


def _diverged(tables: Mapping[str, pd.DataFrame]) -> str | None:
    """A note when the deep ``runs`` table reports diverged seeds, else ``None``: one line,
    ``diverged seeds: [1]``, with each seed's cause where the table gives one (its
    ``diverged_cause``: ``diverged seeds: [1] (seed 1: G my_ops:softmin_q with {'beta': 20}
    gave inf on ...)``; older runs have no such column)."""
    runs = tables.get("runs")
    if runs is None or runs.empty:
        return None
    if "status" in runs.columns:
        bad = runs[runs["status"].astype(str) == "diverged"]
    elif "diverged" in runs.columns:
        bad = runs[runs["diverged"].astype(bool)]
    else:
        return None
    if bad.empty:
        return None
    who = bad["seed"].tolist() if "seed" in bad.columns else len(bad)
    causes = []
    if "diverged_cause" in bad.columns:
        seeds = bad["seed"].tolist() if "seed" in bad.columns else [None] * len(bad)
        for seed, cause in zip(seeds, bad["diverged_cause"].tolist(), strict=True):
            text = " ".join(cause.split()) if isinstance(cause, str) else ""  # one line
            if text:
                causes.append(text if seed is None else f"seed {seed}: {text}")
    return f"diverged seeds: {who}" + (f" ({'; '.join(causes)})" if causes else "")


def execute_deep(settings: dict[str, Any], work_dir: Path, progress: bool) -> RunOutput:
    """Train one deep setting (all its seeds in one call), resuming from ``work_dir``.

    A checkpoint there that cannot be continued fails the run on every resume; the error
    says to delete ``work_dir`` (a sweep has no ``--overwrite``)."""
    config = _import(TRAIN_CONFIG)(**settings)
    try:
        tables = _import(TRAIN_FUNC)(config, Path(work_dir), resume=True, progress=progress)
    except CannotResumeError as err:
        remedy = f"delete {work_dir} and run the sweep again to train this run from the start"
        raise CannotResumeError(err.reason, remedy) from None
    note = _diverged(tables)
    return RunOutput(dict(tables), "diverged" if note else "done", note)


register_kind(
    RunKind(
        "toy_mdp",
        validate_toy_mdp,
        execute_toy_mdp,
        "tabular toy MDP (Fig. 1-2)",
        tuple(ToyMDPSettings.model_fields),
    )
)
register_kind(
    RunKind(
        "mountain_car",
        validate_mountain_car,
        execute_mountain_car,
        "tile-coded noisy Mountain Car (Fig. 3)",
        tuple(MountainCarSettings.model_fields),
    )
)
# Deep settings that cannot change a run's results: how often it writes checkpoints (a
# resumed run gives the same tables, bitwise) and whether it also logs to TensorBoard.
# ``run_training`` leaves them out when it checks that a checkpoint suits a run
# (``TrainConfig.result_key``); a sweep leaves them out of the run id the same way.
RESULT_NEUTRAL_DEEP = ("checkpoint_every", "tensorboard")


def deep_identity(settings: dict[str, Any]) -> dict[str, Any]:
    """Validated deep settings as their run id sees them: ``checkpoint_every`` and
    ``tensorboard`` at their defaults (max(10,000, steps / 20) and false, as
    ``TrainConfig.resolve`` fills them in), whatever they are. A run at those defaults keeps
    the id it always had (its settings hash as before); one at other values gets the id of
    the same run at the defaults, so changing them retrains nothing."""
    from maxminq.deep.config import default_checkpoint_every

    out = dict(settings)
    steps = out.get("steps")
    if "checkpoint_every" in out and isinstance(steps, int) and not isinstance(steps, bool):
        out["checkpoint_every"] = default_checkpoint_every(steps)
    if "tensorboard" in out:
        out["tensorboard"] = False
    return out


register_kind(
    RunKind("deep", validate_deep, execute_deep, "DQN family (Fig. 4)", identity=deep_identity)
)
