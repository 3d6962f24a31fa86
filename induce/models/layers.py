"""Layers shared by the masked-LM encoders: pre-LayerNorm Transformer layers whose attention
is either the usual softmax or StructFormer's sigmoid attention gated by a dependency mask.

Shapes: ``B`` batch, ``L`` padded length, ``D`` model width, ``H`` heads.
"""

from __future__ import annotations

import contextlib
import math
from contextlib import AbstractContextManager
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


def full_precision(device: torch.device) -> AbstractContextManager[object]:
    """A region where autocast is off: what numerics need in fp32 (the parsers' scores, from
    which trees and their marginals are computed) when the rest runs in bf16.  Inputs that
    arrive in bf16 must be cast with ``.float()`` inside it.  Without autocast on it is no
    region at all: a compiled fp32 step then holds no autocast call, which AOTAutograd's
    on-disk cache refuses (``train.compile`` compiles again in every process otherwise)."""
    if not autocast_active(device):
        return contextlib.nullcontext()
    return torch.autocast(device.type, enabled=False)


class _DropoutFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, p: float) -> torch.Tensor:
        # 16 random bits per element, four elements per 64-bit draw: the mask costs a quarter
        # of the random numbers torch.rand would (drawing them dominated dropout on CPU).
        n = x.numel()
        bits = (
            torch.randint(-(2**63), 2**63 - 1, ((n + 3) // 4,), dtype=torch.int64, device=x.device)
            .view(torch.int16)[:n]
            .view(x.shape)
        )
        drop = bits < int(round(p * 65536)) - 32768  # probability p (to 1/65536)
        ctx.save_for_backward(drop)  # one byte per element
        ctx.scale = 1.0 / (1.0 - p)
        # scaled in place: one tensor allocated instead of two (the same values)
        return x.masked_fill(drop, 0.0).mul_(ctx.scale)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (drop,) = ctx.saved_tensors
        return grad.masked_fill(drop, 0.0).mul_(ctx.scale), None


class Dropout(nn.Module):
    """Inverted dropout, as ``nn.Dropout``: each element zeroed with probability ``p`` and
    the others scaled by ``1 / (1 - p)``.

    On CPU the mask is drawn in steps of 1/65536 from a quarter of the random draws of
    ``nn.Dropout``'s Bernoulli sampling (which took a fifth of a StructFormer training step)
    and kept as one byte per element.  On CUDA it is ``F.dropout``: one fused kernel, where
    the CPU scheme would launch five (a paper-size step on a GPU is bound by kernel launches,
    not by random numbers)."""

    def __init__(self, p: float) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.is_cuda or torch.compiler.is_compiling():
            return F.dropout(x, self.p, True)
        return _DropoutFunction.apply(x, self.p)


def conv_windows(x: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
    """``conv`` over ``x [N, L, C_in]`` (channels last) as one matrix product over each
    position's window: ``[N, L', C_out]``, the convolution's output transposed (``L'`` as
    its padding gives).  Under ``torch.compile`` the lowering of a convolution's backward
    fixes the length, a recompilation for every padded length; a product's does not.  The
    backward keeps the windows: ``width`` times the input's memory."""
    (width,) = conv.kernel_size
    if (conv.stride, conv.dilation, conv.groups, conv.padding_mode) != ((1,), (1,), 1, "zeros"):
        raise ValueError("conv_windows: stride 1, dilation 1, one group, zero padding only")
    if conv.padding == "same":  # as torch pads: the odd one out on the right
        left, right = (width - 1) // 2, width - 1 - (width - 1) // 2
    elif conv.padding == "valid":
        left = right = 0
    else:
        left = right = int(conv.padding[0])
    windows = F.pad(x, (0, 0, left, right)).unfold(1, width, 1)  # [N, L', C_in, width]
    return F.linear(windows.flatten(2), conv.weight.flatten(1), conv.bias)


def autocast_active(device: torch.device) -> bool:
    """Whether an autocast region is on for ``device``'s type (bf16/fp16 runs)."""
    try:
        return bool(torch.is_autocast_enabled(device.type))  # torch >= 2.4
    except TypeError:  # torch 2.3: no device argument
        if device.type == "cpu":
            return bool(torch.is_autocast_cpu_enabled())
        return bool(torch.is_autocast_enabled())


class Recording(nn.Module):
    """A module that can keep the attention weights of its last call (for analyses such as
    PCC): ``record`` switches it on, ``recorded`` holds ``[B, H, L, L]``."""

    def __init__(self) -> None:
        super().__init__()
        self.record = False
        self.recorded: torch.Tensor | None = None

    def record_weights(self, on: bool) -> None:
        self.record, self.recorded = on, None

    def weights(self) -> torch.Tensor:
        if self.recorded is None:
            raise RuntimeError("no attention recorded: call record_attention() and run a batch")
        return self.recorded


class RelativeBias(nn.Module):
    """A learned scalar per head and clipped distance ``|j - i|``, added to the attention
    logits: the reference code's ``relative_bias`` (one table per layer, zero-initialised),
    without its misalignment of heads and batch items when a batch has several sentences."""

    def __init__(self, n_heads: int, max_distance: int) -> None:
        super().__init__()
        self.max_distance = max_distance
        self.bias = nn.Embedding(max_distance + 1, n_heads)
        nn.init.zeros_(self.bias.weight)

    def forward(self, length: int) -> torch.Tensor:
        """``[H, L, L]`` bias."""
        pos = torch.arange(length, device=self.bias.weight.device)
        offset = (pos[None, :] - pos[:, None]).abs().clamp(max=self.max_distance)
        return self.bias(offset).permute(2, 0, 1)


def _written_out(x: torch.Tensor) -> bool:
    """Whether softmax attention over ``x`` is computed as separate operations rather than
    by ``F.scaled_dot_product_attention``: with gradients on (training; evaluation and
    parsing run without) on a CPU under bf16 autocast, where PyTorch's kernels cost more
    (one layer of the Transformer baseline's, d 512, 8 heads, 128 sentences of up to 32
    tokens, dropout 0.1, forward and backward on one thread of an AMD EPYC Zen 4: 112-116 ms
    against 99-100).  In fp32 both take the same time, and the fused call stays (training
    unchanged to the last bit)."""
    return x.device.type == "cpu" and torch.is_grad_enabled() and autocast_active(x.device)


class SelfAttention(Recording):
    """Multi-head self-attention.

    Softmax mode (the Transformer baseline): ``softmax(QK^T / sqrt(d) + bias)`` over the real
    tokens, computed by ``F.scaled_dot_product_attention`` (written out when training on a
    CPU under bf16 autocast: :func:`_written_out`).  Gated mode (StructFormer,
    Eqs. 15-16): each weight is ``sigmoid(q_i . k_j / sqrt(d)) * gate_ij``, where the gate is
    the head's mixture of parent and dependent probabilities; the weights are not normalised.
    """

    def __init__(
        self, d_model: int, n_heads: int, attn_dropout: float, relative: RelativeBias | None = None
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of n_heads {n_heads}")
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.attn_dropout = attn_dropout
        self.drop_weights = Dropout(attn_dropout)
        self.relative = relative

    def reset_xavier(self) -> None:
        """The reference initialisation: query, key, value and output projections each
        Xavier-uniform as its own ``[D, D]`` matrix (not the fused ``[3D, D]`` one), biases 0."""
        for part in self.qkv.weight.data.chunk(3, dim=0):
            nn.init.xavier_uniform_(part)
        nn.init.xavier_uniform_(self.out.weight)
        nn.init.zeros_(self.qkv.bias)
        nn.init.zeros_(self.out.bias)

    def forward(
        self, x: torch.Tensor, keep: torch.Tensor, gate: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``x [B, L, D]``, ``keep [B, L]`` (True at real tokens), ``gate [B, H, L, L]`` or
        None; returns ``[B, L, D]``."""
        b, n, d = x.shape
        q, k, v = (
            self.qkv(x).view(b, n, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        )  # 3 x [B, H, L, d_head]
        drop = self.attn_dropout if self.training else 0.0
        if gate is None:
            y = self._softmax(q, k, v, keep, drop)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            if self.relative is not None:
                scores = scores + self.relative(n).to(scores.dtype)[None]
            weights = torch.sigmoid(scores) * gate.to(scores.dtype)
            weights = weights.masked_fill(~keep[:, None, None, :], 0.0)
            if self.record:
                self.recorded = weights.detach()
            y = torch.matmul(self.drop_weights(weights), v)
        return self.out(y.transpose(1, 2).reshape(b, n, d))

    def _softmax(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor, drop: float
    ) -> torch.Tensor:
        """Softmax attention: ``q, k, v [B, H, L, d_head]``, ``keep [B, L]`` -> ``[B, H, L,
        d_head]``; through ``F.scaled_dot_product_attention`` unless :func:`_written_out`."""
        b, _, n, _ = q.shape
        bias = torch.zeros(b, 1, 1, n, dtype=q.dtype, device=q.device)
        bias = bias.masked_fill(~keep[:, None, None, :], float("-inf"))
        if self.relative is not None:
            bias = bias + self.relative(n).to(q.dtype)[None]
        written_out = _written_out(q)
        if self.record or written_out:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            weights = torch.softmax(scores + bias, -1)
            if self.record:
                self.recorded = weights.detach()
            if written_out:  # the weights' dropout as the gated mode's: the CPU's own masks
                return torch.matmul(self.drop_weights(weights), v)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=drop)


class EncoderLayer(nn.Module):
    """Pre-LayerNorm layer: ``h = x + drop(attn(LN(x)))``, ``h + drop(FF(LN(h)))``, with a
    ``d -> d_ff -> d`` LeakyReLU feed-forward block; ``affine=False``: LayerNorms without a
    learned scale and shift."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float,
        attn_dropout: float,
        relative_distance: int = 0,
        affine: bool = True,
    ) -> None:
        super().__init__()
        self.norm_attn = nn.LayerNorm(d_model, elementwise_affine=affine)
        relative = RelativeBias(n_heads, relative_distance) if relative_distance else None
        self.attn = SelfAttention(d_model, n_heads, attn_dropout, relative)
        self.norm_ff = nn.LayerNorm(d_model, elementwise_affine=affine)
        self.ff = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.LeakyReLU(), Dropout(dropout), nn.Linear(d_ff, d_model)
        )
        self.drop = Dropout(dropout)

    def forward(
        self, x: torch.Tensor, keep: torch.Tensor, gate: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = x + self.drop(self.attn(self.norm_attn(x), keep, gate))
        return x + self.drop(self.ff(self.norm_ff(x)))
