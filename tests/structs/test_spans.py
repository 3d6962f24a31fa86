"""Span CKY's partition, marginals and best tree against enumeration of every bracketing."""

from __future__ import annotations

import itertools

import pytest
import torch

from induce.structs import LOG, MAX
from induce.structs.spans import argmax, cky, inside, marginals
from tests.structs.oracles import bracketings, reduce

LENGTHS = torch.tensor([5, 1, 3, 4])
LABELLED_LENGTHS = torch.tensor([4, 1, 3, 2])  # every labelling of every tree is enumerated


def _scores(labels: int = 0, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    fence = 6 if not labels else 5
    shape = (4, fence, fence) + ((labels,) if labels else ())
    return torch.randn(shape, generator=g, dtype=torch.float64)


def _lengths(labels: int) -> torch.Tensor:
    return LABELLED_LENGTHS if labels else LENGTHS


def _trees(s: torch.Tensor, n: int, empty_root: bool = True):
    """(score, {(i, j) or (i, j, label)}) of every (labelled) bracketing of n words."""
    for spans in bracketings(0, n):
        if s.dim() == 2:
            yield sum(float(s[i, j]) for i, j in spans), set(spans)
            continue
        choices = [
            range(1 if (i, j) == (0, n) and not empty_root else 0, s.shape[-1]) for i, j in spans
        ]
        for labels in itertools.product(*choices):
            total = sum(float(s[i, j, c]) for (i, j), c in zip(spans, labels, strict=True))
            yield total, {(i, j, c) for (i, j), c in zip(spans, labels, strict=True)}


@pytest.mark.parametrize("labels,empty_root", [(0, True), (2, True), (2, False)])
@pytest.mark.parametrize("semiring", [LOG, MAX], ids=["log", "max"])
def test_the_partition_is_the_enumerations(labels, semiring, empty_root):
    s = _scores(labels)
    got = inside(s, _lengths(labels), semiring, empty_root)
    for b, n in enumerate(_lengths(labels).tolist()):
        every = [score for score, _ in _trees(s[b], n, empty_root)]
        assert float(got[b]) == pytest.approx(reduce(every, semiring.name), abs=1e-10)


@pytest.mark.parametrize("labels", [0, 2])
def test_marginals_are_the_enumerations(labels):
    s = _scores(labels, seed=1)
    lengths = _lengths(labels)
    got = marginals(s, lengths, empty_root=False)
    for b, n in enumerate(lengths.tolist()):
        trees = list(_trees(s[b], n, empty_root=False))
        log_z = reduce([score for score, _ in trees], "log")
        want = torch.zeros_like(s[b])
        for score, parts in trees:
            for part in parts:
                want[part] += torch.exp(torch.tensor(score - log_z, dtype=torch.float64))
        torch.testing.assert_close(got[b], want, atol=1e-10, rtol=0)
    # a binary tree has 2n - 1 spans: the marginals count as many
    totals = got.flatten(1).sum(1)
    torch.testing.assert_close(totals, (2 * lengths - 1).double(), atol=1e-10, rtol=0)


@pytest.mark.parametrize("labels", [0, 2])
def test_argmax_is_the_best_tree_and_cky_agrees(labels):
    s = _scores(labels, seed=2)
    lengths = _lengths(labels)
    got = argmax(s, lengths, empty_root=labels == 0)
    for b, n in enumerate(lengths.tolist()):
        _, best = max(_trees(s[b], n, empty_root=labels == 0), key=lambda t: t[0])
        assert {tuple(ix) for ix in got[b].nonzero().tolist()} == best
    if labels:
        trees, _ = cky(s.float(), lengths.tolist())
        for b, spans in enumerate(trees):
            assert {tuple(ix) for ix in got[b].nonzero().tolist()} == set(spans)


def test_the_derivatives_work_under_inference_mode_and_keep_no_graph():
    s = _scores(2).requires_grad_(True)
    with torch.inference_mode():
        m = marginals(s, LABELLED_LENGTHS)
    assert not m.requires_grad
    torch.testing.assert_close(m, marginals(s.detach(), LABELLED_LENGTHS))
