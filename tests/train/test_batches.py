"""Masked-LM batches: token budget, masking rules, determinism, process sharding."""

from __future__ import annotations

import random

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.runs.batches import (
    Specials,
    evaluation_batches,
    make_batch,
    plan_batches,
    training_batches,
)

SPECIALS = Specials(pad=1, unk=0, mask=2)


@given(st.lists(st.integers(1, 40), min_size=1, max_size=60), st.integers(1, 200))
@settings(max_examples=200, deadline=None)
def test_plans_cover_every_sentence_once_within_the_budget(lengths, budget):
    plan = plan_batches(lengths, budget)
    assert sorted(i for b in plan for i in b) == list(range(len(lengths)))
    for batch in plan:
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= budget


def _corpus(seed=0, count=300):
    rng = random.Random(seed)
    return [
        [rng.choice([0] + list(range(3, 50))) for _ in range(rng.randint(1, 30))]
        for _ in range(count)
    ]


def test_masking_rules():
    sents = _corpus()
    gen = torch.Generator().manual_seed(0)
    b = make_batch(sents, list(range(len(sents))), SPECIALS, 0.3, gen)
    original = torch.full_like(b.ids, SPECIALS.pad)
    for k, s in enumerate(sents):
        original[k, : len(s)] = torch.tensor(s)
    assert torch.equal(b.ids[b.masked], torch.full_like(b.targets, SPECIALS.mask))
    assert torch.equal(b.targets, original[b.masked])
    assert not b.masked[original == SPECIALS.pad].any()
    assert not b.masked[original == SPECIALS.unk].any()
    eligible = (original != SPECIALS.pad) & (original != SPECIALS.unk)
    rate = b.masked.sum().item() / eligible.sum().item()
    assert 0.27 < rate < 0.33
    assert torch.equal(b.ids[~b.masked], original[~b.masked])


def test_batches_are_functions_of_seed_epoch_and_position():
    sents = _corpus()
    plan = plan_batches([len(s) for s in sents], 120)

    def run(epoch, start=0):
        return [
            (p, b.ids, b.index)
            for p, b in training_batches(sents, plan, SPECIALS, 0.3, 7, epoch, start)
        ]

    one, again = run(0), run(0)
    assert all(
        p1 == p2 and torch.equal(a, b) and i == j for (p1, a, i), (p2, b, j) in zip(one, again)
    )
    later = run(0, start=5)
    assert all(torch.equal(a, b) for (_, a, _), (_, b, _) in zip(one[5:], later))
    assert [i for _, _, i in run(1)] != [i for _, _, i in one]  # reshuffled per epoch


def test_processes_share_an_epoch_evenly():
    sents = _corpus(count=101)
    plan = plan_batches([len(s) for s in sents], 100)
    shares = [
        [b.index for _, b in training_batches(sents, plan, SPECIALS, 0.3, 1, 0, 0, r, 3)]
        for r in range(3)
    ]
    assert len({len(s) for s in shares}) == 1
    seen = [tuple(i) for share in shares for i in share]
    assert len(seen) == len(set(seen)) == len(plan) // 3 * 3


def test_evaluation_masks_are_fixed_and_unmasked_parsing_is_possible():
    sents = _corpus()
    a = [b.ids for b in evaluation_batches(sents, 200, SPECIALS, 0.3, 5)]
    b = [b.ids for b in evaluation_batches(sents, 200, SPECIALS, 0.3, 5)]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    plain = list(evaluation_batches(sents, 200, SPECIALS, None, 5))
    assert not any(batch.masked.any() for batch in plain)
