"""The TN-PCFG repository's span convention (``tnpcfg``) against the compound PCFG's
(``cpcfg``): every whole-sentence span dropped, and corpus F1 over gold span lists."""

from __future__ import annotations

import pytest

from induce.data.ptb import parse_trees
from induce.evaluate.unsupervised import evaluate_unsupervised
from induce.metrics.conventions import load_span_convention
from induce.metrics.unsupervised import SpanScorer
from induce.structure.trees import leaves_and_spans, spans


def _add(scorer: SpanScorer, gold: str, pred: str) -> None:
    g, p = parse_trees(gold).trees[0], parse_trees(pred).trees[0]
    assert g is not None and p is not None
    leaves, gold_spans = leaves_and_spans(g)
    scorer.add(0, len(leaves), gold_spans, spans(p))


def _scorer(name: str) -> SpanScorer:
    conv = load_span_convention(name)
    return SpanScorer(conv.whole_sentence_span, conv.corpus_gold)


def test_a_unary_chain_at_the_top_leaves_no_whole_sentence_span():
    """Kim's ``[:-1]`` drops the root's copy of the whole-sentence span and keeps the VP's,
    which no binary tree can match; TN-PCFG drops both."""
    gold = "(S (VP (V a) (NP (D b) (N c))))"
    pred = "(X (X a) (X (X b) (X c)))"
    kim, tn = _scorer("cpcfg"), _scorer("tnpcfg")
    _add(kim, gold, pred)
    _add(tn, gold, pred)
    assert kim.sentences[0].gold_spans == 2 and kim.summary()["sentence_f1"] < 100
    assert tn.sentences[0].gold_spans == 1 and tn.summary()["sentence_f1"] == pytest.approx(100)


def test_corpus_f1_counts_a_repeated_gold_span_once_per_copy():
    """``(NP (NP a b))`` repeats (0, 2): missed, it is two false negatives for TN-PCFG's
    corpus recall and one for the set convention; the sentence scores are the sets'."""
    gold = "(S (NP (NP (D a) (N b))) (VP (V c) (R d)))"
    pred = "(X (X a) (X (X b) (X (X c) (X d))))"  # right-branching: (1, 4), (2, 4)
    tn = _scorer("tnpcfg")
    _add(tn, gold, pred)
    summary = tn.summary()
    assert summary["corpus_precision"] == pytest.approx(50.0)
    assert summary["corpus_recall"] == pytest.approx(100 / 3)
    row = tn.sentences[0]
    assert (row.gold_spans, row.pred_spans, row.overlap) == (2, 2, 1)
    assert summary["sentence_recall"] == pytest.approx(50.0, abs=1e-4)
    found = _scorer("tnpcfg")
    _add(found, gold, "(X (X (X a) (X b)) (X (X c) (X d)))")  # (0, 2) found: one hit
    assert found.summary()["corpus_recall"] == pytest.approx(100.0)


def test_the_two_conventions_on_a_file(tmp_path):
    gold = tmp_path / "gold.mrg"
    gold.write_text(
        "(S (VP (VB a) (NP (DT b) (NN c))))\n(S (NP (NP (DT a) (NN b))) (VP (VB c) (RB d)))\n"
        "(NP (NN x))\n"
    )
    pred = tmp_path / "pred.txt"
    pred.write_text("(X (X a) (X (X b) (X c)))\n(X (X a) (X (X b) (X (X c) (X d))))\n(X x)\n")
    kim = evaluate_unsupervised(str(gold), str(pred), convention="cpcfg").to_dict()
    tn = evaluate_unsupervised(str(gold), str(pred), convention="tnpcfg").to_dict()
    assert kim["sentences"] == tn["sentences"] == 2  # the one-word sentence skipped
    assert tn["sentence_f1"] > kim["sentence_f1"]
