"""Where things go: words in columns, arcs and brackets on levels.

Everything is measured in character columns, so the terminal drawing and the SVG (which
uses a monospace font and scales columns to pixels) place words, arcs and brackets alike.
A column is what a terminal shows: an East Asian wide character takes two, a combining mark
none (:func:`cells`).
A word occupies at least :data:`MIN_WIDTH` columns; arcs end at the middle column of their
dependent and leave their head one column left or right of its middle, so that an arrow
into a word and the arcs out of it never share a column.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from induce.render.views import Arc, Span

MIN_WIDTH = 3
GAP = 1
_ZERO_WIDTH = ("Mn", "Me", "Cf")  # combining marks, and format characters (a zero-width joiner)
# the C0 controls (XML refuses all but tab, line feed and carriage return, even as
# references; a terminal obeys ESC) and DEL, shown as their control pictures (U+2400...),
# and the two noncharacters XML refuses, as the replacement character
CONTROLS = {c: 0x2400 + c for c in range(0x20)} | {0x7F: 0x2421, 0xFFFE: 0xFFFD, 0xFFFF: 0xFFFD}


@dataclass(frozen=True)
class Columns:
    """The first column and width of each word, and the width of the whole line."""

    starts: list[int]
    widths: list[int]

    @property
    def total(self) -> int:
        return self.starts[-1] + self.widths[-1] if self.starts else 0

    def middle(self, word: int) -> int:
        """Middle column of word ``word`` (0-based)."""
        return self.starts[word] + self.widths[word] // 2

    def last(self, word: int) -> int:
        return self.starts[word] + self.widths[word] - 1


def visible(text: str) -> str:
    """``text`` with its control characters shown (:data:`CONTROLS`): a word may hold one,
    which a page's SVG or a terminal must not take as its own."""
    return text.translate(CONTROLS)


def cells(text: str) -> list[str]:
    """:func:`visible` ``text`` as the terminal columns it takes: a character a column, a
    wide one (East Asian ``W``/``F``) followed by an empty column, a combining mark or a
    zero-width character joined to the column before it."""
    out: list[str] = []
    for char in visible(text):
        if out and unicodedata.category(char) in _ZERO_WIDTH:
            out[-1 if out[-1] else -2] += char
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            out += [char, ""]
        else:
            out.append(char)
    return out


def width(text: str) -> int:
    """The columns ``text`` takes in a terminal (:func:`cells`)."""
    return len(cells(text))


def columns(words: Sequence[str], tags: Sequence[str] | None = None) -> Columns:
    """Each word as wide as itself or its tag, at least :data:`MIN_WIDTH`, one column apart."""
    starts, widths, at = [], [], 0
    for k, word in enumerate(words):
        taken = max(width(word), width(tags[k]) if tags else 0, MIN_WIDTH)
        starts.append(at)
        widths.append(taken)
        at += taken + GAP
    return Columns(starts, widths)


def pack(intervals: Sequence[tuple[int, int]]) -> list[int]:
    """A level (1, 2, ...) for each closed column interval: above every interval it contains,
    never on the level of an interval it touches.  Shorter intervals are placed first."""
    order = sorted(range(len(intervals)), key=lambda k: (intervals[k][1] - intervals[k][0], k))
    levels = [0] * len(intervals)
    placed: list[tuple[int, int, int]] = []
    for k in order:
        lo, hi = intervals[k]
        level = 1 + max((lv for a, b, lv in placed if lo <= a and b <= hi), default=0)
        while any(lv == level and a <= hi and lo <= b for a, b, lv in placed):
            level += 1
        levels[k] = level
        placed.append((lo, hi, level))
    return levels


@dataclass(frozen=True)
class PlacedArc:
    arc: Arc
    head_x: int  # column where the arc leaves its head (the dependent's for a root arc)
    dep_x: int  # column of the arrow into the dependent
    level: int


@dataclass(frozen=True)
class PlacedSpan:
    span: Span
    left: int
    right: int
    level: int


def place_arcs(arcs: Sequence[Arc], cols: Columns) -> tuple[list[PlacedArc], int]:
    """Arcs on levels, root arcs on one level above all others; and the number of levels."""
    ends: dict[int, tuple[int, int]] = {}  # arc index -> (head column, dependent column)
    for k, arc in enumerate(arcs):
        if arc.head != 0:
            side = 1 if arc.head < arc.dep else -1
            ends[k] = (cols.middle(arc.head - 1) + side, cols.middle(arc.dep - 1))
    inner = list(ends)
    levels = dict(zip(inner, pack([(min(ends[k]), max(ends[k])) for k in inner])))
    top = max(levels.values(), default=0) + 1
    out = []
    for k, arc in enumerate(arcs):
        if arc.head == 0:
            dep_x = cols.middle(arc.dep - 1)
            out.append(PlacedArc(arc, dep_x, dep_x, top))
        else:
            out.append(PlacedArc(arc, ends[k][0], ends[k][1], levels[k]))
    return out, (top if any(a.head == 0 for a in arcs) else top - 1)


def place_spans(spans: Sequence[Span], cols: Columns) -> tuple[list[PlacedSpan], int]:
    """Brackets on levels, each above those it contains; and the number of levels."""
    intervals = [(cols.starts[s.start], cols.last(s.end - 1)) for s in spans]
    levels = pack(intervals)
    placed = [PlacedSpan(s, lo, hi, lv) for s, (lo, hi), lv in zip(spans, intervals, levels)]
    return placed, max(levels, default=0)
