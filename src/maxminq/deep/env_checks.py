"""Checks of an environment against what the agents need, for training (``deep.train``)
and ``evaluate_agent`` (``deep.policy``, ``maxminq evaluate``): Gymnasium's API
(``reset()`` -> (obs, info), ``step()`` -> 5 values), observations of the observation
space's shape (finite ones in test and evaluation episodes), each a one-line UsageError
naming ``--env``; and the warnings (:class:`EnvWarning`) for an environment without a time
limit or with a wrapper whose running statistics outlive an episode."""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium as gym
import numpy as np

from maxminq.deep.config import EnvWarning, TrainConfig, outside_stacklevel
from maxminq.deep.replay import check_finite
from maxminq.envs.registry import space_text
from maxminq.errors import UsageError


def check_action_space(space: Any, env_id: str) -> None:
    """Refuse an action space the agents cannot act in, saying what to do: they choose among
    ``Discrete(n)`` actions numbered 0..n-1 (``maxminq train`` and ``maxminq envs --env``
    both ask this, so both say the same)."""
    if not isinstance(space, gym.spaces.Discrete):
        how = ""  # what to do, where Gymnasium offers it
        if isinstance(space, gym.spaces.Box):
            how = (
                "; discretize it with gymnasium.wrappers.DiscretizeAction(env, bins) in an "
                "entry point of yours that returns the wrapped environment"
            )
        elif isinstance(space, gym.spaces.MultiDiscrete):
            how = (
                "; give the environment one Discrete(n) action that numbers the combinations "
                f"(n = {int(np.prod(space.nvec))}, the product of its nvec)"
            )
        raise UsageError(
            f"--env: {env_id} needs a discrete action space, has {space_text(space)}{how}"
        )
    if int(space.start) != 0:  # the agents' actions are 0..n-1, as in Discrete(n)
        k = int(space.start)
        raise UsageError(
            f"--env: {env_id}'s actions {space} start at {k}; the agents act with 0..n-1, so "
            "the action space must be Discrete(n) (start 0): shift them in its step(), or "
            f"wrap it in an entry point of yours, gymnasium.wrappers.TransformAction(env, "
            f"lambda a: a + {k}, gymnasium.spaces.Discrete({int(space.n)}))"
        )


def _observation(obs: Any, shape: tuple[int, ...], env_id: str, where: str) -> np.ndarray:
    """One observation as a float32 array of ``shape``; UsageError naming ``--env``
    otherwise (assigned into the observation arrays, a wrong shape could be broadcast)."""
    try:
        arr = np.asarray(obs, dtype=np.float32)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != shape:
        got = f"shape {arr.shape}" if arr is not None else f"type {type(obs).__name__}"
        raise UsageError(
            f"--env: {env_id}'s {where} returned an observation of {got}; its observation "
            f"space has shape {shape}"
        )
    return arr


def episode_observation(
    obs: Any, shape: tuple[int, ...], env_id: str, where: str, reward: Any = 0.0
) -> np.ndarray:
    """An observation of a test or evaluation episode (``play_episodes``, and
    ``evaluate_agent``'s episodes: ``maxminq evaluate``) as :func:`_observation` gives it,
    and UsageError naming ``--env`` when it or ``reward`` (the step's, 0 after a reset) is
    NaN or infinite as float32, as the replay buffers refuse them in training (one check,
    ``deep.replay.check_finite``): a NaN observation was played as action 0 (the argmax of
    NaN values), a NaN reward recorded as the return. ``where`` says which episode and
    call, for the message."""
    arr = _observation(obs, shape, env_id, where)
    check_finite(f"of a test or evaluation episode ({where})", reward, arr)
    return arr


def _api_problem(env: Any, env_id: str) -> tuple[str | None, Any, Any]:
    """``env``'s first ``reset(seed=0)`` and ``step(0)``, and what in them breaks Gymnasium's
    API (``reset()`` -> (obs, info), ``step()`` -> (obs, reward, terminated, truncated,
    info)) as an ``--env`` error line: (problem or None, reset's result, step's result or
    None when reset already broke it)."""
    result = env.reset(seed=0)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
        return (
            f"--env: {env_id}'s reset() returned {type(result).__name__}"
            f"{f' of {len(result)} values' if isinstance(result, tuple) else ''}; Gymnasium's "
            "API (gymnasium >= 0.26) returns (obs, info)",
            result,
            None,
        )
    stepped = env.step(0)
    if not (isinstance(stepped, tuple) and len(stepped) == 5):
        n = f"{len(stepped)} values" if isinstance(stepped, tuple) else type(stepped).__name__
        return (
            f"--env: {env_id}'s step() returned {n}; Gymnasium's API (gymnasium >= 0.26) "
            "returns (obs, reward, terminated, truncated, info)",
            result,
            stepped,
        )
    return None, result, stepped


