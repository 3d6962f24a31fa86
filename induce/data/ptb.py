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
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from induce.data.errors import InputError
from induce.data.files import atomic_write, expand_inputs, read_text
from induce.data.progress import advance
from induce.data.types import Tree

TREE_SUFFIXES = (".mrg", ".trees", ".tree", ".txt", ".ptb")
_NO_LABEL = "\x00"
# "( word)" within a line (the whole text is searched at once: no part matches a newline).
_EMPTY_TAG = re.compile(r"\([^\S\n]+([^\s()]+[^\S\n]*\))")
_EMPTY_TAG_MARK = "( " + _NO_LABEL + r" \1"
_NO_WORD = "\x01"
# "(NP )" within a line: C EVALB reads a word "" tagged NP (a length mismatch, where a
# naive trace removal left it); "(NP)" is an empty bracket, as everywhere
_EMPTY_WORD = re.compile(r"\(([^\s()]+)[^\S\n]+\)")
_EMPTY_WORD_MARK = r"(\1 " + _NO_WORD + ")"
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
        marked = _NO_LABEL in text or (evalb and _NO_WORD in text)
    # Whole-text string methods first (C speed), then one token list per line.
    spaced = text.replace("(", " ( ").replace(")", " ) ")
    if evalb and not (spaced.isascii() and not any(c in spaced for c in _SEPARATORS)):
        # str.split() also splits at U+00A0, U+2009..., and at ASCII's \x1c-\x1f
        token_lines = [_ASCII_SPACE.split(line.strip(_ASCII_BLANKS)) for line in spaced.split("\n")]
        token_lines = [tokens if tokens != [""] else [] for tokens in token_lines]
    else:
        token_lines = [line.split() for line in spaced.split("\n")]
    reader = _TreeReader(path, labelled, marked)
    reader.read(token_lines)
    trees, starts, ends = reader.trees, reader.starts, reader.ends
    if not blank_lines_are_sentences or any(s != e for s, e in zip(starts, ends)):
        return TreeFile(path, list(trees), starts)
    # the text's lines: a final newline ends the last line (it starts no other), and an
    # empty text has none (not one blank line: an empty prediction is no failed parse)
    if text.endswith("\n") or not text:
        token_lines.pop()
    blank = [not tokens for tokens in token_lines]
    return _one_tree_per_line(trees, starts, ends, blank, path)


class _TreeReader:
    """Builds the trees of a text from its tokens, noting the line where each tree opens and
    the line where it closes (which tells a one-tree-per-line file from a multi-line one)."""

    def __init__(self, path: str, labelled: bool, marked: bool) -> None:
        self.path = path
        self.labelled = labelled
        self.marked = marked  # some labels are _NO_LABEL, made "" as their tree closes
        self.trees: list[Tree] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.token_lines: list[list[str]] = []  # kept to find a misplaced word's line

    def read(self, token_lines: list[list[str]]) -> None:
        """The hot loop of every tree reader: locals only and no call per token (a tree's
        last ")" calls :meth:`_close_tree`, once per tree)."""
        self.token_lines = token_lines
        labelled, starts, close_tree = self.labelled, self.starts, self._close_tree
        stack: list[Tree] = []
        node: Tree  # the bracket opened last: set at every "(", before any label
        expect_label = False  # the token after "(" is the label (labelled mode)
        misplaced_word = False  # a word beside other children somewhere in this tree
        line_no = 0
        for line_no, tokens in enumerate(token_lines, 1):
            if not stack and tokens and tokens[0].startswith("*x*"):
                continue  # a Treebank-2 header line
            for tok in tokens:
                if tok == "(":
                    if not stack:
                        starts.append(line_no)
                    node = Tree("", [])
                    stack.append(node)
                    expect_label = labelled
                elif tok == ")":
                    expect_label = False
                    if len(stack) > 1:
                        done = stack.pop()
                        siblings = stack[-1].children
                        if siblings and siblings[0].__class__ is str:
                            misplaced_word = True
                        siblings.append(done)
                    else:
                        close_tree(stack, line_no, misplaced_word)
                        misplaced_word = False
                elif expect_label:
                    expect_label = False
                    node.label = tok
                elif stack:
                    siblings = stack[-1].children
                    if siblings:
                        misplaced_word = True
                    siblings.append(tok)
                else:
                    self._outside(tok, len(tokens), line_no, stack)
        self._check_closed(stack, line_no)

    def _outside(self, word: str, tokens: int, line_no: int, stack: list[Tree]) -> None:
        """A word outside any bracket: in an unlabelled bracketing, a line of it alone is a
        one-word sentence as the official code writes it (StructFormer's ``mrg()``, Kim et
        al.'s ``get_tree``); anything else is refused."""
        if self.labelled or tokens != 1:
            raise InputError(f"text outside brackets: {_show(word)}", self.path, line_no)
        self.starts.append(line_no)
        stack.append(Tree("", [word]))
        self._close_tree(stack, line_no, False)

    def _close_tree(self, stack: list[Tree], line: int, misplaced_word: bool) -> None:
        """A ")" with at most the root open: the tree is done (or nothing was open)."""
        if not stack:
            raise InputError("unbalanced ')': no bracket is open", self.path, line)
        done = stack.pop()
        if self.marked:
            _clear_marks(done)
        if misplaced_word and self.labelled:
            label, word, at = _first_misplaced(self.token_lines, self.starts[-1], line)
            raise InputError(
                f"bracket ({'' if label == _NO_LABEL else label} ...) holds the word "
                f"{_show(word)} beside other children; words must sit alone under a tag, as "
                "in (NN dog)",
                self.path,
                at,
            )
        if misplaced_word:
            _as_preterminals(done)
        self.trees.append(done)
        self.ends.append(line)

    def _check_closed(self, stack: list[Tree], last_line: int) -> None:
        if stack:
            raise InputError(
                f"unbalanced '(': {len(stack)} bracket(s) still open at end of file",
                self.path,
                self.starts[-1] if self.starts else last_line,
            )


