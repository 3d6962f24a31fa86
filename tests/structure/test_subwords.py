"""Subword -> word scores, checked against a direct grouping of the pieces of each word."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from induce.structure.subwords import check_alignment, word_distances, word_heights


@st.composite
def _aligned(draw):
    pieces = draw(st.lists(st.integers(1, 4), min_size=1, max_size=12))
    alignment = [w for w, n in enumerate(pieces) for _ in range(n)]
    values = draw(st.lists(st.integers(-50, 50), min_size=len(alignment), max_size=len(alignment)))
    return pieces, alignment, values


@given(_aligned())
@settings(max_examples=300, deadline=None)
def test_against_grouping_by_word(case):
    pieces, alignment, values = case
    assert check_alignment(alignment) == len(pieces)
    groups: dict[int, list[int]] = {}
    for value, word in zip(values, alignment):
        groups.setdefault(word, []).append(value)
    assert word_heights(values, alignment) == [max(groups[w]) for w in range(len(pieces))]
    # The gap after a word's last piece is the gap after the word.
    last = [max(i for i, w in enumerate(alignment) if w == word) for word in range(len(pieces))]
    assert word_distances(values[:-1], alignment) == [values[i] for i in last[:-1]]


def test_bad_alignments():
    assert check_alignment([]) == 0
    assert word_distances([], [0]) == [] and word_heights([3.0], [0]) == [3.0]
    for bad in ([1], [0, 0, 2], [0, 1, 1, 0]):
        with pytest.raises(ValueError):
            check_alignment(bad)
    with pytest.raises(ValueError, match="heights"):
        word_heights([1.0], [0, 1])
