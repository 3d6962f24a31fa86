"""The chart parser's data and inference: inventories from training trees, batches, and
parsing words into labelled trees (read by ``train``, ``parse`` and the Python API).

Words are the treebank's own (case and punctuation kept): the characters carry the
morphology, and ``<unk>`` stands for words unseen in training.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from induce.data.errors import ConfigError
from induce.data.ptb import leaf_token, unescape_token
from induce.data.types import Tree
from induce.data.vocab import PAD, UNK, Vocabulary
from induce.decode.scores import named_weights
from induce.decode.span_scores import SpanScores
from induce.models.chart import (
    CHAR_BOW,
    CHAR_EOW,
    CHAR_SPECIALS,
    CHAR_UNK,
    START,
    STOP,
    ChartInput,
    ChartParser,
)
from induce.runs.device import inference_autocast
from induce.structure.chart import EMPTY, LabelledSpan, labelled_spans
from induce.structure.headrules import Dependencies, HeadTable, UnknownLabel, lexical_heads

if TYPE_CHECKING:
    from induce.runs.directory import Run

MAX_SPANS = 65_536  # spans per parsing batch (x d_label_hidden floats in the label MLP)


@dataclass
class Example:
    """A training or validation sentence: words, tags and gold labelled spans."""

    words: list[str]
    tags: list[str]
    spans: list[LabelledSpan]
    tree: Tree


def example(tree: Tree) -> Example:
    return Example(tree.words(), tree.tags(), labelled_spans(tree), tree)


def inventories(
    examples: Sequence[Example], unescape: bool = False, table: str = "seen"
) -> tuple[Vocabulary, dict[str, tuple[str, ...]]]:
    """The word vocabulary (with training counts, for word dropout) and the label, tag and
    character inventories of the training trees (sorted: the same data gives the same ids);
    ``unescape``: the characters of the unescaped words (``model.unescape_chars``);
    ``table``: ``model.char_table`` (:func:`char_set`)."""
    words: Counter[str] = Counter()
    tags: set[str] = set()
    labels: set[str] = set()
    chars: set[str] = set()
    for ex in examples:
        words.update(ex.words)
        tags.update(ex.tags)
        labels.update(label for _, _, label in ex.spans)
        for word in ex.words:
            chars.update(unescape_token(word) if unescape else word)
    specials = (UNK, PAD, START, STOP)
    ordered = sorted(words, key=lambda w: (-words[w], w))
    vocab = Vocabulary(list(specials) + ordered, dict(words), specials=specials)
    return vocab, {
        "labels": (EMPTY, *sorted(labels - {EMPTY})),
        "tag_set": tuple(sorted(tags)),
        "char_set": char_set(chars, table),
    }


def char_set(chars: set[str], table: str = "seen") -> tuple[str, ...]:
    """The character inventory after the specials: the ``chars`` seen in training, sorted, or
    for ``table="codepoints"`` every code point below 256 (512 when a seen character is above
    255), as benepar's CharLSTM table, unless a seen character is above 511."""
    seen = set(chars) - set(CHAR_SPECIALS)
    top = max((ord(ch) for ch in seen), default=0)
    if table == "codepoints" and top < 512:
        seen = {chr(code) for code in range(256 if top < 256 else 512)} - set(CHAR_SPECIALS)
    return CHAR_SPECIALS + tuple(sorted(seen))


