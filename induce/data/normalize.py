"""Word normalisation, recorded in every dataset manifest and applied the same way by
``preprocess``, ``parse`` and ``evaluate``: a word-tag filter, lower-casing, digit runs as ``N``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from induce.data.errors import ConfigError

DIGITS = re.compile(r"[0-9]+")  # the digit rule: each run of ASCII digits is one symbol
# Kim et al.'s number rule (compound-pcfg process_ptb.py: re.sub('[0-9]{1,}([,.]?[0-9]*)*',
# 'N', w)): a number with its separators is one symbol.  The official pattern matches the
# same strings as this one (its group repeats over any run of digits, commas and points),
# without the nested quantifier's backtracking.
NUMBERS = re.compile(r"[0-9]+[0-9,.]*")
# Mikolov's text (ptb.{train,valid,test}.txt): a token that is a number, digits with points,
# commas, slashes (1\/2), colons (2:30) or hyphens (1989-90) between or around them, is one
# N, and so is "%"; digits inside a word stay ("190-point", "30-year").  Found by aligning
# his ptb.valid.txt with WSJ section 22 (docs/guide/preprocess.md); tokens are the spaces'.
MIKOLOV_NUMBERS = re.compile(r"(?<![^ ])(?:[0-9.,\\/:-]*[0-9][0-9.,\\/:-]*|%)(?![^ ])")
NUMBER_RULES = {"runs": DIGITS, "whole": NUMBERS, "mikolov": MIKOLOV_NUMBERS}
EMPTY_TAGS = frozenset(("-NONE-",))  # traces and other empty elements are never words
ALL_TAGS = "all"  # the tag set name meaning "every token but empty elements"


def load_tagset(name: str) -> frozenset[str] | None:
    """The tags that mark words (``resources/tagsets.yaml``); ``None`` for ``all``."""
    if name == ALL_TAGS:
        return None
    from induce.data.config import load_resource_yaml

    tagsets = load_resource_yaml("tagsets.yaml")
    if name not in tagsets:
        raise ConfigError(
            f"unknown tag set {name!r}; choose from {', '.join(sorted(tagsets))} or {ALL_TAGS}"
        )
    return frozenset(tagsets[name])


def is_upos_tagset(tags: frozenset[str] | None) -> bool:
    """Whether a tag set names Universal POS tags only (``ud_word_tags``): a CoNLL-U file is
    then filtered by its UPOS column, not by XPOS (where English treebanks hold PTB tags,
    which no UPOS name matches)."""
    return tags is not None and tags <= (load_tagset("ud_word_tags") or frozenset()) | {"PUNCT"}


@dataclass(frozen=True)
class Normalization:
    """``word_tags``: keep only words whose tag is in this set (``None``: all but empty
    elements such as ``-NONE-`` traces);
    ``lowercase``; ``digits``: replace numbers by this (``None``: keep); ``numbers``: what
    one replacement covers, ``runs`` each run of ASCII digits (the StructFormer/UDGN readers:
    ``1,000`` is ``N,N``), ``whole`` a number with its commas and points (the PCFG papers'
    rule: ``1,000`` is ``N``) or ``mikolov`` a token that is a number, and ``%`` (Mikolov's
    text: ``1\\/2`` and ``%`` are ``N``, ``30-year`` stays)."""

    lowercase: bool = True
    digits: str | None = "N"
    word_tags: frozenset[str] | None = None
    tagset: str | None = None  # the name of ``word_tags`` in resources/tagsets.yaml
    numbers: str = "runs"

    def __post_init__(self) -> None:
        if self.numbers not in NUMBER_RULES:
            raise ConfigError(
                f"must be one of {', '.join(NUMBER_RULES)}, not {self.numbers!r}",
                setting="numbers",
            )

    def words(self, words: Sequence[str]) -> list[str]:
        """Normalise words (no tag filter).  Works on the joined sentence: C speed."""
        if not words:
            return []
        text = " ".join(words)
        if self.lowercase:
            text = text.lower()
        if self.digits is not None:
            text = NUMBER_RULES[self.numbers].sub(self.digits, text)
        return text.split(" ")

    def tagged(self, pairs: Iterable[tuple[str, str]]) -> list[str]:
        """Filter ``(tag, word)`` pairs by tag, then normalise the words."""
        line = self.line(pairs)
        return line.split(" ") if line else []

    def line(self, pairs: Iterable[tuple[str, str]]) -> str:
        """The kept, normalised words of ``(tag, word)`` pairs joined by spaces (the fast
        path of preprocessing: string operations on the whole sentence)."""
        tags = self.word_tags
        text = " ".join(
            [w for t, w in pairs if t not in EMPTY_TAGS]
            if tags is None
            else [w for t, w in pairs if t in tags]
        )
        if self.lowercase:
            text = text.lower()
        if self.digits is not None:
            text = NUMBER_RULES[self.numbers].sub(self.digits, text)
        return text

    def to_dict(self) -> dict:
        out = asdict(self)
        out["word_tags"] = None if self.word_tags is None else sorted(self.word_tags)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Normalization:
        tags = data.get("word_tags")
        return cls(
            lowercase=bool(data.get("lowercase", True)),
            digits=data.get("digits"),
            word_tags=None if tags is None else frozenset(tags),
            tagset=data.get("tagset"),
            numbers=str(data.get("numbers", "runs")),  # absent from older manifests
        )


def is_punctuation(token: str) -> bool:
    """A token made only of Unicode punctuation and symbol characters."""
    import unicodedata

    return bool(token) and all(unicodedata.category(c)[0] in "PS" for c in token)
