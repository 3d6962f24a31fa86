"""Pictures of trees: dependency arcs and constituent brackets over the words of a sentence,
drawn for the terminal (:mod:`induce.render.terminal`) or as one self-contained HTML page with
inline SVG (:mod:`induce.render.html`).

Both drawings share one layout (:mod:`induce.render.layout`): words in columns, arcs and
brackets packed into levels so that an arc or bracket sits above everything it spans.  A
sentence to draw is a :class:`~induce.render.views.SentenceView`: its words and up to two
layers, one drawn above the words and one below (a parse: arcs above, brackets below; an
evaluation: gold above, prediction below, with the prediction's mistakes marked).
No torch, no network: the page carries its own style and script.
"""

from __future__ import annotations

from induce.render.views import Arc, Layer, SentenceView, Span

__all__ = ["Arc", "Layer", "SentenceView", "Span"]
