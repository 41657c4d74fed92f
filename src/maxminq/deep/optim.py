"""Per-member optimisers on a stack of flat parameter rows.

The parameters of M independent networks are one tensor ``flat`` of shape ``(M, P)``
(row m = every parameter of member m). ``step(idx, grad)`` updates only the members in
``idx`` and only their optimiser state (square averages, moments, step counts); every
other member's row is left bit-for-bit as it was, so the stack behaves like M separate
networks with M separate ``torch.optim`` optimisers. The arithmetic follows
``torch.optim.RMSprop`` (plain and centered; no momentum, no weight decay) and
``torch.optim.Adam`` (no amsgrad) operation by operation, elementwise, so the result is
the same as the per-tensor originals up to float rounding.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from maxminq.deep.config import OPTIMIZER_DEFAULTS

__all__ = ["OPTIMIZERS", "MemberOptimizer", "member_grad_norm_clip"]

OPTIMIZERS = tuple(OPTIMIZER_DEFAULTS)
_F32_TINY = torch.finfo(torch.float32).tiny  # 2**-126, the smallest normal float32


def _denominator_sqrt(
    x: torch.Tensor, eps: float, scale: float = 1.0, copy: bool = False
) -> torch.Tensor:
    """``x.sqrt()`` for a denominator ``sqrt(x) / scale + eps`` (in place unless ``copy``).

    torch's float32 sqrt is 5-8x slower on zeros and subnormals here, and up to 40% of a
    MinAtar run's square averages are exactly zero. Every x below 2**-126 has sqrt(x) /
    scale <= 2**-62 / scale; when that is under half an ulp of eps, all of them give the
    denominator eps, so they are raised to 2**-126 first and every denominator stays
    bit-identical. Skipped when x has a negative entry (centered RMSprop, by rounding),
    whose NaN torch.optim would keep, or a NaN (then min(x) >= 0 is false too: a NaN row
    of a diverging member must not hide another row's negative entry).
    """
    half_ulp = 2.0 ** (math.frexp(eps)[1] - 25) if eps > 0 else 0.0  # ulp(eps) / 2
    if x.dtype == torch.float32 and 2.0**-62 / scale < half_ulp and bool(x.min() >= 0):
        x = x.clamp_min(_F32_TINY) if copy else x.clamp_min_(_F32_TINY)
        return x.sqrt_()
    return x.sqrt() if copy else x.sqrt_()


class MemberOptimizer:
    """RMSprop / centered RMSprop / Adam with one independent state per member row.

    Args:
        flat: stacked parameters ``(M, P)`` (updated in place).
        kind: one of ``OPTIMIZERS``.
        lr: step size.
        **kwargs: ``alpha``, ``eps`` (RMSprop) or ``betas``, ``eps`` (Adam); ``centered``
            is implied by ``kind``. Other options are an error.
    """

    def __init__(self, flat: torch.Tensor, kind: str, lr: float, **kwargs: Any) -> None:
        if kind not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {kind!r}; choose one of {OPTIMIZERS}")
        self.flat, self.kind, self.lr = flat, kind, float(lr)
        opts = dict(OPTIMIZER_DEFAULTS[kind])
        unknown = sorted(set(kwargs) - set(opts))
        if unknown:
            raise ValueError(f"{kind} takes {', '.join(opts)}, not {', '.join(unknown)}")
        opts.update(kwargs)
        self.eps = float(opts["eps"])
        self.step_count = torch.zeros(flat.shape[0], dtype=torch.float64)
        # state[0], state[1]: (square_avg, grad_avg) for RMSprop, (exp_avg, exp_avg_sq) for Adam
        if kind == "adam":
            b1, b2 = opts["betas"]
            self.beta1, self.beta2 = float(b1), float(b2)
            self.state = [torch.zeros_like(flat), torch.zeros_like(flat)]
        else:
            self.alpha = float(opts["alpha"])
            self.state = [torch.zeros_like(flat)]
            if kind == "centered_rmsprop":
                self.state.append(torch.zeros_like(flat))

    def step(self, idx: torch.Tensor | None, grad: torch.Tensor) -> None:
        """Apply one update to the member rows ``idx`` (all rows if None).

        ``grad`` has shape ``(len(idx), P)`` (``(M, P)`` for ``idx=None``), rows in
        ``idx`` order. ``idx`` must not contain duplicates.
        """
        single = idx is not None and idx.numel() == 1
        if idx is None or single:
            # All rows, or one row: work on views in place (no gather / scatter back).
            sl = slice(None) if idx is None else slice(int(idx[0]), int(idx[0]) + 1)
            self.step_count[sl] += 1
            state = [s[sl] for s in self.state]
            p = self.flat[sl]
        else:
            self.step_count[idx] += 1
            state = [s.index_select(0, idx) for s in self.state]
            p = self.flat.index_select(0, idx)
        if self.kind == "adam":
            self._adam(idx, p, state, grad)
        else:
            self._rmsprop(p, state, grad)
        if idx is not None and not single:
            self.flat.index_copy_(0, idx, p)
            for dst, src in zip(self.state, state, strict=True):
                dst.index_copy_(0, idx, src)

    def _rmsprop(self, p: torch.Tensor, state: list[torch.Tensor], g: torch.Tensor) -> None:
        a = self.alpha
        sq = state[0]
        sq.mul_(a).addcmul_(g, g, value=1 - a)
        if self.kind == "centered_rmsprop":
            ga = state[1]
            ga.lerp_(g, 1 - a)
            avg = _denominator_sqrt(sq.addcmul(ga, ga, value=-1), self.eps)
        else:
            avg = _denominator_sqrt(sq, self.eps, copy=True)
        avg.add_(self.eps)
        p.addcdiv_(g, avg, value=-self.lr)

    def _adam(
        self, idx: torch.Tensor | None, p: torch.Tensor, state: list[torch.Tensor], g: torch.Tensor
    ) -> None:
        steps = self.step_count if idx is None else self.step_count[idx]
        bc1 = 1 - self.beta1**steps  # per member, in float64 like torch's python floats
        bc2_sqrt = (1 - self.beta2**steps).sqrt()
        m, v = state
        m.lerp_(g, 1 - self.beta1)
        v.mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
        root = _denominator_sqrt(v, self.eps, float(bc2_sqrt.min()), copy=True)
        denom = (root / bc2_sqrt.to(p.dtype)[:, None]).add_(self.eps)
        p.addcdiv_(m * (-self.lr / bc1).to(p.dtype)[:, None], denom)

    def state_dict(self) -> dict[str, Any]:
        """Tensors and names only (safe for ``torch.load(weights_only=True)``)."""
        return {
            "kind": self.kind,
            "step_count": self.step_count.clone(),
            "state": [s.clone() for s in self.state],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state written by ``state_dict`` (same kind and shapes)."""
        if state["kind"] != self.kind:
            raise ValueError(f"optimizer state is {state['kind']!r}, expected {self.kind!r}")
        self.step_count.copy_(state["step_count"])
        for dst, src in zip(self.state, state["state"], strict=True):
            dst.copy_(src)


def member_grad_norm_clip(grad: torch.Tensor, max_norm: float | None) -> torch.Tensor:
    """Clip each member's gradient row ``(k, P)`` to L2 norm ``max_norm``, in place.

    Same rule as ``torch.nn.utils.clip_grad_norm_`` applied to each network separately:
    scale by ``min(1, max_norm / (norm + 1e-6))``. Returns the per-member norms (k,).
    """
    norms = torch.linalg.vector_norm(grad, dim=1)
    if max_norm is not None and math.isfinite(max_norm):
        grad.mul_((max_norm / (norms + 1e-6)).clamp_(max=1.0)[:, None])
    return norms