def _check_api(env: Any, env_id: str) -> tuple[Any, tuple[Any, ...]]:
    """``env``'s first ``reset(seed=0)`` (obs, info) and ``step(0)`` (5 values), once each;
    a UsageError naming ``--env`` if ``env`` does not follow Gymnasium's API. The old Gym
    API (reset -> obs, step -> 4 values) is a common leftover, on which Gymnasium's own
    wrappers fail with a traceback: when ``env`` fails or breaks the API, the environment
    itself (``env.unwrapped``) is asked, and its problem is the error (else ``env``'s own
    error: a wrapper of the user's, inside the registered ones, broke it)."""
    try:
        problem, first, stepped = _api_problem(env, env_id)
    except Exception:
        if env.unwrapped is env:
            raise
        inner = _api_problem(env.unwrapped, env_id)[0]
        if inner is not None:
            raise UsageError(inner) from None
        raise
    if problem is None:
        return first, stepped
    if env.unwrapped is not env:
        inner = _api_problem(env.unwrapped, env_id)[0]
        problem = inner or problem
    raise UsageError(problem)


# Gymnasium wrappers whose running statistics outlive an episode: a checkpoint does not hold
# them, and every new environment (tests, evaluations, maxminq evaluate) starts them afresh.
_CROSS_EPISODE_WRAPPERS = (gym.wrappers.NormalizeObservation, gym.wrappers.NormalizeReward)


def _cross_episode_wrappers(env: Any) -> list[str]:
    """The names of the :data:`_CROSS_EPISODE_WRAPPERS` around ``env``, sorted."""
    chain = _wrapper_chain(env)
    return sorted({type(e).__name__ for e in chain if isinstance(e, _CROSS_EPISODE_WRAPPERS)})


def _wrapper_chain(env: Any) -> list[Any]:
    """``env`` and every environment it wraps, outermost first."""
    chain = [env]
    while isinstance(chain[-1], gym.Wrapper):
        chain.append(chain[-1].env)
    return chain


def warn_if_no_time_limit(
    env: Any, env_id: str, cap: int | None, also: str = "", stacklevel: int | None = None
) -> None:
    """Warn (:class:`EnvWarning`) when ``env``, an environment of ``env_id``, has no time
    limit: neither the cap ``cap`` it was made with nor a ``TimeLimit`` of its own (one its
    entry point adds counts); the paper's environments without one end every episode
    themselves. ``also`` (e.g. `` (the test episodes after training too)``) follows "would
    not finish" in the message. Training (:class:`Trainer`) and ``evaluate_agent`` (``maxminq
    evaluate``) both warn here, at the caller's line outside maxminq unless ``stacklevel``
    is given (:func:`~maxminq.deep.config.outside_stacklevel`)."""
    from maxminq.envs.registry import PAPER_ENVS

    capped = cap is not None or any(
        isinstance(e, gym.wrappers.TimeLimit) for e in _wrapper_chain(env)
    )
    if not capped and env_id not in PAPER_ENVS:
        warnings.warn(
            f"{env_id} has no time limit: an episode the policy never ends would not "
            f"finish{also}, unless the environment ends it itself (truncated=True, as one "
            "that counts its own steps does); --max-episode-steps sets one",
            EnvWarning,
            stacklevel=outside_stacklevel() if stacklevel is None else stacklevel,
        )


def warn_if_inner_time_limit(
    env: Any, env_id: str, cap: int | None, stacklevel: int | None = None
) -> None:
    """Warn (:class:`EnvWarning`) when ``env``, an environment of ``env_id`` made with the
    cap ``cap``, holds a ``TimeLimit`` of its own (one its entry point adds) shorter than
    ``cap``: that one cuts every episode first, so ``--max-episode-steps`` cannot lengthen
    them, and the run would record (and the bias warnings name) a cap its episodes never
    reach. Training (:class:`Trainer`) and ``evaluate_agent`` (``maxminq evaluate``) both
    warn here, at the caller's line outside maxminq unless ``stacklevel`` is given."""
    if cap is None:
        return
    inner = [getattr(e, "_max_episode_steps", None) for e in _wrapper_chain(env)]
    shorter = [k for k in inner if isinstance(k, int) and k < cap]
    if shorter:
        k = min(shorter)
        warnings.warn(
            f"{env_id} cuts its episodes at {k:,} steps itself (a TimeLimit its entry point "
            f"adds), so --max-episode-steps {cap:,} cannot lengthen them: they end at "
            f"{k:,} steps; register the id with max_episode_steps instead of that TimeLimit "
            "to choose the cap with --max-episode-steps",
            EnvWarning,
            stacklevel=outside_stacklevel() if stacklevel is None else stacklevel,
        )


