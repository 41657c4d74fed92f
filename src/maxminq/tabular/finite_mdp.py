"""Tabular Generalized Q-learning on finite MDPs given as arrays (Lan et al. 2020, section 6).

An MDP is ``P[s, a, s']`` (transition probabilities), ``R[s, a]`` (expected rewards, observed
with optional Gaussian noise), a discount ``gamma`` and an optional mask of absorbing terminal
states whose action values are fixed at zero (Theorem 2 (ii)).

:func:`generalized_q_learning` keeps N estimators and the K most recent snapshots of them and
updates with ``Y^GQ = r + gamma * G(Q_{s'}(t-1), ..., Q_{s'}(t-K))``, where G is one of the
functions in :mod:`maxminq.operators` (the only place bootstrap values are computed). Under
Assumption 1 (conditions on G) and Robbins-Monro step sizes (Assumption 2), Theorem 2 says
every estimator converges to Q* with probability one; :func:`value_iteration` gives Q*.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from maxminq._progress import progress_bar
from maxminq.errors import MaxminqWarning, outside_stacklevel
from maxminq.operators import OPERATORS, load_operator, own_operator, td_target

__all__ = [
    "ASYMMETRIC_OPERATORS",
    "FiniteMDP",
    "GQResult",
    "NonFiniteTablesWarning",
    "episodic_mdp",
    "generalized_q_learning",
    "random_mdp",
    "value_iteration",
]

# Operators whose member 0 plays a special role (it selects the action): when estimator i is
# updated, the member stack is rotated so that i comes first (van Hasselt 2010's swap).
ASYMMETRIC_OPERATORS = frozenset({"double_q", "weighted_double_q"})


@dataclass(frozen=True)
class FiniteMDP:
    """A finite MDP as arrays.

    Attributes:
        P: transition probabilities, shape (S, A, S); ``P[s, a]`` sums to one.
        R: expected rewards, shape (S, A).
        gamma: discount factor in [0, 1].
        reward_noise: standard deviation of the Gaussian noise on observed rewards.
        terminal: shape (S,) bool; absorbing states whose action values are fixed at zero.
    """

    P: np.ndarray
    R: np.ndarray
    gamma: float
    reward_noise: float = 0.0
    terminal: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        # Lists are arrays too (they failed with "'list' object has no attribute 'size'").
        object.__setattr__(self, "P", np.asarray(self.P, dtype=np.float64))
        object.__setattr__(self, "R", np.asarray(self.R, dtype=np.float64))
        terminal = None if np.size(self.terminal) == 0 else self.terminal
        object.__setattr__(self, "terminal", _terminal_mask(terminal, self.P.shape[0]))
        _check_mdp(self.P, self.R, self.gamma, self.terminal)
        object.__setattr__(self, "gamma", float(self.gamma))
        object.__setattr__(self, "reward_noise", _number(self.reward_noise, "reward_noise"))
        if not 0 <= self.reward_noise < np.inf:
            raise ValueError(f"reward_noise must be finite and >= 0, got {self.reward_noise}")

    @property
    def n_states(self) -> int:
        """The number of states."""
        return int(self.P.shape[0])

    @property
    def n_actions(self) -> int:
        """The number of actions."""
        return int(self.P.shape[1])

    def q_star(self, tol: float = 1e-12) -> np.ndarray:
        """Q* of this MDP by :func:`value_iteration`, shape (S, A)."""
        return value_iteration(self.P, self.R, self.gamma, self.terminal, tol=tol)

    def learn(
        self,
        operator: str | Callable[..., Any],
        n: int,
        k: int,
        steps: int,
        rng: np.random.Generator,
        **kwargs: Any,
    ) -> GQResult:
        """:func:`generalized_q_learning` on this MDP, with its reward noise and terminal
        states (passing ``P``, ``R`` and ``gamma`` alone silently dropped the noise). With
        ``q_star=`` the errors and biases are recorded every ``steps // 100`` updates
        unless ``record_every`` says otherwise. The MDP's own settings (``P``, ``R``,
        ``gamma``, ``reward_noise``, ``terminal``) are not options here: another value is
        another MDP, ``dataclasses.replace(mdp, reward_noise=0.5)``."""
        # (they failed with Python's "got multiple values for keyword argument 'reward_noise'")
        mine = [key for key in _MDP_FIELDS if key in kwargs]
        if mine:
            key = mine[0]
            raise TypeError(
                f"learn: {key} is the MDP's own ({type(self).__name__}.{key}), not an option of "
                f"learn; for another {key} learn on dataclasses.replace(mdp, {key}=...)"
            )
        return generalized_q_learning(
            self.P, self.R, self.gamma, operator, n, k, steps, rng,
            reward_noise=self.reward_noise, terminal=self.terminal, **kwargs,
        )  # fmt: skip


#: The fields of :class:`FiniteMDP`, which :meth:`FiniteMDP.learn` passes itself.
_MDP_FIELDS = ("P", "R", "gamma", "reward_noise", "terminal")


def _terminal_mask(terminal: Any, n_states: int) -> np.ndarray:
    """``terminal`` (None, or S flags: booleans or 0/1) as a boolean mask of shape (S,)."""
    if terminal is None:
        return np.zeros(n_states, dtype=bool)
    flags = np.asarray(terminal)
    # 0/1 integers are flags too; as ints, ~flags was -1/-2 (every state "non-terminal") and
    # q[:, flags] zeroed states 0 and 1 instead of the terminal ones.
    if flags.dtype != bool and not (flags.size and np.isin(flags, (0, 1)).all()):
        raise ValueError(
            f"terminal must be S = {n_states} flags (booleans or 0/1), got {terminal!r}"
        )
    return flags.astype(bool)


def _next_states(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws: for each row of ``cdf`` (U, S) the first state whose cumulative
    probability exceeds ``u`` (U, 1) in [0, 1), as ``searchsorted(side="right")`` in async
    mode. (Counting ``cdf < u`` instead drew a state of probability zero when u hit a cumulative
    value exactly, e.g. state 0 at u = 0.) Capped at S - 1 against cdf rounding below 1."""
    return np.minimum((cdf <= u).sum(axis=1), cdf.shape[1] - 1)


