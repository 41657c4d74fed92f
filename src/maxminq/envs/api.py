"""``make`` / ``make_vector``: one entry point for our games, MinAtar and any Gymnasium id."""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv

from maxminq.envs._checks import check_actions, check_cap, check_seed, check_vector_seed
from maxminq.errors import UsageError, one_line

if TYPE_CHECKING:
    from maxminq.envs._game import GameVectorEnv

CATCHER_ID = "maxminq/Catcher-v0"
PIXELCOPTER_ID = "maxminq/Pixelcopter-v0"
MINATAR_IDS: dict[str, str] = {
    f"maxminq/MinAtar-{name}-v0": module
    for name, module in {
        "Asterix": "asterix",
        "Breakout": "breakout",
        "Freeway": "freeway",
        "Seaquest": "seaquest",
        "SpaceInvaders": "space_invaders",
    }.items()
}
#: Every id maxminq registers (``register_envs``), in the order ``known_ids`` lists them.
OUR_IDS: tuple[str, ...] = (CATCHER_ID, PIXELCOPTER_ID, *MINATAR_IDS)
#: Episode caps of the paper's code (truncation, not termination).
CAPS: dict[str, int | None] = {
    CATCHER_ID: 2_000,
    PIXELCOPTER_ID: 500,
    "maxminq/MinAtar-Seaquest-v0": 10_000,
}

#: Episode lengths at which an environment of ours ends every episode itself with
#: ``truncated=True`` (a clock of its own, no ``TimeLimit``): MinAtar Freeway's built-in
#: 2,500-frame timer stops the game at its 2,501st step (``minatar.py``). An id without a
#: cap and not here ends its episodes only by ``terminated`` (game over).
OWN_TIME_LIMITS: dict[str, int] = {"maxminq/MinAtar-Freeway-v0": 2_501}


def register_envs() -> None:
    """Register our ids with Gymnasium (idempotent; runs on ``import maxminq.envs``).

    Without a display (Linux with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``) SDL's video
    driver defaults to ``dummy`` so pygame-based rendering works headless; with one it is
    left alone, so ``render_mode="human"`` opens a window. Sound is never needed.
    """
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if headless:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    entries: dict[str, tuple[str, dict[str, Any]]] = {
        CATCHER_ID: ("maxminq.envs.catcher:CatcherEnv", {}),
        PIXELCOPTER_ID: ("maxminq.envs.pixelcopter:PixelcopterEnv", {}),
    }
    for env_id, module in MINATAR_IDS.items():
        entries[env_id] = ("maxminq.envs.minatar:MinAtarEnv", {"game": module})
    for env_id, (entry_point, kwargs) in entries.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=entry_point,
            kwargs=kwargs,
            max_episode_steps=CAPS.get(env_id),
        )


def known_ids() -> list[str]:
    """Our ids, then LunarLander-v3, then the other Gymnasium ids."""
    register_envs()
    rest = sorted(k for k in gym.registry if k not in OUR_IDS and k != "LunarLander-v3")
    return [*OUR_IDS, "LunarLander-v3", *rest]


_V1_HINT = """ with --env-kwargs '{"minimal_action_set": true}'"""


def _game_key(env_id: str) -> str:
    """The game an id names, without namespace, suite or version: ``Catcher-PLE-v0``,
    ``MinAtar/Breakout-v1``, ``Breakout-MinAtar-v0`` (the authors' gym-games) and
    ``maxminq/MinAtar-Breakout-v0`` give catcher, breakout."""
    key = env_id.lower().rpartition("/")[2]
    key = re.sub(r"(-ple|-minatar)?(-v\d+)?$", "", key)
    return key.removeprefix("minatar-").replace("_", "").replace("-", "")


def _our_id_for(name: str) -> str | None:
    """Our id of the game another package's id names (the authors' gym-games
    ``Catcher-PLE-v0`` and ``Space_invaders-MinAtar-v0``, minatar.gym's
    ``MinAtar/Breakout-v0``), or None."""
    key = _game_key(name)
    return next((ours for ours in OUR_IDS if _game_key(ours) == key), None)


