"""``TrainConfig``: every option of a deep training run, with registry defaults.

A field left as ``None`` means "the paper's default for this environment", taken from
``maxminq.envs.registry.get_env_defaults`` by ``TrainConfig.resolve()``. Validation
errors are ``maxminq.errors.UsageError`` naming the command-line option.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import operator
import os
import sys
import threading
import warnings
from collections.abc import Iterable, Sequence, Sized  # Sequence: seeds' type, at runtime
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from maxminq.errors import (
    INT64_MAX,
    MaxminqWarning,
    UsageError,
    closest,
    is_whole,
    outside_stacklevel,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "AGENT_NAMES",
    "BIAS_TAIL",
    "OPTIMIZER_DEFAULTS",
    "EnvIdWarning",
    "EnvWarning",
    "NeverLearnsWarning",
    "NoEvaluationWarning",
    "TrainConfig",
    "env_id_elsewhere",
    "start_env_id_check",
]

AGENT_NAMES = ("dqn", "ddqn", "maxmin-dqn", "averaged-dqn", "ensemble-dqn", "generalized-dqn")
# N online nets, a subset updated per step
ENSEMBLE_AGENTS = ("maxmin-dqn", "ensemble-dqn", "generalized-dqn")
# The operator (a key of maxminq.operators.OPERATORS) each agent bootstraps with; the
# Generalized DQN's is the run's ``operator`` (deep.agents.AGENTS holds the same names).
AGENT_OPERATOR = {
    "dqn": "q_learning",
    "ddqn": "double_q",
    "maxmin-dqn": "maxmin",
    "averaged-dqn": "averaged",
    "ensemble-dqn": "ensemble",
}
# The optimisers and the options each takes (``--optimizer-kwargs``), with torch.optim's
# defaults for those the registry / config leaves out (used by ``deep.optim``).
OPTIMIZER_DEFAULTS: dict[str, dict[str, Any]] = {
    "rmsprop": {"alpha": 0.99, "eps": 1e-8},
    "centered_rmsprop": {"alpha": 0.99, "eps": 1e-8},
    "adam": {"betas": (0.9, 0.999), "eps": 1e-8},
}


def optimizer_options_in_full(optimizer: object, given: object) -> object:
    """``given`` (a run's ``optimizer_kwargs``) as ``optimizer`` takes them: torch's defaults
    (:data:`OPTIMIZER_DEFAULTS`) filled in for the options not given, as JSON values (a pair
    as a list). What a run saved says alone only with the rules of its day: MinAtar's
    {"alpha": 0.9} was torch's eps 1e-8 before --optimizer-kwargs was merged over the
    registry's (eps 0.01 now). ``given`` itself for an unknown optimizer or a non-mapping."""
    defaults = OPTIMIZER_DEFAULTS.get(optimizer) if isinstance(optimizer, str) else None
    if defaults is None or not isinstance(given, dict):
        return given
    filled = {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()}
    return {**filled, **given}


def options_in_full(settings: dict[str, Any]) -> dict[str, Any]:
    """A run's settings (a ``result_key``'s, or a sweep's stored ones) with
    ``optimizer_kwargs`` as the optimizer takes them (:func:`optimizer_options_in_full`):
    what ``--resume`` compares and ``maxminq status --runs`` shows, so that a run saved
    before --optimizer-kwargs was merged over the registry's ({"alpha": 0.9} on MinAtar:
    torch's eps 1e-8) is continued by giving that eps, and shown with it."""
    if "optimizer_kwargs" not in settings:
        return settings
    full = optimizer_options_in_full(settings.get("optimizer"), settings["optimizer_kwargs"])
    return {**settings, "optimizer_kwargs": full}


#: The most seeds one run takes (``--seeds``; each has an environment and buffers of its own).
MAX_SEEDS = 1_000_000


class EnvIdWarning(MaxminqWarning):
    """The run's env id names an environment that only this process knows: training works,
    but ``maxminq evaluate`` (and any other process) cannot rebuild it from the run."""


class EnvWarning(MaxminqWarning):
    """The environment trains, but part of the run will not behave as one expects: it has
    no time limit (a test episode the policy never ends never finishes), or a wrapper keeps
    statistics across episodes that checkpoints and new environments do not carry."""


class NeverLearnsWarning(MaxminqWarning):
    """The run's ``steps`` do not exceed its ``learning_starts``: it takes only random steps
    and its agents never learn (:func:`warn_about_steps`)."""


class NoEvaluationWarning(MaxminqWarning):
    """The run's ``eval_every`` exceeds its ``steps``: no evaluation during training runs
    and its ``evals`` table holds no row (:func:`warn_about_steps`)."""


def warn_about_steps(cfg: ResolvedTrainConfig) -> None:
    """Warn when the resolved run ``cfg``'s ``steps`` leave part of it undone: it never
    learns (``steps`` <= ``learning_starts``, :class:`NeverLearnsWarning`), or no
    evaluation runs (``eval_every`` > ``steps``, :class:`NoEvaluationWarning`).
    ``run_training``'s warnings, which ``maxminq train`` shows as its one line each (a
    sweep, in its config's words)."""
    said = (
        (
            cfg.steps <= cfg.learning_starts,
            f"--steps {cfg.steps} <= --learning-starts {cfg.learning_starts}: only random "
            "steps, the agents never learn",
            NeverLearnsWarning,
        ),
        (
            cfg.eval_every > cfg.steps,
            f"--eval-every {cfg.eval_every} > --steps {cfg.steps}: no evaluation runs "
            "(evals.csv holds only its header)",
            NoEvaluationWarning,
        ),
    )
    for applies, text, category in said:
        if applies:
            warnings.warn(text, category, stacklevel=outside_stacklevel())


def _cnn_reads(obs_shape: tuple[int, ...]) -> bool:
    """Whether the MinAtar network reads observations of ``obs_shape`` as they are: square
    channels-first images (C, H, H), H >= 3 (its 3x3 convolution is built for MinAtar's
    10x10)."""
    return len(obs_shape) == 3 and obs_shape[1] == obs_shape[2] >= 3


def _observation_remedy(obs_shape: tuple[int, ...]) -> str:
    """What makes observations of ``obs_shape`` (not 1-D) readable by a network, for the
    error of either network: an image the MinAtar network reads as it is needs
    ``--network minatar_cnn``; a channels-last one its channels moved first (a wrapper);
    any of them, flattened (``FlattenObservation``), suits the MLP."""
    size = math.prod(obs_shape)
    flatten = f"gymnasium.wrappers.FlattenObservation(env), {size:,} features"
    where = "in an entry point of yours that returns the wrapped environment"
    if len(obs_shape) != 3:
        return f"flatten them for --network mlp: {flatten}, {where}"
    if _cnn_reads(obs_shape):
        return f"use --network minatar_cnn, or flatten them for mlp: {flatten}, {where}"
    c, h, w = obs_shape
    if w < min(c, h):  # (H, W, C): a channels-last image
        square = "" if c == h else ", and make them square"
        first = (w, c, h)
        image = (
            f"channels last? move them first: {first}{square}; e.g. gymnasium.wrappers."
            f"TransformObservation(env, lambda o: np.moveaxis(o, -1, 0), a Box of shape "
            f"{first}), for --network minatar_cnn"
        )
    elif h != w:
        image = "not square: crop, pad or resize the images to (C, H, H) for minatar_cnn"
    else:
        image = "too small for minatar_cnn's 3x3 convolution"
    return f"{image}; or flatten them for --network mlp: {flatten}; either {where}"


def _ask_fresh_interpreter(env_id: str) -> bool | None:
    """Whether ``env_id`` is registered in a new Python process once Gymnasium is imported
    (what ``maxminq evaluate`` finds for a bare id besides maxminq's own), asked of a new
    interpreter (0.2 s here, 0.5 s on a loaded machine); None if it could not say."""
    import subprocess

    code = "import sys, gymnasium as g; print(sys.argv[1] in g.registry)"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, env_id], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    answer = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    return {"True": True, "False": False}.get(answer[0]) if answer else None


