"""Estimation-bias probes of deep training: which probes count (``probe_counts``; in an
episode the time limit cut, only those ``bias_horizon`` steps or more before the cut), the
discounted returns they are scored against (see ``deep.train``'s docstring), and the
warning when the episodes whose probes cannot count hold much of a run
(:class:`CutEpisodesCheck`)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from tqdm import tqdm

from maxminq.deep.config import BIAS_TAIL, EnvWarning, outside_stacklevel

if TYPE_CHECKING:
    from maxminq.deep.config import ResolvedTrainConfig


def probe_counts(terminated: Any, steps_to_end: Any, gamma: float) -> Any:
    """Whether a bias probe counts: its episode terminated, or the time limit cut it
    ``steps_to_end`` steps after the probe and the missing tail weighs
    ``gamma^steps_to_end <= BIAS_TAIL``. Element-wise on arrays and Series too."""
    return terminated | (gamma**steps_to_end <= BIAS_TAIL)


def bias_horizon(gamma: float) -> int | None:
    """The fewest steps k from a probe to a time-limit cut for which the cut episode's probe
    still counts (``gamma^k <= BIAS_TAIL``); None if none does (gamma = 1)."""
    if gamma >= 1.0:
        return None
    if gamma <= 0.0:
        return 1
    k = max(1, math.ceil(math.log(BIAS_TAIL) / math.log(gamma)) - 1)
    while not probe_counts(False, k, gamma):  # the trainer's own test (logs may round)
        k += 1
    return k


def _discounted_returns(rewards: list[float], gamma: float) -> np.ndarray:
    """``G_t = sum_k gamma^k r_{t+k}`` for every t of one episode."""
    out = np.empty(len(rewards))
    g = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out


#: The share of the steps since learning started held by episodes the time limit cut, from
#: which a run whose cut episodes' probes cannot count warns (:class:`CutEpisodesCheck`).
CUT_SHARE_WARNED = 0.2


class CutEpisodesWarning(EnvWarning):
    """Episodes the time limit cut, whose bias probes cannot count (the cap is shorter than
    ``bias_horizon(gamma)``), hold :data:`CUT_SHARE_WARNED` or more of the steps since
    learning started: the bias metrics rest on the episodes that terminated, or on none."""

    last_of_run_only = True  # the end-of-run warning gives the whole run's numbers


def cut_probes_never_count(cap: int | None, gamma: float) -> str | None:
    """Why no probe of an episode the cap ``cap`` cut counts at discount ``gamma`` (for the
    warning), or None when one can (a cap of ``bias_horizon(gamma)`` or more) or no cap."""
    k = bias_horizon(gamma)
    if cap is None or (k is not None and k <= cap):
        return None
    return _why_cut_probes_are_lost(gamma)


def _why_cut_probes_are_lost(gamma: float) -> str:
    """Which probes of a cut episode count at discount ``gamma`` (none at gamma 1)."""
    k = bias_horizon(gamma)
    if k is None:
        return "with gamma 1 a cut episode's probes never count"
    return f"a cut episode's probe counts only {k}+ steps before the cut: gamma^k <= {BIAS_TAIL}"


def cut_episodes_terms(cap: int | None, gamma: float) -> tuple[str | None, int | None]:
    """What :class:`CutEpisodesCheck` (training) and a run read back warn of, for the cap
    ``cap`` at discount ``gamma``: why a cut episode's probes are lost (None: no warning,
    a cap of ``bias_horizon(gamma)`` or more), and the length below which a cut episode
    counts as cut (None: every one). No cap: the episodes the environment cuts itself
    (``truncated=True``), of which those shorter than the horizon give no probe."""
    if cap is None:
        return _why_cut_probes_are_lost(gamma), bias_horizon(gamma)
    return cut_probes_never_count(cap, gamma), None


class CutTally(NamedTuple):
    """Training episodes that ended, and those of them the time limit cut (truncated, not
    terminated), each with its steps since learning started (probes are taken only then)."""

    cut: int
    episodes: int
    cut_steps: int
    steps: int

    @property
    def share(self) -> float:
        """The cut episodes' share of the steps since learning started (0 if none)."""
        return self.cut_steps / self.steps if self.steps else 0.0

    def add(
        self,
        end: Any,
        length: Any,
        terminated: Any,
        truncated: Any,
        start: int,
        shorter_than: int | None = None,
    ) -> CutTally:
        """This tally and the episodes that ended at steps ``end`` after ``length`` steps
        with flags ``terminated`` and ``truncated`` (arrays or Series alike), learning
        having started at step ``start``; with ``shorter_than``, only cut episodes of fewer
        steps count as cut (those none of whose probes can count)."""
        end, length = np.asarray(end, dtype=np.int64), np.asarray(length, dtype=np.int64)
        cut = np.asarray(truncated, dtype=bool) & ~np.asarray(terminated, dtype=bool)
        if shorter_than is not None:
            cut &= length < shorter_than
        steps = np.maximum(end - np.maximum(end - length, start), 0)  # each in (end-length, end]
        return CutTally(
            self.cut + int(cut.sum()),
            self.episodes + len(end),
            self.cut_steps + int(steps[cut].sum()),
            self.steps + int(steps.sum()),
        )


