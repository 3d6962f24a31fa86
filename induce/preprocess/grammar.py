"""Head-marked probabilistic context-free grammars: reading the ``.grammar`` format of
``resources/grammars/``, checked (every symbol ends in words; the shortest sentence and the
shallowest derivation known).  Sampling sentences from them is
:mod:`induce.preprocess.grammar_sampling`'s.
"""

from __future__ import annotations

import bisect
import random
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Generic, TypeVar

from induce.data.errors import InputError

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
    lines: dict[str, int] = field(default_factory=dict)  # symbol -> line it is defined on
    min_words: int = 1  # words in the shortest sentence the grammar produces
    min_depth: int = 1  # levels of rules its shallowest derivation needs

    @staticmethod
    def tag(symbol: str) -> str:
        return symbol.split(".", 1)[0]

    def words(self) -> set[str]:
        return {w for c in self.lexicon.values() for w in c.items}


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
        choices.weights = [_zipf_weight(rank, g.zipf) for rank in range(len(choices.items))]
    _check(g)
    return g


def _zipf_weight(rank: int, zipf: float) -> float:
    """``1 / (rank + 1)^zipf``; 0 where the power is beyond a float's range (a steep
    exponent: the word is never drawn)."""
    try:
        return 1.0 / (rank + 1) ** zipf
    except OverflowError:
        return 0.0


def _statement(g: Grammar, line: str, number: int) -> list[str] | None:
    """Read an unindented line into ``g``; the symbols of the lexicon block it opens, if any
    (indented lines after it are rows of that block)."""
    if line.startswith("start "):
        g.start = _no_bracket(line.split()[1], g.source, number)
    elif line.startswith("zipf "):
        g.zipf = _number(line.split()[1], g.source, number)
        if not 0 <= g.zipf < float("inf"):  # NaN too
            raise InputError(
                "zipf is the words' frequency exponent: a number from 0 (every word alike) up",
                g.source,
                number,
            )
    elif m := _LEXICON.match(line):
        block = [_no_bracket(symbol, g.source, number) for symbol in m.group(1).split()]
        for symbol in block:
            g.lexicon.setdefault(symbol, Choices())
            g.lines.setdefault(symbol, number)
        if m.group(2).strip():
            _lexicon_row(m.group(2).split(), block, g.lexicon, g.source, number)
        return block
    elif m := _RULE.match(line):
        _rule(g, m.group(1), m.group(2).split(), _number(m.group(3), g.source, number), number)
    else:
        text = line.strip()
        raise InputError(
            f"cannot read {text if len(text) <= 60 else text[:60] + '...'!r}: expected a rule "
            "'LHS -> A B* | weight', 'lexicon TAGS:', 'start' or 'zipf'",
            g.source,
            number,
        )
    return None


def _rule(g: Grammar, lhs: str, rhs: list[str], weight: float, line: int) -> None:
    """``LHS -> RHS | weight``: an alias's alternative or a phrase's rule."""
    if not weight > 0 or weight == float("inf"):
        raise InputError("a rule's weight must be a positive number", g.source, line)
    _no_bracket(lhs, g.source, line)
    g.lines.setdefault(lhs, line)
    if lhs.startswith("@"):
        if len(rhs) != 1 or "*" in rhs[0] or ":" in rhs[0]:
            raise InputError("an alias rewrites to exactly one plain symbol", g.source, line)
        g.aliases.setdefault(lhs, Choices()).add(_no_bracket(rhs[0], g.source, line), weight)
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
            out.append(Child(_no_bracket(item[:-1], source, line), True, ""))
        else:
            symbol, sep, label = item.partition(":")
            if not sep or not label:
                raise InputError(
                    f"{item!r}: mark the head with * and give every other child "
                    "a dependency label (SYMBOL:label)",
                    source,
                    line,
                )
            out.append(Child(_no_bracket(symbol, source, line), False, label))
    if sum(c.head for c in out) != 1:
        raise InputError("a rule needs exactly one head child (marked with *)", source, line)
    return tuple(out)


def _lexicon_row(
    items: list[str], block: list[str], lexicon: dict[str, Choices[str]], source: str, line: int
) -> None:
    for word in items:
        _no_bracket(word, source, line)
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


def _no_bracket(item: str, source: str, line: int) -> str:
    """``item``, a word or symbol, which the trees print as it is: a bracket in it would
    leave them unbalanced."""
    if "(" in item or ")" in item:
        raise InputError(
            f"{item!r}: words and symbols are written into the trees as they are, so they "
            "may not contain brackets (write -LRB- and -RRB-, as the treebank does)",
            source,
            line,
        )
    return item


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
            raise InputError(f"lexicon {symbol} has no words", g.source, g.lines.get(symbol))
    words, depth = _shortest(g)
    never = {symbol for symbol in (*g.rules, *g.aliases) if words[symbol] == _NEVER}
    if never:
        # every such symbol leads to a loop of them: name the first symbol of a loop
        stuck = {x: sorted({c for c in _uses(g, x) if c in never}) for x in never}
        symbol = min((x for x in never if _reaches(x, x, stuck)), key=lambda x: g.lines.get(x, 0))
        used = stuck[symbol]
        raise InputError(
            f"the grammar cannot terminate: every rule of {symbol} uses a symbol that never "
            f"ends in words ({', '.join(used)})",
            g.source,
            g.lines.get(symbol),
        )
    g.min_words, g.min_depth = int(words[g.start]), int(depth[g.start])


_NEVER = float("inf")


def _uses(g: Grammar, symbol: str) -> list[str]:
    """The symbols the rules or alternatives of ``symbol`` use."""
    if symbol in g.aliases:
        return list(g.aliases[symbol].items)
    return [c.symbol for rule in g.rules[symbol].items for c in rule]


def _reaches(start: str, goal: str, edges: dict[str, list[str]]) -> bool:
    """Whether a path of one or more ``edges`` leads from ``start`` to ``goal``."""
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(edges[node])
    return False


def _shortest(g: Grammar) -> tuple[dict[str, float], dict[str, float]]:
    """Per symbol, the fewest words it can produce and the fewest levels of rules that takes
    (each computed on its own; infinite for a symbol that never ends in words)."""
    words: dict[str, float] = {s: _NEVER for s in (*g.rules, *g.aliases)}
    depth: dict[str, float] = dict(words)
    for symbol in g.lexicon:
        words[symbol] = 1
        depth[symbol] = 0
    changed = True
    while changed:  # at most one round per symbol: the values only go down
        changed = False
        for symbol, choices in g.aliases.items():
            best = min(words[x] for x in choices.items), min(depth[x] for x in choices.items)
            if best != (words[symbol], depth[symbol]):
                words[symbol], depth[symbol], changed = best[0], best[1], True
        for symbol, rules in g.rules.items():
            best = (
                min(sum(words[c.symbol] for c in rule) for rule in rules.items),
                1 + min(max(depth[c.symbol] for c in rule) for rule in rules.items),
            )
            if best != (words[symbol], depth[symbol]):
                words[symbol], depth[symbol], changed = best[0], best[1], True
    return words, depth


def load_grammar(name_or_path: str = "english") -> Grammar:
    """A built-in grammar by name (``resources/grammars/NAME.grammar``) or a file."""
    from pathlib import Path

    from induce.data.reading import read_text

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