# The answers of _ask_fresh_interpreter, asked once per id and process, each in a thread
# of its own: started early (``start_env_id_check``), the new interpreter runs while this
# one resolves the options and checks the environment, instead of after.
_FRESH: dict[str, Future[bool | None]] = {}
_FRESH_LOCK = threading.Lock()


def _forget_in_child() -> None:
    """A forked process (a sweep's worker) has none of its parent's threads: an answer
    still pending there would never come, so it asks again itself."""
    global _FRESH_LOCK
    _FRESH_LOCK = threading.Lock()
    _FRESH.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _fresh_answer(env_id: str) -> Future[bool | None]:
    """The (pending or known) answer of :func:`_ask_fresh_interpreter` for ``env_id``."""
    with _FRESH_LOCK:
        answer = _FRESH.get(env_id)
        if answer is not None:
            return answer
        answer = _FRESH[env_id] = Future()

    def ask() -> None:
        result = None
        try:
            result = _ask_fresh_interpreter(env_id)
        finally:  # an answer always (None: cannot say), so no caller waits forever
            answer.set_result(result)

    threading.Thread(target=ask, name=f"env-id-check {env_id}", daemon=True).start()
    return answer


def _registered_when_fresh(env_id: str) -> bool | None:
    """:func:`_ask_fresh_interpreter`'s answer for ``env_id``, asked once per process."""
    return _fresh_answer(env_id).result()


def _asks_fresh(env_id: object) -> bool:
    """Whether :func:`env_id_elsewhere` asks a new interpreter about ``env_id``: a bare id
    (no ``module:``) that is not maxminq's."""
    from maxminq.envs.api import OUR_IDS

    return isinstance(env_id, str) and not env_id.rpartition(":")[0] and env_id not in OUR_IDS


def start_env_id_check(env_id: object) -> None:
    """Start, in the background, what :func:`env_id_elsewhere` will need to know about
    ``env_id`` (a new interpreter's registry, for a bare id that is not maxminq's), so that
    it is known by the time the run has been checked; nothing for any other id."""
    if _asks_fresh(env_id):
        _fresh_answer(cast(str, env_id))


def env_id_elsewhere(env_id: str) -> str | None:
    """Why another process (``maxminq evaluate``, a sweep's worker) could not rebuild the
    environment ``env_id`` names, and what to use instead, or None if it can: the module
    part is ``__main__`` (in another process that is another program), or a bare id is
    neither maxminq's nor registered by Gymnasium itself (e.g. registered by the script that
    trains). The remedy is ``module:EnvId`` with an importable module that registers it."""
    module, _, name = env_id.rpartition(":")
    use = (
        f"register it in a module of yours (e.g. my_envs.py, on PYTHONPATH) and use "
        f"'my_envs:{name}' (module:EnvId), which any process imports to rebuild it"
    )
    if module == "__main__":
        return (
            f"--env: {env_id!r} names the module run as the main script: maxminq evaluate "
            f"(or any other process) imports its own __main__, which does not register "
            f"{name!r}; {use}"
        )
    if not _asks_fresh(env_id):
        return None
    if _registered_when_fresh(env_id) is not False:  # Gymnasium's own (or unknown: quiet)
        return None
    return (
        f"--env: {env_id!r} is registered in this process only (not by Gymnasium or "
        f"maxminq), so maxminq evaluate of this run (or any other process) cannot rebuild "
        f"it; {use}"
    )


# Bias probes of an episode cut by the time limit count only if the missing tail of the
# return weighs gamma^k <= BIAS_TAIL (k = steps from the probe to the cut).
BIAS_TAIL = 0.05


def _default_hidden() -> dict[str, tuple[int, ...]]:
    """The paper's hidden layers per network, ``maxminq.envs.registry.NETWORK_HIDDEN``
    (imported on use: this module stays free of gymnasium and torch)."""
    from maxminq.envs.registry import NETWORK_HIDDEN

    return NETWORK_HIDDEN


# torch.optim keywords that an option sets here instead (the authors' configs put both in
# their optimizer's kwargs: {"lr": ..., "alpha": 0.95, "centered": true, "eps": 0.01}).
_OPTIMIZER_KEYWORD_OPTIONS = {
    "lr": "the step size is --lr",
    "centered": "centered RMSprop is --optimizer centered_rmsprop",
}
# Keyword arguments of ``make`` that have their own option (or belong to ``evaluate``).
_RESERVED_ENV_KWARGS = {  # keywords maxminq passes itself, and the option that sets each
    "max_episode_steps": "--max-episode-steps",
    "seed": "--seeds",
}
_REGISTRY_AGENT = {  # names the registry's ``best`` table may use for each agent
    "dqn": ("dqn", "DQN"),
    "ddqn": ("ddqn", "double-dqn", "DDQN"),
    "maxmin-dqn": ("maxmin-dqn", "maxmin", "Maxmin DQN"),
    "averaged-dqn": ("averaged-dqn", "averaged", "Averaged DQN"),
    # Ensemble DQN has no posted setting: it falls back to Maxmin's (same N-net layout).
    "ensemble-dqn": ("ensemble-dqn", "ensemble", "Ensemble DQN", "maxmin-dqn"),
    "generalized-dqn": ("generalized-dqn", "maxmin-dqn"),  # as Ensemble DQN
}


