"""``induce convert headrules``: treebank trees to dependency trees with a head table."""

from __future__ import annotations

from dataclasses import dataclass

from induce.data.errors import InputError
from induce.data.ptb import read_trees
from induce.data.types import DepTree
from induce.structure.headrules import HeadTable, UnknownLabel, lexical_heads
from induce.structure.headtables import load_head_table
from induce.structure.trees import strip_empty, unwrap


@dataclass
class Converted:
    table: HeadTable
    sentences: list[DepTree]
    lines: list[int]
    function_tags: bool  # did any phrase carry a function tag (NP-SBJ)?
    empty: int = 0  # empty sentences left out: blank lines of a one-tree-per-line file

    @property
    def labels_need_function_tags(self) -> bool:
        """True when the table labels by function tags (SBJ, PRD) but the trees had none, so
        those labels cannot appear (for instance in a tree file already stripped)."""
        scheme = self.table.labels
        return (
            scheme is not None
            and not self.function_tags
            and any(rule.function for rule in scheme.rules)
        )


def convert_headrules(path: str, rules: str | HeadTable = "penn2malt") -> Converted:
    """Dependencies of every tree in ``path``: empty elements (``-NONE-``) and the phrases
    they empty go first, then a treebank wrapper (``TOP``, ``( ...)``); words keep their tags.
    Empty sentences (the blank lines between the trees of a one-tree-per-line file, which a
    folder's files do not have) are left out, as ``convert trees`` leaves them out, and
    counted; a tree of empty elements only is refused."""
    table = rules if isinstance(rules, HeadTable) else load_head_table(rules)
    trees = read_trees(path)
    sentences: list[DepTree] = []
    lines: list[int] = []
    function_tags = False
    for k, tree in enumerate(trees.trees):
        source, line = trees.where(k)
        if tree is None:
            continue
        clean = strip_empty(tree)
        if clean is None:
            raise InputError("empty sentence: no word to attach", source, line)
        clean = unwrap(clean)
        if not function_tags:
            function_tags = any(
                table.split(n.label)[1] for n in clean.subtrees() if not n.is_preterminal
            )
        try:
            deps = lexical_heads(clean, table)
        except UnknownLabel as err:
            raise InputError(
                f"the head table {table.name!r} has no rule for the label "
                f"{err.label!r} (in the tree starting here)",
                source,
                line,
            ) from None
        sentences.append(
            DepTree(tuple(deps.words), tuple(deps.heads), tuple(deps.tags), tuple(deps.labels))
        )
        lines.append(line)
    if not sentences:
        raise InputError("no trees in the file", path)
    return Converted(table, sentences, lines, function_tags, len(trees) - len(sentences))