def _clear_marks(tree: Tree) -> None:
    """Empty the labels marked :data:`_NO_LABEL` and the words marked :data:`_NO_WORD` (the
    tree may still hold misplaced words)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.label == _NO_LABEL:
            node.label = ""
        if _NO_WORD in node.children:
            node.children = ["" if c == _NO_WORD else c for c in node.children]
        stack.extend(c for c in node.children if isinstance(c, Tree))


def _one_tree_per_line(
    trees: list[Tree],
    starts: list[int],
    ends: list[int],
    blank: list[bool],
    path: str,
) -> TreeFile:
    """Every blank line before or between trees is an empty sentence (``None``); blank lines
    after the last tree are counted apart."""
    for k in range(1, len(trees)):
        if starts[k] == ends[k - 1]:
            raise InputError(
                "several trees on one line in a one-tree-per-line file", path, starts[k]
            )
    out: list[Tree | None] = []
    lines: list[int] = []
    previous_end = 0
    for tree, start, end in zip(trees, starts, ends):
        for number in range(previous_end + 1, start):
            if blank[number - 1]:
                out.append(None)
                lines.append(number)
        out.append(tree)
        lines.append(start)
        previous_end = end
    return TreeFile(path, out, lines, trailing_blank_lines=sum(blank[previous_end:]))


def _as_preterminals(tree: Tree) -> None:
    """In an unlabelled bracketing a word beside other children becomes a preterminal with
    the empty tag."""
    for node in tree.subtrees():
        children = node.children
        if len(children) > 1 and any(isinstance(c, str) for c in children):
            node.children = [Tree("", [c]) if isinstance(c, str) else c for c in children]


class _Bracket:
    """An open bracket while :func:`_first_misplaced` reads: its label, its first child if
    that is a word (and the word's line), how many children so far."""

    __slots__ = ("label", "word", "line", "children")

    def __init__(self) -> None:
        self.label, self.word, self.line, self.children = "", "", 0, 0

    def add(self, word: str, line: int) -> tuple[str, str, int] | None:
        """Take a child (``word`` "" for a bracket): the misplaced word it reveals, if any."""
        self.children += 1
        if self.children == 1:
            self.word, self.line = word, line
            return None
        if word:  # a word after other children
            return self.label, word, line
        # a bracket after a first child that is a word
        return (self.label, self.word, self.line) if self.children == 2 and self.word else None


def _first_misplaced(token_lines: list[list[str]], start: int, end: int) -> tuple[str, str, int]:
    """``(label, word, line)`` of the first word, in reading order, that shares its bracket
    with other children, in the tree that closes on line ``end`` and opened on line ``start``
    (1-based).  The error path only: the reader's loop keeps no line per word."""
    found: tuple[str, str, int] | None = None  # trees before it on its first line have none
    stack: list[_Bracket] = []
    expect_label = False
    for number in range(start, end + 1):
        for tok in token_lines[number - 1]:
            if tok == ")":
                if stack:
                    stack.pop()
                if found and not stack:  # the first tree in the lines with one is the one
                    return found
            elif tok == "(":
                seen = stack[-1].add("", number) if stack else None
                found = found or seen
                stack.append(_Bracket())
            elif expect_label:
                stack[-1].label = tok
            elif stack:
                found = found or stack[-1].add(tok, number)
            expect_label = tok == "("
    raise AssertionError("the reader saw a misplaced word in this tree")


def _show(text: str | list[str], limit: int = 40) -> str:
    text = " ".join(text) if isinstance(text, list) else text
    return repr(text if len(text) <= limit else text[:limit] + "...")


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
    """A token as a tree leaf that readers can read back: brackets as the treebank writes
    them (``-LRB-``, ``-RRB-``), spaces as ``_``."""
    if "(" in token or ")" in token or " " in token:
        token = token.replace("(", "-LRB-").replace(")", "-RRB-").replace(" ", "_")
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
