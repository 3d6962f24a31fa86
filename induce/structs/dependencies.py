"""Dependency trees scored by their arcs: projective trees by Eisner's algorithm, any trees by
the matrix-tree theorem, over a padded batch.

``scores [B, n + 1, n + 1]``: ``scores[b, d, h]`` scores word ``d``'s arc from head ``h``
(``h = 0``: the root; row 0 and the diagonal are never read), SuPar's convention;
``lengths [B]`` words, each at least 1.  A tree scores the sum of its ``n`` arcs.
``single_root``: the root has exactly one dependent (UD, Penn2Malt conversions, UDGN);
otherwise any number.

:func:`eisner` gives the log-partition (:data:`~induce.structs.LOG`) or the best score
(:data:`~induce.structs.MAX`) over projective trees; its derivatives by the scores are the arc
marginals and the best tree's arcs (:func:`marginals`, :func:`argmax`).  :func:`matrix_tree`
gives the log-partition over all trees (Koo et al. 2007; under the max semiring the best
non-projective tree is Chu-Liu/Edmonds, :func:`induce.decode.dependencies.mst`).
"""

from __future__ import annotations

import torch

from induce.structs.semiring import LOG, MAX, Semiring, derivative


def eisner(
    scores: torch.Tensor, lengths: torch.Tensor, semiring: Semiring = LOG, single_root: bool = True
) -> torch.Tensor:
    """``[B]``: ``⊕`` over the projective trees of each sentence of the sum of their arcs.

    Eisner's first-order chart, one vectorised step per width for the whole batch; for
    ``single_root`` the chart runs over the words only and the root's one arc is chosen last
    (``⊕_k root(k) ⊗ left(1, k) ⊗ right(k, n)``), so no entry is ever ``-inf``."""
    lengths = lengths.to(scores.device)
    if single_root:
        charts = _charts(scores[:, 1:, 1:], semiring)
        right, left = charts["right_end"], charts["left_start"]  # complete spans
        batch, m = right.shape[:2]
        rows = torch.arange(batch, device=scores.device)
        k = torch.arange(m, device=scores.device)
        width = (lengths[:, None] - 1 - k).clamp_min(0)  # right(k, n - 1) has width n - 1 - k
        to_end = right[rows, lengths - 1].gather(1, width)  # [B, m]
        every = scores[:, 1:, 0] + left[:, 0, :] + to_end
        every = every.masked_fill(k >= lengths[:, None], float("-inf"))
        return semiring.sum(every, -1)
    charts = _charts(scores, semiring)
    rows = torch.arange(scores.shape[0], device=scores.device)
    return charts["right_start"][rows, 0, lengths]


def _charts(scores: torch.Tensor, semiring: Semiring) -> dict[str, torch.Tensor]:
    """Eisner's four charts over positions ``0 .. m - 1`` of ``scores [B, m, m]`` (``[b, d,
    h]``), each stored twice: ``X_start[b, i, w]`` is span ``(i, i + w)`` and ``X_end[b, j,
    w]`` span ``(j - w, j)``, so that each width reads its parts as slices.  ``right``: the
    head at the left end, complete (its dependents' subtrees done); ``left``: the head at the
    right end; ``arc_right``/``arc_left``: incomplete spans (the arc between the two ends,
    the inside not yet complete).  Complete spans of width 0 are 0."""
    batch, m, _ = scores.shape
    charts = {
        f"{name}_{side}": scores.new_zeros(batch, m, m)
        for name in ("right", "left", "arc_right", "arc_left")
        for side in ("start", "end")
    }
    heads_left = scores.transpose(1, 2)  # [b, h, d]: arc from h to a word to its right
    for w in range(1, m):
        count = m - w
        # incomplete: right(i, i + a) ⊗ left(i + a + 1, i + w), a = 0 .. w - 1
        inner = charts["right_start"][:, :count, :w] + charts["left_end"][:, w:, :w].flip(-1)
        inner = semiring.sum(inner, -1)
        _put(charts, "arc_right", inner + heads_left.diagonal(w, 1, 2), w)  # i -> i + w
        _put(charts, "arc_left", inner + scores.diagonal(w, 1, 2), w)  # i + w -> i
        # complete, head i: arc_right(i, i + a) ⊗ right(i + a, i + w), a = 1 .. w
        right = charts["arc_right_start"][:, :count, 1 : w + 1]
        right = right + charts["right_end"][:, w:, :w].flip(-1)
        _put(charts, "right", semiring.sum(right, -1), w)
        # complete, head i + w: left(i, i + a) ⊗ arc_left(i + a, i + w), a = 0 .. w - 1
        left = charts["left_start"][:, :count, :w]
        left = left + charts["arc_left_end"][:, w:, 1 : w + 1].flip(-1)
        _put(charts, "left", semiring.sum(left, -1), w)
    return charts


