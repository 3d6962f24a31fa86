"""Parsing batches (``plan_batches`` with ``max_padding``): every sentence once, sorted by
length, within the token budget, and padding at most ``max_padding`` of each batch unless a
sentence is alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from induce.runs.batches import Specials, evaluation_batches, plan_batches


@given(
    st.lists(st.integers(1, 60), max_size=300),
    st.integers(1, 5000),
    st.sampled_from([0.0, 0.1, 0.3]),
)
def test_parse_plan_bounds_padding(lengths, budget, max_padding):
    plan = plan_batches(lengths, budget, max_padding=max_padding)
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    flat = [lengths[i] for batch in plan for i in batch]
    assert flat == sorted(flat)
    for batch in plan:
        longest = max(lengths[i] for i in batch)
        padded = len(batch) * longest
        if len(batch) > 1:
            assert padded <= budget
            assert padded - sum(lengths[i] for i in batch) <= max_padding * padded


def test_wsj_like_lengths_pad_far_less_than_the_training_plan():
    lengths = [(7 * k) % 50 + 1 for k in range(400)]
    real = sum(lengths)

    def padding(plan: list[list[int]]) -> float:
        return 1 - real / sum(len(b) * max(lengths[i] for i in b) for b in plan)

    assert (
        padding(plan_batches(lengths, 4096, max_padding=0.1))
        < 0.1
        < padding(plan_batches(lengths, 4096))
    )


def test_evaluation_batches_keep_their_plan_without_max_padding():
    """Masked evaluation (perplexity) draws each batch's mask from its position: its batches
    stay those of ``plan_batches``."""
    sentences = [[5] * ((3 * k) % 20 + 1) for k in range(60)]
    specials = Specials(pad=0, unk=1, mask=2)
    batches = [b.index for b in evaluation_batches(sentences, 100, specials, 0.3, 0)]
    assert batches == plan_batches([len(s) for s in sentences], 100)
    parsing = [
        b.index for b in evaluation_batches(sentences, 100, specials, None, 0, max_padding=0.1)
    ]
    assert parsing == plan_batches([len(s) for s in sentences], 100, max_padding=0.1)
