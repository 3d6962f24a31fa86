"""The inside algorithm of a binary PCFG over a padded batch: dense rules, or low-rank rules
inside the rank space.

A grammar in Chomsky normal form with ``N`` nonterminals and ``T`` preterminals (the symbols
``S = N + T`` ordered nonterminals first, as Kim et al. 2019 order them): a root rule
``S -> A`` (``roots [B, N]``, log-probabilities), binary rules ``A -> B C`` whose children
are preterminals at width 1 and nonterminals above, and preterminals emitting the words
(``terms [B, n, T]``: ``log p(word_i | T)``).  Each batch row may have its own grammar (the
compound PCFG's per-sentence rules); ``lengths [B]`` words, each at least 2.

- :func:`inside`: dense rules ``rules [B, N, S, S]`` (``log p(A -> B C)``); memory
  ``O(B n^2 N)`` for the chart and ``O(B n S^2)`` per width; any semiring.
- :func:`inside_low_rank`: ``p(A -> B C) = sum_r p(r | A) p(B | r) p(C | r)`` (the
  tensor-decomposed PCFG of Yang, Zhao and Tu 2021, their Eq. 4 with normalised factors),
  computed in the rank space (Yang, Jiang, Tu and Zhao 2022): a span's chart holds its
  ``r`` left and right projections, never its ``N`` symbols, for ``O(n^3 r + n^2 r^2)``
  work and ``O(B n^2 r)`` memory.  The log semiring only: a max over trees does not pass
  through the sum over ``r`` inside each rule; :func:`dense_rules` gives the dense rules of
  a small low-rank grammar for its best tree.

``spans``: optional potentials added to every span of width at least 2 (``[B, n + 1, n + 1]``,
or per nonterminal ``[B, n + 1, n + 1, N]`` for :func:`inside`); zeros change nothing, and the
derivative by them is the span marginals (the MBR decoder's input) or, under the max
semiring, the best tree's spans and their nonterminals.
"""

from __future__ import annotations

import torch

from induce.structs.semiring import LOG, Semiring


def inside(
    terms: torch.Tensor,
    rules: torch.Tensor,
    roots: torch.Tensor,
    lengths: torch.Tensor,
    semiring: Semiring = LOG,
    spans: torch.Tensor | None = None,
) -> torch.Tensor:
    """``[B]``: the log-likelihood of each sentence (``⊕`` over derivations: the sentence's
    log-probability under :data:`~induce.structs.LOG`, its best derivation's under
    :data:`~induce.structs.MAX`).

    Width by width, each span's children are gathered into one ``[S, S]`` table of
    ``⊕``-sums over split points (nonterminal children from the chart, preterminal children
    at the ends) and contracted with the rules in one batched product."""
    batch, n, _ = terms.shape
    nt = roots.shape[1]
    _check_lengths(lengths, n)
    rules = rules.reshape(batch, nt, -1).transpose(1, 2)  # [B, S*S, N]
    start = terms.new_zeros(batch, n + 1, n + 1, nt)  # start[b, i, w, A] = chart(i, i + w, A)
    end = terms.new_zeros(batch, n + 1, n + 1, nt)  # end[b, j, w, A] = chart(j - w, j, A)
    for w in range(2, n + 1):
        count = n - w + 1
        first, last = terms[:, :count], terms[:, w - 1 :]  # [B, count, T]: the end words
        pairs = _children(semiring, start, end, first, last, w, count)
        chart = semiring.matmul(pairs.reshape(batch, count, -1), rules)  # [B, count, N]
        if spans is not None:
            extra = spans.diagonal(w, 1, 2)  # [B, (N,) count]
            chart = chart + (extra.transpose(1, 2) if extra.dim() == 3 else extra[..., None])
        start[:, :count, w] = chart
        end[:, w:, w] = chart
    rows = torch.arange(batch, device=terms.device)
    top = start[rows, 0, lengths.to(terms.device)]  # [B, N]
    return semiring.sum(top + roots, -1)