def cut_episodes_message(
    cap: int | None, gamma: float, why: str, tally: CutTally | None, when: str = ""
) -> str:
    """The warning that only episodes that terminate give bias numbers (``why``: from
    :func:`cut_probes_never_count`), with ``tally``'s numbers if given, said ``when``
    (e.g. ``"by step 60 of 200"``, ``"in all"``). With no ``cap`` (None), of the episodes
    the environment cuts itself (``truncated=True``), of which the tally counts only those
    shorter than ``bias_horizon(gamma)`` (:class:`CutEpisodesCheck`) and the words say so."""
    k = None if cap is not None else bias_horizon(gamma)  # self-cut: the length that counts
    how_many = ""
    if tally is not None:
        lost = (
            "no bias probe counted"
            if tally.share >= 1
            else "about that share of the bias probes did not count"
        )
        shorter = "" if k is None else f" in fewer than {k:,} steps"  # not: "4 short ones"
        how_many = (
            f"; {when + ' ' if when else ''}it cut {tally.cut:,} of the {tally.episodes:,} "
            f"training episodes{shorter}, which held "
            f"{tally.share:.0%} of the steps since learning started: {lost}"
        )
    if cap is None:  # cut by the environment itself (truncated=True): by its own length
        longer = "" if k is None else f", or that are cut {k:,}+ steps in,"
        return (
            f"episodes the environment cuts itself (truncated=True; no --max-episode-steps) "
            f"with --gamma {gamma}: only episodes that terminate{longer} give bias numbers "
            f"({why}){how_many}"
        )
    return (
        f"--max-episode-steps {cap} with --gamma {gamma}: only episodes that terminate give "
        f"bias numbers ({why}){how_many}"
    )


class CutEpisodesCheck:
    """The :class:`CutEpisodesWarning` of one training run (``Trainer``), at most twice.

    Early (:meth:`interval`): at the first metrics interval at which the episodes the time
    limit cut so far hold :data:`CUT_SHARE_WARNED` of all the steps since learning started
    that the run's seeds can take, so that the whole run's share reaches it whatever
    follows: a long MountainCar-v0 run at gamma 0.99 learned of it only at its end. Not on
    the share so far alone: the first episodes, of a nearly random policy, are the ones a
    cap cuts (docs/deep-agents.md's Corridor: 44% of the steps by step 2,000 of 20,000, 9% in all).
    At the end (:meth:`end`): the whole run's numbers, if its share reaches
    :data:`CUT_SHARE_WARNED`, unless the early warning said them (no episode ended since).

    ``rows`` (both methods): the trainer's episodes rows (seed, episode, step, return,
    length, terminated, truncated), only appended to; each is counted once.

    A warnings filter that makes the early warning an error (``-W error``) does not stop
    the run midway, losing its steps since the last checkpoint (and again on every
    resume): the end raises it instead, once the run's tables are written."""

    def __init__(self, cfg: ResolvedTrainConfig) -> None:
        """The check of the run ``cfg``."""
        self.cfg = cfg
        # No cap: an environment may still cut its own episodes (truncated=True, e.g. at a
        # step count of its own); those shorter than the horizon give no probe either.
        self.why, self.shorter_than = cut_episodes_terms(cfg.max_episode_steps, cfg.gamma)
        # The most steps since learning started that the run's episodes can hold.
        self.most = len(cfg.seeds) * max(cfg.steps - cfg.learning_starts, 0)
        self.tally = CutTally(0, 0, 0, 0)
        self.counted = 0  # rows counted in tally
        self.warned: CutTally | None = None
        self.deferred = False  # the early warning, raised by a filter, left to end()

    def _count(self, rows: list[list[Any]]) -> CutTally:
        new = rows[self.counted :]
        if new:
            _, _, end, _, length, terminated, truncated = zip(*new, strict=True)
            start = self.cfg.learning_starts
            self.tally = self.tally.add(
                end, length, terminated, truncated, start, self.shorter_than
            )
            self.counted = len(rows)
        return self.tally

    def interval(self, rows: list[list[Any]], step: int) -> None:
        """At the metrics interval ending at ``step`` (before the last step: :meth:`end`
        then): warn if the whole run's share is sure to reach :data:`CUT_SHARE_WARNED`."""
        if self.why is None or self.warned is not None or self.deferred or step >= self.cfg.steps:
            return
        tally = self._count(rows)
        if tally.cut_steps < CUT_SHARE_WARNED * self.most or not tally.cut_steps:
            return
        self.warned = tally
        c = self.cfg
        when = f"by step {step:,} of {c.steps:,}"
        message = cut_episodes_message(c.max_episode_steps, c.gamma, self.why, tally, when) + (
            "; bias_mean, bias_std and bias_abs leave them out (bias_n counts the rest), and "
            f"whatever follows, cut episodes will hold {CUT_SHARE_WARNED:.0%} or more of the "
            "run's steps since learning started"
        )
        try:
            with tqdm.external_write_mode():  # not into a progress bar's line
                warnings.warn(message, CutEpisodesWarning, stacklevel=outside_stacklevel())
        except CutEpisodesWarning:  # an "error" filter: not midway, which loses the steps
            self.warned, self.deferred = None, True  # since the checkpoint: end() raises it

    def end(self, rows: list[list[Any]]) -> None:
        """At the end of training: warn with the whole run's numbers if its cut episodes
        hold :data:`CUT_SHARE_WARNED` or more of the steps since learning started, unless
        :meth:`interval` said the same numbers."""
        if self.why is None:
            return
        tally = self._count(rows)
        if tally.share < CUT_SHARE_WARNED or tally == self.warned:
            return
        c = self.cfg
        when = "" if self.warned is None else "in all"  # after the numbers of a step
        message = cut_episodes_message(c.max_episode_steps, c.gamma, self.why, tally, when)
        warnings.warn(message, CutEpisodesWarning, stacklevel=outside_stacklevel())
