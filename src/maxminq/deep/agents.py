"""The DQN family as one batched learner over S seeds x N members.

Agents and the Generalized Q-learning operator each bootstraps with (Lan et al. 2020,
section 6; every target goes through ``maxminq.operators``):

=============== ============ ============ =========================================
agent           online nets  target nets  bootstrap G (operator)
=============== ============ ============ =========================================
dqn             1            1            ``q_learning`` on the target net
ddqn            1            1            ``double_q`` on (online, target)
maxmin-dqn      N            N            ``maxmin`` over the N target nets (Alg. 1)
ensemble-dqn    N            N            ``ensemble`` over the N target nets
averaged-dqn    1            K (= n)      ``averaged`` over K snapshots, round-robin
generalized-dqn N            N            the run's ``operator`` over the N target nets
=============== ============ ============ =========================================

Maxmin, Ensemble and Generalized DQN act eps-greedily on the min (mean) over their N online
nets and update a uniformly chosen subset (default one member) per step, each member on its
own mini-batch, as in Algorithm 1. Member ``s * N + i`` of a stack is member i of seed s.
Ensemble DQN thereby follows the authors' code, not Anschel et al. (2017), who update all
N nets every iteration (``update_members = N`` here, each net on its own mini-batch).

Generalized DQN (section 6 with networks) is Maxmin DQN with G any operator: a library one
(``operator='maxmin'`` is Maxmin DQN bit for bit, ``'ensemble'`` Ensemble DQN) or one of your
own, ``'module:function'``, called on one seed's mini-batch at a time, a float32 torch tensor
of shape (B, N, A) -> (B,). It acts on the library operator's own estimate
(``operators.action_values``: min for maxmin, mean for ensemble) where it has one, else on
the mean over the N online nets (``acting_operator``); its bias probes read the target nets
with that estimate, or for a G without one with G itself (``Learner.estimate``). Double and
Weighted Double Q (``finite_mdp.ASYMMETRIC_OPERATORS``), whose member 0 selects (is U), get
for each member's targets the target nets rotated to start at that member's, as tabular
Double Q swaps roles; the other Gs, one's own too, see the N target nets in their fixed
order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from maxminq import operators
from maxminq.deep.nets import StackedNet, build_net
from maxminq.deep.optim import MemberOptimizer, member_grad_norm_clip
from maxminq.errors import CannotResumeError, UsageError
from maxminq.tabular.finite_mdp import ASYMMETRIC_OPERATORS

__all__ = [
    "AGENTS",
    "AgentSpec",
    "Learner",
    "ValuesNotFinite",
    "acting_operator",
    "behaviour_values",
    "check_operator",
    "policy_action",
]


@dataclass(frozen=True)
class AgentSpec:
    """How an agent maps to online/target stacks and an operator."""

    operator: str | None  # None: the run's own (generalized-dqn)
    ensemble: bool  # N online nets, N target nets, subset updated per step
    snapshots: bool  # one online net, n target snapshots refreshed round-robin


AGENTS: dict[str, AgentSpec] = {
    "dqn": AgentSpec("q_learning", False, False),
    "ddqn": AgentSpec("double_q", False, False),
    "maxmin-dqn": AgentSpec("maxmin", True, False),
    "ensemble-dqn": AgentSpec("ensemble", True, False),
    "averaged-dqn": AgentSpec("averaged", False, True),
    "generalized-dqn": AgentSpec(None, True, False),
}


def acting_operator(agent: str, operator: str | None = None) -> str | None:
    """The library operator whose per-action estimate (``operators.action_values``) an agent
    acts on and probes its bias with: the agent's own, or for ``generalized-dqn`` its
    ``operator`` (a reference string) when it is a library operator that has one; None for
    one without (``double_q``, ``weighted_double_q``, ``bias_corrected``) or one's own G,
    which act on the mean over the N nets. Needs no import of an own G."""
    name = AGENTS[agent].operator or operator
    return name if name in operators.ACTION_VALUE_OPERATORS else None


def check_operator(
    reference: str, op_kwargs: dict[str, Any] | None, batch: int, n: int, n_actions: int
) -> None:
    """Try the G ``reference`` names on torch zeros of one seed's target shape (``batch``,
    ``n``, ``n_actions``) and a bias probe's (1, ``n``, ``n_actions``), before any work
    (``operators.check_on_zeros``, the check the theory and the classic experiments make on
    NumPy zeros): a UsageError naming
    ``--operator`` if it fails there, returns no torch tensor (a G written for NumPy), whole
    numbers (an action's index, not its value), or not ``batch`` finite values."""
    g = operators.load_operator(reference)
    if reference not in operators.OPERATORS:  # a library operator's keywords: its config
        try:
            operators.check_keywords(g, reference, op_kwargs or {})
        except TypeError as err:
            raise UsageError(f"--op-kwargs: {err}") from None
    elif op_kwargs:  # its own checks of its keywords (c > 0) name --op-kwargs, as the theory's
        from maxminq.deep.config import OPERATOR_N

        members = OPERATOR_N.get(reference, n)  # a wrong N: --operator's error below
        try:
            operators.bootstrap(reference, np.zeros((1, members, n_actions)), **op_kwargs)
        except (TypeError, ValueError) as err:
            raise UsageError(f"--op-kwargs: {str(err).splitlines()[0]}") from None
    # one seed's mini-batch of targets, then one bias probe (Learner.estimate: B = 1)
    shapes = [(batch, n, n_actions), *[(1, n, n_actions)] * (batch != 1)]
    try:
        operators.check_on_zeros(g, reference, shapes, dict(op_kwargs or {}), "torch")
    except (TypeError, ValueError) as err:
        raise UsageError(f"--operator: {err}") from None


@torch.no_grad()
def behaviour_values(
    agent: str,
    online: StackedNet,
    n_online: int,
    obs: torch.Tensor,
    operator: str | None = None,
) -> torch.Tensor:
    """Action values an agent's policy is greedy on, from its online stack (S x n_online
    members): obs (S, B, ...) -> (S, B, A), B observations per seed.

    Maxmin: min over the N online nets (Algorithm 1); Ensemble: their mean; Generalized
    (``operator``, a reference string): its operator's estimate, else the mean
    (:func:`acting_operator`); the other agents: their one online net.
    """
    spec = AGENTS[agent]
    s, b = obs.shape[:2]
    q = online.forward_shared(obs, n_online).reshape(s, n_online, b, online.n_actions)
    if not spec.ensemble:
        return q[:, 0]
    name = acting_operator(agent, operator)
    if name is None:  # one's own G (or one without a per-action estimate)
        return q.mean(dim=1)
    return operators.action_values(name, q.transpose(1, 2))  # min_i (Maxmin), mean_i


class ValuesNotFinite(Exception):
    """:func:`policy_action` met action values that are not all finite: ``networks`` says
    whether the seed's networks hold NaN or inf (it diverged), else finite networks' values
    overflow float32 at this observation; ``value`` is the first such value."""

    def __init__(self, networks: bool, value: float) -> None:
        """Why (``networks``) and the first value that is not finite (``value``)."""
        super().__init__("networks hold NaN or inf" if networks else f"values overflow ({value})")
        self.networks, self.value = networks, value


def policy_action(
    values: np.ndarray, nets: torch.Tensor, eps: float, rng: np.random.Generator | None
) -> int | np.ndarray:
    """The action a policy takes on its action values ``values`` ((A,), or (B, A) for B
    observations: an array of B actions, each drawn in turn), from its online networks
    ``nets``: with ``rng``, one uniform per action, a random action (from ``rng`` too) when
    it is below ``eps``, else the greedy one (ties to the lowest action); without, greedy.
    The one path of ``TrainedAgent.act`` and training's own test and evaluation episodes.

    Raises:
        ValuesNotFinite: ``values`` are not all finite (``np.argmax`` takes the first NaN:
            a NaN network played action 0 and its returns looked like a policy's), before
            any draw.
    """
    if not np.isfinite(values).all():
        bad = float(values[~np.isfinite(values)].flat[0])
        raise ValuesNotFinite(not bool(torch.isfinite(nets).all()), bad)

    def one(row: np.ndarray) -> int:
        if rng is not None and rng.random() < eps:
            return int(rng.integers(row.shape[-1]))
        return int(np.argmax(row))

    if values.ndim == 1:
        return one(values)
    return np.array([one(row) for row in values], dtype=np.int64)


class Learner:
    """Online and target stacks, optimiser, targets and updates for S seeds.

    Args:
        agent: a key of ``AGENTS``.
        n: N (Maxmin / Ensemble members) or K (Averaged snapshots); 1 for DQN / DDQN.
        gens: one ``torch.Generator`` per seed; seed s's networks are drawn from
            ``gens[s]`` only, so they do not depend on the other seeds.
        network, obs_shape, n_actions, hidden: see ``maxminq.deep.nets.build_net``.
        optimizer, lr, optimizer_kwargs: see ``MemberOptimizer``.
        loss: 'mse' or 'huber'. grad_clip: per-network gradient-norm bound or None.
        gamma: discount. update_members: members updated per step (Maxmin / Ensemble).
        operator, op_kwargs: generalized-dqn's G (a reference string for
            ``operators.load_operator``) and its keyword parameters; unused by the others.
    """

    def __init__(
        self,
        agent: str,
        n: int,
        gens: list[torch.Generator],
        network: str,
        obs_shape: tuple[int, ...],
        n_actions: int,
        optimizer: str,
        lr: float,
        optimizer_kwargs: dict[str, Any] | None = None,
        loss: str = "mse",
        grad_clip: float | None = None,
        gamma: float = 0.99,
        update_members: int = 1,
        hidden: tuple[int, ...] | None = None,
        operator: str | None = None,
        op_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.agent, self.spec = agent, AGENTS[agent]
        name = self.spec.operator or operator
        if name is None:
            raise ValueError(f"Learner: {agent} needs an operator")
        self.operator: str = name
        self.op_kwargs = dict(op_kwargs or {})
        # A library G runs on every seed at once; one's own on one seed's batch at a time.
        own = self.operator not in operators.OPERATORS
        self.own_g = operators.load_operator(self.operator) if own else None
        self.values_of = acting_operator(agent, operator)  # None: the mean over the nets
        # Double / Weighted Double Q as generalized-dqn's G: member 0 selects (is U), so each
        # target puts the updated member's target net first (tabular Double Q's role swap,
        # finite_mdp's rotation). Symmetric Gs and one's own see the nets in fixed order.
        self.rotate = self.spec.operator is None and self.operator in ASYMMETRIC_OPERATORS
        self.S, self.n_actions, self.gamma = len(gens), n_actions, gamma
        self.n_online = n if self.spec.ensemble else 1
        self.n_target = n if (self.spec.ensemble or self.spec.snapshots) else 1
        self.update_members = min(update_members, self.n_online)
        self.loss_kind, self.grad_clip = loss, grad_clip
        self.online = build_net(network, self.S * self.n_online, obs_shape, n_actions, hidden)
        self.target = build_net(network, self.S * self.n_target, obs_shape, n_actions, hidden)
        self.online.init_members(gens, self.n_online)
        # Targets start as copies of the online nets (every snapshot, for Averaged).
        self.target.flat.copy_(self._expand_online(self.online.flat))
        self.opt = MemberOptimizer(self.online.flat, optimizer, lr, **(optimizer_kwargs or {}))
        self.snapshot_slot = 0  # next Averaged-DQN snapshot to refresh
        self._last_update: tuple[np.ndarray, torch.Tensor, torch.Tensor, torch.Tensor]

    # --- helpers ------------------------------------------------------------------------

    def _expand_online(self, p: torch.Tensor) -> torch.Tensor:
        """Online stack -> target stack layout (repeat each seed's net K times if needed)."""
        if self.n_target == self.n_online:
            return p
        return p.repeat_interleave(self.n_target, dim=0)

    # --- values -------------------------------------------------------------------------

    def greedy_values(self, obs: torch.Tensor) -> torch.Tensor:
        """Action values the behaviour policy is greedy on: obs (S, ...) -> (S, A)."""
        obs = obs.unsqueeze(1)
        return behaviour_values(self.agent, self.online, self.n_online, obs, self.operator)[:, 0]

    @torch.no_grad()
    def target_q(self, next_obs: torch.Tensor, lead: torch.Tensor | None = None) -> torch.Tensor:
        """Stacked next-state values the operator reduces: (S, B, ...) -> (S, B, members, A).

        With ``lead`` (S, B), the member updated on each sample, and an asymmetric G
        (``self.rotate``), each sample's stack is rotated to start at that member's target
        net: (lead, lead + 1, ..., lead - 1) mod N, as ``np.roll(q, -lead)`` over members."""
        s, b = next_obs.shape[:2]
        qt = self.target.forward_shared(next_obs, self.n_target)
        qt = qt.reshape(s, self.n_target, b, self.n_actions).transpose(1, 2)
        if self.spec.operator == "double_q":
            qo = self.online.forward_shared(next_obs, 1).reshape(s, 1, b, self.n_actions)
            qo = qo.transpose(1, 2)
            qt = torch.cat([qo, qt], dim=2)  # member 0 selects (online), 1 evaluates (target)
        elif self.rotate and lead is not None:
            order = (torch.arange(self.n_target) + lead[..., None]) % self.n_target  # (S, B, N)
            qt = qt.gather(2, order[..., None].expand_as(qt))
        return qt

    @torch.no_grad()
    def bootstrap(
        self,
        next_obs: torch.Tensor,
        seeds: np.ndarray | None = None,
        lead: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """G(Q_{s'}) per sample, (S, B), through ``maxminq.operators``; with ``seeds`` (seed
        positions) only theirs, (len(seeds), B). ``lead`` (S, B): the member each sample
        updates, which Double / Weighted Double Q put first (:meth:`target_q`); without it
        target net 0 comes first.

        One's own G is called on one seed's (B, N, A) at a time, so seeds stay independent
        whatever G does across its batch, and only on the seeds asked for: never on those
        of a seed that diverged (non-finite nets), which a G checking its input would
        refuse. Its values are taken as float32 (a float64 G's too)."""
        return self._targets(next_obs, seeds, lead)[1]

    def _targets(
        self, next_obs: torch.Tensor, seeds: np.ndarray | None, lead: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The target nets' values G reduces, (S, B, members, A), and :meth:`bootstrap`'s
        G(Q_{s'})."""
        q = self.target_q(next_obs, lead)
        if self.own_g is None:
            g = operators.bootstrap(self.operator, q, **self.op_kwargs)
            return q, (g if seeds is None else g[torch.as_tensor(seeds)])
        positions = range(self.S) if seeds is None else seeds.tolist()
        g = torch.stack([self.own_g(q[s], **self.op_kwargs).to(q.dtype) for s in positions])
        return q, g

    def divergence_cause(self, j: int) -> str:
        """Why seed ``seeds[j]`` of the last :meth:`update` did not stay finite, in one line
        for the ``runs`` table: G gave a NaN or infinite target for a sample that
        bootstraps while the target nets' values it got were all finite (G is named, with
        its keywords and the range of that input), else the networks went non-finite (their
        target values, or the update's loss or gradient: the usual divergence)."""
        seeds, q, g, terminated = self._last_update
        qs, gs = q[int(seeds[j])], g[j]  # (u * B, members, A), (u * B,)
        bad = ~torch.isfinite(gs) & (terminated[j] != 1)  # a terminal sample ignores G
        if not bool(torch.isfinite(qs).all()):
            return "networks: its target nets' values went non-finite"
        if bool(bad.any()):
            kw = f" with {self.op_kwargs}" if self.op_kwargs else ""
            return (
                f"G {self.operator}{kw} gave {gs[bad][0].item()} on finite target-net values "
                f"in [{qs.min().item():.4g}, {qs.max().item():.4g}] (its input q of shape "
                f"{tuple(qs.shape)})"
            )
        return "networks: its update's loss or gradient went non-finite"

    @torch.no_grad()
    def estimate(
        self, obs: torch.Tensor, action: torch.Tensor, seeds: np.ndarray | None = None
    ) -> torch.Tensor:
        """The estimate of Q(s, a) that the target side uses, for bias measurement: (S,).

        Maxmin: min over the N target nets; Ensemble / Averaged: their mean; DQN and
        Double DQN: the target net (Double DQN's evaluating net); Generalized DQN: its
        operator's per-action estimate where it has one (:func:`acting_operator`), else its
        G itself, on the N target nets' values of action a put in every action's place
        (G of a state whose actions are all a: for ``double_q`` the second net's value,
        ``bias_corrected`` Q - sigma E[max of A N(0, 1)], a median G the median): the
        quantity its targets bootstrap with. One's own G is called on the seeds of
        ``seeds`` only (default: all; the others' estimates are NaN), one (1, N, A) at a
        time, as in :meth:`bootstrap`: never on a diverged seed's values.
        """
        qt = self.target_q(obs.unsqueeze(1))[:, 0]  # (S, members, A)
        if self.spec.operator == "double_q":
            q = qt[:, 1]  # the evaluating (target) net
        elif self.values_of is None:  # G on the probed action's values, in every place
            same = qt.gather(-1, action.reshape(-1, 1, 1).expand_as(qt).contiguous())
            if self.own_g is None:
                return operators.bootstrap(self.operator, same, **self.op_kwargs)
            out = torch.full((self.S,), math.nan, dtype=qt.dtype)
            for s in range(self.S) if seeds is None else seeds.tolist():
                out[s] = self.own_g(same[s : s + 1], **self.op_kwargs).to(qt.dtype)[0]
            return out
        else:
            q = operators.action_values(self.values_of, qt)
        return q.gather(-1, action.reshape(-1, 1)).squeeze(-1)

    # --- learning -----------------------------------------------------------------------

    def choose_members(self, rngs: list[np.random.Generator]) -> np.ndarray:
        """Members to update when ``update_members`` > 1: per seed a uniform subset without
        replacement (Algorithm 1), sorted, drawn from that seed's generator: (k, u).

        (With one member per step the trainer draws it from its per-step uniforms.)
        """
        u = self.update_members
        return np.stack([np.sort(rng.choice(self.n_online, size=u, replace=False)) for rng in rngs])

    def update(
        self, seeds: np.ndarray, members: np.ndarray, batch: dict[str, torch.Tensor]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One gradient step for the given seeds.

        Args:
            seeds: (k,) seed positions to update (distinct).
            members: (k, u) online member of each seed to update (u = update_members).
            batch: tensors (k, u * B, ...) from ``ReplayBuffers.gather`` for those seeds,
                member j of a seed trained on its j-th block of B transitions (Algorithm 1:
                each update its own mini-batch); ``terminated`` must already be the
                bootstrapping mask.

        Returns per seed: loss (mean over updated members), mean Q(s, a) predicted, and
        whether the update stayed finite.
        """
        k, u = members.shape
        b = batch["reward"].shape[1] // u  # one member's mini-batch
        # Targets: the operator on these seeds' target stacks (the nets' forward pass on
        # all S: zeros for the others; a library G on all S, one's own on these only).
        next_obs = batch["next_obs"]
        lead = None  # Double / Weighted Double Q: each block's updated member selects
        if self.rotate:
            lead = torch.zeros((self.S, u * b), dtype=torch.long)
            lead[torch.as_tensor(seeds)] = torch.as_tensor(members).repeat_interleave(b, dim=1)
        if k == self.S and np.array_equal(seeds, np.arange(self.S)):
            q, g = self._targets(next_obs, None, lead)
        else:
            full = torch.zeros((self.S, *next_obs.shape[1:]), dtype=next_obs.dtype)
            full[torch.as_tensor(seeds)] = next_obs
            q, g = self._targets(full, seeds, lead)
        # Kept (references, no copy) for divergence_cause, should a seed not stay finite.
        self._last_update = (seeds, q, g, batch["terminated"])
        y = operators.td_target(batch["reward"], self.gamma, batch["terminated"], g)
        # Parameters of the updated members only, as fresh leaves.
        flat = (seeds[:, None] * self.n_online + members).reshape(-1)
        all_members = flat.size == self.online.members and bool(
            (flat == np.arange(flat.size)).all()
        )
        idx = None if all_members else torch.from_numpy(flat)
        if idx is None:
            rows = self.online.flat
        elif flat.size == 1:  # one member: a view, no copy
            rows = self.online.flat[int(flat[0]) : int(flat[0]) + 1]
        else:
            rows = self.online.flat.index_select(0, idx)
        # (k, u * B, ...) -> (k * u, B, ...): row j of seed i is member members[i, j]'s batch.
        obs, act, y_rep = (
            x.reshape(k * u, b, *x.shape[2:]) for x in (batch["obs"], batch["action"], y)
        )
        # Hand-written backward (nets.StackedNet.loss_and_grad): no autograd overhead.
        # One group of u rows per seed: a seed's products are its own (nets.linear).
        per, q_sa, grad = self.online.loss_and_grad(rows, obs, act, y_rep, self.loss_kind, k)
        norms = member_grad_norm_clip(grad, self.grad_clip).numpy()
        self.opt.step(idx, grad)
        per_np = per.numpy()
        ok = (np.isfinite(per_np) & np.isfinite(norms)).reshape(k, u).all(1)
        loss = per_np.reshape(k, u).mean(1)
        qm = q_sa.reshape(k, u, b).mean((1, 2)).numpy()
        return loss, qm, ok

    def sync_targets(self) -> None:
        """Copy online -> target (all N nets at once), or, for Averaged DQN, refresh the
        oldest of the K snapshots (round-robin)."""
        if self.spec.snapshots:
            k, j = self.n_target, self.snapshot_slot
            self.target.flat[j::k].copy_(self.online.flat)
            self.snapshot_slot = (j + 1) % k
        else:
            self.target.flat.copy_(self.online.flat)

    # --- persistence --------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Networks, optimiser state and the snapshot pointer (tensors and ints only)."""
        return {
            "online": self.online.flat.clone(),
            "target": self.target.flat.clone(),
            "opt": self.opt.state_dict(),
            "snapshot_slot": self.snapshot_slot,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` wrote.

        Raises:
            CannotResumeError: the saved networks have another number of parameters per
                member than these (the options are checked before, so the environment's
                observation shape or number of actions changed since it was saved: one's
                own environment's module edited between a run and its ``--resume``).
        """
        saved = state["online"]
        if saved.ndim == 2 and saved.shape[1] != self.online.n_params:
            raise CannotResumeError(
                f"--resume: the checkpoint's networks have {saved.shape[1]} parameters each, "
                f"those for the environment now {self.online.n_params} parameters: its "
                "observation shape or number of actions changed since the checkpoint"
            )
        self.online.flat.copy_(state["online"])
        self.target.flat.copy_(state["target"])
        self.opt.load_state_dict(state["opt"])
        self.snapshot_slot = int(state["snapshot_slot"])
