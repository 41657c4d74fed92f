"""Argument checks shared by our envs: actions (single and batched) and episode caps."""

from __future__ import annotations

from typing import Any

import numpy as np

from maxminq._jit import njit


def _is_int(value: Any) -> bool:
    """A Python or NumPy integer, not a bool (``type() is int`` is exact: bool is a subclass)."""
    return type(value) is int or isinstance(value, np.integer)


def check_action(action: Any, n: int) -> int:
    """``action`` as an int if it is an integer (Python or NumPy, not bool) in [0, n).

    Raises:
        ValueError: naming the action and the valid range otherwise.
    """
    if _is_int(action):
        if 0 <= action < n:
            return int(action)
    elif isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return check_action(action[()], n)
    raise ValueError(f"action {action!r} is not in the action space: an integer in [0, {n})")


def check_actions(actions: Any, n: int, num_envs: int) -> np.ndarray:
    """``actions`` as int64[num_envs] if it holds integers in [0, n), checked all at once.

    Raises:
        ValueError: naming the first invalid action and the valid range otherwise.
    """
    a = np.asarray(actions)
    if a.dtype.kind not in "iu" or a.shape != (num_envs,):
        raise ValueError(
            f"actions {actions!r} are not in the action space: {num_envs} integers in [0, {n})"
        )
    a = a.astype(np.int64, copy=False)
    i = _first_out_of_range(a, n)  # one compiled pass: a fraction of numpy's (a >= n).any()
    if i >= 0:
        raise ValueError(
            f"action {a[i]} (sub-env {i}) is not in the action space: an integer in [0, {n})"
        )
    return a


@njit
def _first_out_of_range(a: np.ndarray, n: int) -> int:
    """Index of the first entry of ``a`` outside [0, n), or -1."""
    for i in range(a.shape[0]):
        if a[i] < 0 or a[i] >= n:
            return i
    return -1


def check_cap(max_episode_steps: Any) -> int | None:
    """None (keep the registered cap) or a positive int.

    Raises:
        ValueError: naming ``max_episode_steps`` for zero, negative or non-integer values
            (Gymnasium's ``-1`` "no time limit" is not accepted: it removed the cap silently).
    """
    if max_episode_steps is None:
        return None
    if not _is_int(max_episode_steps) or max_episode_steps <= 0:
        raise ValueError(
            f"max_episode_steps must be None (the registered cap) or a positive integer, "
            f"got {max_episode_steps!r}"
        )
    return int(max_episode_steps)


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool if it is one (Python or NumPy bool).

    Raises:
        ValueError: naming ``name`` otherwise: a JSON string such as ``"false"`` is truthy
            and would silently mean True.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be true or false, got {value!r}")


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int if it is a non-negative integer (Python or NumPy, not bool).

    Raises:
        ValueError: naming ``name`` otherwise (a float such as 1.5 would be truncated
            silently; Gymnasium refuses negative seeds with a less direct error).
    """
    if _is_int(seed) and seed >= 0:
        return int(seed)
    raise ValueError(f"{name} must be a non-negative integer, got {seed!r}")


def check_vector_seed(seed: Any, num_envs: int) -> list[int | None] | None:
    """A vector env's ``reset(seed=...)`` as one seed (or None) per sub-env: None stays None,
    an integer ``s`` (Python or NumPy) gives sub-env i ``s + i`` (as Gymnasium's
    ``SyncVectorEnv``), a list, tuple, range or 1-D array gives its entries (integers or
    None; a range as Gymnasium's ``SyncVectorEnv`` takes it, and as ``make_vector`` takes
    its ``seeds``).

    Raises:
        ValueError: anything else, naming ``seed`` (or the bad ``seed[i]``).
    """
    if seed is None:
        return None
    if _is_int(seed):
        first = check_seed(seed)
        return [first + i for i in range(num_envs)]
    given = seed  # named as given in the error (a range or an array, not the list made of it)
    if isinstance(seed, np.ndarray) and seed.ndim == 1 and seed.dtype.kind in "iu":
        seed = seed.tolist()
    elif isinstance(seed, range):
        seed = list(seed)
    if not isinstance(seed, (list, tuple)) or len(seed) != num_envs:
        raise ValueError(
            f"seed must be None, an integer or a list of {num_envs} seeds "
            f"(integers or None), got {given!r}"
        )
    return [None if s is None else check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]


def warn_no_render_mode(env: Any) -> None:
    """Warn (Gymnasium's logger, a UserWarning) that ``env.render()`` returns None because
    ``env`` was made without a render mode, as Gymnasium's own environments warn."""
    import gymnasium as gym

    spec = getattr(env, "spec", None)
    name = spec.id if spec is not None else type(env).__name__
    gym.logger.warn(
        f"render() returns None: {name} was made without a render mode; make it with "
        "render_mode='rgb_array' to get frames"
    )


def check_render_mode(render_mode: Any, vector: bool = False) -> None:
    """ValueError unless ``render_mode`` is None or ``"rgb_array"``, the only mode our envs
    draw themselves, naming what works: ``gymnasium.make`` (and so ``maxminq.envs.make``)
    adds ``"human"`` (a window, its HumanRendering wrapper) and ``"rgb_array_list"`` on top
    of ``"rgb_array"``; a native vector env (``vector``) takes None or ``"rgb_array"``."""
    if render_mode in (None, "rgb_array"):
        return
    if vector:
        raise ValueError(
            f"render_mode must be None or 'rgb_array' for the native vector env (render() "
            f"gives one frame per sub-env), got {render_mode!r}; to watch one game: "
            "make(env_id, render_mode='human')"
        )
    raise ValueError(
        f"render_mode must be None or 'rgb_array' (through make, also 'human' for a window "
        f"or 'rgb_array_list'), got {render_mode!r}"
    )
