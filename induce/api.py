"""The Python API: a trained run as an object (``induce.load``).

>>> model = induce.load("runs/chart-demo")          # doctest: +SKIP
>>> [p.tree.to_string() for p in model.parse([["cars", "see", "his", "map"]])]  # doctest: +SKIP
['(S (NP (NNS cars)) (VP (VBP see) (NP (PRP$ his) (NN map))))']

``docs/api.md`` walks through it with examples the tests run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from induce.data.errors import ConfigError, InputError
from induce.data.types import Tree
from induce.parse import Parsed, Parser, Sentence, format_parsed

__all__ = ["LoadedRun", "Parse", "load"]

PYTHON = "<python>"  # where sentences given in Python are, in error messages
# what splits a line or a CoNLL-U row: a token holding one would break every output
_LINE_OR_COLUMN = re.compile("[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


@dataclass
class Parse:
    """One sentence's parse: its words, its tree (labelled for a chart parser; ``None`` for
    an empty sentence), dependency heads (0 = root, 1-based) with labels where the model
    gives them (a chart parser: by the penn2malt head rules), and the model's scores.

    ``distances``: the syntactic distances between adjacent words the model read
    (StructFormer's, Combiner's merge order; punctuation the model never saw is not among
    them), ``None`` for a model without distances (UDGN, a chart parser); ``scores``: every
    score the model gives for the sentence (``heights``, ``parents``, ``roots``, a chart
    parser's ``spans``, ...)."""

    words: list[str]
    tree: Tree | None
    heads: list[int] | None
    labels: list[str] | None
    # every score of the sentence (n x n parents...): too much for a repr in a notebook
    scores: dict[str, Any] = field(default_factory=dict, repr=False)
    _parsed: Parsed | None = field(default=None, repr=False, compare=False)

    @property
    def distances(self) -> list[float] | None:
        value = self.scores.get("distances")
        return list(value) if value is not None else None

    def to_ptb(self) -> str:
        """The tree in PTB brackets, on one line (``""`` for an empty sentence)."""
        return self.tree.to_string() if self.tree is not None else ""

    def to_conllu(self) -> str:
        """The sentence as a CoNLL-U block (``induce parse --format conllu``); needs heads."""
        if self._parsed is None:
            raise ValueError("this parse was not made by a model")
        return format_parsed([self._parsed], "conllu")


class LoadedRun:
    """A run directory's model, ready to parse."""

    def __init__(self, run_dir: str | None, weights: str = "best", device: str = "auto") -> None:
        if run_dir is None:
            from induce.runs import latest_run

            run_dir = str(latest_run())
        self.path = run_dir
        self.parser = Parser(run_dir, device, weights)
        self.parser.check_format("conllu" if self.parser.has_heads else "ptb")
        self.parser.trees = True  # a Parse has its tree whatever the heads come from

    def __repr__(self) -> str:
        return f"LoadedRun({self.path!r}, arch={self.parser.run.config.arch!r})"

    def parse(
        self,
        sentences: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
        normalized: bool = False,
    ) -> list[Parse]:
        """Parse sentences given as token lists (or strings split on spaces); ``tags``:
        the words' POS tags, kept in a chart parser's trees; ``normalized``: the tokens are
        model tokens already (a dataset's sentences), read as they stand rather than
        normalised as the model's dataset was."""
        if isinstance(sentences, str):  # iterated, it would be a sentence per character
            raise ConfigError(
                "takes a list of sentences: a sentence alone is [sentence]", setting="sentences"
            )
        given = _listed(sentences, "sentences")
        tag_lists = [None] * len(given) if tags is None else _listed(tags, "tags")
        if len(tag_lists) != len(given):
            raise ConfigError(
                f"gives {len(tag_lists)} tag lists for {len(given)} sentences", setting="tags"
            )
        items = [
            _sentence(k, sentence, sentence_tags, normalized)
            for k, (sentence, sentence_tags) in enumerate(zip(given, tag_lists))
        ]
        out = []
        for parsed in self.parser.parse(items, scores=True, source=PYTHON):
            words = parsed.sentence.tokens
            out.append(
                Parse(words, parsed.tree, parsed.heads, parsed.labels, parsed.scores or {}, parsed)
            )
        return out


def _sentence(
    k: int, sentence: str | Sequence[str], tags: Sequence[str] | None, normalized: bool
) -> Sentence:
    """Sentence ``k`` (0-based) of :meth:`LoadedRun.parse`, its tokens and tags checked."""
    try:
        tokens = sentence.split() if isinstance(sentence, str) else list(sentence)
    except TypeError:  # None, a number: not a sentence
        raise InputError(
            "a sentence that is neither text nor a list of tokens", PYTHON, k + 1
        ) from None
    try:
        words_tags = None if tags is None else list(tags)
    except TypeError:
        raise InputError("tags that are not a list of tags", PYTHON, k + 1) from None
    if not all(isinstance(token, str) for token in tokens):
        raise InputError("a token that is not text", PYTHON, k + 1)
    if any(not token.strip() for token in tokens):  # an empty word would write "(X )"
        raise InputError("an empty token", PYTHON, k + 1)
    if any(_LINE_OR_COLUMN.search(token) for token in tokens):
        raise InputError(
            "a token holding a tab or a line break, which no output can hold", PYTHON, k + 1
        )
    if words_tags is not None and len(words_tags) != len(tokens):
        raise InputError(f"{len(words_tags)} tags for {len(tokens)} tokens", PYTHON, k + 1)
    if words_tags is not None and not all(
        isinstance(tag, str) and tag.strip() and not _LINE_OR_COLUMN.search(tag)
        for tag in words_tags
    ):
        raise InputError("a tag that is not a word of text", PYTHON, k + 1)
    return Sentence(tokens, k + 1, " ".join(tokens), tags=words_tags, normalized=normalized)


def _listed(items: Any, setting: str) -> list[Any]:
    """``items`` as a list; what is no sequence (``None``, a number) is refused."""
    try:
        return list(items)
    except TypeError:
        raise ConfigError(f"takes a list, got {type(items).__name__}", setting=setting) from None


def load(run_dir: str | None = None, weights: str = "best", device: str = "auto") -> LoadedRun:
    """The run in ``run_dir`` (the most recent run of ``induce train`` when ``None``;
    ``weights``: ``best`` or ``last``) on ``device``."""
    return LoadedRun(run_dir, weights, device)
