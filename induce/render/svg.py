"""One sentence as an inline SVG: the words on a line, a layer of arcs or brackets above
them and another below, on the columns of :mod:`induce.render.layout`."""

from __future__ import annotations

import html

from induce.render.layout import Columns, columns, place_arcs, place_spans, visible
from induce.render.views import Layer, SentenceView


def escape(text: str) -> str:
    """``text`` for HTML and SVG: markup characters escaped, control characters shown."""
    return html.escape(visible(text))


CH = 9  # pixels per column (the SVG's text is monospace at 15 px)
LEVEL = 17  # pixels between levels
PAD = 8
WORD = 20  # height of the word row
TAG = 15  # height of the tag row
ROUND = 4  # corner radius of an arc


def _x(col: int) -> float:
    return PAD + col * CH + CH / 2


def _classes(base: str, mark: str) -> str:
    return f"{base} {mark}" if mark else base


def _arcs(layer: Layer, cols: Columns, edge: float, sign: int) -> tuple[list[str], int]:
    """The arcs of ``layer`` from the words' ``edge`` outwards (``sign`` -1: up, 1: down)."""
    placed, levels = place_arcs(layer.arcs or [], cols)
    out = []
    for item in placed:
        arc = item.arc
        y = edge + sign * (item.level * LEVEL + 4)
        hx, dx = _x(item.head_x), _x(item.dep_x)
        tip = edge + sign * 1
        title = f"<title>{escape(_arc_title(arc.dep, arc.head, arc.label))}</title>"
        if arc.head == 0:
            d = f"M{dx} {y:.0f} V{tip + sign * 6:.0f}"
            label_x, label_y = dx + 3, y + sign * 2
            anchor = "start"
        else:
            step = ROUND if dx > hx else -ROUND
            r = -sign * ROUND
            d = (
                f"M{hx} {edge:.0f} V{y + r:.0f} Q{hx} {y:.0f} {hx + step} {y:.0f} "
                f"H{dx - step} Q{dx} {y:.0f} {dx} {y + r:.0f} V{tip + sign * 6:.0f}"
            )
            label_x, label_y, anchor = (hx + dx) / 2, y, "middle"
        out.append(
            f'<path class="{_classes("arc", arc.mark)}{" root" if arc.head == 0 else ""}" '
            f'd="{d}">{title}</path>'
        )
        base = tip + sign * 7
        out.append(
            f'<path class="{_classes("arrow", arc.mark)}" '
            f'd="M{dx - 3.5} {base:.0f} L{dx} {tip:.0f} L{dx + 3.5} {base:.0f} Z"/>'
        )
        label = arc.label or ("root" if arc.head == 0 else "")
        if label and (arc.head == 0 or len(label) * 7 + 8 <= abs(dx - hx)):
            out.append(
                f'<text class="{_classes("arc-label", arc.mark)}" x="{label_x:.1f}" '
                f'y="{label_y + 4:.0f}" text-anchor="{anchor}">{escape(label)}</text>'
            )
    return out, levels


def _arc_title(dep: int, head: int, label: str) -> str:
    text = f"{dep} ← {head}" if head else f"{dep} is the root"
    return f"{text} ({label})" if label else text


def _spans(layer: Layer, cols: Columns, edge: float, sign: int) -> tuple[list[str], int]:
    placed, levels = place_spans(layer.spans or [], cols)
    out = []
    for item in placed:
        span = item.span
        y = edge + sign * (item.level * LEVEL - 4)
        x1, x2 = PAD + item.left * CH + 1, PAD + (item.right + 1) * CH - 1
        tick = y - sign * 5
        out.append(
            f'<path class="{_classes("span", span.mark)}" d="M{x1} {tick:.0f} V{y:.0f} H{x2} '
            f'V{tick:.0f}"><title>{escape(span.label)} {span.start + 1}-{span.end}</title></path>'
        )
        if span.label and len(span.label) * 7 < x2 - x1 - 4:
            out.append(
                f'<text class="{_classes("span-label", span.mark)}" x="{(x1 + x2) / 2:.1f}" '
                f'y="{y + 4:.0f}" text-anchor="middle">{escape(span.label)}</text>'
            )
    return out, levels


def _layer(layer: Layer | None, cols: Columns, edge: float, sign: int) -> tuple[list[str], int]:
    if layer is None:
        return [], 0
    draw = _arcs if layer.arcs is not None else _spans
    items, levels = draw(layer, cols, edge, sign)
    name = escape(layer.name)
    return [f'<g class="layer" data-layer="{name}">', *items, "</g>"], levels


def sentence_svg(view: SentenceView) -> str:
    """The ``<svg>`` element of ``view`` (an empty sentence: an empty string)."""
    if not view.words:
        return ""
    cols = columns(view.words, view.tags)
    width = PAD * 2 + (cols.total + 5) * CH  # room for a root's label at the last word
    # measure both layers first (drawn at edge 0), then place them around the words
    _, above = _layer(view.above, cols, 0, -1)
    _, below = _layer(view.below, cols, 0, 1)
    top = PAD + (above * LEVEL + 8 if view.above is not None else 0)
    words_end = top + WORD + (TAG if view.tags else 0)
    height = words_end + (below * LEVEL + 8 if view.below is not None else 0) + PAD
    up, _ = _layer(view.above, cols, top, -1)
    down, _ = _layer(view.below, cols, words_end + 2, 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img">'
    ]
    parts += up
    for k, word in enumerate(view.words):
        x = PAD + (cols.starts[k] + cols.widths[k] / 2) * CH
        parts.append(
            f'<text class="word" x="{x:.1f}" y="{top + 15}" text-anchor="middle">'
            f"<title>{k + 1}</title>{escape(word)}</text>"
        )
        if view.tags:
            parts.append(
                f'<text class="tag" x="{x:.1f}" y="{top + WORD + 11}" text-anchor="middle">'
                f"{escape(view.tags[k])}</text>"
            )
    parts += down
    parts.append("</svg>")
    return "\n".join(parts)
