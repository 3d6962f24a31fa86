"""Bracket scoring with the semantics of the C EVALB (Sekine & Collins; January-2006 revision).

Reproduced rule by rule, because published numbers depend on every one of them:

* preterminals ``(TAG word)`` are words, never brackets; a word whose tag is a ``DELETE_LABEL``
  is removed before positions are counted, and a bracket left covering no word is dropped;
* bracket labels are cut at the first ``-`` or ``=`` (even at position 0); a bracket whose cut
  label equals a ``DELETE_LABEL`` (``EQ_LABEL`` applies) is not scored; an unlabelled bracket
  ``( ...)`` is a bracket with the empty label;
* a gold bracket is matched to the first unmatched test bracket with the same span (and label,
  when ``LABELED 1``), gold and test taken in order of their opening brackets;
* a test bracket *crosses* when some scored gold bracket overlaps it without nesting; it counts
  once however many gold brackets it crosses;
* tagging accuracy compares the raw tags of the remaining words (``EQ_LABEL`` applies);
* an empty test sentence is *skipped*; a sentence whose word count or words differ is an
  *error* (after the ``QUOTE_LABEL`` repair); neither counts in the bracket totals;
* the ``len<=CUTOFF_LEN`` section selects sentences by gold length counted over every
  preterminal whose tag is not a ``DELETE_LABEL_FOR_LENGTH``;
* after more than ``MAX_ERROR + 1`` error sentences the C program stops without a summary; so
  does this module (it raises :class:`EvalbStopped`).

Unlike the C program there is no limit on sentence length or bracket count.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import cast

from induce.data.errors import InduceError
from induce.data.types import Tree
from induce.metrics.evalb_params import EvalbParams
from induce.metrics.evalb_quotes import fix_quotes, read_with_quotes
from induce.structure.trees import leaves_and_spans, restrict_spans

OK, ERROR, SKIP = 0, 1, 2


class EvalbStopped(InduceError):
    """Too many error sentences: EVALB gives up (its ``MAX_ERROR``)."""


@dataclass
class SentenceScore:
    """One line of EVALB's per-sentence table."""

    index: int  # 1-based sentence number
    length: int  # gold length for the cut-off (DELETE_LABEL_FOR_LENGTH excluded)
    status: int  # OK, ERROR or SKIP
    matched: int = 0
    gold: int = 0
    test: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    message: str = ""  # why the sentence is an error


