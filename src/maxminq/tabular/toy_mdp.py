"""The toy MDP of Lan et al. (2020), Fig. 1-2 and appendix C.1, vectorised over runs.

States A and B. A has two actions: Left -> B (reward 0), Right -> terminal (reward 0). B has
eight actions, each -> terminal with reward ``mu + U(-1, 1)``. With eps-greedy behaviour
(eps = 0.1) the optimal policy takes Left with probability 0.95 if mu > 0 and 0.05 if
mu < 0. Paper settings: gamma = 1, replay buffer 100, Q initialised from N(0, 0.01)
(variance 0.01, i.e. standard deviation 0.1, the paper's N(mean, variance) notation),
step size 0.01, 5,000 runs.

Every run is a lane of arrays. By default one numba kernel call runs a lane's whole run
(behaviour, environment, replay buffer, updates), taking the bootstrap value of state B (the
only non-terminal next state; one per update serves the mini-batch) from the operator's
compiled twin in ``maxminq.operators_jit``. An operator called with parameters, or a G
function of one's own (``'module:function'``), runs all lanes in lockstep instead: two
kernels per agent step, and in between the operator from ``maxminq.operators`` (or the
user's G) on the gathered values of shape (R, M, 8); both paths give the same runs (tested).
Kernels are serial: settings run in parallel processes (see ``maxminq.commands.experiment``).

Per step, each lane draws its random numbers in this order (the single-run reference loop in
``tests/reference_loops.py`` draws the same): exploration uniform, then an action uniform
(exploring) or a tie-break uniform (greedy, only on an exact tie); in B a reward uniform; on
update steps the chosen table (estimator and double kinds with M > 1), then ``batch_size``
buffer indices; with ``update_members`` u > 1 (Algorithm 1's subset S, maxmin and ensemble),
then for each further member one draw choosing it among those left and its own
``batch_size`` indices.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from maxminq._jit import njit
from maxminq._progress import progress_bar
from maxminq.errors import UsageError
from maxminq.operators_jit import apply_operator, td_target
from maxminq.tabular.agent import (
    KIND_SNAPSHOTS,
    Names,
    agent_params,
    api_parameter,
    behaviour_values,
    check_algorithm_settings,
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

__all__ = ["TOY_DEFAULTS", "check_settings", "optimal_p_left", "run_toy_mdp"]

STATE_A, STATE_B = 0, 1
LEFT, RIGHT = 0, 1
N_ACTIONS_A, N_ACTIONS_B = 2, 8

#: Defaults: the paper's settings plus the mini-batch size and episode count we chose.
#: batch_size 32 with one update per step (replay ratio 32) lets step size 0.01 learn within a
#: few hundred episodes; 1,000 episodes let every curve flatten (docs/classic-experiments.md,
#: "Defaults we chose").
TOY_DEFAULTS: dict[str, Any] = {
    "gamma": 1.0,
    "epsilon": 0.1,
    "step_size": 0.01,
    "buffer_size": 100,
    "batch_size": 32,
    "update_every": 1,
    "init_std": 0.1,
}


def optimal_p_left(mu: float, epsilon: float = 0.1) -> float:
    """P(Left | A) under the optimal eps-greedy policy: 1 - eps/2 if mu > 0, else eps/2
    (Left is worth gamma * mu, Right 0; for any gamma > 0 only the sign of mu matters).
    UsageError (a ValueError) for an ``epsilon`` outside [0, 1] (no probability came out) or
    a ``mu`` of 0 or not finite (at 0 every policy is optimal: no single distance)."""
    if not 0 <= epsilon <= 1:
        raise UsageError(f"optimal_p_left: epsilon must be in [0, 1], got {epsilon!r}")
    if not math.isfinite(mu) or mu == 0:
        raise UsageError(f"optimal_p_left: mu must be a finite non-zero number, got {mu!r}")
    return 1.0 - epsilon / 2 if mu > 0 else epsilon / 2


@njit
def _init_lanes(q, rng, kind, init_std):  # pragma: no cover - numba
    """Draw every lane's tables from N(0, init_std^2); snapshot kinds start all equal."""
    n_lanes, n_members = q.shape[0], q.shape[1]
    for lane in range(n_lanes):
        drawn = 1 if kind == KIND_SNAPSHOTS else n_members
        for m in range(drawn):
            for s in range(2):
                n_actions = N_ACTIONS_A if s == STATE_A else N_ACTIONS_B
                for a in range(n_actions):
                    q[lane, m, s, a] = init_std * rng_normal(rng, lane)
        for m in range(drawn, n_members):
            q[lane, m] = q[lane, 0]


