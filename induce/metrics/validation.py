"""Parsing quality on a dataset split, as training validation reports it: unsupervised UF1
(``evaluate``'s StructFormer convention) and UAS/UUAS against the dataset's gold dependencies
(its ``{split}.conllu``) or head-rule dependencies of its gold trees.

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
from induce.data.types import DepTree, Tree
from induce.metrics.attachment import position_scores
from induce.metrics.conventions import load_span_convention
from induce.metrics.unsupervised import SpanScorer
from induce.structure.deps import restrict_heads
from induce.structure.headrules import HeadTable, UnknownLabel, lexical_heads
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
    """The gold structures of ``split``, restricted to the words a model reads; a sentence
    whose words do not line up with the split's text, or that is too short, is ``None``."""
    name = f"{split}.trees"
    if not dataset.has(name):
        return Gold([], f"the dataset has no {name}")
    lines = list(dataset.lines(name))
    # the word count of each sentence (subword text: the words are in {split}.words)
    text = f"{split}.words" if dataset.has(f"{split}.align") else f"{split}.txt"
    tokens = [line.split() for line in dataset.lines(text)]
    reader = _GoldReader(
        str(dataset.path / name),
        dataset.normalization.word_tags,
        load_head_table(head_rules),
        _given_heads(dataset, split, len(lines)),
        load_span_convention("structformer").min_words,
    )
    return Gold([reader.sentence(k, line, len(tokens[k])) for k, line in enumerate(lines)])


@dataclass
class _GoldReader:
    path: str
    word_tags: frozenset[str] | None
    table: HeadTable
    given: list[DepTree] | None  # the dataset's own gold dependencies (synthetic data)
    min_words: int

    def is_word(self, tag: str) -> bool:
        return tag not in EMPTY_TAGS and (self.word_tags is None or tag in self.word_tags)

    def sentence(self, k: int, line: str, n_words: int) -> GoldSentence | None:
        if not line.strip():
            return None
        parsed = parse_trees(line, self.path).trees[0]
        if parsed is None:
            return None
        tree = unwrap(parsed)
        leaves, gold_spans = leaves_and_spans(tree)
        keep = [self.is_word(p.label) for p in leaves]
        n = sum(keep)
        if n != n_words or n < self.min_words:
            return None
        return GoldSentence(n, restrict_spans(gold_spans, keep), self.heads(k, tree, keep))

    def heads(self, k: int, tree: Tree, keep: list[bool]) -> list[int] | None:
        if self.given is not None:
            given = self.given[k]
            return restrict_heads(list(given.heads), keep) if len(given) == len(keep) else None
        clean = strip_empty(tree)
        if clean is None:
            return None
        try:
            deps = lexical_heads(unwrap(clean), self.table)
        except UnknownLabel:
            return None
        return restrict_heads(deps.heads, [self.is_word(p.label) for p in clean.preterminals()])


def _given_heads(dataset: Dataset, split: str, count: int) -> list[DepTree] | None:
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

    def add(
        self, index: int, gold: GoldSentence | None, tree: Tree | None, heads: list[int] | None
    ) -> None:
        """Score sentence ``index``'s predicted ``tree`` and ``heads`` (either may be
        ``None``) against its gold."""
        if gold is None:
            return
        if tree is not None:
            self.spans.add(index + 1, gold.n, gold.spans, spans(tree))
        if gold.heads is not None and heads is not None:
            d, u = position_scores(gold.heads, heads)
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
