"""Tree operations and Algorithm 1, against their definitions (brute force on small trees)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.data.errors import ConfigError
from induce.data.ptb import parse_trees
from induce.data.types import Tree, dependency_problem
from induce.evaluate.common import parse_baseline
from induce.structure.baselines import dependency_baseline, tree_baseline
from induce.structure.deps import restrict_heads
from induce.structure.distances import split_tree
from induce.structure.trees import (
    _leaves_and_spans_iterative,
    collapse_unary,
    cut_label,
    filter_preterminals,
    leaves_and_spans,
    lowercase,
    normalize_word,
    restrict_spans,
    spans,
    strip_empty,
    strip_function_tags,
    unwrap,
)
from tests.strategies import sentence, tree_over


def T(text: str) -> Tree:
    return parse_trees(text).trees[0]


def test_cut_label():
    assert [cut_label(x) for x in ("NP-SBJ-1", "PP-LOC=2", "-NONE-", "-LRB-", "S", "")] == [
        "NP",
        "PP",
        "-NONE-",
        "-LRB-",
        "S",
        "",
    ]


def test_cleaning_a_treebank_tree():
    tree = T("( (S (NP-SBJ-1 (-NONE- *)) (VP (VB Go) (ADVP=2 (-NONE- *T*))) (. .)))")
    assert strip_empty(tree) == T("( (S (VP (VB Go)) (. .)))")
    assert strip_function_tags(strip_empty(tree)).to_string() == "( (S (VP (VB Go)) (. .)))"
    assert unwrap(T("(TOP (S (NN a)))")).label == "S"
    assert unwrap(T("( (TOP (S (NN a))))")).label == "S"
    assert unwrap(T("(TOP (S (NN a)) (. .))")).label == "TOP"  # two children: not a wrapper
    assert strip_empty(T("(S (-NONE- *))")) is None


def test_collapse_unary_and_lowercase():
    tree = T("(S (VP (VP (VB Go) (NP (NN Home)))))")
    assert collapse_unary(tree).to_string() == "(S (VB Go) (NP (NN Home)))"
    assert collapse_unary(tree, "+").label == "S+VP+VP"
    assert lowercase(tree).words() == ["go", "home"]
    assert normalize_word("Nov. 29,1989") == "nov. N,N"


def _brute_spans(tree: Tree):
    out = []

    def walk(node, start):
        if node.is_preterminal:
            return start + 1
        index = len(out)
        out.append(None)
        end = start
        for child in node.children:
            end = walk(child, end)
        out[index] = (start, end, node.label)
        return end

    walk(tree, 0)
    return out


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_spans_and_restriction_match_rebuilt_trees(data):
    leaves = data.draw(sentence())
    tree = data.draw(tree_over(leaves))
    found_leaves, found = leaves_and_spans(tree)
    assert found == _brute_spans(tree) and found_leaves == tree.preterminals()
    assert _leaves_and_spans_iterative(tree) == (found_leaves, found)
    keep = [data.draw(st.booleans()) for _ in leaves]
    flags = iter(keep)
    filtered = filter_preterminals(tree, lambda p: next(flags))
    expected = [] if filtered is None else _brute_spans(filtered)
    assert restrict_spans(found, keep) == expected


def test_deep_trees_do_not_recurse():
    deep = T("(X (A a) " * 3000 + "(A b)" + ")" * 3000)
    assert len(spans(deep)) == 3000
    assert strip_empty(deep).words()[-1] == "b"
    assert len(collapse_unary(deep).preterminals()) == 3001


def _algorithm1(leaves, distances, ties):
    """Algorithm 1 by its definition: split at the arg-max distance, recurse."""
    if len(leaves) == 1:
        return leaves[0]
    best = max(distances)
    positions = [i for i, d in enumerate(distances) if d == best]
    i = positions[0] if ties == "left" else positions[-1]
    return Tree(
        "X",
        [
            _algorithm1(leaves[: i + 1], distances[:i], ties),
            _algorithm1(leaves[i + 1 :], distances[i + 1 :], ties),
        ],
    )


@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.sampled_from(["left", "right"]))
@settings(max_examples=300, deadline=None)
def test_split_tree_is_algorithm_1(distances, ties):
    leaves = [Tree("W", [str(i)]) for i in range(len(distances) + 1)]
    assert split_tree(leaves, distances, ties=ties) == _algorithm1(leaves, distances, ties)


def test_split_tree_errors():
    with pytest.raises(ValueError, match="need 2 distances"):
        split_tree([Tree("W", ["a"])] * 3, [1.0])
    assert split_tree([Tree("W", ["a"])], []).to_string() == "(X (W a))"


def test_tree_baselines():
    leaves = [Tree("W", [w]) for w in "abcde"]
    rng = random.Random(0)
    assert (
        tree_baseline("right", leaves, rng).to_string()
        == "(X (W a) (X (W b) (X (W c) (X (W d) (W e)))))"
    )
    assert (
        tree_baseline("left", leaves, rng).to_string()
        == "(X (X (X (X (W a) (W b)) (W c)) (W d)) (W e))"
    )
    assert (
        tree_baseline("balanced", leaves, rng).to_string()
        == "(X (X (X (W a) (W b)) (W c)) (X (W d) (W e)))"
    )
    one = tree_baseline("random", leaves, random.Random(3))
    assert one == tree_baseline("random", leaves, random.Random(3))
    assert one.words() == list("abcde")
    assert parse_baseline("random:7", ["random"]) == ("random", 7)
    with pytest.raises(ConfigError):
        parse_baseline("diagonal", ["right"])


def test_dependency_baselines():
    assert dependency_baseline("next", 4, random.Random(0)) == [2, 3, 4, 0]
    assert dependency_baseline("prev", 4, random.Random(0)) == [0, 1, 2, 3]
    for seed in range(20):
        heads = dependency_baseline("random", 7, random.Random(seed))
        assert dependency_problem(heads) is None


def _climb(heads, keep, i):
    h = heads[i]
    while h and not keep[h - 1]:
        h = heads[h - 1]
    return h


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_restrict_heads(data):
    n = data.draw(st.integers(1, 8))
    heads = dependency_baseline("random", n, random.Random(data.draw(st.integers(0, 999))))
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    kept = [i for i in range(n) if keep[i]]
    expected = [
        0 if _climb(heads, keep, i) == 0 else kept.index(_climb(heads, keep, i) - 1) + 1
        for i in kept
    ]
    assert restrict_heads(heads, keep) == expected