@njit(inline="always")
def _act_lane(
    lane, q, cur, rng, state, mu, ended, buf, buf_size, buf_pos, chosen, idx, more, idx_more,
    gathered, scratch, kind, mode, epsilon, update_now, n_steps,
):  # pragma: no cover - numba  # fmt: skip
    """Act eps-greedily in lane ``lane``, step the MDP, store, draw the update's tables and
    mini-batch indices (``more``, ``idx_more``: those of the subset's other members), and
    gather the first update's bootstrap inputs (state B's values in operator order)."""
    n_members = q.shape[1]
    n_steps[lane] += 1
    values = scratch[lane]
    s = state[lane]
    n_actions = N_ACTIONS_A if s == STATE_A else N_ACTIONS_B
    behaviour_values(q[lane, :, s], n_actions, mode, cur[lane], values)
    a = epsilon_greedy(values, n_actions, epsilon, rng, lane)
    if s == STATE_A:
        r = 0.0
        term = a == RIGHT  # Left leads to B, Right ends the episode
    else:
        r = mu[lane] + 2.0 * rng_uniform(rng, lane) - 1.0
        term = True
    p = ring_push(buf_pos, buf_size, lane, buf.shape[1])
    # One record per transition, (code, reward), so a replayed sample is one cache line.
    buf[lane, p, 0] = s + 2 * a + 16 * term
    buf[lane, p, 1] = r
    if update_now:
        i = draw_update(kind, n_members, rng, lane, buf_size[lane], idx)
        draw_more_members(n_members, rng, lane, i, buf_size[lane], more, idx_more)
        chosen[lane] = i
        _gather_lane(lane, q, cur, i, gathered, kind)
    ended[lane] = term
    state[lane] = STATE_A if term else STATE_B


@njit(inline="always")
def _gather_lane(lane, q, cur, i, gathered, kind):  # pragma: no cover - numba
    """State B's values in operator order for an update of table ``i``: the only
    non-terminal next state is B, so one gather per lane serves the whole mini-batch."""
    n_members = q.shape[1]
    for m in range(n_members):
        src = member_order(kind, m, n_members, i, cur[lane])
        for a2 in range(N_ACTIONS_B):
            gathered[m, a2] = q[lane, src, STATE_B, a2]


@njit(inline="always")
def _update_lane(
    lane, q, cur, done, ended, ep, buf, chosen, idx, g, scratch, kind, mode, epsilon, gamma,
    alpha, update_now, p_left, q_left,
):  # pragma: no cover - numba  # fmt: skip
    """Sequential TD updates of lane ``lane``'s chosen table over its mini-batch; log the
    episode if it has just ended.

    Targets ``r + gamma * (1 - terminal) * G`` use the bootstrap value ``g`` of state B
    computed before the update (frozen for the batch, as in a batched update); each replayed
    transition then moves ``Q^i(s, a)`` by ``alpha * (target - Q^i(s, a))`` (Algorithm 1).
    """
    if update_now:
        _td_updates(lane, q, cur, buf, chosen, idx, g, kind, gamma, alpha)
    if ended[lane]:
        _record_episode(lane, q, cur, done, ep, scratch, mode, epsilon, p_left, q_left)