class Encoder:
    """Sentences -> :class:`ChartInput` for one model (its vocabulary and inventories)."""

    def __init__(self, model: ChartParser, vocab: Vocabulary) -> None:
        c = model.config
        self.vocab = vocab
        self.labels = {label: i for i, label in enumerate(c.labels)}
        self.tags = {tag: i + 1 for i, tag in enumerate(c.tag_set)}  # 0: unknown
        self.chars = {ch: i for i, ch in enumerate(c.char_set)}
        self.spell = unescape_token if c.unescape_chars else str
        self.unk, self.pad = vocab.id(UNK), vocab.id(PAD)
        self.tags_predicted = c.tag_head

    def batch(
        self,
        words: Sequence[Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
        dropout: random.Random | None = None,
    ) -> ChartInput:
        """``dropout``: training: each word becomes ``<unk>`` for the word embeddings with
        probability ``1 / (1 + count)`` (the characters still see it)."""
        size = len(words)
        t = max(len(w) for w in words) + 2
        width = max((len(word) for sent in words for word in sent), default=1) + 2
        ids = torch.full((size, t), self.pad, dtype=torch.long)
        tag_ids = torch.zeros((size, t), dtype=torch.long)
        # the characters as nested lists, made a tensor once: a tensor per token cost more
        # than the encoder's arithmetic on short batches
        spelling = [[[0] * width for _ in range(t)] for _ in range(size)]
        keep = torch.zeros((size, t), dtype=torch.bool)
        counts = self.vocab.counts
        bow, eow, unk = self.chars[CHAR_BOW], self.chars[CHAR_EOW], self.chars[CHAR_UNK]
        for b, sentence in enumerate(words):
            tokens = [START, *sentence, STOP]
            row = self.vocab.ids(tokens)
            if dropout is not None:
                row = [
                    self.unk
                    if 0 < k <= len(sentence)
                    and dropout.random() < 1 / (1 + counts.get(tokens[k], 0))
                    else i
                    for k, i in enumerate(row)
                ]
            ids[b, : len(tokens)] = torch.tensor(row)
            keep[b, : len(tokens)] = True
            for k, token in enumerate(tokens):
                spelled = [token] if token in (START, STOP) else list(self.spell(token))
                codes = [bow, *(self.chars.get(ch, unk) for ch in spelled), eow][:width]
                spelling[b][k][: len(codes)] = codes
            sentence_tags = tags[b] if tags is not None else None
            if sentence_tags is not None:
                tag_ids[b, 1 : len(sentence) + 1] = torch.tensor(
                    [self.tags.get(tag, 0) for tag in sentence_tags]
                )
        chars = torch.tensor(spelling, dtype=torch.long)
        return ChartInput(ids, tag_ids, chars, keep, [len(w) for w in words])

    def training_batch(
        self, examples: Sequence[Example], rng: random.Random, sentences: int, tags: int
    ) -> ChartInput:
        """``examples`` with word dropout drawn from ``rng`` and their targets (gold spans,
        tag ids) for :meth:`ChartParser.loss`; ``sentences`` and ``tags``: the update's
        whole batch, the losses' divisors."""
        batch = self.batch([ex.words for ex in examples], [ex.tags for ex in examples], rng)
        batch.gold = [self.gold(ex.spans) for ex in examples]
        batch.sentences, batch.tag_count = sentences, tags
        if self.tags_predicted:
            wanted = torch.full((len(examples), max(batch.lengths)), -100, dtype=torch.long)
            for b, ex in enumerate(examples):
                wanted[b, : len(ex.tags)] = torch.tensor([self.tags.get(t, 0) - 1 for t in ex.tags])
            batch.tag_targets = wanted
        return batch

    def gold(self, spans: Sequence[LabelledSpan]) -> list[tuple[int, int, int]]:
        """Gold spans with label ids (labels unseen in training are left out)."""
        return [(i, j, self.labels[label]) for i, j, label in spans if label in self.labels]


def parse_words(
    model: ChartParser,
    encoder: Encoder,
    words: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str] | None] | None = None,
    batch_words: int = 4000,
    bf16: bool = False,
) -> list[Tree]:
    """Labelled trees of ``words`` (in order), batched by length; the input tags are used
    (and kept in the trees) when given, else the model's predicted tags, else ``XX``.
    ``bf16``: the model under bfloat16 autocast where the hardware has it (CKY in fp32)."""
    found = dict(chart_scores(model, encoder, words, tags, batch_words, bf16))
    trees = []
    for k, sentence in enumerate(words):
        tree = found[k].read_out(sentence).tree
        assert tree is not None  # every sentence has words
        trees.append(tree)
    return trees