def _children(
    semiring: Semiring,
    start: torch.Tensor,
    end: torch.Tensor,
    first: torch.Tensor,
    last: torch.Tensor,
    w: int,
    count: int,
) -> torch.Tensor:
    """``[B, count, S, S]``: for every span ``(i, i + w)``, ``⊕`` over its split points of
    the left child's chart ⊗ the right child's, ``-inf`` for pairs no split allows."""
    batch, nt, t = start.shape[0], start.shape[3], first.shape[-1]
    empty = start.new_full((), float("-inf"))
    # nonterminal pairs: splits with both parts of width >= 2
    if w >= 4:
        left = start[:, :count, 2 : w - 1]  # [B, count, w - 3, N]
        right = end[:, w:, 2 : w - 1].flip(2)
        inner = semiring.sum(left[..., :, None] + right[..., None, :], 2)
    else:
        inner = empty.expand(batch, count, nt, nt)
    # a preterminal on the left (width 1) and a nonterminal right, and the mirror
    if w >= 3:
        word_left = first[..., :, None] + end[:, w:, w - 1][..., None, :]  # [B, count, T, N]
        word_right = start[:, :count, w - 1][..., :, None] + last[..., None, :]  # [.., N, T]
    else:
        word_left = empty.expand(batch, count, t, nt)
        word_right = empty.expand(batch, count, nt, t)
    words = first[..., :, None] + last[..., None, :] if w == 2 else empty.expand(batch, count, t, t)
    top = torch.cat([inner, word_right], -1)  # left child a nonterminal
    bottom = torch.cat([word_left, words], -1)  # left child a preterminal
    return torch.cat([top, bottom], -2)


def _check_lengths(lengths: torch.Tensor, n: int) -> None:
    if lengths.numel() and (int(lengths.min()) < 2 or int(lengths.max()) > n):
        raise ValueError(f"a PCFG parses sentences of 2 .. {n} words, got lengths {lengths}")


def inside_low_rank(
    terms: torch.Tensor,
    roots: torch.Tensor,
    head: torch.Tensor,
    left: torch.Tensor,
    right: torch.Tensor,
    lengths: torch.Tensor,
    spans: torch.Tensor | None = None,
) -> torch.Tensor:
    """``[B]``: each sentence's log-likelihood under low-rank rules (log semiring).

    ``head [B, N, r]``: ``log p(r | A)``; ``left``/``right [B, r, S]``: ``log p(B | r)`` and
    ``log p(C | r)``.  For a span of width ``w >= 2``, ``g(i, j, r) = ⊕_k L(i, k, r) ⊗
    R(k, j, r)`` with ``L(i, k, r) = log sum_B p(B | r) inside(i, k, B)`` (``R`` with
    ``right``); a span's own ``L`` and ``R`` come from ``g`` through two ``[r, r]`` matrices
    folded once per batch (:func:`_fold`), never through its ``N`` symbols."""
    batch, n, _ = terms.shape
    nt = roots.shape[1]
    _check_lengths(lengths, n)
    fold_left, fold_right = _fold(head, left[..., :nt]), _fold(head, right[..., :nt])
    # width 1: the preterminals' projections [B, n, r]
    word_left = LOG.matmul(terms, left[..., nt:].transpose(1, 2))
    word_right = LOG.matmul(terms, right[..., nt:].transpose(1, 2))
    rank = head.shape[-1]
    start = terms.new_zeros(batch, n + 1, n + 1, rank)  # L(i, i + w)
    end = terms.new_zeros(batch, n + 1, n + 1, rank)  # R(j - w, j)
    start[:, :n, 1] = word_left
    end[:, 1:, 1] = word_right
    lengths = lengths.to(terms.device)
    top = terms.new_zeros(batch, rank)
    for w in range(2, n + 1):
        count = n - w + 1
        g = torch.logsumexp(start[:, :count, 1:w] + end[:, w:, 1:w].flip(2), 2)  # [B, c, r]
        if spans is not None:
            g = g + spans.diagonal(w, 1, 2)[..., None]
        top = torch.where((lengths == w)[:, None], g[:, 0], top)
        if w < n:
            start[:, :count, w] = LOG.matmul(g, fold_left)
            end[:, w:, w] = LOG.matmul(g, fold_right)
    root = LOG.matmul(roots[:, None, :], head)[:, 0]  # [B, r]: log sum_A p(A) p(r | A)
    return torch.logsumexp(top + root, -1)


def _fold(head: torch.Tensor, child: torch.Tensor) -> torch.Tensor:
    """``[B, r, r']``: ``log sum_A p(r | A) p(A | r')``, the step from a span's rank vector
    to its projection as a child, for the nonterminal children ``child [B, r', N]``."""
    return LOG.matmul(head.transpose(1, 2), child.transpose(1, 2))


def dense_rules(head: torch.Tensor, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``[B, N, S, S]``: ``log p(A -> B C) = log sum_r p(r | A) p(B | r) p(C | r)``."""
    pairs = left[..., :, None] + right[..., None, :]  # [B, r, S, S]
    batch, rank, s, _ = pairs.shape
    flat = LOG.matmul(head, pairs.reshape(batch, rank, s * s))
    return flat.reshape(batch, -1, s, s)
