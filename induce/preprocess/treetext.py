"""Streaming treebank reading for preprocessing: tree texts and their (tag, word) leaves.

Preprocessing touches every tree of a corpus once and only needs each tree's leaves and its
text on one line, so it does not build tree objects.  Clean files are read whole by
:mod:`induce.preprocess.treescan`; any other file is cut into trees by bracket
depth, checked with the reader's rules (balanced, nothing outside brackets, a word alone under
its tag) and its preterminals are read with one regular expression (C-level string work,
about three times the speed of building trees).  A property test checks that it reads the same
trees and leaves as :func:`induce.data.ptb.parse_trees` with blank lines as separators (the
LDC layout): several trees on a line are separate trees, ``*x*`` header lines are dropped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from induce.data.errors import InputError
from induce.data.reading import decode_utf8
from induce.preprocess.treescan import CLASSES, scan_clean_file

# On text whose whitespace is collapsed to single spaces (all the checks below assume it).
PRETERMINAL = re.compile(r"\( ?([^ ()]+) ([^ ()]+) ?\)")
_STEP = {ord("("): 1, ord(")"): -1}
_NOT_PAREN_BYTES = bytes(b for b in range(256) if b not in b"()")
_COREF = re.compile(r"(\([^\s()#]+)#\d+")  # BLLIP labels such as NP-SBJ#2
# "( word)": on one line a word with the empty tag, with its ")" on a later line the label of
# an empty bracket (the full reader's rule, line by line); collapsing whitespace would lose
# which, so such trees go to the full reader.
EMPTY_TAG_ON_A_LINE = re.compile(r"\([^\S\n]+[^\s()]+\s*\)")
_BRACKET = re.compile(r"[()]")
_OPEN_NEWLINE = re.compile(r"\([^\S\n]*\n\s*")


@dataclass
class TreeText:
    """One tree: where it starts, its text on one line, its ``(tag, word)`` leaves."""

    path: str
    line: int
    text: str
    leaves: list[tuple[str, str]]


@dataclass
class ReadStats:
    """What reading a set of files met: trees, skipped bad trees (with the first reason),
    and the SHA-256 of every file (in reading order)."""

    trees: int = 0
    skipped: int = 0
    first_problem: str = ""
    checksums: list[tuple[str, str]] = field(default_factory=list)

    def digest(self) -> str:
        return combined_digest(self.checksums)


def combined_digest(checksums: list[tuple[str, str]]) -> str:
    """One SHA-256 over files' names and SHA-256 digests (in order)."""
    h = hashlib.sha256()
    for name, digest in checksums:
        h.update(f"{name}\t{digest}\n".encode())
    return h.hexdigest()


def read_file(path: str | Path, stats: ReadStats) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(path)) from None
    stats.checksums.append((Path(path).name, hashlib.sha256(data).hexdigest()))
    return decode_utf8(data, str(path))


def iter_trees(
    path: str | Path, stats: ReadStats, skip_bad: bool = False, strip_coref: bool = False
) -> Iterator[TreeText]:
    """The trees of one file, multi-line LDC style or one per line; blank lines and ``*x*``
    header lines between trees are ignored, several trees on a line are separate trees, and
    a tree without words comes out with no leaves.  A malformed tree raises
    :class:`InputError` with file and line, or is counted and skipped with ``skip_bad``."""
    name = str(path)
    whole = read_file(path, stats)
    clean = scan_clean_file(whole, PRETERMINAL)
    if clean is not None:
        for start, part, leaves in clean:
            if strip_coref and "#" in part:
                part = _COREF.sub(r"\1", part)
            stats.trees += 1
            yield TreeText(name, start, part, leaves)
        return
    for start, text, problem in _chunks(whole):
        if not problem and EMPTY_TAG_ON_A_LINE.search(text):
            # Rare: whether a token is a label or a word depends on line breaks, which the
            # collapsed text loses.  The full reader knows the rule.
            yield from _read_exactly(name, start, text, stats, skip_bad, strip_coref)
        else:
            yield from _read_chunk(name, start, text, problem, stats, skip_bad, strip_coref)


