"""What every side of ``bench/side_by_side.py`` (and ``bench/profile_step.py``) trains and
parses on: sentences of random word ids with the lengths of WSJ section 22 (``../shared``
when it is there, a WSJ-like distribution otherwise), cut into the official ``batchify``'s
4,096-token batches and masked at 0.3, the same on every side (fixed seeds)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

VOCAB, PAD, UNK, MASK = 10_000, 0, 1, 2


def corpus(shared: Path, count: int, seed: int = 0) -> list[list[int]]:
    """``count`` sentences of random word ids with WSJ section 22's lengths."""
    from train import lengths  # bench/train.py

    rng = random.Random(seed)
    return [[rng.randrange(3, VOCAB) for _ in range(n)] for n in lengths(shared, count, rng)]


def plan(sents: list[list[int]]) -> list[list[int]]:
    """The official ``batchify``'s 4,096-token batches (ours: ``data.batching: summed``)."""
    from induce.runs.batches import plan_batches

    return plan_batches([len(s) for s in sents], 4096, "summed")


def padding(sents: list[list[int]]) -> float:
    """The fraction of padding in those batches."""
    cells = sum(len(b) * max(len(sents[i]) for i in b) for b in plan(sents))
    return 1 - sum(len(s) for s in sents) / cells


def specials() -> Any:
    """The special ids of these sentences, as ``induce.runs.batches`` takes them."""
    from induce.runs.batches import Specials

    return Specials(pad=PAD, unk=UNK, mask=MASK)


def batches(sents: list[list[int]], count: int) -> list[Any]:
    """``count`` masked batches, the same on every side (fixed seeds)."""
    import torch

    from induce.runs.batches import make_batch

    plan_ = plan(sents)
    random.Random(1).shuffle(plan_)
    return [
        make_batch(sents, plan_[k % len(plan_)], specials(), 0.3, torch.Generator().manual_seed(k))
        for k in range(count)
    ]
