"""Paper defaults per environment id: network, training length, sweep and DQN settings.

One :class:`EnvDefaults` per environment used in the paper (Lan et al., ICLR 2020, Sec. 5,
"Results on Benchmark Environments"; its appendix adds only the sensitivity plots), so
``maxminq train --env maxminq/Catcher-v0 --agent maxmin-dqn`` needs no further flags.
Values come from the paper, from the authors' public code, and (for MinAtar) from the
MinAtar paper's DQN (Young and Tian, 2019), whose settings the paper reuses.

``best`` holds the step size / N the authors later posted as their best settings. Where they
posted nothing (every MinAtar agent except DQN, and N for Maxmin outside Asterix), the value
is our assumption and ``best_source[agent] == "assumed"``.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from maxminq.envs.api import (
    CAPS,
    CATCHER_ID,
    PIXELCOPTER_ID,
    REFUSALS,
    _not_an_id,
    creator_error,
    make_with_kwargs,
)
from maxminq.errors import UsageError, one_line

Network = Literal["mlp", "minatar_cnn"]
Loss = Literal["mse", "huber"]
Optimizer = Literal["rmsprop", "centered_rmsprop", "adam"]

AGENTS: tuple[str, ...] = ("dqn", "ddqn", "averaged-dqn", "maxmin-dqn")

#: Step-size sweeps stated in the paper (Sec. 5, "Results on Benchmark Environments").
LR_SWEEP_LUNAR: tuple[float, ...] = (3e-3, 1e-3, 3e-4, 1e-4, 3e-5)
LR_SWEEP_PLE: tuple[float, ...] = (1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
LR_SWEEP_MINATAR: tuple[float, ...] = (3e-3, 1e-3, 3e-4, 1e-4, 3e-5)
#: Number of estimators swept for Maxmin / Averaged DQN.
N_SWEEP: tuple[int, ...] = tuple(range(2, 10))
#: The paper's hidden layers per network, the one source of these sizes (``deep.config``
#: reads them): the MLP's [64, 64] (Sec. 5) and the one fully connected layer of 128
#: after the MinAtar network's convolution (Young and Tian 2019).
NETWORK_HIDDEN: dict[str, tuple[int, ...]] = {"mlp": (64, 64), "minatar_cnn": (128,)}


@dataclass(frozen=True)
class EnvDefaults:
    """Paper settings for training DQN-family agents on one environment.

    Attributes:
        env_id: Gymnasium id accepted by :func:`maxminq.envs.make`.
        network: ``"mlp"`` or ``"minatar_cnn"`` (conv 16 3x3 -> one fully connected layer).
        train_steps: environment steps (frames) of one training run.
        max_episode_steps: episode cap (truncation, not termination); None = no cap.
        lr_sweep: step sizes swept in the paper.
        n_sweep: numbers of estimators swept for Maxmin / Averaged DQN.
        buffer_size, batch_size, gamma, target_update: replay and target-network settings.
        eps_start, eps_end, eps_decay_steps: linear epsilon schedule, starting after
            ``learning_starts`` purely random steps.
        learning_starts: random steps before learning and epsilon decay begin.
        loss: ``"mse"`` or ``"huber"`` (SmoothL1).
        grad_clip: max gradient norm, or None.
        optimizer, optimizer_kwargs: torch optimizer name and its keyword arguments (lr excluded).
        best: agent name -> ``{"lr": ..., "n": ...}``; ``n`` is None for single-net agents.
        best_source: agent name -> ``"authors"`` (posted by the paper's authors) or ``"assumed"``.
        hidden: the MLP's hidden layer sizes, or the MinAtar network's one width (128).
        eval_episodes, eval_eps: test episodes after training and their epsilon.
        runs: independent runs per configuration in the paper.
        env_kwargs: keyword arguments passed to ``make`` for the paper setting.
        paper: True for the environments of the paper (False for fallbacks).
    """

    env_id: str
    network: Network
    train_steps: int
    max_episode_steps: int | None
    lr_sweep: tuple[float, ...]
    buffer_size: int
    batch_size: int
    gamma: float
    target_update: int
    eps_start: float
    eps_end: float
    eps_decay_steps: int
    learning_starts: int
    loss: Loss
    grad_clip: float | None
    optimizer: Optimizer
    optimizer_kwargs: dict[str, Any] = field(default_factory=dict)
    best: dict[str, dict[str, Any]] = field(default_factory=dict)
    best_source: dict[str, str] = field(default_factory=dict)
    n_sweep: tuple[int, ...] = N_SWEEP
    hidden: tuple[int, ...] = NETWORK_HIDDEN["mlp"]
    eval_episodes: int = 100
    eval_eps: float = 0.01
    runs: int = 20
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    paper: bool = True

    def as_dict(self) -> dict[str, Any]:
        """Plain-dict copy (for JSON / YAML output)."""
        return dataclasses.asdict(self)


def _best(
    dqn: float, ddqn: float, avg: tuple[float, int], mm: tuple[float, int]
) -> dict[str, dict[str, Any]]:
    return {
        "dqn": {"lr": dqn, "n": None},
        "ddqn": {"lr": ddqn, "n": None},
        "averaged-dqn": {"lr": avg[0], "n": avg[1]},
        "maxmin-dqn": {"lr": mm[0], "n": mm[1]},
    }


_AUTHORS = dict.fromkeys(AGENTS, "authors")


def _feature(
    env_id: str,
    train_steps: int,
    cap: int | None,
    lr_sweep: tuple[float, ...],
    best: dict[str, dict[str, Any]],
    best_source: dict[str, str],
    paper: bool = True,
    env_kwargs: dict[str, Any] | None = None,
) -> EnvDefaults:
    """Feature-env settings of the paper: MLP [64, 64], RMSprop, clip 5, MSE, target 200."""
    return EnvDefaults(
        env_id=env_id,
        network="mlp",
        train_steps=train_steps,
        max_episode_steps=cap,
        lr_sweep=lr_sweep,
        buffer_size=10_000,
        batch_size=32,
        gamma=0.99,
        target_update=200,
        eps_start=1.0,
        eps_end=0.01,
        eps_decay_steps=1_000,
        learning_starts=1_000,
        loss="mse",
        grad_clip=5.0,
        optimizer="rmsprop",
        optimizer_kwargs={},
        best=best,
        best_source=best_source,
        paper=paper,
        env_kwargs=env_kwargs or {},
    )


def _minatar(game: str, dqn_lr: float, paper: bool) -> EnvDefaults:
    """MinAtar paper DQN settings (Young and Tian 2019), as the paper prescribes."""
    # Only DQN's step size was posted for MinAtar; the others reuse it (assumed). For Maxmin
    # the authors suggested N = 4 and a step size larger than DQN's on Asterix: one notch up.
    i = LR_SWEEP_MINATAR.index(dqn_lr)
    mm_lr = LR_SWEEP_MINATAR[max(i - 1, 0)]
    best = _best(dqn_lr, dqn_lr, (dqn_lr, 2), (mm_lr, 4))
    # Asterix's Maxmin: N = 4 was suggested, the step size was not, so it is "assumed" too.
    source = {**dict.fromkeys(AGENTS, "assumed"), "dqn": "authors"}
    env_id = f"maxminq/MinAtar-{game}-v0"
    return EnvDefaults(
        env_id=env_id,
        network="minatar_cnn",
        train_steps=5_000_000,
        max_episode_steps=CAPS.get(env_id),
        lr_sweep=LR_SWEEP_MINATAR,
        buffer_size=100_000,
        batch_size=32,
        gamma=0.99,
        target_update=1_000,
        eps_start=1.0,
        eps_end=0.1,
        eps_decay_steps=100_000,
        learning_starts=5_000,
        loss="huber",
        grad_clip=None,
        optimizer="centered_rmsprop",
        optimizer_kwargs={"alpha": 0.95, "eps": 0.01},
        best=best,
        best_source=source,
        hidden=NETWORK_HIDDEN["minatar_cnn"],
        paper=paper,
    )


def _build() -> dict[str, EnvDefaults]:
    envs = [
        _feature(
            CATCHER_ID,
            3_500_000,
            CAPS[CATCHER_ID],
            LR_SWEEP_PLE,
            _best(1e-4, 1e-4, (1e-4, 2), (3e-4, 6)),
            _AUTHORS,
            # The authors' Catcher (gym-games' CatcherEnv, made by gym.make("Catcher-PLE-v0"))
            # normalises its state by default; on raw pixel coordinates Maxmin DQN N = 6 at
            # its posted step size collapses (docs/deep-results.md).
            env_kwargs={"normalize": True},
        ),
        _feature(
            PIXELCOPTER_ID,
            2_000_000,
            CAPS[PIXELCOPTER_ID],
            LR_SWEEP_PLE,
            _best(3e-5, 3e-5, (3e-5, 7), (3e-4, 6)),
            _AUTHORS,
        ),
        _feature(
            "LunarLander-v3",
            1_500_000,
            1_000,
            LR_SWEEP_LUNAR,
            _best(3e-4, 3e-4, (3e-4, 4), (1e-3, 3)),
            _AUTHORS,
        ),
        _minatar("Asterix", 1e-4, True),
        _minatar("Breakout", 1e-3, True),
        _minatar("Seaquest", 1e-4, True),
        _minatar("SpaceInvaders", 3e-4, True),
        # Freeway is not in the paper; offered with the same MinAtar settings.
        _minatar("Freeway", 1e-4, False),
    ]
    return {e.env_id: e for e in envs}


#: Paper defaults keyed by environment id.
PAPER_ENVS: dict[str, EnvDefaults] = _build()


def get_env_defaults(env_id: str, env_kwargs: dict[str, Any] | None = None) -> EnvDefaults:
    """Defaults for ``env_id``: the paper's if listed, else the feature-env defaults.

    For a paper id, ``env_kwargs`` (if any) must build the environment and are merged over
    the paper's own ``env_kwargs`` in the answer (the keywords a run with them uses).

    For an id outside :data:`PAPER_ENVS` (e.g. ``CartPole-v1``) the environment is built once,
    with ``env_kwargs`` (``--env-kwargs``: one's own environment may need some), to read its
    observation shape (1-D -> ``"mlp"``, 3-D -> ``"minatar_cnn"``) and episode cap; the other
    values are the paper's feature-env settings with LunarLander's step-size sweep and best
    settings (an assumption, marked ``paper=False``).

    Raises:
        UsageError: if ``env_id`` is not a known Gymnasium id, or cannot be built with
            ``env_kwargs``.
    """
    if not isinstance(env_id, str):  # an EnvSpec (unhashable) failed the lookup below
        raise UsageError(_not_an_id(env_id))
    if env_id in PAPER_ENVS:
        d = PAPER_ENVS[env_id]
        if not env_kwargs:
            return d
        # The user's keywords override the paper's (as a run merges them): check they build
        # and show what such a run uses, rather than the registry's keywords alone.
        paper_only = {k: v for k, v in d.env_kwargs.items() if k not in env_kwargs}
        make_with_kwargs(env_id, env_kwargs, **paper_only).close()  # names the user's only
        return dataclasses.replace(d, env_kwargs={**d.env_kwargs, **env_kwargs})
    try:
        env = make_with_kwargs(env_id, env_kwargs)  # refused keywords: a UsageError already
    except UsageError:
        raise
    except REFUSALS as err:  # e.g. a required keyword missing
        why = one_line(creator_error(err)) or type(err).__name__
        raise UsageError(
            f"--env: {env_id} cannot be built without keywords ({type(err).__name__}: {why}); "
            "pass them with --env-kwargs"
        ) from None
    try:
        space = env.observation_space
        shape = space.shape
        cap = env.spec.max_episode_steps if env.spec is not None else None
    finally:
        env.close()
    if shape is None or len(shape) not in (1, 3):
        raise UsageError(
            f"--env: {env_id!r} has observation space {space_text(space)} (shape {shape}); "
            "expected a 1-D feature vector or a 3-D channels-first image "
            f"({_observation_hint(space)})"
        )
    lunar = PAPER_ENVS["LunarLander-v3"]
    base = _feature(
        env_id,
        500_000,
        cap,
        lunar.lr_sweep,
        copy.deepcopy(lunar.best),
        dict.fromkeys(AGENTS, "assumed"),
        paper=False,
    )
    if len(shape) == 3:
        base = dataclasses.replace(
            base, network="minatar_cnn", hidden=NETWORK_HIDDEN["minatar_cnn"]
        )
    return base


def space_text(space: Any) -> str:
    """``space`` as one short line, for the one-line errors that name it: its text with
    every run of whitespace as one space; a space with bounds per element (a
    ``FrameStackObservation`` of CartPole-v1, whose bounds NumPy prints over 8 lines) as
    its type, shape, dtype and the range of its bounds; any other text cut at 200
    characters."""
    text = one_line(space)
    low: Any = getattr(space, "low", None)
    high: Any = getattr(space, "high", None)
    if len(text) > 100 and getattr(low, "size", None) and getattr(high, "size", None):
        return (
            f"{type(space).__name__} of shape {tuple(space.shape)} and dtype {space.dtype}, "
            f"bounds per element from {low.min()} to {high.max()}"
        )
    return text if len(text) <= 200 else text[:197] + "..."


def _observation_hint(space: Any) -> str:
    """What makes ``space``, an observation space the networks cannot read (neither 1-D nor
    3-D), one they can: the Gymnasium wrapper that fits its case, with its arguments, to
    apply in an entry point of one's own that returns the wrapped environment."""
    import gymnasium as gym

    where = " in an entry point of yours that returns the wrapped environment"
    flatten = "gymnasium.wrappers.FlattenObservation(env)"
    if isinstance(space, gym.spaces.Dict | gym.spaces.Tuple | gym.spaces.Discrete):
        return f"flatten it to a feature vector with {flatten}{where}"
    if space.shape is None:
        return "give the environment a Box observation space of features or images"
    if not isinstance(space, gym.spaces.Box):  # MultiBinary, MultiDiscrete of 2 or more dims
        return f"flatten it to a feature vector with {flatten}{where}"
    dims = tuple(int(d) for d in space.shape)
    if len(dims) == 0:  # a scalar Box
        return f"one feature: gymnasium.wrappers.ReshapeObservation(env, (1,)){where}"
    if len(dims) == 2:
        k, m = dims
        features = f"a ({k}, {m}) matrix of features: {flatten}, {k * m} features"
        if min(k, m) < 3:  # no image minatar_cnn takes (square, 3 x 3 at least)
            return features + where
        square = "" if k == m else ", then square (minatar_cnn takes H = W)"
        return (
            f"{features}; a one-channel image (H, W): gymnasium.wrappers.ReshapeObservation("
            f"env, (1, {k}, {m})){square}; either{where}"
        )
    if len(dims) == 4:  # e.g. FrameStackObservation of images: k frames
        k, b, c, d = dims
        if d < min(b, c):  # (k, H, W, C): channels last
            merged = (k * d, b, c)
            return (
                f"{k} stacked channels-last images (k, H, W, C)? move the channels first and "
                f"merge them with the stack into {merged}: gymnasium.wrappers."
                f"TransformObservation(env, lambda o: np.moveaxis(o, -1, 1).reshape{merged}, "
                f"a Box of shape {merged}){where}"
            )
        merged = (k * b, c, d)
        return (
            f"{k} stacked channels-first images (k, C, H, W)? merge the stack into the "
            f"channels, {merged}: gymnasium.wrappers.ReshapeObservation(env, {merged}){where}"
        )
    return (
        f"flatten it to a feature vector with {flatten}, or reshape it to channels-first "
        f"images (C, H, W) with gymnasium.wrappers.ReshapeObservation(env, shape){where}"
    )
