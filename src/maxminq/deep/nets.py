"""Stacked Q-networks: M independent networks evaluated in one batched call.

Every parameter carries a leading member axis of size M. A linear layer is one
``torch.baddbmm`` over the members (one per seed where one product for all would round a
seed's values by its position among the seeds: ``linear``); the MinAtar convolution is a
``torch.bmm`` of all members' filters with each input's im2col patches (the equivalent of
a grouped convolution). Initialisation reproduces ``torch.nn.Linear`` / ``torch.nn.Conv2d`` defaults
(uniform in +-1/sqrt(fan_in) for weights and biases) member by member, drawn from a
caller-supplied ``torch.Generator`` so that a seed's networks do not depend on how many
other seeds share the stack.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from maxminq.envs.registry import NETWORK_HIDDEN

__all__ = ["StackedMLP", "StackedMinAtarCNN", "StackedNet", "build_net", "tile_members"]


def tile_members(x: torch.Tensor, k: int) -> torch.Tensor:
    """(G, B, ...) -> (G * k, B, ...): each group's inputs seen by its k consecutive members."""
    if k == 1:
        return x
    return x.unsqueeze(1).expand(x.shape[0], k, *x.shape[1:]).reshape(-1, *x.shape[1:])


def _uniform(shape: tuple[int, ...], bound: float, gen: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float32) * 2.0 - 1.0) * bound


def linear(bias: torch.Tensor, h: torch.Tensor, w: torch.Tensor, groups: int = 1) -> torch.Tensor:
    """``bias + h @ w`` for every member (one ``torch.baddbmm``), or, when ``groups`` > 1
    and one product would round by position, one product per group of consecutive members
    (a seed's members): the product that group has alone (:func:`bmm`).

    torch's batched CPU kernels round a member's result differently by its index in the
    batch for some shapes (measured here: one-row products, B = 1 as in acting, bias probes
    and test episodes, with at least 400 weights and an output width not a multiple of 4,
    e.g. MinAtar's 128 -> 6 for one net per seed; mini-batch products with an output width
    above 4 and B x width not a multiple of 4, e.g. MinAtar's 6 actions at an odd
    --batch-size; neither at the defaults' mini-batch of 32 nor for hidden widths of 64 and
    128). One product over all seeds would then make a seed's values depend on its position
    among the other seeds. Which shapes do is the kernel's (machine's) business, so it is
    tried once per shape (:func:`_one_product_per_group`), and one product taken only where
    it gives every group exactly its own product (faster: e.g. 8.5 us instead of 61 us for
    MinAtar's output layer of 3 seeds x 4 nets here)."""
    return bmm(h, w, groups, bias)


def bmm(
    a: torch.Tensor, b: torch.Tensor, groups: int = 1, bias: torch.Tensor | None = None
) -> torch.Tensor:
    """``a @ b`` (``bias + a @ b`` given ``bias``) for every member: one ``torch.bmm`` /
    ``torch.baddbmm``, or one per group of consecutive members where one product would
    give a group other values than its own product (:func:`_one_product_per_group`). The
    forward layers (:func:`linear`) and the hand-written backward's products both come
    here: the gradient products round by position too for some shapes (here a batch of one
    row on one thread; batches of 1, 5 or 7 rows on two threads).

    One row times transposed matrices (the backward's ``dz @ w.T`` at ``--batch-size 1``)
    is made as the first row of a two-row product (the second row zero): torch's one-row
    kernel for a transposed matrix rounds by where the matrix lies in memory (its
    alignment), and a seed's weights lie elsewhere among other seeds' than alone (row s of
    the flat parameters); the two-row kernel does not (measured here)."""
    if bias is None and a.shape[1] == 1 and b.shape[-2] > 1 and b.stride(-2) == 1:
        two = torch.cat([a, torch.zeros_like(a)], 1)
        return bmm(two, b, groups)[:, :1].contiguous()
    if groups > 1 and not _one_product_per_group(a, b, groups, bias):
        return _products(a, b, bias, groups)
    return _products(a, b, bias, 1)


