"""CKY against brute-force enumeration of every binary tree (torch-struct style oracle)."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from induce.structs.spans import cky, hinge_loss, tree_scores


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


def _random_tree(i: int, j: int, rng: random.Random, labels: int) -> list[tuple[int, int, int]]:
    """A random binary tree over words i .. j-1 with random labels (``∅`` included below
    the root), root first."""
    spans, stack = [(i, j, rng.randrange(1, labels))], [(i, j)]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        k = rng.randrange(a + 1, b)
        for span in ((a, k), (k, b)):
            spans.append((*span, rng.randrange(labels)))
            stack.append(span)
    return spans


def test_a_padded_batch_loses_what_its_sentences_lose_alone():
    """One batch of sentences of different lengths (padding in every row but one): the loss
    is the sum of each sentence's loss alone, and so are the gradients."""
    rng, g = random.Random(3), torch.Generator().manual_seed(3)
    lengths = [6, 1, 3, 5, 2]
    n, labels = max(lengths), 4
    scores = torch.randn(len(lengths), n + 1, n + 1, labels, generator=g).mul_(2.0)
    scores[..., 0] = 0.0
    gold = [_random_tree(0, m, rng, labels) for m in lengths]
    batched = scores.clone().requires_grad_(True)
    loss = hinge_loss(batched, gold, lengths)
    loss.backward()
    alone, grads = 0.0, torch.zeros_like(scores)
    for b, m in enumerate(lengths):
        one = scores[b : b + 1, : m + 1, : m + 1].clone().requires_grad_(True)
        part = hinge_loss(one, [gold[b]], [m])
        part.backward()
        alone += float(part.detach())
        grads[b, : m + 1, : m + 1] = one.grad[0]
    assert float(loss.detach()) == pytest.approx(alone, rel=1e-6)
    assert torch.equal(batched.grad, grads)
    assert float(loss.detach()) > 0.0 and grads.abs().sum() > 0


def test_bf16_scores_lose_in_float32():
    """Under bf16 autocast the scores come in as bfloat16: the Hamming cost and the margins
    are added in float32 (a cost of 1 next to a score of 100 would round away in bf16)."""
    n, gold = 3, [(0, 3, 1), (0, 2, 0), (0, 1, 0), (1, 2, 0), (2, 3, 0)]
    scores = torch.zeros(1, n + 1, n + 1, 3)
    scores[..., 1:] = -10.0  # real labels below the root lose, the cost notwithstanding
    scores[0, 0, 3, 1] = 100.0
    scores[0, 1, 3, 2] = 0.75  # a rival span: with its cost, it beats the gold (0, 2, ∅)
    low = scores.to(torch.bfloat16).requires_grad_(True)
    loss = hinge_loss(low, [gold], [n])
    assert loss.dtype == torch.float32
    value = float(loss.detach())
    assert value == pytest.approx(float(hinge_loss(scores, [gold], [n])))
    # the rival's score and its Hamming cost over the gold tree (101.75 is not a bfloat16)
    assert value == 1.75
    loss.backward()
    assert low.grad is not None and low.grad.dtype == torch.bfloat16


def test_tree_scores_sum_each_trees_spans_in_at_least_float32():
    g = torch.Generator().manual_seed(4)
    scores = torch.randn(3, 5, 5, 3, generator=g, dtype=torch.float64)
    trees = [[(0, 4, 1), (0, 1, 0), (1, 4, 2)], [], [(0, 2, 2), (0, 1, 1), (1, 2, 0)]]
    got = tree_scores(scores, trees)
    assert got.dtype == torch.float64  # float64 is kept
    for b, spans in enumerate(trees):
        want = sum(float(scores[b, i, j, label]) for i, j, label in spans)
        assert float(got[b]) == pytest.approx(want, rel=1e-15, abs=1e-15)
    low = tree_scores(scores.to(torch.bfloat16), trees)
    assert low.dtype == torch.float32  # bf16 summed in float32
    assert tree_scores(scores, []).shape == (0,)