class _HeldStderr(io.TextIOBase):
    """Stands in for ``sys.stderr`` while a user's module is imported: what is written is
    held until :meth:`release`, and passes straight through to ``target`` afterwards. A
    plain StringIO kept for good whatever the module bound to stderr then (a logging
    handler made at import, as ``logging.basicConfig`` does): every later line was lost."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target, self.held, self.holding = target, io.StringIO(), True

    def write(self, text: str) -> int:
        """Hold ``text`` while holding, else write it to the target."""
        return (self.held if self.holding else self.target).write(text)

    def flush(self) -> None:
        if not self.holding:
            self.target.flush()

    def fileno(self) -> int:  # e.g. faulthandler.enable() at import needs a real file
        return int(self.target.fileno())

    def isatty(self) -> bool:
        return bool(self.target.isatty())

    @property
    def encoding(self) -> Any:  # type: ignore[override]  # the real stream's, not None
        return getattr(self.target, "encoding", None)

    @property
    def errors(self) -> Any:  # type: ignore[override]
        return getattr(self.target, "errors", None)

    def release(self, show: bool) -> str:
        """Stop holding (writing out what was held if ``show``); what was held."""
        self.holding = False
        text = self.held.getvalue()
        if show:
            self.target.write(text)
        return text


def _import_module(module: str, env_id: str) -> Any:
    """Import ``module`` (of ``env_id``). A module that runs a program when imported and
    exits (a script's top-level argparse: ``usage: maxminq ...`` would read as maxminq's own
    options) is a UsageError quoting the last line it wrote to stderr; the first import's
    stderr is held back until then (and written out when the import does not exit)."""
    if module in sys.modules:  # imported already: nothing runs, nothing to hold back
        return sys.modules[module]
    held = _HeldStderr(sys.stderr)
    exited = False
    try:
        with contextlib.redirect_stderr(held), contextlib.ExitStack() as stack:
            if _is_main_script(module):  # the script that runs, imported under its name
                # Its top level must not use the id meanwhile (_check_id: it would train
                # twice, nested).
                _MAIN_AGAIN.add(module)
                stack.callback(_MAIN_AGAIN.discard, module)
                # Its gymnasium.register calls run a second time, and Gymnasium warns of
                # each ("Overriding environment Walk-v0 already in registry"), same code.
                # Only then: other modules keep the warning filters they set on import.
                stack.enter_context(warnings.catch_warnings())
                warnings.filterwarnings(
                    "ignore", message=r".*Overriding environment", category=UserWarning
                )
            return importlib.import_module(module)
    except SystemExit as e:
        exited = True
        said = [line.strip() for line in held.release(show=False).splitlines() if line.strip()]
        last = f": {said[-1]}" if said else ""
        raise UsageError(
            f"--env: importing module {module!r} of {env_id!r} ran a program that exited "
            f"(status {e.code}{last}); put that module's script part under "
            "if __name__ == '__main__': so that importing it only registers the environment"
        ) from None
    finally:
        if not exited:
            held.release(show=True)


_MAIN_AGAIN: set[str] = set()  # the script that runs, while it is imported under its name


def _is_main_script(module: str) -> bool:
    """Whether importing ``module`` would run the file that runs as ``__main__`` again (a
    script that registers its environment and trains on ``'script:EnvId'``, the id other
    processes can rebuild)."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if not main_file:
        return False
    try:
        spec = importlib.util.find_spec(module)
    except Exception:  # noqa: BLE001 - the import itself reports what is wrong
        return False
    origin = getattr(spec, "origin", None)
    return isinstance(origin, str) and Path(origin).resolve() == Path(main_file).resolve()


def _entry_point_module(spec: Any) -> str | None:
    """The module of ``spec``'s entry point (a ``'module:Name'`` string or a callable), or
    None when it does not say."""
    entry = getattr(spec, "entry_point", None)
    if isinstance(entry, str):
        return entry.partition(":")[0] or None
    module = getattr(entry, "__module__", None)
    return module if isinstance(module, str) else None


