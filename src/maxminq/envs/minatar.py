"""MinAtar games (Young and Tian 2019, package ``minatar``) as Gymnasium envs.

Our own wrapper around ``minatar.Environment`` fixing the defects of ``minatar.gym``:
observations are channels-first (C, 10, 10) with a space whose dtype matches them;
``reset(seed=...)`` re-seeds the game's own ``RandomState`` (shared by the sticky-action
draw and the game), derived from Gymnasium's ``np_random``; later resets continue that stream.

Deviation from raw MinAtar: Freeway's only end is its built-in 2,500-frame timer (the game
stops at the 2,501st ``act``), which MinAtar reports as terminal although the observation
has no clock. We report that end as ``truncated=True, terminated=False`` (a time limit, so
agents keep bootstrapping); every other game's end stays ``terminated=True``.

Second deviation: ``reset()`` sets MinAtar's sticky ``last_action`` to 0 (no-op), so an
episode never repeats the previous episode's last action at its first frame (raw MinAtar
carries it over). With that mirrored, our trajectories equal ``minatar.Environment``'s frame
by frame under the same RandomState (``tests/envs/test_envs_api.py``).

Options: ``sticky_action_prob`` (MinAtar default 0.1), ``difficulty_ramping`` (default
True), ``minimal_action_set`` (default False: all 6 actions, as MinAtar's DQN and the paper's
code use), ``obs_dtype`` ("uint8" default, or "float32"). Seaquest is registered with the
10,000-step cap of the paper's code.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from maxminq.envs._checks import (
    _is_int,
    check_action,
    check_bool,
    check_render_mode,
    warn_no_render_mode,
)

#: The games of ``minatar.environments`` (module names).
GAMES: tuple[str, ...] = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")
#: What MinAtar's 6 actions do (its games' ``action_map``: n, l, u, r, d, f).
ACTION_NAMES: tuple[str, ...] = ("noop", "left", "up", "right", "down", "fire")


def unread_options(game: str) -> frozenset[str]:
    """The options of :class:`MinAtarEnv` that change nothing in ``game`` (a name of
    :data:`GAMES`), as MinAtar's own game says: ``difficulty_ramping`` where it has no ramp
    (Breakout and Freeway take MinAtar's ``ramping`` and never read it; their
    ``difficulty_ramp()`` is None) and ``minimal_action_set`` where the minimal set is all
    6 actions in order (Seaquest)."""
    from minatar import Environment

    env = Environment(game)  # its own RandomState: no global stream is drawn from
    out = set()
    if env.env.difficulty_ramp() is None:
        out.add("difficulty_ramping")
    if list(env.minimal_action_set()) == list(range(env.num_actions())):
        out.add("minimal_action_set")
    return frozenset(out)


def _palette(n_channels: int) -> np.ndarray:
    """Background black, then one colour per channel: MinAtar's display palette (seaborn's
    ``color_palette("cubehelix", C)``: matplotlib's cubehelix at (k + 1) / (C + 1))."""
    from matplotlib import colormaps

    cmap = colormaps["cubehelix"]
    cols = cmap(np.linspace(0.0, 1.0, n_channels + 2)[1:-1])[:, :3]
    return np.round(np.vstack([np.zeros(3), cols]) * 255).astype(np.uint8)


