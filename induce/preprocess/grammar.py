"""Head-marked probabilistic context-free grammars: reading the ``.grammar`` format of
``resources/grammars/`` and sampling sentences with their gold constituency and dependency
trees.

A sampled tree prints each symbol up to its first dot (``NP.pl`` -> ``NP``); the head child of
every rule gives its node's lexical head, and every other child's head word depends on it with
the label the rule gives that child (Stanford-style dependencies when the grammar marks heads
that way).  Sampling is deterministic for a seed: it draws only ``random.Random.random()``.
"""

from __future__ import annotations

import bisect
import random
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Generic, TypeVar

from induce.data.errors import InputError
from induce.data.types import Tree

_RULE = re.compile(r"^(\S+)\s*->\s*(.+?)\s*\|\s*([0-9.eE+-]+)\s*$")
_LEXICON = re.compile(r"^lexicon\s+(.+?):\s*(.*)$")


@dataclass(frozen=True)
class Child:
    symbol: str
    head: bool
    label: str  # dependency label of a non-head child ("" for the head)


T = TypeVar("T")


@dataclass
class Choices(Generic[T]):
    """Weighted alternatives, drawn by inverse CDF over cumulative weights."""

    items: list[T] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    _cumulative: list[float] | None = None

    def add(self, item: T, weight: float) -> None:
        self.items.append(item)
        self.weights.append(weight)
        self._cumulative = None

    def draw(self, rng: random.Random) -> T:
        if self._cumulative is None:
            self._cumulative = list(accumulate(self.weights))
        total = self._cumulative[-1]
        k = bisect.bisect_right(self._cumulative, rng.random() * total)
        return self.items[min(k, len(self.items) - 1)]


@dataclass
class Grammar:
    start: str
    rules: dict[str, Choices[tuple[Child, ...]]]  # symbol -> its right-hand sides
    aliases: dict[str, Choices[str]]  # @alias -> symbol names
    lexicon: dict[str, Choices[str]]  # preterminal symbol -> words
    zipf: float = 1.0
    source: str = "<grammar>"

    @staticmethod
    def tag(symbol: str) -> str:
        return symbol.split(".", 1)[0]

    def words(self) -> set[str]:
        return {w for c in self.lexicon.values() for w in c.items}


@dataclass(frozen=True)
class Sample:
    """One sentence: its gold tree, and heads (0 = root, 1-based) and labels of its words."""

    tree: Tree
    heads: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def words(self) -> list[str]:
        return self.tree.words()


def parse_grammar(text: str, source: str = "<grammar>") -> Grammar:
    """Read the ``.grammar`` format (documented at the top of
    ``resources/grammars/english.grammar``); problems are :class:`InputError` with a line."""
    g = Grammar("S", {}, {}, {}, 1.0, source)
    block: list[str] | None = None  # the symbols of the lexicon block being read
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace() and block is not None:
            _lexicon_row(line.split(), block, g.lexicon, source, number)
        else:
            block = _statement(g, line, number)
    for choices in g.lexicon.values():
        # Zipf weights by rank, in the order the words were listed
        choices.weights = [1.0 / (rank + 1) ** g.zipf for rank in range(len(choices.items))]
    _check(g)
    return g


def _statement(g: Grammar, line: str, number: int) -> list[str] | None:
    """Read an unindented line into ``g``; the symbols of the lexicon block it opens, if any
    (indented lines after it are rows of that block)."""
    if line.startswith("start "):
        g.start = line.split()[1]
    elif line.startswith("zipf "):
        g.zipf = _number(line.split()[1], g.source, number)
    elif m := _LEXICON.match(line):
        block = m.group(1).split()
        for symbol in block:
            g.lexicon.setdefault(symbol, Choices())
        if m.group(2).strip():
            _lexicon_row(m.group(2).split(), block, g.lexicon, g.source, number)
        return block
    elif m := _RULE.match(line):
        _rule(g, m.group(1), m.group(2).split(), _number(m.group(3), g.source, number), number)
    else:
        raise InputError(
            f"cannot read {line.strip()!r}: expected a rule "
            "'LHS -> A B* | weight', 'lexicon TAGS:', 'start' or 'zipf'",
            g.source,
            number,
        )
    return None


def _rule(g: Grammar, lhs: str, rhs: list[str], weight: float, line: int) -> None:
    """``LHS -> RHS | weight``: an alias's alternative or a phrase's rule."""
    if weight <= 0:
        raise InputError("a rule's weight must be positive", g.source, line)
    if lhs.startswith("@"):
        if len(rhs) != 1 or "*" in rhs[0] or ":" in rhs[0]:
            raise InputError("an alias rewrites to exactly one plain symbol", g.source, line)
        g.aliases.setdefault(lhs, Choices()).add(rhs[0], weight)
    else:
        g.rules.setdefault(lhs, Choices()).add(_children(rhs, g.source, line), weight)


