"""``induce evaluate brackets``: EVALB scoring of two tree files (or a baseline)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from induce.data.normalize import EMPTY_TAGS
from induce.data.ptb import TreeFile, read_trees
from induce.data.types import Tree
from induce.evaluate.common import match_counts, parse_baseline, require_sentences
from induce.metrics.evalb import Evalb, EvalbResult
from induce.metrics.evalb_params import EvalbParams, load_params
from induce.structure.baselines import TREE_BASELINES, tree_baseline
from induce.structure.trees import unwrap


@dataclass
class BracketReport:
    settings: dict
    result: EvalbResult

    def to_dict(self) -> dict:
        cutoff = self.result.params.cutoff_len
        return {
            "settings": self.settings,
            "all": self.result.all.to_dict(),
            f"len<={cutoff}": self.result.short.to_dict(),
            "errors": [{"sentence": s.index, "message": s.message} for s in self.result.errors],
        }


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
    gold_path: str,
    pred_path: str | None = None,
    *,
    param: str | EvalbParams = "collins",
    baseline: str | None = None,
) -> BracketReport:
    """Score ``pred_path`` (or the ``baseline``) against ``gold_path`` as EVALB does."""
    params = param if isinstance(param, EvalbParams) else load_params(param)
    gold = read_trees(gold_path)
    require_sentences(len(gold), gold.path)
    if baseline is not None:
        pred_trees = baseline_trees(gold, baseline)
        pred_name = f"baseline:{baseline}"
    else:
        assert pred_path is not None, "give a prediction file or a baseline"
        pred = read_trees(pred_path)
        match_counts(len(gold), gold.path, pred)
        pred_trees = pred.trees
        pred_name = pred.path
    scorer = Evalb(params)
    for g, t in zip(gold.trees, pred_trees):
        scorer.add(g, t)
    settings = {
        "metric": "brackets",
        "gold": gold.path,
        "prediction": pred_name,
        "baseline": baseline,
        "evalb": params.to_dict(),
    }
    return BracketReport(settings, scorer.result())