def warn_if_normalized(
    env: Any, env_id: str, evaluating: bool, stacklevel: int | None = None
) -> None:
    """Warn (:class:`EnvWarning`) when ``env``, an environment of ``env_id``, holds a wrapper
    that keeps running statistics across episodes (``NormalizeObservation``,
    ``NormalizeReward``): a run's files hold none of them, so every new environment starts
    them afresh. Training (``evaluating`` False: :class:`Trainer`, once at the start) says
    what that does to ``--resume`` and the test episodes; ``evaluate_agent`` (``maxminq
    evaluate``) what it does to the episodes it plays: the agent sees observations on other
    scales than it learned on, and the returns are of rewards scaled by these episodes'
    statistics. Both name the wrapper and its remedy: fixed constants. The warning points at
    the caller's line outside maxminq unless ``stacklevel`` is given."""
    chain = _wrapper_chain(env)
    stateful = _cross_episode_wrappers(env)
    if not stateful:
        return
    names = " and ".join(stateful)
    constants = "scale by fixed constants instead (TransformObservation, TransformReward)"
    if not evaluating:
        message = (
            f"{env_id} is wrapped in {names}, whose running statistics are not in "
            "checkpoints (--resume refuses the run) and start afresh in every new "
            "environment (the test episodes, maxminq evaluate): the agent is tested on other "
            f"scales than it learned on; {constants}"
        )
    else:
        effects = []
        if any(isinstance(e, gym.wrappers.NormalizeObservation) for e in chain):
            effects.append("the agent sees observations on other scales than it learned on")
        if any(isinstance(e, gym.wrappers.NormalizeReward) for e in chain):
            effects.append(
                "the returns are of rewards scaled by these episodes' statistics, not the "
                "environment's rewards"
            )
        message = (
            f"{env_id} is wrapped in {names}, whose running statistics were not saved with "
            "the run: they start afresh here and carry over from each episode to the next "
            f"(one seed's to the next seed's too), so {' and '.join(effects)}; {constants} "
            "and train again"
        )
    level = outside_stacklevel() if stacklevel is None else stacklevel
    warnings.warn(message, EnvWarning, stacklevel=level)


def _play_twice(env: Any) -> list[tuple[list[np.ndarray], list[float], list[bool]]]:
    """Two plays of ``env``: ``reset(seed=0)``, then up to :data:`_REPEAT_STEPS` steps of
    action 0 (fewer if the episode ends): the observations, rewards and end flags of each."""
    plays = []
    for _ in range(2):
        obs, _ = env.reset(seed=0)
        seen, rewards, ends = [np.asarray(obs, dtype=np.float64)], [], []
        for _ in range(_REPEAT_STEPS):
            obs, reward, terminated, truncated, _ = env.step(0)
            seen.append(np.asarray(obs, dtype=np.float64))
            rewards.append(float(reward))
            ends += [bool(terminated), bool(truncated)]
            if terminated or truncated:
                break
        plays.append((seen, rewards, ends))
    return plays


_REPEAT_STEPS = 5  # steps of each play of warn_if_not_repeatable


def _np_random_not_seeded_by_reset(env: Any) -> bool:
    """Whether ``env``, after ``reset(seed=0)`` and steps, draws from a ``self.np_random``
    that its reset did not seed with 0: Gymnasium's ``Env.reset(seed=seed)`` (what
    ``super().reset(seed=seed)`` calls) sets ``np_random_seed`` to ``seed``; a reset that
    skips it (or calls ``super().reset()`` without the seed) leaves the generator Gymnasium
    made on first use, from fresh entropy, whose seed is a large random number. Read from
    ``_np_random_seed``, not the ``np_random_seed`` property, which would make a generator
    for an environment that never drew from one (its plays differ for another reason:
    state carried over); -1 (a generator assigned to ``np_random`` directly, seeded
    perhaps from reset's seed) is not told apart either."""
    seed = getattr(env.unwrapped, "_np_random_seed", None)
    return isinstance(seed, int) and seed not in (0, -1)


