"""Dependency decoders against brute force over every tree of up to 6 words."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from induce.decode import dependencies
from induce.decode.dependencies import argmax, decode, eisner, mst, mst_uniform_root


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


def _recursive_chu_liu_edmonds(w: np.ndarray) -> np.ndarray:
    """The recursive Chu-Liu/Edmonds that ``mst`` used before it became iterative (one
    Python frame per contraction: a RecursionError on long sentences), kept as the oracle."""
    m = w.shape[0]
    heads = w.argmax(0)
    heads[0] = -1
    cycle = _recursive_find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(m, dtype=bool)
    in_cycle[cycle] = True
    rest = np.flatnonzero(~in_cycle)
    c = len(rest)
    cyc = np.array(cycle)
    sub = np.full((c + 1, c + 1), -np.inf)
    sub[:c, :c] = w[rest[:, None], rest]
    enter = w[rest[:, None], cyc] - w[heads[cyc], cyc][None, :]
    best_d = enter.argmax(1)
    sub[:c, c] = enter[np.arange(c), best_d]
    leave = w[cyc[:, None], rest]
    best_h = leave.argmax(0)
    sub[c, :c] = leave[best_h, np.arange(c)]
    sub[c, 0] = -np.inf
    np.fill_diagonal(sub, -np.inf)
    inner = _recursive_chu_liu_edmonds(sub)
    out = heads.copy()
    for k, node in enumerate(rest):
        if k == 0:
            continue
        h = inner[k]
        out[node] = cyc[best_h[k]] if h == c else rest[h]
    entry_from = inner[c]
    d = cyc[best_d[entry_from]]
    out[d] = rest[entry_from]
    return out


def _recursive_find_cycle(heads: np.ndarray) -> list[int] | None:
    m = len(heads)
    state = np.zeros(m, dtype=np.int8)
    state[0] = 2
    for start in range(1, m):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if state[node] == 1:
            return path[path.index(node) :]
        for p in path:
            state[p] = 2
    return None


def _recursive_mst(scores: np.ndarray) -> list[int]:
    """``mst`` as it was, around the recursive oracle."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[0]
    w = np.full((n + 1, n + 1), -np.inf)
    w[:, 1:] = s.T
    finite = w[np.isfinite(w)]
    spread = (finite.max() - finite.min()) if finite.size else 0.0
    w[0, 1:] -= (spread + 1.0) * (n + 1)
    np.fill_diagonal(w, -np.inf)
    return [int(h) for h in _recursive_chu_liu_edmonds(w)[1:]]


def test_iterative_mst_equals_the_recursive_one(monkeypatch):
    """Same heads as the recursive version, ties and impossible arcs included (the NumPy
    implementation: the compiled one may keep another of several equally good trees)."""
    monkeypatch.setattr(dependencies, "_UFAL", [None])
    rng = np.random.default_rng(14)
    for trial in range(3000):
        n = int(rng.integers(2, 13))
        kind = trial % 4
        if kind == 0:
            scores = rng.normal(size=(n, n + 1)) * rng.choice([0.1, 1, 5])
        elif kind == 1:  # many ties
            scores = rng.integers(0, 3, size=(n, n + 1)).astype(float)
        elif kind == 2:  # log-probabilities with impossible arcs
            scores = np.log(rng.dirichlet(np.ones(n + 1) * 0.3, size=n))
            scores[rng.random((n, n + 1)) < 0.2] = -np.inf
            scores[:, 0] = np.log(rng.random(n))  # every word can still be the root
        else:  # neighbours preferred: nested cycles
            scores = rng.normal(size=(n, n + 1)) * 0.1
            for i in range(n):
                scores[i, min(i + 2, n)] += 3
                scores[i, max(i, 1)] += 3.2
        assert mst(scores) == _recursive_mst(scores), (trial, scores.tolist())


def test_mst_on_1500_words_needs_no_recursion():
    """A 1,500-word sentence contracts hundreds of cycles: one Python frame each in the
    recursive version (RecursionError on UDGN parses of 1,000 words), none now."""
    import sys

    rng = np.random.default_rng(1500)
    scores = rng.normal(size=(1500, 1501))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far fewer frames than contractions
    try:
        heads = mst(scores)
    finally:
        sys.setrecursionlimit(limit)
    assert len(heads) == 1500 and _is_tree(tuple(heads))
    assert _score(scores, heads) >= _score(scores, [i + 2 for i in range(1499)] + [0])
    assert _no_better_single_arc(scores, heads)


def _no_better_single_arc(scores: np.ndarray, heads: list[int]) -> bool:
    """No word but the root word gains by moving to another head that keeps one tree (a
    necessary condition of the best tree, checked in O(n^2))."""
    n = len(heads)
    children: list[list[int]] = [[] for _ in range(n + 1)]
    for d, h in enumerate(heads, 1):
        children[h].append(d)
    enter, leave = np.zeros(n + 1, dtype=int), np.zeros(n + 1, dtype=int)
    clock, stack = 0, [(0, False)]
    while stack:  # Euler tour: h is below d iff enter[d] <= enter[h] and leave[h] <= leave[d]
        node, done = stack.pop()
        clock += 1
        if done:
            leave[node] = clock
            continue
        enter[node] = clock
        stack.append((node, True))
        stack.extend((c, False) for c in children[node])
    for d, h in enumerate(heads, 1):
        if h == 0:
            continue
        below = (enter[1:] >= enter[d]) & (leave[1:] <= leave[d])
        allowed = np.where(below, -np.inf, scores[d - 1, 1:])
        if allowed.max() > scores[d - 1, h] + 1e-9:
            return False
    return True


def _official_uniform_root(scores: np.ndarray) -> tuple[float, list[int]]:
    """The official UDGN test scheme, literally: for each candidate root r, the best tree
    whose root is r with a root score of zero (brute force here), the best total kept (the
    first on ties).  Returns ``(score without root arcs, heads)``."""
    n = len(scores)
    best: tuple[float, list[int]] = (-np.inf, [])
    for root in range(1, n + 1):
        trees = [t for t in _trees(n, False) if t[root - 1] == 0]
        inner = scores.copy()
        inner[:, 0] = 0.0
        totals = [_score(inner, list(t)) for t in trees]
        k = int(np.argmax(totals))
        if totals[k] > best[0]:
            best = (totals[k], [int(h) for h in trees[k]])
    return best


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_uniform_root_mst_is_the_official_per_root_decoder(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(25):
        scores = np.log(rng.dirichlet(np.ones(n + 1), size=n))
        scores[:, 0] += rng.normal(size=n) * 3  # model root scores: ignored by this decoder
        heads = mst_uniform_root(scores)
        total, official = _official_uniform_root(scores)
        inner = scores.copy()
        inner[:, 0] = 0.0
        assert _is_tree(tuple(heads))
        assert _score(inner, heads) == pytest.approx(total, abs=1e-9)
        assert heads == official  # continuous random scores: the best tree is unique
        assert decode(scores, "mst-uniform-root") == heads
