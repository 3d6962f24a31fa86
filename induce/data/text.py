"""Plain text: one sentence per line, tokens separated by whitespace."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from induce.data.files import atomic_write
from induce.data.reading import read_text


@dataclass
class TextFile:
    """``sentences[k]`` comes from line ``lines[k]``; blank lines are empty sentences unless
    skipped when reading."""

    path: str
    sentences: list[list[str]]
    lines: list[int]

    def __len__(self) -> int:
        return len(self.sentences)


def parse_text(text: str, path: str = "<string>", skip_blank: bool = False) -> TextFile:
    pieces = text.split("\n")
    if pieces and pieces[-1] == "":
        pieces.pop()  # the text after the final newline is not a line
    sentences, lines = [], []
    for number, line in enumerate(pieces, 1):
        tokens = line.split()
        if tokens or not skip_blank:
            sentences.append(tokens)
            lines.append(number)
    return TextFile(path, sentences, lines)


def read_sentences(path: str | os.PathLike[str], skip_blank: bool = False) -> TextFile:
    """Read ``path`` (``-`` = standard input) as whitespace-tokenised sentences."""
    return parse_text(read_text(path), str(path), skip_blank)


def format_sentences(sentences: Iterable[Iterable[str]]) -> str:
    return "".join(" ".join(tokens) + "\n" for tokens in sentences)


def write_sentences(path: str | os.PathLike[str], sentences: Iterable[Iterable[str]]) -> None:
    atomic_write(path, format_sentences(sentences))