def _check_rng(rng: Any) -> None:
    if not isinstance(rng, np.random.Generator):  # an int seed failed deep inside the code
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")


def _number(value: Any, name: str) -> float:
    """``value`` as one real number (NaN and infinities pass, for the range checks that follow
    to name); ValueError naming ``name`` otherwise (a string or None failed later with
    "'<=' not supported between instances of 'float' and 'str'", an array of one gamma was
    kept as an array)."""
    # (float() itself takes b"0.9" as 0.9 and np.True_ as 1.0)
    if isinstance(value, bool | np.bool_ | str | bytes) or np.ndim(value) != 0:
        raise ValueError(f"{name} must be one real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be one real number, got {value!r}") from None


def _is_count(value: Any, low: int) -> bool:
    """Whether ``value`` is a whole number (not a bool, float or string) >= ``low``."""
    whole = isinstance(value, int | np.integer) and not isinstance(value, bool)
    return bool(whole and value >= low)


def _check_mdp(P: np.ndarray, R: np.ndarray, gamma: float, terminal: np.ndarray) -> None:
    if P.ndim != 3 or P.shape[0] != P.shape[2] or P.shape[0] < 1 or P.shape[1] < 1:
        raise ValueError(f"P must have shape (S, A, S), got {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R must have shape (S, A) = {P.shape[:2]}, got {R.shape}")
    # Name the first offending entry: in a hand-written MDP it is the one to look at.
    negative = np.argwhere(~(P >= 0))  # NaN too
    if negative.size:
        s, a, s2 = negative[0]
        raise ValueError(f"P must be non-negative, got P[{s}, {a}, {s2}] = {P[s, a, s2]:g}")
    sums = P.sum(axis=-1)
    off = np.argwhere(~np.isclose(sums, 1.0, atol=1e-9))
    if off.size:
        s, a = off[0]
        raise ValueError(f"each P[s, a] must sum to 1, got P[{s}, {a}].sum() = {sums[s, a]:.12g}")
    if not np.all(np.isfinite(R)):
        raise ValueError("R must be finite")
    if not 0.0 <= _number(gamma, "gamma") <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
    if terminal.shape != (P.shape[0],):
        raise ValueError(f"terminal must have shape (S,) = ({P.shape[0]},), got {terminal.shape}")
    for s in np.flatnonzero(terminal):
        if not (np.allclose(P[s, :, s], 1.0) and np.allclose(R[s], 0.0)):
            raise ValueError(f"terminal state {s} must be absorbing with zero reward")
    if gamma == 1.0 and not terminal.any():
        raise ValueError("gamma = 1 needs an absorbing terminal state (Theorem 2 (ii))")
    if gamma == 1.0:
        # Else value iteration ran its 10^6 sweeps before failing (18 s on 2 states) and
        # Generalized Q-learning drifted without bound, both without a word.
        trapped = _improper_start(P, terminal)
        if trapped is not None:
            s, a = trapped
            raise ValueError(
                "gamma = 1 needs every policy to reach a terminal state (Theorem 2 (ii)), but "
                f"a policy that takes action {a} in state {s} can stay among the non-terminal "
                "states forever; use gamma < 1 or give every such loop a way out"
            )