@njit(inline="always")
def _td_updates(lane, q, cur, buf, chosen, idx, g, kind, gamma, alpha):  # pragma: no cover
    """The TD updates of one table over one mini-batch (see :func:`_update_lane`)."""
    n_members = q.shape[1]
    slot = chosen[lane]
    if kind == KIND_SNAPSHOTS:  # the oldest snapshot becomes the new version
        slot = (cur[lane] + 1) % n_members
        if slot != cur[lane]:
            for s in range(2):
                for a in range(N_ACTIONS_B):
                    q[lane, slot, s, a] = q[lane, cur[lane], s, a]
        cur[lane] = slot
    for b in range(idx.shape[1]):
        j = idx[lane, b]
        code = int(buf[lane, j, 0])
        s, a, term = code & 1, (code >> 1) & 7, code >> 4
        target = td_target(buf[lane, j, 1], gamma, term, g)
        q[lane, slot, s, a] += alpha * (target - q[lane, slot, s, a])


@njit(inline="always")
def _record_episode(
    lane, q, cur, done, ep, scratch, mode, epsilon, p_left, q_left
):  # pragma: no cover - numba  # fmt: skip
    """Log the episode lane ``lane`` has just ended: P(Left | A) and Q(A, Left). A NaN value
    at A (a diverged run) has no greedy action to measure: P(Left | A) is NaN too (it was
    0.5, a coin flip, while the agent's greedy choice on NaN values is a fixed action)."""
    values = scratch[lane]
    behaviour_values(q[lane, :, STATE_A], N_ACTIONS_A, mode, cur[lane], values)
    if math.isnan(values[LEFT]) or math.isnan(values[RIGHT]):
        pl = math.nan
    elif values[LEFT] > values[RIGHT]:
        pl = 1.0 - epsilon / 2
    elif values[LEFT] < values[RIGHT]:
        pl = epsilon / 2
    else:
        pl = 0.5
    e = ep[lane]
    p_left[lane, e] = pl
    q_left[lane, e] = values[LEFT]
    ep[lane] = e + 1
    if e + 1 == p_left.shape[1]:
        done[lane] = True


@njit
def _act_and_gather(
    q, cur, rng, state, mu, done, ended, buf, buf_size, buf_pos, chosen, idx, more, idx_more,
    gathered, scratch, kind, mode, epsilon, update_now, n_steps,
):  # pragma: no cover - numba  # fmt: skip
    """Lockstep kernel 1: :func:`_act_lane` for every lane still running (one table updated
    per step: operators with parameters have one or two tables)."""
    for lane in range(q.shape[0]):
        ended[lane] = False
        if not done[lane]:
            _act_lane(
                lane, q, cur, rng, state, mu, ended, buf, buf_size, buf_pos, chosen, idx, more,
                idx_more, gathered[lane], scratch, kind, mode, epsilon, update_now, n_steps,
            )  # fmt: skip


@njit
def _update_and_record(
    q, cur, done, ended, ep, buf, chosen, idx, g, scratch, kind, mode, epsilon, gamma, alpha,
    update_now, p_left, q_left,
):  # pragma: no cover - numba  # fmt: skip
    """Lockstep kernel 2: :func:`_update_lane` for every lane still running."""
    for lane in range(q.shape[0]):
        if not done[lane]:
            _update_lane(
                lane, q, cur, done, ended, ep, buf, chosen, idx, g[lane], scratch, kind, mode,
                epsilon, gamma, alpha, update_now, p_left, q_left,
            )  # fmt: skip


@njit
def _lockstep_td(q, cur, done, buf, chosen, idx, g, kind, gamma, alpha):  # pragma: no cover
    """Lockstep, update subset (``update_members`` > 1): :func:`_td_updates` of every running
    lane's chosen table, G from ``g[lane]``; episodes are recorded after the whole subset."""
    for lane in range(q.shape[0]):
        if not done[lane]:
            _td_updates(lane, q, cur, buf, chosen, idx, g[lane], kind, gamma, alpha)


