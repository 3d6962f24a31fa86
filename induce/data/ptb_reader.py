"""The bracket reader under :mod:`induce.data.ptb`: tokens in, trees out, with the lines
where each tree opens and closes; the errors that name a line."""

from __future__ import annotations

from induce.data.errors import InputError
from induce.data.types import Tree

NO_LABEL = "\x00"  # a bracket's missing label: "( word)" reads as a word with the tag ""
NO_WORD = "\x01"  # C EVALB's word "" in "(NP )"


class TreeReader:
    """Builds the trees of a text from its tokens, noting the line where each tree opens and
    the line where it closes (which tells a one-tree-per-line file from a multi-line one).

    :meth:`read` takes the whole text's lines at once, or a few lines at a time (a stream):
    what is open carries over from one call to the next, and :meth:`finish` ends the text.
    ``token_lines`` holds the lines from line ``first_kept`` on, for the error that names a
    misplaced word's line; a stream drops them once no tree is open (:meth:`forget`)."""

    def __init__(self, path: str, labelled: bool, marked: bool) -> None:
        self.path = path
        self.labelled = labelled
        self.marked = marked  # some labels are NO_LABEL, made "" as their tree closes
        self.trees: list[Tree] = []  # closed trees, with the lines they open and close on
        self.starts: list[int] = []  # ... one more than trees while a tree is open
        self.ends: list[int] = []
        self.token_lines: list[list[str]] = []
        self.first_kept = 1  # the line number of token_lines[0]
        self.stack: list[Tree] = []  # the brackets open, the root first
        self.expect_label = False  # the token after "(" is the label (labelled mode)
        self.misplaced_word = False  # a word beside other children in the open tree
        self.last_line = 0

    def read(self, token_lines: list[list[str]], first_line: int = 1) -> None:
        """Read ``token_lines``, lines ``first_line`` on.  The hot loop of every tree reader:
        locals only and no call per token (a tree's last ")" calls :meth:`_close_tree`, once
        per tree)."""
        labelled, starts, close_tree = self.labelled, self.starts, self._close_tree
        stack = self.stack
        # the bracket opened last, which takes the label: set at every "("
        node = stack[-1] if stack else Tree("", [])
        expect_label, misplaced_word = self.expect_label, self.misplaced_word
        line_no = first_line - 1
        for line_no, tokens in enumerate(token_lines, first_line):
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
        self.expect_label, self.misplaced_word = expect_label, misplaced_word
        self.last_line = line_no

    def forget(self) -> None:
        """Drop the lines before the open tree's first, all of them when none is open (a
        stream's memory stays flat; a stream keeps only the open tree's start in
        ``starts``)."""
        keep_from = self.starts[-1] if self.stack else self.first_kept + len(self.token_lines)
        del self.token_lines[: keep_from - self.first_kept]
        self.first_kept = keep_from

    def finish(self) -> None:
        """The text has ended: refuse a bracket still open."""
        if self.stack:
            raise InputError(
                f"unbalanced '(': {len(self.stack)} bracket(s) still open at end of file",
                self.path,
                self.starts[-1],
            )

    def _outside(self, word: str, tokens: int, line_no: int, stack: list[Tree]) -> None:
        """A word outside any bracket: in an unlabelled bracketing, a line of it alone is a
        one-word sentence as the official code writes it (StructFormer's ``mrg()``, Kim et
        al.'s ``get_tree``); anything else is refused."""
        if self.labelled or tokens != 1:
            raise InputError(f"text outside brackets: {show(word)}", self.path, line_no)
        self.starts.append(line_no)
        stack.append(Tree("", [word]))
        self._close_tree(stack, line_no, False)

    def _close_tree(self, stack: list[Tree], line: int, misplaced_word: bool) -> None:
        """A ")" with at most the root open: the tree is done (or nothing was open)."""
        if not stack:
            raise InputError("unbalanced ')': no bracket is open", self.path, line)
        done = stack.pop()
        if self.marked:
            clear_marks(done)
        if misplaced_word and self.labelled:
            lines, first = self.token_lines, self.first_kept
            label, word, at = _first_misplaced(lines, first, self.starts[-1], line)
            raise InputError(
                f"bracket ({'' if label == NO_LABEL else label} ...) holds the word "
                f"{show(word)} beside other children; words must sit alone under a tag, as "
                "in (NN dog)",
                self.path,
                at,
            )
        if misplaced_word:
            as_preterminals(done)
        self.trees.append(done)
        self.ends.append(line)


def clear_marks(tree: Tree) -> None:
    """Empty the labels marked :data:`NO_LABEL` and the words marked :data:`NO_WORD` (the
    tree may still hold misplaced words)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.label == NO_LABEL:
            node.label = ""
        if NO_WORD in node.children:
            node.children = ["" if c == NO_WORD else c for c in node.children]
        stack.extend(c for c in node.children if isinstance(c, Tree))


def as_preterminals(tree: Tree) -> None:
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


def _first_misplaced(
    token_lines: list[list[str]], first: int, start: int, end: int
) -> tuple[str, str, int]:
    """``(label, word, line)`` of the first word, in reading order, that shares its bracket
    with other children, in the tree that closes on line ``end`` and opened on line ``start``
    (``token_lines[0]`` is line ``first``).  The error path only: the reader's loop keeps no
    line per word."""
    found: tuple[str, str, int] | None = None  # trees before it on its first line have none
    stack: list[_Bracket] = []
    expect_label = False
    for number in range(start, end + 1):
        for tok in token_lines[number - first]:
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


def show(text: str | list[str], limit: int = 40) -> str:
    text = " ".join(text) if isinstance(text, list) else text
    return repr(text if len(text) <= limit else text[:limit] + "...")