@dataclass
class Summary:
    """Totals over the valid sentences of one section (all, or len <= cutoff)."""

    sentences: int = 0
    error_sentences: int = 0
    skip_sentences: int = 0
    matched: int = 0
    gold_brackets: int = 0
    test_brackets: int = 0
    crossing: int = 0
    words: int = 0
    correct_tags: int = 0
    complete_match_sentences: int = 0
    no_crossing_sentences: int = 0
    two_or_less_crossing_sentences: int = 0

    def add(self, s: SentenceScore) -> None:
        self.sentences += 1
        if s.status == ERROR:
            self.error_sentences += 1
            return
        if s.status == SKIP:
            self.skip_sentences += 1
            return
        self.matched += s.matched
        self.gold_brackets += s.gold
        self.test_brackets += s.test
        self.crossing += s.crossing
        self.words += s.words
        self.correct_tags += s.correct_tags
        self.complete_match_sentences += s.gold == s.test == s.matched
        self.no_crossing_sentences += s.crossing == 0
        self.two_or_less_crossing_sentences += s.crossing <= 2

    # The formulas below keep the C program's order of floating-point operations.
    @property
    def valid_sentences(self) -> int:
        return self.sentences - self.error_sentences - self.skip_sentences

    @property
    def recall(self) -> float:
        return 100.0 * self.matched / self.gold_brackets if self.gold_brackets > 0 else 0.0

    @property
    def precision(self) -> float:
        return 100.0 * self.matched / self.test_brackets if self.test_brackets > 0 else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of the percentages; NaN (EVALB prints ``-nan``) when both are 0."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r != 0 else math.nan

    def _per_sentence(self, count: int, scale: float) -> float:
        n = self.valid_sentences
        return scale * count / n if n > 0 else 0.0

    @property
    def complete_match(self) -> float:
        return self._per_sentence(self.complete_match_sentences, 100.0)

    @property
    def avg_crossing(self) -> float:
        return self._per_sentence(self.crossing, 1.0)

    @property
    def no_crossing(self) -> float:
        return self._per_sentence(self.no_crossing_sentences, 100.0)

    @property
    def two_or_less_crossing(self) -> float:
        return self._per_sentence(self.two_or_less_crossing_sentences, 100.0)

    @property
    def tagging_accuracy(self) -> float:
        return 100.0 * self.correct_tags / self.words if self.words > 0 else 0.0

    def to_dict(self) -> dict:
        """The JSON block: full-precision percentages (0-100), ``None`` for NaN, and counts."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "recall": self.recall,
            "precision": self.precision,
            "f1": num(self.f1),
            "complete_match": self.complete_match,
            "avg_crossing": self.avg_crossing,
            "no_crossing": self.no_crossing,
            "two_or_less_crossing": self.two_or_less_crossing,
            "tagging_accuracy": self.tagging_accuracy,
            "sentences": self.sentences,
            "error_sentences": self.error_sentences,
            "skip_sentences": self.skip_sentences,
            "valid_sentences": self.valid_sentences,
            "matched": self.matched,
            "gold_brackets": self.gold_brackets,
            "test_brackets": self.test_brackets,
            "crossing_brackets": self.crossing,
            "words": self.words,
            "correct_tags": self.correct_tags,
        }


@dataclass
class EvalbResult:
    params: EvalbParams
    sentences: list[SentenceScore] = field(default_factory=list)
    all: Summary = field(default_factory=Summary)
    short: Summary = field(default_factory=Summary)  # len <= params.cutoff_len

    @property
    def errors(self) -> list[SentenceScore]:
        return [s for s in self.sentences if s.status == ERROR]


class _Side:
    """What EVALB's reader keeps of one tree: the words left after deletion, their tags,
    the brackets over them (pre-order) and the length used for the cut-off."""

    __slots__ = ("tree", "words", "tags", "brackets", "length")

    def __init__(
        self,
        tree: Tree | None,
        words: list[str],
        tags: list[str],
        brackets: list[tuple[int, int, str]],
        length: int,
    ) -> None:
        self.tree = tree
        self.words = words
        self.tags = tags
        self.brackets = brackets
        self.length = length


class Evalb:
    """Scores sentence pairs one at a time; :meth:`result` gives the totals so far."""

    def __init__(self, params: EvalbParams) -> None:
        self.params = params
        self._delete = frozenset(params.delete_labels)
        self._delete_len = frozenset(params.delete_labels_for_length)
        self._quote = frozenset(params.quote_labels)
        eq = {(a, b) for a, b in params.eq_labels} | {(b, a) for a, b in params.eq_labels}
        self._eq = eq
        self._eq_words = {(a, b) for a, b in params.eq_words} | {(b, a) for a, b in params.eq_words}
        # Cut bracket labels that EVALB drops: the delete labels and their EQ_LABEL partners.
        self._labels = _LabelTable(self._delete | {a for a, b in eq if b in self._delete})
        self._canon = _classes(eq)
        self._result = EvalbResult(params)

    def result(self) -> EvalbResult:
        return self._result

    def add(self, gold: Tree | None, test: Tree | None) -> SentenceScore:
        """Score one sentence (``None`` = an empty line) and add it to the totals."""
        index = len(self._result.sentences) + 1
        g = self._read(gold)
        t = self._read(test)
        score = self._compare(index, g, t)
        result = self._result
        result.sentences.append(score)
        result.all.add(score)
        if g.length <= self.params.cutoff_len:
            result.short.add(score)
        if score.status == ERROR and result.all.error_sentences > self.params.max_error + 1:
            first = result.errors[0]
            raise EvalbStopped(
                f"more than {self.params.max_error + 1} sentences do not match the gold "
                f"(MAX_ERROR {self.params.max_error}); first: sentence {first.index}: "
                f"{first.message}"
            )
        return score

    def scored_brackets(self, tree: Tree | None) -> tuple[list[str], list[tuple[int, int, str]]]:
        """The words EVALB keeps of ``tree`` and the brackets it scores over them (cut
        labels; before any ``QUOTE_LABEL`` repair), for pictures of a sentence's mistakes."""
        side = self._read(tree)
        return side.words, self._scored(side)

    def bracket_key(self, bracket: tuple[int, int, str]) -> tuple[int, int, str]:
        """What two brackets share when they match: span, and the label's ``EQ_LABEL``
        class when labels count."""
        start, end, label = bracket
        if not self.params.labeled:
            return start, end, ""
        return start, end, (self._canon or {}).get(label, label)

    def _read(self, tree: Tree | None) -> _Side:
        if tree is None:
            return _Side(None, [], [], [], 0)
        leaves, brackets = leaves_and_spans(tree)
        tags = [p.label for p in leaves]
        delete, delete_len = self._delete, self._delete_len
        length = len(tags) - sum(1 for tag in tags if tag in delete_len)
        keep = [tag not in delete for tag in tags]
        if not all(keep):  # deleted words go; brackets renumbered, those left empty dropped
            leaves = [p for p, kept in zip(leaves, keep) if kept]
            tags = [tag for tag, kept in zip(tags, keep) if kept]
            brackets = restrict_spans(brackets, keep)
        words = cast("list[str]", [p.children[0] for p in leaves])  # preterminals hold words
        return _Side(tree, words, tags, brackets, length)

    def _compare(self, index: int, g: _Side, t: _Side) -> SentenceScore:
        if not t.words:
            return SentenceScore(index, g.length, SKIP)
        if len(g.words) != len(t.words) and self._quote:
            gq = read_with_quotes(g.tree, self._delete, self._quote)
            tq = read_with_quotes(t.tree, self._delete, self._quote)
            fix_quotes(gq, tq, self._delete)
            g = _Side(g.tree, gq.words, gq.tags, gq.brackets(), g.length)
            t = _Side(t.tree, tq.words, tq.tags, tq.brackets(), t.length)
        if len(g.words) != len(t.words):
            return SentenceScore(
                index,
                g.length,
                ERROR,
                message=f"length differs ({len(g.words)} gold words, "
                f"{len(t.words)} test words): {_both(g, t)}",
            )
        eq_words = self._eq_words
        for position, (a, b) in enumerate(zip(g.words, t.words), 1):
            if a != b and (a, b) not in eq_words:
                return SentenceScore(
                    index,
                    g.length,
                    ERROR,
                    message=f"word {position} differs ({a!r} in gold, "
                    f"{b!r} in test): {_both(g, t)}",
                )
        gold = self._scored(g)
        test = self._scored(t)
        matched = self._match(gold, test)
        crossing = self._crossing(gold, test, len(g.words))
        eq = self._eq
        correct = sum(1 for a, b in zip(g.tags, t.tags) if a == b or (a, b) in eq)
        return SentenceScore(
            index, g.length, OK, matched, len(gold), len(test), crossing, len(g.words), correct
        )

    def _scored(self, side: _Side) -> list[tuple[int, int, str]]:
        """Brackets that count, in order: not empty, cut label not deleted."""
        table = self._labels
        return [
            (start, end, cut)
            for start, end, label in side.brackets
            if start != end and (cut := table[label]) is not None
        ]

    def _match(self, gold: list, test: list) -> int:
        """EVALB's greedy matching.  When labels are ignored, or EQ_LABEL makes classes (as in
        every shipped preset), greedy matching takes exactly the multiset intersection."""
        if not self.params.labeled:
            return sum((Counter([b[:2] for b in gold]) & Counter([b[:2] for b in test])).values())
        canon = self._canon
        if canon is not None:
            return sum(
                (
                    Counter([(s, e, canon.get(x, x)) for s, e, x in gold])
                    & Counter([(s, e, canon.get(x, x)) for s, e, x in test])
                ).values()
            )
        by_span: dict[tuple[int, int], list[list]] = {}
        for start, end, label in test:
            by_span.setdefault((start, end), []).append([label, False])
        eq = self._eq
        matched = 0
        for start, end, label in gold:
            for candidate in by_span.get((start, end), ()):
                if candidate[1]:
                    continue
                other = candidate[0]
                if other == label or (label, other) in eq:
                    candidate[1] = True
                    matched += 1
                    break
        return matched

    @staticmethod
    def _crossing(gold: list, test: list, n: int) -> int:
        # A gold (s, e) crosses a test (a, b) when s < a < e < b or a < s < b < e, i.e. when a
        # gold bracket ending strictly inside (a, b) starts before a, or one starting strictly
        # inside ends after b.  Keep, per position, the smallest start of the gold brackets
        # ending there and the largest end of those starting there.
        min_start = list(range(n + 1))
        max_end = list(range(n + 1))
        for s, e, _ in gold:
            if s < min_start[e]:
                min_start[e] = s
            if e > max_end[s]:
                max_end[s] = e
        crossing = 0
        for a, b, _ in test:
            if b - a > 1 and (min(min_start[a + 1 : b]) < a or max(max_end[a + 1 : b]) > b):
                crossing += 1
        return crossing


