"""Dependency files: CoNLL-U, CoNLL-X (10 columns) and Malt-TAB, read and written.

* **CoNLL-U** goes through the ``conllu`` library: comments, multiword tokens (``1-2``) and
  empty nodes (``1.1``) are kept in :attr:`DepFile.raw` for writing back; the
  :class:`~induce.data.types.DepTree` holds the syntactic words only.
* **CoNLL-X**: ``ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL``, as in the WSJ
  dependency test files of StructFormer and UDGN.
* **Malt-TAB** (``.dp``): ``word TAB tag TAB head [TAB deprel]``.

Sentences are separated by blank lines.  The tag of a word is the fine POS column (XPOS /
POSTAG), or the coarse one when the fine one is ``_``.  Every sentence must be one tree (a
single root, no cycle); errors name the file and line.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from induce.data.errors import InputError
from induce.data.progress import advance
from induce.data.reading import expand_inputs, read_text
from induce.data.types import DepTree, dependency_problem, head_range_problem
from induce.data.word_columns import WordColumns, conllu_columns

if TYPE_CHECKING:
    from conllu.models import Token, TokenList

FORMATS = ("conllu", "conllx", "malt")
_SUFFIXES = {
    ".conllu": "conllu",
    ".conll": "conllx",
    ".conllx": "conllx",
    ".conll06": "conllx",
    ".stanford": "conllx",
    ".dp": "malt",
    ".malt": "malt",
    ".tab": "malt",
}
DEP_SUFFIXES = tuple(_SUFFIXES)


@dataclass
class DepFile:
    """Dependency trees read from a file; ``lines[k]`` is the first line of sentence ``k``."""

    path: str
    format: str
    sentences: list[DepTree]
    lines: list[int]
    sources: list[str] | None = None  # file of each sentence, when read from a directory
    raw: list[TokenList] | None = None  # for writing CoNLL-U back
    columns: list[WordColumns] | None = None  # CoNLL-X's LEMMA, CPOSTAG and FEATS

    def __len__(self) -> int:
        return len(self.sentences)

    def word_columns(self) -> list[WordColumns] | None:
        """Each sentence's LEMMA, coarse tag and FEATS (from CoNLL-U or CoNLL-X), for
        :func:`format_deps`; ``None`` for Malt-TAB, which has none."""
        if self.raw is not None:
            return [conllu_columns(tokens) for tokens in self.raw]
        return self.columns

    def where(self, index: int) -> tuple[str, int]:
        source = self.sources[index] if self.sources else self.path
        return source, self.lines[index]


def detect_format(path: str, text: str) -> str:
    """By suffix, else by the first token line: 10 columns = CoNLL-U/X, 3 or 4 = Malt-TAB."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            return "conllu"
        columns = len(line.rstrip("\r\n").split("\t"))
        if columns == 10:
            return "conllu" if "-" in line.split("\t", 1)[0] else "conllx"
        if columns in (3, 4):
            return "malt"
        raise InputError(
            f"not a dependency file: {columns} tab-separated columns (10 for CoNLL-U/X, "
            "3 or 4 for Malt-TAB)",
            path,
            number,
        )
    raise InputError("empty dependency file", path)


def _blocks(text: str) -> Iterable[tuple[int, list[str]]]:
    """Sentences as (first line number, lines), split at blank lines."""
    block: list[str] = []
    start = 0
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            yield start, block
            block = []
    if block:
        yield start, block


def _make_tree(
    words: Sequence[str],
    heads: Sequence[int],
    tags: Sequence[str],
    labels: Sequence[str],
    path: str,
    line: int,
    trees: bool = True,
    word_lines: Sequence[int] | None = None,
) -> DepTree:
    """``trees=False``: any head assignment in range (predictions of argmax decoding).

    A problem is an :class:`InputError` at ``line``, the sentence's first line, or, when it
    is one word's head (out of range, the word itself) and ``word_lines`` gives each word's
    line, at that word's line."""
    problem = (dependency_problem if trees else head_range_problem)(heads)
    if problem:
        what = "a dependency tree" if trees else "a head assignment"
        bad = _bad_head(heads)
        if word_lines is not None and bad is not None:
            line = word_lines[bad]
        raise InputError(f"not {what}: {problem}", path, line)
    return DepTree(tuple(words), tuple(heads), tuple(tags), tuple(labels), trees)