def _products(
    a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None, groups: int
) -> torch.Tensor:
    """``(bias +) a @ b`` as one batched product per group of consecutive members."""
    if groups == 1:
        return torch.bmm(a, b) if bias is None else torch.baddbmm(bias, a, b)
    k = a.shape[0] // groups
    return torch.cat(
        [
            _products(a[i : i + k], b[i : i + k], None if bias is None else bias[i : i + k], 1)
            for i in range(0, a.shape[0], k)
        ]
    )


# Whether one batched product equals a product per group, per (groups, each operand's
# layout and the bias's (shape, strides and alignment), torch threads): tried once each
# in a process (_one_product_per_group).
_PER_GROUP_EQUAL: dict[tuple[Any, ...], bool] = {}
_TRIALS = 8
_ALIGN = 16  # floats: 64 bytes, the widest alignment a CPU kernel may choose a path by


def _layout(x: torch.Tensor) -> tuple[Any, ...]:
    """What of ``x`` besides its values may choose a kernel's path: its shape, its strides
    (a transpose, a member stride of a flat parameter row) and its start's alignment."""
    return x.shape, x.stride(), x.storage_offset() % _ALIGN


def _random_like_layout(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Random values in [-0.5, 0.5) laid out as ``x`` (:func:`_layout`)."""
    start = x.storage_offset() % _ALIGN
    size = start + 1 + sum((n - 1) * st for n, st in zip(x.shape, x.stride(), strict=True))
    # A member stride's gaps stay zero (no draws); x's dtype, not torch's default one.
    out = torch.zeros(size, dtype=x.dtype).as_strided(x.shape, x.stride(), start)
    return out.copy_(torch.rand(tuple(x.shape), generator=gen, dtype=x.dtype).sub_(0.5))


def _one_product_per_group(
    a: torch.Tensor, b: torch.Tensor, groups: int, bias: torch.Tensor | None
) -> bool:
    """Whether one ``torch.bmm`` (``torch.baddbmm`` given ``bias``) of the members' products
    ``a @ b`` gives every one of the ``groups`` consecutive groups of members exactly the
    result of the group's own product, tried on random values laid out as the operands
    (:func:`_layout`; a generator of its own: no seed's stream is touched) the first time
    such a product comes: a kernel that rounds by position differs there (some entries of the
    2nd, 3rd, ... group). Taken where it holds (a seed's values then do not depend on the
    other seeds either way) as it is faster than a product per group."""
    key = (
        groups, _layout(a), _layout(b), None if bias is None else _layout(bias),
        torch.get_num_threads(),
    )  # fmt: skip
    known = _PER_GROUP_EQUAL.get(key)
    if known is None:
        gen = torch.Generator().manual_seed(0)
        known = True
        for _ in range(_TRIALS):  # a few draws: a small output could round alike by chance
            x, y = _random_like_layout(a, gen), _random_like_layout(b, gen)
            c = None if bias is None else _random_like_layout(bias, gen)
            if not torch.equal(_products(x, y, c, 1), _products(x, y, c, groups)):
                known = False
                break
        _PER_GROUP_EQUAL[key] = known
    return known


class StackedNet:
    """Base class: all parameters of member m live in row m of one flat tensor.

    ``flat`` has shape ``(M, P)``; ``params`` are views of it with a leading member axis
    (``views`` builds the same views over any ``(k, P)`` tensor, e.g. a gathered subset).
    One flat row per member lets the optimiser, the gradient clip and the target copy
    touch every parameter of a member with one tensor operation.
    """

    flat: torch.Tensor
    params: list[torch.Tensor]
    shapes: list[tuple[int, ...]]
    members: int
    n_actions: int

    def _allocate(self, shapes: list[tuple[int, ...]]) -> None:
        self.shapes = shapes
        self.sizes_flat = [math.prod(sh) for sh in shapes]
        self.n_params = sum(self.sizes_flat)
        # float32 whatever torch's default dtype (torch.set_default_dtype(torch.float64) in
        # the caller's notebook made the parameters float64 and the first product fail on
        # the float32 observations).
        self.flat = torch.zeros(self.members, self.n_params, dtype=torch.float32)
        self.params = self.views(self.flat)

    def views(self, flat: torch.Tensor) -> list[torch.Tensor]:
        """Per-layer views ``(k, *shape)`` of a ``(k, P)`` tensor."""
        out, off = [], 0
        for shape, size in zip(self.shapes, self.sizes_flat, strict=True):
            out.append(flat[:, off : off + size].view(flat.shape[0], *shape))
            off += size
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Q-values ``(M, B, A)`` for observations ``x`` of shape ``(M, B, *obs_shape)``."""
        return self._forward_saved(self.params, x)[0]

    def init_member_params(self, gen: torch.Generator) -> list[torch.Tensor]:
        """Fresh parameters for ONE member (no member axis), drawn from ``gen``."""
        raise NotImplementedError

    def forward_shared(self, x: torch.Tensor, n: int) -> torch.Tensor:
        """Q-values ``(M, B, A)`` when consecutive groups of ``n`` members see the same
        inputs: ``x`` is ``(M // n, B, *obs)`` (e.g. one batch per seed, N nets each).

        Each group's layers are products of their own where one product for all groups
        would round a member's values by its position among them (``linear``): a seed's
        values would then depend on the other seeds."""
        return self._forward_saved(self.params, tile_members(x, n), groups=x.shape[0])[0]

    def _forward_saved(
        self, ps: list[torch.Tensor], x: torch.Tensor, *, groups: int = 1
    ) -> tuple[torch.Tensor, Any]:
        """Q-values (k, B, A) and what ``_backward`` needs; ``groups``: see ``linear``."""
        raise NotImplementedError

    def _backward(
        self, ps: list[torch.Tensor], saved: Any, dq: torch.Tensor, groups: int = 1
    ) -> list[torch.Tensor]:
        """Gradients of every parameter view, given dLoss/dQ (k, B, A); ``groups``: see
        ``bmm`` (each group's products its own where one would round by position)."""
        raise NotImplementedError

    def loss_and_grad(
        self,
        rows: torch.Tensor,
        x: torch.Tensor,
        action: torch.Tensor,
        y: torch.Tensor,
        loss: str,
        groups: int = 1,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-member loss, Q(s, a) and gradient rows, by hand-written backpropagation.

        ``rows`` (k, P) parameters, ``x`` (k, B, *obs), ``action`` (k, B), targets ``y``
        (k, B). Loss per member: mean over the batch of the squared error ('mse') or of
        the Huber / SmoothL1 loss with beta 1 ('huber'). Returns ``(loss (k,), q_sa (k, B),
        grad (k, P))``; equal to autograd's result (the equivalence test checks it
        against ``nn.Module`` + ``backward``), without the autograd engine's overhead.
        ``groups``: the rows are that many groups (seeds) of consecutive members, whose
        forward and backward products are their own where one product would round by
        position (``linear``, ``bmm``).
        """
        ps = self.views(rows)
        q, saved = self._forward_saved(ps, x, groups=groups)
        idx = action.unsqueeze(-1)
        q_sa = q.gather(-1, idx).squeeze(-1)
        diff = q_sa - y
        batch = diff.shape[1]
        if loss == "huber":
            ad = diff.abs()
            per = torch.where(ad < 1.0, 0.5 * diff * diff, ad - 0.5).mean(1)
            d_q = diff.clamp(-1.0, 1.0) / batch
        else:
            per = (diff * diff).mean(1)
            d_q = diff * (2.0 / batch)
        dq = torch.zeros_like(q).scatter_(-1, idx, d_q.unsqueeze(-1))
        grads = self._backward(ps, saved, dq, groups)
        k = rows.shape[0]
        return per, q_sa, torch.cat([g.reshape(k, -1) for g in grads], dim=1)

    def init_members(self, gens: list[torch.Generator], per_gen: int) -> None:
        """Initialise members ``k * per_gen ... (k + 1) * per_gen - 1`` from ``gens[k]``."""
        if len(gens) * per_gen != self.members:
            raise ValueError("init_members: len(gens) * per_gen must equal the member count")
        m = 0
        for gen in gens:
            for _ in range(per_gen):
                for p, v in zip(self.params, self.init_member_params(gen), strict=True):
                    p[m].copy_(v)
                m += 1

    def to_modules(self) -> list[nn.Module]:
        """One ordinary ``nn.Module`` per member, with copies of its parameters."""
        raise NotImplementedError


class StackedMLP(StackedNet):
    """M copies of ``Linear(in, h1) -> ReLU -> ... -> Linear(h_last, A)`` (paper: [64, 64])."""

    def __init__(
        self,
        members: int,
        obs_dim: int,
        n_actions: int,
        hidden: tuple[int, ...] = NETWORK_HIDDEN["mlp"],
    ) -> None:
        self.members, self.obs_dim, self.n_actions = members, obs_dim, n_actions
        self.sizes = [obs_dim, *hidden, n_actions]
        shapes: list[tuple[int, ...]] = []
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            shapes += [(fan_in, fan_out), (1, fan_out)]  # weight (in, out), bias
        self._allocate(shapes)

    def init_member_params(self, gen: torch.Generator) -> list[torch.Tensor]:
        """One member's layers drawn as ``nn.Linear`` draws them (weight, then bias)."""
        out = []
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            bound = 1.0 / math.sqrt(fan_in)
            # nn.Linear draws weight (out, in) first, then bias: keep that order.
            out.append(_uniform((fan_out, fan_in), bound, gen).t().contiguous())
            out.append(_uniform((1, fan_out), bound, gen))
        return out

    def _forward_saved(
        self, ps: list[torch.Tensor], x: torch.Tensor, *, groups: int = 1
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        acts = [x.reshape(x.shape[0], x.shape[1], -1)]
        h = acts[0]
        n_layers = len(ps) // 2
        for i in range(n_layers):
            h = linear(ps[2 * i + 1], h, ps[2 * i], groups)
            if i < n_layers - 1:
                h = h.relu_()
                acts.append(h)
        return h, acts

    def _backward(
        self, ps: list[torch.Tensor], acts: list[torch.Tensor], dz: torch.Tensor, groups: int = 1
    ) -> list[torch.Tensor]:
        n_layers = len(ps) // 2
        grads: list[torch.Tensor] = [dz] * len(ps)
        for i in range(n_layers - 1, -1, -1):
            a_in = acts[i]
            grads[2 * i] = bmm(a_in.transpose(1, 2), dz, groups)
            grads[2 * i + 1] = dz.sum(1, keepdim=True)
            if i > 0:
                dz = bmm(dz, ps[2 * i].transpose(1, 2), groups).mul_(a_in > 0)
        return grads

    def to_modules(self) -> list[nn.Module]:
        """One ordinary ``nn.Module`` per member, with copies of its parameters."""
        mods: list[nn.Module] = []
        for m in range(self.members):
            layers: list[nn.Module] = []
            for i, (fan_in, fan_out) in enumerate(
                zip(self.sizes[:-1], self.sizes[1:], strict=True)
            ):
                lin = nn.Linear(fan_in, fan_out)
                with torch.no_grad():
                    lin.weight.copy_(self.params[2 * i][m].t())
                    lin.bias.copy_(self.params[2 * i + 1][m, 0])
                layers += [lin, nn.ReLU()]
            mods.append(nn.Sequential(nn.Flatten(), *layers[:-1]))
        return mods


class StackedMinAtarCNN(StackedNet):
    """M copies of the MinAtar DQN network (Young and Tian 2019), as used by Lan et al.

    ``Conv2d(C, 16, 3, stride 1) -> ReLU -> Linear(16 * 8 * 8, H) -> ReLU -> Linear(H, A)``
    (the paper's H = 128) on C x 10 x 10 observations (channels first, as ``maxminq.envs``
    returns MinAtar states). The M convolutions run as batched matrix products on im2col patches
    (a gather, as ``F.unfold``, then ``torch.bmm``), an equivalent of a grouped convolution.
    """

    def __init__(
        self,
        members: int,
        in_channels: int,
        n_actions: int,
        size: int = 10,
        hidden: int = NETWORK_HIDDEN["minatar_cnn"][0],
    ) -> None:
        self.members, self.in_channels, self.n_actions = members, in_channels, n_actions
        self.size, self.hidden = size, hidden
        self.conv_out = 16 * (size - 2) * (size - 2)
        # im2col as one gather: entry (c * 9 + 3 ky + kx, y * (size - 2) + x) of a patch
        # matrix is pixel (c, y + ky, x + kx), F.unfold's layout (4-5x faster than unfold
        # on a mini-batch of 32 here, same values).
        c, ky, kx, y, x = torch.meshgrid(
            *(torch.arange(n) for n in (in_channels, 3, 3, size - 2, size - 2)), indexing="ij"
        )
        self.patch_index = ((c * size + y + ky) * size + x + kx).reshape(-1)
        self._allocate(
            [
                (16, in_channels, 3, 3),
                (16,),
                (self.conv_out, hidden),
                (1, hidden),
                (hidden, n_actions),
                (1, n_actions),
            ]
        )

    def init_member_params(self, gen: torch.Generator) -> list[torch.Tensor]:
        """One member's conv and linear layers drawn as ``nn.Conv2d`` / ``nn.Linear`` draw them."""
        cb = 1.0 / math.sqrt(self.in_channels * 9)
        fb = 1.0 / math.sqrt(self.conv_out)
        h = self.hidden
        ob = 1.0 / math.sqrt(h)
        return [
            _uniform((16, self.in_channels, 3, 3), cb, gen),
            _uniform((16,), cb, gen),
            _uniform((h, self.conv_out), fb, gen).t().contiguous(),
            _uniform((1, h), fb, gen),
            _uniform((self.n_actions, h), ob, gen).t().contiguous(),
            _uniform((1, self.n_actions), ob, gen),
        ]

    def forward_shared(self, x: torch.Tensor, n: int) -> torch.Tensor:
        """As the base method, with the im2col patches built once per input group and the
        group's n convolutions as one matrix product (no n-fold copy of the inputs)."""
        return self._forward_saved(self.params, x, n, groups=x.shape[0])[0]

    def _forward_saved(
        self, ps: list[torch.Tensor], x: torch.Tensor, n: int = 1, *, groups: int = 1
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """Q-values (G * n, B, A) for inputs ``x`` (G, B, C, H, W), each seen by ``n``
        consecutive members (n = 1: one input batch per member), and what ``_backward``
        needs (for n = 1)."""
        cw, cb, w1, b1, w2, b2 = ps
        g, b = x.shape[0], x.shape[1]
        c, size = self.in_channels, self.size
        # The convolutions as batched matrix products over im2col patches, one per input:
        # (n * 16 filters x C * 9) @ (C * 9 x L positions). Each member's result is bitwise
        # independent of how many members share the call (a grouped conv's algorithm
        # depends on M). The output, (G, B, n, 16, L), is already the linear layer's input
        # for every member, (B, 16 * L) at row stride n * 16 * L: with one input group
        # (one seed) no transposed copy of the n members' activations is made.
        n_pos = (size - 2) ** 2
        cols = x.reshape(g * b, c * size * size).index_select(1, self.patch_index)
        cols = cols.view(g * b, c * 9, n_pos)  # im2col patches, as F.unfold(x, 3)
        w = cw.reshape(g, 1, n * 16, c * 9).expand(g, b, n * 16, c * 9)
        conv = torch.bmm(w.reshape(g * b, n * 16, c * 9), cols)  # a view of w when G = 1
        conv = conv.view(g, b, n * 16, n_pos).add_(cb.reshape(g, 1, n * 16, 1)).relu_()
        a1 = conv.view(g, b, n, self.conv_out).transpose(1, 2).reshape(g * n, b, self.conv_out)
        a2 = linear(b1, a1, w1, groups).relu_()
        return linear(b2, a2, w2, groups), (cols, conv, a1, a2)

    def _backward(
        self,
        ps: list[torch.Tensor],
        saved: tuple[torch.Tensor, ...],
        dq: torch.Tensor,
        groups: int = 1,
    ) -> list[torch.Tensor]:
        cw, cb, w1, b1, w2, b2 = ps
        cols, conv, a1, a2 = saved
        m, b = dq.shape[0], dq.shape[1]
        g_w2 = bmm(a2.transpose(1, 2), dq, groups)
        g_b2 = dq.sum(1, keepdim=True)
        dz2 = bmm(dq, w2.transpose(1, 2), groups) * (a2 > 0)
        g_w1 = bmm(a1.transpose(1, 2), dz2, groups)
        g_b1 = dz2.sum(1, keepdim=True)
        da1 = bmm(dz2, w1.transpose(1, 2), groups)  # (M, B, 16 * L), the layout of conv
        n_pos = self.conv_out // 16
        dconv = (da1.view(m, b, 16, n_pos) * (conv > 0)).transpose(1, 2).reshape(m, 16, -1)
        cols = cols.view(m, b, -1, n_pos).transpose(1, 2).reshape(m, -1, b * n_pos)
        g_cw = bmm(dconv, cols.transpose(1, 2), groups)  # (M, 16, C * 9)
        g_cb = dconv.sum(2)
        return [g_cw, g_cb, g_w1, g_b1, g_w2, g_b2]

    def to_modules(self) -> list[nn.Module]:
        """One ordinary ``nn.Module`` per member, with copies of its parameters."""
        mods: list[nn.Module] = []
        for m in range(self.members):
            conv = nn.Conv2d(self.in_channels, 16, 3, 1)
            l1 = nn.Linear(self.conv_out, self.hidden)
            l2 = nn.Linear(self.hidden, self.n_actions)
            with torch.no_grad():
                conv.weight.copy_(self.params[0][m])
                conv.bias.copy_(self.params[1][m])  # type: ignore[union-attr]  # bias=True
                l1.weight.copy_(self.params[2][m].t())
                l1.bias.copy_(self.params[3][m, 0])
                l2.weight.copy_(self.params[4][m].t())
                l2.bias.copy_(self.params[5][m, 0])
            mods.append(nn.Sequential(conv, nn.ReLU(), nn.Flatten(), l1, nn.ReLU(), l2))
        return mods


def build_net(
    network: str,
    members: int,
    obs_shape: tuple[int, ...],
    n_actions: int,
    hidden: tuple[int, ...] | None = None,
) -> StackedNet:
    """The stacked network named ``network`` ('mlp' or 'minatar_cnn') for ``obs_shape``;
    ``hidden``: the MLP's hidden layer sizes or the MinAtar network's one fully connected
    width (None: the paper's, ``maxminq.envs.registry.NETWORK_HIDDEN``)."""
    if hidden is None:
        hidden = NETWORK_HIDDEN.get(network, ())
    if network == "mlp":
        return StackedMLP(members, int(math.prod(obs_shape)), n_actions, hidden)
    if network == "minatar_cnn":
        if len(obs_shape) != 3:
            raise ValueError(f"minatar_cnn needs (C, H, W) observations, got {obs_shape}")
        if len(hidden) != 1:
            raise ValueError(f"minatar_cnn has one hidden width, got {hidden}")
        return StackedMinAtarCNN(members, obs_shape[0], n_actions, obs_shape[1], hidden[0])
    raise ValueError(f"unknown network {network!r}")
