"""``induce evaluate deps``: attachment scores of induced dependency trees.

Both conventions first reduce each sentence to its words (tokens whose *gold* tag is a word
tag); a head outside the words is replaced by its nearest kept ancestor, or the root.  The
prediction may cover all gold tokens or only the words; any of CoNLL-U, CoNLL-X and Malt-TAB.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from induce.data.conll import DepFile, read_deps, with_upos
from induce.data.errors import ConfigError, InduceWarning, InputError
from induce.data.normalize import is_upos_tagset, load_tagset
from induce.data.progress import every
from induce.data.reading import read_text
from induce.data.types import DepTree, dependency_problem
from induce.evaluate.common import (
    align_tokens,
    gold_digest,
    prediction_or_baseline,
    require_sentences,
    word_filter,
)
from induce.metrics.attachment import position_scores, string_pair_scores
from induce.metrics.conventions import DepConvention, load_dep_convention
from induce.render.views import Layer, SentenceView, arcs_of, missed_arcs
from induce.structure.baselines import DEP_BASELINES, dependency_baseline
from induce.structure.deps import restrict_heads


@dataclass
class DepReport:
    settings: dict
    counts: Counter = field(default_factory=Counter)
    relation_correct: Counter = field(default_factory=Counter)
    relation_total: Counter = field(default_factory=Counter)
    views: list[SentenceView] = field(default_factory=list)  # with ``views=True``

    def to_dict(self) -> dict:
        c = self.counts
        tokens = c["tokens"]

        def pct(a: int, b: int) -> float | None:
            return 100 * a / b if b else None

        return {
            "settings": self.settings,
            "uas": pct(c["correct"], c["scored"]),
            "uuas": pct(c["undirected_correct"], c["scored"]),
            "root_accuracy": pct(c["root_correct"], c["roots"]),
            "tokens": tokens,
            "sentences": c["sentences"],
            "skipped_sentences": c["skipped"],
            "correct": c["correct"],
            "undirected_correct": c["undirected_correct"],
            "per_relation_recall": {
                label: pct(self.relation_correct[label], total)
                for label, total in sorted(self.relation_total.items())
            },
            "per_relation_counts": {
                label: {"correct": self.relation_correct[label], "total": total}
                for label, total in sorted(self.relation_total.items())
            },
        }

    def write_html(self, path: str) -> None:
        """The sentences of ``views`` as one HTML page (atomically)."""
        from induce.render.html import write_page

        if not self.views:  # a page of none: the report was made without them
            raise ConfigError("a page needs the report made with views=True", setting="views")

        data = self.to_dict()
        summary = [
            ("gold", str(self.settings["gold"])),
            ("prediction", str(self.settings["prediction"])),
            ("convention", str(self.settings["convention"]["name"])),
            ("UAS", _two(data["uas"])),
            ("UUAS", _two(data["uuas"])),
            ("score per sentence", "UAS"),
        ]
        title = f"Dependencies: {self.settings['prediction']} against {self.settings['gold']}"
        write_page(path, self.views, title, summary, ("gold", "pred", "wrong", "missed"))


def _two(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def evaluate_deps(
    gold_path: str | DepFile,
    pred_path: str | DepFile | None = None,
    *,
    convention: str | DepConvention = "position",
    baseline: str | None = None,
    gold_format: str | None = None,
    pred_format: str | None = None,
    tagset: str | None = None,
    gold_scheme: str | None = None,
    views: bool = False,
) -> DepReport:
    """UAS/UUAS (DDA/UDA), root accuracy and per-relation recall of ``pred_path`` (or a
    ``baseline``: ``next``, ``prev``, ``random[:SEED]``) against ``gold_path``.
    ``gold_scheme`` names the gold's conversion in the report; by default the one a dataset
    records for its ``SPLIT.deps.conllu`` files.  ``views``: keep a picture of every scored
    sentence in ``report.views`` (gold arcs above the words, predicted below, mistakes marked;
    for :func:`induce.render.html.write_page`)."""
    conv = (
        convention
        if isinstance(convention, DepConvention)
        else load_dep_convention(convention, tagset=tagset)
    )
    is_word = word_filter(conv.tagset)
    gold = gold_path if isinstance(gold_path, DepFile) else read_deps(gold_path, gold_format)
    if is_upos_tagset(load_tagset(conv.tagset)):
        gold = with_upos(gold)
    require_sentences(len(gold), gold.path)
    pred, name, seed, index = prediction_or_baseline(
        gold,
        pred_path,
        # predictions may be head assignments that are not trees (argmax decoding), scored
        # head by head as the official UDGN and StructFormer scorers do
        lambda path: path if isinstance(path, DepFile) else read_deps(path, pred_format, False),
        baseline,
        DEP_BASELINES,
        lambda: [k for k, g in enumerate(gold.sentences) if not any(_kept(g, is_word))],
    )
    if pred is not None:
        _warn_non_trees(pred)
    report = DepReport(
        {
            "metric": "deps",
            "gold": gold.path,
            "gold_digest": gold_digest(gold),
            "prediction": pred.path if pred is not None else f"baseline:{baseline}",
            "baseline": baseline,
            "convention": conv.to_dict(),
            "gold_scheme": gold_scheme or dataset_scheme(gold.path),
        }
    )
    _score_all(report, conv, is_word, gold, (pred, index), name, random.Random(seed), views)
    if not report.counts["sentences"]:
        seen = sorted({tag for tree in gold.sentences for tag in (tree.tags or ())})
        raise InputError(
            f"nothing to score: no word of the file has a tag of the tag set {conv.tagset} "
            f"(tags seen: {' '.join(seen[:12])}); the tag set 'all' scores every token",
            gold.path,
        )
    return report


def _warn_non_trees(pred: DepFile) -> None:
    broken = [k for k, tree in enumerate(pred.sentences) if dependency_problem(tree.heads)]
    if broken:
        import warnings

        path, line = pred.where(broken[0])
        warnings.warn(
            f"{len(broken)} predicted sentences are not trees (first: {path}:{line}, "
            f"{dependency_problem(pred.sentences[broken[0]].heads)}); scored head by head",
            InduceWarning,
            stacklevel=2,
        )


def dataset_scheme(gold_path: str) -> str | None:
    """The conversion scheme a dataset's manifest records, when ``gold_path`` is one of its
    ``SPLIT.deps.conllu`` files."""
    import yaml

    path = Path(gold_path)
    manifest = path.parent / "manifest.yaml"
    if not path.name.endswith(".deps.conllu") or not manifest.is_file():
        return None
    try:
        data = yaml.safe_load(read_text(manifest))
    except yaml.YAMLError:
        return None
    deps = data.get("dependencies") if isinstance(data, dict) else None
    return str(deps["scheme"]) if isinstance(deps, dict) and deps.get("scheme") else None


def _score_all(
    report: DepReport,
    conv: DepConvention,
    is_word: Callable[[str], bool],
    gold: DepFile,
    paired: tuple[DepFile | None, list[int | None]],
    baseline: str,
    rng: random.Random,
    views: bool = False,
) -> None:
    """Add every gold sentence with words to ``report``, against its prediction (``paired``:
    the file and each gold sentence's sentence in it) or the ``baseline``'s heads over its
    words."""
    pred, index = paired
    for k, g in enumerate(gold.sentences):
        every("scoring sentences", k + 1, len(gold))
        keep = _kept(g, is_word)
        words = [w for w, kept in zip(g.words, keep) if kept]
        if not words:
            report.counts["skipped"] += 1
            continue
        gold_heads = restrict_heads(g.heads, keep)
        if pred is None:
            pred_heads = dependency_baseline(baseline, len(words), rng)
        else:
            j = index[k]
            assert j is not None, "a gold sentence with words has a prediction"
            pred_heads = _prediction(pred, j, g.words, keep, (k, *gold.where(k)))
        labels = [lab for lab, kept in zip(g.labels or ("_",) * len(g), keep) if kept]
        correct = _score(report, conv, words, gold_heads, pred_heads, labels)
        if views:
            where = "{}:{}".format(*gold.where(k))
            view = SentenceView(k + 1, words, None, where=where, score=100 * correct / len(words))
            view.above = Layer("gold", arcs=missed_arcs(gold_heads, pred_heads, labels))
            view.below = Layer("prediction", arcs=arcs_of(pred_heads, None, gold_heads))
            report.views.append(view)


def _kept(tree: DepTree, is_word: Callable[[str], bool]) -> list[bool]:
    """Which of the sentence's tokens are words (by their gold tags)."""
    return [is_word(tag) for tag in (tree.tags or ())]


def _prediction(
    pred: DepFile,
    j: int,
    gold_words: Sequence[str],
    keep: list[bool],
    gold_where: tuple[int, str, int],
) -> list[int]:
    """Prediction sentence ``j``'s heads over the words of gold sentence ``gold_where``
    (its index, file and line)."""
    p = pred.sentences[j]
    pfile, pline = pred.where(j)
    k, gfile, gline = gold_where
    where = f"sentence {k + 1} (gold {gfile}:{gline}, prediction {pfile}:{pline})"
    if align_tokens(gold_words, keep, p.words, where):
        return restrict_heads(p.heads, keep)
    return list(p.heads)


def _score(
    report: DepReport,
    conv: DepConvention,
    words: list[str],
    gold: list[int],
    pred: list[int],
    labels: list[str],
) -> int:
    """Add one sentence; its correct attachments under the convention."""
    counts = report.counts
    counts["sentences"] += 1
    counts["tokens"] += len(words)
    if conv.arcs == "positions":
        correct, undirected = position_scores(gold, pred)
    else:
        correct, undirected = string_pair_scores(words, gold, pred)
    counts["scored"] += len(words)
    counts["correct"] += correct
    counts["undirected_correct"] += undirected
    for g, p, label in zip(gold, pred, labels):
        report.relation_total[label] += 1
        report.relation_correct[label] += g == p
        if g == 0:
            counts["roots"] += 1
            counts["root_correct"] += p == 0
    return correct
