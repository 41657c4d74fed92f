"""Noisy Mountain Car with tile-coded Generalized Q-learning, vectorised over runs.

Lan et al. (2020), section 5 and appendix C.2: classic Mountain Car (Sutton & Barto 2018,
example 10.1) with reward ~ N(-1, sigma^2) per step, gamma = 1, eps-greedy (eps = 0.1),
replay buffer 100, 8 tilings of 8 x 8 tiles, step size from {0.005, 0.01, 0.02, 0.04, 0.08},
1,000 episodes, 100 runs, metric: steps in the last episode.

Dynamics (S&B): ``v <- clip(v + 0.001 (a - 1) - 0.0025 cos(3 x), -0.07, 0.07)``,
``x <- x + v``; at the left wall ``x = -1.2`` the velocity is set to 0; the episode
terminates when ``x >= 0.5``. Start: ``x ~ U(-0.6, -0.4)``, ``v = 0``. Actions 0, 1, 2 =
full throttle reverse, zero, forward. Episodes are truncated after ``max_steps`` (default
5,000); a truncated transition is stored as non-terminal and still bootstraps.

Step size convention (the paper does not say which it used): by default ``step_size`` is
the step size of each tiling, so each of the 8 active weights moves by ``step_size`` times
the TD error (``step_size_per="tiling"``); with ``step_size_per="total"`` each moves by
``step_size / 8`` (Sutton & Barto's convention, section 9.5.4). docs/classic-experiments.md
explains why the per-tiling reading is the default: only under it do Q-learning and Averaged
Q break down at sigma^2 = 50, as the paper reports.

Every run (runs x settings) is a lane of arrays with its own random stream. By default one
kernel call runs a lane's whole run: per agent step it acts, steps the environment, stores
the transition, samples the mini-batch, gathers the next-state action values of every sample
(B, M, 3) in the operator's member order, turns them into bootstrap values with the
operator's compiled twin (``maxminq.operators_jit``) and applies the sequential TD updates
(Algorithm 1's order), so the lane's weights stay in cache for the whole run. An operator
called with parameters, or a G function of one's own (``'module:function'``), has no
compiled twin: then all lanes step in lockstep, one kernel call per agent step gathers
(lanes, B, M, 3) for ``maxminq.operators`` (or the user's G) in NumPy and applies the
previous step's updates. Both paths give the same runs (tested).

Random draws per lane and step, in order: exploration uniform, action uniform (exploring) or
tie-break uniform (greedy, on exact ties only), two uniforms for the reward's normal
(Box-Muller), on update steps the chosen table (estimator and double kinds with M > 1) and
``batch_size`` buffer indices (with ``update_members`` u > 1, Algorithm 1's subset S for
maxmin and ensemble, then for each further member one draw choosing it among those left and
its own ``batch_size`` indices), and on an episode end one uniform for the next start.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import product
from types import SimpleNamespace
from typing import Any, Literal, cast, overload

import numpy as np
import pandas as pd

from maxminq._jit import njit
from maxminq._progress import progress_bar
from maxminq.errors import UsageError
from maxminq.linear.tiles import tile_indices
from maxminq.operators_jit import apply_operator, td_target
from maxminq.tabular.agent import (
    KIND_SNAPSHOTS,
    Names,
    agent_params,
    api_parameter,
    behaviour_values,
    check_algorithm_settings,
    check_float_list,
    check_positive_int,
    check_real,
    check_run_offset,
    cli_option,
    draw_more_members,
    draw_update,
    epsilon_greedy,
    kernel_operator_code,
    lane_seeds,
    member_order,
    ring_push,
    rng_normal,
    rng_uniform,
    setup_run,
    update_arrays,
)

__all__ = [
    "MC_DEFAULTS",
    "PAPER_STEP_SIZES",
    "PAPER_SIGMA2",
    "STEP_SIZE_PER",
    "check_settings",
    "check_step_size_per",
    "mountain_car_step",
    "run_mountain_car",
    "run_mountain_car_grid",
]

X_MIN, X_MAX, V_MIN, V_MAX, X_GOAL = -1.2, 0.5, -0.07, 0.07, 0.5
N_ACTIONS = 3
N_TILINGS, TILES_PER_DIM = 8, 8
N_FEATURES = N_TILINGS * (TILES_PER_DIM + 3) ** 2
PAPER_STEP_SIZES = (0.005, 0.01, 0.02, 0.04, 0.08)
PAPER_SIGMA2 = (0.0, 1.0, 10.0, 50.0)

#: Defaults. The paper states gamma, eps, buffer size, tilings and the step-size sweep; the
#: mini-batch size, replay ratio and initial weights are ours (see docs/classic-experiments.md).
MC_DEFAULTS: dict[str, Any] = {
    "gamma": 1.0,
    "epsilon": 0.1,
    "buffer_size": 100,
    "batch_size": 4,
    "update_every": 1,
    "max_steps": 5000,
    "init_weight": 0.0,
    "step_size_per": "tiling",
}
STEP_SIZE_PER = ("tiling", "total")


def check_step_size_per(value: Any, option: str = "--step-size-per") -> None:
    """Raise UsageError naming ``option`` unless ``value`` is one of STEP_SIZE_PER."""
    if value not in STEP_SIZE_PER:
        raise UsageError(f"{option}: expected one of {', '.join(STEP_SIZE_PER)}, got {value!r}")


@njit(inline="always")
def mountain_car_step(x: float, v: float, action: int) -> tuple[float, float, bool]:
    """One step of the classic dynamics; returns (x', v', terminated)."""
    v = v + 0.001 * (action - 1) - 0.0025 * math.cos(3.0 * x)
    v = min(max(v, V_MIN), V_MAX)
    x = x + v
    if x <= X_MIN:  # inelastic left wall
        x = X_MIN
        v = 0.0
    if x >= X_GOAL:
        return X_GOAL, v, True
    return x, v, False


@njit(inline="always")
def _tiles(x, v, out):  # pragma: no cover - numba
    tile_indices(x, v, X_MIN, X_MAX, V_MIN, V_MAX, N_TILINGS, TILES_PER_DIM, out)


@njit(inline="always")
def _tile_sum(w, lane, tiles, member, action):  # pragma: no cover - numba
    """q(s, action) of one table: the sum of its weights at the 8 active ``tiles``, in
    tiling order (the reference loop's order), summed in a register (accumulating into an
    array would make every += a store, since it may alias ``w``)."""
    acc = 0.0
    for t in range(N_TILINGS):
        acc += w[lane, tiles[t], member, action]
    return acc


@njit
def _init_lanes(rng, pos, vel, tiles_cur):  # pragma: no cover - numba
    for lane in range(rng.shape[0]):
        pos[lane] = -0.6 + 0.2 * rng_uniform(rng, lane)
        vel[lane] = 0.0
        _tiles(pos[lane], vel[lane], tiles_cur[lane])


@njit(inline="always")
def _act_lane(
    k, lane, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd, buf_i, buf_r, buf_size,
    buf_pos, chosen, idx, more, idx_more, gathered, scratch, values, tiles_tmp, kind, mode,
    epsilon, update_now, max_steps, steps_out,
):  # pragma: no cover - numba  # fmt: skip
    """Act, step, store, sample the mini-batch(es), gather next-state values of lane ``lane``
    (those of the first update; ``more``, ``idx_more``: the update subset's other members).

    Weights are laid out (lane, feature, member, action) so that one active tile's values for
    every member and action share one or two cache lines. Returns 1 if the lane has just
    finished its last episode, else 0.
    """
    n_members = w.shape[2]
    n_episodes = steps_out.shape[1]
    finished = 0
    per_member = scratch  # (M, A) action values of the current state
    c = cur[lane]
    for m in range(n_members):
        for a in range(N_ACTIONS):
            per_member[m, a] = _tile_sum(w, lane, tiles_cur[lane], m, a)
    behaviour_values(per_member, N_ACTIONS, mode, c, values)
    a = epsilon_greedy(values, N_ACTIONS, epsilon, rng, lane)
    r = -1.0 + sd[lane] * rng_normal(rng, lane)
    x2, v2, term = mountain_car_step(pos[lane], vel[lane], a)
    steps_ep[lane] += 1
    p = ring_push(buf_pos, buf_size, lane, buf_i.shape[1])
    for t in range(N_TILINGS):
        buf_i[lane, p, t] = tiles_cur[lane, t]
    _tiles(x2, v2, tiles_tmp)
    for t in range(N_TILINGS):
        buf_i[lane, p, N_TILINGS + t] = tiles_tmp[t]
    buf_i[lane, p, 2 * N_TILINGS] = a + 4 * term
    buf_r[lane, p] = r
    if update_now:
        i = draw_update(kind, n_members, rng, lane, buf_size[lane], idx)
        draw_more_members(n_members, rng, lane, i, buf_size[lane], more, idx_more)
        chosen[lane] = i
        _gather_batch(k, lane, w, c, buf_i, idx, i, gathered, kind)
    if term or steps_ep[lane] >= max_steps:  # goal reached, or truncated (still bootstraps)
        e = ep[lane]
        # negative: truncated at the cap (the goal reached on the cap's step is positive);
        # run_mountain_car_grid turns the sign into its reached_goal column
        steps_out[lane, e] = steps_ep[lane] if term else -steps_ep[lane]
        ep[lane] = e + 1
        if e + 1 == n_episodes:
            done[lane] = True
            finished += 1
        steps_ep[lane] = 0
        x2, v2 = -0.6 + 0.2 * rng_uniform(rng, lane), 0.0
        _tiles(x2, v2, tiles_tmp)
    for t in range(N_TILINGS):
        tiles_cur[lane, t] = tiles_tmp[t]
    pos[lane], vel[lane] = x2, v2
    return finished


@njit(inline="always")
def _gather_batch(k, lane, w, c, buf_i, idx, i, gathered, kind):  # pragma: no cover - numba
    """Next-state values of lane ``lane``'s mini-batch ``idx[lane]`` in operator order, for
    an update of table ``i`` (``c``: the newest table of snapshot kinds)."""
    n_members = w.shape[2]
    for b in range(idx.shape[1]):
        next_tiles = buf_i[lane, idx[lane, b], N_TILINGS : 2 * N_TILINGS]
        for m in range(n_members):
            src = member_order(kind, m, n_members, i, c)
            for a2 in range(N_ACTIONS):
                gathered[k, b, m, a2] = _tile_sum(w, lane, next_tiles, src, a2)


@njit(inline="always")
def _update_lane(
    k, lane, w, cur, buf_i, buf_r, chosen, idx, g, alpha, log, log_ptr, kind, gamma,
):  # pragma: no cover - numba  # fmt: skip
    """Sequential semi-gradient TD updates of lane ``lane``'s chosen table over its batch.

    Target ``r + gamma * (1 - terminal) * G`` with G from the operator (frozen for the batch);
    each of the 8 active weights of (s, a) moves by ``alpha * (target - q(s, a))``, where
    ``alpha`` is the lane's step size per weight.
    Snapshot kinds first bring the oldest table up to date (copying the weights written by the
    last K - 1 updates, recorded in ``log``) and then update it, so the ring again holds the
    newest K versions without copying whole tables.
    """
    n_members = w.shape[2]
    batch = idx.shape[1]
    n_log = log.shape[1]
    slot = chosen[lane]
    if kind == KIND_SNAPSHOTS:
        c = cur[lane]
        slot = (c + 1) % n_members
        if slot != c:
            for h in range(n_log):
                for q in range(log.shape[2]):
                    pos = log[lane, h, q]
                    if pos >= 0:
                        f, a = pos // N_ACTIONS, pos % N_ACTIONS
                        w[lane, f, slot, a] = w[lane, f, c, a]
        cur[lane] = slot
    step = alpha[lane]
    lp = log_ptr[lane]
    for b in range(batch):
        j = idx[lane, b]
        code = buf_i[lane, j, 2 * N_TILINGS]
        a, term = code & 3, code >> 2
        target = td_target(buf_r[lane, j], gamma, term, g[k, b])
        delta = step * (target - _tile_sum(w, lane, buf_i[lane, j, :N_TILINGS], slot, a))
        for t in range(N_TILINGS):
            f = buf_i[lane, j, t]
            w[lane, f, slot, a] += delta
            if kind == KIND_SNAPSHOTS and n_members > 1:
                log[lane, lp, b * N_TILINGS + t] = f * N_ACTIONS + a
    if kind == KIND_SNAPSHOTS and n_members > 1:
        log_ptr[lane] = (lp + 1) % n_log


@njit(_nrt=False)
def _step(
    active, pending, act, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd, buf_i,
    buf_r, buf_size, buf_pos, chosen, idx, more, idx_more, gathered, kind, mode, epsilon,
    update_now, max_steps, steps_out, g, alpha, log, log_ptr, gamma, scratch, values, tiles_tmp,
):  # pragma: no cover - numba  # fmt: skip
    """One agent step of every active lane, fused into one call.

    Per lane: if ``pending``, first the TD update of the previous step (``g[k]``: that step's
    bootstrap values from the operator, k = the lane's position in ``active``), then, if
    ``act``, act, step, store, sample and gather into ``gathered[k]`` for the next update.
    Doing both while the lane's weights are in cache, in one kernel call, is what makes this
    fast; per lane the order of updates and actions is that of Algorithm 1. Returns the number
    of lanes that finished their last episode.

    Compiled without numba's reference counting (``_nrt=False``): with it, every array handed
    to a helper was increfed and decrefed atomically, 30-60 atomic operations per lane and
    step, 12% of the run time. Nothing here allocates; the scratch arrays come from the caller.
    """
    finished = 0
    for k in range(active.shape[0]):
        lane = active[k]
        if pending:
            _update_lane(
                k, lane, w, cur, buf_i, buf_r, chosen, idx, g, alpha, log, log_ptr, kind, gamma
            )
        if act:
            finished += _act_lane(
                k, lane, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd, buf_i,
                buf_r, buf_size, buf_pos, chosen, idx, more, idx_more, gathered, scratch, values,
                tiles_tmp, kind, mode, epsilon, update_now, max_steps, steps_out,
            )  # fmt: skip
    return finished


@njit(_nrt=False)
def _run_lane(
    lane, op_code, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd, buf_i, buf_r,
    buf_size, buf_pos, chosen, idx, more, idx_more, gathered, kind, mode, epsilon, every,
    max_steps, steps_out, g, alpha, log, log_ptr, gamma, scratch, values, tiles_tmp,
):  # pragma: no cover - numba  # fmt: skip
    """Every agent step of lane ``lane``'s run, bootstrap values included.

    This is the lockstep loop's exact sequence (act and gather, G from the operator's
    compiled twin in ``maxminq.operators_jit``, TD update), so the results are the same; but
    the lane's weights stay in the core's cache for its whole run instead of being fetched
    again on every step, and no step returns to Python. ``gathered`` and ``g`` hold one
    lane's batch (first axis of size 1). With ``update_members`` u > 1 the subset's other
    members follow the first in turn (Algorithm 1's loop over S), each with G taken after
    the updates before it.
    """
    batch = idx.shape[1]
    t = 0
    while not done[lane]:
        update_now = t % every == 0
        _act_lane(
            0, lane, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd, buf_i, buf_r,
            buf_size, buf_pos, chosen, idx, more, idx_more, gathered, scratch, values, tiles_tmp,
            kind, mode, epsilon, update_now, max_steps, steps_out,
        )  # fmt: skip
        for j in range(1 + more.shape[1] if update_now else 0):
            if j > 0:  # the subset's next member, on its own mini-batch
                chosen[lane] = more[lane, j - 1]
                for b in range(batch):
                    idx[lane, b] = idx_more[lane, (j - 1) * batch + b]
                _gather_batch(0, lane, w, cur[lane], buf_i, idx, chosen[lane], gathered, kind)
            for b in range(batch):
                g[0, b] = apply_operator(op_code, gathered[0, b])
            _update_lane(
                0, lane, w, cur, buf_i, buf_r, chosen, idx, g, alpha, log, log_ptr, kind, gamma
            )
        t += 1


def _validate(params: dict[str, Any], names: Names = cli_option) -> dict[str, Any]:
    """The agent settings of ``params`` over ``MC_DEFAULTS`` checked; a UsageError names the
    bad one by ``names``."""
    counts = ("buffer_size", "batch_size", "update_every", "max_steps")
    p = agent_params(params, MC_DEFAULTS, "mountain car", counts, names)
    p["init_weight"] = check_real(p["init_weight"], names("init_weight"))
    check_step_size_per(p["step_size_per"], names("step_size_per"))
    return p


@njit(_nrt=False)
def _gather_more(
    j, active, w, cur, buf_i, chosen, idx, more, idx_more, gathered, kind
):  # pragma: no cover - numba  # fmt: skip
    """Lockstep, update subset (``update_members`` > 1): member ``j + 2`` of every active
    lane's subset becomes its chosen table, with its own mini-batch, whose next-state values
    are gathered into ``gathered[k]`` (after the updates of the members before it, as
    :func:`_run_lane` does)."""
    batch = idx.shape[1]
    for k in range(active.shape[0]):
        lane = active[k]
        chosen[lane] = more[lane, j]
        for b in range(batch):
            idx[lane, b] = idx_more[lane, j * batch + b]
        _gather_batch(k, lane, w, cur[lane], buf_i, idx, chosen[lane], gathered, kind)


def _run_lockstep(
    bootstrap: Callable[[np.ndarray], np.ndarray],
    s: SimpleNamespace,
    kind: int,
    mode: int,
    eps: float,
    every: int,
    max_steps: int,
    gamma: float,
    bar: Any,
) -> None:
    """All lanes step by step, the operator applied in NumPy by ``bootstrap`` (``maxminq.
    operators``, or a G of one's own), on gathered values of shape (lanes, B, M, A).

    The path for operators called with parameters and for a G of one's own (no compiled
    twin); same results as the per-lane kernel for the same operator, since each lane sees
    the same sequence. With ``update_members`` u > 1 the subset's members are updated in
    turn within the step, each with G taken after the updates before it.
    """
    extra = s.more.shape[1]
    n_lanes, batch = s.idx.shape
    n_members = s.w.shape[2]
    active = np.arange(n_lanes, dtype=np.int64)
    # Stored member-major, (M, A, lanes, B), and handed to the kernel and the operator as a
    # (lanes, B, M, A) view: NumPy then reduces over members slab by slab, which is 10-15x
    # faster than reducing a C-ordered (..., M, A) array with its tiny inner axes.
    gathered_mem = np.zeros((n_members, N_ACTIONS, n_lanes, batch))
    view = gathered_mem.transpose(2, 3, 0, 1)
    g = np.zeros((n_lanes, batch))
    step, pending = 0, False  # pending: the previous step's TD update is still to be applied

    def call(act: bool, pending: bool, update_now: bool) -> int:
        return _step(
            active, pending, act, s.w, s.cur, s.rng, s.pos, s.vel, s.tiles_cur, s.steps_ep,
            s.ep, s.done, s.sd, s.buf_i, s.buf_r, s.buf_size, s.buf_pos, s.chosen, s.idx, s.more,
            s.idx_more, view,
            kind, mode, eps, update_now, max_steps, s.steps_out, g, s.alpha, s.log, s.log_ptr,
            gamma, s.scratch, s.values, s.tiles_tmp,
        )  # fmt: skip

    # Large step sizes can make weights diverge (Q-learning at sigma^2 = 50 does): a measured
    # outcome (those lanes hit the step cap), not something to warn about on every step.
    with np.errstate(over="ignore", invalid="ignore"):
        while active.size:
            update_now = step % every == 0
            finished = call(True, pending, update_now)
            if update_now:
                g = bootstrap(view)
            pending = update_now
            if update_now and extra:  # the subset's members in turn, as _run_lane's
                call(False, True, update_now)
                for j in range(extra):
                    _gather_more(j, active, s.w, s.cur, s.buf_i, s.chosen, s.idx, s.more,
                                 s.idx_more, view, kind)  # fmt: skip
                    g = bootstrap(view)
                    call(False, True, update_now)
                pending = False
            if finished:
                if pending:  # apply the update now: the finished lanes leave the active set
                    call(False, True, update_now)
                    pending = False
                active = np.flatnonzero(~s.done).astype(np.int64)
                view = gathered_mem[:, :, : active.size].transpose(2, 3, 0, 1)
            step += 1
            if step % 256 == 0:
                bar.update(int(s.ep.sum()) - bar.n)


def check_settings(settings: dict[str, Any]) -> None:
    """Validate one setting of :func:`run_mountain_car` (its keyword arguments) without
    running it, as a sweep config is checked before any work starts; raises UsageError
    naming the option."""
    s = check_algorithm_settings(settings)
    check_float_list(s.pop("sigma2", None), "--sigma2", positive=False)
    check_float_list(s.pop("step_size", None), "--step-sizes", positive=True)
    for key in ("runs", "episodes"):
        check_positive_int(s.pop(key, None), f"--{key}")
    _validate(s)


# What a type checker sees: a table, or with return_weights=True the tuple (a user's
# run_mountain_car_grid(...).groupby(...) failed mypy on the union of both).
@overload
def run_mountain_car_grid(
    *,
    algorithm: str | Callable[..., Any],
    n: int,
    sigma2: Sequence[float] | float,
    step_sizes: Sequence[float] | float,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    run_offset: int = 0,
    return_weights: Literal[False] = False,
    reached_goal: bool = False,
    **params: Any,
) -> pd.DataFrame: ...


@overload
def run_mountain_car_grid(
    *,
    algorithm: str | Callable[..., Any],
    n: int,
    sigma2: Sequence[float] | float,
    step_sizes: Sequence[float] | float,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    run_offset: int = 0,
    return_weights: Literal[True],
    reached_goal: bool = False,
    **params: Any,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]: ...


@overload
def run_mountain_car_grid(
    *,
    algorithm: str | Callable[..., Any],
    n: int,
    sigma2: Sequence[float] | float,
    step_sizes: Sequence[float] | float,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    run_offset: int = 0,
    return_weights: bool,
    reached_goal: bool = False,
    **params: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, np.ndarray, np.ndarray]: ...


def run_mountain_car_grid(
    *,
    algorithm: str | Callable[..., Any],
    n: int,
    sigma2: Sequence[float] | float,
    step_sizes: Sequence[float] | float,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    run_offset: int = 0,
    return_weights: bool = False,
    reached_goal: bool = False,
    **params: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Run every (sigma2, step size) pair x ``runs`` runs of one algorithm as one batch of lanes
    (``algorithm`` as in ``run_toy_mdp``: a library name, or a G of one's own, named
    ``'module:function'`` or given as that function).

    Run r of every setting uses the random stream of ``(seed, run_offset + r)`` (common random
    numbers across settings); a setting's result equals ``run_mountain_car`` on that setting.
    ``params`` override ``MC_DEFAULTS``; ``op_kwargs`` go to the operator; ``update_members``
    (default 1) is the size of Algorithm 1's subset S (maxmin, ensemble). Each value of
    ``sigma2`` and ``step_sizes`` is given once. Returns columns ``algorithm, n, sigma2,
    step_size, run, episode, steps``; with ``reached_goal`` also a column ``reached_goal``
    (bool): whether the episode ended at the goal, False for one truncated at ``max_steps``
    (``steps`` alone cannot tell the two apart when the goal is reached on the cap's own
    step); with ``return_weights`` also the final weights, shape (lanes, M, features x 3) with
    lane = setting x runs + run, and each lane's newest-table index (snapshot kinds).
    """
    sig: list[float] = []
    alphas: list[float] = []

    def check() -> dict[str, Any]:  # Mountain Car's own settings, in the middle of setup_run
        nonlocal runs, episodes, run_offset
        sig.extend(check_float_list(sigma2, "sigma2", positive=False))
        alphas.extend(check_float_list(step_sizes, "step_sizes", positive=True))
        runs = check_positive_int(runs, "runs")
        episodes = check_positive_int(episodes, "episodes")
        run_offset = check_run_offset(run_offset, runs, "run_offset")
        return _validate(params, api_parameter)

    setup, p = setup_run(algorithm, n, seed, params, MC_DEFAULTS, "mountain car", check)
    name, spec, extra, bootstrap = setup.name, setup.spec, setup.extra, setup.bootstrap
    settings = list(product(sig, alphas))
    n_lanes, n_members, batch = len(settings) * runs, int(n), p["batch_size"]
    capacity = p["buffer_size"]

    w = np.full((n_lanes, N_FEATURES, n_members, N_ACTIONS), p["init_weight"])  # the largest
    sd = np.repeat([math.sqrt(s) for s, _ in settings], runs)
    alpha = np.repeat([a for _, a in settings], runs)
    # step per active weight (division by 8 is exact, so "total" matches a / 8 bit for bit)
    alpha_w = alpha / N_TILINGS if p["step_size_per"] == "total" else alpha.copy()
    cur = np.zeros(n_lanes, dtype=np.int64)
    pos, vel = np.zeros(n_lanes), np.zeros(n_lanes)
    tiles_cur = np.zeros((n_lanes, N_TILINGS), dtype=np.int64)
    steps_ep = np.zeros(n_lanes, dtype=np.int64)
    ep = np.zeros(n_lanes, dtype=np.int64)
    done = np.zeros(n_lanes, dtype=np.bool_)
    buf_i = np.zeros((n_lanes, capacity, 2 * N_TILINGS + 1), dtype=np.int64)
    buf_r = np.zeros((n_lanes, capacity))
    buf_size, buf_pos, chosen, idx, more, idx_more = update_arrays(n_lanes, batch, extra)
    n_log = max(n_members - 1, 1)
    log = np.full((n_lanes, n_log, batch * N_TILINGS), -1, dtype=np.int64)
    log_ptr = np.zeros(n_lanes, dtype=np.int64)
    steps_out = np.zeros((n_lanes, episodes), dtype=np.int64)
    # Seeded after the arrays: one stream per run costs 20 us, so runs=10**9 spent hours
    # seeding before the MemoryError its weights give at once.
    rng = np.tile(lane_seeds(seed, run_offset + np.arange(runs, dtype=np.int64)), len(settings))
    _init_lanes(rng, pos, vel, tiles_cur)
    eps, gamma = float(p["epsilon"]), float(p["gamma"])

    desc = f"mountain car {name} n={n}"
    bar = progress_bar(total=n_lanes * episodes, desc=desc, unit="ep", enabled=progress)
    with bar:  # closed on every way out: a KeyboardInterrupt left it open
        scratch, values = np.zeros((n_members, N_ACTIONS)), np.zeros(N_ACTIONS)
        tiles_tmp = np.zeros(N_TILINGS, dtype=np.int64)
        every, max_steps, kind, mode = p["update_every"], p["max_steps"], spec.kind, spec.behaviour
        code = kernel_operator_code(name, setup.op_kwargs)
        if code >= 0:  # the whole run of each lane in one kernel call (the fast path)
            gathered1, g1 = np.zeros((1, batch, n_members, N_ACTIONS)), np.zeros((1, batch))
            for lane in range(n_lanes):
                _run_lane(
                    lane, code, w, cur, rng, pos, vel, tiles_cur, steps_ep, ep, done, sd,
                    buf_i, buf_r, buf_size, buf_pos, chosen, idx, more, idx_more, gathered1,
                    kind, mode, eps, every, max_steps, steps_out, g1, alpha_w, log, log_ptr,
                    gamma, scratch, values, tiles_tmp,
                )  # fmt: skip
                bar.update(episodes)
        else:
            lanes = SimpleNamespace(
                w=w, cur=cur, rng=rng, pos=pos, vel=vel, tiles_cur=tiles_cur, steps_ep=steps_ep,
                ep=ep, done=done, sd=sd, buf_i=buf_i, buf_r=buf_r, buf_size=buf_size,
                buf_pos=buf_pos, chosen=chosen, idx=idx, more=more, idx_more=idx_more,
                steps_out=steps_out, alpha=alpha_w,
                log=log, log_ptr=log_ptr, scratch=scratch, values=values, tiles_tmp=tiles_tmp,
            )  # fmt: skip
            _run_lockstep(bootstrap, lanes, kind, mode, eps, every, max_steps, gamma, bar)
        bar.update(n_lanes * episodes - bar.n)

    goal = steps_out > 0  # the kernels record a truncated episode's length negated
    np.abs(steps_out, out=steps_out)
    run_ids = run_offset + np.arange(runs, dtype=np.int64)
    df = pd.DataFrame(
        {
            "algorithm": name,
            "n": n_members,
            "sigma2": np.repeat(np.repeat([s for s, _ in settings], runs), episodes),
            "step_size": np.repeat(alpha, episodes),
            "run": np.tile(np.repeat(run_ids, episodes), len(settings)),
            "episode": np.tile(np.arange(1, episodes + 1), n_lanes),
            "steps": steps_out.ravel(),
        }
    )
    if reached_goal:
        df["reached_goal"] = goal.ravel()
    if return_weights:  # as (lane, member, feature x action)
        flat = w.transpose(0, 2, 1, 3).reshape(n_lanes, n_members, N_FEATURES * N_ACTIONS)
        return df, flat, cur
    return df


def run_mountain_car(
    *,
    algorithm: str | Callable[..., Any],
    n: int,
    sigma2: float,
    step_size: float,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    **params: Any,
) -> pd.DataFrame:
    """One setting of noisy Mountain Car: ``runs`` runs x ``episodes`` episodes.

    Returns one row per run x episode, columns ``algorithm, n, sigma2, step_size, run,
    episode, steps`` (steps of that episode; ``max_steps`` if truncated). ``params``
    override ``MC_DEFAULTS``; ``op_kwargs`` and ``update_members`` as in
    :func:`run_mountain_car_grid`.
    """
    for value, option in ((sigma2, "sigma2"), (step_size, "step_size")):
        if np.ndim(value) != 0:
            raise UsageError(
                f"{option}: run_mountain_car takes one value; use run_mountain_car_grid for several"
            )
    # here, not as the grid's step_sizes (the keyword named in its errors) and sigma2 lists
    check_real(sigma2, "sigma2", 0.0)
    check_real(step_size, "step_size", 0.0, strict=True)
    frame = run_mountain_car_grid(
        algorithm=algorithm,
        n=n,
        sigma2=[sigma2],
        step_sizes=[step_size],
        runs=runs,
        episodes=episodes,
        seed=seed,
        progress=progress,
        **params,
    )
    return cast(pd.DataFrame, frame)  # a table: no return_weights here
