"""``maxminq envs``: list the environment ids and their paper defaults."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from maxminq.errors import UsageError

if TYPE_CHECKING:
    from maxminq.envs.registry import EnvDefaults


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
    lines.append("maxminq envs --env ID: one id's observation, actions and every default.")
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
    env_kwargs = json_object(args.env_kwargs, "--env-kwargs")
    _refuse_kwargs_train_refuses(args.env, env_kwargs)
    d = get_env_defaults(args.env, env_kwargs)
    _refuse_what_train_refuses(d, env_kwargs)
    if args.format == "json":
        print(json.dumps(d.as_dict(), indent=2))
    else:
        print(defaults_text(d, *_built_facts(d, env_kwargs)))
    return 0


def _built_facts(d: EnvDefaults, env_kwargs: dict | None) -> tuple[int | None, list[str]]:
    """From the environment built as a run builds it (``d``'s keywords, the paper's and
    ``env_kwargs``): the bytes one seed's replay buffer takes once full at ``d``'s
    ``--buffer-size``, as training lays it out (its observations as they are stored:
    MinAtar's as uint8), and :func:`spaces_lines`; (None, []) if it cannot be built here."""
    from maxminq.deep.train import replay_bytes
    from maxminq.envs.api import make_with_kwargs

    try:
        env = make_with_kwargs(d.env_id, {**d.env_kwargs, **(env_kwargs or {})})
    except Exception:  # e.g. a package not installed here: the listing goes on without
        return None, []
    try:
        return replay_bytes(env.observation_space, 1, d.buffer_size), spaces_lines(env)
    finally:
        env.close()


def spaces_lines(env: Any) -> list[str]:
    """What ``env`` gives and takes, one line each: the observation's shape and dtype (and
    the names of its features or channels, for ours: ``observation_names``), the number of
    actions (and what each does, for ours: ``action_names``). Names are those of our games
    only (attributes of those names on an environment of one's own mean nothing to us),
    and only while the wrappers around the game keep its shape or its actions (a
    ``FlattenObservation`` of MinAtar has no channels)."""
    import gymnasium as gym

    from maxminq.envs._game import GameEnv
    from maxminq.envs.minatar import MinAtarEnv
    from maxminq.envs.registry import space_text

    base = env.unwrapped
    obs, act = env.observation_space, env.action_space
    ours = isinstance(base, (GameEnv, MinAtarEnv))
    same_shape = ours and obs.shape == base.observation_space.shape
    names = base.observation_names if same_shape else None
    if isinstance(obs, gym.spaces.Box):
        what = f"{tuple(int(n) for n in obs.shape)} {obs.dtype}"
        if names is not None and len(obs.shape) == 3:
            what += ", channels first"
    else:
        what = space_text(obs)
    if names is not None:
        what += f" ({', '.join(names)})"
    if isinstance(base, GameEnv) and base.normalize:  # Catcher / Pixelcopter's option
        what += ", normalised"
    acts = base.action_names if ours and act == base.action_space else None
    if isinstance(act, gym.spaces.Discrete) and int(act.start) == 0:
        does = f"{int(act.n)}" + (f" ({', '.join(acts)})" if acts is not None else "")
    else:
        does = space_text(act)
    return [f"observation: {what}", f"actions: {does}"]


def _refuse_kwargs_train_refuses(env_id: str, env_kwargs: dict | None) -> None:
    """UsageError, in train's words, for ``--env-kwargs`` that 'maxminq train' refuses
    before building anything: ``max_episode_steps`` and ``seed`` (options of their own) and
    ``render_mode``. Listed, they read as a run's keywords beside a ``--max-episode-steps``
    they do not change, and ``render_mode="human"`` opened a window for the listing."""
    if not env_kwargs:
        return
    from maxminq.deep.config import TrainConfig

    TrainConfig(env_id=env_id, env_kwargs=env_kwargs)._check_env_kwargs()


def _refuse_what_train_refuses(d: EnvDefaults, env_kwargs: dict | None) -> None:
    """UsageError for an environment that 'maxminq train --env ID' refuses at these
    defaults (its listing would be of a command that cannot run): actions that are not
    ``Discrete(n)`` from 0, or observations its network cannot read (a channels-last image
    given the MinAtar network), each with what to do, as train says it. A paper id is
    checked only with ``env_kwargs`` (``LunarLander-v3`` with ``{"continuous": true}`` has
    Box actions), built with the paper's keywords under them, as a run builds it."""
    from maxminq.envs.registry import PAPER_ENVS

    if d.env_id in PAPER_ENVS and not env_kwargs:
        return
    from maxminq.deep.config import TrainConfig
    from maxminq.deep.env_checks import check_action_space
    from maxminq.envs.api import make_with_kwargs

    # A second build: get_env_defaults keeps none.
    env = make_with_kwargs(d.env_id, {**d.env_kwargs, **(env_kwargs or {})})
    try:
        space, obs_space = env.action_space, env.observation_space
    finally:
        env.close()
    env_id = d.env_id
    refused = f"--env: 'maxminq train --env {env_id}' refuses it"
    try:
        check_action_space(space, env_id)  # train's own check, in its words
    except UsageError as err:
        raise UsageError(f"{refused}: {str(err).removeprefix('--env: ')}") from None
    shape = tuple(int(n) for n in obs_space.shape or ())  # 1-D or 3-D: get_env_defaults checked
    try:
        TrainConfig(env_id=env_id, network=d.network).check_observation_shape(shape)
    except UsageError as err:  # e.g. channels last: '--network: minatar_cnn needs ...'
        raise UsageError(f"{refused} at its default {err}") from None


#: Keywords of our games that change how an observation or frame is stored or drawn, not
#: the game (MinAtar's 0/1 cells as float32; the pixels per cell of its frames).
_PRESENTATION_KWARGS = frozenset({"obs_dtype", "render_scale"})


def _unread_kwargs(env_id: str, env_kwargs: dict[str, Any], fixed: dict[str, Any]) -> set[str]:
    """Keywords a paper id's game does not read under the other settings (``fixed``: the
    id's own, e.g. MinAtar's ``game``), so no value of theirs changes it:
    ``difficulty_ramping`` on a MinAtar game without a ramp (Breakout),
    ``minimal_action_set`` where that set is all 6 actions (Seaquest), LunarLander's
    ``wind_power`` and ``turbulence_power`` without ``enable_wind``."""
    from maxminq.envs.minatar import GAMES, unread_options

    if fixed.get("game") in GAMES:
        return set(unread_options(fixed["game"]))
    if env_id.startswith("LunarLander") and not env_kwargs.get("enable_wind", False):
        return {"wind_power", "turbulence_power"}
    return set()


def _game_kwargs_changed(d: EnvDefaults) -> list[str]:
    """The keywords of ``d.env_kwargs`` (the paper's merged with ``--env-kwargs``) that
    make a paper id's game another than the paper's, as ``key=value (the paper's: value)``:
    a value other than the paper's keyword (Catcher's ``normalize=True``) or, for a keyword
    the paper leaves alone, the constructor's default (MinAtar's ``sticky_action_prob``
    0.1, as MinAtar's and the authors')."""
    import inspect

    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    from maxminq.envs.registry import PAPER_ENVS

    paper = PAPER_ENVS[d.env_id].env_kwargs
    spec = gym.spec(d.env_id)
    entry: Any = spec.entry_point
    creator = load_env_creator(entry) if isinstance(entry, str) else entry
    params = inspect.signature(creator).parameters if callable(creator) else {}
    out = []
    unread = _unread_kwargs(d.env_id, d.env_kwargs, spec.kwargs or {})
    for key, value in d.env_kwargs.items():
        if key in _PRESENTATION_KWARGS or key in unread:
            continue
        if key in paper:
            was = paper[key]
        elif key in (spec.kwargs or {}):
            was = spec.kwargs[key]
        elif key in params and params[key].default is not inspect.Parameter.empty:
            was = params[key].default
        else:
            continue  # nothing to compare with
        if value != was:  # as Python compares: 0 vs 0.0 vs false, the same
            out.append(f"{key}={json.dumps(value)} (the paper's: {json.dumps(was)})")
    return out


def _cap_text(d: EnvDefaults) -> str:
    """The default ``--max-episode-steps`` as ``maxminq envs --env ID`` says it. Without a
    registered cap an environment may still end its episodes itself: ours say how (Freeway
    at its own timer's end, the other games at game over); of another environment only
    running it would tell, which this listing does not do."""
    from maxminq.analysis.style import integer
    from maxminq.envs.api import OWN_TIME_LIMITS
    from maxminq.envs.registry import PAPER_ENVS

    if d.max_episode_steps is not None:
        return integer(d.max_episode_steps)
    if d.env_id in OWN_TIME_LIMITS:
        steps = integer(OWN_TIME_LIMITS[d.env_id])
        return f"none (the game truncates its episodes itself at {steps} steps: its timer)"
    if d.env_id in PAPER_ENVS:
        return "none (no time limit: episodes end at game over)"
    return (
        "none registered (no time limit unless the environment truncates its episodes "
        "itself; --max-episode-steps sets one)"
    )


def _memory_text(replay_bytes: int | None) -> str:
    """What ``--buffer-size``'s row adds: the memory of one seed's full buffer."""
    if replay_bytes is None:
        return ""
    from maxminq.deep.train import size_text

    return f" ({size_text(replay_bytes)} of memory per seed once full; checkpoints hold it)"


def defaults_text(
    d: EnvDefaults, replay_bytes: int | None = None, env_lines: Sequence[str] = ()
) -> str:
    """One id's defaults as ``maxminq envs --env ID`` prints them: each under the name of the
    ``maxminq train`` option it is the default of (the registry's field names, ``train_steps``
    or ``target_update``, and Python reprs of its dicts were what the command once printed),
    then ``--lr`` / ``--n`` per agent and the paper's sweep. ``replay_bytes``: what one
    seed's full replay buffer takes, said beside ``--buffer-size`` (None: not said);
    ``env_lines``: what the environment gives and takes (:func:`spaces_lines`), said under
    the first lines."""
    from maxminq.analysis.style import integer
    from maxminq.envs.registry import PAPER_ENVS

    def num(v: float | int | None) -> str:
        if v is None:
            return "none"
        return integer(v) if isinstance(v, int) and not isinstance(v, bool) else f"{v:g}"

    from maxminq.deep.config import (
        AGENT_NAMES,
        default_bias_every,
        default_checkpoint_every,
        default_lr_n,
    )

    kwargs = json.dumps(d.env_kwargs) if d.env_kwargs else "none"
    steps = d.train_steps
    options = [
        ("--steps", integer(steps)),
        ("--max-episode-steps", _cap_text(d)),
        ("--network", d.network),
        ("--hidden", ",".join(str(h) for h in d.hidden)),
        ("--buffer-size", integer(d.buffer_size) + _memory_text(replay_bytes)),
        ("--batch-size", integer(d.batch_size)),
        ("--gamma", num(d.gamma)),
        ("--target-update", integer(d.target_update)),
        ("--learning-starts", integer(d.learning_starts)),
        ("--eps-start", num(d.eps_start)),
        ("--eps-end", num(d.eps_end)),
        ("--eps-decay-steps", integer(d.eps_decay_steps)),
        ("--loss", d.loss),
        ("--grad-clip", num(d.grad_clip)),
        ("--optimizer", d.optimizer),
        (
            "--optimizer-kwargs",
            json.dumps(d.optimizer_kwargs) if d.optimizer_kwargs else "none (torch's defaults)",
        ),  # fmt: skip
        ("--env-kwargs", kwargs),
        ("--eval-episodes", integer(d.eval_episodes)),
        ("--eval-eps", num(d.eval_eps)),
        ("--bias-every", f"{integer(default_bias_every(steps))} (max(1,000, steps / 200))"),
        (
            "--checkpoint-every",
            f"{integer(default_checkpoint_every(steps))} (max(10,000, steps / 20))",
        ),  # fmt: skip
    ]
    changed = _game_kwargs_changed(d) if d.paper else []
    if changed:  # e.g. MinAtar without sticky actions: not the paper's game
        head = [
            f"{d.env_id}: a paper environment, the paper's settings, but keywords other "
            f"than the paper's game's: {', '.join(changed)}"
        ]
    elif d.paper:
        head = [f"{d.env_id}: a paper environment, the paper's settings"]
    elif d.env_id in PAPER_ENVS:  # offered beside the paper's games, with their settings
        kind = "MinAtar" if d.network == "minatar_cnn" else "feature-environment"
        head = [
            f"{d.env_id}: not in the paper, offered with the paper's {kind} settings",
            "(the step sizes and N are assumed)",
        ]
    else:
        head = [
            f"{d.env_id}: not a paper environment, so the paper's feature-environment settings",
            "with LunarLander-v3's step sizes and N (an assumption)",
        ]
    lines = [
        *head,
        *env_lines,
        "",
        f"what 'maxminq train --env {d.env_id}' uses for an option not given:",
    ]
    width = max(len(o) for o, _ in options)
    lines += [f"  {o:<{width}}  {v}" for o, v in options]
    lines += [
        "",
        "and per --agent (default maxmin-dqn), --lr and --n (N of Maxmin, Ensemble and",
        "Generalized DQN, K of Averaged DQN):",
    ]
    named = max(len(a) for a in AGENT_NAMES)  # generalized-dqn once stood out of line
    for agent in AGENT_NAMES:
        lr, n = default_lr_n(d, agent)
        if agent in ("ensemble-dqn", "generalized-dqn"):
            note = "  (Maxmin DQN's: no posted setting)"
        elif d.paper and d.best_source.get(agent) == "assumed":
            note = "  (assumed: not posted by the authors)"
        else:
            note = ""
        lines.append(f"  {agent:<{named}}  --lr {lr:<7g} --n {n}{note}")
    lines += [
        "",
        f"the paper's sweep: --lr {', '.join(f'{v:g}' for v in d.lr_sweep)}",
        f"  and --n {', '.join(str(v) for v in d.n_sweep)}; {d.runs} runs per setting",
        "(--format json: the registry's fields)",
    ]
    return "\n".join(lines)
