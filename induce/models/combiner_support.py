"""Block supports for Combiner's ``hierarchy: adjacent`` (this project's choice, not the
paper's: a Tree-Transformer-like constraint on Eq. 5's support).

Every layer's support is a partition of the sentence into contiguous blocks, all pairs inside
a block connected.  Below the first layer every word is its own block.  In layer ``l`` the
gap between adjacent words ``g`` and ``g + 1`` that lie in different blocks of layer ``l - 1``
closes when the gated attention ``M^`` across it is positive (``adjacent_gap``):

- ``pair``: across the two words themselves, ``max(M^[g, g+1], M^[g+1, g]) > 0``;
- ``blocks``: across any pair of the two blocks that meet at the gap (closes a superset of
  ``pair``'s gaps);
- ``peak``: as ``pair``, and that value is a local maximum among the open gaps (at least the
  nearest open gap's before it, above the one after it): a block joins at most one
  neighbour per layer, so the number of blocks can at most halve from layer to layer.

Closed gaps stay closed (monotone): the blocks of a layer are unions of the blocks below, and
the first layer closing a gap is its merge level for the tree read-out.

Soft support (for the straight-through gradient to the gate): a gap's soft closure is the
soft membership ``sigmoid((M - tau) / T)`` of the same pairs (max over them), 1 for a gap
closed below; the soft connection of ``i < j`` is the minimum of the soft closures of the gaps
``i .. j - 1`` (a chain is as strong as its weakest gap), 1 on the diagonal.

Shapes: ``B`` batch, ``L`` length.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from induce.models.layers import full_precision

GapRule = Literal["pair", "blocks", "peak"]


def chain_minimum(gaps: torch.Tensor) -> torch.Tensor:
    """``gaps [B, L - 1]`` (values in [0, 1]) -> ``[B, L, L]``: for ``i != j`` the minimum of
    the gaps between the two words, 1 on the diagonal; differentiable (``cummin``)."""
    b, m = gaps.shape
    n = m + 1
    upper_gaps = torch.ones(m, m, dtype=torch.bool, device=gaps.device).triu()
    rows = torch.where(upper_gaps, gaps[:, None, :], torch.ones_like(gaps[:, None, :]))
    span = rows.cummin(-1).values.triu()  # [B, i, g]: min over gaps i..g for g >= i
    upper = F.pad(span, (1, 0, 0, 1))  # [B, L, L]: (i, j) = min over gaps i..j-1, j > i
    eye = torch.eye(n, dtype=gaps.dtype, device=gaps.device)
    return upper + upper.transpose(-1, -2) + eye


def _across(
    values: torch.Tensor, same: torch.Tensor, pair: torch.Tensor, rule: GapRule
) -> torch.Tensor:
    """``values [B, L, L]`` (non-negative) -> ``[B, L - 1]``: the largest value across each
    gap in either direction, over the two words (``pair``, ``peak``) or the two blocks (``blocks``)
    of ``same [B, L, L]`` (the blocks below) meeting there."""
    sym = torch.maximum(values, values.transpose(-1, -2)) * pair
    if rule != "blocks":
        return sym.diagonal(1, -2, -1)
    # the block right after i's block: rows of a block, columns of the next one
    block = same.long().cumsum(-1).argmax(-1)  # [B, L]: the last index of i's block
    nxt = (block + 1).clamp(max=same.shape[-1] - 1)
    right = same.gather(1, nxt[:, :, None].expand_as(same))  # [B, L, L]: next block's columns
    row = (sym * right).amax(-1)  # [B, L]: the best pair from i into the next block
    gap = (row[:, None, :] * same).amax(-1)  # [B, L]: the best pair from g's block
    return gap[:, :-1]  # an open gap g ends its block: its row is the block's


def _neighbour(score: torch.Tensor, open_: torch.Tensor) -> torch.Tensor:
    """``score [B, G]`` of the nearest open gap before each gap (``-inf`` if none)."""
    index = torch.arange(score.shape[-1], device=score.device).expand_as(score)
    last = torch.where(open_, index, torch.full_like(index, -1)).cummax(-1).values
    before = F.pad(last[:, :-1], (1, 0), value=-1)  # [B, G]: the last open gap before g
    found = score.gather(1, before.clamp_min(0))
    return torch.where(before >= 0, found, torch.full_like(found, float("-inf")))


def _peaks(score: torch.Tensor, open_: torch.Tensor) -> torch.Tensor:
    """``[B, G]``: open gaps whose score is at least the nearest open gap's before them and
    above the one after them (at most one of two neighbouring open gaps)."""
    after = _neighbour(score.flip(-1), open_.flip(-1)).flip(-1)
    return open_ & (score >= _neighbour(score, open_)) & (score > after)


def adjacent_support(
    gated: torch.Tensor,
    soft: torch.Tensor | None,
    closed_below: torch.Tensor | None,
    keep: torch.Tensor,
    rule: GapRule = "pair",
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``M^ [B, L, L]``, its soft membership ``[B, L, L]`` or ``None``, the gaps closed
    below ``[B, L - 1]`` (bool; ``None`` in the first layer), ``keep [B, L]`` -> the block
    support ``[B, L, L]`` (bool; padded positions only on the diagonal) and its soft version
    ``[B, L, L]`` (1 on the diagonal and inside the blocks below, the chain minimum of the
    gaps' soft closures elsewhere, 0 off the sentence; ``None`` without ``soft``)."""
    b, n = keep.shape
    pair = keep[:, :, None] & keep[:, None, :]
    eye = torch.eye(n, dtype=torch.bool, device=keep.device)[None]
    if n < 2:
        return eye.expand(b, n, n), None if soft is None else eye.to(soft.dtype).expand(b, n, n)
    valid = keep[:, :-1] & keep[:, 1:]  # [B, L - 1]: gaps inside the sentence
    below = torch.zeros_like(valid) if closed_below is None else closed_below & valid
    same = chain_minimum(below.to(gated.dtype)) > 0  # blocks below
    score = _across(gated, same, pair, rule)
    fires = (score > 0) & valid
    if rule == "peak":
        fires = fires & _peaks(score.float(), valid & ~below)
    closed = below | fires
    support = ((chain_minimum(closed.to(gated.dtype)) > 0) & pair) | eye
    if soft is None:
        return support, None
    gaps = torch.where(below, torch.ones_like(soft[:, 0, 1:]), _across(soft, same, pair, rule))
    soft_support = torch.maximum(chain_minimum(gaps * valid) * pair, eye.to(gaps.dtype))
    return support, soft_support