def _not_an_id(value: Any) -> str:
    """The error for an environment given as something other than its id: an instance (as
    Stable-Baselines3 takes one), an ``EnvSpec`` or a class. maxminq builds its environments
    itself (one per seed, and again for tests and ``maxminq evaluate``), so it needs the id;
    the message says which one, or how to register a class of one's own."""
    spec = value if isinstance(value, gym.envs.registration.EnvSpec) else None
    if isinstance(value, (gym.Env, gym.vector.VectorEnv)):
        spec = getattr(value, "spec", None)
        what = f"an environment instance ({type(value).__name__})"
        if spec is None:  # made as Class(), not gym.make: its class may be registered
            cls = type(getattr(value, "unwrapped", value))
            ids = _ids_of_class(cls, cls.__module__)
            if ids:
                spec = gym.registry[ids[0]]
    elif spec is not None:
        what = "an EnvSpec"
    elif isinstance(value, type):
        what = f"the class {value.__name__}"
        ids = _ids_of_class(value, value.__module__)
        if ids:  # registered already: its id is the way (the spec's own advice below)
            spec = gym.registry[ids[0]]
    else:
        return f"--env: an environment id must be a string, got {value!r}"
    use = "register it with gymnasium.register in a module of yours and give 'module:EnvId'"
    if spec is not None and isinstance(getattr(spec, "id", None), str):
        use = f"give its id, {spec.id!r}"
        module = _entry_point_module(spec)
        if module == "__main__":  # defined in the running script: no other process has it
            use = (
                f"its class is defined in the script that runs; move it (and its "
                f"gymnasium.register) to a module of yours and give 'module:{spec.id}'"
            )
        elif spec.id not in OUR_IDS and module and module.split(".")[0] != "gymnasium":
            # Registered by a module of the user's: the bare id is unknown to a new
            # process (maxminq evaluate), so the module goes with it, as for gym.make.
            use = (
                f"give its id with the module that registers it (module:EnvId), e.g. "
                f"'{module}:{spec.id}'"
            )
    return (
        f"--env: expected an environment id (a string), got {what}; maxminq builds its "
        f"environments itself (one per seed): {use}"
    )


def _is_entry_point(value: Any) -> bool:
    """Whether ``value``, an attribute of a user's module named by ``--env module:Name``, may
    be what ``gymnasium.register`` takes as an entry point: a class, or a function that makes
    an environment (one of Gymnasium's own that the module imported, ``gym.make`` say, is
    not)."""
    if isinstance(value, type):
        return True
    module = getattr(value, "__module__", None) or ""
    return inspect.isfunction(value) and module.split(".")[0] != "gymnasium"


def _ids_of_class(cls: Any, module: str) -> list[str]:
    """The registered ids (at most 3) whose entry point is ``cls``, a class of ``module``:
    the class itself or its ``'module:Name'`` string; those named after the class first
    (CartPoleEnv: CartPole-v1 before a script's own ApiOnlyHere-v0 of the same class), then
    by name, the newest version of a name first (CartPole-v1 before CartPole-v0)."""
    names = {f"{module}:{cls.__name__}", f"{cls.__module__}:{cls.__qualname__}"}
    found = [
        k
        for k, spec in gym.registry.items()
        if spec.entry_point is cls
        or (isinstance(spec.entry_point, str) and spec.entry_point in names)
    ]

    def order(k: str) -> tuple[bool, bool, str, int]:  # the class's own name first, newest first
        stem, _, version = k.rpartition("-v")
        newest = -int(version) if stem and version.isdigit() else 0
        name = (stem or k).rpartition("/")[2]  # without a namespace
        named_after = bool(name) and cls.__name__.startswith(name)  # CartPoleEnv: CartPole
        return not k.startswith(f"{cls.__name__}-v"), not named_after, stem or k, newest

    return sorted(found, key=order)[:3]


