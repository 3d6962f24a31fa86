"""Attachment scores for one sentence (heads: 0 = root, 1-based positions)."""

from __future__ import annotations

from collections.abc import Sequence


def position_scores(gold: Sequence[int], pred: Sequence[int]) -> tuple[int, int]:
    """Directed and undirected correct counts by positions (UDGN's DDA / UDA numerators).

    The root points to itself.  Directed: words whose predicted head is the gold head.
    Undirected: the size of the intersection of the two sets of unordered ``{word, head}``
    pairs, root self-loops included.
    """
    directed = 0
    gold_pairs = set()
    pred_pairs = set()
    for i, (g, p) in enumerate(zip(gold, pred), 1):
        g = g or i
        p = p or i
        directed += g == p
        gold_pairs.add((i, g) if i <= g else (g, i))
        pred_pairs.add((i, p) if i <= p else (p, i))
    return directed, len(gold_pairs & pred_pairs)


def string_pair_scores(
    words: Sequence[str], gold: Sequence[int], pred: Sequence[int]
) -> tuple[int, int]:
    """Directed and undirected correct counts of StructFormer's ``evald`` (word strings).

    Each word gives the pair ``(word, head word)`` lower-cased, ``<s>`` for the root; a
    predicted pair counts when it occurs anywhere among the sentence's gold pairs, so a
    repeated word can match another token's arc.  The undirected pairs are sorted.
    """
    lower = [w.lower() for w in words]

    def pairs(heads: Sequence[int]) -> list[tuple[str, str]]:
        return [(lower[i], lower[h - 1] if h else "<s>") for i, h in enumerate(heads)]

    gold_pairs, pred_pairs = pairs(gold), pairs(pred)
    directed = sum(1 for pair in pred_pairs if pair in gold_pairs)
    gold_sorted = [tuple(sorted(pair)) for pair in gold_pairs]
    undirected = sum(1 for pair in pred_pairs if tuple(sorted(pair)) in gold_sorted)
    return directed, undirected