def _put(charts: dict[str, torch.Tensor], name: str, values: torch.Tensor, w: int) -> None:
    """Store width ``w``'s spans ``values [B, m - w]`` in both of ``name``'s tables."""
    count = values.shape[1]
    charts[f"{name}_start"][:, :count, w] = values
    charts[f"{name}_end"][:, w:, w] = values


def matrix_tree(
    scores: torch.Tensor, lengths: torch.Tensor, single_root: bool = True
) -> torch.Tensor:
    """``[B]``: the log-partition over all dependency trees (projective or not) by the
    matrix-tree theorem: ``log det`` of the Laplacian of ``exp(scores)`` with the root row
    replaced (single root: the root-replaced Laplacian of Koo et al. 2007) or the root as a node
    (any number of roots).  Float64 inside; padding rows are the identity."""
    x = scores.double()
    batch, fence, _ = x.shape
    lengths = lengths.to(x.device)
    position = torch.arange(fence, device=x.device)
    inside = position[None, :] <= lengths[:, None]  # [B, n + 1]: the root and the words
    valid = inside[:, :, None] & inside[:, None, :] & (position[:, None] != position[None, :])
    valid[:, 0, :] = False  # the root takes no head
    # padding and the diagonal at -inf before exp: their weights and gradients are 0
    x = x.masked_fill(~valid, float("-inf"))
    top = x.detach().amax((1, 2), keepdim=True)  # det scales by e^(length * top)
    w = torch.exp(x - top)
    arcs = w[:, 1:, 1:].transpose(1, 2)  # [b, h, d]
    root = w[:, 1:, 0]  # [B, n]
    padding = (~inside[:, 1:]).double()
    lap = torch.diag_embed(arcs.sum(1)) - arcs + torch.diag_embed(padding)
    if single_root:
        lap = torch.cat([root[:, None, :], lap[:, 1:, :]], 1)
    else:
        lap = lap + torch.diag_embed(root)
    return torch.linalg.slogdet(lap).logabsdet + lengths * top.view(batch)


def marginals(
    scores: torch.Tensor, lengths: torch.Tensor, single_root: bool = True, projective: bool = True
) -> torch.Tensor:
    """The probability of each arc ``[B, n + 1, n + 1]`` (``[b, d, h]``) under ``p(T) ∝
    exp(s(T))`` over projective trees (Eisner) or all trees (matrix-tree); 0 outside each
    sentence."""
    if projective:
        return derivative(lambda s: eisner(s, lengths, LOG, single_root), scores)[0]
    grad = derivative(lambda s: matrix_tree(s, lengths, single_root), scores)[0]
    return grad.to(scores.dtype)


def argmax(scores: torch.Tensor, lengths: torch.Tensor, single_root: bool = True) -> torch.Tensor:
    """The best projective tree as 0/1 arc indicators ``[B, n + 1, n + 1]`` (``[b, d, h]``)."""
    return derivative(lambda s: eisner(s, lengths, MAX, single_root), scores)[0]
