"""Syntactic distances, heights and parent distributions to trees and dependency heads.

Constituency trees come from distances by Algorithm 1, dependencies either from the parent
distribution (each word's most probable parent, the highest word as root: the StructFormer
evaluation's read-out) or from distances and heights by Algorithm 3.  The algorithms are
those of ``induce.structure``; this module only moves scores out of tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from induce.data.types import Tree
from induce.structure.distances import split_tree
from induce.structure.heights import parse_distances


@dataclass
class SentenceParse:
    tree: Tree | None  # binary tree over the words (None without distances)
    heads: list[int] | None  # 0 = root, 1-based
    distances: list[float] | None = None
    heights: list[float] | None = None


def argmax_heads(parents: Sequence[Sequence[float]], heights: Sequence[float]) -> list[int]:
    """Eq. 17: each word's most probable parent; the highest word is the root.  (May contain
    cycles, as the reference read-out; use a spanning-tree decoder for well-formed trees.)"""
    root = max(range(len(heights)), key=heights.__getitem__)
    heads = []
    for i, row in enumerate(parents):
        if i == root:
            heads.append(0)
            continue
        best = max((j for j in range(len(row)) if j != i), key=row.__getitem__, default=-1)
        heads.append(best + 1)
    return heads


def decode_sentence(
    words: Sequence[str],
    distances: Sequence[float] | None,
    heights: Sequence[float] | None,
    parents: Sequence[Sequence[float]] | None = None,
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
