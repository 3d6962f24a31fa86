"""Unsupervised span F1 conventions and attachment scores, against their definitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.data.errors import InputError
from induce.data.ptb import parse_trees
from induce.data.types import Tree
from induce.metrics.attachment import position_scores, string_pair_scores
from induce.metrics.unsupervised import SpanScorer, labelled_gold, sentence_prf, span_set
from induce.structure.trees import collapse_unary, spans
from tests.strategies import tree_over


def T(text: str) -> Tree:
    return parse_trees(text).trees[0]


def test_prrn_sentence_formula():
    assert sentence_prf(set(), set()) == (1.0, 1.0, 2 / (2 + 1e-8))
    assert sentence_prf({(0, 2)}, set())[:2] == (0.0, 1.0)
    p, r, f = sentence_prf({(0, 2), (2, 4)}, {(0, 2)})
    assert p == 1 / (2 + 1e-8) and r == 1 / (1 + 1e-8)
    assert f == 2 * p * r / (p + r + 1e-8)


def test_conventions_differ_on_unary_whole_sentence_spans():
    tree = T("(S (VP (VB a) (NP (DT b) (NN c))))")
    tree_spans = spans(tree)
    assert span_set(tree_spans, 3, "exclude") == {(1, 3)}
    assert span_set(tree_spans, 3, "root-only") == {(0, 3), (1, 3)}


def test_labelled_gold_keeps_whole_sentence_and_merges_duplicates():
    tree = T("(S (NP-SBJ (NP (NN a) (NN b))) (VP (VB c)))")
    assert labelled_gold(spans(tree)) == {(0, 3, "S"), (0, 2, "NP")}


def test_scorer_sums():
    scorer = SpanScorer("exclude")
    scorer.add_trees(
        1,
        T("(S (NP (DT a) (NN b)) (VP (VB c) (NP (NN d))))"),
        T("(X (X (X a) (X b)) (X (X c) (X d)))"),
    )
    scorer.add_trees(2, T("(S (NN a))"), T("(X a)"))
    summary = scorer.summary()
    assert summary["sentences"] == 2
    assert (summary["overlap"], summary["pred_spans"], summary["gold_spans"]) == (2, 2, 2)
    assert summary["corpus_f1"] == 100.0
    assert summary["sentence_f1"] == pytest.approx(100 * 2 / (2 + 1e-8))
    recall = scorer.label_recall(["NP", "S", "PP"])
    assert recall["NP"] == {"recall": 100.0, "correct": 1, "total": 1}
    assert recall["S"]["correct"] == 1  # the whole-sentence span counts here
    assert recall["PP"]["recall"] is None


def _brute_structformer(tree: Tree) -> set:
    """Collapse unaries, then every non-root constituent over two or more words."""
    out = set()

    def walk(node, start, is_root):
        if node.is_preterminal:
            return start + 1
        end = start
        for child in node.children:
            end = walk(child, end, False)
        if not is_root and end - start > 1:
            out.add((start, end))
        return end

    walk(collapse_unary(tree), 0, True)
    return out


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_structformer_spans_match_definition(data):
    n = data.draw(st.integers(1, 9))
    tree = data.draw(tree_over([Tree("X", [str(i)]) for i in range(n)]))
    if tree.is_preterminal:
        tree = Tree("X", [tree])
    assert span_set(spans(tree), n, "exclude") == _brute_structformer(tree)


def test_position_scores():
    gold = [2, 0, 2]  # a <- b -> c
    assert position_scores(gold, gold) == (3, 3)
    assert position_scores(gold, [0, 1, 2]) == (1, 2)  # all arcs reversed, c right
    # root self-loops: predicted root 3 vs gold root 2
    assert position_scores([0, 1], [2, 0]) == (0, 1)


def test_string_pair_scores_match_anywhere():
    words = ["the", "dog", "saw", "the", "cat"]
    gold = [2, 3, 0, 5, 3]
    # The two "the"s swap heads: wrong by position, right as word strings (the quirk).
    pred = [5, 3, 0, 2, 3]
    assert position_scores(gold, pred)[0] == 3
    assert string_pair_scores(words, gold, pred) == (5, 5)
    assert string_pair_scores(words, gold, [3, 3, 0, 3, 3]) == (3, 3)
    assert string_pair_scores(["A"], [0], [0]) == (1, 1)


def test_a_upos_tag_set_scores_conllu_by_its_upos_column(tmp_path):
    """``evaluate deps --tagset ud_word_tags`` on English UD (PTB tags in XPOS) checked the
    PTB tags against UPOS names: next to no word was scored, with exit 0."""
    from induce.evaluate.deps import evaluate_deps

    rows = [("It", "PRON", "PRP", 2), ("cost", "VERB", "VBD", 0), ("$", "SYM", "$", 2),
            ("5", "NUM", "CD", 3), ("now", "ADV", "RB", 2), (".", "PUNCT", ".", 2)]  # fmt: skip
    gold = tmp_path / "g.conllu"
    gold.write_text(
        "".join(
            f"{k}\t{w}\t_\t{u}\t{x}\t_\t{h}\tdep\t_\t_\n" for k, (w, u, x, h) in enumerate(rows, 1)
        )
        + "\n"
    )
    by_upos = evaluate_deps(str(gold), str(gold), tagset="ud_word_tags").to_dict()
    by_ptb = evaluate_deps(str(gold), str(gold), tagset="ptb_word_tags").to_dict()
    assert (by_upos["tokens"], by_ptb["tokens"]) == (5, 4)  # "$" is a word by UPOS only


def test_a_prediction_in_mikolovs_text_lines_up_with_the_treebank():
    """His text writes "3 %" as "N N", "1\\/2" as "N" and keeps "$": the tokens of a model
    trained on it line up with the gold's words under the tag set of his words."""
    from induce.evaluate.unsupervised import evaluate_unsupervised

    gold = parse_trees(
        "(S (NP (NNS prices)) (VP (VBD rose) (NP (CD 3) (NN %)) (PP (IN by) "
        "(NP ($ $) (CD 1\\/2)))) (. .))\n"
    )
    pred = parse_trees("(prices (rose ((N N) (by ($ N)))))\n", labelled=False)
    report = evaluate_unsupervised(gold, pred, tagset="mikolov_word_tags")
    assert report.to_dict()["sentences"] == 1
    with pytest.raises(InputError, match="tokens differ"):
        evaluate_unsupervised(gold, pred)  # ptb_word_tags: no "$"
