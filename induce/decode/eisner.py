"""Eisner's algorithm over a batch of sentences at once: the best projective tree whose root
has exactly one dependent, for every sentence of a padded batch.

The chart of a padded sentence holds, for every span inside the sentence, exactly the values
(and back pointers) that the sentence alone would give: a span's entries depend only on the
arcs inside it.  So one pass over the widths of the longest sentence fills the charts of the
whole batch, each width one vectorised step over ``[B, spans, split points]`` read through
strided views (no gathers); only the root choice and the back-tracking are per sentence.
Ties go to the first split point and the first root word, as ``numpy.argmax`` gives them.

Shapes: ``B`` sentences, ``n`` words in the longest; ``scores [B, n, n + 1]`` as in
:mod:`induce.decode.dependencies` (row ``i``: word ``i + 1`` taking head ``0`` .. ``n``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _band(
    a: np.ndarray, start: tuple[int, int], count: int, width: int, along_row: bool
) -> np.ndarray:
    """A view ``[B, count, width]`` of the C-contiguous ``a [B, n, n]``: element ``(b, i, k)``
    is ``a[b, r0 + i + k, c0 + i]`` when ``along_row`` (k moves down a column) and
    ``a[b, r0 + i, c0 + i + k]`` otherwise (k moves along a row)."""
    sb, sr, sc = a.strides
    r0, c0 = start
    return np.ndarray(
        (a.shape[0], count, width),
        a.dtype,
        a,
        r0 * sr + c0 * sc,
        (sb, sr + sc, sr if along_row else sc),
    )


def _diagonal(a: np.ndarray, width: int) -> np.ndarray:
    """A writable view ``[B, n - width]`` of ``a[b, i, i + width]`` (``a`` C-contiguous)."""
    sb, sr, sc = a.strides
    return np.ndarray((a.shape[0], a.shape[1] - width), a.dtype, a, width * sc, (sb, sr + sc))


def eisner_batch(scores: np.ndarray, lengths: Sequence[int]) -> list[list[int]]:
    """Heads ``[n_b]`` (0 = root, 1-based) of the best projective single-root tree of each
    sentence ``b`` of ``scores [B, n, n + 1]`` (float64), sentence ``b`` being its first
    ``lengths[b]`` words; what lies beyond a sentence's length is never read into its
    tree."""
    s = np.asarray(scores, dtype=np.float64)
    batch, n = s.shape[0], s.shape[1]
    if s.ndim != 3 or s.shape[2] != n + 1 or len(lengths) != batch:
        raise ValueError(f"scores must be [B, n, n + 1] with B lengths, got {list(s.shape)}")
    if n == 0:
        return [[] for _ in lengths]
    arc = np.ascontiguousarray(s[:, :, 1:].transpose(0, 2, 1))  # arc[b, h, d]
    arc_t = np.ascontiguousarray(s[:, :, 1:])  # arc_t[b, d, h] = arc[b, h, d]
    # complete / incomplete spans i..j, head at j (left, 0) or at i (right, 1)
    comp_l, comp_r = np.full((2, batch, n, n), -np.inf)
    inc_l, inc_r = np.full((2, batch, n, n), -np.inf)
    bp = np.zeros((3, batch, n, n), dtype=np.int64)  # split points: inc, comp_l, comp_r
    idx = np.arange(n)
    comp_l[:, idx, idx] = comp_r[:, idx, idx] = 0.0
    with np.errstate(invalid="ignore"):
        for width in range(1, n):
            count = n - width
            start = np.arange(count)
            # I(i, j) = max_k C_r(i, k) + C_l(k + 1, j) (+ the arc)
            both = _band(comp_r, (0, 0), count, width, False) + _band(
                comp_l, (1, width), count, width, True
            )
            k = both.argmax(2)
            best = np.take_along_axis(both, k[..., None], 2)[..., 0]
            _diagonal(inc_l, width)[...] = best + _diagonal(arc_t, width)  # j heads i
            _diagonal(inc_r, width)[...] = best + _diagonal(arc, width)  # i heads j
            _diagonal(bp[0], width)[...] = start + k
            # C_l(i, j) = max_k C_l(i, k) + I_l(k, j)
            left = _band(comp_l, (0, 0), count, width, False) + _band(
                inc_l, (0, width), count, width, True
            )
            k = left.argmax(2)
            _diagonal(comp_l, width)[...] = np.take_along_axis(left, k[..., None], 2)[..., 0]
            _diagonal(bp[1], width)[...] = start + k
            # C_r(i, j) = max_k I_r(i, k + 1) + C_r(k + 1, j)
            right = _band(inc_r, (0, 1), count, width, False) + _band(
                comp_r, (1, width), count, width, True
            )
            k = right.argmax(2)
            _diagonal(comp_r, width)[...] = np.take_along_axis(right, k[..., None], 2)[..., 0]
            _diagonal(bp[2], width)[...] = start + 1 + k
    return [
        _backtrack(comp_l[b], comp_r[b], bp[:, b], s[b, :m, 0], m) if m else []
        for b, m in enumerate(lengths)
    ]


def _backtrack(
    comp_l: np.ndarray, comp_r: np.ndarray, bp: np.ndarray, roots: np.ndarray, n: int
) -> list[int]:
    """The heads of one sentence of ``n`` words from its chart (``[n_max, n_max]`` arrays,
    ``bp [3, n_max, n_max]``) and its root scores ``[n]``."""
    root_scores = comp_l[0, :n] + comp_r[:n, n - 1] + roots
    root = int(root_scores.argmax())
    inc_bp, comp_bp = bp[0].tolist(), (bp[1].tolist(), bp[2].tolist())
    heads = [0] * n
    # (start, end, direction, complete?) of the spans still to read
    stack: list[tuple[int, int, int, bool]] = [(0, root, 0, True), (root, n - 1, 1, True)]
    while stack:
        lo, hi, d, complete = stack.pop()
        if lo == hi:
            continue
        if complete:
            split = comp_bp[d][lo][hi]
            if d == 0:
                stack += [(lo, split, 0, True), (split, hi, 0, False)]
            else:
                stack += [(lo, split, 1, False), (split, hi, 1, True)]
        else:
            split = inc_bp[lo][hi]
            if d == 0:
                heads[lo] = hi + 1
            else:
                heads[hi] = lo + 1
            stack += [(lo, split, 1, True), (split + 1, hi, 0, True)]
    heads[root] = 0
    return heads
