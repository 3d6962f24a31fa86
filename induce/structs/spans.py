"""Binary bracketings scored by their spans: span CKY over a padded batch, vectorised in torch.

A binary tree over ``n`` words has ``2n - 1`` spans (the words, the whole sentence and one per
inner node) and scores the sum of its spans' scores.  :func:`inside` gives the log-partition
of these trees (:data:`~induce.structs.LOG`) or the best tree's score
(:data:`~induce.structs.MAX`); :func:`marginals` and :func:`argmax` are its derivatives.
Labelled scores ``[..., C]`` score a span with its label's score, the label summed out (or
maximised) span by span, so that the derivative also says which label.

The chart parser (Kitaev and Klein 2018, Section 2.2) is the labelled case with label 0 the
empty label ``∅`` (a chart parser gives it a constant 0; Hamming-augmented scores add 1 to it
where the gold span has a real label) and the whole-sentence span bound to a real label
(``empty_root=False``).  :func:`cky` is its Viterbi with back-pointers (the trees as span
lists, faster than a derivative when only the trees are wanted) and :func:`hinge_loss` its
structured hinge loss with Hamming-augmented decoding.

Every chart is filled width by width: for each width one batched step scores every span of
that width over every split point of every sentence, so a batch costs ``O(n)`` torch
operations for ``O(B n^3)`` work.  A padded sentence's chart entries depend only on the spans
inside it, so the longest sentence's pass serves the whole batch.

Shapes: ``B`` batch, ``n`` the longest sentence, ``C`` labels (``∅`` at index 0 for the chart
parser); span ``(i, j)`` covers fenceposts ``i < j`` (words ``i .. j - 1``), and
``scores[b, i, j]`` scores it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from induce.structs.semiring import LOG, MAX, Semiring, derivative

Span = tuple[int, int, int]  # (start, end, label): label 0 is the empty label


def inside(
    scores: torch.Tensor,
    lengths: torch.Tensor,
    semiring: Semiring = LOG,
    empty_root: bool = True,
) -> torch.Tensor:
    """``[B]``: ``⊕`` over the binary trees of each sentence of the sum of their span scores.

    ``scores [B, n + 1, n + 1]`` (unlabelled) or ``[B, n + 1, n + 1, C]`` (labelled: a span
    scores ``⊕`` over its labels; ``empty_root=False`` leaves label 0 out at the whole
    sentence); ``lengths [B]`` words, each at least 1."""
    if scores.dim() == 4:
        root = scores if empty_root else scores[..., 1:]
        span, top = semiring.sum(scores, -1), semiring.sum(root, -1)
    else:
        span = top = scores
    batch, fence = span.shape[:2]
    n = fence - 1
    # start[b, i, w] = chart(i, i + w) and end[b, j, w] = chart(j - w, j): for width w the
    # left parts of every span and split are one slice of `start`, the right parts a slice
    # of `end`, so no gather is needed
    start = span.new_zeros(batch, fence, fence)
    end = span.new_zeros(batch, fence, fence)
    words = span.diagonal(1, 1, 2)  # [B, n]: spans (i, i + 1)
    start[:, :n, 1] = words
    end[:, 1:, 1] = words
    for width in range(2, n + 1):
        left = start[:, : n - width + 1, 1:width]  # (i, i + k), k = 1 .. width - 1
        right = end[:, width:, 1:width].flip(-1)  # (i + k, i + width)
        chart = semiring.sum(left + right, -1) + span.diagonal(width, 1, 2)
        start[:, : n - width + 1, width] = chart
        end[:, width:, width] = chart
    rows = torch.arange(batch, device=span.device)
    lengths = lengths.to(span.device)
    # the whole sentence: its own score swapped for the root's (without the empty label)
    return start[rows, 0, lengths] - span[rows, 0, lengths] + top[rows, 0, lengths]


def marginals(scores: torch.Tensor, lengths: torch.Tensor, empty_root: bool = True) -> torch.Tensor:
    """The probability of each span (and label) under ``p(T) ∝ exp(s(T))``, shaped as
    ``scores``; 0 outside each sentence."""
    return derivative(lambda s: inside(s, lengths, LOG, empty_root), scores)[0]


def argmax(scores: torch.Tensor, lengths: torch.Tensor, empty_root: bool = True) -> torch.Tensor:
    """The best tree of each sentence as 0/1 indicators shaped as ``scores`` (for labelled
    scores, 1 at each span's label)."""
    return derivative(lambda s: inside(s, lengths, MAX, empty_root), scores)[0]


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


def _columns(trees: Sequence[Sequence[Span]], device: torch.device) -> torch.Tensor:
    """``[4, S]``: sentence, start, end and label of every span of ``trees``, built on the
    host and moved in one copy (an indexed write per span would be thousands of kernel
    launches a batch on a GPU)."""
    rows = [(b, i, j, label) for b, spans in enumerate(trees) for i, j, label in spans]
    table = torch.tensor(rows, dtype=torch.long).reshape(-1, 4).T
    return table.to(device)


def tree_scores(scores: torch.Tensor, trees: Sequence[Sequence[Span]]) -> torch.Tensor:
    """``[B]``: the sum of ``scores[b, i, j, l]`` over each tree's labelled spans
    (differentiable), in at least float32.  One gather for the batch into a ``[B, S]``
    table (``S``: the most spans of a tree; the rest masked), summed row by row: the same
    sums on every run, where adding into ``[B]`` by index would race on a GPU."""
    _, fence, _, labels = scores.shape
    width = max((len(spans) for spans in trees), default=0)
    flat, real = [], []
    for b, spans in enumerate(trees):
        row = [((b * fence + i) * fence + j) * labels + label for i, j, label in spans]
        flat.append(row + [0] * (width - len(row)))
        real.append([True] * len(row) + [False] * (width - len(row)))
    index = torch.tensor(flat, dtype=torch.long).reshape(len(trees), width)
    mask = torch.tensor(real, dtype=torch.bool).reshape(len(trees), width)
    values = scores.reshape(-1)[index.to(scores.device)]
    total = torch.promote_types(scores.dtype, torch.float32)
    return values.masked_fill(~mask.to(scores.device), 0.0).sum(-1, dtype=total)


def hinge_loss(
    scores: torch.Tensor, gold: Sequence[Sequence[Span]], lengths: Sequence[int]
) -> torch.Tensor:
    """Section 2.2: ``max(0, max_T [s(T) + Hamming(T, T*)] - s(T*))`` summed over the batch.

    ``gold``: each sentence's labelled spans (real labels; spans a binarisation adds carry
    ``∅`` and score its 0).  The Hamming cost counts the spans of ``T`` whose label differs from
    the gold one (``∅`` for spans not in the gold tree); it is added to every label but the
    gold one before decoding.  Computed in at least float32 (under bf16 autocast a cost of 1
    next to scores of tens would round away)."""
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))
    cost = torch.ones_like(scores)
    cost[..., 0] = 0.0  # a span outside the gold tree costs nothing when labelled ∅
    b, i, j, label = _columns(gold, scores.device)
    cost[b, i, j, 0] = 1.0  # a gold span labelled ∅ costs 1 (unless gold is ∅: next line)
    cost[b, i, j, label] = 0.0
    augmented = scores + cost
    predicted, _ = cky(augmented, lengths)
    margin = tree_scores(augmented, predicted) - tree_scores(scores, gold)
    return margin.clamp_min(0.0).sum()
