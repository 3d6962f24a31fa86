"""``induce evaluate brackets``: EVALB scoring of two tree files (or a baseline)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from induce.data.errors import ConfigError
from induce.data.normalize import EMPTY_TAGS
from induce.data.progress import every
from induce.data.ptb import TreeFile, read_trees
from induce.data.types import Tree
from induce.evaluate.common import gold_digest, match_counts, parse_baseline, require_sentences
from induce.metrics.evalb import OK, Evalb, EvalbResult, SentenceScore
from induce.metrics.evalb_params import EvalbParams, load_params
from induce.render.views import Layer, SentenceView, compare_spans, merge_chains
from induce.structure.baselines import TREE_BASELINES, tree_baseline
from induce.structure.trees import unwrap


@dataclass
class BracketReport:
    settings: dict
    result: EvalbResult
    views: list[SentenceView] = field(default_factory=list)  # with ``views=True``

    def to_dict(self) -> dict:
        cutoff = self.result.params.cutoff_len
        return {
            "settings": self.settings,
            "all": self.result.all.to_dict(),
            f"len<={cutoff}": self.result.short.to_dict(),
            "errors": [{"sentence": s.index, "message": s.message} for s in self.result.errors],
        }

    def write_html(self, path: str) -> None:
        """The sentences of ``views`` as one HTML page (atomically)."""
        from induce.render.html import write_page

        if not self.views:  # a page of none: the report was made without them
            raise ConfigError("a page needs the report made with views=True", setting="views")

        total = self.result.all
        f1 = total.f1
        mode = "labelled" if self.result.params.labeled else "unlabelled"
        summary = [
            ("gold", str(self.settings["gold"])),
            ("prediction", str(self.settings["prediction"])),
            ("EVALB parameters", f"{self.result.params.name} ({mode})"),
            ("recall / precision / F1", f"{total.recall:.2f} / {total.precision:.2f} / {f1:.2f}"),
            ("score per sentence", "bracket F1"),
        ]
        title = f"Brackets: {self.settings['prediction']} against {self.settings['gold']}"
        write_page(path, self.views, title, summary, ("gold", "pred", "wrong", "missed"))


def baseline_trees(gold: TreeFile, spec: str) -> list[Tree | None]:
    """The named baseline over each gold sentence's tokens (``-NONE-`` left out), keeping the
    gold tags, internal nodes labelled ``X``.  It is wrapped like the gold tree (``(TOP ...)``,
    or ``( ...)`` for LDC files), as a parser trained on that treebank would output it."""
    name, seed = parse_baseline(spec, TREE_BASELINES)
    rng = random.Random(seed)
    out: list[Tree | None] = []
    for tree in gold.trees:
        leaves = (
            []
            if tree is None
            else [
                Tree(p.label, list(p.children))
                for p in tree.preterminals()
                if p.label not in EMPTY_TAGS
            ]
        )
        if tree is None or not leaves:
            out.append(None)
            continue
        wrapper = tree.label if unwrap(tree) is not tree else "TOP"
        out.append(Tree(wrapper, [tree_baseline(name, leaves, rng)]))
    return out


def evaluate_brackets(
    gold_path: str | TreeFile,
    pred_path: str | TreeFile | None = None,
    *,
    param: str | EvalbParams = "collins",
    baseline: str | None = None,
    views: bool = False,
) -> BracketReport:
    """Score ``pred_path`` (or the ``baseline``) against ``gold_path`` as EVALB does (files,
    or trees already read: :class:`~induce.data.ptb.TreeFile`).
    ``views``: keep a picture of every sentence in ``report.views`` (gold brackets above the
    words, predicted below, the prediction's wrong and missed brackets marked)."""
    params = param if isinstance(param, EvalbParams) else load_params(param)
    # "(NP )" is a word "" tagged NP, as C EVALB reads it (a length mismatch, in general)
    gold = gold_path if isinstance(gold_path, TreeFile) else read_trees(gold_path, evalb=True)
    require_sentences(len(gold), gold.path)
    if baseline is not None:
        pred_trees = baseline_trees(gold, baseline)
        pred_name = f"baseline:{baseline}"
    else:
        assert pred_path is not None, "give a prediction file or a baseline"
        pred = pred_path if isinstance(pred_path, TreeFile) else read_trees(pred_path, evalb=True)
        match_counts(gold, pred)
        pred_trees = pred.trees
        pred_name = pred.path
    scorer = Evalb(params)
    pictures = []
    for k, (g, t) in enumerate(zip(gold.trees, pred_trees)):
        score = scorer.add(g, t)
        every("scoring sentences", k + 1, len(gold))
        if views:
            pictures.append(_view(scorer, score, g, t, "{}:{}".format(*gold.where(k))))
    settings = {
        "metric": "brackets",
        "gold": gold.path,
        "gold_digest": gold_digest(gold),
        "prediction": pred_name,
        "baseline": baseline,
        "evalb": params.to_dict(),
    }
    return BracketReport(settings, scorer.result(), pictures)


def _view(
    scorer: Evalb, score: SentenceScore, gold: Tree | None, test: Tree | None, where: str
) -> SentenceView:
    """One sentence: the gold's scored brackets above its words, the prediction's below."""
    words, gold_brackets = scorer.scored_brackets(gold)
    view = SentenceView(score.index, words, where=where)
    if score.status != OK:
        view.note = score.message or "skipped: empty prediction"
        view.above = Layer("gold", spans=merge_chains(gold_brackets))
        return view
    _, test_brackets = scorer.scored_brackets(test)
    above, below = compare_spans(gold_brackets, test_brackets, scorer.bracket_key)
    view.above, view.below = Layer("gold", spans=above), Layer("prediction", spans=below)
    total = score.gold + score.test
    view.score = 200 * score.matched / total if total else None
    view.extra = {"brackets": f"{score.matched} of {score.gold} gold, {score.test} predicted"}
    return view
