"""What a picture shows: the words of a sentence and its layers of arcs or brackets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from induce.data.types import Tree
from induce.structure.trees import leaves_and_spans

OK, WRONG, MISSED = "", "wrong", "missed"  # marks: a prediction's mistake, a gold item it missed


@dataclass(frozen=True)
class Arc:
    """A dependency: word ``dep`` (1-based) headed by ``head`` (0: the root)."""

    dep: int
    head: int
    label: str = ""
    mark: str = OK


@dataclass(frozen=True)
class Span:
    """A constituent over the words ``start`` .. ``end - 1`` (0-based, half-open)."""

    start: int
    end: int
    label: str = ""
    mark: str = OK


@dataclass
class Layer:
    """One side of a picture: a dependency tree (``arcs``) or a bracketing (``spans``)."""

    name: str
    arcs: list[Arc] | None = None
    spans: list[Span] | None = None


@dataclass
class SentenceView:
    """A sentence to draw: ``above`` the words and ``below`` them; ``score`` (0-100) and
    ``note`` are shown in its heading and in the page's index."""

    number: int
    words: list[str]
    tags: list[str] | None = None
    above: Layer | None = None
    below: Layer | None = None
    score: float | None = None
    note: str = ""
    where: str = ""  # file:line of the sentence
    extra: dict[str, str] = field(default_factory=dict)  # heading items beside the score

    def layers(self) -> list[Layer]:
        return [layer for layer in (self.above, self.below) if layer is not None]


def arcs_of(
    heads: Sequence[int], labels: Sequence[str] | None = None, gold: Sequence[int] | None = None
) -> list[Arc]:
    """One arc per word; with ``gold`` heads, a predicted arc that differs is ``wrong``."""
    out = []
    for k, head in enumerate(heads):
        mark = WRONG if gold is not None and gold[k] != head else OK
        label = labels[k] if labels is not None and labels[k] not in (None, "_") else ""
        out.append(Arc(k + 1, head, label, mark))
    return out


def missed_arcs(
    gold: Sequence[int], pred: Sequence[int], labels: Sequence[str] | None
) -> list[Arc]:
    """The gold arcs, those the prediction does not have marked ``missed``."""
    return [
        Arc(a.dep, a.head, a.label, MISSED if pred[a.dep - 1] != a.head else OK)
        for a in arcs_of(gold, labels)
    ]


def spans_of(tree: Tree) -> list[Span]:
    """Every constituent of ``tree`` (preterminals are the words); a unary chain's labels
    are joined by ``/`` on its one span (outermost first)."""
    _, raw = leaves_and_spans(tree)
    return merge_chains([(s, e, label) for s, e, label in raw if e > s])


def merge_chains(raw: Sequence[tuple[int, int, str]]) -> list[Span]:
    """Spans in pre-order with one entry per distinct ``(start, end)``, labels joined."""
    labels: dict[tuple[int, int], list[str]] = {}
    for start, end, label in raw:
        labels.setdefault((start, end), []).append(label)
    return [Span(s, e, "/".join(x for x in names if x)) for (s, e), names in labels.items()]


def compare_spans(
    gold: Sequence[tuple[int, int, str]],
    pred: Sequence[tuple[int, int, str]],
    key: Callable[[tuple[int, int, str]], object],
) -> tuple[list[Span], list[Span]]:
    """Gold spans (``missed`` where the prediction lacks them) and predicted spans
    (``wrong`` where the gold lacks them), matched as multisets of ``key(span)``."""
    left = Counter(key(s) for s in pred)
    gold_out = []
    for span in gold:
        found = left[key(span)] > 0
        left[key(span)] -= found
        gold_out.append(Span(span[0], span[1], span[2], OK if found else MISSED))
    left = Counter(key(s) for s in gold)
    pred_out = []
    for span in pred:
        found = left[key(span)] > 0
        left[key(span)] -= found
        pred_out.append(Span(span[0], span[1], span[2], OK if found else WRONG))
    return gold_out, pred_out


def real_tags(tags: Sequence[str] | None) -> list[str] | None:
    """``tags`` when they say something (an induced tree's preterminals are all ``X``)."""
    if not tags or all(tag in ("X", "_", "") for tag in tags):
        return None
    return list(tags)


def parse_view(
    number: int,
    words: Sequence[str],
    heads: Sequence[int] | None,
    labels: Sequence[str] | None,
    tree: Tree | None,
) -> SentenceView:
    """A parse: its dependencies above the words (when the model gives them), its tree
    (over the same words; ``None``: none) below, and the tree's tags when they are real."""
    parsed = tree
    tags = real_tags(parsed.tags()) if parsed is not None else None
    if parsed is not None and len(parsed.words()) != len(words):
        parsed, tags = None, None  # a tree over other tokens cannot be drawn under these
    spans = spans_of(parsed) if parsed is not None else None
    if spans is not None and tags is None:  # an induced tree: every label is X, say none
        spans = [Span(s.start, s.end) for s in spans]
    if labels is not None and tags is None:  # an induced parse: "dep" on every arc says nothing
        labels = ["" if label == "dep" else label for label in labels]
    return SentenceView(
        number,
        list(words),
        tags,
        Layer("dependencies", arcs=arcs_of(heads, labels)) if heads is not None else None,
        Layer("tree", spans=spans) if spans is not None else None,
    )
