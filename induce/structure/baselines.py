"""Trivial baseline structures that every induced grammar is compared with.

Trees: ``right``, ``left`` (branching), ``balanced`` (halves, the left half taking the extra
word), ``random`` (Algorithm 1 over uniform random distances, i.e. split points ranked at
random).  Dependencies: ``next`` (each word's head is the following word, the last word is the
root), ``prev`` (the previous word; the first is the root), ``random`` (a random tree: words
taken in random order, the first is the root and each later one attaches to a uniformly chosen
earlier one).  ``random:SEED`` seeds a ``random.Random`` that draws sentence by sentence.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from induce.data.types import Tree
from induce.structure.distances import split_tree

TREE_BASELINES = ("right", "left", "balanced", "random")
DEP_BASELINES = ("next", "prev", "random")


def tree_baseline(name: str, leaves: Sequence[Tree], rng: random.Random, label: str = "X") -> Tree:
    """A binary tree of the named shape over ``leaves`` (preterminals); one leaf gives
    ``(X leaf)``."""
    n = len(leaves)
    if name == "right":
        return split_tree(leaves, [float(n - i) for i in range(1, n)], label)
    if name == "left":
        return split_tree(leaves, [float(i) for i in range(1, n)], label)
    if name == "balanced":
        return split_tree(leaves, _balanced_distances(n), label)
    if name == "random":
        return split_tree(leaves, [rng.random() for _ in range(n - 1)], label)
    raise ValueError(f"unknown tree baseline {name!r}")


def _balanced_distances(n: int) -> list[float]:
    """Distances whose Algorithm-1 tree halves every span, the left half taking the extra
    word: the split of the span ``[lo, hi)`` gets a distance larger than all splits below."""
    distances = [0.0] * max(n - 1, 0)
    todo = [(0, n, float(n))]
    while todo:
        lo, hi, level = todo.pop()
        if hi - lo < 2:
            continue
        cut = lo + (hi - lo + 1) // 2  # words lo..cut-1 | cut..hi-1
        distances[cut - 1] = level
        todo.append((lo, cut, level - 1))
        todo.append((cut, hi, level - 1))
    return distances


def dependency_baseline(name: str, n: int, rng: random.Random) -> list[int]:
    """Heads (0 = root, 1-based) of the named baseline over ``n`` words."""
    if n == 0:
        return []
    if name == "next":
        return [i + 1 for i in range(1, n)] + [0]
    if name == "prev":
        return [0] + list(range(1, n))
    if name == "random":
        order = list(range(1, n + 1))
        rng.shuffle(order)
        heads = [0] * n
        for k in range(1, n):
            heads[order[k] - 1] = order[rng.randrange(k)]
        return heads
    raise ValueError(f"unknown dependency baseline {name!r}")
