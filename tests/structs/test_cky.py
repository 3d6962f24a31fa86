"""CKY against brute-force enumeration of every binary tree (torch-struct style oracle)."""

from __future__ import annotations

import itertools

import pytest
import torch

from induce.structs.spans import cky, hinge_loss


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
            first = 1 if (i, j) == (0, n) else 0  # the root carries a real label
            label = max(range(first, len(row)), key=row.__getitem__)
            total += row[label]
            labelled.add((i, j, label))
        if total > best:
            best, best_spans = total, labelled
    return best, best_spans


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_cky_is_the_best_tree_of_the_enumeration(n):
    g = torch.Generator().manual_seed(n)
    for _ in range(20):
        scores = torch.randn(3, n + 1, n + 1, 4, generator=g)
        scores[..., 0] = 0.0  # a chart parser's constant-zero empty label
        lengths = [n, max(1, n - 1), max(1, n - 2)]
        trees, totals = cky(scores, lengths)
        for b, length in enumerate(lengths):
            best, spans = _oracle(scores[b], length)
            assert float(totals[b]) == pytest.approx(best, abs=1e-5)
            assert set(trees[b]) == spans
            assert len(trees[b]) == 2 * length - 1  # a binary tree over the words
            assert trees[b][0][:2] == (0, length) and trees[b][0][2] != 0


def test_the_root_never_takes_the_empty_label():
    scores = torch.full((1, 3, 3, 3), -1.0)
    scores[..., 0] = 0.0
    scores[0, 0, 2, 2] = -0.5  # the best real label of the root, though below the empty one
    trees, totals = cky(scores, [2])
    assert float(totals[0]) == pytest.approx(-0.5)
    assert set(trees[0]) == {(0, 2, 2), (0, 1, 0), (1, 2, 0)}


def test_the_loss_is_zero_on_a_tree_parsed_correctly_with_margin():
    n, gold = 4, [(0, 4, 1), (0, 2, 2), (2, 4, 3)]
    scores = torch.full((1, n + 1, n + 1, 4), -3.0)
    scores[..., 0] = 0.0
    for i, j, label in gold:
        scores[0, i, j, label] = 3.0  # beats every rival by more than the Hamming cost
    scores.requires_grad_(True)
    assert float(hinge_loss(scores, [gold], [n]).detach()) == 0.0
    weak = scores.detach().clone()
    weak[0, 0, 2, 2] = 0.5  # right, but by less than the margin
    weak.requires_grad_(True)
    loss = hinge_loss(weak, [gold], [n])
    assert float(loss.detach()) > 0.0
    loss.backward()
    assert float(weak.grad[0, 0, 2, 2]) == -1.0  # the gold span is pushed up


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_augmented_decoding_maximises_score_plus_hamming(n):
    """The loss equals the enumerated ``max_T s(T) + Hamming(T, T*) - s(T*)``."""
    g = torch.Generator().manual_seed(10 + n)
    for _ in range(10):
        scores = torch.randn(1, n + 1, n + 1, 3, generator=g)
        scores[..., 0] = 0.0
        gold_spans = _bracketings(0, n)[0]
        gold = [(i, j, 1 + (i + j) % 2) for i, j in gold_spans]
        gold_label = {(i, j): label for i, j, label in gold}
        gold_score = sum(float(scores[0, i, j, label]) for i, j, label in gold)
        best = -float("inf")
        for spans in _bracketings(0, n):
            total = 0.0
            for i, j in spans:
                options = range(1 if (i, j) == (0, n) else 0, 3)
                total += max(
                    float(scores[0, i, j, lab]) + (lab != gold_label.get((i, j), 0))
                    for lab in options
                )
            best = max(best, total)
        loss = float(hinge_loss(scores, [gold], [n]))
        assert loss == pytest.approx(max(0.0, best - gold_score), abs=1e-5)
