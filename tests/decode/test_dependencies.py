"""Dependency decoders against brute force over every tree of up to 6 words."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from induce.decode.dependencies import argmax, decode, eisner, mst


def _is_tree(heads: tuple[int, ...]) -> bool:
    if sum(h == 0 for h in heads) != 1:
        return False
    for start in range(1, len(heads) + 1):
        seen, node = set(), start
        while node:
            if node in seen:
                return False
            seen.add(node)
            node = heads[node - 1]
    return True


def _is_projective(heads: tuple[int, ...]) -> bool:
    """No crossing arcs, the root's arc (from position 0) included."""
    arcs = [(min(d, h), max(d, h)) for d, h in enumerate(heads, 1)]
    return not any(a < c < b < e for a, b in arcs for c, e in arcs)


@functools.cache
def _trees(n: int, projective: bool) -> np.ndarray:
    found = [
        h
        for h in itertools.product(range(n + 1), repeat=n)
        if all(x != i for i, x in enumerate(h, 1))
        and _is_tree(h)
        and (not projective or _is_projective(h))
    ]
    return np.array(found)


def _best(scores: np.ndarray, projective: bool) -> float:
    trees = _trees(len(scores), projective)
    return scores[np.arange(len(scores))[None, :], trees].sum(1).max()


def _score(scores: np.ndarray, heads: list[int]) -> float:
    return float(sum(scores[i, h] for i, h in enumerate(heads)))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_decoders_find_the_best_tree(n):
    rng = np.random.default_rng(n)
    for _ in range(30 if n < 6 else 8):
        scores = rng.normal(size=(n, n + 1)) * rng.choice([0.1, 1, 5])
        if rng.random() < 0.3:
            scores[:, 0] += 3  # tempt several roots
        for decoder, projective in ((mst, False), (eisner, True)):
            heads = decoder(scores)
            assert all(type(h) is int for h in heads)
            assert _is_tree(tuple(heads)), (decoder.__name__, heads)
            if projective:
                assert _is_projective(tuple(heads))
            assert _score(scores, heads) == pytest.approx(_best(scores, projective), abs=1e-9)


def test_argmax_and_names():
    scores = np.log(np.array([[0.1, 0.0, 0.9], [0.8, 0.1, 0.1]]) + 1e-12)
    assert argmax(scores) == [2, 0]
    assert decode(scores, "mst") == mst(scores)
    with pytest.raises(ValueError):
        decode(scores, "cky")
    with pytest.raises(ValueError):
        mst(np.zeros((3, 3)))


def test_long_sentences_decode():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(250, 251))
    for decoder in (mst, eisner):
        assert _is_tree(tuple(decoder(scores)))
