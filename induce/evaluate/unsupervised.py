"""``induce evaluate unsupervised``: unlabelled span F1 and per-label recall of induced trees.

Gold trees carry the treebank's tokens (punctuation, traces, function tags, wrappers).  A
prediction may cover the same tokens or only the words an unsupervised model reads (one
``words_nopunct``-style sentence per line); either way it is reduced to the words before
scoring.  Treebank wrappers (``TOP``, ``ROOT``, ``S1`` or an unlabelled outer bracket with a
single child) are dropped from both sides, as the reference readers drop them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from induce.data.errors import ConfigError, InputError
from induce.data.normalize import EMPTY_TAGS
from induce.data.progress import every
from induce.data.ptb import TreeFile, read_trees
from induce.data.types import Tree
from induce.evaluate.common import (
    align_tokens,
    gold_digest,
    prediction_or_baseline,
    require_sentences,
    word_filter,
)
from induce.metrics.conventions import SpanConvention, load_span_convention
from induce.metrics.unsupervised import SpanScorer
from induce.structure.baselines import TREE_BASELINES, tree_baseline
from induce.structure.trees import leaves_and_spans, restrict_spans, spans, unwrap


@dataclass
class UnsupervisedReport:
    settings: dict
    scorer: SpanScorer
    skipped: dict
    labels: list[str] | None

    def to_dict(self) -> dict:
        label_recall = self.scorer.label_recall(self.labels)
        return {
            "settings": self.settings,
            **self.scorer.summary(),
            "skipped_sentences": self.skipped,
            "per_label_recall": {k: v["recall"] for k, v in label_recall.items()},
            "per_label_counts": {
                k: {"correct": v["correct"], "total": v["total"]} for k, v in label_recall.items()
            },
        }


def evaluate_unsupervised(
    gold_path: str | TreeFile,
    pred_path: str | TreeFile | None = None,
    *,
    convention: str | SpanConvention = "structformer",
    baseline: str | None = None,
    labels: list[str] | None = None,
    max_words: int | None = None,
    tagset: str | None = None,
    unlabelled: bool = False,
    wrappers: Sequence[str] | None = None,
) -> UnsupervisedReport:
    """Score induced trees against gold trees under a span convention (files, or trees
    already read: :class:`~induce.data.ptb.TreeFile`).

    ``labels``: labels for per-label recall (``None`` = the convention's, ``["all"]`` = every
    gold label).  ``max_words``: override the convention's length cut-off (0 = none).
    ``unlabelled``: the prediction is a bare bracketing such as ``((the cat) sat)``.
    ``wrappers``: the root labels dropped as the treebank's wrapper (``None``: the
    convention's, ``TOP ROOT S1 VROOT``; ``["TOP"]``: the official readers').
    """
    conv = _convention(convention, tagset, max_words)
    if wrappers is not None:
        conv = replace(conv, wrappers=tuple(sorted(set(wrappers))))
    is_word = word_filter(conv.tagset)
    gold = gold_path if isinstance(gold_path, TreeFile) else read_trees(gold_path)
    require_sentences(len(gold), gold.path)
    pred, name, seed, index = prediction_or_baseline(
        gold,
        pred_path,
        lambda path: path if isinstance(path, TreeFile) else read_trees(path, not unlabelled),
        baseline,
        TREE_BASELINES,
        lambda: [
            k
            for k, tree in enumerate(gold.trees)
            if tree is None or not any(_kept(tree.preterminals(), is_word))
        ],
    )
    scorer = SpanScorer(conv.whole_sentence_span, conv.corpus_gold)
    skipped = _score_all(scorer, conv, is_word, gold, (pred, index), name, random.Random(seed))
    if not scorer.sentences:
        raise InputError(
            f"nothing to score: all {len(gold)} sentences were skipped ({skipped['no_words']} "
            f"without words of the tag set {conv.tagset}, {skipped['too_short']} too short, "
            f"{skipped['too_long']} too long)",
            gold.path,
        )
    settings = {
        "metric": "unsupervised",
        "gold": gold.path,
        "gold_digest": gold_digest(gold),
        "prediction": pred.path if pred is not None else f"baseline:{baseline}",
        "baseline": baseline,
        "convention": conv.to_dict(),
    }
    wanted = None if labels and "all" in labels else (labels or list(conv.report_labels))
    return UnsupervisedReport(settings, scorer, skipped, wanted)


def _convention(
    convention: str | SpanConvention, tagset: str | None, max_words: int | None
) -> SpanConvention:
    """The named (or given) convention with the caller's tag set and length cut-off."""
    conv = (
        convention
        if isinstance(convention, SpanConvention)
        else load_span_convention(convention, tagset=tagset)
    )
    if max_words is None:
        return conv
    if max_words < 0:
        raise ConfigError(f"must be 0 (no limit) or more, got {max_words}", setting="max_words")
    return replace(conv, max_words=max_words or None)