class NeighbourLinks(nn.Module):
    """``hierarchy: constituent`` (ours, after Tree Transformer's constituent attention,
    Wang et al. 2019, Eqs. 1-3 of its Sec. 3): each word splits a unit of preference between
    its left and right neighbour (a softmax over the two scores ``q_i . k_{i+-1} / sqrt(D)``),
    the link of gap ``g`` is ``a_g = sqrt(p_{g -> g+1} p_{g+1 -> g})``, and links only grow
    upward: ``a^_g^l = a^_g^{l-1} + (1 - a^_g^{l-1}) a_g^l``.  The competition keeps a word
    from binding to both sides at once, so a gap stays open where its words look away from
    each other.  ``x [B, L, D]``, ``keep [B, L]``, the links below ``[B, L - 1]`` or ``None``
    -> ``a^ [B, L - 1]`` (fp32; 0 on gaps that touch padding)."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.qk = nn.Linear(d_model, 2 * d_model)

    def forward(
        self, x: torch.Tensor, keep: torch.Tensor, below: torch.Tensor | None
    ) -> torch.Tensor:
        with full_precision(x.device):
            q, k = self.qk(x.float()).chunk(2, -1)
            scale = 1.0 / math.sqrt(q.shape[-1])
            valid = keep[:, :-1] & keep[:, 1:]  # [B, L - 1]
            right = ((q[:, :-1] * k[:, 1:]).sum(-1) * scale).masked_fill(~valid, -1e4)
            left = ((q[:, 1:] * k[:, :-1]).sum(-1) * scale).masked_fill(~valid, -1e4)
            # word i chooses between gap i - 1 (left) and gap i (right); -1e4: no neighbour
            choice = torch.stack(
                [F.pad(left, (1, 0), value=-1e4), F.pad(right, (0, 1), value=-1e4)], -1
            )
            p = torch.softmax(choice, -1)  # [B, L, 2]
            link = (p[:, :-1, 1] * p[:, 1:, 0]).clamp_min(1e-12).sqrt() * valid
            return link if below is None else below + (1.0 - below) * link


def constituent_prior(links: torch.Tensor, pair: torch.Tensor) -> torch.Tensor:
    """``links [B, L - 1]`` in [0, 1], ``pair [B, L, L]`` -> ``C [B, L, L]``: the product of
    the links between ``i`` and ``j`` (1 on the diagonal, 0 off the sentence), in log space."""
    b, m = links.shape
    n = m + 1
    total = F.pad(links.float().clamp_min(1e-9).log().cumsum(-1), (1, 0))  # [B, L]
    upper = torch.ones(n, n, dtype=torch.bool, device=links.device).triu(1)
    diff = (total[:, None, :] - total[:, :, None]).masked_fill(~upper, float("-inf"))
    prior = diff.exp()
    eye = torch.eye(n, dtype=prior.dtype, device=links.device)
    return (prior + prior.transpose(-1, -2) + eye) * pair