@njit
def _lockstep_gather_more(
    j, q, cur, done, chosen, idx, more, idx_more, gathered, kind
):  # pragma: no cover - numba  # fmt: skip
    """Lockstep, update subset: make member ``j + 2`` of every running lane's subset the
    chosen table, with its own mini-batch, and gather its bootstrap inputs (after the
    updates of the members before it, as :func:`_more_updates`)."""
    batch = idx.shape[1]
    for lane in range(q.shape[0]):
        if not done[lane]:
            chosen[lane] = more[lane, j]
            for b in range(batch):
                idx[lane, b] = idx_more[lane, j * batch + b]
            _gather_lane(lane, q, cur, chosen[lane], gathered[lane], kind)


@njit(_nrt=False)
def _more_updates(
    lane, op_code, q, cur, buf, chosen, idx, more, idx_more, gathered, kind, gamma, alpha
):  # pragma: no cover - numba  # fmt: skip
    """The update subset's other members (``update_members`` > 1), in turn, each on its own
    mini-batch with G taken after the updates before it; a separate function keeps this
    rarely used path out of the common loop's code."""
    batch = idx.shape[1]
    for j in range(more.shape[1]):
        chosen[lane] = more[lane, j]
        for b in range(batch):
            idx[lane, b] = idx_more[lane, j * batch + b]
        _gather_lane(lane, q, cur, chosen[lane], gathered, kind)
        _td_updates(lane, q, cur, buf, chosen, idx, apply_operator(op_code, gathered), kind,
                    gamma, alpha)  # fmt: skip


@njit(_nrt=False)
def _run_lane(
    lane, op_code, q, cur, rng, state, mu, done, ended, ep, buf, buf_size, buf_pos, chosen, idx,
    more, idx_more, gathered, scratch, kind, mode, epsilon, gamma, alpha, every, n_steps, p_left,
    q_left,
):  # pragma: no cover - numba  # fmt: skip
    """Every agent step of lane ``lane``'s run: the lockstep kernels' exact sequence, with
    G from the operator's compiled twin (``maxminq.operators_jit``), so the same results;
    the lane's tables and buffer stay in cache and no step returns to Python. Compiled
    without reference counting (nothing here allocates), as Mountain Car's kernel.
    With ``update_members`` u > 1 the subset's other members follow the first in turn (as
    Algorithm 1's loop over S), each with G taken after the updates before it."""
    t = 0
    while not done[lane]:
        update_now = t % every == 0
        _act_lane(
            lane, q, cur, rng, state, mu, ended, buf, buf_size, buf_pos, chosen, idx, more,
            idx_more, gathered, scratch, kind, mode, epsilon, update_now, n_steps,
        )  # fmt: skip
        if update_now:
            _td_updates(lane, q, cur, buf, chosen, idx, apply_operator(op_code, gathered),
                        kind, gamma, alpha)  # fmt: skip
            if more.shape[1]:
                _more_updates(lane, op_code, q, cur, buf, chosen, idx, more, idx_more, gathered,
                              kind, gamma, alpha)  # fmt: skip
        if ended[lane]:
            _record_episode(lane, q, cur, done, ep, scratch, mode, epsilon, p_left, q_left)
        t += 1


def _validate(
    mu: Any, runs: Any, episodes: Any, params: dict[str, Any], names: Names = cli_option
) -> dict[str, Any]:
    """The toy MDP's own settings checked; a UsageError names the bad one by ``names``."""
    try:
        mu = float(mu)
    except (TypeError, ValueError):
        raise UsageError(f"{names('mu')}: expected a number, got {mu!r}") from None
    if not math.isfinite(mu) or mu == 0:
        raise UsageError(f"{names('mu')}: expected a finite non-zero number, got {mu!r}")
    check_positive_int(runs, names("runs"))
    check_positive_int(episodes, names("episodes"))
    counts = ("buffer_size", "batch_size", "update_every")
    p = agent_params(params, TOY_DEFAULTS, "toy MDP", counts, names)
    if p["gamma"] == 0:  # as mu = 0: Left (worth gamma * mu) and Right (0) would tie
        raise UsageError(
            f"{names('gamma')}: the toy MDP needs gamma > 0 (with gamma = 0 Left and Right are "
            "both worth 0, so there is no optimal policy to measure the distance to)"
        )
    if p["gamma"] * mu == 0:  # a tiny gamma: Left's worth underflows to 0, the same tie
        raise UsageError(
            f"{names('gamma')}: gamma * mu = {p['gamma']!r} * {mu!r} is 0 in floating point, so "
            "Left and Right tie and there is no optimal policy; use a larger gamma"
        )
    p["step_size"] = check_real(p["step_size"], names("step_size"), 0.0, strict=True)
    p["init_std"] = check_real(p["init_std"], names("init_std"), 0.0)
    return p


