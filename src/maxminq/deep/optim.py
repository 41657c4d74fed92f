"""Per-member optimisers on stacked parameters.

Each stacked tensor ``p`` of shape ``(M, ...)`` holds M independent networks. ``step(idx,
grads)`` updates only the members listed in ``idx`` and only their optimiser state
(square averages, moments, step counts); every other member is left bit-for-bit as it
was, so the stack behaves like M separate networks with M separate ``torch.optim``
optimisers. The arithmetic follows ``torch.optim.RMSprop`` (plain and centered, no
momentum, no weight decay) and ``torch.optim.Adam`` (no amsgrad) operation by operation.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["MemberOptimizer", "OPTIMIZERS"]

OPTIMIZERS = ("rmsprop", "centered_rmsprop", "adam")

# torch.optim defaults, used when the registry/config gives no value.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "rmsprop": {"alpha": 0.99, "eps": 1e-8},
    "centered_rmsprop": {"alpha": 0.99, "eps": 1e-8},
    "adam": {"betas": (0.9, 0.999), "eps": 1e-8},
}


class MemberOptimizer:
    """RMSprop / centered RMSprop / Adam with one independent state per member.

    Args:
        params: stacked parameter tensors, each ``(M, ...)`` (updated in place).
        kind: one of ``OPTIMIZERS``.
        lr: step size.
        **kwargs: ``alpha``, ``eps`` (RMSprop) or ``betas``, ``eps`` (Adam); ``centered``
            is implied by ``kind``.
    """

    def __init__(self, params: list[torch.Tensor], kind: str, lr: float, **kwargs: Any) -> None:
        if kind not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {kind!r}; choose one of {OPTIMIZERS}")
        self.params, self.kind, self.lr = params, kind, float(lr)
        opts = dict(_DEFAULTS[kind])
        opts.update({k: v for k, v in kwargs.items() if k != "centered"})
        self.eps = float(opts["eps"])
        members = params[0].shape[0]
        self.step_count = torch.zeros(members, dtype=torch.float64)
        if kind == "adam":
            b1, b2 = opts["betas"]
            self.beta1, self.beta2 = float(b1), float(b2)
            self.m = [torch.zeros_like(p) for p in params]
            self.v = [torch.zeros_like(p) for p in params]
        else:
            self.alpha = float(opts["alpha"])
            self.square_avg = [torch.zeros_like(p) for p in params]
            self.grad_avg = (
                [torch.zeros_like(p) for p in params] if kind == "centered_rmsprop" else None
            )

    def step(self, idx: torch.Tensor | None, grads: list[torch.Tensor]) -> None:
        """Apply one update to members ``idx`` (all members if None).

        ``grads[j]`` has shape ``(len(idx), ...)`` (or ``(M, ...)`` for ``idx=None``):
        the gradient of parameter tensor j for each updated member, in ``idx`` order.
        ``idx`` must not contain duplicates.
        """
        full = idx is None
        if full:
            self.step_count += 1
        else:
            self.step_count[idx] += 1
        if self.kind == "adam":
            self._adam(idx, grads)
        else:
            self._rmsprop(idx, grads)

    @staticmethod
    def _get(t: torch.Tensor, idx: torch.Tensor | None) -> torch.Tensor:
        return t if idx is None else t.index_select(0, idx)

    @staticmethod
    def _put(t: torch.Tensor, idx: torch.Tensor | None, value: torch.Tensor) -> None:
        if idx is not None:
            t.index_copy_(0, idx, value)

    def _rmsprop(self, idx: torch.Tensor | None, grads: list[torch.Tensor]) -> None:
        a = self.alpha
        for j, (p, g) in enumerate(zip(self.params, grads, strict=True)):
            sq = self._get(self.square_avg[j], idx)
            sq.mul_(a).addcmul_(g, g, value=1 - a)
            self._put(self.square_avg[j], idx, sq)
            if self.grad_avg is not None:
                ga = self._get(self.grad_avg[j], idx)
                ga.lerp_(g, 1 - a)
                self._put(self.grad_avg[j], idx, ga)
                avg = sq.addcmul(ga, ga, value=-1).sqrt_()
            else:
                avg = sq.sqrt()
            avg.add_(self.eps)
            pv = self._get(p, idx)
            pv.addcdiv_(g, avg, value=-self.lr)
            self._put(p, idx, pv)

    def _adam(self, idx: torch.Tensor | None, grads: list[torch.Tensor]) -> None:
        steps = self._get(self.step_count, idx)
        bc1 = 1 - self.beta1**steps  # per member, float64 like torch's python-float math
        bc2_sqrt = (1 - self.beta2**steps).sqrt()
        step_size = self.lr / bc1
        for j, (p, g) in enumerate(zip(self.params, grads, strict=True)):
            shape = (-1,) + (1,) * (p.dim() - 1)
            m = self._get(self.m[j], idx)
            v = self._get(self.v[j], idx)
            m.lerp_(g, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            self._put(self.m[j], idx, m)
            self._put(self.v[j], idx, v)
            denom = (v.sqrt() / bc2_sqrt.to(p.dtype).reshape(shape)).add_(self.eps)
            pv = self._get(p, idx)
            pv.addcdiv_(m * (-step_size).to(p.dtype).reshape(shape), denom)
            self._put(p, idx, pv)

    def state_dict(self) -> dict[str, Any]:
        """Tensors and numbers only (safe for ``torch.load(weights_only=True)``)."""
        state: dict[str, Any] = {"kind": self.kind, "step_count": self.step_count.clone()}
        if self.kind == "adam":
            state["m"] = [t.clone() for t in self.m]
            state["v"] = [t.clone() for t in self.v]
        else:
            state["square_avg"] = [t.clone() for t in self.square_avg]
            if self.grad_avg is not None:
                state["grad_avg"] = [t.clone() for t in self.grad_avg]
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state written by ``state_dict`` (same kind and shapes)."""
        if state["kind"] != self.kind:
            raise ValueError(f"optimizer state is {state['kind']!r}, expected {self.kind!r}")
        self.step_count.copy_(state["step_count"])
        names = ["m", "v"] if self.kind == "adam" else ["square_avg"]
        if self.kind == "centered_rmsprop":
            names.append("grad_avg")
        for name in names:
            for dst, src in zip(getattr(self, name), state[name], strict=True):
                dst.copy_(src)


def member_grad_norm_clip(grads: list[torch.Tensor], max_norm: float | None) -> torch.Tensor:
    """Clip each member's gradient (over all its tensors) to ``max_norm``, in place.

    Same rule as ``torch.nn.utils.clip_grad_norm_`` applied to each network separately:
    scale by ``min(1, max_norm / (norm + 1e-6))``. Returns the per-member norms (k,).
    """
    k = grads[0].shape[0]
    sq = torch.zeros(k, dtype=grads[0].dtype)
    for g in grads:
        sq += g.reshape(k, -1).pow(2).sum(1)
    norms = sq.sqrt()
    if max_norm is not None and math.isfinite(max_norm):
        coef = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.reshape((-1,) + (1,) * (g.dim() - 1)))
    return norms