def _improper_start(P: np.ndarray, terminal: np.ndarray) -> tuple[int, int] | None:
    """A (state, action) from which some policy never reaches a terminal state, or None when
    every policy is proper.

    ``sure`` grows from the terminal states by the states all of whose actions have a
    positive chance to enter it: from those, every policy (any history dependence included)
    terminates with probability one. The states never added form a set that some action of
    each keeps the process in; ``hit`` is updated only with the newly added states, so the
    whole computation reads P once (S * A * S)."""
    sure = terminal.copy()
    hit = np.zeros(P.shape[:2], dtype=bool)  # (s, a) can enter `sure` in one step
    new = terminal
    while new.any():
        hit |= P[:, :, new].sum(axis=-1) > 0
        new = hit.all(axis=1) & ~sure
        sure |= new
    stuck = np.flatnonzero(~sure)
    if stuck.size == 0:
        return None
    s = int(stuck[0])
    return s, int(np.flatnonzero(~hit[s])[0])


def random_mdp(
    n_states: int,
    n_actions: int,
    rng: np.random.Generator,
    gamma: float = 0.9,
    branching: int | None = None,
    reward_noise: float = 0.0,
) -> FiniteMDP:
    """A random discounted MDP: each (s, a) leads to ``branching`` random successor states
    (all S by default) with Dirichlet(1) probabilities; expected rewards ``R ~ U(-1, 1)``."""
    _check_rng(rng)
    if not (_is_count(n_states, 1) and _is_count(n_actions, 1)):  # 3.0 failed inside NumPy
        raise ValueError(
            f"n_states and n_actions must be whole numbers >= 1, got {n_states!r}, {n_actions!r}"
        )
    branching = n_states if branching is None else branching
    if not (_is_count(branching, 1) and branching <= n_states):
        raise ValueError(f"branching must be a whole number in 1..n_states, got {branching!r}")
    P = np.zeros((n_states, n_actions, n_states))
    for s in range(n_states):
        for a in range(n_actions):
            successors = rng.choice(n_states, size=branching, replace=False)
            P[s, a, successors] = rng.dirichlet(np.ones(branching))
    R = rng.uniform(-1.0, 1.0, size=(n_states, n_actions))
    return FiniteMDP(P, R, gamma, reward_noise)


def episodic_mdp(
    n_states: int,
    n_actions: int,
    rng: np.random.Generator,
    termination: float = 0.2,
    reward_noise: float = 0.0,
    branching: int | None = None,
) -> FiniteMDP:
    """A random undiscounted (gamma = 1) episodic MDP whose last state is absorbing.

    Every non-terminal (s, a) moves to the absorbing state with probability at least
    ``termination`` > 0, so every policy reaches it with probability one: all policies are
    proper, the setting of Theorem 2 (ii). The remaining probability goes to ``branching``
    random non-terminal states (all by default) with Dirichlet(1) weights. Expected rewards
    ``R ~ U(-1, 1)`` off the terminal state, 0 on it.
    """
    _check_rng(rng)
    if not (_is_count(n_states, 2) and _is_count(n_actions, 1)):
        raise ValueError(
            "an episodic MDP needs whole numbers n_states >= 2 and n_actions >= 1, got "
            f"{n_states!r}, {n_actions!r}"
        )
    if not 0.0 < _number(termination, "termination") <= 1.0:
        raise ValueError(f"termination must lie in (0, 1], got {termination}")
    end = n_states - 1
    branching = end if branching is None else branching
    if not (_is_count(branching, 1) and branching <= end):
        raise ValueError(f"branching must be a whole number in 1..n_states - 1, got {branching!r}")
    P = np.zeros((n_states, n_actions, n_states))
    for s in range(end):
        for a in range(n_actions):
            p_end = termination + (1 - termination) * rng.uniform(0.0, 0.5)
            successors = rng.choice(end, size=branching, replace=False)
            P[s, a, successors] = (1 - p_end) * rng.dirichlet(np.ones(branching))
            P[s, a, end] = p_end
    P[end, :, end] = 1.0
    R = rng.uniform(-1.0, 1.0, size=(n_states, n_actions))
    R[end] = 0.0
    terminal = np.zeros(n_states, dtype=bool)
    terminal[end] = True
    return FiniteMDP(P, R, 1.0, reward_noise, terminal)


