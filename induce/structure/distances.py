"""Syntactic distances and binary trees (StructFormer, Shen et al. 2021, Section 3).

``distances[i]`` scores the split between word ``i`` and word ``i + 1`` (``n - 1`` values for
``n`` words).  Algorithm 1 splits a span at its largest distance and recurses on both sides;
Definition 3.1 goes the other way: a tree's distances are any numbers ranked like the heights
of the lowest common ancestors of adjacent words.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Literal, get_args

from induce.data.types import Tree

Ties = Literal["left", "right"]  # which of equal distances splits first
TIES: tuple[Ties, ...] = get_args(Ties)


def check_scores(n: int, values: Sequence[float], name: str, expected: int) -> None:
    """``ValueError`` unless there are ``expected`` finite ``values`` for ``n`` words."""
    if n == 0:
        raise ValueError("no words")
    if len(values) != expected:
        raise ValueError(f"{n} words need {expected} {name}, got {len(values)}")
    for i, value in enumerate(values):
        if not _finite(value):
            shown = repr(value) if len(repr(value)) < 40 else repr(value)[:37] + "..."
            raise ValueError(f"{name}[{i}] is {shown}, not a finite number")


def _finite(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def split_order(
    distances: Sequence[float], ties: Ties = "left"
) -> tuple[int, list[int], list[int]]:
    """The split points as a binary tree: ``(root, left_child, right_child)``.

    Split ``i`` (between words ``i`` and ``i + 1``) has the splits of its left part as its
    left subtree and those of its right part as its right subtree; ``-1`` is no child.  This is
    the Cartesian tree of the distances (largest on top), built in O(n) with a stack; among
    equal distances the leftmost (``ties="left"``) or rightmost split is the higher one.
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    m = len(distances)
    left_child = [-1] * m
    right_child = [-1] * m
    stack: list[int] = []
    right_wins = ties == "right"
    for i, d in enumerate(distances):
        last = -1
        while stack and (distances[stack[-1]] < d or (right_wins and distances[stack[-1]] == d)):
            last = stack.pop()
        left_child[i] = last
        if stack:
            right_child[stack[-1]] = i
        stack.append(i)
    return (stack[0] if stack else -1), left_child, right_child


def postorder(root: int, left_child: list[int], right_child: list[int]) -> Iterator[int]:
    """Split points children first, without recursion."""
    order: list[tuple[int, bool]] = [(root, False)] if root >= 0 else []
    while order:
        i, expanded = order.pop()
        if expanded:
            yield i
            continue
        order.append((i, True))
        if right_child[i] >= 0:
            order.append((right_child[i], False))
        if left_child[i] >= 0:
            order.append((left_child[i], False))


def split_tree(
    leaves: Sequence[Tree], distances: Sequence[float], label: str = "X", ties: Ties = "left"
) -> Tree:
    """Algorithm 1 (StructFormer): the binary tree over ``leaves`` whose splits follow
    ``distances``: split at the largest distance, recurse on both sides.

    Ties go to the leftmost split (``ties="left"``) or the rightmost.  O(n), no recursion.  A
    single leaf gives a unary node over it.
    """
    check_scores(len(leaves), distances, "distances", len(leaves) - 1)
    if len(leaves) == 1:
        return Tree(label, [leaves[0]])
    root, left_child, right_child = split_order(distances, ties)
    built: dict[int, Tree] = {}
    for i in postorder(root, left_child, right_child):
        left = built.pop(left_child[i]) if left_child[i] >= 0 else leaves[i]
        right = built.pop(right_child[i]) if right_child[i] >= 0 else leaves[i + 1]
        built[i] = Tree(label, [left, right])
    return built[root]


def tree_distances(tree: Tree) -> list[int]:
    """Definition 3.1 (StructFormer), inverted: distances of a tree's words.

    ``distances[i]`` is the height of the lowest common ancestor of words ``i`` and ``i + 1``
    (a preterminal has height 0, a constituent one more than its highest child).  A node's
    splits outrank every split below it, so Algorithm 1 rebuilds a binary tree exactly; the
    splits of an n-ary node tie, and Algorithm 1 then binarises it (``ties="left"``: right-
    factored, ``ties="right"``: left-factored).  Iterative: deep trees are fine.  A tree
    without words (``(TOP)``) has no distances: ``ValueError``.
    """
    if not tree.preterminals():
        raise ValueError("no words")
    if tree.is_preterminal:
        return []
    out: list[int] = []
    position = 0
    # Frames: [node, next child, ends of the finished children, highest finished child]
    stack: list[list] = [[tree, 0, [], 0]]
    while stack:
        frame = stack[-1]
        node, k, ends, highest = frame
        children = node.children
        if k < len(children):
            frame[1] = k + 1
            child = children[k]
            if child.is_preterminal:
                position += 1
                out.append(0)
                ends.append(position)
            else:
                stack.append([child, 0, [], 0])
            continue
        stack.pop()
        height = highest + 1
        for end in ends[:-1]:
            out[end - 1] = height  # the split after the child ending at ``end``
        if stack:
            parent = stack[-1]
            parent[2].append(position)
            parent[3] = max(parent[3], height)
    out.pop()  # one slot per word was reserved; n words have n - 1 splits
    return out
