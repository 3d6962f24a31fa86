"""Operations on constituency trees: cleaning, filtering, spans.

Trees are treated as values: no function changes its input, and a result may share subtrees
with it (or be the input itself when nothing changes).  Spans are half-open
``(start, end)`` intervals over the positions of the preterminals (words) of the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import cast, overload

from induce.data.normalize import DIGITS, EMPTY_TAGS
from induce.data.types import Tree

WRAPPER_LABELS = frozenset(("", "TOP", "ROOT", "S1", "VROOT"))


def cut_label(label: str) -> str:
    """Treebank cleaning: ``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``.

    Labels that start with ``-`` (``-NONE-``, ``-LRB-``) are kept whole.
    """
    if not label or label[0] == "-":
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0]


@overload
def rebuild(
    tree: Tree,
    on_preterminal: Callable[[Tree], Tree],
    on_node: Callable[[Tree, list[Tree]], Tree],
) -> Tree: ...
@overload
def rebuild(
    tree: Tree,
    on_preterminal: Callable[[Tree], Tree | None],
    on_node: Callable[[Tree, list[Tree]], Tree | None],
) -> Tree | None: ...
def rebuild(
    tree: Tree,
    on_preterminal: Callable[[Tree], Tree | None],
    on_node: Callable[[Tree, list[Tree]], Tree | None],
) -> Tree | None:
    """Rebuild ``tree`` bottom-up without recursion (trees can be hundreds of levels deep).

    ``on_preterminal(p)`` gives the new preterminal or ``None`` to drop it; ``on_node(node,
    kids)`` gets the rebuilt children that were not dropped and gives the new node or ``None``.
    """
    results: list[Tree | None] = []
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, expanded = pop()
        children = node.children
        if len(children) == 1 and children[0].__class__ is str:
            results.append(on_preterminal(node))
        elif not expanded:
            push((node, True))
            stack.extend([(c, False) for c in reversed(children)])  # type: ignore[misc]
        else:
            k = len(children)
            kids = [c for c in results[len(results) - k :] if c is not None] if k else []
            del results[len(results) - k :]
            results.append(on_node(node, kids))
    return results[0]


def strip_function_tags(tree: Tree) -> Tree:
    """Cut every label, tags included, with :func:`cut_label`."""
    return rebuild(
        tree,
        lambda p: Tree(cut_label(p.label), list(p.children)),
        lambda node, kids: Tree(cut_label(node.label), kids),
    )


def filter_preterminals(tree: Tree, keep: Callable[[Tree], bool]) -> Tree | None:
    """Keep the preterminals for which ``keep`` is true; drop constituents left (or found)
    empty.

    Returns ``None`` when nothing is left, and ``tree`` itself when every preterminal stays
    (trees are values: no function here changes its input).
    """
    leaves, tree_spans = leaves_and_spans(tree)
    kept = [keep(p) for p in leaves]
    if all(kept) and all(s != e for s, e, _ in tree_spans):
        return tree  # nothing to drop: no removed word and no empty constituent
    flags = iter(kept)  # rebuild visits the preterminals left to right
    return rebuild(
        tree,
        lambda p: p if next(flags) else None,
        lambda node, kids: Tree(node.label, kids) if kids else None,
    )


def strip_empty(tree: Tree, empty_tags: Iterable[str] = EMPTY_TAGS) -> Tree | None:
    """Remove empty elements (``-NONE-`` traces) and the constituents they leave empty."""
    tags = frozenset(empty_tags)
    return filter_preterminals(tree, lambda p: p.label not in tags)


def keep_tags(tree: Tree, tags: Iterable[str]) -> Tree | None:
    """Keep only the words whose tag is in ``tags`` (e.g. the 36 word tags of PTB)."""
    wanted = frozenset(tags)
    return filter_preterminals(tree, lambda p: p.label in wanted)


def collapse_unary(tree: Tree, join: str | None = None) -> Tree:
    """Collapse chains of constituents with a single constituent child.

    The top node of a chain survives; with ``join`` its label becomes the chain's labels
    joined by it (``S+VP``), as ``nltk.Tree.collapse_unary`` does.  Preterminals stay.
    """

    def on_node(node: Tree, kids: list[Tree]) -> Tree:
        if len(kids) == 1 and not kids[0].is_preterminal:
            label = node.label if join is None else f"{node.label}{join}{kids[0].label}"
            return Tree(label, kids[0].children)
        return Tree(node.label, kids)

    return rebuild(tree, lambda p: Tree(p.label, list(p.children)), on_node)


def lowercase(tree: Tree) -> Tree:
    """Lower-case every word."""
    return rebuild(
        tree,
        lambda p: Tree(p.label, [cast(str, p.children[0]).lower()]),
        lambda node, kids: Tree(node.label, kids),
    )


def normalize_word(word: str, lower: bool = True, digits: bool = True) -> str:
    """The StructFormer/UDGN reader's word normalisation: lower-case, each digit run -> ``N``."""
    if lower:
        word = word.lower()
    return DIGITS.sub("N", word) if digits else word


