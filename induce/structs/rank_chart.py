"""The rank-space chart of :func:`induce.structs.pcfg.inside_low_rank`, differentiated
without copying the whole chart at every width.

Written the plain way (``start[:, :count, w] = x`` into one chart tensor, slices of it read at
the next widths), autograd records an in-place copy per width whose backward clones the
gradient of the whole ``[B, n + 1, n + 1, r]`` chart, and a slice per read whose backward
fills a zero chart of that size: ``O(n^3 r)`` memory traffic for an ``O(n^2 r)`` chart, more
than half of a TN-PCFG training step of 16 sentences of 40 words on a CPU.  Here the chart
and its gradient are plain buffers outside the graph; two autograd functions write a width
into the chart (backward: read its gradient) and combine a width's split pairs (backward:
add into the gradient's slices in place).  A zero-size *token* passed from each write to
the next and to every combination orders the backward: the gradient of a width is read
only after every wider span that used it has added its share.

Shapes: ``B`` sentences, ``n`` words, ``r`` ranks; ``start[b, i, w]`` holds ``L(i, i + w)``
and ``end[b, j, w]`` holds ``R(j - w, j)``.
"""

from __future__ import annotations

from typing import Any

import torch


class RankChart:
    """The left and right projections of every span, ``[B, n + 1, n + 1, r]`` each, and
    (allocated by the first backward) their gradients.

    The autograd functions' contexts keep the :class:`_Buffers`, never the chart: the chart
    holds the last token, whose graph holds those contexts, and a cycle through the C++
    graph is one Python's collector cannot see, so every chart of every step (and of every
    batch ``induce parse`` differentiates for its marginals) would have stayed in memory."""

    def __init__(self, like: torch.Tensor, n: int, rank: int) -> None:
        self.buffers = _Buffers(like, n, rank)
        self.token = like.new_zeros(0)

    def write(self, w: int, left: torch.Tensor, right: torch.Tensor) -> None:
        """Span width ``w``'s projections ``left``/``right [B, count, r]``, span ``(i, i +
        w)`` at row ``i``."""
        self.token = _Write.apply(self.buffers, w, left, right, self.token)

    def combine(self, w: int) -> torch.Tensor:
        """``[B, n - w + 1, r]``: ``g(i, i + w) = log sum_k exp(L(i, i + k) + R(i + k, i +
        w))`` over the split points ``k = 1 .. w - 1`` of every span ``(i, i + w)``.  The
        ``[B, n - w + 1, w - 1, r]`` sums are not kept for the backward (it recomputes them
        from the chart, whose slots are written once): memory ``O(B n^2 r)``, not ``O(B n^3
        r)``."""
        count = self.buffers.start.shape[1] - w
        return _Combine.apply(self.buffers, w, count, self.token)


class _Buffers:
    """The chart's tensors, plain (outside the graph), and their gradients."""

    def __init__(self, like: torch.Tensor, n: int, rank: int) -> None:
        batch = like.shape[0]
        self.start = like.new_zeros(batch, n + 1, n + 1, rank)
        self.end = like.new_zeros(batch, n + 1, n + 1, rank)
        self.grad_start: torch.Tensor | None = None
        self.grad_end: torch.Tensor | None = None

    def gradients(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The chart's gradient buffers (zeros when first asked for)."""
        if self.grad_start is None or self.grad_end is None:
            self.grad_start = torch.zeros_like(self.start)
            self.grad_end = torch.zeros_like(self.end)
        return self.grad_start, self.grad_end


class _Write(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        chart: _Buffers,
        w: int,
        left: torch.Tensor,
        right: torch.Tensor,
        token: torch.Tensor,
    ) -> torch.Tensor:
        count = left.shape[1]
        chart.start[:, :count, w] = left
        chart.end[:, w : w + count, w] = right
        ctx.chart, ctx.w, ctx.count = chart, w, count
        return token.new_zeros(0)

    @staticmethod
    def backward(ctx: Any, token: torch.Tensor) -> tuple[Any, ...]:
        w, count = ctx.w, ctx.count
        grad_start, grad_end = ctx.chart.gradients()
        left = grad_start[:, :count, w].clone()
        right = grad_end[:, w : w + count, w].clone()
        # every wider span has added its share: the slots are spent, and left at zero for
        # another backward through the same graph
        grad_start[:, :count, w] = 0
        grad_end[:, w : w + count, w] = 0
        return None, None, left, right, token  # the token's (zero-size) gradient passed on


class _Combine(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, chart: _Buffers, w: int, count: int, token: torch.Tensor) -> torch.Tensor:
        # ``token`` is not read: taking it makes the writes of the narrower widths wait, in
        # the backward, for this combination's share of their gradient
        ctx.chart, ctx.w, ctx.count = chart, w, count
        g = torch.logsumexp(_pairs(chart, w, count), 2)
        ctx.save_for_backward(g)
        return g

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        w, count = ctx.w, ctx.count
        (g,) = ctx.saved_tensors
        # logsumexp's own derivative, on the sums recomputed: each split's share exp(x - g)
        shares = grad[:, :, None] * (_pairs(ctx.chart, w, count) - g[:, :, None]).exp()
        grad_start, grad_end = ctx.chart.gradients()
        grad_start[:, :count, 1:w] += shares
        grad_end[:, w : w + count, 1:w] += shares.flip(2)
        return None, None, None, grad.new_zeros(0)


def _pairs(chart: _Buffers, w: int, count: int) -> torch.Tensor:
    """``[B, count, w - 1, r]``: ``L(i, i + k) + R(i + k, i + w)``."""
    return chart.start[:, :count, 1:w] + chart.end[:, w : w + count, 1:w].flip(2)
