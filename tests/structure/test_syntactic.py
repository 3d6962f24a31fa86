"""StructFormer's Algorithms 1-3 and Definitions 3.1-3.2, checked against their definitions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.data.types import Tree, dependency_problem
from induce.structure.binarize import binarize
from induce.structure.distances import split_tree, tree_distances
from induce.structure.heights import (
    dependency_heights,
    parse_distances,
    projective_tree,
    tree_dependencies,
)
from tests.strategies import tree_over

LEAVES = [Tree("W", [str(i)]) for i in range(12)]


def _algorithm2(tree: Tree, heights) -> list[int]:
    """Algorithm 2 as the paper writes it (recursive, binary trees)."""
    heads = [0] * len(heights)
    counter = [0]

    def walk(node: Tree) -> int:
        if node.is_preterminal:
            counter[0] += 1
            return counter[0]
        if len(node.children) == 1:
            return walk(node.children[0])
        left, right = (walk(c) for c in node.children)
        if heights[left - 1] > heights[right - 1]:
            heads[right - 1] = left
            return left
        heads[left - 1] = right
        return right

    walk(tree)
    return heads


def _projective(heads) -> bool:
    arcs = [(min(i, h), max(i, h)) for i, h in enumerate(heads, 1) if h]
    return not any(a < c < b < d for a, b in arcs for c, d in arcs)


scores = st.integers(0, 4)


@given(st.data(), st.sampled_from(["left", "right"]))
@settings(max_examples=400, deadline=None)
def test_algorithm3_is_algorithm1_then_algorithm2(data, ties):
    n = data.draw(st.integers(1, 10))
    distances = data.draw(st.lists(scores, min_size=n - 1, max_size=n - 1))
    heights = data.draw(st.lists(scores, min_size=n, max_size=n))
    parse = parse_distances(LEAVES[:n], distances, heights, ties=ties)
    tree = split_tree(LEAVES[:n], distances, ties=ties)
    assert parse.tree == tree
    assert parse.heads == tree_dependencies(tree, heights) == _algorithm2(tree, heights)
    # one tree: a single root, n - 1 arcs, no cycle, projective
    assert dependency_problem(parse.heads) is None
    assert sum(1 for h in parse.heads if h) == n - 1
    assert _projective(parse.heads)
    assert parse.heads[parse.root - 1] == 0 and parse.root_height == heights[parse.root - 1]


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_tree_to_distances_to_tree(data):
    n = data.draw(st.integers(1, 10))
    tree = data.draw(tree_over(LEAVES[:n], labels=["X"], unary=False))
    if tree.is_preterminal:
        tree = Tree("X", [tree])
    distances = tree_distances(tree)
    assert len(distances) == n - 1
    # Definition 3.1: the ranks of the lowest common ancestors' heights.  Binary trees come
    # back exactly; n-ary nodes come back binarised (right-factored for leftmost ties).
    rebuilt = split_tree(LEAVES[:n], distances, ties="left")
    assert rebuilt == _relabel(binarize(tree, "right"))
    assert split_tree(LEAVES[:n], distances, ties="right") == _relabel(binarize(tree, "left"))


def _relabel(tree: Tree) -> Tree:
    if tree.is_preterminal:
        return tree
    return Tree("X", [_relabel(c) for c in tree.children])


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_dependencies_to_heights_and_back(data):
    n = data.draw(st.integers(1, 10))
    # any projective tree: Algorithm 2 over a random binary tree and random heights
    tree = split_tree(LEAVES[:n], data.draw(st.lists(scores, min_size=n - 1, max_size=n - 1)))
    heads = tree_dependencies(tree, data.draw(st.lists(scores, min_size=n, max_size=n)))
    heights = dependency_heights(heads)
    for i, h in enumerate(heads, 1):  # Definition 3.2: a head is higher than its dependents
        assert h == 0 or heights[h - 1] > heights[i - 1]
    assert heights.index(max(heights)) == heads.index(0)
    consistent = projective_tree(LEAVES[:n], heads)
    parse = parse_distances(LEAVES[:n], tree_distances(consistent), heights)
    assert parse.heads == heads and parse.tree == consistent


def test_heights_examples():
    assert dependency_heights([2, 0, 2]) == [0, 1, 0]
    assert dependency_heights([2, 3, 0]) == [0, 1, 2]
    assert dependency_heights([0]) == [0]


def test_ties_in_algorithm2_go_right():
    leaves = LEAVES[:2]
    assert parse_distances(leaves, [1], [5, 5]).heads == [2, 0]
    assert parse_distances(leaves, [1], [6, 5]).heads == [0, 1]


def test_bad_scores():
    with pytest.raises(ValueError, match="need 2 distances"):
        parse_distances(LEAVES[:3], [1.0], [1, 2, 3])
    with pytest.raises(ValueError, match="need 3 heights"):
        parse_distances(LEAVES[:3], [1.0, 2.0], [1, 2])
    for bad in (math.nan, math.inf, "1", True):
        with pytest.raises(ValueError, match="not a finite number"):
            parse_distances(LEAVES[:3], [1.0, bad], [1, 2, 3])
    with pytest.raises(ValueError, match="no words"):
        split_tree([], [])
    for empty in (Tree("TOP", []), Tree("", []), Tree("S", [Tree("NP", []), Tree("VP", [])])):
        with pytest.raises(ValueError, match="no words"):  # was an IndexError
            tree_distances(empty)
    with pytest.raises(ValueError, match="not projective"):
        projective_tree(LEAVES[:4], [3, 0, 2, 1])  # the arc 4 -> 1 covers the root
