"""The plain structures every layer shares: constituency :class:`Tree` and :class:`DepTree`.

No torch and no nltk here; :meth:`Tree.to_nltk` / :meth:`Tree.from_nltk` convert at the edges.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Union, cast, overload

Child = Union["Tree", str]


class Tree:
    """A labelled ordered tree whose leaves are words.

    A *preterminal* is a node with exactly one child and that child is a word: ``(NN dog)``.
    Every other node (a *constituent*) has only :class:`Tree` children; readers enforce this,
    so words always sit under a tag.  Unlabelled brackets have the label ``""``.
    """

    __slots__ = ("label", "children")

    # ``children`` is kept, not copied (readers build trees by appending to it), so the list
    # may be typed as subtrees or words alone: a list is invariant in its item type.
    @overload
    def __init__(self, label: str, children: list[Tree]) -> None: ...
    @overload
    def __init__(self, label: str, children: list[str]) -> None: ...
    @overload
    def __init__(self, label: str, children: list[Child]) -> None: ...
    def __init__(self, label: str, children: list[Any]) -> None:
        self.label = label
        self.children: list[Child] = children

    @property
    def is_preterminal(self) -> bool:
        children = self.children
        return len(children) == 1 and isinstance(children[0], str)

    def preterminals(self) -> list[Tree]:
        """Preterminal nodes from left to right."""
        out: list[Tree] = []
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            if node.is_preterminal:
                out.append(node)
            else:
                stack.extend(reversed(node.children))  # type: ignore[arg-type]
        return out

    def words(self) -> list[str]:
        return cast("list[str]", [p.children[0] for p in self.preterminals()])

    def tags(self) -> list[str]:
        return [p.label for p in self.preterminals()]

    def pos(self) -> list[tuple[str, str]]:
        """``(word, tag)`` pairs, like ``nltk.Tree.pos``."""
        return cast(
            "list[tuple[str, str]]", [(p.children[0], p.label) for p in self.preterminals()]
        )

    def subtrees(self) -> Iterator[Tree]:
        """All nodes, preterminals included, in pre-order."""
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            yield node
            if not node.is_preterminal:
                stack.extend(reversed(node.children))  # type: ignore[arg-type]

    def copy(self) -> Tree:
        """A deep copy, built iteratively: predicted trees can be deeper than the recursion
        limit."""
        root = Tree(self.label, [])
        stack: list[tuple[Tree, Tree]] = [(self, root)]
        while stack:
            source, target = stack.pop()
            for child in source.children:
                if isinstance(child, str):
                    target.children.append(child)
                else:
                    node = Tree(child.label, [])
                    target.children.append(node)
                    stack.append((child, node))
        return root

    def to_string(self) -> str:
        """One-line PTB bracket string: ``(S (NP (DT the) (NN dog)) (VP (VBD barked)))``."""
        parts: list[str] = []
        _write(self, parts)
        return "".join(parts)

    __str__ = to_string

    def __repr__(self) -> str:
        return f"Tree({self.to_string()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        pairs = [(self, other)]  # iterative: deep trees must compare too
        while pairs:
            a, b = pairs.pop()
            if a.label != b.label or len(a.children) != len(b.children):
                return False
            for x, y in zip(a.children, b.children):
                if x.__class__ is str or y.__class__ is str:
                    if x != y:
                        return False
                elif isinstance(y, Tree):
                    pairs.append((x, y))  # type: ignore[arg-type]
                else:
                    return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable

    def to_nltk(self) -> Any:  # an nltk.Tree (imported lazily: nltk costs ~0.4 s to import)
        from nltk import Tree as NltkTree

        def convert(node: Child) -> Any:
            if isinstance(node, str):
                return node
            return NltkTree(node.label, [convert(c) for c in node.children])

        return convert(self)

    @classmethod
    def from_nltk(cls, tree: Any) -> Tree:
        """Convert an ``nltk.Tree``; a word beside other children is put under the tag ``""``."""
        children = list(tree)
        if len(children) == 1 and isinstance(children[0], str):
            return cls(tree.label(), [children[0]])
        return cls(
            tree.label(),
            [cls("", [c]) if isinstance(c, str) else cls.from_nltk(c) for c in children],
        )


def _write(tree: Tree, parts: list[str]) -> None:
    # Iterative: predicted trees can be far deeper than Python's recursion limit.
    stack: list = [tree]  # nodes, and the strings between them
    while stack:
        node = stack.pop()
        if node.__class__ is str:  # a closing bracket or a separator
            parts.append(node)
            continue
        children = node.children
        if len(children) == 1 and children[0].__class__ is str:
            parts.append(f"({node.label} {children[0]})")
            continue
        parts.append("(" + node.label)
        stack.append(")")
        for child in reversed(children):
            stack.append(child)
            stack.append(" ")


@dataclass(frozen=True)
class DepTree:
    """A dependency tree over ``words``: ``heads[i]`` is 0 for the root, else a 1-based index.

    Construction checks what every reader and decoder must guarantee: equal lengths, heads in
    range, exactly one root and no cycle.  Optional columns are ``None`` when unknown.
    ``require_tree=False`` keeps only the length and range checks: a head assignment such as
    argmax decoding gives (cycles, several roots), which the official scorers accept as
    predictions.
    """

    words: tuple[str, ...]
    heads: tuple[int, ...]
    tags: tuple[str, ...] | None = None
    labels: tuple[str, ...] | None = None
    require_tree: bool = field(default=True, compare=False, repr=False)

    def __post_init__(self) -> None:
        problem = (dependency_problem if self.require_tree else head_range_problem)(self.heads)
        if problem:
            raise ValueError(problem)
        n = len(self.words)
        if len(self.heads) != n:
            raise ValueError(f"{n} words but {len(self.heads)} heads")
        for name in ("tags", "labels"):
            column = getattr(self, name)
            if column is not None and len(column) != n:
                raise ValueError(f"{n} words but {len(column)} {name}")

    def __len__(self) -> int:
        return len(self.words)

    @property
    def root(self) -> int:
        """1-based position of the root word."""
        return self.heads.index(0) + 1


def head_range_problem(heads: Sequence[int]) -> str | None:
    """Why ``heads`` is not even a head assignment (every head in ``0..n``, none its own
    word), or ``None``."""
    if not heads:
        return "empty sentence"
    n = len(heads)
    for i, h in enumerate(heads, 1):
        if not 0 <= h <= n:
            return f"word {i} has head {h}, outside 0..{n}"
        if h == i:
            return f"word {i} is its own head"
    return None


def dependency_problem(heads: Sequence[int]) -> str | None:
    """Why ``heads`` (0 = root, 1-based) is not a single-rooted tree, or ``None`` if it is."""
    problem = head_range_problem(heads)
    if problem:
        return problem
    n = len(heads)
    roots = [i for i, h in enumerate(heads, 1) if h == 0]
    if len(roots) != 1:
        if not roots:
            return "no word has head 0 (no root)"
        return f"{len(roots)} roots (words {', '.join(map(str, roots[:5]))})"
    # Every word must reach the root; colour states: 0 unseen, 1 on the current path, 2 done.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node - 1]
        if state[node] == 1:
            return f"cycle through word {node}"
        for visited in path:
            state[visited] = 2
    return None
