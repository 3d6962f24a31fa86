"""The embedded default: the built-in synthetic dataset (generated once into the user cache),
the most recent run, and the end-of-training table of a run next to trivial baselines.

Cache folder: ``$INDUCE_CACHE_DIR``, else the platform's user cache (``$XDG_CACHE_HOME/induce``
or ``~/.cache/induce`` on Linux, ``~/Library/Caches/induce`` on macOS, ``%LOCALAPPDATA%\\induce``
on Windows).
"""

from __future__ import annotations

import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from induce.data.dataset import Dataset, load_dataset
from induce.data.errors import InputError
from induce.data.files import atomic_write
from induce.data.types import Tree
from induce.decode.distances import SentenceParse
from induce.structure.baselines import dependency_baseline, tree_baseline
from induce.train.validate import ParseScorer, load_gold

# the built-in dataset: the english grammar, seed 0 (see `induce preprocess synthetic`)
BUILTIN = {"sentences": 20_000, "valid": 1_000, "test": 1_000, "seed": 0, "grammar": "english"}
LATEST = "latest-run"


def cache_dir() -> Path:
    if os.environ.get("INDUCE_CACHE_DIR"):
        return Path(os.environ["INDUCE_CACHE_DIR"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "induce"
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "induce"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "induce"


def builtin_dataset() -> tuple[Path, bool]:
    """The built-in dataset's folder, generated when absent; ``(path, generated now)``."""
    from induce.data.normalize import Normalization, load_tagset
    from induce.preprocess.synthetic import SyntheticOptions, preprocess_synthetic

    b = BUILTIN
    path = cache_dir() / "datasets" / f"synthetic-{b['grammar']}-n{b['sentences']}-s{b['seed']}"
    if (path / "manifest.yaml").is_file():
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = load_tagset("ptb_word_tags")
    options = SyntheticOptions(
        sentences=b["sentences"],
        valid=b["valid"],
        test=b["test"],
        seed=b["seed"],
        grammar=b["grammar"],
        normalization=Normalization(word_tags=tags, tagset="ptb_word_tags"),
    )
    try:
        preprocess_synthetic(str(path), options)
    except InputError:
        if not (path / "manifest.yaml").is_file():  # not another process finishing first
            raise
    return path, True


def remember_run(path: str | Path) -> None:
    """Record ``path`` as the most recent run (``induce parse`` without ``--model``)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / LATEST, str(Path(path).resolve()) + "\n")


def latest_run() -> Path:
    record = cache_dir() / LATEST
    if not record.is_file():
        raise InputError(
            "no run yet: train one (induce train --arch udgn) or give --model RUN", str(record)
        )
    path = Path(record.read_text(encoding="utf-8").strip())
    if not (path / "config.yaml").is_file():
        raise InputError(f"the most recent run {path} is gone; give --model RUN", str(record))
    return path


@dataclass(frozen=True)
class Row:
    name: str
    uf1: float | None = None
    uas: float | None = None
    uuas: float | None = None
    detail: str = ""  # e.g. "step 360, ppl 45.897" for a run's validation

    @property
    def label(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name


def baseline_rows(dataset: Dataset, split: str = "valid", seed: int = 0) -> list[Row]:
    """Right/left-branching and random trees (UF1), next-word, previous-word and random
    dependencies (UAS/UUAS), scored exactly as validation scores a model."""
    gold = load_gold(dataset, split)
    rows = []
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
                parse = SentenceParse(tree_baseline(kind, leaves, rng), None)
            else:
                parse = SentenceParse(None, dependency_baseline(kind, g.n, rng))
            scorer.add(index, g, parse)
        s = scorer.summary()
        rows.append(Row(name, s.get("uf1"), s.get("uas"), s.get("uuas")))
    return rows


def run_rows(run_path: str | Path) -> tuple[Row | None, Row | None]:
    """The run's best validation (lowest perplexity) and its last validation, from
    ``metrics.jsonl``."""
    records = []
    metrics = Path(run_path) / "metrics.jsonl"
    if metrics.is_file():
        for line in metrics.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("kind") == "eval":
                records.append(record)
    if not records:
        return None, None
    best = [r for r in records if r.get("best")] or records

    def row(name: str, r: dict) -> Row:
        return Row(
            name,
            r.get("uf1"),
            r.get("uas"),
            r.get("uuas"),
            f"step {r['step']}, ppl {r.get('valid_ppl')}",
        )

    last = row("this run, last", records[-1]) if records[-1] is not best[-1] else None
    return row("this run, best", best[-1]), last


def run_dataset(run_path: str | Path) -> Dataset | None:
    from induce.train.run import load_run

    record = load_run(Path(run_path)).dataset
    path = record.get("path") if record else None
    if not path or not Path(path).is_dir():
        return None
    return load_dataset(path, verify=False)