def value_iteration(
    P: np.ndarray,
    R: np.ndarray,
    gamma: float,
    terminal: np.ndarray | None = None,
    tol: float = 1e-12,
    max_iter: int = 1_000_000,
) -> np.ndarray:
    """Q* by value iteration: ``Q <- R + gamma * P max_a' Q(s', a')`` until the sup-norm
    change is below ``tol``. Terminal (absorbing) states keep value 0. Returns shape (S, A)."""
    P, R = np.asarray(P, dtype=np.float64), np.asarray(R, dtype=np.float64)
    terminal = _terminal_mask(terminal, P.shape[0])
    _check_mdp(P, R, gamma, terminal)
    # A tolerance of 0 or below is never met (tol=-1 ran all 10^6 sweeps, then blamed the MDP:
    # "did not converge ... (improper?)"), nor is any with max_iter = 0.
    if not 0.0 < _number(tol, "tol") < np.inf:
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if not _is_count(max_iter, 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    q = np.zeros_like(R)
    for _ in range(max_iter):
        v = np.where(terminal, 0.0, q.max(axis=1))
        new = np.where(terminal[:, None], 0.0, R + gamma * P @ v)
        if np.max(np.abs(new - q)) < tol:
            return new
        q = new
    raise ValueError(
        f"value_iteration did not converge to tol = {tol:g} in {max_iter} iterations (gamma "
        "near 1 needs more: raise max_iter, or tol if the values are large)"
    )


@dataclass(frozen=True)
class GQResult:
    """Output of :func:`generalized_q_learning`.

    Attributes:
        q: the N estimators after the last update, shape (N, S, A).
        history: the K most recent snapshots, newest first, shape (K, N, S, A).
        counts: number of updates of each estimator entry, shape (N, S, A).
        error_updates: update indices at which ``errors`` was recorded.
        errors: ``max_i max_{s,a} |Q^i(s, a) - Q*(s, a)|`` at those updates (if ``q_star``).
        biases: the bootstrap's estimation bias at those updates: the mean over non-terminal
            states s of ``G(Q_s) - max_a Q*(s, a)``, G applied to the current N x K stack
            (averaged over the N role rotations of Double / Weighted Double Q); the signed
            counterpart of Theorem 1's ``Z_MN / gamma`` along a run (if ``q_star``).
    """

    q: np.ndarray
    history: np.ndarray
    counts: np.ndarray
    error_updates: np.ndarray
    errors: np.ndarray
    biases: np.ndarray

    def max_error(self, q_star: np.ndarray) -> float:
        """Largest absolute deviation of any estimator from ``q_star``."""
        return float(np.max(np.abs(self.q - q_star[None])))


class NonFiniteTablesWarning(MaxminqWarning):
    """Tabular Generalized Q-learning ended with NaN or infinite values in its tables: the
    MDP and the initial values were finite, so the operator's G gave such values (a G of
    one's own dividing by zero, say) or the updates diverged."""


def generalized_q_learning(
    P: np.ndarray,
    R: np.ndarray,
    gamma: float,
    operator: str | Callable[..., Any],
    n: int,
    k: int,
    steps: int,
    rng: np.random.Generator,
    mode: str = "sync",
    *,
    update: str = "one",
    reward_noise: float = 0.0,
    terminal: np.ndarray | None = None,
    step_power: float = 0.6,
    init_scale: float = 0.0,
    q0: np.ndarray | None = None,
    snapshot_every: int = 1,
    operator_kwargs: dict[str, Any] | None = None,
    q_star: np.ndarray | None = None,
    record_every: int | None = None,
    progress: bool = False,
) -> GQResult:
    """Tabular Generalized Q-learning (Lan et al. 2020, section 6, Theorem 2).

    Every update picks one estimator ``i`` uniformly at random (Algorithm 1) and moves
    ``Q^i(s, a)`` towards ``Y^GQ = r + gamma * G(Q_{s'})`` with step size
    ``alpha = visits^-step_power`` (visits of that entry), a Robbins-Monro schedule for
    ``0.5 < step_power <= 1`` (Assumption 2). ``G`` is applied to the stack of the N estimators
    times the K most recent snapshots at ``s'`` (members ordered estimator-major, newest
    snapshot first), computed by ``operator`` from :mod:`maxminq.operators`.

    Modes:
        ``"sync"``: one update is a sweep: for every non-terminal (s, a) a next state and a
        reward are sampled and one random estimator is updated (``update="one"``, as in
        Algorithm 1), vectorised over states.
        With ``update="all"`` (sync only), every estimator is updated in every sweep, each
        from its own independently sampled transition (N times the samples per sweep).
        ``"async"``: one update is one transition of a trajectory under the uniformly random
        behaviour policy; reaching a terminal state restarts at a random non-terminal state.

    Args:
        P, R, gamma: the MDP (shapes (S, A, S) and (S, A)); see :class:`FiniteMDP`.
        operator: a key of ``maxminq.operators.OPERATORS``, a G function, or its name
            ``'module:function'`` (``operators.load_operator``) (one of those
            keys' functions runs as its key; another sees the members in estimator order,
            with no role rotation, and a batch axis in both modes: (states, N K, A) in sync
            mode, (1, N K, A) in async mode; its values are read as float64 NumPy).
        n: number of estimators N. k: number of snapshots K (1 = the current tables only).
        steps: number of updates (sweeps in sync mode, transitions in async mode).
        rng: the only source of randomness.
        reward_noise: standard deviation of Gaussian noise added to the sampled rewards.
        terminal: absorbing states (values fixed at zero), required when ``gamma = 1``.
        step_power: exponent of the step-size schedule, in (0.5, 1].
        init_scale: initial values are ``init_scale * N(0, 1)`` (terminal rows are zero).
        q0: explicit initial values, shape (N, S, A); overrides ``init_scale``.
        snapshot_every: a snapshot is pushed every this many updates (1: snapshot j is
            ``Q(t - j)``, as in the paper).
        operator_kwargs: extra keyword arguments for the G function (e.g. ``c``, ``sigma``).
        q_star: if given, the error against it and the bootstrap's bias (see
            :class:`GQResult`) are recorded every ``record_every`` updates.
        record_every: recording interval in updates; default (None) with ``q_star``
            ``max(1, steps // 100)`` (about 100 records, the last at or near ``steps``);
            0: no recording. Without ``q_star`` there is nothing to record: a positive
            value is a ValueError rather than an empty record.
        progress: show a progress bar.

    Tables that end non-finite (a G of one's own giving NaN or inf, or divergence) are a
    :class:`NonFiniteTablesWarning` pointing at the caller's line; the result is returned.
    """
    P, R = np.asarray(P, dtype=np.float64), np.asarray(R, dtype=np.float64)
    terminal = _terminal_mask(terminal, P.shape[0])
    _check_mdp(P, R, gamma, terminal)
    _check_rng(rng)
    own_g = False  # a G function of your own (not one of maxminq.operators)
    op: Callable[..., Any]
    label = operator if isinstance(operator, str) else getattr(operator, "__name__", "G")
    if isinstance(operator, str) and ":" in operator:  # 'module:function', a G of one's own
        operator = load_operator(operator)
    if isinstance(operator, str):
        if operator not in OPERATORS:
            raise ValueError(f"operator must be one of {sorted(OPERATORS)}, got {operator!r}")
        op, rotate = OPERATORS[operator], operator in ASYMMETRIC_OPERATORS
    elif callable(operator):
        # The library's own G as a function is its name (operators.double_q skipped the swap
        # and so learnt another rule than "double_q"); any other G sees estimator 0 first.
        name = next((key for key, fn in OPERATORS.items() if fn is operator), None)
        op, rotate = operator, name in ASYMMETRIC_OPERATORS
        own_g = name is None  # (its values are read as float64 below: a G returning a torch
        # tensor failed at the first update, in td_target)
    else:
        raise ValueError(f"operator must be a name or a callable, got {operator!r}")
    for name, value, low in (
        ("n", n, 1),
        ("k", k, 1),
        ("snapshot_every", snapshot_every, 1),
        ("steps", steps, 0),
        ("record_every", 0 if record_every is None else record_every, 0),
    ):
        if isinstance(value, bool) or not (isinstance(value, int | np.integer) and value >= low):
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if mode not in ("sync", "async"):
        raise ValueError(f"mode must be 'sync' or 'async', got {mode!r}")
    if update not in ("one", "all"):
        raise ValueError(f"update must be 'one' or 'all', got {update!r}")
    if update == "all" and mode != "sync":
        raise ValueError("update='all' is only available in sync mode")
    if not 0.5 < _number(step_power, "step_power") <= 1.0:
        raise ValueError(f"step_power must lie in (0.5, 1] (Robbins-Monro), got {step_power}")
    # Infinite noise or initial values only gave NaN tables (and NumPy warnings).
    if not 0 <= _number(reward_noise, "reward_noise") < np.inf:
        raise ValueError(f"reward_noise must be finite and >= 0, got {reward_noise}")
    if not np.isfinite(_number(init_scale, "init_scale")):
        raise ValueError(f"init_scale must be finite, got {init_scale}")
    if terminal.all():
        raise ValueError("terminal: at least one state must be non-terminal")
    kwargs = dict(operator_kwargs or {})
    S, A = R.shape
    if record_every is None:  # asked for q_star: record it, without a second option to find
        record_every = 0 if q_star is None else max(1, steps // 100)
    elif record_every > 0 and q_star is None:
        raise ValueError("record_every needs q_star: the errors and biases are against Q*")
    if q_star is not None and np.shape(q_star) != (S, A):
        raise ValueError(f"q_star must have shape (S, A) = {(S, A)}, got {np.shape(q_star)}")
    if q_star is not None and not np.isfinite(np.asarray(q_star, dtype=np.float64)).all():
        # every recorded error and bias was NaN, without a word
        raise ValueError("q_star must be finite")
    try:  # fail now if G rejects N * K members (or the parameters), or breaks G's contract
        if own_g:  # (a G reducing the states too failed later: invalid index to scalar)
            op = own_operator(op, [(1, n * k, A)], label, **kwargs)
        else:
            op(np.zeros((1, n * k, A)), **kwargs)
    except ValueError as err:  # say where G's count of members came from, after G's error
        # (put first, it read as the cause of a bad parameter: "... = 2 members: c must be > 0")
        members = f"n = {n} estimators x k = {k} snapshots = {n * k} members"
        raise ValueError(f"{err} (G applied to {members})") from None

    if q0 is None:
        start = init_scale * rng.standard_normal((n, S, A))
    elif np.shape(q0) == (n, S, A):
        start = np.array(q0, dtype=np.float64)
        if not np.isfinite(start).all():
            raise ValueError("q0 must be finite")
    else:
        raise ValueError(f"q0 must have shape (N, S, A) = {(n, S, A)}, got {np.shape(q0)}")
    start[:, terminal] = 0.0
    history = np.repeat(start[None], k, axis=0)  # (K, N, S, A), history[j] = Q(t - 1 - j)
    counts = np.zeros((n, S, A), dtype=np.int64)
    record = q_star is not None and record_every > 0
    live = ~terminal
    v_star = None if q_star is None else np.max(q_star, axis=1)
    err_at: list[int] = []
    errs: list[float] = []
    biases: list[float] = []

    def g_values(members: np.ndarray) -> np.ndarray:
        """G at each state of ``members`` (..., N, K, A); with rotation, one row per i."""
        lead = members.shape[:-3]
        if not rotate:
            return op(members.reshape(*lead, n * k, A), **kwargs)
        rolled = [np.roll(members, -i, axis=-3).reshape(*lead, n * k, A) for i in range(n)]
        return np.stack([op(x, **kwargs) for x in rolled])  # (N, ...)

    def record_at(t: int) -> None:
        assert q_star is not None and v_star is not None  # recording needs q_star
        err_at.append(t)
        errs.append(float(np.max(np.abs(history[0] - q_star[None]))))
        g = g_values(history.transpose(2, 1, 0, 3))  # (S,), or (N, S) with rotation
        biases.append(float(np.mean(g[..., live] - v_star[live])))

    def push_snapshot(t: int) -> None:
        if k > 1 and t % snapshot_every == 0:
            history[1:] = history[:-1].copy()

    cdf = np.cumsum(P, axis=-1)
    if mode == "sync":
        s_idx, a_idx = np.nonzero(np.broadcast_to(~terminal[:, None], (S, A)))
        if update == "all":  # every estimator, each from its own sampled transition
            est = np.repeat(np.arange(n), s_idx.size)
            s_idx, a_idx = np.tile(s_idx, n), np.tile(a_idx, n)
        cdf_sa = cdf[s_idx, a_idx]  # (U, S) for the U updates of a sweep
        r_sa = R[s_idx, a_idx]
        terminal_f = terminal.astype(np.float64)
        block = max(1, (1 << 16) // s_idx.size)  # sweeps per block of random numbers
        with progress_bar(total=steps, desc=f"GQ sync {label}", enabled=progress) as bar:
            for lo in range(0, steps, block):
                size = min(block, steps - lo)
                us = rng.random((size, s_idx.size, 1))
                noises = reward_noise * rng.standard_normal((size, s_idx.size))
                if update == "one":  # Algorithm 1: one random estimator per sampled transition
                    ests = rng.integers(n, size=(size, s_idx.size))
                for j in range(size):
                    t = lo + j
                    nxts = _next_states(cdf_sa, us[j])
                    if update == "one":
                        est = ests[j]
                    # (S, N, K, A) stack of next-state values; G once per sweep for every state.
                    g = g_values(history.transpose(2, 1, 0, 3))
                    g_next = g[est, nxts] if rotate else g[nxts]
                    target = td_target(r_sa + noises[j], gamma, terminal_f[nxts], g_next)
                    push_snapshot(t)
                    current = history[0]
                    counts[est, s_idx, a_idx] += 1
                    alpha = counts[est, s_idx, a_idx] ** -step_power
                    current[est, s_idx, a_idx] += alpha * (target - current[est, s_idx, a_idx])
                    if record and (t + 1) % record_every == 0:
                        record_at(t + 1)
                bar.update(size)
    else:
        starts = np.flatnonzero(~terminal)
        state = int(rng.choice(starts))
        block = 1 << 14
        bar = progress_bar(total=steps, desc=f"GQ async {label}", enabled=progress)
        with bar:  # closed on every way out (a KeyboardInterrupt too)
            for lo in range(0, steps, block):
                size = min(block, steps - lo)
                actions = rng.integers(A, size=size)
                us = rng.random(size)
                noise = reward_noise * rng.standard_normal(size)
                ests = rng.integers(n, size=size)
                restarts = rng.choice(starts, size=size)
                for j in range(size):
                    a, i = int(actions[j]), int(ests[j])
                    nxt = min(int(np.searchsorted(cdf[state, a], us[j], side="right")), S - 1)
                    members = history[:, :, nxt, :].transpose(1, 0, 2)  # (N, K, A)
                    if rotate:  # only the rotation that puts the updated estimator first
                        members = members[(np.arange(n) + i) % n]
                    if own_g:  # one state as a batch of one: G sees (..., N, A) as in sync mode
                        # (given (N K, A), a G counting axes from the front, q.min(axis=1), learnt
                        # another operator in async mode only, or failed at the first transition)
                        g_next = op(members.reshape(1, n * k, A), **kwargs)[0]
                    else:
                        g_next = op(members.reshape(n * k, A), **kwargs)
                    done = float(terminal[nxt])
                    target = td_target(R[state, a] + noise[j], gamma, done, g_next)
                    push_snapshot(lo + j)
                    current = history[0]
                    counts[i, state, a] += 1
                    alpha = counts[i, state, a] ** -step_power
                    current[i, state, a] += alpha * (target - current[i, state, a])
                    state = int(restarts[j]) if terminal[nxt] else nxt
                    if record and (lo + j + 1) % record_every == 0:
                        record_at(lo + j + 1)
                bar.update(size)
    if not np.isfinite(history[0]).all():  # the inputs were checked finite: G's values were not
        warnings.warn(
            f"generalized_q_learning: the Q tables went non-finite (NaN or inf) with operator "
            f"{label}: its G gave non-finite values, or the values diverged",
            NonFiniteTablesWarning,
            stacklevel=outside_stacklevel(),
        )
    return GQResult(
        q=history[0].copy(),
        history=history,
        counts=counts,
        error_updates=np.asarray(err_at, dtype=np.int64),
        errors=np.asarray(errs),
        biases=np.asarray(biases),
    )