def _both(g: _Side, t: _Side, limit: int = 25) -> str:
    """Both word lists (after deletion), shortened, for a one-line message."""

    def show(words: list[str]) -> str:
        more = f" ...(+{len(words) - limit})" if len(words) > limit else ""
        return "[" + " ".join(words[:limit]) + more + "]"

    return f"gold {show(g.words)} vs test {show(t.words)}"


class _LabelTable(dict):
    """Raw bracket label -> EVALB's cut label, or ``None`` when such brackets are not scored;
    filled on first sight of each label."""

    def __init__(self, deleted: frozenset[str] | set[str]) -> None:
        super().__init__()
        self.deleted = deleted

    def __missing__(self, label: str) -> str | None:
        # EVALB cuts at the first "-" or "=", wherever it is (even at position 0).
        cut = label.replace("=", "-").split("-", 1)[0]
        value = None if cut in self.deleted else cut
        self[label] = value
        return value


def _classes(eq: set[tuple[str, str]]) -> dict[str, str] | None:
    """A representative per EQ_LABEL class, or ``None`` when the pairs are not an equivalence
    (A=B and B=C without A=C), where only EVALB's greedy matching gives its numbers."""
    canon: dict[str, str] = {}
    for a, b in sorted(eq):
        ra, rb = canon.get(a, a), canon.get(b, b)
        if ra != rb:
            low, high = sorted((ra, rb))
            for label, root in list(canon.items()):
                if root == high:
                    canon[label] = low
            canon[a] = canon[b] = canon[high] = low
    members: dict[str, list[str]] = {}
    for label, root in canon.items():
        members.setdefault(root, []).append(label)
    for group in members.values():
        if any(a != b and (a, b) not in eq for a in group for b in group):
            return None
    return canon


def score_corpus(
    gold: list[Tree | None], test: list[Tree | None], params: EvalbParams
) -> EvalbResult:
    """Score aligned sentence lists (equal lengths are the caller's check)."""
    scorer = Evalb(params)
    for g, t in zip(gold, test):
        scorer.add(g, t)
    return scorer.result()
