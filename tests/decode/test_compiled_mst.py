"""Chu-Liu/Edmonds by ``ufal.chu_liu_edmonds`` (the ``fast`` extra) against the NumPy
implementation and brute force: the same best tree; only between trees of exactly equal
score may the two keep different ones."""

from __future__ import annotations

import numpy as np
import pytest

from induce.decode import dependencies
from induce.decode.dependencies import mst, mst_uniform_root
from tests.decode.test_dependencies import _best, _is_tree, _score

ufal = pytest.importorskip("ufal.chu_liu_edmonds")


@pytest.fixture(params=["compiled", "numpy"])
def implementation(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setattr(dependencies, "_UFAL", [None])
    return request.param


def _numpy_mst(scores: np.ndarray) -> list[int]:
    saved = dependencies._UFAL[:]
    dependencies._UFAL[:] = [None]
    try:
        return mst(scores)
    finally:
        dependencies._UFAL[:] = saved


def test_the_compiled_path_is_taken():
    assert dependencies._ufal() is ufal.chu_liu_edmonds


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_both_find_the_best_tree_ties_included(n, implementation):
    rng = np.random.default_rng(200 + n)
    for trial in range(40 if n < 6 else 10):
        if trial % 2:
            scores = rng.integers(0, 3, size=(n, n + 1)).astype(float)  # many ties
        else:
            scores = rng.normal(size=(n, n + 1)) * rng.choice([0.1, 1, 5])
        for decode in (mst, mst_uniform_root):
            heads = decode(scores)
            assert _is_tree(tuple(heads)) and all(type(h) is int for h in heads)
            target = scores.copy()
            if decode is mst_uniform_root:
                target[:, 0] = 0.0
            assert _score(target, heads) == pytest.approx(_best(target, False), abs=1e-9)


def test_compiled_equals_numpy_on_continuous_scores():
    """Log-probabilities as a parser gives them, impossible arcs and long sentences included:
    the same heads from both implementations."""
    rng = np.random.default_rng(7)
    for trial in range(600):
        n = int(rng.integers(1, 70 if trial % 10 == 0 else 25))
        scores = np.log(rng.dirichlet(np.ones(n + 1) * rng.choice([0.1, 1.0, 10.0]), size=n))
        if trial % 3 == 0:
            scores[rng.random((n, n + 1)) < 0.3] = -np.inf
            scores[:, 0] = np.log(rng.random(n))
        assert mst(scores) == _numpy_mst(scores), trial
        uniform = mst_uniform_root(scores)
        saved = dependencies._UFAL[:]
        dependencies._UFAL[:] = [None]
        try:
            assert uniform == mst_uniform_root(scores), trial
        finally:
            dependencies._UFAL[:] = saved


def test_no_finite_tree_falls_back_to_numpy():
    """Where every single-root tree has an impossible arc, the compiled solver gives up and
    the NumPy implementation decides, as before (here it keeps two root words)."""
    scores = np.full((3, 4), -np.inf)
    scores[0, 2] = scores[1, 1] = scores[2, 0] = -1.0  # 1 <- 2 <- 1: a cycle, and 3 <- root
    assert mst(scores) == _numpy_mst(scores) == [0, 1, 0]
