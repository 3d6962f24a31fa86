"""EVALB's ``QUOTE_LABEL`` repair, kept apart because it needs the reader's full record.

When gold and test differ in length, a quote-like word (``'``, ``"`` or ``/`` under a
``QUOTE_LABEL`` tag) deleted on one side only - say a possessive ``'`` that a parser tagged
``''`` - is put back on that side at its place, and the brackets around it are stretched, with
the C program's exact loops and index bookkeeping (including its quirks).
"""

from __future__ import annotations

from induce.data.types import Tree

QUOTE_WORDS = frozenset(("'", '"', "/"))


class QuoteSide:
    """The reader's full record: bracket starts and ends as mutable lists and, for each
    quote-like word, ``[word index, tag, word, brackets opened before it, open bracket ids]``."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.tags: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.labels: list[str] = []
        self.quotes: list[list] = []

    def brackets(self) -> list[tuple[int, int, str]]:
        return list(zip(self.starts, self.ends, self.labels))


def read_with_quotes(tree: Tree | None, delete: frozenset[str], quote: frozenset[str]) -> QuoteSide:
    """The C reader step by step (words in ``delete`` tags removed), recording quote words."""
    side = QuoteSide()
    if tree is None:
        return side
    words, tags, starts, ends, labels = (side.words, side.tags, side.starts, side.ends, side.labels)
    open_ids: list[int] = []
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if type(node) is int:  # the end of bracket ``node``
            ends[node] = len(words)
            open_ids.pop()
            continue
        children = node.children
        if len(children) == 1 and type(children[0]) is str:
            tag = node.label
            if tag in quote and children[0] in QUOTE_WORDS:
                side.quotes.append([len(words), tag, children[0], len(labels), tuple(open_ids)])
            if tag not in delete:
                words.append(children[0])
                tags.append(tag)
            continue
        bracket = len(labels)
        labels.append(node.label)
        starts.append(len(words))
        ends.append(-1)
        open_ids.append(bracket)
        stack.append(bracket)
        stack.extend(reversed(children))
    return side


def fix_quotes(g: QuoteSide, t: QuoteSide, delete: frozenset[str]) -> None:
    """Re-insert quote words deleted on one side only (modifies ``g`` and ``t``)."""
    for i, tq in enumerate(t.quotes):
        where = tq[0]
        for j, gq in enumerate(g.quotes):
            if gq[0] != where or gq[1] == tq[1]:
                continue
            if gq[1] in delete and tq[1] not in delete:
                _reinsert(g, gq)
                for later in g.quotes[j:]:
                    later[0] += 1
            elif tq[1] in delete and gq[1] not in delete:
                _reinsert(t, tq)
                for later in t.quotes[i:]:
                    later[0] += 1


def _reinsert(side: QuoteSide, quote: list) -> None:
    """Put a deleted quote word back; brackets opened after it move right, brackets open
    around it grow, as the C program does."""
    where, tag, word, opened_before, open_ids = quote
    side.words.insert(where, word)
    side.tags.insert(where, tag)
    for k in range(opened_before, len(side.starts)):
        side.starts[k] += 1
        side.ends[k] += 1
    for k in open_ids:
        side.ends[k] += 1
