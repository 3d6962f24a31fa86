"""Scoring, from files (``evaluate_brackets``, ``evaluate_unsupervised``, ``evaluate_deps``
in the modules of this package, what ``induce evaluate`` runs) or from structures in memory
with the ``score_*`` functions here, which score exactly the same way (the modules keep
the short names ``brackets``, ``unsupervised``, ``deps``):

>>> from induce import evaluate
>>> gold = ["(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT a) (NN mat)))))"]
>>> pred = ["(S (NP (DT the) (NN cat)) (VP (VBD sat)) (PP (IN on) (NP (DT a) (NN mat))))"]
>>> evaluate.score_brackets(gold, pred)["all"]["f1"]  # 4 of 5 brackets (EVALB, COLLINS.prm)
80.0
>>> round(evaluate.score_unsupervised(gold, pred)["sentence_f1"], 2)  # 3 of 4 spans, no false one
85.71
>>> round(evaluate.score_deps([(["the", "cat", "sat"], [2, 3, 0])], [[2, 0, 2]])["uas"], 2)
33.33

Trees are :class:`~induce.data.types.Tree` objects or PTB bracket strings; dependencies are
:class:`~induce.data.types.DepTree` objects, ``(words, heads)`` pairs or (predictions) head
lists alone (0 = root, 1-based).  Each function returns the report's dictionary, the JSON
of ``induce evaluate ... --json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Union

from induce.data.errors import InputError

if TYPE_CHECKING:
    from induce.data.conll import DepFile
    from induce.data.ptb import TreeFile
    from induce.data.types import DepTree, Tree

TreeLike = Union["Tree", str, None]
DepLike = Union["DepTree", tuple[Sequence[str], Sequence[int]], Sequence[int]]

__all__ = ["score_brackets", "score_deps", "score_unsupervised"]


def score_brackets(
    gold: Sequence[TreeLike], pred: Sequence[TreeLike], *, param: str = "collins"
) -> dict[str, Any]:
    """EVALB scores of ``pred`` against ``gold`` (``param``: ``collins``, ``unlabeled``,
    ``nk`` or a ``.prm`` file); ``None`` or ``""`` is a failed parse."""
    from induce.evaluate.brackets import evaluate_brackets

    gold_trees, pred_trees = _trees(gold, "<gold>", True), _trees(pred, "<prediction>", True)
    report = evaluate_brackets(gold_trees, pred_trees, param=param)
    return report.to_dict()


def score_unsupervised(
    gold: Sequence[TreeLike],
    pred: Sequence[TreeLike],
    *,
    convention: str = "structformer",
    labels: list[str] | None = None,
) -> dict[str, Any]:
    """Unlabelled span F1 (sentence and corpus level) and per-label recall of induced trees
    under a convention (``structformer`` or ``cpcfg``)."""
    from induce.evaluate.unsupervised import evaluate_unsupervised

    report = evaluate_unsupervised(
        _trees(gold, "<gold>"), _trees(pred, "<prediction>"), convention=convention, labels=labels
    )
    return report.to_dict()


def score_deps(
    gold: Sequence[DepLike],
    pred: Sequence[DepLike],
    *,
    convention: str = "position",
    tagset: str | None = None,
) -> dict[str, Any]:
    """UAS/UUAS, root accuracy and per-relation recall of ``pred`` heads against ``gold``.
    Gold without tags is scored over every word (tag set ``all``); with tags, over its word
    tags (``tagset``, default ``ptb_word_tags``) as ``induce evaluate deps`` does."""
    from induce.data.types import DepTree
    from induce.evaluate.deps import evaluate_deps

    gold = list(gold)  # read twice below: a generator would be half spent by the first
    untagged = any(not isinstance(item, DepTree) or item.tags is None for item in gold)
    gold_file = _deps(gold, "<gold>", None, require_tree=True)
    words = [tree.words for tree in gold_file.sentences]
    pred_file = _deps(pred, "<prediction>", words, require_tree=False)
    report = evaluate_deps(
        gold_file,
        pred_file,
        convention=convention,
        tagset=tagset or ("all" if untagged else None),
    )
    return report.to_dict()


def _trees(items: Sequence[TreeLike], name: str, evalb: bool = False) -> TreeFile:
    """``items`` as a tree file; text read as C EVALB reads it with ``evalb`` (see
    :func:`~induce.data.ptb.parse_trees`)."""
    from induce.data.ptb import TreeFile, parse_trees
    from induce.data.types import Tree

    trees: list[Tree | None] = []
    for k, item in enumerate(items):
        where = f"{name} item {k + 1}"
        if isinstance(item, str):
            parsed = parse_trees(item, where, evalb=evalb).trees if item.strip() else [None]
            if len(parsed) != 1:
                raise InputError(f"one tree per item, got {len(parsed)}", where)
            trees.append(parsed[0])
        elif item is None or isinstance(item, Tree):
            trees.append(item)
        else:
            raise InputError(f"give a tree (PTB text or a Tree), not {type(item).__name__}", where)
    return TreeFile(name, trees, list(range(1, len(trees) + 1)))


def _deps(
    items: Sequence[DepLike],
    name: str,
    words: list[tuple[str, ...]] | None,
    require_tree: bool,
) -> DepFile:
    from induce.data.conll import DepFile
    from induce.data.types import DepTree

    out = []
    for k, item in enumerate(items):
        if isinstance(item, DepTree):
            untagged = item.tags is None  # scored over every word: a tag that is no gap
            out.append(replace(item, tags=("_",) * len(item)) if untagged else item)
            continue
        if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], int):
            tokens, heads = item
        elif words is not None and k < len(words):
            tokens, heads = words[k], item  # a prediction's heads over the gold's words
        else:
            raise InputError("give a DepTree or (words, heads)", f"{name} item {k + 1}")
        try:
            tree = DepTree(
                tuple(str(t) for t in tokens),
                tuple(int(h) for h in heads),
                ("_",) * len(tokens),
                require_tree=require_tree,
            )
        except (ValueError, TypeError) as err:  # no tree, heads out of range, not numbers
            raise InputError(str(err), f"{name} item {k + 1}") from None
        out.append(tree)
    return DepFile(name, "memory", out, list(range(1, len(out) + 1)))