def _bad_head(heads: Sequence[int]) -> int | None:
    """The index of the first word whose head is out of range or itself (the word
    :func:`~induce.data.types.head_range_problem` names), or ``None``."""
    n = len(heads)
    return next((i for i, h in enumerate(heads) if not 0 <= h <= n or h == i + 1), None)


@dataclass
class _Columns:
    """The columns of one sentence as a column-file reader collects them."""

    words: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the line of each word

    def add(self, word: str, tag: str, head: int, label: str, line: int) -> None:
        self.words.append(word)
        self.tags.append(tag)
        self.heads.append(head)
        self.labels.append(label)
        self.lines.append(line)

    def tree(self, path: str, line: int, trees: bool = True) -> DepTree:
        return _make_tree(
            self.words, self.heads, self.tags, self.labels, path, line, trees, self.lines
        )


def _int(value: str, what: str, path: str, line: int) -> int:
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{what} must be an integer, got {value!r}", path, line) from None


def parse_malt(text: str, path: str, trees: bool = True) -> DepFile:
    sentences: list[DepTree] = []
    lines: list[int] = []
    for start, block in _blocks(text):
        sentence = _Columns()
        for offset, line in enumerate(block):
            cols = line.split("\t")
            if len(cols) not in (3, 4):
                raise InputError(
                    f"Malt-TAB needs 3 or 4 tab-separated columns, got {len(cols)}",
                    path,
                    start + offset,
                )
            head = _int(cols[2], "head", path, start + offset)
            sentence.add(cols[0], cols[1], head, cols[3] if len(cols) == 4 else "_", start + offset)
        sentences.append(sentence.tree(path, start, trees))
        lines.append(start)
    return DepFile(path, "malt", sentences, lines)


def parse_conllx(text: str, path: str, trees: bool = True) -> DepFile:
    """10 columns.  Besides the standard layout (HEAD in column 7), the WSJ test files of
    StructFormer and UDGN put HEAD in column 6 (``ID FORM LEMMA TAG FEATS HEAD DEPREL _ _ _``);
    the layout is recognised from the file's first token line, as their readers do."""
    sentences: list[DepTree] = []
    lines: list[int] = []
    columns: list[WordColumns] = []
    head_col = tag_col = -1
    for start, block in _blocks(text):
        sentence = _Columns()
        words = sentence.words
        other: tuple[list[str], ...] = ([], [], [], [])
        for offset, line in enumerate(block):
            number = start + offset
            if line.startswith("#") and not words:
                continue
            cols = line.split("\t") if "\t" in line else line.split()
            if len(cols) != 10:
                raise InputError(f"CoNLL-X needs 10 columns, got {len(cols)}", path, number)
            if head_col < 0:
                head_col, tag_col = _conllx_layout(cols, path, number)
            if _int(cols[0], "ID", path, number) != len(words) + 1:
                raise InputError(f"token IDs must run 1, 2, 3, ...; got {cols[0]}", path, number)
            tag = cols[tag_col] if cols[tag_col] != "_" else cols[3]
            head = _int(cols[head_col], "HEAD", path, number)
            sentence.add(cols[1], tag, head, cols[head_col + 1], number)
            # LEMMA, CPOSTAG, POSTAG, FEATS; the early-HEAD layout has no CPOSTAG
            for column, at in zip(other, (2, 3 if tag_col == 4 else -1, tag_col, tag_col + 1)):
                column.append(cols[at] if at >= 0 else "_")
        if words:
            sentences.append(sentence.tree(path, start, trees))
            lines.append(start)
            columns.append(WordColumns(*map(tuple, other)))
    return DepFile(path, "conllx", sentences, lines, columns=columns)


