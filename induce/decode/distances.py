"""Syntactic distances, heights and parent distributions to trees and dependency heads.

Constituency trees come from distances by Algorithm 1, dependencies either from the parent
distribution (each word's most probable parent, the highest word as root: the StructFormer
evaluation's read-out) or from distances and heights by Algorithm 3.  The algorithms are
those of ``induce.structure``; this module only moves scores out of tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from induce.data.types import Tree
from induce.structure.distances import split_tree
from induce.structure.heights import parse_distances


@dataclass
class SentenceParse:
    tree: Tree | None  # binary tree over the words (None without distances)
    heads: list[int] | None  # 0 = root, 1-based
    distances: list[float] | None = None
    heights: list[float] | None = None


def argmax_heads(parents: ArrayLike, heights: ArrayLike) -> list[int]:
    """Eq. 17: each word's most probable parent; the highest word is the root.  (May contain
    cycles, as the reference read-out; use a spanning-tree decoder for well-formed trees.)
    ``parents [n, n]`` (row i: word i's parent probabilities; the diagonal is never
    chosen), ``heights [n]``; ties go to the first word, as ``max`` gives them."""
    p = np.array(parents, dtype=np.float64, ndmin=2)
    h = np.asarray(heights, dtype=np.float64)
    n = len(h)
    if n == 0:
        return []
    root = int(h.argmax())
    p[np.arange(n), np.arange(n)] = -np.inf  # no self-loops
    heads = (p.argmax(1) + 1).tolist() if n > 1 else [0]
    heads[root] = 0
    return [int(x) for x in heads]


def decode_sentence(
    words: Sequence[str],
    distances: Sequence[float] | None,
    heights: Sequence[float] | None,
    parents: ArrayLike | None = None,
    dependencies: str = "argmax",
    label: str = "X",
) -> SentenceParse:
    leaves = [Tree("X", [w]) for w in words]
    tree = heads = None
    if distances is not None:
        if heights is not None and dependencies == "algorithm3":
            parse = parse_distances(leaves, distances, heights, label)
            return SentenceParse(parse.tree, parse.heads, list(distances), list(heights))
        tree = split_tree(leaves, distances, label)
    if heights is not None and parents is not None:
        heads = argmax_heads(parents, heights)
    return SentenceParse(
        tree,
        heads,
        None if distances is None else list(distances),
        None if heights is None else list(heights),
    )