def _score_all(
    scorer: SpanScorer,
    conv: SpanConvention,
    is_word: Callable[[str], bool],
    gold: TreeFile,
    paired: tuple[TreeFile | None, list[int | None]],
    baseline: str,
    rng: random.Random,
) -> dict[str, int]:
    """Add every gold sentence the convention scores to ``scorer``, against its prediction
    (``paired``: the file and each gold sentence's sentence in it) or the ``baseline``'s tree
    over its words; how many were skipped, and why."""
    pred, index = paired
    skipped = {"no_words": 0, "too_short": 0, "too_long": 0}
    for k, gold_tree in enumerate(gold.trees):
        every("scoring sentences", k + 1, len(gold))
        if gold_tree is None:
            skipped["no_words"] += 1
            continue
        leaves, gold_spans = leaves_and_spans(unwrap(gold_tree, conv.wrapper_labels()))
        keep = _kept(leaves, is_word)
        n = sum(keep)
        reason = _skip_reason(n, conv)
        if reason:
            skipped[reason] += 1
            continue
        if pred is None:
            pred_spans = spans(tree_baseline(baseline, [Tree("X", ["w"])] * n, rng))
        else:
            tokens = cast(
                "list[tuple[str, bool]]",
                [
                    (p.children[0], kept)
                    for p, kept in zip(leaves, keep)
                    if p.label not in EMPTY_TAGS
                ],
            )
            gfile, gline = gold.where(k)
            where = f"sentence {k + 1} (gold {gfile}:{gline})"
            j = index[k]
            assert j is not None, "a gold sentence with words has a prediction"
            pred_spans = _prediction_spans(pred, j, tokens, where, conv.wrapper_labels())
        scorer.add(k + 1, n, restrict_spans(gold_spans, keep), pred_spans)
    return skipped


def _kept(leaves: list[Tree], is_word: Callable[[str], bool]) -> list[bool]:
    """Which of a gold tree's leaves (preterminals) are words."""
    return [p.label not in EMPTY_TAGS and is_word(p.label) for p in leaves]


def _skip_reason(words: int, conv: SpanConvention) -> str:
    """Why a sentence of ``words`` words is not scored under ``conv`` (``""``: it is)."""
    if words == 0:
        return "no_words"
    if words < conv.min_words:
        return "too_short"
    if conv.max_words is not None and words > conv.max_words:
        return "too_long"
    return ""


def _prediction_spans(
    pred: TreeFile,
    k: int,
    gold_tokens: list[tuple[str, bool]],
    where: str,
    wrappers: frozenset[str],
) -> list[tuple[int, int, str]]:
    """The prediction's spans over the gold words (``gold_tokens``: (word, is_word) for each
    gold token, empty elements excluded), its ``wrappers`` dropped."""
    tree = pred.trees[k]
    pfile, pline = pred.where(k)
    where = f"{where}, prediction {pfile}:{pline}"
    if tree is None:
        raise InputError(f"{where}: the prediction is empty")
    leaves, pred_spans = leaves_and_spans(unwrap(tree, wrappers))
    tokens = cast("list[str]", [p.children[0] for p in leaves if p.label not in EMPTY_TAGS])
    keep_gold = [kept for _, kept in gold_tokens]
    if align_tokens([w for w, _ in gold_tokens], keep_gold, tokens, where):
        flags = iter(keep_gold)  # the prediction has every gold token: keep the words
        keep = [p.label not in EMPTY_TAGS and next(flags) for p in leaves]
    else:
        keep = [p.label not in EMPTY_TAGS for p in leaves]
    return restrict_spans(pred_spans, keep)