def check_settings(settings: dict[str, Any]) -> None:
    """Validate one setting of :func:`run_toy_mdp` (its keyword arguments) without running
    it, as a sweep config is checked before any work starts; raises UsageError naming the
    option."""
    s = check_algorithm_settings(settings)
    run_offset, runs = s.pop("run_offset", 0), s.pop("runs", None)
    check_positive_int(run_offset, "--run-offset", minimum=0, maximum=math.inf)
    _validate(s.pop("mu", None), runs, s.pop("episodes", None), s)
    check_run_offset(run_offset, runs)


def run_toy_mdp(
    *,
    mu: float,
    algorithm: str | Callable[..., Any],
    n: int,
    runs: int,
    episodes: int,
    seed: int,
    progress: bool = False,
    run_offset: int = 0,
    **params: Any,
) -> pd.DataFrame:
    """Run ``runs`` independent runs of ``algorithm`` on the toy MDP (see the module
    docstring for how the lanes are run): a name of ``tabular.agent.ALGORITHMS``, or a G
    function of one's own as ``'module:function'`` or as that function (N tables, behaviour
    on their mean; docs/classic-experiments.md, "A G function of your own").

    Returns one row per run x episode with columns ``mu, algorithm, n, run, episode,
    p_left, distance, q_a_left``: P(Left | A) of the eps-greedy policy on the behaviour
    values after the episode (NaN once they are NaN: the run diverged, e.g. at a step size of
    2 or more), its distance to the optimal eps-greedy policy (Fig. 2), and the
    behaviour value of (A, Left) (appendix figure; true value gamma * mu, which is mu at the
    paper's gamma = 1; gamma must be > 0, mu non-zero). ``params`` override
    ``TOY_DEFAULTS``; ``op_kwargs`` are passed to the operator; ``update_members`` (default 1)
    is the size of Algorithm 1's subset S (maxmin, ensemble). Run r uses the stream of
    ``(seed, run_offset + r)``. ``df.attrs["agent_steps"]`` holds the total agent steps.
    """

    def check() -> dict[str, Any]:  # the toy MDP's own settings, in the middle of setup_run
        nonlocal run_offset
        p = _validate(mu, runs, episodes, params, api_parameter)
        run_offset = check_run_offset(run_offset, runs, "run_offset")
        return p

    setup, p = setup_run(algorithm, n, seed, params, TOY_DEFAULTS, "toy MDP", check)
    name, spec, extra, bootstrap = setup.name, setup.spec, setup.extra, setup.bootstrap
    n_lanes, n_members, batch = int(runs), int(n), p["batch_size"]
    capacity = p["buffer_size"]
    q = np.zeros((n_lanes, n_members, 2, N_ACTIONS_B))
    cur = np.zeros(n_lanes, dtype=np.int64)
    state = np.zeros(n_lanes, dtype=np.int64)
    mus = np.full(n_lanes, float(mu))
    done = np.zeros(n_lanes, dtype=np.bool_)
    ended = np.zeros(n_lanes, dtype=np.bool_)
    ep = np.zeros(n_lanes, dtype=np.int64)
    buf = np.zeros((n_lanes, capacity, 2))  # (code = s + 2a + 16 terminal, reward)
    scratch = np.zeros((n_lanes, N_ACTIONS_B))
    buf_size, buf_pos, chosen, idx, more, idx_more = update_arrays(n_lanes, batch, extra)
    # Member-major storage viewed as (R, M, 8): the operator's reduction over members then
    # runs over contiguous slabs (much faster than over a tiny inner axis).
    gathered = np.zeros((n_members, N_ACTIONS_B, n_lanes)).transpose(2, 0, 1)
    g = np.zeros(n_lanes)
    n_steps = np.zeros(n_lanes, dtype=np.int64)  # agent steps per lane (for throughput)
    p_left = np.zeros((n_lanes, episodes))
    q_left = np.zeros((n_lanes, episodes))
    # Seeded after the arrays: one stream per run costs 20 us, so runs=10**9 spent hours
    # seeding before the MemoryError its arrays give at once.
    rng = lane_seeds(seed, run_offset + np.arange(n_lanes, dtype=np.int64))
    _init_lanes(q, rng, spec.kind, float(p["init_std"]))
    eps, gamma, alpha = float(p["epsilon"]), float(p["gamma"]), float(p["step_size"])

    kind, mode, every = spec.kind, spec.behaviour, p["update_every"]
    desc = f"toy {name} n={n} mu={mu:+g}"
    bar = progress_bar(total=n_lanes * episodes, desc=desc, unit="ep", enabled=progress)
    with bar:  # closed on every way out: a KeyboardInterrupt left it open
        code = kernel_operator_code(name, setup.op_kwargs)
        if code >= 0:  # the whole run of each lane in one kernel call (the fast path)
            one = np.zeros((n_members, N_ACTIONS_B))
            for lane in range(n_lanes):
                _run_lane(
                    lane, code, q, cur, rng, state, mus, done, ended, ep, buf, buf_size, buf_pos,
                    chosen, idx, more, idx_more, one, scratch, kind, mode, eps, gamma, alpha, every,
                    n_steps, p_left, q_left,
                )  # fmt: skip
                bar.update(episodes)
        else:  # operators with parameters, a G of one's own: all lanes in lockstep, G in NumPy
            step = 0
            while not done.all():
                update_now = step % every == 0
                _act_and_gather(
                    q, cur, rng, state, mus, done, ended, buf, buf_size, buf_pos, chosen, idx, more,
                    idx_more, gathered, scratch, kind, mode, eps, update_now, n_steps,
                )  # fmt: skip
                if update_now:
                    g[:] = bootstrap(gathered)
                if update_now and extra:  # the subset's members in turn, as _run_lane's
                    _lockstep_td(q, cur, done, buf, chosen, idx, g, kind, gamma, alpha)
                    for j in range(extra):
                        _lockstep_gather_more(j, q, cur, done, chosen, idx, more, idx_more,
                                              gathered, kind)  # fmt: skip
                        g[:] = bootstrap(gathered)
                        _lockstep_td(q, cur, done, buf, chosen, idx, g, kind, gamma, alpha)
                _update_and_record(
                    q, cur, done, ended, ep, buf, chosen, idx, g, scratch, kind, mode, eps, gamma,
                    alpha, update_now and not extra, p_left, q_left,
                )  # fmt: skip
                step += 1
                if progress and step % 64 == 0:
                    bar.update(int(ep.sum()) - bar.n)
        bar.update(n_lanes * episodes - bar.n)

    run_ids = run_offset + np.arange(n_lanes, dtype=np.int64)
    distance = np.abs(p_left - optimal_p_left(float(mu), eps))
    df = pd.DataFrame(
        {
            "mu": float(mu),
            "algorithm": name,
            "n": n_members,
            "run": np.repeat(run_ids, episodes),
            "episode": np.tile(np.arange(1, episodes + 1), n_lanes),
            "p_left": p_left.ravel(),
            "distance": distance.ravel(),
            "q_a_left": q_left.ravel(),
        }
    )
    df.attrs["agent_steps"] = int(n_steps.sum())
    return df
