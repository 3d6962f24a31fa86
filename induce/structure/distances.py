"""Syntactic distances and binary trees (StructFormer, Shen et al. 2021, Algorithm 1).

``distances[i]`` scores the split between word ``i`` and word ``i + 1`` (``n - 1`` values for
``n`` words).  Algorithm 1 splits a span at its largest distance and recurses on both sides.
"""

from __future__ import annotations

from typing import Sequence

from induce.data.types import Tree

TIES = ("left", "right")


def split_tree(leaves: Sequence[Tree], distances: Sequence[float], label: str = "X",
               ties: str = "left") -> Tree:
    """Algorithm 1: the binary tree over ``leaves`` whose splits follow ``distances``.

    Among equal largest distances the leftmost (``ties="left"``) or the rightmost split is
    taken first.  Runs in O(n) by building the Cartesian tree of the distances with a stack
    instead of recursing, so it never hits Python's recursion limit.  A single leaf gives a
    unary node over it.
    """
    n = len(leaves)
    if n == 0:
        raise ValueError("no words")
    if len(distances) != n - 1:
        raise ValueError(f"{n} words need {n - 1} distances, got {len(distances)}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if n == 1:
        return Tree(label, [leaves[0]])
    # Cartesian tree of the split points: parent has the larger distance; an equal distance
    # to the left stays an ancestor when ties go left.
    left_child = [-1] * (n - 1)
    right_child = [-1] * (n - 1)
    stack: list[int] = []
    for i, d in enumerate(distances):
        last = -1
        while stack and (distances[stack[-1]] < d if ties == "left"
                         else distances[stack[-1]] <= d):
            last = stack.pop()
        left_child[i] = last
        if stack:
            right_child[stack[-1]] = i
        stack.append(i)
    root = stack[0]
    # Post-order over split points; split i covers words lo..hi and cuts after word i.
    built: dict[int, Tree] = {}
    order: list[tuple[int, bool]] = [(root, False)]
    while order:
        i, expanded = order.pop()
        if not expanded:
            order.append((i, True))
            for child in (right_child[i], left_child[i]):
                if child >= 0:
                    order.append((child, False))
            continue
        left = built.pop(left_child[i]) if left_child[i] >= 0 else leaves[i]
        right = built.pop(right_child[i]) if right_child[i] >= 0 else leaves[i + 1]
        built[i] = Tree(label, [left, right])
    return built[root]