@torch.inference_mode()
def chart_scores(
    model: ChartParser,
    encoder: Encoder,
    words: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str] | None] | None = None,
    batch_words: int = 4000,
    bf16: bool = False,
) -> Iterator[tuple[int, SpanScores]]:
    """``(sentence index, its span scores with their CKY tree and tags)`` for every
    sentence of ``words`` (none empty), shortest first, in batches of at most
    ``batch_words`` tokens and :data:`MAX_SPANS` spans."""
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(words)), key=lambda k: len(words[k]))
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order):
            count, n = end - start + 1, len(words[order[end]])
            # the label MLP's hidden layer holds B (n + 1)^2 spans: bound it as well
            if count * (n + 2) > batch_words or count * (n + 1) ** 2 > MAX_SPANS:
                break
            end += 1
        chunk = order[start:end]
        given = [tags[k] if tags is not None else None for k in chunk]
        batch = encoder.batch([words[k] for k in chunk], given).to(device)
        with inference_autocast(device, bf16):
            scores, tag_logits = model(batch)
        rows = SpanScores(scores, model.config.labels).sentences(batch.lengths)
        predicted = tag_logits.argmax(-1).cpu().tolist() if tag_logits is not None else None
        for b, (k, row) in enumerate(zip(chunk, rows)):
            assert isinstance(row, SpanScores)
            tagged = None if predicted is None else predicted[b][: batch.lengths[b]]
            row.tags = _tags(model, given[b], tagged)
            yield k, row
        start = end


def _tags(
    model: ChartParser, given: Sequence[str] | None, predicted: list[int] | None
) -> tuple[str, ...] | None:
    """A sentence's tags: the input's (as tree labels that read back: ``$(``, an STTS
    tag, as ``$-LRB-``), else the tagger's, else none (``XX``)."""
    if given is not None:
        return tuple(leaf_token(tag) for tag in given)
    if predicted is not None:
        return tuple(model.config.tag_set[i] for i in predicted)
    return None  # SpanScores reads them out as XX


class ChartReader:
    """How a chart parser run reads sentences: every token as the treebank writes it
    (punctuation included, case kept), input tags used where given; span scores with their
    CKY trees; dependencies by the ``penn2malt`` head rules where the output needs them."""

    reads_punctuation = True
    heads_by_rules = True

    def __init__(
        self, run: Run, weights: str = "best", device: str = "auto", bf16: bool = False
    ) -> None:
        model = run.load_model(weights, device)
        assert isinstance(model, ChartParser)  # the registry's trains_on: trees
        self.model = model
        self.encoder = Encoder(model, run.vocab)
        self.bf16 = bf16
        self.weights_file = run.weights(weights)

    def words(self, sentence: Any) -> list[str]:
        sentence.punct = [False] * len(sentence.tokens)
        return [leaf_token(t) for t in sentence.tokens]

    def scores(
        self, sentences: Sequence[Any], words: Sequence[Sequence[str]], batch_tokens: int
    ) -> Iterator[tuple[int, SpanScores]]:
        tags = [s.tags if s.tags else None for s in sentences]
        found = chart_scores(self.model, self.encoder, words, tags, batch_tokens, self.bf16)
        return named_weights(found, self.weights_file)


def rule_heads(tree: Tree) -> Dependencies:
    """Dependencies of a parsed tree by the ``penn2malt`` head rules."""
    try:
        return lexical_heads(tree, _penn2malt())
    except UnknownLabel as err:
        raise ConfigError(
            f"the penn2malt head rules have no rule for the label {err.label!r}: write ptb "
            "and convert with your own head table (induce convert headrules --rules FILE)"
        ) from None


@functools.cache
def _penn2malt() -> HeadTable:
    from induce.structure.headtables import load_head_table

    return load_head_table("penn2malt")
