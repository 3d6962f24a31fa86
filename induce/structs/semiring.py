"""The two semirings of the structures and the derivative that turns a partition into
marginals or a best structure.

A semiring here is its sum (``⊕``, a reduction over one dimension); its product is always
``+`` on log-scores.  Under :data:`LOG` (``⊕`` = logsumexp) a structure's partition is the
log of the sum of ``exp(score)`` over structures and its derivative by the scores is the
marginals; under :data:`MAX` (``⊕`` = max) the partition is the best score and its derivative
is the indicator of one best structure (``Tensor.max`` sends the gradient to one element:
ties go to the first).  Scores must be finite where a structure can use them; padding may
hold anything finite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Semiring:
    name: str

    def sum(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        """``⊕`` over ``dim`` (removed)."""
        if self.name == "max":
            # amax is faster, but its gradient splits among ties; max's goes to the first
            return x.max(dim).values if _tracked(x) else x.amax(dim)
        return torch.logsumexp(x, dim)

    def operand(self, y: torch.Tensor) -> torch.Tensor | Exponentiated:
        """``y [B, k, p]`` made ready to be the right side of many :meth:`matmul` calls:
        under :data:`LOG` exponentiated once (:class:`Exponentiated`), under :data:`MAX`
        itself.  A chart that multiplies by one matrix at every width (the rules, the rank
        folds) then keeps one exponential of it for the backward, not one per width: at the
        SN-PCFG's 4,096 ranks each ``[r, r]`` fold is 64 MiB."""
        return y if self.name == "max" else Exponentiated.of(y)

    def matmul(self, x: torch.Tensor, y: torch.Tensor | Exponentiated) -> torch.Tensor:
        """``[B, m, k] ⊗ [B, k, p] -> [B, m, p]``: ``⊕_k x[b, i, k] + y[b, k, j]``.  Under
        :data:`LOG` by a matrix product of exponentials shifted by their maxima (``-inf``
        entries count as zero); under :data:`MAX` by a broadcast over ``[B, m, k, p]`` where
        a gradient is needed, else column by column (``[B, m, k]`` at a time, the reduction
        over contiguous memory: 7x faster at the C-PCFG's k = 8,100, p = 30, and p times
        less memory); the same maxima either way.  ``y`` may come from :meth:`operand`."""
        if isinstance(y, Exponentiated):
            if self.name == "max":
                raise TypeError("an exponentiated operand is for the log semiring")
            sx = _finite_max(x, -1)  # [B, m, 1]
            return torch.log(torch.exp(x - sx) @ y.values) + sx + y.shift
        if self.name == "max":
            if _tracked(x, y):
                return (x[..., :, :, None] + y[..., None, :, :]).max(-2).values
            columns = y.transpose(-1, -2).contiguous()  # [B, p, k]
            return torch.stack(
                [(x + columns[..., j, None, :]).amax(-1) for j in range(columns.shape[-2])], -1
            )
        return self.matmul(x, Exponentiated.of(y))


@dataclass(frozen=True)
class Exponentiated:
    """A log-space matrix ``y [B, k, p]`` as :data:`LOG` products use it: ``values = exp(y -
    shift)`` with ``shift [B, 1, p]`` its column maxima (0 where a column is all ``-inf``)."""

    values: torch.Tensor
    shift: torch.Tensor

    @classmethod
    def of(cls, y: torch.Tensor) -> Exponentiated:
        shift = _finite_max(y, -2)
        return cls(torch.exp(y - shift), shift)


def _tracked(*xs: torch.Tensor) -> bool:
    """Whether autograd will differentiate through these tensors."""
    return torch.is_grad_enabled() and any(x.requires_grad for x in xs)


def _finite_max(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The maximum along ``dim`` (kept), 0 where every entry is ``-inf``; no gradient."""
    top = x.detach().amax(dim, keepdim=True)
    return top.masked_fill(~torch.isfinite(top), 0.0)


LOG = Semiring("log")
MAX = Semiring("max")


def derivative(
    partition: Callable[..., torch.Tensor], *scores: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """``d sum(partition(*scores)) / d scores``: marginals under :data:`LOG`, the indicator
    of the best structure under :data:`MAX`, one tensor per score tensor.  Works under
    ``torch.no_grad`` and ``torch.inference_mode`` (the derivative is taken on detached
    copies); the result carries no graph."""
    with torch.inference_mode(False), torch.enable_grad():
        leaves = [s.detach().clone().requires_grad_(True) for s in scores]
        total = partition(*leaves).sum()
        grads = torch.autograd.grad(total, leaves, allow_unused=True)
    return tuple(
        torch.zeros_like(leaf) if g is None else g.detach()
        for leaf, g in zip(leaves, grads, strict=True)
    )
