"""A sentence drawn with box-drawing characters: arcs over the words, brackets under them.

::

                 ●root
     ┌──det─┐    │┌──obj─┐
     │   ┌──┤┌──┐││  ┌──┐│
     ▼   ▼  │▼  │▼│  ▼  │▼
    the old man saw  a  dog
    DT  JJ  NN  VBD DT  NN
    └───NP────┘     └─NP──┘
                └───VP────┘
    └──────────S──────────┘

Each cell of the drawing collects the directions of the lines through it (up, down, left,
right) and shows the character that joins them, so arcs that meet or cross draw as ``┬``,
``┼`` and so on.  Arrows (``▼``, ``▲`` below the words) point into each dependent; a wrong
predicted arc's arrow is ``✗`` and a missed gold arc's ``?`` (red and yellow arrows with
``colour``).
"""

from __future__ import annotations

from induce.render.layout import Columns, cells, columns, place_arcs, place_spans, width
from induce.render.views import MISSED, WRONG, Layer, SentenceView

UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
# placeholders for the marked arrows: private-use characters, which no control-character
# showing (layout.visible) touches and no word of a treebank holds
_MARKS = {WRONG: "\ue000", MISSED: "\ue001"}
_JOIN = {
    UP: "│",
    DOWN: "│",
    UP | DOWN: "│",
    LEFT: "─",
    RIGHT: "─",
    LEFT | RIGHT: "─",
    DOWN | RIGHT: "┌",
    DOWN | LEFT: "┐",
    UP | RIGHT: "└",
    UP | LEFT: "┘",
    UP | DOWN | RIGHT: "├",
    UP | DOWN | LEFT: "┤",
    DOWN | LEFT | RIGHT: "┬",
    UP | LEFT | RIGHT: "┴",
    UP | DOWN | LEFT | RIGHT: "┼",
}


class _Canvas:
    """Rows of cells, row 0 next to the words and higher rows further from them."""

    def __init__(self, rows: int, width: int) -> None:
        self.lines = [[0] * width for _ in range(rows)]
        self.text: dict[tuple[int, int], str] = {}

    def add(self, row: int, col: int, bits: int) -> None:
        if 0 <= row < len(self.lines) and 0 <= col < len(self.lines[row]):
            self.lines[row][col] |= bits

    def vertical(self, col: int, low: int, high: int) -> None:
        """A vertical line in column ``col`` through rows ``low`` to ``high - 1`` (the
        caller draws the turn at ``high``)."""
        for row in range(low, high):
            self.add(row, col, UP | DOWN)

    def horizontal(self, row: int, left: int, right: int) -> None:
        self.add(row, left, RIGHT)
        for col in range(left + 1, right):
            self.add(row, col, LEFT | RIGHT)
        self.add(row, right, LEFT)

    def write(self, row: int, col: int, text: str) -> None:
        for k, char in enumerate(cells(text)):  # a wide character's second column: ""
            self.text[row, col + k] = char

    def render(self, flip: bool) -> list[str]:
        """The rows top to bottom: the far row first, or (``flip``) the near row first with
        up and down swapped, for a layer drawn under the words."""
        out = []
        order = range(len(self.lines)) if flip else range(len(self.lines) - 1, -1, -1)
        for row in order:
            chars = []
            for col, bits in enumerate(self.lines[row]):
                if flip:
                    bits = (bits & (LEFT | RIGHT)) | (DOWN if bits & UP else 0)
                    bits |= UP if self.lines[row][col] & DOWN else 0
                written = self.text.get((row, col))  # "": a wide character's second column
                char = written if written is not None else _JOIN.get(bits, " ")
                chars.append("▲" if flip and char == "▼" else char)
            out.append("".join(chars).rstrip())
        return out


def _arcs(layer: Layer, cols: Columns, flip: bool, colour: bool) -> list[str]:
    placed, levels = place_arcs(layer.arcs or [], cols)
    canvas = _Canvas(levels + 1, cols.total + 8)
    for item in placed:
        arc, level = item.arc, item.level
        canvas.vertical(item.dep_x, 1, level)
        canvas.add(level, item.dep_x, DOWN)
        if arc.head == 0:
            canvas.write(level, item.dep_x, "●" + (arc.label or "root"))
        else:
            canvas.vertical(item.head_x, 0, level)
            canvas.add(level, item.head_x, DOWN)
            left, right = sorted((item.head_x, item.dep_x))
            canvas.horizontal(level, left, right)
            if arc.label and width(arc.label) <= right - left - 3:
                canvas.write(level, (left + right - width(arc.label)) // 2 + 1, arc.label)
        canvas.write(0, item.dep_x, _MARKS.get(arc.mark, "▼"))
    arrow = "▲" if flip else "▼"
    wrong = f"\x1b[31m{arrow}\x1b[0m" if colour else "✗"
    missed = f"\x1b[33m{arrow}\x1b[0m" if colour else "?"
    return [
        line.replace(_MARKS[WRONG], wrong).replace(_MARKS[MISSED], missed)
        for line in canvas.render(flip)
    ]


def _spans(layer: Layer, cols: Columns, flip: bool, colour: bool) -> list[str]:
    placed, levels = place_spans(layer.spans or [], cols)
    canvas = _Canvas(levels + 1, cols.total + 1)
    for item in placed:
        row = item.level
        canvas.horizontal(row, item.left, item.right)
        canvas.add(row, item.left, DOWN)
        canvas.add(row, item.right, DOWN)
        label = item.span.label
        if item.span.mark:
            label = ("✗" if item.span.mark == WRONG else "?") + label
        if label and width(label) <= item.right - item.left - 1:
            canvas.write(row, (item.left + item.right + 1 - width(label)) // 2, label)
    lines = canvas.render(flip)
    return lines[1:] if flip else lines[:-1]


def _words(view: SentenceView, cols: Columns) -> list[str]:
    line = [" "] * cols.total
    tags = [" "] * cols.total
    for k, word in enumerate(view.words):
        shown = cells(word)  # a wide character's two columns, a combining mark in its own
        start = cols.starts[k] + (cols.widths[k] - len(shown)) // 2
        line[start : start + len(shown)] = shown
        if view.tags:
            tag = cells(view.tags[k])
            at = cols.starts[k] + (cols.widths[k] - len(tag)) // 2
            tags[at : at + len(tag)] = tag
    out = ["".join(line).rstrip()]
    if view.tags:
        out.append("".join(tags).rstrip())
    return out


def draw(view: SentenceView, colour: bool = False) -> str:
    """The sentence as lines of text: its heading, the layer above, the words (and tags),
    the layer below; ``colour``: mistakes in red (ANSI) instead of marked with ``✗``."""
    if not view.words:
        return f"# {view.number}: (empty)\n\n"
    cols = columns(view.words, view.tags)
    lines = [_heading(view)]
    if view.above is not None:
        draw_layer = _arcs if view.above.arcs is not None else _spans
        lines += draw_layer(view.above, cols, False, colour)
    lines += _words(view, cols)
    if view.below is not None:
        draw_layer = _arcs if view.below.arcs is not None else _spans
        lines += draw_layer(view.below, cols, True, colour)
    return "\n".join(line for line in lines) + "\n\n"


def _heading(view: SentenceView) -> str:
    parts = [f"# {view.number}"]
    if view.where:
        parts.append(view.where)
    if view.score is not None:
        parts.append(f"{view.score:.1f}")
    parts += [f"{k} {v}" for k, v in view.extra.items()]
    if view.note:
        parts.append(view.note)
    return "  ".join(parts)