def _check_id(env_id: str) -> None:
    """Raise UsageError unless ``env_id`` names a registered environment. As in
    ``gym.make``, ``"module:EnvId"`` first imports ``module`` (which registers ``EnvId``):
    the way to train on one's own environment."""
    if not isinstance(env_id, str):
        raise UsageError(_not_an_id(env_id))
    register_envs()
    module, colon, name = env_id.rpartition(":")
    imported = None
    if colon and not module:  # gym.make's "Empty module name", which read as a keywords problem
        raise UsageError(
            f"--env: {env_id!r} has nothing before its ':'; give the id alone ({name!r}) or "
            f"'module:{name}' for an environment that module registers"
        )
    if module.endswith(".py"):  # a file named as on the command line: its module is meant
        stem = Path(module).stem
        raise UsageError(
            f"--env: {module!r} in {env_id!r} is a file; give the module's import name "
            f"(its folder on PYTHONPATH): --env {stem}:{name}"
        )
    if module in _MAIN_AGAIN:  # asked for while that import runs the script's top level
        raise UsageError(
            f"--env: importing module {module!r} of {env_id!r}, the script that runs, ran "
            f"its top-level code again, which uses {env_id!r} itself (trains on it, say) and "
            "would do so a second time: put that code under if __name__ == '__main__': so "
            "that importing the script only registers the environment"
        )
    if module:
        try:
            imported = _import_module(module, env_id)
        except UsageError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure of the user's module, one line
            why = one_line(e)  # a multi-line message kept on one line
            # The console script does not put the current folder on sys.path (python does).
            here = Path(*module.split(".")).with_suffix(".py")
            parts = module.split(".")
            names = {".".join(parts[: i + 1]) for i in range(len(parts))}
            if isinstance(e, ModuleNotFoundError) and e.name in names:  # the module itself
                where = (
                    f"{here} is in the current folder but not on sys.path: run with PYTHONPATH=."
                    if here.is_file()
                    else "is it on PYTHONPATH or installed?"
                )
            elif isinstance(e, ModuleNotFoundError):  # found; a package it needs is not
                where = f"the module was found; it imports {e.name}, which is not installed"
            else:  # found, and its own code failed
                where = (
                    f"the module was found and raised while importing (python -c "
                    f"'import {module}' shows the traceback)"
                )
            raise UsageError(
                f"--env: cannot import module {module!r} of {env_id!r} "
                f"({type(e).__name__}: {why}); {where}"
            ) from None
    if name not in gym.registry:
        cls = getattr(imported, name, None)
        if _is_entry_point(cls):  # a class or a function that makes one: not an id
            what = "a class" if isinstance(cls, type) else "a function"
            ids = _ids_of_class(cls, module)
            if ids:  # registered already (e.g. Corridor as Corridor-v0): its id, as to give
                bare = module.split(".")[0] == "gymnasium"  # Gymnasium's own: no module
                shown = [k if k in OUR_IDS or bare else f"{module}:{k}" for k in ids]
                raise UsageError(
                    f"--env: {name} is {what} in {module!r}, not an id; it is registered as "
                    f"{' and as '.join(repr(k) for k in ids)}: give --env {shown[0]}"
                )
            raise UsageError(
                f"--env: {name} is {what} in {module!r}, not a registered id; register it "
                f"in that module with gymnasium.register(id='{name}-v0', "
                f"entry_point='{module}:{name}') and give --env {module}:{name}-v0"
            )
        ours = ", ".join([*OUR_IDS, "LunarLander-v3"])
        hint = f" (importing {module!r} did not register it)" if module else ""
        stem = re.sub(r"-v\d+$", "", name)  # Name-v0 of an entry point Name it does not register
        entry = getattr(imported, stem, None) if module and stem != name else None
        if _is_entry_point(entry) and not _ids_of_class(entry, module):
            raise UsageError(
                f"--env: unknown environment {env_id!r}{hint}; it defines {stem}: register "
                f"it there with gymnasium.register(id={name!r}, entry_point='{module}:{stem}')"
            )
        same_game = _our_id_for(name)
        if same_game is not None and not module:
            raise UsageError(
                f"--env: unknown environment {env_id!r}; did you mean {same_game}"
                f"{_V1_HINT if name.endswith('-v1') and 'MinAtar' in same_game else ''}? "
                "('maxminq envs' lists the paper's ids)"
            )
        # The id without its version (Name for Name-v0) or its namespace (Name-v0 for
        # acme/Name-v0, as gymnasium.register(id="acme/Name-v0") names it) first: too short,
        # or too far off, for difflib's cutoff.
        pattern = rf"(?:[^/]+/)?{re.escape(name)}(?:-v\d+)?"
        close = [k for k in gym.registry if re.fullmatch(pattern, k, re.IGNORECASE)][:3]
        close = close or difflib.get_close_matches(name, list(gym.registry), n=3, cutoff=0.8)
        if close:  # another version or a typo: LunarLander-v2 -> LunarLander-v3
            # With the module named, as the user must give it again: a bare id its import
            # registered is unknown in a new process.
            close = [f"{module}:{c}" if module else c for c in close]
            raise UsageError(
                f"--env: unknown environment {env_id!r}{hint}; did you mean "
                f"{' or '.join(close)}? ('maxminq envs' lists the paper's ids)"
            )
        raise UsageError(
            f"--env: unknown environment {env_id!r}{hint}; expected one of {ours}, any "
            "registered Gymnasium id (e.g. CartPole-v1; gymnasium.pprint_registry() lists them) or "
            "'module:EnvId' for an environment that module registers"
        )