def _conllx_layout(cols: list[str], path: str, line: int) -> tuple[int, int]:
    """(HEAD column, tag column), 0-based: standard CoNLL-X, or HEAD one column early."""
    if cols[6].lstrip("-").isdigit():
        return 6, 4
    if cols[5].lstrip("-").isdigit():
        return 5, 3
    raise InputError(f"HEAD must be an integer, got {cols[6]!r}", path, line)


def _raw(line: list[str], i: int) -> str:
    return line[i]


# FEATS, DEPS and MISC are kept as text: parsing them triples the reading time and only
# writing them back needs them.
_FIELD_PARSERS: dict[str, Callable[[list[str], int], Any]] = {
    "feats": _raw,
    "deps": _raw,
    "misc": _raw,
}
_CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


def parse_conllu_block(block: Sequence[str], start: int, path: str) -> TokenList:
    """One CoNLL-U sentence (its comment and token lines, as :func:`conllu_blocks` gives
    them; ``start`` is the line number of the first) as a ``conllu`` token list, strictly:
    every token line has exactly 10 tab-separated, non-empty columns and a valid ID.
    Problems are :class:`InputError` naming the file and line."""
    from conllu.exceptions import ParseException
    from conllu.models import Metadata, Token, TokenList
    from conllu.parser import DEFAULT_FIELD_PARSERS, DEFAULT_FIELDS, parse_comment_line

    parsers = {**DEFAULT_FIELD_PARSERS, **_FIELD_PARSERS}
    tokens: list[Token] = []
    metadata = Metadata()
    for number, line in enumerate(block, start):
        if line.startswith("#"):
            for key, value in parse_comment_line(line):
                metadata[key] = value
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise InputError(
                f"CoNLL-U needs 10 tab-separated columns, got {len(cols)}", path, number
            )
        if "" in cols:
            empty = _CONLLU_COLUMNS[cols.index("")]
            raise InputError(f"CoNLL-U: the {empty} column is empty (write _)", path, number)
        token = Token()
        try:
            for i, name in enumerate(DEFAULT_FIELDS):
                parser = parsers.get(name)
                token[name] = parser(cols, i) if parser is not None else cols[i]
        except ParseException as err:
            if name == "head":  # conllu's "... not a valid value for parse_int_value."
                why = f"HEAD must be an integer, got {cols[i]!r}"
                raise InputError(f"CoNLL-U: {why}", path, number) from None
            raise InputError(f"CoNLL-U: {_CONLLU_COLUMNS[i]}: {err}", path, number) from None
        if token["id"] is None:
            raise InputError(f"CoNLL-U: ID must be a number, got {cols[0]!r}", path, number)
        tokens.append(token)
    return TokenList(tokens, metadata, default_fields=DEFAULT_FIELDS)


def conllu_blocks(text: str, path: str) -> Iterator[tuple[int, TokenList]]:
    """The sentences of CoNLL-U ``text``, each with the line number it starts on, parsed
    strictly by :func:`parse_conllu_block`."""
    for start, block in _blocks(text):
        yield start, parse_conllu_block(block, start, path)


def conllu_words(
    tokens: TokenList, block: Sequence[str], start: int, path: str
) -> list[tuple[Token, int]]:
    """The words of a sentence that :func:`parse_conllu_block` read from ``block`` (its
    lines from ``start``), each with its own line: multiword tokens and empty nodes left
    out, the word IDs checked to run 1, 2, 3 (an :class:`InputError` at the first one out
    of place)."""
    # the line of each token (comment lines carry none), for errors that name a token
    token_lines = [start + k for k, line in enumerate(block) if not line.startswith("#")]
    words = [(t, line) for t, line in zip(tokens, token_lines) if isinstance(t["id"], int)]
    for k, (token, line) in enumerate(words, 1):
        if token["id"] != k:
            raise InputError(f"token IDs must run 1, 2, 3, ...; got {token['id']}", path, line)
    return words