def _number(text: str, source: str, line: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number", source, line) from None


def _children(rhs: list[str], source: str, line: int) -> tuple[Child, ...]:
    out = []
    for item in rhs:
        if item.endswith("*"):
            out.append(Child(item[:-1], True, ""))
        else:
            symbol, sep, label = item.partition(":")
            if not sep or not label:
                raise InputError(
                    f"{item!r}: mark the head with * and give every other child "
                    "a dependency label (SYMBOL:label)",
                    source,
                    line,
                )
            out.append(Child(symbol, False, label))
    if sum(c.head for c in out) != 1:
        raise InputError("a rule needs exactly one head child (marked with *)", source, line)
    return tuple(out)


def _lexicon_row(
    items: list[str], block: list[str], lexicon: dict[str, Choices[str]], source: str, line: int
) -> None:
    if len(block) == 1:
        for word in items:
            lexicon[block[0]].add(word, 1.0)
        return
    if len(items) != len(block):
        raise InputError(
            f"a row of lexicon {' '.join(block)} needs {len(block)} words, got {len(items)}",
            source,
            line,
        )
    for symbol, word in zip(block, items):
        lexicon[symbol].add(word, 1.0)


def _check(g: Grammar) -> None:
    """Every symbol used is defined, exactly once as phrase or word class; the start exists."""

    def defined(symbol: str) -> bool:
        return symbol in g.rules or symbol in g.lexicon or symbol in g.aliases

    both = set(g.rules) & set(g.lexicon)
    if both:
        raise InputError(f"symbols with both rules and words: {', '.join(sorted(both))}", g.source)
    if g.start not in g.rules:
        raise InputError(f"the start symbol {g.start} has no rules", g.source)
    uses = [
        (lhs, c.symbol) for lhs, choices in g.rules.items() for rule in choices.items for c in rule
    ]
    uses += [(alias, symbol) for alias, choices in g.aliases.items() for symbol in choices.items]
    for lhs, symbol in uses:
        if not defined(symbol):
            raise InputError(f"{lhs} uses {symbol}, which has no rules or words", g.source)
    for symbol, choices in g.lexicon.items():
        if not choices.items:
            raise InputError(f"lexicon {symbol} has no words", g.source)


class TooLong(Exception):
    pass


def sample(
    g: Grammar, rng: random.Random, max_words: int = 40, max_depth: int = 25, tries: int = 1000
) -> Sample:
    """A sentence drawn top-down from ``g`` with at most ``max_words`` words and depth
    ``max_depth`` (longer draws are thrown away and drawn again, so the distribution is the
    grammar's conditioned on those limits)."""
    for _ in range(tries):
        words: list[tuple[str, str]] = []
        arcs: list[tuple[int, int, str]] = []  # (dependent, head) 0-based, label
        try:
            tree, head = _expand(g, g.start, rng, words, arcs, max_words, max_depth)
        except TooLong:
            continue
        heads = [0] * len(words)
        labels = ["root"] * len(words)
        for dep, gov, label in arcs:
            heads[dep] = gov + 1
            labels[dep] = label
        return Sample(tree, tuple(heads), tuple(labels))
    raise RuntimeError(f"no sentence of at most {max_words} words in {tries} draws")


def _expand(
    g: Grammar,
    symbol: str,
    rng: random.Random,
    words: list[tuple[str, str]],
    arcs: list[tuple[int, int, str]],
    max_words: int,
    depth: int,
) -> tuple[Tree, int]:
    """The subtree of ``symbol`` and the position of its head word."""
    while symbol in g.aliases:
        symbol = g.aliases[symbol].draw(rng)
    label = g.tag(symbol)
    if symbol in g.lexicon:
        if len(words) >= max_words:
            raise TooLong
        words.append((g.lexicon[symbol].draw(rng), label))
        return Tree(label, [words[-1][0]]), len(words) - 1
    if depth <= 0:
        raise TooLong
    rule = g.rules[symbol].draw(rng)
    children: list[Tree] = []
    positions: list[int] = []
    for child in rule:
        subtree, head = _expand(g, child.symbol, rng, words, arcs, max_words, depth - 1)
        children.append(subtree)
        positions.append(head)
    head = positions[[c.head for c in rule].index(True)]
    for child, position in zip(rule, positions):
        if not child.head:
            arcs.append((position, head, child.label))
    return Tree(label, children), head


def load_grammar(name_or_path: str = "english") -> Grammar:
    """A built-in grammar by name (``resources/grammars/NAME.grammar``) or a file."""
    from pathlib import Path

    from induce.data.files import read_text

    path = Path(name_or_path)
    if path.suffix == ".grammar" or path.exists():
        return parse_grammar(read_text(path), str(path))
    from importlib import resources

    folder = resources.files("induce.resources").joinpath("grammars")
    entry = folder.joinpath(f"{name_or_path}.grammar")
    if not entry.is_file():
        known = sorted(p.name[:-8] for p in folder.iterdir() if p.name.endswith(".grammar"))
        raise InputError(
            f"no built-in grammar {name_or_path!r} (built in: {', '.join(known)}) and no such file",
            name_or_path,
        )
    return parse_grammar(entry.read_text(encoding="utf-8"), f"grammars/{entry.name}")
