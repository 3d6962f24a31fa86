"""Penn Treebank bracketed trees: reading and writing.

Two file shapes are read, told apart automatically:

* **multi-line** files (LDC ``.mrg``): a tree may span many lines; blank lines only separate.
* **one tree per line** (no tree spans two lines): as in EVALB, every blank line before or
  between trees is an *empty sentence* (a parser's failed parse), kept as ``None`` so sentence
  numbers stay aligned.  Blank lines after the last tree are counted in
  ``TreeFile.trailing_blank_lines`` (they may be failed parses at the end of a prediction; the
  evaluator decides).

Labels and words are runs of characters other than whitespace and parentheses (EVALB's and
nltk's tokenisation).  A word must be the only child of its bracket, ``(TAG word)``; an
unlabelled outer bracket ``( (S ...) )`` or a ``(TOP ...)`` root is kept as it is (callers decide
whether it is a wrapper).  With ``labelled=False`` the text is an unlabelled bracketing such as
``((the cat) sat)``: every token after ``(`` is a word and words get the empty tag ``""``.

:func:`read_trees` reads a whole file at once (string methods over the whole text);
:func:`stream_trees` gives the same trees as the text comes (``induce parse --trees``).
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from induce.data.errors import InputError
from induce.data.files import atomic_write
from induce.data.progress import advance
from induce.data.ptb_reader import NO_LABEL, NO_WORD, TreeReader
from induce.data.reading import expand_inputs, iter_lines, read_text
from induce.data.types import Tree

TREE_SUFFIXES = (".mrg", ".trees", ".tree", ".txt", ".ptb")
# "( word)" within a line (the whole text is searched at once: no part matches a newline).
_EMPTY_TAG = re.compile(r"\([^\S\n]+([^\s()]+[^\S\n]*\))")
_EMPTY_TAG_MARK = "( " + NO_LABEL + r" \1"
# "(NP )" within a line: C EVALB reads a word "" tagged NP (a length mismatch, where a
# naive trace removal left it); "(NP)" is an empty bracket, as everywhere
_EMPTY_WORD = re.compile(r"\(([^\s()]+)[^\S\n]+\)")
_EMPTY_WORD_MARK = r"(\1 " + NO_WORD + ")"
_ASCII_BLANKS = " \t\r\f\v"  # C's isspace but the newline, which parts the lines
_ASCII_SPACE = re.compile(f"[{_ASCII_BLANKS}]+")
_SEPARATORS = "\x1c\x1d\x1e\x1f"  # split by str.split(), not by C's isspace


@dataclass
class TreeFile:
    """Trees read from one file: ``trees[k]`` starts on line ``lines[k]`` (1-based);
    ``None`` is an empty sentence (a blank line in a one-tree-per-line file)."""

    path: str
    trees: list[Tree | None]
    lines: list[int]
    sources: list[str] | None = None  # file of each tree, when read from a directory
    trailing_blank_lines: int = 0  # blank lines after the last tree (one-tree-per-line)

    def __len__(self) -> int:
        return len(self.trees)

    def pad_to(self, count: int) -> None:
        """Append empty sentences up to ``count`` (the trailing blank lines of a prediction)."""
        extra = count - len(self.trees)
        last = self.lines[-1] if self.lines else 0
        self.trees.extend([None] * extra)
        self.lines.extend(range(last + 1, last + 1 + extra))
        if self.sources:
            self.sources.extend(self.sources[-1:] * extra)

    def where(self, index: int) -> tuple[str, int]:
        """``(file, line)`` of tree ``index`` (0-based)."""
        source = self.sources[index] if self.sources else self.path
        return source, self.lines[index]


def parse_trees(
    text: str,
    path: str = "<string>",
    labelled: bool = True,
    blank_lines_are_sentences: bool = True,
    evalb: bool = False,
) -> TreeFile:
    """Parse every tree in ``text`` (see the module docstring for the accepted shapes).

    ``blank_lines_are_sentences=False`` treats blank lines as separators whatever the shape
    (used for directories of LDC files).  ``evalb``: read as C EVALB reads, where it parts
    from NLTK and the other readers: ``(NP )`` (a label, a space, no child) is the word
    ``""`` tagged ``NP``, not an empty bracket, and only ASCII whitespace separates tokens
    (C's ``isspace``: a no-break space inside ``1\u00a0000`` is part of the word).
    """
    # Trees hold no reference cycles; the cyclic collector only slows down building many
    # small objects (by 2x on WSJ-sized files), so it is paused while parsing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_trees(text, path, labelled, blank_lines_are_sentences, evalb)
    finally:
        if enabled:
            gc.enable()


def _parse_trees(
    text: str, path: str, labelled: bool, blank_lines_are_sentences: bool, evalb: bool
) -> TreeFile:
    marked = False
    if labelled:
        # "( word)" on one line: EVALB reads a word with the empty tag, not a label ("(word)"
        # is an empty bracket labelled "word").  Mark the missing label.
        text = _EMPTY_TAG.sub(_EMPTY_TAG_MARK, text)
        if evalb:
            text = _EMPTY_WORD.sub(_EMPTY_WORD_MARK, text)
        marked = NO_LABEL in text or (evalb and NO_WORD in text)
    # Whole-text string methods first (C speed), then one token list per line.
    spaced = text.replace("(", " ( ").replace(")", " ) ")
    if evalb and not (spaced.isascii() and not any(c in spaced for c in _SEPARATORS)):
        # str.split() also splits at U+00A0, U+2009..., and at ASCII's \x1c-\x1f
        token_lines = [_ASCII_SPACE.split(line.strip(_ASCII_BLANKS)) for line in spaced.split("\n")]
        token_lines = [tokens if tokens != [""] else [] for tokens in token_lines]
    else:
        token_lines = [line.split() for line in spaced.split("\n")]
    reader = TreeReader(path, labelled, marked)
    reader.token_lines = token_lines
    reader.read(token_lines)
    reader.finish()
    trees, starts, ends = reader.trees, reader.starts, reader.ends
    if not blank_lines_are_sentences or any(s != e for s, e in zip(starts, ends)):
        return TreeFile(path, list(trees), starts)
    # the text's lines: a final newline ends the last line (it starts no other), and an
    # empty text has none (not one blank line: an empty prediction is no failed parse)
    if text.endswith("\n") or not text:
        token_lines.pop()
    blank = [number for number, tokens in enumerate(token_lines, 1) if not tokens]
    out, lines, trailing = _one_tree_per_line(trees, starts, ends, blank, path)
    return TreeFile(path, out, lines, trailing_blank_lines=trailing)


def _one_tree_per_line(
    trees: list[Tree],
    starts: list[int],
    ends: list[int],
    blank: list[int],
    path: str,
    previous_end: int = 0,
) -> tuple[list[Tree | None], list[int], int]:
    """The trees of a one-tree-per-line text with an empty sentence (``None``) for every
    blank line before or between them, their lines, and the number of blank lines after the
    last tree.  ``blank``: the blank lines after line ``previous_end`` (where the tree before
    ``trees`` ends, if any), in order."""
    for k, start in enumerate(starts):
        if start == (ends[k - 1] if k else previous_end):
            raise InputError("several trees on one line in a one-tree-per-line file", path, start)
    out: list[Tree | None] = []
    lines: list[int] = []
    taken = 0  # blank lines placed so far
    for tree, start in zip(trees, starts):
        while taken < len(blank) and blank[taken] < start:
            out.append(None)
            lines.append(blank[taken])
            taken += 1
        out.append(tree)
        lines.append(start)
    return out, lines, len(blank) - taken


def read_trees(
    path: str | os.PathLike[str], labelled: bool = True, evalb: bool = False
) -> TreeFile:
    """Read a tree file, ``-`` for standard input, or a directory of tree files (sorted).

    In a directory (the LDC layout) blank lines always separate trees.  ``evalb``: see
    :func:`parse_trees`.
    """
    return _read_trees(path, labelled, (evalb,))[0]


def read_trees_twice(path: str | os.PathLike[str]) -> tuple[TreeFile, TreeFile]:
    """The trees of ``path`` as :func:`read_trees` reads them and as C EVALB does
    (``evalb=True``), each file read once (standard input or a pipe can be read only once)."""
    plain, as_evalb = _read_trees(path, True, (False, True))
    return plain, as_evalb


def stream_trees(
    path: str | os.PathLike[str], labelled: bool = True
) -> Iterator[tuple[str, int, Tree | None]]:
    """The trees of :func:`read_trees` as the text comes (``-``: standard input, or a
    directory's files in turn): ``(file, line, tree)``, ``None`` for an empty sentence.
    The same trees and lines; where a file holds several faults, the first by line (the
    whole-file reader checks its encoding first), after the trees before it.

    Whether a blank line of a file is an empty sentence depends on its shape, which a tree
    spanning lines decides: while none has, from the first blank line or shared line between
    trees on, the trees wait until one does (blank lines separate, as in a multi-line file)
    or the file ends (it is one tree per line).  Files without blank lines between their
    trees, and multi-line files once their first such tree is read, stream tree by tree."""
    files = expand_inputs(path, TREE_SUFFIXES)
    if len(files) == 1 and files[0] == str(path):
        yield from _file_trees(files[0], labelled, shape_known=False)
        return
    for name in files:
        yield from _file_trees(name, labelled, shape_known=True)


def _file_trees(
    path: str, labelled: bool, shape_known: bool
) -> Iterator[tuple[str, int, Tree | None]]:
    """One file's trees as its lines come; ``shape_known``: blank lines separate."""
    reader = TreeReader(path, labelled, marked=False)
    held: list[tuple[Tree, int, int]] = []  # trees whose meaning waits for the shape
    blank: list[int] = []  # the blank lines while the shape is open
    given_end = 0  # the line where the last tree given out ends
    for number, line in iter_lines(path):
        if labelled:  # as _parse_trees marks a whole text, a line at a time
            line = _EMPTY_TAG.sub(_EMPTY_TAG_MARK, line)
            reader.marked = reader.marked or NO_LABEL in line
        tokens = line.replace("(", " ( ").replace(")", " ) ").split()
        reader.token_lines.append(tokens)
        reader.read([tokens], number)
        if not tokens and not shape_known:
            blank.append(number)
        for tree, start, end in zip(reader.trees, reader.starts, reader.ends):
            shape_known = shape_known or start != end
            if not (shape_known or held or blank or start == given_end):
                given_end = end  # its meaning is the same in either shape
                yield path, start, tree
            elif not shape_known:
                held.append((tree, start, end))
            else:
                yield from ((path, at, waiting) for waiting, at, _ in held)
                yield path, start, tree
                held, blank = [], []
        done = len(reader.trees)
        del reader.trees[:done], reader.starts[:done], reader.ends[:done]
        reader.forget()
    reader.finish()
    trees, starts, ends = [t for t, _, _ in held], [s for _, s, _ in held], [e for *_, e in held]
    out, lines, _ = _one_tree_per_line(trees, starts, ends, blank, path, given_end)
    yield from ((path, at, waiting) for waiting, at in zip(out, lines))


def _read_trees(
    path: str | os.PathLike[str], labelled: bool, readings: tuple[bool, ...]
) -> list[TreeFile]:
    """The trees of ``path`` once per reading (``evalb`` of each), each file read once."""
    files = expand_inputs(path, TREE_SUFFIXES)
    if len(files) == 1 and files[0] == str(path):
        text = read_text(files[0])
        return [parse_trees(text, files[0], labelled, evalb=evalb) for evalb in readings]
    parts: list[tuple[list[Tree | None], list[int], list[str]]] = [([], [], []) for _ in readings]
    for k, name in enumerate(files, 1):
        text = read_text(name)
        for (trees, lines, sources), evalb in zip(parts, readings):
            part = parse_trees(text, name, labelled, blank_lines_are_sentences=False, evalb=evalb)
            trees.extend(part.trees)
            lines.extend(part.lines)
            sources.extend([name] * len(part))
        advance("reading tree files", k, len(files))
    return [TreeFile(str(path), trees, lines, sources) for trees, lines, sources in parts]


def leaf_token(token: str) -> str:
    """A token (or a tag) as a tree leaf that readers can read back: brackets as the
    treebank writes them (``-LRB-``, ``-RRB-``), every space as ``_`` (a no-break space
    too, which readers split at: ``1\u00a0000`` would read as two words)."""
    if "(" in token or ")" in token or " " in token or not token.isprintable():
        token = token.replace("(", "-LRB-").replace(")", "-RRB-")
        token = "".join("_" if c.isspace() else c for c in token)
    return token


# the treebank's escapes and what they stand for; "``" before "`", which it contains
_ESCAPES = (
    ("-LRB-", "("),
    ("-RRB-", ")"),
    ("-LCB-", "{"),
    ("-RCB-", "}"),
    ("-LSB-", "["),
    ("-RSB-", "]"),
    ("``", '"'),
    ("''", '"'),
    ("`", "'"),
    ("\\/", "/"),
    ("\\*", "*"),
)


def unescape_token(token: str) -> str:
    """A treebank token as the text it stands for: ``-LRB-`` as ``(`` and the other
    brackets alike, two backquotes or two apostrophes as a double quote, a backquote as an
    apostrophe, an escaped slash or asterisk as itself; escapes inside a token too.  What a
    character model should read of PTB text (benepar's CharLSTM reads its input so)."""
    for escape, text in _ESCAPES:
        if escape in token:
            token = token.replace(escape, text)
    return token


def format_trees(trees: Iterable[Tree | None]) -> str:
    """One tree per line; ``None`` becomes an empty line (an empty sentence)."""
    return "".join(("" if t is None else t.to_string()) + "\n" for t in trees)


def write_trees(path: str | os.PathLike[str], trees: Iterable[Tree | None]) -> None:
    atomic_write(path, format_trees(trees))