def unwrap(tree: Tree, wrappers: Iterable[str] = WRAPPER_LABELS) -> Tree:
    """Drop treebank wrappers: a root labelled ``TOP``/``ROOT``/``S1``/``""`` with one child
    is replaced by that child (repeatedly: ``( (TOP (S ...)))``)."""
    labels = frozenset(wrappers)
    while tree.label in labels and len(tree.children) == 1 and not tree.is_preterminal:
        tree = tree.children[0]  # type: ignore[assignment]
    return tree


def leaves_and_spans(tree: Tree) -> tuple[list[Tree], list[tuple[int, int, str]]]:
    """The preterminals of ``tree`` and the ``(start, end, label)`` of every constituent over
    them, in pre-order (the root first).

    Recursion is a third faster than an explicit stack on treebank trees (this runs for every
    tree scored); trees deeper than Python's recursion limit take the iterative path.
    """
    try:
        return _leaves_and_spans_recursive(tree)
    except RecursionError:
        return _leaves_and_spans_iterative(tree)


def _leaves_and_spans_recursive(tree: Tree) -> tuple[list[Tree], list[tuple[int, int, str]]]:
    children = tree.children
    if len(children) == 1 and children[0].__class__ is str:
        return [tree], []
    leaves: list[Tree] = []
    out: list = [None]
    _walk(tree, 0, leaves, out)
    return leaves, out


def _walk(node: Tree, index: int, leaves: list, out: list) -> None:
    # A module-level function, not a closure: a self-referencing closure is a reference
    # cycle, which would leak while the evaluate commands run with the collector paused.
    start = len(leaves)
    for child in node.children:
        grand = child.children  # type: ignore[union-attr]
        if len(grand) == 1 and grand[0].__class__ is str:
            leaves.append(child)
        else:
            slot = len(out)
            out.append(None)
            _walk(child, slot, leaves, out)  # type: ignore[arg-type]
    out[index] = (start, len(leaves), node.label)


def _leaves_and_spans_iterative(tree: Tree) -> tuple[list[Tree], list[tuple[int, int, str]]]:
    leaves: list[Tree] = []
    out: list[tuple[int, int, str]] = []
    stack: list = [tree]
    pop, push, add_leaf, add_span = stack.pop, stack.append, leaves.append, out.append
    while stack:
        node = pop()
        if node.__class__ is int:  # end of constituent number ``node``
            start, _, label = out[node]
            out[node] = (start, len(leaves), label)
            continue
        children = node.children
        if len(children) == 1 and children[0].__class__ is str:
            add_leaf(node)
            continue
        push(len(out))
        add_span((len(leaves), -1, node.label))
        stack.extend(children[::-1])
    return leaves, out


def spans(tree: Tree) -> list[tuple[int, int, str]]:
    """``(start, end, label)`` of every constituent (preterminals excluded), in pre-order;
    the first entry is the root."""
    return leaves_and_spans(tree)[1]


def restrict_spans(
    spans: list[tuple[int, int, str]], keep: list[bool]
) -> list[tuple[int, int, str]]:
    """The spans a tree has once only the leaves with ``keep`` true remain (positions
    renumbered, constituents left empty dropped, order kept) - without rebuilding it."""
    before = [0]
    count = 0
    for kept in keep:
        count += kept
        before.append(count)
    return [(before[s], before[e], label) for s, e, label in spans if before[e] > before[s]]


def length(tree: Tree) -> int:
    """Number of words (preterminals)."""
    return len(tree.preterminals())
