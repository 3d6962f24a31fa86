"""Brute-force enumeration of the structures of :mod:`induce.structs`, for the oracle tests:
every binary bracketing, every dependency tree (projective or not, one root or several) and
every PCFG derivation of a short sentence, scored one by one in Python."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

Bracketing = list[tuple[int, int]]


def bracketings(i: int, j: int) -> list[Bracketing]:
    """Every binary bracketing of words ``i .. j - 1`` as its spans, the whole span first."""
    if j - i == 1:
        return [[(i, j)]]
    out = []
    for k in range(i + 1, j):
        for left, right in itertools.product(bracketings(i, k), bracketings(k, j)):
            out.append([(i, j), *left, *right])
    return out


def head_lists(n: int, single_root: bool) -> Iterator[list[int]]:
    """Every dependency tree over words ``1 .. n`` as ``heads[d - 1]`` (0: the root)."""
    for heads in itertools.product(range(n + 1), repeat=n):
        if any(h == d + 1 for d, h in enumerate(heads)):
            continue
        if single_root and heads.count(0) != 1:
            continue
        if all(_reaches_root(list(heads), d) for d in range(1, n + 1)):
            yield list(heads)


def _reaches_root(heads: list[int], d: int) -> bool:
    seen = set()
    while d != 0:
        if d in seen:
            return False
        seen.add(d)
        d = heads[d - 1]
    return True


def projective(heads: list[int]) -> bool:
    """No two arcs cross (the root's arcs included)."""
    arcs = [(min(h, d), max(h, d)) for d, h in enumerate(heads, 1)]
    return not any(a < c < b < e for (a, b), (c, e) in itertools.permutations(arcs, 2))


def reduce(values: list[float], semiring: str) -> float:
    """``⊕`` of plain numbers."""
    if semiring == "max":
        return max(values)
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def derivations(
    n: int, nonterminals: int, preterminals: int
) -> Iterator[tuple[Bracketing, tuple[int, ...], tuple[int, ...]]]:
    """Every derivation of an ``n``-word sentence: a bracketing, a nonterminal for each of its
    spans of width >= 2 (in the bracketing's order) and a preterminal for each word."""
    for spans in bracketings(0, n):
        inner = [s for s in spans if s[1] - s[0] > 1]
        for labels in itertools.product(range(nonterminals), repeat=len(inner)):
            for tags in itertools.product(range(preterminals), repeat=n):
                yield inner, labels, tags


def derivation_score(
    inner: Bracketing,
    labels: tuple[int, ...],
    tags: tuple[int, ...],
    terms: list[list[float]],
    rules: list[list[list[float]]],
    roots: list[float],
) -> float:
    """``log p`` of one derivation: its root rule, binary rules and emissions (symbols
    nonterminals first: preterminal ``t`` is symbol ``N + t``)."""
    nt = len(roots)
    symbol = {span: a for span, a in zip(inner, labels, strict=True)}
    symbol.update({(i, i + 1): nt + t for i, t in enumerate(tags)})
    total = roots[labels[0]] + sum(terms[i][t] for i, t in enumerate(tags))
    for (i, j), a in zip(inner, labels, strict=True):
        k = next(k for k in range(i + 1, j) if (i, k) in symbol and (k, j) in symbol)
        total += rules[a][symbol[(i, k)]][symbol[(k, j)]]
    return total