def parse_conllu(text: str, path: str, trees: bool = True) -> DepFile:
    sentences: list[DepTree] = []
    lines: list[int] = []
    raw: list[TokenList] = []
    for start, block in _blocks(text):
        tokens = parse_conllu_block(block, start, path)
        words: list[str] = []
        tags: list[str] = []
        heads: list[int] = []
        labels: list[str] = []
        word_lines: list[int] = []
        # multiword tokens and empty nodes are kept in ``raw`` only
        for token, line in conllu_words(tokens, block, start, path):
            if token["head"] is None:
                raise InputError(f"word {token['id']} ({token['form']!r}) has no HEAD", path, line)
            words.append(token["form"])
            xpos, upos = token["xpos"], token["upos"]
            tags.append(xpos if xpos not in (None, "_") else (upos or "_"))
            heads.append(token["head"])
            labels.append(token["deprel"] or "_")
            word_lines.append(line)
        if not words:
            continue
        sentences.append(_make_tree(words, heads, tags, labels, path, start, trees, word_lines))
        lines.append(start)
        raw.append(tokens)
    return DepFile(path, "conllu", sentences, lines, raw=raw)


_PARSERS = {"conllu": parse_conllu, "conllx": parse_conllx, "malt": parse_malt}


def parse_deps(
    text: str, path: str = "<string>", fmt: str | None = None, trees: bool = True
) -> DepFile:
    """Parse dependency text in ``fmt`` (detected when ``None``); ``trees=False`` accepts
    head assignments that are not trees (see :class:`DepTree`)."""
    fmt = fmt or detect_format(path, text)
    if fmt not in _PARSERS:
        raise InputError(f"unknown dependency format {fmt!r}; choose from {', '.join(FORMATS)}")
    enabled = gc.isenabled()
    gc.disable()  # many small objects and no cycles: the collector only costs time here
    try:
        return _PARSERS[fmt](text, path, trees)
    finally:
        if enabled:
            gc.enable()


def read_deps(path: str | os.PathLike[str], fmt: str | None = None, trees: bool = True) -> DepFile:
    """Read a dependency file (``-`` = standard input) or a directory of them (sorted)."""
    files = expand_inputs(path, DEP_SUFFIXES)
    if len(files) == 1 and files[0] == str(path):
        return parse_deps(read_text(files[0]), files[0], fmt, trees)
    parts = []
    for k, name in enumerate(files, 1):
        parts.append(parse_deps(read_text(name), name, fmt, trees))
        advance("reading dependency files", k, len(files))
    sources: list[str] = []
    out = DepFile(str(path), parts[0].format, [], [], sources)
    for name, part in zip(files, parts):
        out.sentences.extend(part.sentences)
        out.lines.extend(part.lines)
        sources.extend([name] * len(part))
    # CoNLL-U written back whole when every file is; a folder of CoNLL-U and CoNLL-X files
    # keeps each word's columns; with a Malt-TAB file, none
    if all(part.raw is not None for part in parts):
        out.raw = [tokens for part in parts for tokens in part.raw or ()]
    elif None not in (found := [part.word_columns() for part in parts]):
        out.columns = [c for columns in found for c in columns or ()]
    return out


def with_upos(deps: DepFile) -> DepFile:
    """``deps`` with CoNLL-U's UPOS column as its tags, for a tag set of UPOS names
    (:func:`induce.data.normalize.is_upos_tagset`): the reader takes XPOS, PTB tags in
    English treebanks, where such a tag set finds no word but ``$`` (a SYM by its XPOS).
    CoNLL-X's CPOSTAG is taken where it holds UPOS names only (as ``convert deps`` writes
    it from CoNLL-U).  Malt-TAB keeps its tags."""
    columns = deps.word_columns()
    if columns is None:  # Malt-TAB: its tags are all there is
        return deps
    sentences = []
    for tree, other in zip(deps.sentences, columns, strict=True):
        upos = other.coarse if deps.raw is not None else other.upos()
        sentences.append(replace(tree, tags=upos) if upos and len(upos) == len(tree) else tree)
    return replace(deps, sentences=sentences)
