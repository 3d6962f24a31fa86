"""Word-level scores from subword-level ones, through a subword -> word alignment (the
``{split}.align`` files of a subword dataset: the 0-based word index of every subword)."""

from __future__ import annotations

from collections.abc import Sequence


def check_alignment(alignment: Sequence[int]) -> int:
    """The number of words; raises ``ValueError`` unless the alignment starts at word 0 and
    every subword belongs to the same word as the one before it or to the next word."""
    previous = -1
    for i, word in enumerate(alignment):
        if word != previous and word != previous + 1:
            raise ValueError(
                f"alignment[{i}] is {word} after {previous}: subwords must go "
                "through the words in order, each word at least once"
            )
        previous = word
    return previous + 1


def word_distances(distances: Sequence[float], alignment: Sequence[int]) -> list[float]:
    """Subword split scores ``[n_subwords - 1]`` to word split scores ``[n_words - 1]``: the
    split after a word is the one after its last piece."""
    check_alignment(alignment)
    if len(distances) != max(len(alignment) - 1, 0):
        raise ValueError(
            f"{len(alignment)} subwords need {max(len(alignment) - 1, 0)} "
            f"distances, got {len(distances)}"
        )
    return [distances[i] for i in range(len(alignment) - 1) if alignment[i + 1] != alignment[i]]


def word_heights(heights: Sequence[float], alignment: Sequence[int]) -> list[float]:
    """Subword heights ``[n_subwords]`` to word heights ``[n_words]``: the highest piece of
    each word."""
    check_alignment(alignment)
    if len(heights) != len(alignment):
        raise ValueError(
            f"{len(alignment)} subwords need {len(alignment)} heights, got {len(heights)}"
        )
    out: list[float] = []
    for value, word in zip(heights, alignment):
        if word == len(out):
            out.append(value)
        elif value > out[word]:
            out[word] = value
    return out
