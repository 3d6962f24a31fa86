"""Eisner and the matrix-tree theorem against enumeration of every dependency tree."""

from __future__ import annotations

import pytest
import torch

from induce.decode.dependencies import mst
from induce.structs import LOG, MAX
from induce.structs.dependencies import argmax, eisner, marginals, matrix_tree
from tests.structs.oracles import head_lists, projective, reduce

LENGTHS = torch.tensor([4, 1, 2, 3])


def _scores(seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 5, 5, generator=g, dtype=torch.float64) * 2


def _trees(s: torch.Tensor, n: int, single_root: bool, only_projective: bool):
    for heads in head_lists(n, single_root):
        if only_projective and not projective(heads):
            continue
        yield sum(float(s[d, h]) for d, h in enumerate(heads, 1)), heads


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("semiring", [LOG, MAX], ids=["log", "max"])
def test_eisner_is_the_enumeration_of_projective_trees(single_root, semiring):
    s = _scores()
    got = eisner(s, LENGTHS, semiring, single_root)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [score for score, _ in _trees(s[b], n, single_root, True)]
        assert float(got[b]) == pytest.approx(reduce(every, semiring.name), abs=1e-10)


@pytest.mark.parametrize("single_root", [True, False])
def test_matrix_tree_is_the_enumeration_of_all_trees(single_root):
    s = _scores(1)
    s[0, 1:, 0] += 30.0  # far from 0: the per-sentence scaling must hold
    got = matrix_tree(s, LENGTHS, single_root)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [score for score, _ in _trees(s[b], n, single_root, False)]
        assert float(got[b]) == pytest.approx(reduce(every, "log"), abs=1e-10)


def test_the_best_non_projective_tree_is_chu_liu_edmonds():
    """The matrix-tree structure's max semiring: decode's MST equals the enumeration's best."""
    s = _scores(2)
    for b, n in enumerate(LENGTHS.tolist()):
        best = max(_trees(s[b], n, True, False), key=lambda t: t[0])[1]
        # decode's convention: row d - 1 holds word d's scores for heads 0 .. n
        assert mst(s[b, 1 : n + 1, : n + 1].numpy()) == best


@pytest.mark.parametrize("projective_only", [True, False])
@pytest.mark.parametrize("single_root", [True, False])
def test_marginals_are_the_enumerations(projective_only, single_root):
    s = _scores(3)
    got = marginals(s, LENGTHS, single_root, projective=projective_only)
    for b, n in enumerate(LENGTHS.tolist()):
        trees = list(_trees(s[b], n, single_root, projective_only))
        log_z = reduce([score for score, _ in trees], "log")
        want = torch.zeros_like(s[b])
        for score, heads in trees:
            for d, h in enumerate(heads, 1):
                want[d, h] += torch.exp(torch.tensor(score - log_z, dtype=torch.float64))
        torch.testing.assert_close(got[b], want, atol=1e-10, rtol=0)
    assert torch.allclose(got.sum((1, 2)), LENGTHS.double())  # one head per word


@pytest.mark.parametrize("single_root", [True, False])
def test_argmax_is_the_best_projective_tree(single_root):
    s = _scores(4)
    got = argmax(s, LENGTHS, single_root)
    for b, n in enumerate(LENGTHS.tolist()):
        best = max(_trees(s[b], n, single_root, True), key=lambda t: t[0])[1]
        assert got[b, 1 : n + 1].argmax(-1).tolist() == best
        assert float(got[b].sum()) == n


def test_udgn_kirchhoff_marginals_are_the_matrix_tree_marginals():
    """UDGN's own convention (``logits[b, i, j]``: word i's head j, ``j = i`` the root, a
    keep mask) gives the structure's single-root marginals."""
    from induce.models.udgn import kirchhoff_marginals

    s = _scores(5)
    logits = s[:, 1:, 1:].clone()
    logits.diagonal(0, 1, 2).copy_(s[:, 1:, 0])
    keep = torch.arange(4)[None, :] < LENGTHS[:, None]
    udgn = kirchhoff_marginals(logits, keep)
    ours = marginals(s, LENGTHS, single_root=True, projective=False)
    want = ours[:, 1:, 1:].clone()
    want.diagonal(0, 1, 2).copy_(ours[:, 1:, 0])
    torch.testing.assert_close(udgn * keep[..., None] * keep[:, None, :], want, atol=1e-10, rtol=0)
