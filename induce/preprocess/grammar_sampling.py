"""Sampling sentences from a head-marked grammar (:mod:`induce.preprocess.grammar`) with
their gold constituency and dependency trees.

A sampled tree prints each symbol up to its first dot (``NP.pl`` -> ``NP``); the head child of
every rule gives its node's lexical head, and every other child's head word depends on it with
the label the rule gives that child (Stanford-style dependencies when the grammar marks heads
that way).  Sampling is deterministic for a seed: it draws only ``random.Random.random()``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from induce.data.errors import ConfigError, InputError
from induce.data.types import Tree
from induce.preprocess.grammar import Grammar


@dataclass(frozen=True)
class Sample:
    """One sentence: its gold tree, and heads (0 = root, 1-based) and labels of its words."""

    tree: Tree
    heads: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def words(self) -> list[str]:
        return self.tree.words()


MAX_DEPTH = 25  # levels of rules a sampled tree may have


class TooLong(Exception):
    """A draw went past the limit on words (``words``) or on levels of rules."""

    def __init__(self, words: bool) -> None:
        super().__init__()
        self.words = words


def check_limits(g: Grammar, max_words: int, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`~induce.data.errors.ConfigError` (``max_words``) or :class:`InputError`
    when no sentence of ``g`` fits in ``max_words`` words and ``max_depth`` levels of rules."""
    if g.min_words > max_words:
        raise ConfigError(
            f"must be at least {g.min_words}: the shortest sentence of {g.source} has "
            f"{g.min_words} words",
            setting="max_words",
        )
    if g.min_depth > max_depth:
        raise InputError(
            f"no sentence of the grammar fits in {max_depth} levels of rules: its shallowest "
            f"derivation needs {g.min_depth}",
            g.source,
        )


def sample(
    g: Grammar,
    rng: random.Random,
    max_words: int = 40,
    max_depth: int = MAX_DEPTH,
    tries: int = 1000,
) -> Sample:
    """A sentence drawn top-down from ``g`` with at most ``max_words`` words and depth
    ``max_depth`` (longer draws are thrown away and drawn again, so the distribution is the
    grammar's conditioned on those limits).  Limits no sentence fits raise
    :class:`~induce.data.errors.ConfigError` (``max_words``) or :class:`InputError`."""
    check_limits(g, max_words, max_depth)
    too_many_words = 0
    for _ in range(tries):
        words: list[tuple[str, str]] = []
        arcs: list[tuple[int, int, str]] = []  # (dependent, head) 0-based, label
        try:
            tree, head = _expand(g, g.start, rng, words, arcs, max_words, max_depth)
        except TooLong as err:
            too_many_words += err.words
            continue
        heads = [0] * len(words)
        labels = ["root"] * len(words)
        for dep, gov, label in arcs:
            heads[dep] = gov + 1
            labels[dep] = label
        return Sample(tree, tuple(heads), tuple(labels))
    if too_many_words * 2 >= tries:
        raise ConfigError(
            f"{max_words} lets no sentence of {g.source} through in {tries} draws (its shortest "
            f"has {g.min_words} words, but its recursive rules rarely stop that early): allow "
            "longer sentences or make those rules less likely",
            setting="max_words",
        )
    raise InputError(
        f"no sentence within {max_depth} levels of rules in {tries} draws: the grammar's "
        "recursive rules rarely stop; make them less likely",
        g.source,
    )


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
            raise TooLong(True)
        words.append((g.lexicon[symbol].draw(rng), label))
        return Tree(label, [words[-1][0]]), len(words) - 1
    if depth <= 0:
        raise TooLong(False)
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