class MinAtarEnv(gym.Env):
    """One MinAtar game.

    Args:
        game: MinAtar module name (``"asterix"``, ``"breakout"``, ``"freeway"``,
            ``"seaquest"``, ``"space_invaders"``).
        sticky_action_prob: probability of repeating the previous action.
        difficulty_ramping: whether the game speeds up over time.
        minimal_action_set: use the game's minimal action set instead of all 6 actions.
        obs_dtype: ``"uint8"`` or ``"float32"`` observation dtype.
        render_mode: None or ``"rgb_array"`` (10x10 upscaled by ``render_scale``).
        render_scale: pixels per cell of the rendered frames (a whole number >= 1).
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 30}  # gym's type

    def __init__(
        self,
        game: str,
        sticky_action_prob: float = 0.1,
        difficulty_ramping: bool = True,
        minimal_action_set: bool = False,
        obs_dtype: str = "uint8",
        render_mode: str | None = None,
        render_scale: int = 8,
    ) -> None:
        """The game ``game`` with these options (see the class docstring), each checked: a
        bad one is a ValueError naming it (Gymnasium's ``make`` passes the keywords on)."""
        from minatar import Environment

        if game not in GAMES:  # else a ModuleNotFoundError from inside minatar
            raise ValueError(f"game {game!r} is not a MinAtar game: one of {', '.join(GAMES)}")
        difficulty_ramping = check_bool("difficulty_ramping", difficulty_ramping)
        minimal_action_set = check_bool("minimal_action_set", minimal_action_set)
        if not _is_int(render_scale) or render_scale < 1:
            raise ValueError(f"render_scale must be a positive integer, got {render_scale!r}")
        if isinstance(sticky_action_prob, (bool, np.bool_)) or not isinstance(
            sticky_action_prob, (int, float, np.integer, np.floating)
        ):
            raise ValueError(
                f"sticky_action_prob must be a number in [0, 1], got {sticky_action_prob!r}"
            )
        if obs_dtype not in ("uint8", "float32"):
            raise ValueError(f"obs_dtype must be 'uint8' or 'float32', got {obs_dtype!r}")
        check_render_mode(render_mode)
        if not 0.0 <= sticky_action_prob <= 1.0:
            raise ValueError(f"sticky_action_prob must be in [0, 1], got {sticky_action_prob}")
        self.game_name = game
        self._ends_by_time = game == "freeway"  # its only end is its frame timer
        self.game = Environment(
            game,
            sticky_action_prob=float(sticky_action_prob),
            difficulty_ramping=difficulty_ramping,
        )
        self.action_set = (
            list(self.game.minimal_action_set())
            if minimal_action_set
            else list(range(self.game.num_actions()))
        )
        h, w, c = self.game.state_shape()
        self._dtype = np.dtype(obs_dtype)
        self.observation_space = spaces.Box(0, 1, shape=(c, h, w), dtype=self._dtype)
        self.action_space = spaces.Discrete(len(self.action_set))
        self.render_mode = render_mode
        self.render_scale = int(render_scale)
        self._palette: np.ndarray | None = None
        self._seeded = False

    @property
    def action_names(self) -> tuple[str, ...]:
        """What each action does, in action order (of the full or the minimal set)."""
        return tuple(ACTION_NAMES[a] for a in self.action_set)

    @property
    def observation_names(self) -> tuple[str, ...]:
        """The observation's channels, in order (the game's ``channels``)."""
        channels: dict[str, int] = self.game.env.channels
        return tuple(sorted(channels, key=channels.__getitem__))

    def _obs(self) -> np.ndarray:
        return np.ascontiguousarray(self.game.state().transpose(2, 0, 1), dtype=self._dtype)

    def _set_stream(self) -> None:
        # One RandomState, shared by the sticky-action draw and the game (as minatar's seed()).
        bits = np.random.MT19937(int(self.np_random.integers(0, 2**63)))
        rs = np.random.RandomState(bits)
        self.game.random = rs
        self.game.env.random = rs

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game; a seed re-seeds the game's RandomState, else it continues."""
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            self._set_stream()
            self._seeded = True
        self.game.last_action = 0  # no sticky carry-over across episodes
        self.game.reset()
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply ``action_set[action]`` (sticky with the configured probability).

        Freeway's end (its 2,500-frame timer) is reported as truncated, not terminated.

        Raises:
            gymnasium.error.ResetNeeded: before the first ``reset()`` (the game's RandomState
                is not seeded yet).
            ValueError: ``action`` is not an integer in ``[0, len(action_set))``.
        """
        if not self._seeded:
            raise gym.error.ResetNeeded("Cannot call step() before calling reset()")
        reward, done = self.game.act(self.action_set[check_action(action, len(self.action_set))])
        done = bool(done)
        if self._ends_by_time:  # Freeway: its timer's end is a time limit, not a terminal state
            return self._obs(), float(reward), False, done, {}
        return self._obs(), float(reward), done, False, {}

    def render(self) -> np.ndarray | None:
        """RGB image: each cell coloured by its highest active channel; None, with a
        warning, without a render mode.

        Raises:
            gymnasium.error.ResetNeeded: before the first ``reset()`` (the game on show would
                be one MinAtar set up unseeded), as ``make``'s order check does.
        """
        if not self._seeded:
            raise gym.error.ResetNeeded("Cannot call render() before calling reset()")
        if self.render_mode != "rgb_array":
            warn_no_render_mode(self)
            return None
        state = self.game.state()
        c = state.shape[-1]
        if self._palette is None:
            self._palette = _palette(c)
        idx = np.max(state * np.arange(1, c + 1), axis=2).astype(np.int64)
        img = self._palette[idx]
        return np.repeat(np.repeat(img, self.render_scale, 0), self.render_scale, 1)