class _SeedFirstReset(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Uses ``seed`` at the first ``reset()`` that gives none; later resets continue the stream.

    It records its ``seed`` (``RecordConstructorArgs``) so that ``env.spec`` can be made
    again (``gym.make(env.spec)``, ``check_env``'s render and close checks): without, that
    raised "_SeedFirstReset wrapper does not inherit from RecordConstructorArgs".
    """

    def __init__(self, env: gym.Env, seed: int) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, seed=seed)
        gym.Wrapper.__init__(self, env)
        self._first_seed: int | None = seed
        env.action_space.seed(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Reset, injecting the construction seed the first time if none is given."""
        if seed is None:
            seed = self._first_seed
        self._first_seed = None
        return self.env.reset(seed=seed, options=options)


class _CheckedSyncVectorEnv(SyncVectorEnv):
    """SyncVectorEnv that checks a Discrete(n) action batch as a whole before any sub-env
    steps (a sub-env's own check would fire after the sub-envs before it had moved), and
    takes the seeds the native Catcher/Pixelcopter vector envs take."""

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        """Reset as ``SyncVectorEnv``, with ``seed`` a NumPy integer or array too (Gymnasium
        failed on those: "object of type 'numpy.int64' has no len()", "Seed must be a
        python integer"); ValueError naming ``seed`` for anything else."""
        return super().reset(seed=check_vector_seed(seed, self.num_envs), options=options)

    def step(self, actions: Any) -> Any:
        """Check ``actions`` (ValueError naming the bad one), then step every sub-env."""
        space = self.single_action_space
        if isinstance(space, gym.spaces.Discrete) and space.start == 0:
            actions = check_actions(actions, int(space.n), self.num_envs)
        return super().step(actions)


def _check_fixed_kwargs(env_id: str, kwargs: dict[str, Any]) -> None:
    """Refuse a ``game`` keyword for our MinAtar ids: Gymnasium would let it replace the
    registered game, so e.g. Breakout's id would silently play (and store runs of) Freeway."""
    if env_id.rpartition(":")[2] in MINATAR_IDS and "game" in kwargs:
        raise ValueError(
            f"game is fixed by the id {env_id}; name another game by its id "
            f"({', '.join(MINATAR_IDS)})"
        )


def make(
    env_id: str,
    *,
    seed: int | None = None,
    max_episode_steps: int | None = None,
    **kwargs: Any,
) -> gym.Env:
    """Build one environment.

    Args:
        env_id: ``maxminq/Catcher-v0``, ``maxminq/Pixelcopter-v0``,
            ``maxminq/MinAtar-<Game>-v0`` or any Gymnasium id (``LunarLander-v3``, ...).
        seed: used by the first ``reset()`` that passes no seed (and seeds the action space).
        max_episode_steps: override the registered episode cap (None keeps it).
        **kwargs: passed to the environment (e.g. ``normalize=True``, ``render_mode``,
            ``sticky_action_prob``, ``minimal_action_set``).

    Raises:
        UsageError: unknown ``env_id``.
        ValueError: ``max_episode_steps`` not None nor a positive integer (Gymnasium's
            ``-1`` would silently remove the time limit); ``seed`` not None nor a
            non-negative integer; a ``game`` keyword for a MinAtar id (the id names its game).
    """
    _check_id(env_id)
    max_episode_steps = check_cap(max_episode_steps)
    seed = None if seed is None else check_seed(seed)
    _check_fixed_kwargs(env_id, kwargs)
    env = gym.make(env_id, max_episode_steps=max_episode_steps, **kwargs)
    if seed is not None:
        env = _SeedFirstReset(env, seed)
    return env


#: What a constructor raises when it refuses a keyword or its value (a ``KeyError`` for a
#: name its table lacks, e.g. ``level="medium"``).
REFUSALS = (TypeError, ValueError, AssertionError, LookupError)


# Gymnasium re-raises what an environment's constructor raised as the same type, with this
# and the id and all its keywords appended (``from`` the original).
_CREATOR_SUFFIX = " was raised from the environment creator for "


def creator_error(err: BaseException) -> BaseException:
    """The constructor's own exception behind Gymnasium's re-raised ``err`` (whose text
    repeats the keywords that our one-line error already quotes), else ``err``."""
    cause = err.__cause__
    if cause is not None and type(cause) is type(err) and _CREATOR_SUFFIX in str(err):
        return cause
    return err


def creator_parameters(env_id: str) -> tuple[Any, list[inspect.Parameter]] | None:
    """The registered spec of ``env_id`` (an id already in Gymnasium's registry: nothing is
    imported to find it) and the parameters of its entry point, loaded as ``gym.make``
    loads it; None for an id not registered or an entry point that does not load or cannot
    be inspected. What a constructor takes by name and its defaults, for the hints of
    :func:`make_with_kwargs` and ``maxminq.analysis.compare.environment_defaults``."""
    from gymnasium.envs.registration import load_env_creator

    spec = gym.registry.get(env_id)
    if spec is None:
        return None
    try:
        entry = spec.entry_point
        creator: Any = load_env_creator(entry) if isinstance(entry, str) else entry
        return spec, list(inspect.signature(creator).parameters.values())
    except Exception:  # noqa: BLE001 - not told: a caller falls back to saying less
        return None


def _keywords_hint(env_id: str) -> str:
    """`` (its keywords: a, b)``: what the constructor of ``env_id`` takes by name, besides
    ``render_mode`` (``evaluate --gif``'s) and those its id fixes (MinAtar's ``game``); ''
    if that cannot be told (a creator taking ``**kwargs``, one that cannot be inspected)."""
    found = creator_parameters(env_id.rpartition(":")[2])
    if found is None:  # only a hint: none rather than another error
        return ""
    spec, params = found
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return ""
    fixed = {"render_mode", *(spec.kwargs or {})}
    names = [p.name for p in params if p.kind in named and p.name not in fixed]
    return f" (its keywords: {', '.join(names)})" if names else " (it takes no keywords)"


def _requires_render_mode(err: BaseException) -> bool:
    """Whether ``err`` is a constructor's complaint that it was called without its required
    ``render_mode`` argument (``missing 1 required positional argument: 'render_mode'``)."""
    missing = r"missing \d+ required (positional|keyword-only) arguments?: .*'render_mode'"
    return isinstance(err, TypeError) and re.search(missing, str(err)) is not None


def make_with_kwargs(env_id: str, env_kwargs: dict[str, Any] | None, **extra: Any) -> gym.Env:
    """:func:`make` with the user's keywords ``env_kwargs`` (``--env-kwargs``) and ``extra``
    ones (e.g. ``max_episode_steps``, ``render_mode``): an environment that refuses them
    (one of :data:`REFUSALS`) is a UsageError naming ``--env-kwargs``; without any, its
    error propagates (the caller knows what else it asked for). A package the environment
    needs and lacks (Gymnasium's ``DependencyNotInstalled``, e.g. box2d for LunarLander), or
    any other of Gymnasium's errors (e.g. an entry point that makes a deprecated id), is a
    UsageError naming ``--env``."""
    kwargs = dict(env_kwargs or {})
    try:
        return make(env_id, **kwargs, **extra)
    except UsageError:  # an unknown id: already one line naming --env
        raise
    except gym.error.Error as err:  # Gymnasium's own refusal, e.g. from an entry point of
        # the user's that makes a deprecated or unknown id (DeprecatedEnv: "use Taxi-v4")
        own = creator_error(err)
        why = one_line(own) or type(own).__name__
        if not isinstance(own, gym.error.DependencyNotInstalled):  # that one says it all
            why = f"{type(own).__name__}: {why}"
        raise UsageError(f"--env: {env_id} cannot be built: {why}") from None
    except REFUSALS as err:
        own = creator_error(err)
        if "render_mode" not in extra and _requires_render_mode(own):
            # "pass them with --env-kwargs" would be refused: render_mode is not one of them.
            raise UsageError(
                f"--env: {env_id}'s constructor requires render_mode; give it a default, "
                "render_mode=None, as Gymnasium's environments do (maxminq trains without "
                "rendering; maxminq evaluate --gif asks for render_mode='rgb_array')"
            ) from None
        if not kwargs:
            raise
        why = one_line(own) or repr(own)
        if isinstance(own, LookupError):  # str(KeyError('medium')) is just 'medium'
            why = f"{type(own).__name__}: {why}"
        if isinstance(own, TypeError) and "unexpected keyword argument" in why:
            why += _keywords_hint(env_id)
        raise UsageError(f"--env-kwargs: {env_id} refused {json.dumps(kwargs)}: {why}") from None


def make_vector(env_id: str, seeds: Sequence[int] | np.ndarray, **kwargs: Any) -> VectorEnv:
    """Build ``len(seeds)`` copies of ``env_id`` as one VectorEnv with same-step autoreset.

    Sub-env i uses ``seeds[i]`` at the first ``reset()`` and continues its own stream after,
    so its trajectory under a fixed action sequence does not depend on the other sub-envs.
    Catcher and Pixelcopter use their native batched kernels (with the per-slot episode
    cap); every other id uses ``SyncVectorEnv``. A ``Discrete`` action batch is checked as a
    whole before any sub-env moves: ``ValueError`` unless ``num_envs`` integers in range.

    Args:
        env_id: as for :func:`make`.
        seeds: one non-negative integer seed per sub-env (a list, range or NumPy array);
            their number is the number of sub-envs (a ``num_envs`` keyword is refused).
        **kwargs: ``max_episode_steps`` and env keyword arguments, as for :func:`make`;
            ``autoreset_mode`` may only say ``SAME_STEP`` (UsageError otherwise).
    """
    _check_id(env_id)
    if "seed" in kwargs:  # was functools.partial's "got multiple values for keyword 'seed'"
        raise UsageError(
            f"seed: make_vector takes one seed per sub-env in seeds (e.g. seeds=range(4)), "
            f"not seed={kwargs['seed']!r}"
        )
    if "num_envs" in kwargs:  # Catcher/Pixelcopter ignored it; other ids' constructors failed
        raise UsageError(
            f"num_envs: make_vector makes one sub-env per seed in seeds (e.g. "
            f"seeds=range({kwargs['num_envs']!r})), not num_envs={kwargs['num_envs']!r}"
        )
    if "autoreset_mode" in kwargs:  # was passed on to the environment's constructor
        mode = kwargs.pop("autoreset_mode")
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.SAME_STEP.value):
            said = f"AutoresetMode.{mode.name}" if isinstance(mode, AutoresetMode) else repr(mode)
            raise UsageError(
                f"autoreset_mode: make_vector's vector envs reset a finished sub-env in the "
                f"same step (AutoresetMode.SAME_STEP), not {said}; for another mode build "
                f"gymnasium.make_vec({env_id!r}, num_envs=n, vector_kwargs="
                f"{{'autoreset_mode': {said}}}) (a SyncVectorEnv of the same games, seeded by "
                "its reset(seed=...))"
            )
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__"):
        raise UsageError(f"seeds must be a list of non-negative integers, got {seeds!r}")
    if len(seeds) == 0:
        raise UsageError("--seeds: need at least one seed")
    seeds = [check_seed(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
    _check_fixed_kwargs(env_id, kwargs)
    bare = env_id.rpartition(":")[2]  # "maxminq.envs:maxminq/Catcher-v0" is Catcher too
    if bare in (CATCHER_ID, PIXELCOPTER_ID):
        cap = kwargs.pop("max_episode_steps", None)
        cap = CAPS[bare] if cap is None else cap  # checked by the vector env
        cls: type[GameVectorEnv]
        if bare == CATCHER_ID:
            from maxminq.envs.catcher import CatcherVectorEnv as cls
        else:
            from maxminq.envs.pixelcopter import PixelcopterVectorEnv as cls
        return cls(seeds=seeds, max_episode_steps=cap, **kwargs)

    # partial, not a lambda: the vector env keeps its factories, and pickle (multiprocessing,
    # copies) refuses lambdas.
    fns: list[Callable[[], gym.Env]] = [partial(make, env_id, seed=s, **kwargs) for s in seeds]
    return _CheckedSyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP, copy=True)
