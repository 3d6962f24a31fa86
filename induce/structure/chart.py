"""Trees as a span-based chart parser sees them (Kitaev and Klein 2018): labelled spans over
the words, unary chains collapsed into chain labels (``S+VP``; a constituent over a single
word keeps its label as the span's, the POS tag apart), and back.

A tree is expected clean (``-NONE-`` removed, function tags cut, the ``TOP`` wrapper taken
off).  ``tree_from_spans`` accepts the spans of a binary parse with empty-labelled spans
(those a decoder adds to binarise) and drops those, so the n-ary tree comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from induce.data.types import Tree
from induce.structure.trees import strip_empty, strip_function_tags, unwrap

CHAIN = "+"
EMPTY = ""  # the empty label of a span that is no constituent

LabelledSpan = tuple[int, int, str]


def clean_tree(tree: Tree) -> Tree | None:
    """A treebank tree as the chart parser learns it: empty elements and function tags
    removed, the ``TOP`` wrapper taken off; ``None`` when no word is left or only a
    preterminal (a one-word sentence without a phrase: it has no span to learn)."""
    stripped = strip_empty(tree)
    if stripped is None:
        return None
    clean = unwrap(strip_function_tags(stripped))
    return None if clean.is_preterminal else clean


def labelled_spans(tree: Tree) -> list[LabelledSpan]:
    """The constituents of ``tree`` as ``(start, end, label)``, outermost first, a unary chain
    as one span whose label joins the chain's labels with ``+`` (outer first)."""
    out: list[LabelledSpan] = []
    stack: list[tuple[Tree, int]] = [(tree, 0)]
    while stack:
        node, start = stack.pop()
        if node.is_preterminal:
            continue
        labels = [node.label]
        while len(node.children) == 1 and not cast(Tree, node.children[0]).is_preterminal:
            node = cast(Tree, node.children[0])
            labels.append(node.label)
        pending, offset = [], start
        for child in node.children:
            pending.append((cast(Tree, child), offset))
            offset += len(cast(Tree, child).preterminals())
        out.append((start, offset, CHAIN.join(labels)))
        stack.extend(reversed(pending))  # popped left to right
    return out


def tree_from_spans(
    words: Sequence[str], tags: Sequence[str], spans: Sequence[LabelledSpan]
) -> Tree:
    """The n-ary tree of ``spans`` (empty labels dropped, chain labels expanded) over the
    preterminals ``(tag word)``.  The spans must nest; the whole sentence must be one of
    them with a label."""
    n = len(words)
    kept = sorted(
        {(i, j, label) for i, j, label in spans if label != EMPTY}, key=lambda s: (s[0], -s[1])
    )
    if not kept or kept[0][:2] != (0, n):
        raise ValueError("the whole sentence must be a labelled span")
    leaves = [Tree(tag, [word]) for tag, word in zip(tags, words)]
    done: list[Tree] = []
    stack: list[tuple[int, str, list[Tree]]] = []  # the open constituents: end, label, kids
    k = 0
    for p in range(n + 1):
        while stack and stack[-1][0] == p:
            _, label, kids = stack.pop()
            (stack[-1][2] if stack else done).append(_expand(label, kids))
        if p == n:
            break
        while k < len(kept) and kept[k][0] == p:
            i, j, label = kept[k]
            if stack and j > stack[-1][0]:
                raise ValueError(f"span ({i}, {j}) crosses another")
            stack.append((j, label, []))
            k += 1
        (stack[-1][2] if stack else done).append(leaves[p])
    return done[0]


def _expand(label: str, children: list[Tree]) -> Tree:
    """``S+VP`` over ``children`` -> ``(S (VP children))``."""
    parts = label.split(CHAIN)
    node = Tree(parts[-1], children)
    for outer in reversed(parts[:-1]):
        node = Tree(outer, [node])
    return node
