"""One self-contained HTML page of sentences: inline SVG, its own style and script, nothing
fetched from the network.

The page lists its sentences in an index (number, place in the file, score, first words),
sortable by score so the worst come first; ``j``/``k`` (or the arrow keys, ``n``/``p``) move
to the next or previous sentence, ``Home``/``End`` to the first or last, ``i`` back to the
index.  It can be written all at once (:func:`page`, :func:`write_page`) or as a stream
(:func:`page_start`, :func:`sentence`, :func:`page_end`) by a command that parses as it reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from induce.render.static import SCRIPT, STYLE
from induce.render.svg import escape, sentence_svg
from induce.render.views import SentenceView


def page_start(
    title: str, summary: Sequence[tuple[str, str]] = (), legend: Sequence[str] = ()
) -> str:
    """The page up to its first sentence: title, ``summary`` (name, value) lines and the
    ``legend`` entries (class names among ``gold``, ``pred``, ``wrong``, ``missed``)."""
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in summary)
    keys = "".join(f'<span class="key {escape(x)}">{escape(_LEGEND[x])}</span>' for x in legend)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<header><h1>{escape(title)}</h1>"
        + (f'<table class="summary">{rows}</table>' if rows else "")
        + (f'<p class="legend">{keys}</p>' if keys else "")
        + '<p class="help">Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> next and '
        "previous sentence, <kbd>Home</kbd>/<kbd>End</kbd> first and last, <kbd>i</kbd> the "
        'index.</p></header>\n<nav id="index" aria-label="sentences"></nav>\n<main>\n'
    )


_LEGEND = {
    "gold": "gold (above the words)",
    "pred": "prediction (below the words)",
    "wrong": "wrong in the prediction",
    "missed": "gold, missed by the prediction",
    "arcs": "dependencies (above the words)",
    "spans": "constituents (below the words)",
}


def sentence(view: SentenceView) -> str:
    """One sentence's section: heading and picture."""
    score = "" if view.score is None else f"{view.score:.2f}"
    preview = " ".join(view.words[:12]) + (" …" if len(view.words) > 12 else "")
    heading = [f"<b>{view.number}</b>"]
    if view.where:
        heading.append(f'<span class="where">{escape(view.where)}</span>')
    if view.score is not None:
        heading.append(f'<span class="score">{score}</span>')
    heading += [f"<span>{escape(k)} {escape(v)}</span>" for k, v in view.extra.items()]
    if view.note:
        heading.append(f'<span class="note">{escape(view.note)}</span>')
    picture = sentence_svg(view) or '<p class="note">(empty sentence)</p>'
    return (
        f'<section class="sentence" id="s{view.number}" tabindex="-1" '
        f'data-number="{view.number}" data-score="{score}" data-where="{escape(view.where)}" '
        f'data-words="{escape(preview)}">\n<h2>{" · ".join(heading)}</h2>\n'
        f'<div class="picture">{picture}</div>\n</section>\n'
    )


def page_end() -> str:
    return f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"


def page(
    views: Iterable[SentenceView],
    title: str,
    summary: Sequence[tuple[str, str]] = (),
    legend: Sequence[str] = (),
) -> str:
    """The whole page."""
    body = "".join(sentence(view) for view in views)
    return page_start(title, summary, legend) + body + page_end()


def write_page(
    path: str | os.PathLike[str],
    views: Iterable[SentenceView],
    title: str,
    summary: Sequence[tuple[str, str]] = (),
    legend: Sequence[str] = (),
) -> None:
    """:func:`page` written atomically to ``path``."""
    from induce.data.files import atomic_write

    atomic_write(path, page(views, title, summary, legend))
