"""The table that ends a training run: its validation scores next to trivial baselines."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from induce.data.dataset import Dataset
from induce.data.types import Tree
from induce.metrics.validation import ParseScorer, load_gold
from induce.runs.directory import open_run
from induce.structure.baselines import dependency_baseline, tree_baseline


@dataclass(frozen=True)
class Row:
    name: str
    uf1: float | None = None
    uas: float | None = None
    uuas: float | None = None
    detail: str = ""  # e.g. "step 360, ppl 45.897" for a run's validation
    ppl: float | None = None  # a run's validation perplexity
    f1: float | None = None  # a chart parser's labelled validation F1 (EVALB)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name


def baseline_rows(dataset: Dataset, split: str = "valid", seed: int = 0) -> list[Row]:
    """Right/left-branching and random trees (UF1), next-word, previous-word and random
    dependencies (UAS/UUAS), scored exactly as validation scores a model."""
    gold = load_gold(dataset, split)
    rows: list[Row] = []
    for name, kind in (
        ("right-branching", "right"),
        ("left-branching", "left"),
        ("random tree", "random"),
        ("next word", "next"),
        ("previous word", "prev"),
        ("random dependencies", "random"),
    ):
        rng = random.Random(seed)
        scorer = ParseScorer()
        trees = name in ("right-branching", "left-branching", "random tree")
        for index, g in enumerate(gold.sentences):
            if g is None:
                continue
            if trees:
                leaves = [Tree("X", [str(i)]) for i in range(g.n)]
                scorer.add(index, g, tree_baseline(kind, leaves, rng), None)
            else:
                scorer.add(index, g, None, dependency_baseline(kind, g.n, rng))
        s = scorer.summary()
        rows.append(Row(name, s.get("uf1"), s.get("uas"), s.get("uuas")))
    return rows


def run_rows(run_path: str | Path) -> tuple[Row | None, Row | None]:
    """The run's best validation (lowest perplexity) and its last validation."""
    records = [r for r in open_run(run_path).history() if r.get("kind") == "eval"]
    if not records:
        return None, None
    best = [r for r in records if r.get("best")] or records

    def row(name: str, r: dict[str, Any]) -> Row:
        return Row(
            name,
            r.get("uf1"),
            r.get("uas"),
            r.get("uuas"),
            f"step {r.get('step')}, labelled F1 {r['f1']} (EVALB {r.get('evalb')})"
            if "f1" in r
            else f"step {r.get('step')}, ppl {r.get('valid_ppl')}",
            _float(r.get("valid_ppl")),
            _float(r.get("f1")),
        )

    last = row("this run, last", records[-1]) if records[-1] is not best[-1] else None
    return row("this run, best", best[-1]), last


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_dataset(run_path: str | Path) -> Dataset | None:
    """The dataset a run was trained on, if it is still where it was."""
    return open_run(run_path).open_dataset()
