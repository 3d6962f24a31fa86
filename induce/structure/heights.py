"""Syntactic heights and dependencies (StructFormer, Shen et al. 2021, Section 3).

``heights[i]`` is one number per word.  Definition 3.2: a dependency tree's heights are any
numbers ranked like the heights of the words in that tree, so a head is always higher than its
dependents.  Algorithm 2 reads dependencies off a binary tree and heights (in every constituent
the child whose head is higher heads it); Algorithm 3 does Algorithm 1 and Algorithm 2 in one
pass over the distances.

Heads are 1-based positions with 0 for the root, as in CoNLL files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from induce.data.types import Tree
from induce.structure.distances import Ties, check_scores, postorder, split_order


def dependency_heights(heads: Sequence[int]) -> list[int]:
    """Definition 3.2 (StructFormer), inverted: the height of every word in the dependency
    tree ``heads`` (a word without dependents has height 0, a head one more than its highest
    dependent).  The root is the highest word; every head is higher than its dependents."""
    n = len(heads)
    dependents: list[list[int]] = [[] for _ in range(n + 1)]
    for i, h in enumerate(heads, 1):
        dependents[h].append(i)
    heights = [0] * (n + 1)
    order: list[tuple[int, bool]] = [(0, False)]
    while order:
        node, done = order.pop()
        if done:
            heights[node] = 1 + max((heights[d] for d in dependents[node]), default=-1)
            continue
        order.append((node, True))
        order.extend((d, False) for d in dependents[node])
    return heights[1:]


def tree_dependencies(tree: Tree, heights: Sequence[float]) -> list[int]:
    """Algorithm 2 (StructFormer): dependency heads from a tree and word heights.

    Bottom-up, every constituent takes as its head the head of the child whose head is
    highest, and the heads of the other children depend on it.  In a binary node the left
    child's head wins only if it is strictly higher (the paper's ``>``), so on ties the right
    one heads; an n-ary node takes its highest child, the rightmost of equals.  Unary nodes pass
    their child's head up.  The result is one projective tree over the words.
    """
    leaves = tree.preterminals()
    if len(heights) != len(leaves):
        raise ValueError(f"{len(leaves)} words need {len(leaves)} heights, got {len(heights)}")
    heads = [0] * len(leaves)
    position = 0
    # Post-order: each finished node leaves the position (1-based) of its head word.
    results: list[int] = []
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if node.is_preterminal:
            position += 1
            results.append(position)
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(node.children))  # type: ignore[misc]
            continue
        k = len(node.children)
        kids = results[len(results) - k :]
        del results[len(results) - k :]
        best = kids[0]
        for word in kids[1:]:
            if heights[word - 1] >= heights[best - 1]:
                best = word
        for word in kids:
            if word != best:
                heads[word - 1] = best
        results.append(best)
    return heads


@dataclass(frozen=True)
class Parse:
    """What Algorithm 3 gives: the binary tree, the heads (0 = root), the root (1-based) and
    the root's height."""

    tree: Tree
    heads: list[int]
    root: int
    root_height: float


def parse_distances(
    leaves: Sequence[Tree],
    distances: Sequence[float],
    heights: Sequence[float],
    label: str = "X",
    ties: Ties = "left",
) -> Parse:
    """Algorithm 3 (StructFormer): the tree of Algorithm 1 and the dependencies of Algorithm 2
    in one bottom-up pass over the split points (O(n), no recursion).

    Each constituent carries its head word and that word's height; joining two, the left head
    heads the pair only if strictly higher.  Equal to ``split_tree`` followed by
    ``tree_dependencies`` on every input (a property test checks it).
    """
    n = len(leaves)
    check_scores(n, distances, "distances", n - 1)
    check_scores(n, heights, "heights", n)
    heads = [0] * n
    if n == 1:
        return Parse(Tree(label, [leaves[0]]), heads, 1, heights[0])
    root, left_child, right_child = split_order(distances, ties)
    done: dict[int, tuple[Tree, int]] = {}  # split point -> (constituent, its head word)
    for i in postorder(root, left_child, right_child):
        left, lh = done.pop(left_child[i]) if left_child[i] >= 0 else (leaves[i], i + 1)
        right, rh = done.pop(right_child[i]) if right_child[i] >= 0 else (leaves[i + 1], i + 2)
        if heights[lh - 1] > heights[rh - 1]:
            heads[rh - 1] = lh
            done[i] = (Tree(label, [left, right]), lh)
        else:
            heads[lh - 1] = rh
            done[i] = (Tree(label, [left, right]), rh)
    tree, top = done[root]
    return Parse(tree, heads, top, heights[top - 1])


def projective_tree(leaves: Sequence[Tree], heads: Sequence[int], label: str = "X") -> Tree:
    """A binary tree consistent with the projective dependency tree ``heads``: every head
    takes its right dependents' subtrees one by one from the nearest, then its left ones, so
    Algorithm 2 with the tree's heights gives ``heads`` back.  Raises ``ValueError`` for a
    non-projective tree."""
    n = len(heads)
    if len(leaves) != n:
        raise ValueError(f"{len(leaves)} words but {n} heads")
    dependents: list[list[int]] = [[] for _ in range(n + 1)]
    for i, h in enumerate(heads, 1):
        dependents[h].append(i)
    if len(dependents[0]) != 1:
        raise ValueError(f"{len(dependents[0])} roots")
    built: dict[int, tuple[Tree, int, int]] = {}  # word -> (subtree, first, last word)
    order: list[tuple[int, bool]] = [(dependents[0][0], False)]
    while order:
        word, done = order.pop()
        if not done:
            order.append((word, True))
            order.extend((d, False) for d in dependents[word])
            continue
        node, first, last = leaves[word - 1], word, word
        for d in sorted(d for d in dependents[word] if d > word):
            sub, lo, hi = built.pop(d)
            if lo != last + 1:
                raise ValueError(
                    f"not projective: word {d} and its dependents are not "
                    f"adjacent to the phrase of word {word}"
                )
            node, last = Tree(label, [node, sub]), hi
        for d in sorted((d for d in dependents[word] if d < word), reverse=True):
            sub, lo, hi = built.pop(d)
            if hi != first - 1:
                raise ValueError(
                    f"not projective: word {d} and its dependents are not "
                    f"adjacent to the phrase of word {word}"
                )
            node, first = Tree(label, [sub, node]), lo
        built[word] = (node, first, last)
    tree = built[dependents[0][0]][0]
    return tree if not tree.is_preterminal else Tree(label, [tree])