def _read_chunk(
    name: str,
    start: int,
    text: str,
    problem: str,
    stats: ReadStats,
    skip_bad: bool,
    strip_coref: bool,
) -> Iterator[TreeText]:
    """The trees of one tree-sized piece of a file (``problem``: why the piece as a whole is
    malformed, or ``""``), each checked with :func:`_check`."""
    parts: list[str] = []
    original = text
    if not problem:
        if not (text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "):
            # LDC files: many lines, indented.  A label on the line after its "(" is still a
            # label ("( word)" on one line is a word with the empty tag).
            text = " ".join(_OPEN_NEWLINE.sub("(", text).split())
        parts = _split_trees(text)
    for part in parts or [""]:
        leaves: list[tuple[str, str]] = []
        if not problem:
            problem, leaves = _check(part)
        if problem:
            if not skip_bad:
                raise _exactly(name, start, original, problem)
            stats.skipped += 1
            if not stats.first_problem:
                exact = _exactly(name, start, original, problem)
                stats.first_problem = f"{name}:{exact.line}: {exact.reason}"
            problem = ""
            continue
        if strip_coref and "#" in part:
            part = _COREF.sub(r"\1", part)
        stats.trees += 1
        yield TreeText(name, start, part, leaves)


def _exactly(name: str, start: int, text: str, problem: str) -> InputError:
    """The error of a malformed piece of a file that starts on line ``start``: the full
    reader's, which names the line of the fault (a misplaced word on line 26 of a tree that
    opens on line 2), when it finds one; else ``problem`` at the piece's first line."""
    from induce.data.ptb import parse_trees

    if text:
        try:
            parse_trees(text, name, blank_lines_are_sentences=False)
        except InputError as err:
            return InputError(err.reason, name, start + (err.line or 1) - 1)
    return InputError(problem, name, start)


_COLUMN_ZERO = re.compile(r"\n(?=\S)")


def _chunks(text: str) -> Iterator[tuple[int, str, str]]:
    """``(first line, text, problem)`` of each tree-sized piece of a file.

    The file is cut where a line starts at column 0 (trees start there; LDC files indent the
    rest of a tree) and pieces are joined until their brackets balance: a few C-level string
    operations per tree instead of per line.
    """
    pending: list[str] = []
    depth = 0
    start = line = 1
    for piece in _pieces(text):
        piece_line = line
        line += piece.count("\n") + 1
        if not pending:
            head = piece.lstrip()
            if not head or head.startswith("*x*"):  # blank, or a Treebank-2 header line
                continue
            piece_line += piece[: len(piece) - len(head)].count("\n")
            if not head.startswith("("):
                yield piece_line, "", f"text outside brackets: {head.split()[0][:40]!r}"
                continue
            piece, start = head, piece_line
        pending.append(piece)
        depth += piece.count("(") - piece.count(")")
        if depth > 0:
            continue
        chunk = pending[0] if len(pending) == 1 else "\n".join(pending)
        pending = []
        if depth < 0:
            depth = 0
            yield start, chunk, "unbalanced ')': more closing than opening brackets"
        else:
            yield start, chunk, ""
    if pending:
        yield start, "", "unbalanced '(': the tree is not closed at the end of the file"


def _pieces(text: str) -> Iterator[str]:
    """The file cut before every line that starts at column 0; a piece holding ``*x*`` is cut
    into lines, since a header line may follow a tree's last line (the full reader drops any
    line that starts with ``*x*`` outside a tree)."""
    for piece in _COLUMN_ZERO.split(text):
        if "*x*" in piece:
            yield from piece.split("\n")
        else:
            yield piece


def _split_trees(text: str) -> list[str]:
    """A balanced piece of text as its top-level trees (usually one).  The quick test keeps
    only the brackets (UTF-8 never puts their bytes inside other characters) and checks that
    the depth stays positive until the last one."""
    parens = text.encode("utf-8").translate(None, _NOT_PAREN_BYTES)
    if len(parens) <= 2 or min(accumulate(map(_STEP.__getitem__, parens[:-1]))) >= 1:
        return [text]
    parts, depth, begin = [], 0, 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() == "(" else -1
        if depth == 0:
            parts.append(text[begin : match.end()].strip())
            begin = match.end()
    rest = text[begin:].strip()
    if rest:
        parts.append(rest)
    return parts


def _check(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Why ``text`` (balanced overall, whitespace collapsed to single spaces) is not exactly
    one well-formed tree (``""`` if it is), and its ``(tag, word)`` leaves.  String methods and
    C-level iteration only."""
    if not text.startswith("(") or not text.endswith(")"):
        outside = text.split("(")[0] if not text.startswith("(") else text.rsplit(")", 1)[1]
        return f"text outside brackets: {outside.strip()[:40]!r}", []
    # One tree: the depth stays positive until the last bracket closes the first.  UTF-8
    # never puts the bytes of "(" and ")" inside other characters, so bytes.translate can
    # keep just the brackets.
    data = text.encode("utf-8")
    # Every token is a label (right after "(") or the word of a "(TAG word)": count them.
    # Tokens start after a bracket or a space, labels right after "(" (maybe one space).
    leaves = PRETERMINAL.findall(text)
    classes = data.translate(CLASSES)
    tokens = classes.count(b"ot") + classes.count(b"st") + classes.count(b"ct")
    labels = classes.count(b"ot") + classes.count(b"ost")
    if tokens != labels + len(leaves):
        return (
            "a word beside other children; words must sit alone under a tag, as in (NN dog)"
        ), []
    return "", leaves


def _read_exactly(
    name: str, start: int, text: str, stats: ReadStats, skip_bad: bool, strip_coref: bool
) -> Iterator[TreeText]:
    """The trees of one balanced chunk read by the full reader, written back on one line."""
    from induce.data.ptb import parse_trees

    try:
        trees = parse_trees(text, name, blank_lines_are_sentences=False).trees
    except InputError as err:
        problem = err.reason
        if not skip_bad:
            raise InputError(problem, name, start + (err.line or 1) - 1) from None
        stats.skipped += 1
        stats.first_problem = stats.first_problem or f"{name}:{start}: {problem}"
        return
    for tree in trees:
        if tree is None:
            continue
        part = tree.to_string()
        if strip_coref and "#" in part:
            part = _COREF.sub(r"\1", part)
        stats.trees += 1
        yield TreeText(name, start, part, [(t, w) for w, t in tree.pos()])
