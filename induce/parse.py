"""``induce parse``: induced trees for any text with a trained model.

Input: raw text one sentence per line (tokenised by nltk's rule-based Penn Treebank
tokenizer, which needs no downloaded data), pre-tokenised text, or CoNLL-U (HEAD/DEPREL are
filled in, every other column and comment is kept).  Words are normalised as the model's
dataset was (lower-case, digits, ``<unk>``); the original tokens are written back.

Punctuation policy.  A token made only of punctuation or symbol characters that is not in
the model's vocabulary (the model never saw it: the PTB word-tag filter removed it) is not
given to the model.  ``attach`` (default): it is attached to the nearest word before it (after
it at the start of a sentence) with the label ``punct``, and in trees it joins that word's
leaf; ``drop``: it is left out of the output (not allowed for CoNLL-U, whose tokens all stay).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, get_args

from induce.data.errors import ConfigError, InputError
from induce.data.normalize import is_punctuation
from induce.data.ptb import leaf_token
from induce.data.types import Tree
from induce.parse_input import (
    INPUTS,
    InputKind,
    Prefetched,
    Sentence,
    iter_sentences,
    read_sentences,
)
from induce.parse_output import FORMATS, Format, Parsed, format_parsed, page_frame
from induce.runs.directory import open_run

if TYPE_CHECKING:  # torch is loaded when a Parser is made, not by importing this module
    from induce.decode.scores import Scores

Punct = Literal["attach", "drop"]

__all__ = [
    "FORMATS",
    "Format",
    "INPUTS",
    "InputKind",
    "Parsed",
    "Parser",
    "Sentence",
    "format_parsed",
    "page_frame",
    "is_punctuation",
    "iter_sentences",
    "Prefetched",
    "read_sentences",
]


class Parser:
    """A trained run, ready to parse batches of sentences: its reader
    (:mod:`induce.runs.readers`) gives each sentence's scores, read out here the same way
    for every architecture."""

    def __init__(
        self,
        run_path: str,
        device: str = "auto",
        weights: str = "best",
        decoder: str | None = None,
        bf16: bool = False,
    ) -> None:
        """``bf16``: the model under bfloat16 autocast on CUDA or on a CPU with hardware
        bf16, fp32 elsewhere (trees may differ slightly from fp32; the parsers' scores
        themselves stay fp32)."""
        from induce.runs.readers import open_reader

        self.run = open_run(run_path)
        self.reader = open_reader(self.run, weights, device, bf16)
        scores_class = type(self.reader.model).scores_class
        assert scores_class is not None  # a reader refuses a model without a parser
        self.scores_class = scores_class
        # no decoder asked: the one the run's protocol reports with, else the model's default
        self.decoder = scores_class.check_decoder(
            decoder if decoder is not None else self.run.config.protocol.test_decoder
        )
        problem = self.reader.model.config.decoder_problem(self.decoder)
        if problem is not None:  # refused before any output (a grammar too large for viterbi)
            raise ConfigError(problem, setting="decoder")
        self.has_heads = scores_class.has_heads or self.reader.heads_by_rules
        self.rule_heads = False  # head-rule dependencies only where the output shows them
        # whether parses carry their trees: not for CoNLL-U, which shows heads alone, so
        # that a dependency parser skips its constituency read-out (UDGN: Eisner per batch)
        self.trees = True

    def check_format(self, fmt: str) -> None:
        """CoNLL-U needs dependencies: a model that induces only constituency trees has none."""
        self.rule_heads = self.reader.heads_by_rules and fmt in ("conllu", "tree", "html")
        self.trees = fmt != "conllu" or self.rule_heads  # head rules read the tree
        if fmt == "conllu" and not self.has_heads:
            raise ConfigError(
                f"conllu needs dependencies, and a {self.run.config.arch} model induces "
                "constituency trees only: use ptb or jsonl",
                setting="format",
            )

    def check_options(self, punct: str, scores: bool) -> None:
        """Refuse, before any output, what this parser cannot do rather than ignore it: a
        model that reads every token (a chart parser) writes trees of them all."""
        if punct not in get_args(Punct):
            raise ConfigError("must be attach or drop", setting="punct")
        if punct == "drop" and self.reader.reads_punctuation:
            raise ConfigError(
                f"a {self.run.config.arch} model parses punctuation as its treebank does: "
                "drop is for the induced models, whose trees leave punctuation out",
                setting="punct",
            )

    def parse(
        self,
        sentences: list[Sentence],
        punct: Punct = "attach",
        scores: bool = False,
        batch_tokens: int | None = None,
        source: str = "<input>",
    ) -> list[Parsed]:
        """Parse ``sentences``; ``scores``: keep the parser's scores of each sentence;
        ``batch_tokens``: tokens per batch (``None``: the run's ``data.eval_batch_tokens``)."""
        batch_tokens = self._budget(batch_tokens)
        self.check_options(punct, scores)
        words_of = [self._words(s, source) for s in sentences]
        order = [k for k, w in enumerate(words_of) if w]
        outputs: dict[int, Scores] = {}
        found = self.reader.scores(
            [sentences[k] for k in order], [words_of[k] for k in order], batch_tokens
        )
        try:
            for index, row in found:
                outputs[order[index]] = row
        except RuntimeError as err:  # torch.OutOfMemoryError is one
            if not _out_of_memory(err):
                raise
            longest = max(sentences, key=lambda s: len(s.tokens))
            raise InputError(
                f"out of memory parsing sentences of up to {len(longest.tokens)} tokens (the "
                "longest of those parsed together, here; a grammar's chart grows with the "
                "cube of the length): parse fewer tokens at a time, or leave the longest "
                "sentences out",
                source,
                longest.line,
            ) from None
        return [self._one(s, outputs.get(k), punct, scores) for k, s in enumerate(sentences)]

    def parse_stream(
        self,
        sentences: Iterable[Sentence],
        punct: Punct = "attach",
        scores: bool = False,
        batch_tokens: int | None = None,
        source: str = "<input>",
        progress: Callable[[int], None] | None = None,
        pending: Callable[[], bool] | None = None,
    ) -> Iterator[Parsed]:
        """Parse sentences as they come, in input order: windows of about four batches
        (the first of one batch, so that results start at once) are sorted by length,
        parsed and given back; memory does not grow with the input.  ``progress(done)`` is
        called after each window.  ``pending()``: whether the next sentence is at hand
        (:class:`~induce.parse_input.Prefetched`); when it is not, the window so far is
        parsed at once rather than waiting for the input to fill it."""
        batch_tokens = self._budget(batch_tokens)  # before the first sentence is read
        window: list[Sentence] = []
        tokens, budget, done = 0, batch_tokens, 0
        for sentence in itertools.chain(sentences, [None]):
            if sentence is not None:
                window.append(sentence)
                tokens += len(sentence.tokens) + 1
                if tokens < budget and (pending is None or pending()):
                    continue
            if window:
                yield from self.parse(window, punct, scores, batch_tokens, source)
                done += len(window)
                if progress is not None:
                    progress(done)
            window, tokens, budget = [], 0, 4 * batch_tokens

    def _budget(self, batch_tokens: int | None) -> int:
        """``batch_tokens``, or the run's evaluation batches (the PCFG presets' are small:
        a grammar's charts grow with the batch much faster than an encoder's states)."""
        if batch_tokens is None:
            batch_tokens = self.run.config.data.eval_batch_tokens
        _check_budget(batch_tokens)
        return batch_tokens

    def _words(self, s: Sentence, source: str) -> list[str]:
        """The words the model reads; :class:`InputError` at the sentence's line when there
        are more than it can read."""
        words = self.reader.words(s)
        limit = self.reader.model.max_words
        if limit is not None and len(words) > limit:
            raise InputError(
                f"a sentence of {len(words)} words is longer than the model can read ({limit})",
                source,
                s.line,
            )
        return words

    def _one(self, s: Sentence, scores: Scores | None, punct: Punct, want: bool) -> Parsed:
        keep = [k for k, p in enumerate(s.punct) if not p]
        shown = [leaf_token(s.tokens[k]) for k in keep]
        if s.conllu is not None and punct == "drop":
            raise ConfigError("drop would remove CoNLL-U tokens; use attach", setting="punct")
        # the dependencies of a sentence without words: none, or none to give
        none: list[int] | None = [] if self.scores_class.has_heads or self.rule_heads else None
        if scores is None:
            return _with_punctuation(s, keep, none, None, None, punct, {} if want else None)
        extra = scores.to_json() if want else None
        if not self.trees:  # CoNLL-U: the heads alone
            heads = scores.read_heads(shown, self.decoder)
            return _with_punctuation(s, keep, heads, None, None, punct, extra)
        parse = scores.read_out(shown, self.decoder)
        heads, labels = parse.heads, None
        if self.rule_heads and parse.tree is not None:
            from induce.runs.chart import rule_heads

            found = rule_heads(parse.tree)
            heads, labels = found.heads, found.labels
        return _with_punctuation(s, keep, heads, labels, parse.tree, punct, extra)


def _with_punctuation(
    s: Sentence,
    keep: list[int],
    heads: list[int] | None,
    labels: list[str] | None,
    tree: Tree | None,
    punct: str,
    extra: dict[str, Any] | None,
) -> Parsed:
    """The parse of the words ``keep`` over all of ``s``'s tokens (``punct: attach``) or over
    the words alone (``drop``); ``heads=None`` for a model without dependencies, ``labels``
    (``None``: ``root`` and ``dep``) those of head rules."""
    if labels is None and heads is not None:
        labels = ["root" if h == 0 else "dep" for h in heads]
    if punct == "drop":
        s = Sentence([s.tokens[k] for k in keep], s.line, s.text, None, [False] * len(keep))
        return Parsed(s, None if heads is None else list(heads), labels, tree or None, extra)
    n = len(s.tokens)
    host = _hosts(n, keep)
    all_heads, all_labels = (
        (None, None) if heads is None or labels is None else _attach(n, keep, heads, labels, host)
    )
    whole = _tree_with_punctuation(s, keep, tree, host) if n else None
    return Parsed(s, all_heads, all_labels, whole, extra)


def _hosts(n: int, keep: list[int]) -> dict[int, int]:
    """Each punctuation token's host word (the word before it, else the first after it),
    and ``-1`` for every word that hosts punctuation; tokens of a sentence without words are
    not in it."""
    host: dict[int, int] = {}
    words = set(keep)
    for k in range(n):
        if k in words:
            continue
        before = [j for j in keep if j < k]
        after = [j for j in keep if j > k]
        target = before[-1] if before else (after[0] if after else None)
        if target is not None:
            host.setdefault(target, -1)
            host[k] = target
    return host


def _attach(
    n: int, keep: list[int], heads: list[int], labels: list[str], host: dict[int, int]
) -> tuple[list[int], list[str]]:
    """Heads and labels over all tokens: the words' own, each punctuation token attached to
    its host word, and a chain from the first token where there is no word at all."""
    all_heads = [0] * n
    all_labels = ["punct"] * n
    for i, k in enumerate(keep):
        all_heads[k] = keep[heads[i] - 1] + 1 if heads[i] else 0
        all_labels[k] = labels[i]
    words = set(keep)
    for k in range(n):
        if k in words:
            continue
        if k in host:
            all_heads[k] = host[k] + 1
        else:  # no word at all
            all_heads[k] = 0 if k == 0 else 1
            all_labels[k] = "root" if k == 0 else "punct"
    return all_heads, all_labels


def _tree_with_punctuation(
    s: Sentence, keep: list[int], tree: Tree | None, host: dict[int, int]
) -> Tree:
    """The tree over all tokens: each punctuation token joins its host word's leaf."""
    n = len(s.tokens)
    if tree is None:
        leaves = [Tree("X", [leaf_token(t)]) for t in s.tokens]
        return Tree("X", list(leaves)) if n > 1 else leaves[0]
    leaves = [node for node in tree.preterminals()]
    groups: dict[int, list[int]] = {k: [k] for k in keep}
    for k, target in host.items():
        if k != target and target >= 0 and k not in groups:
            groups[target].append(k)
    for leaf, k in zip(leaves, keep):
        members = sorted(groups[k])
        if len(members) > 1:
            leaf.children = [Tree("X", [leaf_token(s.tokens[m])]) for m in members]
    return tree


def _out_of_memory(err: RuntimeError) -> bool:
    """Whether ``err`` is an allocation that failed (CUDA's, or the CPU allocator's)."""
    text = str(err)
    return type(err).__name__ == "OutOfMemoryError" or "can't allocate memory" in text


def _check_budget(batch_tokens: int) -> None:
    if isinstance(batch_tokens, bool) or not isinstance(batch_tokens, int) or batch_tokens < 1:
        raise ConfigError(f"must be 1 or more, got {batch_tokens!r}", setting="batch_tokens")
