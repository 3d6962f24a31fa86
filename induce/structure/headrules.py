"""Head rules: constituency trees to dependency trees.

A head table maps each phrase label to an ordered list of rules ``(direction, priorities)``.
The head child of a phrase is found with the semantics of Collins (1999) and Penn2Malt: for each
rule in turn, for each priority in order, the children are scanned in the rule's direction
(``left``: from the first child, ``right``: from the last; ``first``/``last``: that child only)
and the first child whose label (function tags cut) is in that priority's set is the head.  A
priority is usually one label; a set (``NN|NNS|NNP``) means "whichever of these comes first".
A rule without priorities takes the first child in its direction; when no rule matches, the
first child in the direction of the first rule is the head.  Of a label with alternatives
(``ADVP|PRT``) the first is used.  Punctuation children are passed
over unless a phrase has nothing else.  With a coordination set (Collins), a head child right
after a coordinator gives way to the child before the coordinator.  ``*`` is the rule for
labels a table does not list; other unknown labels raise :class:`UnknownLabel`.

Every word then depends on the lexical head of the smallest constituent it does not head:
the result is a projective tree.  Tables are data (``resources/headrules/*.yaml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from induce.data.types import Tree

DIRECTIONS = ("left", "right", "first", "last")


class UnknownLabel(ValueError):
    """A phrase label the head table has no rule for."""

    def __init__(self, label: str) -> None:
        super().__init__(label)
        self.label = label


@dataclass(frozen=True)
class HeadRule:
    direction: str
    priorities: tuple[frozenset[str], ...]


@dataclass(frozen=True)
class LabelRule:
    """Matches a dependent by its function tags, its own label and the phrase it attaches in
    (``None`` = any)."""

    label: str
    function: frozenset[str] | None = None
    dependent: frozenset[str] | None = None
    phrase: frozenset[str] | None = None


@dataclass(frozen=True)
class LabelScheme:
    root: str
    punctuation: str
    rules: tuple[LabelRule, ...]
    default: str
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    def label(
        self, phrase: str, dependent: str, functions: frozenset[str], is_punctuation: bool
    ) -> str:
        key = (phrase, dependent, functions, is_punctuation)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._label(phrase, dependent, functions, is_punctuation)
        return found

    def _label(
        self, phrase: str, dependent: str, functions: frozenset[str], is_punctuation: bool
    ) -> str:
        if is_punctuation:
            return self.punctuation
        for rule in self.rules:
            if (
                (rule.function is None or rule.function & functions)
                and (rule.dependent is None or dependent in rule.dependent)
                and (rule.phrase is None or phrase in rule.phrase)
            ):
                return rule.label
        return self.default


@dataclass(frozen=True)
class HeadTable:
    """A head table (see the module docstring)."""

    name: str
    rules: dict[str, tuple[HeadRule, ...]]
    punctuation: frozenset[str] = frozenset()
    coordination: frozenset[str] = frozenset()
    labels: LabelScheme | None = None
    _cut: dict = field(default_factory=dict, compare=False, repr=False)
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    def head_child(self, label: str, children: Sequence[str]) -> int:
        """Index of the head among children labelled ``children`` (function tags cut).

        Treebanks repeat their productions, so answers are remembered per production."""
        key = (label, tuple(children))
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._head_child(label, children)
        return found

    def _head_child(self, label: str, children: Sequence[str]) -> int:
        rules = self.rules.get(label)
        if rules is None:
            rules = self.rules.get("*")
            if rules is None:
                raise UnknownLabel(label)
        punctuation = self.punctuation
        candidates = [i for i, c in enumerate(children) if c not in punctuation] or list(
            range(len(children))
        )
        head = -1
        for rule in rules:
            if rule.direction == "left":
                order = candidates
            elif rule.direction == "right":
                order = candidates[::-1]
            else:
                order = candidates[:1] if rule.direction == "first" else candidates[-1:]
            if not rule.priorities:
                head = order[0]
                break
            head = next(
                (i for wanted in rule.priorities for i in order if children[i] in wanted), -1
            )
            if head >= 0:
                break
        if head < 0:
            head = (
                candidates[-1]
                if rules and rules[0].direction in ("right", "last")
                else candidates[0]
            )
        if head >= 2 and children[head - 1] in self.coordination:
            # Collins' coordination rule: the conjunct before the coordinator heads, passing
            # over punctuation (as in "cats , dogs , and birds").
            before = head - 2
            while before >= 0 and children[before] in punctuation:
                before -= 1
            if before >= 0:
                head = before
        return head

    def split(self, label: str) -> tuple[str, frozenset[str]]:
        """``NP-SBJ-1`` -> (``NP``, {``SBJ``}): the category and its function tags (indices
        and ``=`` co-indexing dropped).  Of alternatives (``ADVP|PRT``, where the PTB
        annotators disagreed) the first counts, as in Penn2Malt.  Labels starting with ``-``
        are kept whole."""
        found = self._cut.get(label)
        if found is None:
            if not label or label[0] == "-":
                found = (label, frozenset())
            else:
                first = label.split("|", 1)[0] or label
                parts = first.split("=", 1)[0].split("-")
                found = (parts[0], frozenset(p for p in parts[1:] if p and not p.isdigit()))
            self._cut[label] = found
        return found


@dataclass
class Dependencies:
    """The preterminals of a tree as a dependency tree: heads (0 = root, 1-based), labels."""

    words: list[str]
    tags: list[str]
    heads: list[int]
    labels: list[str]


def lexical_heads(tree: Tree, table: HeadTable) -> Dependencies:
    """Dependency heads (0 = root, 1-based) and labels of the preterminals of ``tree``.

    ``tree`` must be free of empty elements (``-NONE-``); function tags may stay (they are
    cut for the lookup and used for labels).  Without a label scheme every label is ``dep``
    (``root`` for the root).  Raises :class:`UnknownLabel`.  Recursive for speed, with an
    iterative fallback for trees deeper than Python's recursion limit.
    """
    try:
        out = Dependencies([], [], [], [])
        root = _walk(tree, table, out)
    except RecursionError:
        out = Dependencies([], [], [], [])
        root = _walk_iteratively(tree, table, out)
    if root:
        scheme = table.labels
        out.labels[root - 1] = scheme.root if scheme is not None else "root"
    return out


def _leaf(node: Tree, out: Dependencies) -> int:
    out.words.append(node.children[0])  # type: ignore[arg-type]
    out.tags.append(node.label)
    out.heads.append(0)
    out.labels.append("")
    return len(out.words)


def _walk(node: Tree, table: HeadTable, out: Dependencies) -> int:
    """Assign heads below ``node``; the 1-based position of its head word (0: no word)."""
    children = node.children
    if len(children) == 1 and children[0].__class__ is str:
        return _leaf(node, out)
    return _attach(node, [_walk(c, table, out) for c in children], table, out)  # type: ignore[arg-type]


def _walk_iteratively(tree: Tree, table: HeadTable, out: Dependencies) -> int:
    results: list[int] = []  # head word of each finished child, in order
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        children = node.children
        if len(children) == 1 and children[0].__class__ is str:
            results.append(_leaf(node, out))
        elif not expanded:
            stack.append((node, True))
            stack.extend([(c, False) for c in reversed(children)])  # type: ignore[misc]
        else:
            k = len(children)
            words = results[len(results) - k :]
            del results[len(results) - k :]
            results.append(_attach(node, words, table, out))
    return results[0]


def _attach(node: Tree, words: list[int], table: HeadTable, out: Dependencies) -> int:
    """Pick the head child of ``node`` (its children's head words are ``words``) and attach
    the other children's head words to it, with labels.  Empty children (0) are ignored."""
    children = node.children
    if not words or 0 in words:
        children = [c for c, w in zip(children, words) if w]
        words = [w for w in words if w]
        if not words:
            return 0
    cut, split = table._cut, table.split
    parts = [cut.get(c.label) or split(c.label) for c in children]  # type: ignore[union-attr]
    category = (cut.get(node.label) or split(node.label))[0]
    index = table.head_child(category, [p[0] for p in parts])
    head = words[index]
    scheme = table.labels
    heads, labels = out.heads, out.labels
    for i, word in enumerate(words):
        if i == index:
            continue
        heads[word - 1] = head
        if scheme is None:
            labels[word - 1] = "dep"
            continue
        child = children[i]  # a subtree: only subtrees have head words
        is_punct = (
            isinstance(child, Tree)
            and len(child.children) == 1
            and child.children[0].__class__ is str
            and child.label in table.punctuation
        )
        labels[word - 1] = scheme.label(category, parts[i][0], parts[i][1], is_punct)
    return head
