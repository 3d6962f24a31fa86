"""``induce convert trees``: treebank cleaning and reshaping, one tree per line out."""

from __future__ import annotations

from dataclasses import dataclass

from induce.convert.tags import check_tag_filters
from induce.data.config import check_choices
from induce.data.errors import InputError
from induce.data.progress import every
from induce.data.ptb import read_trees
from induce.data.types import Tree
from induce.structure.binarize import Factor, binarize, unbinarize
from induce.structure.distances import tree_distances
from induce.structure.trees import (
    collapse_unary,
    filter_preterminals,
    lowercase,
    strip_empty,
    strip_function_tags,
    unwrap,
)


@dataclass(frozen=True)
class TreeOps:
    """What to do to each tree, applied in this order."""

    strip_traces: bool = False  # remove -NONE- and the phrases left empty
    strip_function_tags: bool = False  # NP-SBJ-1 -> NP
    drop_tags: frozenset[str] = frozenset()  # remove words with these tags (punctuation)
    keep_tags: frozenset[str] | None = None  # keep only words with these tags
    unwrap: bool = False  # drop a TOP / ROOT / S1 / ( ) root with one child
    collapse_unary: bool = False
    lowercase: bool = False
    unbinarize: bool = False
    binarize: Factor | None = None  # "right" or "left" factored

    def __post_init__(self) -> None:
        check_choices(self)


def transform(tree: Tree, ops: TreeOps) -> Tree | None:
    """Apply ``ops``; ``None`` when no word is left."""
    out = strip_empty(tree) if ops.strip_traces else tree
    if out is not None and ops.strip_function_tags:
        out = strip_function_tags(out)
    if out is not None and (ops.drop_tags or ops.keep_tags is not None):
        drop, keep = ops.drop_tags, ops.keep_tags
        out = filter_preterminals(
            out, lambda p: p.label not in drop and (keep is None or p.label in keep)
        )
    if out is None:
        return None
    if ops.unwrap:
        out = unwrap(out)
    if ops.collapse_unary:
        out = collapse_unary(out)
    if ops.lowercase:
        out = lowercase(out)
    if ops.unbinarize:
        out = unbinarize(out)
    if ops.binarize:
        out = binarize(out, ops.binarize)
    return out


@dataclass
class ConvertedTrees:
    """The trees :func:`convert_trees` kept, where each started in its input, and how many
    it left out."""

    trees: list[Tree]
    where: list[tuple[str, int]]  # (file, line) of each kept tree
    dropped: int  # trees left without words (by the filters, or traces only)
    empty: int = 0  # empty sentences: blank lines between a one-tree-per-line file's trees


def convert_trees(path: str, ops: TreeOps) -> ConvertedTrees:
    """Every tree of ``path`` (a file, a directory of LDC files, ``-``) transformed, and how
    many were left out: trees left without words, as ``convert_deps`` leaves out such
    sentences, so that both outputs stay aligned, and empty sentences, as
    ``convert_headrules`` does."""
    trees = read_trees(path)
    if not len(trees):
        raise InputError("no trees in the file", path)
    present = [k for k, t in enumerate(trees.trees) if t is not None]
    if ops.drop_tags or ops.keep_tags is not None:
        tags = (p.label for t in trees.trees if t is not None for p in t.preterminals())
        check_tag_filters(tags, ops.drop_tags, ops.keep_tags, path)
    kept: list[Tree] = []
    where: list[tuple[str, int]] = []
    for count, k in enumerate(present, 1):
        tree = trees.trees[k]
        assert tree is not None
        done = transform(tree, ops)
        if done is not None:
            kept.append(done)
            where.append(trees.where(k))
        every("converting trees", count, len(present))
    empty = len(trees) - len(present)
    return ConvertedTrees(kept, where, len(present) - len(kept), empty)


def distance_records(done: ConvertedTrees) -> list[dict]:
    """``{"words", "tags", "distances"}`` per tree (Definition 3.1), over its words: empty
    elements such as ``-NONE-`` traces are none (as in ``--to text``, whose lines these
    records must match word for word); a tree without words (``(TOP)``, ``()``, traces
    only) has none: an :class:`InputError` at its line."""
    out = []
    for tree, (source, line) in zip(done.trees, done.where):
        clean = strip_empty(tree)
        pos = clean.pos() if clean is not None else []
        if clean is None or not pos:
            raise InputError("empty sentence: no word to give distances", source, line)
        out.append(
            {
                "words": [w for w, _ in pos],
                "tags": [t for _, t in pos],
                "distances": tree_distances(clean),
            }
        )
    return out


def text_lines(trees: list[Tree]) -> str:
    """The words of each tree, one sentence a line, separated by spaces, as they stand in
    the tree (case kept; empty elements such as ``-NONE-`` traces are not words): the text
    to parse when the predictions are to be scored against these trees."""
    lines = []
    for tree in trees:
        clean = strip_empty(tree)
        lines.append(" ".join(clean.words()) if clean is not None else "")
    return "".join(line + "\n" for line in lines)
