"""CKY for span-based chart parsers (Kitaev and Klein 2018, Section 2.2), vectorised in torch.

A tree's score is the sum over its spans of the span's best label score; label 0 is the
empty label ``∅`` (a chart parser gives it a constant 0; Hamming-augmented scores add 1 to it
where the gold span has a real label), and the whole-sentence span must carry a real label
(``∅`` is not allowed at the root).  :func:`hinge_loss` is the structured hinge loss of
Section 2.2 with Hamming-augmented decoding.  The chart is filled width by width: for each width one
batched step scores every span of that width over every split point of every sentence, so a
batch costs ``O(n)`` torch operations for ``O(B n^3)`` work.  The back-pointers are read in
Python, one short walk per sentence.

Shapes: ``B`` batch, ``n`` the longest sentence, ``C`` labels including ``∅`` at index 0;
span ``(i, j)`` covers fenceposts ``i < j`` (words ``i .. j - 1``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

Span = tuple[int, int, int]  # (start, end, label): label 0 is the empty label


def cky(scores: torch.Tensor, lengths: Sequence[int]) -> tuple[list[list[Span]], torch.Tensor]:
    """The best binary tree of each sentence.

    ``scores [B, n + 1, n + 1, C]``: ``scores[b, i, j, l]`` for span ``(i, j)`` and label
    ``l`` (``l = 0``: the empty label).  Returns, per
    sentence, the tree's spans with their labels (every span of the binary tree, ``∅``
    included, whole sentence first) and the tree scores ``[B]``."""
    batch, fence, _, labels = scores.shape
    n = fence - 1
    values = scores.detach().float().cpu()
    real = values[..., 1:].max(-1)  # the best real label of every span (for the root)
    inner = values.max(-1)  # the best label, the empty one included (inside the tree)
    inner_score, inner_label = inner.values, inner.indices
    chart = torch.zeros(batch, fence, fence)
    split = torch.zeros(batch, fence, fence, dtype=torch.long)
    idx = torch.arange(fence)
    if n >= 1:
        chart[:, idx[:-1], idx[:-1] + 1] = inner_score[:, idx[:-1], idx[:-1] + 1]
    for width in range(2, n + 1):
        starts = torch.arange(n - width + 1)
        # left part (i, i + s) and right part (i + s, i + width) for every split s
        offsets = torch.arange(1, width)
        left = chart[:, starts[:, None], starts[:, None] + offsets[None, :]]
        right = chart[:, starts[:, None] + offsets[None, :], starts[:, None] + width]
        best, where = (left + right).max(-1)  # [B, n - width + 1]
        ends = starts + width
        chart[:, starts, ends] = best + inner_score[:, starts, ends]
        split[:, starts, ends] = starts + 1 + where
    trees: list[list[Span]] = []
    totals = torch.zeros(batch)
    for b, length in enumerate(lengths):
        if length < 1:
            trees.append([])
            continue
        root_label = int(real.indices[b, 0, length]) + 1
        root_score = float(real.values[b, 0, length])
        totals[b] = chart[b, 0, length] - inner_score[b, 0, length] + root_score
        spans = [(0, length, root_label)]
        # Python lists, not tensors: indexing a tensor element costs microseconds, and a
        # walk reads two per span (a tenth of parsing section 22 went there)
        cut = slice(0, length + 1)
        _walk(spans, split[b, cut, cut].tolist(), inner_label[b, cut, cut].tolist(), 0, length)
        trees.append(spans)
    return trees, totals


def _walk(out: list[Span], split: list[list[int]], label: list[list[int]], i: int, j: int) -> None:
    """Append the spans under ``(i, j)`` (its own span is already in ``out``)."""
    stack = [(i, j)]
    while stack:
        i, j = stack.pop()
        if j - i < 2:
            continue
        k = split[i][j]
        for a, b in ((i, k), (k, j)):
            out.append((a, b, label[a][b]))
            stack.append((a, b))


def tree_scores(scores: torch.Tensor, trees: Sequence[Sequence[Span]]) -> torch.Tensor:
    """``[B]``: the sum of ``scores[b, i, j, l]`` over each tree's labelled spans
    (differentiable)."""
    out = []
    for b, spans in enumerate(trees):
        if not spans:
            out.append(scores.new_zeros(()))
            continue
        i, j, label = (torch.tensor(column, device=scores.device) for column in zip(*spans))
        out.append(scores[b, i, j, label].sum())
    return torch.stack(out)


def hinge_loss(
    scores: torch.Tensor, gold: Sequence[Sequence[Span]], lengths: Sequence[int]
) -> torch.Tensor:
    """Section 2.2: ``max(0, max_T [s(T) + Hamming(T, T*)] - s(T*))`` summed over the batch.

    ``gold``: each sentence's labelled spans (real labels; spans a binarisation adds carry
    ``∅`` and score its 0).  The Hamming cost counts the spans of ``T`` whose label differs from
    the gold one (``∅`` for spans not in the gold tree); it is added to every label but the
    gold one before decoding."""
    cost = torch.ones_like(scores)
    cost[..., 0] = 0.0  # a span outside the gold tree costs nothing when labelled ∅
    for b, spans in enumerate(gold):
        for i, j, label in spans:
            cost[b, i, j, :] = 1.0
            cost[b, i, j, label] = 0.0
    augmented = scores + cost
    predicted, _ = cky(augmented, lengths)
    margin = tree_scores(augmented, predicted) - tree_scores(scores, gold)
    return margin.clamp_min(0.0).sum()
