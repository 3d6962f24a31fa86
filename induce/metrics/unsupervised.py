"""The unsupervised constituency parsing protocol: unlabelled span F1 and per-label recall.

Both trees are over the same *words* (the tokens whose tag is a word tag, see
:mod:`induce.metrics.conventions`); preparing them is the caller's job.  Two conventions:

* ``structformer`` (PRPN, ON-LSTM, StructFormer, UDGN): spans of constituents over two or more
  words, the whole-sentence span excluded (equivalently: unary chains collapsed, root dropped);
* ``cpcfg`` (compound PCFG): spans of every constituent over two or more words except the
  root's own one, unary chains kept (so ``(S (VP ...))`` keeps the whole-sentence VP span).

Span sets merge duplicates.  Per sentence (the PRPN formula, epsilons included)::

    prec = |pred & gold| / (|pred| + 1e-8)      reca = |pred & gold| / (|gold| + 1e-8)
    reca = 1 if gold is empty (and prec = 1 if pred is empty too)
    f1 = 2 * prec * reca / (prec + reca + 1e-8)

sentence-level scores are plain means over the scored sentences; corpus-level scores come from
the summed counts: of the span sets, or (``corpus_gold: list``, the TN-PCFG repository's
metric) of the predicted and gold span lists, where a gold span a unary chain repeats counts
once per copy (a false negative each when it is not predicted, a true positive once when it
is).  Per-label recall counts gold constituents over two or more words (the
whole-sentence one included) by their label cut at the first ``-``/``=``; one is recalled when
its span is any constituent of the prediction, the whole-sentence one included.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from induce.data.types import Tree
from induce.metrics.conventions import CorpusGold, WholeSentence
from induce.structure.trees import leaves_and_spans, spans

_CUT = re.compile(r"[-=]")


Spans = list[tuple[int, int, str]]


def span_set(tree_spans: Spans, n: int, whole_sentence_span: WholeSentence) -> set[tuple[int, int]]:
    """Unlabelled spans under a convention's rule, from a tree's ``(start, end, label)`` list
    in pre-order (root first) over ``n`` words."""
    if whole_sentence_span == "exclude":
        return {(s, e) for s, e, _ in tree_spans if e - s > 1 and not (s == 0 and e == n)}
    return {(s, e) for s, e, _ in tree_spans[1:] if e - s > 1}


def _span_list(tree_spans: Spans, n: int, whole_sentence_span: WholeSentence) -> list:
    """:func:`span_set`'s spans as a list: a span repeated by a unary chain stays repeated."""
    if whole_sentence_span == "exclude":
        return [(s, e) for s, e, _ in tree_spans if e - s > 1 and not (s == 0 and e == n)]
    return [(s, e) for s, e, _ in tree_spans[1:] if e - s > 1]


def labelled_gold(tree_spans: Spans) -> set[tuple[int, int, str]]:
    """Gold constituents for per-label recall: ``(start, end, label)`` over two or more words."""
    return {(s, e, _CUT.split(label, 1)[0]) for s, e, label in tree_spans if e - s > 1}


def sentence_prf(pred: set, gold: set) -> tuple[float, float, float]:
    """The per-sentence precision, recall and F1 of the PRPN/StructFormer code (fractions)."""
    overlap = len(pred & gold)
    prec = overlap / (len(pred) + 1e-8)
    reca = overlap / (len(gold) + 1e-8)
    if not gold:
        reca = 1.0
        if not pred:
            prec = 1.0
    return prec, reca, 2 * prec * reca / (prec + reca + 1e-8)


@dataclass
class SentenceSpans:
    """Per-sentence figures (fractions), as in the reference's per-sentence table."""

    index: int
    words: int
    gold_spans: int
    pred_spans: int
    overlap: int
    precision: float
    recall: float
    f1: float
    # the corpus-level counts: true positives, predicted and gold spans counted
    counted_overlap: int = 0
    counted_pred: int = 0
    counted_gold: int = 0


@dataclass
class SpanScorer:
    """Accumulates span scores sentence by sentence."""

    whole_sentence_span: WholeSentence
    corpus_gold: CorpusGold = "set"
    sentences: list[SentenceSpans] = field(default_factory=list)
    label_correct: Counter = field(default_factory=Counter)
    label_total: Counter = field(default_factory=Counter)

    def add_trees(self, index: int, gold: Tree, pred: Tree) -> SentenceSpans:
        """Score one sentence given two trees over the same words."""
        leaves, gold_spans = leaves_and_spans(gold)
        return self.add(index, len(leaves), gold_spans, spans(pred))

    def add(self, index: int, n: int, gold: Spans, pred: Spans) -> SentenceSpans:
        """Score one sentence of ``n`` words from the two trees' span lists (pre-order, root
        first, as :func:`induce.structure.trees.leaves_and_spans` gives them)."""
        gold_set = span_set(gold, n, self.whole_sentence_span)
        pred_set = span_set(pred, n, self.whole_sentence_span)
        prec, reca, f1 = sentence_prf(pred_set, gold_set)
        overlap = len(pred_set & gold_set)
        counts = (overlap, len(pred_set), len(gold_set))
        if self.corpus_gold == "list":
            pred_list, gold_list = (
                _span_list(s, n, self.whole_sentence_span) for s in (pred, gold)
            )
            hits = sum(span in gold_set for span in pred_list)
            misses = sum(span not in pred_set for span in gold_list)
            counts = (hits, len(pred_list), hits + misses)
        row = SentenceSpans(
            index, n, len(gold_set), len(pred_set), overlap, prec, reca, f1, *counts
        )
        self.sentences.append(row)
        predicted = {(s, e) for s, e, _ in pred}
        for s, e, label in labelled_gold(gold):
            self.label_total[label] += 1
            if (s, e) in predicted:
                self.label_correct[label] += 1
        return row

    def summary(self) -> dict:
        """Scores on a 0-100 scale plus the counts behind them."""
        rows = self.sentences
        count = len(rows)
        overlap = sum(r.counted_overlap for r in rows)
        pred = sum(r.counted_pred for r in rows)
        gold = sum(r.counted_gold for r in rows)
        prec = overlap / pred if pred else 0.0
        reca = overlap / gold if gold else 0.0
        f1 = 2 * prec * reca / (prec + reca) if prec + reca > 0 else 0.0

        def mean(values: list[float]) -> float:
            return sum(values) / count if count else 0.0

        return {
            "sentence_precision": 100 * mean([r.precision for r in rows]),
            "sentence_recall": 100 * mean([r.recall for r in rows]),
            "sentence_f1": 100 * mean([r.f1 for r in rows]),
            "corpus_precision": 100 * prec,
            "corpus_recall": 100 * reca,
            "corpus_f1": 100 * f1,
            "sentences": count,
            "overlap": overlap,
            "pred_spans": pred,
            "gold_spans": gold,
        }

    def label_recall(self, labels: list[str] | None = None) -> dict[str, dict]:
        """``{label: {"recall": %, "correct": c, "total": t}}``; all gold labels by default.
        A label never seen in the gold has recall ``None``."""
        chosen = sorted(self.label_total) if labels is None else labels
        out = {}
        for label in chosen:
            total = self.label_total.get(label, 0)
            correct = self.label_correct.get(label, 0)
            out[label] = {
                "recall": 100 * correct / total if total else None,
                "correct": correct,
                "total": total,
            }
        return out
