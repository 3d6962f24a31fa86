"""CKY against brute-force enumeration of every binary tree (torch-struct style oracle)."""

from __future__ import annotations

import itertools

import pytest
import torch

from induce.decode.cky import cky


def _bracketings(i: int, j: int) -> list[list[tuple[int, int]]]:
    """Every binary bracketing of words i .. j-1, as the list of its spans (root first)."""
    if j - i == 1:
        return [[(i, j)]]
    out = []
    for k in range(i + 1, j):
        for left, right in itertools.product(_bracketings(i, k), _bracketings(k, j)):
            out.append([(i, j)] + left + right)
    return out


def _oracle(scores: torch.Tensor, n: int) -> tuple[float, set[tuple[int, int, int]]]:
    best, best_spans = -float("inf"), set()
    for spans in _bracketings(0, n):
        total, labelled = 0.0, set()
        for i, j in spans:
            row = scores[i, j].tolist()
            label = max(range(1, len(row)), key=row.__getitem__)
            if (i, j) != (0, n) and row[label] <= 0.0:  # the root carries a real label
                label = 0
            total += row[label] if label else 0.0
            labelled.add((i, j, label))
        if total > best:
            best, best_spans = total, labelled
    return best, best_spans


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_cky_is_the_best_tree_of_the_enumeration(n):
    g = torch.Generator().manual_seed(n)
    for _ in range(20):
        scores = torch.randn(3, n + 1, n + 1, 4, generator=g)
        lengths = [n, max(1, n - 1), max(1, n - 2)]
        trees, totals = cky(scores, lengths)
        for b, length in enumerate(lengths):
            best, spans = _oracle(scores[b], length)
            assert float(totals[b]) == pytest.approx(best, abs=1e-5)
            assert set(trees[b]) == spans
            assert len(trees[b]) == 2 * length - 1  # a binary tree over the words
            assert trees[b][0][:2] == (0, length) and trees[b][0][2] != 0


def test_the_empty_label_scores_zero_whatever_the_tensor_holds():
    scores = torch.full((1, 3, 3, 3), -1.0)
    scores[..., 0] = 100.0  # ignored: the empty label is a constant 0
    scores[0, 0, 2, 2] = 0.5
    trees, totals = cky(scores, [2])
    assert float(totals[0]) == pytest.approx(0.5)
    assert set(trees[0]) == {(0, 2, 2), (0, 1, 0), (1, 2, 0)}
