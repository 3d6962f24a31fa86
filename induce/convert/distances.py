"""``induce convert distances``: syntactic distances and heights to trees and dependencies.

Each input line is ``{"words": [...], "distances": [...], "heights": [...]}`` (``n - 1``
distances and ``n`` heights for ``n`` words; optional ``"tags"``).  Algorithm 1 builds the
binary tree, Algorithm 3 the tree and the dependencies together (StructFormer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from induce.data.config import check_choice
from induce.data.errors import InputError
from induce.data.jsonl import read_jsonl
from induce.data.types import DepTree, Tree
from induce.structure.distances import TIES, Ties, split_tree
from induce.structure.heights import Parse, parse_distances

TARGETS = ("ptb", "conllu", "both")
_UNSAFE = re.compile(r"[\s()]")


@dataclass
class Converted:
    """One input line, converted: the tree and, when heights were given, Algorithm 3's
    parse."""

    line: int
    words: list[str]
    tags: list[str] | None
    tree: Tree
    parse: Parse | None

    def deptree(self) -> DepTree:
        assert self.parse is not None
        heads = tuple(self.parse.heads)
        labels = tuple("root" if h == 0 else "dep" for h in heads)
        return DepTree(tuple(self.words), heads, tuple(self.tags) if self.tags else None, labels)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"words": self.words, "tree": self.tree.to_string()}
        if self.parse is not None:
            out.update(
                heads=self.parse.heads, root=self.parse.root, root_height=self.parse.root_height
            )
        return out


def convert_distances(
    path: str, need_heights: bool, ties: Ties = "left", label: str = "X"
) -> list[Converted]:
    """Convert every line of a JSONL file (``-`` = stdin); heights are required when
    ``need_heights``.  Errors name the file and line."""
    check_choice(ties, TIES, "ties")
    out = []
    for line, record in read_jsonl(path):
        words = _strings(record, "words", path, line)
        tags = _strings(record, "tags", path, line) if "tags" in record else None
        if tags is not None and len(tags) != len(words):
            raise InputError(f"{len(words)} words but {len(tags)} tags", path, line)
        leaves = [Tree(tag, [w]) for tag, w in zip(tags or ["X"] * len(words), words)]
        distances = _numbers(record, "distances", path, line)
        heights = _numbers(record, "heights", path, line) if "heights" in record else None
        if need_heights and heights is None:
            raise InputError('no "heights": dependencies need them', path, line)
        try:
            if heights is None:
                tree, parse = split_tree(leaves, distances, label, ties), None
            else:
                parse = parse_distances(leaves, distances, heights, label, ties)
                tree = parse.tree
        except ValueError as err:
            raise InputError(str(err), path, line) from None
        out.append(Converted(line, words, tags, tree, parse))
    if not out:
        raise InputError("no sentences in the file", path)
    return out


def _strings(record: dict, key: str, path: str, line: int) -> list[str]:
    value = record.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f'"{key}" must be a list of strings', path, line)
    if not value:
        raise InputError(f'"{key}" is empty: an empty sentence', path, line)
    bad = next((v for v in value if not v or _UNSAFE.search(v) or not _encodable(v)), None)
    if bad is not None:
        raise InputError(
            f'"{key}" holds {bad!r}: tokens cannot be empty, hold spaces or '
            "brackets (write -LRB- / -RRB-), or be invalid Unicode",
            path,
            line,
        )
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")  # JSON escapes can make lone surrogates
    except UnicodeEncodeError:
        return False
    return True


def _numbers(record: dict, key: str, path: str, line: int) -> list[float]:
    value = record.get(key)
    if not isinstance(value, list):
        raise InputError(f'"{key}" must be a list of numbers', path, line)
    return value
