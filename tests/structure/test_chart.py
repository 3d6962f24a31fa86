"""Chart-parser spans: unary chains collapsed into chain labels and expanded back."""

from __future__ import annotations

import pytest

from induce.data.ptb import parse_trees, read_trees
from induce.evaluate.baselines import builtin_treebank
from induce.structure.chart import labelled_spans, tree_from_spans
from induce.structure.trees import strip_empty, strip_function_tags, unwrap


def _clean(text):
    tree = parse_trees(text).trees[0]
    return unwrap(strip_function_tags(strip_empty(tree)))


def test_chains_become_one_span_and_come_back():
    tree = _clean("(TOP (S (NP-SBJ (PRP It)) (VP (VBD rained) (ADVP (RB hard))) (. .)))")
    spans = labelled_spans(tree)
    assert spans == [(0, 4, "S"), (0, 1, "NP"), (1, 3, "VP"), (2, 3, "ADVP")]
    chain = _clean("(TOP (S (VP (VB Go) (NP (NN home)))))")
    assert labelled_spans(chain) == [(0, 2, "S+VP"), (1, 2, "NP")]
    back = tree_from_spans(chain.words(), chain.tags(), labelled_spans(chain))
    assert back == chain


def test_empty_labelled_binarisation_spans_are_dropped():
    tree = _clean("(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD ran)))")
    binary = labelled_spans(tree) + [(1, 3, "")]  # (big dog): added by a binary decoder
    assert tree_from_spans(tree.words(), tree.tags(), binary) == tree


def test_every_sample_tree_round_trips():
    trees = [t for t in read_trees(builtin_treebank()).trees if t is not None]
    assert len(trees) > 10
    for raw in trees:
        tree = unwrap(strip_function_tags(strip_empty(raw)))
        spans = labelled_spans(tree)
        assert tree_from_spans(tree.words(), tree.tags(), spans) == tree


def test_crossing_or_rootless_spans_are_refused():
    words, tags = ["a", "b", "c"], ["X", "X", "X"]
    with pytest.raises(ValueError, match="crosses"):
        tree_from_spans(words, tags, [(0, 3, "S"), (0, 2, "A"), (1, 3, "B")])
    with pytest.raises(ValueError, match="whole sentence"):
        tree_from_spans(words, tags, [(0, 2, "A")])
