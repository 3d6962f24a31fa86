"""Parsing quality during training: unsupervised UF1 (``evaluate``'s StructFormer convention)
and UAS/UUAS against head-rule dependencies of the dataset's gold trees.

Gold trees keep punctuation; the words a model reads are their word-tag leaves (the dataset's
normalisation), so gold spans and heads are restricted to those words exactly as
``induce evaluate unsupervised`` and ``induce evaluate deps`` restrict them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from induce.data.dataset import Dataset
from induce.data.errors import InputError
from induce.data.normalize import EMPTY_TAGS
from induce.data.ptb import parse_trees
from induce.decode.distances import SentenceParse
from induce.metrics.attachment import position_scores
from induce.metrics.conventions import load_span_convention
from induce.metrics.unsupervised import SpanScorer
from induce.structure.deps import restrict_heads
from induce.structure.headrules import UnknownLabel, lexical_heads
from induce.structure.headtables import load_head_table
from induce.structure.trees import leaves_and_spans, restrict_spans, spans, strip_empty, unwrap


@dataclass
class GoldSentence:
    n: int
    spans: list[tuple[int, int, str]]
    heads: list[int] | None


@dataclass
class Gold:
    """Gold structures of a split, by sentence index (``None``: not scorable)."""

    sentences: list[GoldSentence | None]
    problem: str = ""  # why parse metrics are off (empty when they are on)


def load_gold(dataset: Dataset, split: str, head_rules: str = "penn2malt") -> Gold:
    name = f"{split}.trees"
    if not dataset.has(name):
        return Gold([], f"the dataset has no {name}")
    norm = dataset.normalization
    tags = norm.word_tags
    table = load_head_table(head_rules)
    convention = load_span_convention("structformer")
    out: list[GoldSentence | None] = []
    lines = list(dataset.lines(name))
    given = _given_heads(dataset, split, len(lines))
    tokens = [line.split() for line in dataset.lines(f"{split}.txt")]
    aligned = dataset.has(f"{split}.align")
    words = [line.split() for line in dataset.lines(f"{split}.words")] if aligned else tokens
    for k, line in enumerate(lines):
        tree = parse_trees(line, f"{dataset.path / name}").trees[0] if line.strip() else None
        if tree is None:
            out.append(None)
            continue
        tree = unwrap(tree)
        leaves, gold_spans = leaves_and_spans(tree)
        keep = [p.label not in EMPTY_TAGS and (tags is None or p.label in tags) for p in leaves]
        n = sum(keep)
        if n != len(words[k]) or n < convention.min_words:
            out.append(None)
            continue
        heads = None
        clean = strip_empty(tree)
        if given is not None:  # the dataset's own gold dependencies (synthetic data)
            if len(given[k]) == len(keep):
                heads = restrict_heads(list(given[k].heads), keep)
        elif clean is not None:
            try:
                deps = lexical_heads(unwrap(clean), table)
                kept = [
                    p.label not in EMPTY_TAGS and (tags is None or p.label in tags)
                    for p in clean.preterminals()
                ]
                heads = restrict_heads(deps.heads, kept)
            except UnknownLabel:
                heads = None
        out.append(GoldSentence(n, restrict_spans(gold_spans, keep), heads))
    return Gold(out)


def _given_heads(dataset: Dataset, split: str, count: int):
    """Gold dependency trees that come with the dataset (``{split}.conllu``), or ``None``."""
    name = f"{split}.conllu"
    if not dataset.has(name):
        return None
    from induce.data.conll import parse_deps

    path = dataset.path / name
    deps = parse_deps("\n".join(dataset.lines(name)) + "\n", str(path), "conllu").sentences
    if len(deps) != count:
        raise InputError(f"{len(deps)} dependency trees for {count} gold trees", str(path))
    return deps


@dataclass
class ParseScorer:
    """Accumulates UF1 (sentence-level mean and corpus level) and UAS/UUAS by positions."""

    spans: SpanScorer = field(
        default_factory=lambda: SpanScorer(load_span_convention("structformer").whole_sentence_span)
    )
    words: int = 0
    directed: int = 0
    undirected: int = 0

    def add(self, index: int, gold: GoldSentence | None, parse: SentenceParse) -> None:
        if gold is None:
            return
        if parse.tree is not None:
            self.spans.add(index + 1, gold.n, gold.spans, spans(parse.tree))
        if gold.heads is not None and parse.heads is not None:
            d, u = position_scores(gold.heads, parse.heads)
            self.words += gold.n
            self.directed += d
            self.undirected += u

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        if self.spans.sentences:
            s = self.spans.summary()
            out["uf1"] = round(s["sentence_f1"], 2)
            out["corpus_uf1"] = round(s["corpus_f1"], 2)
        if self.words:
            out["uas"] = round(100 * self.directed / self.words, 2)
            out["uuas"] = round(100 * self.undirected / self.words, 2)
        return out
