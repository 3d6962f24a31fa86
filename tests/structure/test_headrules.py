"""Head rules and binarisation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.data.errors import ConfigError
from induce.data.ptb import parse_trees
from induce.data.types import Tree, dependency_problem
from induce.structure.binarize import binarize, unbinarize
from induce.structure.headrules import UnknownLabel, lexical_heads
from induce.structure.headtables import head_table, load_head_table
from tests.strategies import sentence, tree_over


def T(text: str) -> Tree:
    return parse_trees(text).trees[0]


SENT = T(
    "(S (NP-SBJ (DT The) (JJ old) (NN dog)) (VP (MD will) (VP (VB bark) "
    "(PP-TMP (IN at) (NP (NN night))))) (. .))"
)


def test_penn2malt_heads_and_labels():
    deps = lexical_heads(SENT, load_head_table("penn2malt"))
    assert deps.words == ["The", "old", "dog", "will", "bark", "at", "night", "."]
    assert deps.heads == [3, 3, 4, 0, 4, 5, 6, 4]  # the modal heads the clause
    assert deps.labels == ["NMOD", "NMOD", "SBJ", "ROOT", "VC", "VMOD", "PMOD", "P"]


def test_collins_differs_where_expected():
    collins = load_head_table("collins")
    deps = lexical_heads(SENT, collins)
    assert deps.heads == [3, 3, 4, 0, 4, 5, 6, 4] and set(deps.labels) == {"dep", "root"}
    # "because of": Penn2Malt takes the first preposition, Collins the last
    pp = T("(PP (IN because) (IN of) (NP (NN rain)))")
    assert lexical_heads(pp, load_head_table("penn2malt")).heads == [0, 1, 1]
    assert lexical_heads(pp, collins).heads == [2, 0, 2]
    # Collins' NP: the leftmost NP when there is no noun child; coordination
    np = T("(NP (NP (NN cats)) (CC and) (NP (NN dogs)))")
    assert lexical_heads(np, collins).heads == [0, 1, 1]
    assert lexical_heads(np, load_head_table("penn2malt")).heads == [3, 3, 0]


def test_collins_coordination_rule():
    collins = load_head_table("collins")
    np_rules = [
        "last POS",
        "right NN|NNP|NNPS|NNS|NX|POS|JJR",
        "left NP",
        "right $|ADJP|PRN",
        "right CD",
        "right JJ|JJS|RB|QP",
        "right",
    ]
    without = head_table(
        {"rules": {"NP": np_rules}, "punctuation": "ptb_punctuation"}, "no-coordination.yaml"
    )
    assert without.rules["NP"] == collins.rules["NP"]
    np = T("(NP (NNS cats) (CC and) (NNS dogs))")
    assert lexical_heads(np, without).heads == [3, 3, 0]  # the rightmost noun
    assert lexical_heads(np, collins).heads == [0, 1, 1]  # gives way to the first conjunct
    # passing over punctuation: "cats , dogs , and birds" is headed by "dogs"
    listed = T("(NP (NNS cats) (, ,) (NNS dogs) (, ,) (CC and) (NNS birds))")
    assert lexical_heads(listed, collins).heads == [3, 3, 0, 3, 3, 3]
    only = T("(NP (, ,) (CC and) (NNS birds))")
    assert lexical_heads(only, collins).heads == [3, 3, 0]  # nothing before: no change


def test_deep_trees_fall_back_to_the_iterative_walk():
    deep = T("(S " + "(VP (VB v) " * 2000 + "(NN n)" + ")" * 2000 + ")")
    deps = lexical_heads(deep, load_head_table("penn2malt"))
    assert deps.heads[:3] == [0, 1, 2] and deps.heads[-1] == 2000


@pytest.mark.parametrize("name", ["penn2malt", "collins"])
def test_punctuation_is_never_the_head_of_a_phrase_with_words(name):
    table = load_head_table(name)
    prn = T("(PRN (-LRB- -LRB-) (NP (NN note)) (-RRB- -RRB-))")
    assert lexical_heads(prn, table).heads == [2, 0, 2]
    only = T("(FRAG (. .) (: :))")
    assert dependency_problem(lexical_heads(only, table).heads) is None
    empty = T("(S (NP) (VP (VB go)))")
    assert lexical_heads(empty, table).heads == [0]


def test_table_from_yaml_and_errors():
    table = head_table(
        {"rules": {"S": ["right VP"], "VP": ["left VB|VBD"], "*": ["left"]}}, "mine.yaml"
    )
    assert lexical_heads(T("(S (NP (NN a)) (VP (VBD b)))"), table).heads == [2, 0]
    strict = head_table({"rules": {"S": ["right"]}}, "mine.yaml")
    with pytest.raises(UnknownLabel):
        lexical_heads(T("(S (NP (NN a)) (VP (VBD b)))"), strict)
    for bad, match in [
        ({"rules": {"S": ["up VP"]}}, "direction must be"),
        ({"rules": {"S": []}}, "list of rules"),
        ({"rules": {}, "colour": 1}, "unknown setting"),
        ({"rules": {}, "labels": {"rules": [{"phrase": ["NP"]}]}}, "needs a label"),
    ]:
        with pytest.raises(ConfigError, match=match):
            head_table(bad, "mine.yaml")
    with pytest.raises(ConfigError, match="unknown head table"):
        load_head_table("stanford")


@given(st.data(), st.sampled_from(["right", "left"]))
@settings(max_examples=200, deadline=None)
def test_binarize_round_trip(data, factor):
    tree = data.draw(tree_over(data.draw(sentence()), unary=False))
    binary = binarize(tree, factor)
    assert all(len(n.children) <= 2 for n in binary.subtrees())
    assert binary.pos() == tree.pos()
    assert unbinarize(binary) == tree


def test_binarize_shapes():
    tree = T("(S (A a) (B b) (C c) (D d))")
    assert (
        binarize(tree, "right").to_string() == "(S (A a) (S|<B-C-D> (B b) (S|<C-D> (C c) (D d))))"
    )
    assert binarize(tree, "left").to_string() == "(S (S|<A-B-C> (S|<A-B> (A a) (B b)) (C c)) (D d))"


@pytest.mark.parametrize("name", ["penn2malt", "collins"])
@pytest.mark.parametrize("label", ["ADVP|PRT", "ADVP-MNR|PRT", "ADVP|PRT-CLR=2"])
def test_label_alternatives_use_the_first(name, label):
    """PTB writes ``ADVP|PRT`` where annotators disagreed; Penn2Malt takes the first label.
    ADVP and PRT pick different heads here (RB for ADVP; PRT wants RP and falls back)."""
    table = load_head_table(name)
    text = "(S (NP (PRP He)) (VP (VBD gave) ({} (IN up) (RB far))) (. .))"
    deps = lexical_heads(T(text.format(label)), table)
    assert deps.heads == lexical_heads(T(text.format("ADVP")), table).heads
    assert deps.heads[2:4] == [4, 2]  # "far" heads "up" and depends on "gave"
    assert table.split(label)[0] == "ADVP"
    assert table.split("-NONE-") == ("-NONE-", frozenset())
