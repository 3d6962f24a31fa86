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
- :func:`viterbi`: the best derivation under dense rules, ties broken as Kim et al.'s code
  breaks them.
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

from induce.structs.rank_chart import RankChart
from induce.structs.semiring import LOG, MAX, Semiring


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
    _check_lengths(lengths, terms.shape[1])
    start, _ = _chart(terms, rules, roots.shape[1], semiring, spans)
    rows = torch.arange(terms.shape[0], device=terms.device)
    top = start[rows, 0, lengths.to(terms.device)]  # [B, N]
    return semiring.sum(top + roots, -1)


def _chart(
    terms: torch.Tensor,
    rules: torch.Tensor,
    nt: int,
    semiring: Semiring,
    spans: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The chart of :func:`inside`, indexed two ways: ``start[b, i, w, A]`` and ``end[b, j,
    w, A]`` hold span ``(i, i + w)`` and span ``(j - w, j)`` of nonterminal ``A``, ``[B, n +
    1, n + 1, N]``."""
    batch, n, _ = terms.shape
    # [B, S*S, N], exponentiated once for every width under LOG
    flat = semiring.operand(rules.reshape(batch, nt, -1).transpose(1, 2))
    start = terms.new_zeros(batch, n + 1, n + 1, nt)
    end = terms.new_zeros(batch, n + 1, n + 1, nt)
    for w in range(2, n + 1):
        count = n - w + 1
        first, last = terms[:, :count], terms[:, w - 1 :]  # [B, count, T]: the end words
        pairs = _children(semiring, start, end, first, last, w, count)
        chart = semiring.matmul(pairs.reshape(batch, count, -1), flat)  # [B, count, N]
        if spans is not None:
            extra = spans.diagonal(w, 1, 2)  # [B, (N,) count]
            chart = chart + (extra.transpose(1, 2) if extra.dim() == 3 else extra[..., None])
        start[:, :count, w] = chart
        end[:, w:, w] = chart
    return start, end


def viterbi(
    terms: torch.Tensor, rules: torch.Tensor, roots: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each sentence's best derivation under dense rules (the arguments of :func:`inside`):
    ``labels [B, n + 1, n + 1]``, ``1 + A`` for the spans of two or more words (nonterminal
    ``A``), 0 elsewhere, and ``tags [B, n]``, each word's preterminal.

    The max-semiring chart, then a backtrace that breaks ties as Kim et al.'s
    ``PCFG._viterbi`` does: at each span the first split point, then the first (left,
    right) child pair in symbol order.  Ties are not rare: two derivations that apply the
    same rules in another nesting (``A -> T X, X -> Y A`` and the mirror) score the same,
    and each candidate is summed in the official order, ``(left + right) + rule``, so the
    chart and the candidates are those of the official code to the bit.  The derivative
    of the max inside (:func:`~induce.structs.derivative`) finds a best derivation too, but
    takes the first child pair before the first split."""
    batch, n, _ = terms.shape
    nt, device = roots.shape[1], terms.device
    _check_lengths(lengths, n)
    start, end = (c.detach().cpu() for c in _chart(terms, rules, nt, MAX, None))
    terms, rules, roots = (x.detach().cpu() for x in (terms, rules, roots))
    labels = torch.zeros(batch, n + 1, n + 1, dtype=torch.long)
    tags = torch.zeros(batch, n, dtype=torch.long)
    for b, length in enumerate(lengths.tolist()):
        top = int((start[b, 0, length] + roots[b]).argmax())  # the first best, as torch.max
        todo = [(0, length, top)]
        while todo:
            i, j, a = todo.pop()
            labels[b, i, j] = a + 1
            k, left, right = _best_children(start[b], end[b], terms[b], rules[b, a], i, j)
            for p, q, symbol in ((i, k, left), (k, j, right)):
                if q - p == 1:
                    tags[b, p] = symbol - nt
                else:
                    todo.append((p, q, symbol))
    return labels.to(device), tags.to(device)


def _best_children(
    start: torch.Tensor,
    end: torch.Tensor,
    terms: torch.Tensor,
    rule: torch.Tensor,
    i: int,
    j: int,
) -> tuple[int, int, int]:
    """Split ``k`` and children ``(B, C)`` (symbols, preterminals after the ``N``
    nonterminals) of the best ``A -> B C`` over span ``(i, j)``: the first in split-major,
    then child-major order among equals.  ``start``/``end`` one sentence's chart ``[n + 1, n
    + 1, N]``, ``terms [n, T]``, ``rule [S, S]``: ``log p(A -> B C)``."""
    w, nt = j - i, start.shape[-1]
    empty = float("-inf")
    left = terms.new_full((w - 1, rule.shape[0]), empty)  # [splits k = i+1 .. j-1, S]
    right = left.clone()
    left[0, nt:] = terms[i]  # k = i + 1: a preterminal on the left
    left[1:, :nt] = start[i, 2:w]  # a nonterminal of width k - i
    right[-1, nt:] = terms[j - 1]  # k = j - 1: a preterminal on the right
    right[:-1, :nt] = end[j, 2:w].flip(0)  # a nonterminal of width j - k
    candidates = (left[:, :, None] + right[:, None, :]) + rule  # [w - 1, S, S]
    first = int(candidates.reshape(-1).argmax())  # the first of the maxima, as torch.max
    split, pair = divmod(first, rule.numel())
    return i + 1 + split, *divmod(pair, rule.shape[1])


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
    folded once per batch (:func:`_fold`), never through its ``N`` symbols.  The chart and
    its gradient are :class:`~induce.structs.rank_chart.RankChart`'s buffers: the backward
    adds into them in place instead of copying the whole chart at every width."""
    batch, n, _ = terms.shape
    nt = roots.shape[1]
    _check_lengths(lengths, n)
    # exponentiated once: each width's product reuses them (and the backward keeps one copy)
    fold_left = LOG.operand(_fold(head, left[..., :nt]))
    fold_right = LOG.operand(_fold(head, right[..., :nt]))
    # width 1: the preterminals' projections [B, n, r]
    word_left = LOG.matmul(terms, left[..., nt:].transpose(1, 2))
    word_right = LOG.matmul(terms, right[..., nt:].transpose(1, 2))
    rank = head.shape[-1]
    chart = RankChart(terms, n, rank)
    chart.write(1, word_left, word_right)
    lengths = lengths.to(terms.device)
    top = terms.new_zeros(batch, rank)
    for w in range(2, n + 1):
        g = chart.combine(w)  # [B, n - w + 1, r]
        if spans is not None:
            g = g + spans.diagonal(w, 1, 2)[..., None]
        top = torch.where((lengths == w)[:, None], g[:, 0], top)
        if w < n:
            chart.write(w, LOG.matmul(g, fold_left), LOG.matmul(g, fold_right))
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