def _opt(name: str) -> str:
    return "--" + name.replace("_", "-")


def _literal(value: Any) -> str:
    """``repr(value)`` as Python reads it back: NumPy scalars and arrays as the Python
    numbers and lists they hold, a non-finite float as ``float('nan')`` / ``float('inf')``
    / ``-float('inf')``, inside dicts, lists and tuples too (:meth:`TrainConfig.__repr__`)."""
    if isinstance(value, np.ndarray | np.generic):
        value = value.tolist()  # a NumPy scalar's Python value too
    if isinstance(value, float) and not math.isfinite(value):
        return f"float('{value}')" if value > 0 or value != value else "-float('inf')"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, tuple) and type(value) is tuple:  # not a named tuple
        items = [_literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return repr(value)


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    """Whether ``value`` is the field ``f``'s default (of the same type: ``seeds=(0,)`` or a
    NumPy array is shown, as it was given)."""
    if f.default is not dataclasses.MISSING:
        default = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:  # a required field: always shown
        return False
    try:
        return value is default or (type(value) is type(default) and bool(value == default))
    except (TypeError, ValueError):  # a comparison that is not one bool
        return False


@dataclass
class TrainConfig:
    """Options of ``maxminq train`` / ``run_training`` (None = registry default).

    ``n`` is N for Maxmin / Ensemble DQN and K (target snapshots) for Averaged DQN;
    DQN and Double DQN need n = 1. ``steps`` counts environment steps per seed.
    ``bias_every`` is the metrics interval M (steps); ``bias_probe_every`` how often a
    visited (s, a) is probed for the bias measurement. ``checkpoint_every`` = 0 disables
    checkpoints. ``grad_clip`` <= 0 disables clipping. ``hidden``: the MLP's hidden layer
    sizes, or the one fully connected width of the MinAtar network (default: the paper's,
    ``maxminq.envs.registry.NETWORK_HIDDEN``). ``env_kwargs``: keyword arguments for the
    environment's constructor (``maxminq.envs.make(env_id, **env_kwargs)``), over the
    registry's. ``save_probes``: also keep every scored bias probe (the ``probes`` table).
    ``eval_every``: beyond the paper's protocol, every ``eval_every`` steps each live seed
    also plays ``eval_every_episodes`` episodes with eps = ``eval_eps`` on environments of
    its own (the ``evals`` table); 0 (default) = none. They do not change training (but a
    seed whose values are not finite there is recorded as diverged at that step).
    ``operator``: the G of ``generalized-dqn`` (required there): a key of
    ``maxminq.operators.OPERATORS``, ``'module:function'`` for one of your own, or such a
    function itself (one a module defines, so that the run can name it: see
    ``maxminq.operators.operator_reference``); ``op_kwargs`` its keyword parameters. The other
    agents take only their own operator (the same run as without it) and no ``op_kwargs``.
    Resolved, ``operator`` is the G's reference string. Every other field is the option of
    ``maxminq train`` of that name (``eps_start`` is ``--eps-start``: its ``--help`` and
    docs/deep-agents.md say what each does), among them ``timeout_as_terminal`` (a
    time-limit cut taken as terminal, as the authors' code did; by default it bootstraps)
    and ``eval_episodes`` / ``eval_eps`` (the paper's test after training). A bad value is
    a one-line UsageError naming the field by that option.
    """

    env_id: str
    agent: str = "maxmin-dqn"
    n: int | None = None
    lr: float | None = None
    steps: int | None = None
    # any whole numbers resolve() takes: a list, range(5), np.arange(5) (its errors suggest
    # range); resolved, a list. list[int] first, though a Sequence: a sweep reads this text
    # to check its settings (experiments.registry._type_problem), where seeds are a list
    # ('grid.seeds: expected a list, got 0' for an axis of bare seeds)
    seeds: list[int] | Sequence[int] | np.ndarray = field(default_factory=lambda: [0])
    timeout_as_terminal: bool = False
    eval_episodes: int = 100
    eval_eps: float = 0.01
    bias_every: int | None = None
    bias_probe_every: int = 10
    checkpoint_every: int | None = None
    network: str | None = None
    max_episode_steps: int | None = None
    buffer_size: int | None = None
    batch_size: int | None = None
    gamma: float | None = None
    target_update: int | None = None
    eps_start: float | None = None
    eps_end: float | None = None
    eps_decay_steps: int | None = None
    learning_starts: int | None = None
    loss: str | None = None
    grad_clip: float | None = None
    optimizer: str | None = None
    optimizer_kwargs: dict[str, Any] | None = None
    update_members: int = 1
    tensorboard: bool = False
    hidden: tuple[int, ...] | None = None
    env_kwargs: dict[str, Any] | None = None
    save_probes: bool = False
    eval_every: int = 0
    eval_every_episodes: int = 10
    operator: str | Callable[..., Any] | None = None
    op_kwargs: dict[str, Any] | None = None

    def __repr__(self) -> str:
        """The fields that differ from their defaults, in order, ``env_id`` always: the
        options a run was given, ``TrainConfig(env_id='CartPole-v1', agent='dqn',
        steps=20000)``, which a notebook shows in a line (the dataclass's repr listed all 37
        fields, 27 of them None, the defaults) and which Python reads back as the same
        config. A resolved config shows every default filled in. An own operator given as a
        function is shown by the reference a run folder names it with (``'my_ops:median'``,
        what ``resolve`` makes of it: the config read back is of the same run), not as
        ``<function median at 0x7f...>``, which Python cannot read. NumPy values are shown
        as the Python ones ``resolve`` makes of them (``n=4`` for ``np.int64(4)``,
        ``seeds=[0, 1, 2]`` for ``np.arange(3)``, inside ``env_kwargs`` too), and a float
        that is no literal as ``float('inf')`` (``grad_clip=inf`` was a NameError read
        back; ``nan``, which ``resolve`` refuses, likewise), so that the text always reads
        back."""
        from maxminq.operators import operator_reference

        def shown(name: str, value: Any) -> str:
            if name == "operator" and callable(value):
                reference = operator_reference(value)
                if reference is not None:
                    return f"{name}={reference!r}"
            return f"{name}={_literal(value)}"

        fields = [
            shown(f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name == "env_id" or not _is_default(f, getattr(self, f.name))
        ]
        return f"{type(self).__name__}({', '.join(fields)})"

    @property
    def n_online(self) -> int:
        """Online nets per seed (of a resolved config): N for Maxmin / Ensemble DQN, else 1."""
        return cast(int, self.n) if self.agent in ENSEMBLE_AGENTS else 1

    # --- defaults and validation ----------------------------------------------------------

    def resolve(self) -> ResolvedTrainConfig:
        """A copy with every ``None`` replaced by the registry default, validated (a value
        of the wrong type, e.g. ``lr="3e-4"`` or ``save_probes="no"``, is a UsageError
        naming the option; NumPy numbers become Python ones, a whole float ``steps=1e5`` an
        int)."""
        typed = self._typed()
        typed._check_basic()
        operator, op_kwargs = _resolve_operator(typed.agent, typed.operator, typed.op_kwargs)
        typed = dataclasses.replace(typed, operator=operator, op_kwargs=op_kwargs)
        from maxminq.envs.registry import get_env_defaults

        d = get_env_defaults(typed.env_id, typed.env_kwargs)  # UsageError: unknown id, kwargs
        lr, n = default_lr_n(d, typed.agent)
        c = dataclasses.replace(typed, seeds=_seed_list(typed.seeds))
        if c.n is None:  # a G of fixed N (double_q: 2) gets its own, as the experiments give it
            c.n = OPERATOR_N.get(operator or "", n) if c.agent == "generalized-dqn" else n
        if c.lr is None:
            c.lr = lr
        for name in (
            "network",
            "max_episode_steps",
            "buffer_size",
            "batch_size",
            "gamma",
            "target_update",
            "eps_start",
            "eps_end",
            "eps_decay_steps",
            "learning_starts",
            "loss",
            "grad_clip",
            "optimizer",
        ):
            if getattr(c, name) is None:
                setattr(c, name, getattr(d, name))
        if c.hidden is None:
            network = cast(str, c.network)  # filled from the registry above
            c.hidden = d.hidden if network == d.network else _default_hidden().get(network)
        c.env_kwargs = {**d.env_kwargs, **(c.env_kwargs or {})}
        if c.steps is None:
            c.steps = int(d.train_steps)
        # The registry's options belong to its optimizer; those given are merged over them
        # (as env_kwargs): {"alpha": 0.9} on MinAtar keeps its eps 0.01, not torch's 1e-8.
        registry = dict(d.optimizer_kwargs) if c.optimizer == d.optimizer else {}
        c.optimizer_kwargs = {**registry, **(c.optimizer_kwargs or {})}
        if c.bias_every is None:
            c.bias_every = default_bias_every(c.steps)
        if c.checkpoint_every is None:
            c.checkpoint_every = default_checkpoint_every(c.steps)
        if c.grad_clip is not None and math.isnan(c.grad_clip):
            raise UsageError(
                f"--grad-clip: must be a number (<= 0: no clipping), got {c.grad_clip}"
            )
        if c.grad_clip is not None and c.grad_clip <= 0:
            c.grad_clip = None
        c._check_resolved()
        # Numbers as floats, so {"eps": 1} and {"eps": 1.0} are one run (and one run id).
        c.optimizer_kwargs = {
            k: [float(x) for x in v] if isinstance(v, (list, tuple)) else float(v)
            for k, v in (c.optimizer_kwargs or {}).items()
        }
        return cast("ResolvedTrainConfig", c)

    def _typed(self) -> TrainConfig:
        """A copy whose scalar fields hold values of their declared types (``None`` where
        allowed), as Python numbers: a NumPy integer or float (a sweep over ``np.arange`` or
        ``np.geomspace``) cannot be saved as JSON, and a string or bool where a number or a
        flag belongs would reach a comparison's TypeError, or count as true (``"no"``)."""
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            kind = str(f.type).split("|")[0].strip()  # "int | None" -> "int"
            value = getattr(self, f.name)
            if kind not in _KIND_WORDS or (value is None and "None" in str(f.type)):
                continue
            typed = _as_kind(value, kind)
            if typed is None:
                raise UsageError(f"{_opt(f.name)}: expected {_KIND_WORDS[kind]}, got {value!r}")
            if typed is not value:
                changes[f.name] = typed
        for name, arrays in (
            ("env_kwargs", False),
            ("optimizer_kwargs", True),
            ("op_kwargs", True),
        ):
            mapping = getattr(self, name)
            if isinstance(mapping, dict):  # NumPy numbers inside: JSON refused them as such
                changes[name] = _plain(mapping, arrays)
        return dataclasses.replace(self, **changes) if changes else self

    def _check_basic(self) -> None:
        if self.agent not in AGENT_NAMES:
            near = [a for a in AGENT_NAMES if a.startswith(f"{self.agent}-")]  # maxmin
            meant = near[0] if near else closest(str(self.agent), list(AGENT_NAMES))
            guess = f"; did you mean {meant}?" if meant else ""
            raise UsageError(
                f"--agent: unknown agent {self.agent!r}{guess} (choose one of "
                f"{', '.join(AGENT_NAMES)})"
            )
        if self.n is not None:
            if self.n < 1:
                raise UsageError(f"--n: must be >= 1, got {self.n}")
            if self.agent in ("dqn", "ddqn") and self.n != 1:
                raise UsageError(f"--n: must be 1 for {self.agent}, got {self.n}")
        if self.lr is not None and not (math.isfinite(self.lr) and self.lr > 0):
            raise UsageError(f"--lr: must be a finite number > 0, got {self.lr}")
        self._check_env_kwargs()
        seeds = _seed_list(self.seeds)
        if not seeds:
            raise UsageError("--seeds: give at least one seed, e.g. 0-4")
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise UsageError(f"--seeds: must be distinct non-negative integers, got {seeds}")
        if max(seeds) > INT64_MAX:  # else trained, but its tables' seed column read as text
            raise UsageError(
                f"--seeds: a seed must be below 2**63 (the tables hold seeds as int64), got "
                f"{max(seeds)}"
            )

    def _check_resolved(self) -> None:
        positive = ("n", "steps", "buffer_size", "batch_size", "target_update", "bias_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise UsageError(f"{_opt(name)}: must be >= 1, got {getattr(self, name)}")
        for name in ("eps_decay_steps", "learning_starts", "eval_episodes", "checkpoint_every"):
            if getattr(self, name) < 0:
                raise UsageError(f"{_opt(name)}: must be >= 0, got {getattr(self, name)}")
        if self.bias_probe_every < 1:
            raise UsageError(f"--bias-probe-every: must be >= 1, got {self.bias_probe_every}")
        if self.eval_every < 0:
            raise UsageError(f"--eval-every: must be >= 0 (0: none), got {self.eval_every}")
        if self.eval_every_episodes < 1:
            raise UsageError(f"--eval-every-episodes: must be >= 1, got {self.eval_every_episodes}")
        if self.update_members < 1:  # too few: not why the agent cannot take more
            raise UsageError(f"--update-members: must be >= 1, got {self.update_members}")
        if self.update_members > self.n_online:
            if self.n_online == 1:  # not "between 1 and 1"
                more = (
                    f"--n {max(self.update_members, 2)} or more gives it more"
                    if self.agent in ENSEMBLE_AGENTS
                    else "several: Maxmin or Ensemble DQN with --n above 1"
                )
                raise UsageError(
                    f"--update-members: {self.agent} with n = {self.n} has one online net to "
                    f"update ({more}), so it must be 1, got {self.update_members}"
                )
            raise UsageError(
                f"--update-members: must be between 1 and {self.n_online} (the online nets of "
                f"{self.agent} with n = {self.n}), got {self.update_members}"
            )
        if self.max_episode_steps is not None and self.max_episode_steps < 1:
            raise UsageError(f"--max-episode-steps: must be >= 1, got {self.max_episode_steps}")
        assert self.gamma is not None and self.optimizer_kwargs is not None  # filled by resolve
        if not 0 <= self.gamma <= 1:
            raise UsageError(f"--gamma: must be in [0, 1], got {self.gamma}")
        for name in ("eps_start", "eps_end", "eval_eps"):
            if not 0 <= getattr(self, name) <= 1:
                raise UsageError(f"{_opt(name)}: must be in [0, 1], got {getattr(self, name)}")
        if self.loss not in ("mse", "huber"):
            raise UsageError(f"--loss: must be mse or huber, got {self.loss!r}")
        if self.optimizer not in OPTIMIZER_DEFAULTS:
            raise UsageError(
                f"--optimizer: must be rmsprop, centered_rmsprop or adam, got {self.optimizer!r}"
            )
        unknown = sorted(set(self.optimizer_kwargs) - set(OPTIMIZER_DEFAULTS[self.optimizer]))
        if unknown:
            options = [
                _OPTIMIZER_KEYWORD_OPTIONS[k] for k in unknown if k in _OPTIMIZER_KEYWORD_OPTIONS
            ]
            if self.optimizer == "centered_rmsprop" and "centered" in unknown:  # not "use it"
                i = options.index(_OPTIMIZER_KEYWORD_OPTIONS["centered"])
                options[i] = "centered_rmsprop is centered already; --optimizer rmsprop is not"
            raise UsageError(
                f"--optimizer-kwargs: {self.optimizer} takes "
                f"{', '.join(OPTIMIZER_DEFAULTS[self.optimizer])}, not {', '.join(unknown)}"
                + (f" ({'; '.join(options)})" if options else "")
            )
        self._check_optimizer_values()
        if self.network not in ("mlp", "minatar_cnn"):
            raise UsageError(f"--network: must be mlp or minatar_cnn, got {self.network!r}")
        self.hidden = _check_hidden(self.hidden, self.network)

    def _check_env_kwargs(self) -> None:
        """``env_kwargs``: a mapping of names to JSON values (they are saved with the run),
        none of them an option of its own."""
        kwargs = self.env_kwargs
        if kwargs is None:
            return
        if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
            raise UsageError(f"--env-kwargs: expected a mapping of names to values, got {kwargs!r}")
        for key, option in _RESERVED_ENV_KWARGS.items():
            if key in kwargs:
                raise UsageError(f"--env-kwargs: {key} is not an env keyword here; use {option}")
        if "render_mode" in kwargs:  # no option sets it: evaluate --gif asks for its own
            raise UsageError(
                "--env-kwargs: render_mode is not an env keyword here (maxminq evaluate "
                "--gif asks for 'rgb_array' itself); an environment that needs one to train "
                "(observations from its frames) sets it in its entry point or registration: "
                "gymnasium.register(..., kwargs={'render_mode': 'rgb_array'})"
            )
        _check_saveable(kwargs, "--env-kwargs")

    def _check_optimizer_values(self) -> None:
        """The values of ``optimizer_kwargs``, in the ranges torch.optim accepts (alpha also
        at most 1: a larger one makes the square average negative and the run NaN; eps also
        above 0: torch takes 0, and its first update turns the weights NaN)."""

        def number(name: str, v: Any, lo: float, hi: float, hi_open: bool) -> None:
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v
            if not (ok and (v < hi if hi_open else v <= hi)):
                bound = f"[{lo}, {hi})" if hi_open else f"[{lo}, {hi}]"
                raise UsageError(
                    f"--optimizer-kwargs: {self.optimizer} {name} must be a number in "
                    f"{bound}, got {v!r}"
                )

        assert self.optimizer_kwargs is not None  # filled by resolve
        for name, v in self.optimizer_kwargs.items():
            if name == "betas":
                if not isinstance(v, (list, tuple)) or len(v) != 2:
                    raise UsageError(
                        f"--optimizer-kwargs: adam betas must be a pair [beta1, beta2], got {v!r}"
                    )
                for i, b in enumerate(v):
                    number(f"betas[{i}]", b, 0.0, 1.0, True)
            elif name == "alpha":
                number(name, v, 0.0, 1.0, False)
            else:  # eps: 0 would divide 0 by 0 wherever a gradient is still zero (a dead
                # ReLU unit, an action not yet taken): NaN weights, every seed "diverged"
                number(name, v, 0.0, math.inf, True)
                if v == 0:
                    raise UsageError(
                        f"--optimizer-kwargs: {self.optimizer} eps must be > 0 (0 divides 0 "
                        "by 0 where a gradient is zero, and every seed would turn NaN), got 0"
                    )

    def check_observation_shape(self, obs_shape: tuple[int, ...]) -> None:
        """Reject a network that cannot read the environment's observations, saying what
        makes them readable (:func:`_observation_remedy`: the same words for either
        network, and for ``maxminq envs --env``)."""
        if self.network == "mlp" and len(obs_shape) > 1:
            raise UsageError(
                f"--network: mlp takes 1-D feature vectors, {self.env_id} gives "
                f"{obs_shape} ({_observation_remedy(obs_shape)})"
            )
        if self.network == "minatar_cnn" and len(obs_shape) != 3:
            raise UsageError(
                f"--network: minatar_cnn needs (C, H, W) image observations, {self.env_id}"
                f" gives {obs_shape}; use mlp"
            )
        if self.network == "minatar_cnn" and not _cnn_reads(obs_shape):
            raise UsageError(
                f"--network: minatar_cnn needs square channels-first images (C, H, H) with "
                f"H >= 3, {self.env_id} gives {obs_shape} ({_observation_remedy(obs_shape)})"
            )

    def make_env(self, max_episode_steps: int | None = None, **extra: Any) -> Any:
        """The environment of this (resolved) config: ``maxminq.envs.make(env_id,
        **env_kwargs)`` with its episode cap (``max_episode_steps`` overrides it) and ``extra``
        keywords (e.g. ``render_mode``). An environment that refuses ``env_kwargs`` is a
        UsageError naming the option."""
        from maxminq.envs.api import make_with_kwargs

        cap = self.max_episode_steps if max_episode_steps is None else max_episode_steps
        return make_with_kwargs(self.env_id, self.env_kwargs, max_episode_steps=cap, **extra)

    # --- serialisation --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-compatible dict of all fields.

        ``hidden``, ``env_kwargs``, ``save_probes``, ``eval_every``,
        ``eval_every_episodes``, ``operator`` and ``op_kwargs`` are left out at their defaults
        (the paper's layers, no keywords, no probes table, no evaluations, the episodes also
        when there are no evaluations; the agent's own operator): they came later, and so run
        folders, checkpoints and sweep run ids made before them still match the same options.
        """
        d = dataclasses.asdict(self)
        for name in ("operator", "op_kwargs"):
            if d[name] is None:
                del d[name]
        if not d["save_probes"]:
            del d["save_probes"]
        if not d["eval_every"] or d["eval_every_episodes"] == TrainConfig.eval_every_episodes:
            del d["eval_every_episodes"]  # without evaluations it has no effect
        if not d["eval_every"]:
            del d["eval_every"]
        if d["env_kwargs"] in (None, {}):
            del d["env_kwargs"]
        if d["hidden"] is None or tuple(d["hidden"]) == _default_hidden().get(self.network or ""):
            del d["hidden"]
        return d

    def result_key(self) -> str:
        """JSON of the fields that affect results (for checking a checkpoint matches)."""
        d = self.to_dict()
        for name in ("checkpoint_every", "tensorboard"):
            d.pop(name)
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_key(cls, key: str) -> ResolvedTrainConfig:
        """The resolved config a ``result_key`` was made from (defaults of the fields it
        leaves out filled in again)."""
        c = cast("ResolvedTrainConfig", cls(**json.loads(key)))
        c.hidden = tuple(c.hidden or _default_hidden()[c.network])
        c.env_kwargs = c.env_kwargs or {}
        return c


# Keywords of Stable-Baselines3's DQN (and its learn()) and of CleanRL's dqn.py that a user
# coming from them may give TrainConfig: the field that means the same here, and what
# differs in how it is given.
_OTHER_NAMES: dict[str, tuple[str, str]] = {
    "learning_rate": ("lr", ""),
    "total_timesteps": ("steps", " (environment steps per seed)"),
    "seed": ("seeds", ", a list of seeds, trained together: seeds=[0]"),
    "env": ("env_id", ", the environment's id: 'module:EnvId' for one of yours"),
    "target_update_interval": ("target_update", " (steps between target-network copies)"),
    "target_network_frequency": ("target_update", " (steps between target-network copies)"),
    "exploration_initial_eps": ("eps_start", ""),
    "start_e": ("eps_start", ""),
    "exploration_final_eps": ("eps_end", ""),
    "end_e": ("eps_end", ""),
    "exploration_fraction": (
        "eps_decay_steps",
        ", in steps after learning_starts, not a fraction of the run: "
        "exploration_fraction * total_timesteps - learning_starts ends the decay at the "
        "same step",
    ),
    "max_grad_norm": ("grad_clip", ""),
    "optimizer_class": (
        "optimizer",
        ", a name: 'adam', 'rmsprop' or 'centered_rmsprop' (its settings: optimizer_kwargs)",
    ),
    "policy_kwargs": ("hidden", ", the hidden layer sizes, e.g. hidden=(256, 256)"),
    "net_arch": ("hidden", ", the hidden layer sizes, e.g. hidden=(256, 256)"),
    "tensorboard_log": ("tensorboard", "=True (the logs go to the run folder's tensorboard/)"),
    "policy": ("network", ", 'mlp' or 'minatar_cnn' (its layer sizes: hidden)"),
}

# Their keywords with no field here (difflib's close spelling would mislead: n_steps is not
# steps): what maxminq does instead.
_ONE_UPDATE_PER_STEP = (
    "one learning update every environment step from learning_starts on "
    "(train_freq=1, gradient_steps=1)"
)
_NO_EQUIVALENT: dict[str, str] = {
    "n_steps": (
        "targets here are one-step (r + gamma * max Q'); n_steps is an n-step return "
        "(or a rollout length in PPO/A2C), not the run's length, which is steps"
    ),
    "train_freq": _ONE_UPDATE_PER_STEP,
    "train_frequency": _ONE_UPDATE_PER_STEP,
    "gradient_steps": _ONE_UPDATE_PER_STEP,
    "tau": "target networks are copied whole (their tau=1) every target_update steps",
    "replay_buffer_class": "a uniform replay of buffer_size transitions per seed",
    "replay_buffer_kwargs": "a uniform replay of buffer_size transitions per seed",
    "device": "training runs on the CPU",
    "cuda": "training runs on the CPU",
    "verbose": "run_training(..., progress=False) turns off the progress bar",
}


def _unknown_keyword(name: str) -> str:
    """Python's TypeError message for ``TrainConfig(name=...)``, with the field meant: the
    same option under Stable-Baselines3's or CleanRL's name, or a close spelling."""
    fields = [f.name for f in dataclasses.fields(TrainConfig)]
    said = f"TrainConfig.__init__() got an unexpected keyword argument {name!r}"
    if name in _OTHER_NAMES:
        ours, how = _OTHER_NAMES[name]
        return f"{said}; did you mean {ours}{how}? ({name} is Stable-Baselines3's or CleanRL's)"
    if name in _NO_EQUIVALENT:
        return (
            f"{said}; no equivalent here ({name} is Stable-Baselines3's or CleanRL's): "
            f"{_NO_EQUIVALENT[name]}"
        )
    close = closest(name, fields, cutoff=0.75)
    return f"{said}; did you mean {close}?" if close else said


def _naming_unknown_keywords(init: Any) -> Any:
    """``init``, the dataclass's ``__init__``, that first names the field meant by a keyword
    it does not take (a TypeError still, as Python's own)."""

    @functools.wraps(init)
    def checked(self: TrainConfig, *args: Any, **kwargs: Any) -> None:
        for name in kwargs:
            if name not in _FIELD_NAMES:
                raise TypeError(_unknown_keyword(name))
        init(self, *args, **kwargs)

    return checked


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(TrainConfig))
setattr(TrainConfig, "__init__", _naming_unknown_keywords(TrainConfig.__init__))  # noqa: B010


if TYPE_CHECKING:

    class ResolvedTrainConfig(TrainConfig):
        """A ``TrainConfig`` as ``resolve()`` returns it: the defaults filled in (for the
        type checker only; ``grad_clip`` None = no clipping, ``max_episode_steps`` None = no
        cap)."""

        n: int
        lr: float
        steps: int
        seeds: list[int]
        bias_every: int
        checkpoint_every: int
        network: str
        buffer_size: int
        batch_size: int
        gamma: float
        target_update: int
        eps_start: float
        eps_end: float
        eps_decay_steps: int
        learning_starts: int
        loss: str
        optimizer: str
        optimizer_kwargs: dict[str, Any]
        hidden: tuple[int, ...]
        env_kwargs: dict[str, Any]
        operator: str | None  # the G's reference string (generalized-dqn only)


_OWN_OPERATOR_HINT = (
    "a library operator (e.g. maxmin, ensemble, weighted_double_q), 'module:function' for one "
    "of your own (e.g. my_ops:median_q, the module on PYTHONPATH), or in Python such a function"
)


def _check_saveable(kwargs: dict[str, Any], option: str) -> None:
    """UsageError naming ``option`` unless ``kwargs`` can be saved with the run as JSON."""
    try:
        json.dumps(kwargs, allow_nan=False)
    except (TypeError, ValueError):
        raise UsageError(
            f"{option}: values must be numbers, strings, booleans, lists or mappings "
            f"(they are saved with the run), got {kwargs!r}"
        ) from None


def _resolve_operator(
    agent: str, operator: Any, op_kwargs: Any
) -> tuple[str | None, dict[str, Any] | None]:
    """``operator`` and ``op_kwargs`` of a run of ``agent`` as a resolved config holds them:
    for ``generalized-dqn`` the G's reference string (``operators.operator_reference``; a G
    that has none is refused: the run folder could not name it) and its keywords (None if
    none), checked against a library operator's parameters; for the other agents None and
    None (their own operator given is the same run; another, or keywords, are refused).
    UsageErrors name ``--operator`` or ``--op-kwargs``."""
    from maxminq import operators

    if op_kwargs is not None:
        if not isinstance(op_kwargs, dict) or not all(isinstance(k, str) for k in op_kwargs):
            raise UsageError(
                f"--op-kwargs: expected a mapping of names to values, got {op_kwargs!r}"
            )
        _check_saveable(op_kwargs, "--op-kwargs")
    if operator is None:
        reference = None
    elif isinstance(operator, str):
        try:
            g = operators.load_operator(operator)
        except ValueError as err:
            raise UsageError(f"--operator: {str(err).removeprefix('operator ')}") from None
        reference = operators.operator_reference(g) or operator  # an alias: as given
    elif callable(operator):
        reference = operators.operator_reference(operator)
        if reference is None:  # a run folder must name G to --resume
            raise UsageError(f"--operator: {operators.unnamed_operator(operator)}")
    else:
        raise UsageError(f"--operator: expected {_OWN_OPERATOR_HINT}, got {operator!r}")
    if agent != "generalized-dqn":
        own = AGENT_OPERATOR[agent]
        if reference not in (None, own):
            raise UsageError(
                f"--operator: {agent} bootstraps with {own}; for {reference} use --agent "
                f"generalized-dqn (N online and target nets, as maxmin-dqn)"
            )
        if op_kwargs:
            raise UsageError(
                f"--op-kwargs: {agent}'s operator {own} takes none; operator parameters are "
                "for --agent generalized-dqn"
            )
        return None, None
    if reference is None:
        raise UsageError(f"--operator: generalized-dqn needs its G: {_OWN_OPERATOR_HINT}")
    kwargs = dict(op_kwargs) if op_kwargs else None
    if reference in operators.OPERATORS and kwargs:  # c, sigma: {"c": 2} is {"c": 2.0}
        whole = {k: float(v) for k, v in kwargs.items() if type(v) is int}
        kwargs.update(whole)
    if reference in operators.OPERATORS:
        params = operators.operator_params(reference)
        unknown = sorted(set(kwargs or {}) - set(params))
        if unknown:
            takes = f"takes {', '.join(params)}" if params else "takes no parameters"
            raise UsageError(f"--op-kwargs: {reference} {takes}, not {', '.join(unknown)}")
        missing = [p for p, required in params.items() if required and p not in (kwargs or {})]
        if missing:
            raise UsageError(
                f"--op-kwargs: {reference} needs {', '.join(missing)}, e.g. --op-kwargs "
                f"'{{\"{missing[0]}\": 0.1}}'"
            )
    return reference, kwargs


def _check_hidden(hidden: Any, network: str) -> tuple[int, ...]:
    """``hidden`` as a tuple of layer sizes (whole numbers >= 1): any number of layers for
    the MLP, exactly one (the fully connected width) for the MinAtar network. A single
    number is one layer (in a sweep's variants a list is an axis: ``hidden: [64, 128]`` is
    two runs; ``[[64, 64]]`` one run with two layers)."""
    what = "one width" if network == "minatar_cnn" else "layer sizes"
    if isinstance(hidden, int) and not isinstance(hidden, bool):
        hidden = (hidden,)
    try:
        if isinstance(hidden, str) or any(isinstance(h, bool) for h in hidden):
            raise TypeError
        sizes = tuple(operator.index(h) for h in hidden)
    except TypeError:
        raise UsageError(f"--hidden: expected {what} (whole numbers), got {hidden!r}") from None
    if not sizes or min(sizes) < 1:
        raise UsageError(f"--hidden: expected {what} >= 1, got {list(sizes)}")
    if network == "minatar_cnn" and len(sizes) != 1:
        raise UsageError(
            f"--hidden: minatar_cnn has one fully connected hidden layer (conv 16 3x3 -> "
            f"{_default_hidden()[network][0]} by default); give one width, got {list(sizes)}"
        )
    return sizes


# The scalar field types ``TrainConfig._typed`` checks (the others, seeds, hidden and the
# keyword mappings, have checks of their own), and how its errors name them.
_KIND_WORDS = {"int": "a whole number", "float": "a number", "bool": "True or False"}


def _as_kind(value: Any, kind: str) -> Any:
    """``value`` as a Python value of ``kind`` ("int", "float" or "bool"), or None if it is
    not one: bools are neither numbers nor whole numbers here (``steps=True`` is a slip),
    NumPy numbers become Python ones, and a whole float is an int (``steps=1e5``, as a
    sweep config's ``1.0e+5``)."""
    if kind == "bool":
        return bool(value) if isinstance(value, (bool, np.bool_)) else None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return None
    if kind == "float":
        if isinstance(value, np.number) and not isinstance(value, np.complexfloating):
            return float(value) if isinstance(value, np.floating) else int(value)
        return value if isinstance(value, (int, float)) else None
    if isinstance(value, (int, np.integer)):
        return value if type(value) is int else int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return None


def _plain(value: Any, arrays: bool) -> Any:
    """``value`` with every NumPy number in it (in dicts, lists and tuples) a Python one, and
    with ``arrays`` every NumPy array a list: ``{"gravity": np.float32(-5)}`` was refused as
    not a number, as was ``{"alpha": np.float32(0.9)}``, and ``betas=np.array(...)`` as not
    a pair."""
    if isinstance(value, np.generic):
        return value.item()
    if arrays and isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v, arrays) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v, arrays) for v in value)
    return value


def _too_many_seeds(count: int, given: str = "") -> UsageError:
    """The error for a run of ``count`` seeds, more than :data:`MAX_SEEDS`."""
    return UsageError(
        f"--seeds: {given or f'{count:,} seeds'} is more than {MAX_SEEDS:,} seeds, which one "
        "run cannot hold (each seed has an environment and replay buffer of its own)"
    )


def _seed_list(seeds: Any) -> list[int]:
    """Seeds as Python ints (a NumPy array or range of them too; JSON needs plain ints); a
    bool is refused (``seeds=[True]`` would be seed 1), and so are more than
    :data:`MAX_SEEDS` (``range(10**9)`` before a list of them is built)."""
    try:
        if isinstance(seeds, (str, bytes)):
            raise TypeError
        if isinstance(seeds, Sized):
            try:
                count = len(seeds)
            except OverflowError:  # range(10**19): more than sys.maxsize, len() cannot say
                raise _too_many_seeds(0, given=repr(seeds)) from None
            if count > MAX_SEEDS:
                raise _too_many_seeds(count)
        if isinstance(seeds, Iterable) and not isinstance(seeds, Sized):  # read once: by the
            raise UsageError(  # first check, leaving the run none ('give at least one seed')
                f"--seeds: expected a list, range or array of whole numbers, got a "
                f"{type(seeds).__name__}, which can be read once only: seeds=list(...)"
            )
        if any(isinstance(s, (bool, np.bool_)) for s in seeds):
            raise TypeError
        out = [operator.index(s) for s in seeds]
        if len(out) > MAX_SEEDS:  # an iterable without a length
            raise _too_many_seeds(len(out))
        return out
    except TypeError:
        hint = ""
        if is_whole(seeds) and seeds >= 0:  # SB3's seed=3: the seed 3, or three seeds?
            hint = f": seeds=[{seeds}] for the one seed {seeds}"
            hint += f", seeds=range({seeds}) for seeds 0 to {seeds - 1}" if seeds > 0 else ""
        elif isinstance(seeds, str):  # the command line's '0-4'
            hint = ": a list or range in Python, e.g. seeds=range(5) for the command's 0-4"
        got = f"got {seeds!r}{hint}"
        raise UsageError(f"--seeds: expected a list of whole numbers, {got}") from None


#: The library operators that take a fixed number of nets (``tabular.agent.ALGORITHMS``'
#: ``fixed_n``): a ``generalized-dqn`` run of one with no ``n`` given gets it, not the
#: registry's N for Maxmin (which such a G refused: 'q must stack exactly 2 estimator(s)').
OPERATOR_N = {"q_learning": 1, "bias_corrected": 1, "double_q": 2, "weighted_double_q": 2}


def default_lr_n(defaults: Any, agent: str) -> tuple[float, int]:
    """The ``lr`` and ``n`` an ``agent`` gets on an environment whose registry defaults are
    ``defaults`` when they are not given: the agent's best posted setting, else N = 2 and
    the middle of the paper's step-size sweep; N = 1 for DQN and Double DQN."""
    best = _best(defaults, agent)
    n = 1 if agent in ("dqn", "ddqn") else int(best.get("n") or 2)
    return float(best.get("lr") or defaults.lr_sweep[len(defaults.lr_sweep) // 2]), n


def default_bias_every(steps: int) -> int:
    """``bias_every`` when not given: max(1,000, steps / 200)."""
    return max(1000, steps // 200)


def default_checkpoint_every(steps: int) -> int:
    """``checkpoint_every`` when not given: max(10,000, steps / 20)."""
    return max(10_000, steps // 20)


def _best(defaults: Any, agent: str) -> dict[str, Any]:
    best = getattr(defaults, "best", None) or {}
    for key in _REGISTRY_AGENT[agent]:
        if key in best:
            return dict(best[key])
    return {}
