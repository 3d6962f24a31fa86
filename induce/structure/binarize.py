"""Binarisation of n-ary trees and its inverse.

A node ``X`` with children ``c1 ... ck`` (k > 2) becomes, right-factored,
``(X c1 (X|<c2-...-ck> c2 (X|<c3-...-ck> ... )))`` and, left-factored,
``(X (X|<c1-...-ck-1> (X|<c1-...-ck-2> ...) ck-1) ck)``: the marker ``|<...>`` names the
parent and the children the new node covers (nltk's convention with unlimited horizontal
context).  Unbinarising splices every node whose label contains ``|<`` into its parent, which
restores the original tree exactly.
"""

from __future__ import annotations

from typing import Literal, get_args

from induce.data.types import Tree
from induce.structure.trees import rebuild

Factor = Literal["right", "left"]
FACTORS: tuple[Factor, ...] = get_args(Factor)
MARKER = "|<"


def binarize(tree: Tree, factor: Factor = "right") -> Tree:
    if factor not in FACTORS:
        raise ValueError(f"factor must be one of {FACTORS}, got {factor!r}")

    def on_node(node: Tree, kids: list[Tree]) -> Tree:
        if len(kids) <= 2:
            return Tree(node.label, kids)
        label = node.label
        if factor == "right":
            rest = kids[-1]
            for i in range(len(kids) - 2, 0, -1):
                rest = Tree(_marked(label, kids[i:]), [kids[i], rest])
            return Tree(label, [kids[0], rest])
        first = kids[0]
        for i in range(1, len(kids) - 1):
            first = Tree(_marked(label, kids[: i + 1]), [first, kids[i]])
        return Tree(label, [first, kids[-1]])

    return rebuild(tree, lambda p: Tree(p.label, list(p.children)), on_node)


def _marked(label: str, kids: list[Tree]) -> str:
    return f"{label}{MARKER}{'-'.join(k.label for k in kids)}>"


def unbinarize(tree: Tree) -> Tree:
    """Splice out the nodes :func:`binarize` added (labels containing ``|<``)."""

    def on_node(node: Tree, kids: list[Tree]) -> Tree:
        children: list = []
        for kid in kids:
            if MARKER in kid.label and not kid.is_preterminal:
                children.extend(kid.children)
            else:
                children.append(kid)
        return Tree(node.label, children)

    return rebuild(tree, lambda p: Tree(p.label, list(p.children)), on_node)
