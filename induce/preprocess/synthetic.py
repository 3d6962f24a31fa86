"""``induce preprocess synthetic``: a dataset sampled from a head-marked PCFG (the built-in
English-like grammar by default), with gold trees for every split and gold dependencies
(``{split}.conllu``: words, PTB tags, heads, labels) for valid and test.

Deterministic for a seed: each split draws from its own ``random.Random`` stream, so the
validation set does not change with the number of training sentences.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

from induce.data.conll_write import format_deps
from induce.data.dataset import DatasetWriter
from induce.data.errors import ConfigError
from induce.data.normalize import Normalization
from induce.data.types import DepTree
from induce.preprocess.common import Progress, SplitWriter, manifest
from induce.preprocess.grammar import Grammar, load_grammar
from induce.preprocess.grammar_sampling import check_limits, sample

SPLIT_STREAM = {"train": 1, "valid": 2, "test": 3}


@dataclass(frozen=True)
class SyntheticOptions:
    sentences: int = 20_000  # training sentences
    valid: int = 1_000
    test: int = 1_000
    seed: int = 0
    grammar: str = "english"  # a built-in name or a .grammar file
    max_words: int = 40
    normalization: Normalization = Normalization()

    def check(self) -> None:
        for name in ("sentences", "valid", "test"):
            if getattr(self, name) < 1:
                raise ConfigError("must be at least 1", setting=name)
        if self.max_words < 2:
            raise ConfigError("must be at least 2", setting="max_words")


def split_rng(seed: int, split: str) -> random.Random:
    return random.Random(seed * 7919 + SPLIT_STREAM[split])


def preprocess_synthetic(
    out: str, options: SyntheticOptions, force: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Sample the three splits from the grammar and write the dataset; returns the manifest."""
    options.check()
    grammar = load_grammar(options.grammar)
    check_limits(grammar, options.max_words)  # before anything is written
    sizes = {"train": options.sentences, "valid": options.valid, "test": options.test}
    total = sum(sizes.values())
    done = 0
    norm = options.normalization
    # the text keeps the trees' words (cased like test.trees, so a parse of test.txt scores
    # against it word for word); training and scoring normalise it on read
    as_written = Normalization(lowercase=False, digits=None, word_tags=norm.word_tags)
    with DatasetWriter(out, force) as writer:
        splits = SplitWriter(writer, normalize_on_read=norm)
        for split, size in sizes.items():
            rng = split_rng(options.seed, split)
            chunk: list[tuple[str | None, str]] = []
            deps: list[DepTree] = []
            for k in range(size):
                s = sample(grammar, rng, options.max_words)
                line = as_written.line((t, w) for w, t in s.tree.pos())
                chunk.append((s.tree.to_string(), line))
                # a draw without words (punctuation alone) is dropped from the text and the
                # trees: its dependencies go with it, or the gold files would not pair
                if split != "train" and line:
                    deps.append(DepTree(tuple(s.words), s.heads, tuple(s.tree.tags()), s.labels))
                if len(chunk) == 2000 or k == size - 1:
                    splits.add_sentences(split, chunk)
                    if deps:  # CoNLL-U lines, the blank line after each sentence included
                        writer.write_lines(
                            f"{split}.conllu", format_deps(deps, "conllu")[:-1].split("\n")
                        )
                    done += len(chunk)
                    chunk, deps = [], []
                    if progress:
                        progress("sampling sentences", done, total)
        splits.check(sizes, dict.fromkeys(sizes, grammar.source))
        vocab = splits.vocabulary(1, None)
        source = {
            "grammar": grammar.source,
            "sha256": _digest(grammar),
            "seed": options.seed,
            "max_words": options.max_words,
            "lexicon_words": len(grammar.words()),
        }
        data = manifest(
            "synthetic",
            source,
            {k: {"sentences": v} for k, v in sizes.items()},
            norm,
            vocab,
            splits,
            {"gold_dependencies": "grammar heads (Stanford basic style), {valid,test}.conllu"},
        )
        writer.finish(data, vocab)
    return data


def _digest(grammar: Grammar) -> str:
    """A fingerprint of what the grammar generates (rules, aliases, lexicon and weights)."""
    h = hashlib.sha256()
    for table in (grammar.rules, grammar.aliases, grammar.lexicon):
        for symbol in sorted(table):
            c = table[symbol]
            h.update(repr((symbol, c.items, c.weights)).encode())
    h.update(repr((grammar.start, grammar.zipf)).encode())
    return h.hexdigest()