def warn_if_not_repeatable(cfg: TrainConfig) -> None:
    """Warn (:class:`EnvWarning`) when an environment of the (resolved) run ``cfg`` draws
    random numbers from NumPy's or Python's global generator (``np.random``, ``random``),
    which maxminq never seeds and which all the seeds of a run would share, or when two
    plays of it from ``reset(seed=0)`` with action 0 differ (its reset does not seed the
    ``self.np_random`` it draws from, when Gymnasium's ``np_random_seed`` is not 0 after
    ``reset(seed=0)``: the warning says to call ``super().reset(seed=seed)``; else state
    carried from one episode to the next, or randomness from elsewhere, such as a space's
    ``sample()``): its episodes do not follow from
    their reset seeds alone, so the same seeds do not give the same run, and ``--resume``,
    which replays the current episode from its reset seed, refuses to continue. Played on
    an environment of its own (the run's are not touched); the global generators are put
    back as they were; Gymnasium's checker stays quiet (it warns when the run's
    environments run); an environment that fails here (to be made or played) is left to
    the run's own checks. The states are taken before the environment is made, so
    that draws of its constructor are put back too: the run's environments get what they
    got without this check (a user's ``np.random.seed`` still gives the same run)."""
    # The global generators are looked at, never drawn from (what NPY002 guards against).
    numpy_state = np.random.get_state()  # noqa: NPY002
    python_state = random.getstate()
    env = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = cfg.make_env()
            made_numpy, made_python = np.random.get_state(), random.getstate()  # noqa: NPY002
            plays = _play_twice(env)
            unseeded = _np_random_not_seeded_by_reset(env)
        drew = [
            name
            for name, changed in (
                ("np.random", not _same_numpy_state(made_numpy, np.random.get_state())),  # noqa: NPY002
                ("random", random.getstate() != made_python),
            )
            if changed
        ]
    except Exception:  # noqa: BLE001 - the run's own checks and steps report it
        return
    finally:
        if env is not None:
            env.close()
        np.random.set_state(numpy_state)  # noqa: NPY002
        random.setstate(python_state)
    (obs_a, rewards_a, ends_a), (obs_b, rewards_b, ends_b) = plays
    alike = len(obs_a) == len(obs_b) and all(
        np.array_equal(a, b, equal_nan=True) for a, b in zip(obs_a, obs_b, strict=False)
    )
    differ = [
        what
        for what, same in (
            ("observations", alike),
            ("rewards", np.array_equal(rewards_a, rewards_b, equal_nan=True)),
            ("ends", ends_a == ends_b),
        )
        if not same
    ]
    if drew:
        why = (
            f"draws random numbers from {' and '.join(drew)} (a global generator, which "
            "maxminq never seeds and all the seeds of a run share), not self.np_random"
        )
    elif differ and unseeded:
        why = (
            f"played twice from reset(seed=0) with action 0, gave different "
            f"{' and '.join(differ)} because its reset does not seed self.np_random, which "
            "it draws from (call super().reset(seed=seed) first in your reset)"
        )
    elif differ:
        why = (
            f"played twice from reset(seed=0) with action 0, gave different "
            f"{' and '.join(differ)} (state carried from one episode to the next, or random "
            "numbers from a space's sample() or elsewhere, not self.np_random)"
        )
    else:
        return
    warnings.warn(
        f"{cfg.env_id} {why}: its episodes do not follow from their reset seeds alone, so the "
        "same --seeds will not give the same run, and --resume cannot replay an episode to "
        "continue it",
        EnvWarning,
        stacklevel=outside_stacklevel(),
    )


def _same_numpy_state(a: Any, b: Any) -> bool:
    """Whether two ``np.random.get_state()`` tuples are the same state."""
    return all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(a, b, strict=True)
    )


def _warn_about_env(env: Any, cfg: TrainConfig) -> None:
    """Warn (:class:`EnvWarning`) when ``env``, one of the run's environments, has no time
    limit (neither ``cfg``'s cap nor a ``TimeLimit`` of its own; the paper's environments
    without one end every episode themselves), or holds a wrapper that keeps statistics
    across episodes (``NormalizeObservation``, ``NormalizeReward``: :func:`warn_if_normalized`)."""
    after = " (the test episodes after training too)"
    warn_if_no_time_limit(env, cfg.env_id, cfg.max_episode_steps, after)
    warn_if_inner_time_limit(env, cfg.env_id, cfg.max_episode_steps)
    warn_if_normalized(env, cfg.env_id, evaluating=False)


def _observations(obs: tuple[Any, ...], shape: tuple[int, ...], env_id: str) -> np.ndarray:
    """The observations of one step of the live seeds, stacked: (len(obs), *shape)."""
    try:
        arr = np.asarray(obs, dtype=np.float32)
        if arr.shape[1:] == shape:
            return arr
    except (TypeError, ValueError):
        pass
    # Slow path, only when they do not stack to shape: names the first one that does not fit.
    return np.stack([_observation(o, shape, env_id, "step()") for o in obs])
