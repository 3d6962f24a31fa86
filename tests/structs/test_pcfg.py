"""The PCFG inside algorithm, dense and low-rank, against enumeration of every derivation."""

from __future__ import annotations

import functools
import gc
import itertools
import math

import pytest
import torch

from induce.structs import LOG, MAX, derivative
from induce.structs.pcfg import dense_rules, inside, inside_low_rank, viterbi
from tests.structs.oracles import derivation_score, derivations, reduce

NT, T, RANK = 2, 2, 3
LENGTHS = torch.tensor([6, 2, 4, 5, 3])
SHORT = torch.tensor([5, 2, 4, 3, 3])  # where every derivation is scored more than once


def _grammar(seed: int = 0, batch: int = 5, n: int = 6):
    """A random grammar per batch row (as a compound PCFG has), normalised, float64."""
    g = torch.Generator().manual_seed(seed)

    def logp(*shape: int) -> torch.Tensor:
        x = torch.randn(*shape, generator=g, dtype=torch.float64) * 1.5
        return x.log_softmax(-1)

    terms = logp(batch, n, T)  # stands for log p(word_i | T), each row its own words
    rules = logp(batch, NT, (NT + T) ** 2).view(batch, NT, NT + T, NT + T)
    roots = logp(batch, NT)
    return terms, rules, roots


def _low_rank(seed: int = 0, batch: int = 5):
    g = torch.Generator().manual_seed(seed + 100)

    def logp(*shape: int) -> torch.Tensor:
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * 1.5).log_softmax(-1)

    return logp(batch, NT, RANK), logp(batch, RANK, NT + T), logp(batch, RANK, NT + T)


def _enumerate(terms, rules, roots, b: int, n: int):
    t, r, o = terms[b].tolist(), rules[b].tolist(), roots[b].tolist()
    for inner, labels, tags in derivations(n, NT, T):
        yield derivation_score(inner, labels, tags, t, r, o), inner, labels


@pytest.mark.parametrize("semiring", [LOG, MAX], ids=["log", "max"])
def test_the_dense_inside_is_the_enumeration(semiring):
    terms, rules, roots = _grammar()
    got = inside(terms, rules, roots, LENGTHS, semiring)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [score for score, _, _ in _enumerate(terms, rules, roots, b, n)]
        assert float(got[b]) == pytest.approx(reduce(every, semiring.name), abs=1e-10)


def test_the_low_rank_inside_is_the_dense_inside_of_its_rules_and_the_enumeration():
    terms, _, roots = _grammar(1)
    head, left, right = _low_rank(1)
    rules = dense_rules(head, left, right)
    assert torch.allclose(rules.flatten(2).logsumexp(-1), torch.zeros(5, NT, dtype=torch.float64))
    got = inside_low_rank(terms, roots, head, left, right, LENGTHS)
    torch.testing.assert_close(got, inside(terms, rules, roots, LENGTHS), atol=1e-10, rtol=0)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [score for score, _, _ in _enumerate(terms, rules, roots, b, n)]
        assert float(got[b]) == pytest.approx(reduce(every, "log"), abs=1e-10)


@pytest.mark.parametrize("low_rank", [False, True])
def test_span_marginals_are_the_enumerations_and_count_n_minus_1(low_rank):
    terms, rules, roots = _grammar(2)
    head, left, right = _low_rank(2)
    if low_rank:
        rules = dense_rules(head, left, right)
    zeros = torch.zeros(5, 7, 7, dtype=torch.float64)

    def partition(spans):
        if low_rank:
            return inside_low_rank(terms, roots, head, left, right, SHORT, spans=spans)
        return inside(terms, rules, roots, SHORT, spans=spans)

    (got,) = derivative(partition, zeros)
    for b, n in enumerate(SHORT.tolist()):
        trees = list(_enumerate(terms, rules, roots, b, n))
        log_z = reduce([score for score, _, _ in trees], "log")
        want = [[0.0] * 7 for _ in range(7)]
        for score, inner, _ in trees:
            for i, j in inner:
                want[i][j] += math.exp(score - log_z)
        torch.testing.assert_close(
            got[b], torch.tensor(want, dtype=torch.float64), atol=1e-10, rtol=0
        )
    torch.testing.assert_close(got.sum((1, 2)), (SHORT - 1).double(), atol=1e-10, rtol=0)


def test_the_best_derivation_by_the_max_derivative_is_the_enumerations():
    terms, rules, roots = _grammar(3)
    zeros = torch.zeros(5, 7, 7, NT, dtype=torch.float64)
    (labelled,) = derivative(lambda s: inside(terms, rules, roots, SHORT, MAX, s), zeros)
    for b, n in enumerate(SHORT.tolist()):
        _, inner, labels = max(_enumerate(terms, rules, roots, b, n), key=lambda d: d[0])
        want = {(i, j, a) for (i, j), a in zip(inner, labels, strict=True)}
        assert {tuple(ix) for ix in labelled[b].nonzero().tolist()} == want


def _tree(labels: torch.Tensor, tags: torch.Tensor, n: int) -> tuple:
    spans = {(i, j, int(labels[i, j]) - 1) for i, j in labels[: n + 1, : n + 1].nonzero().tolist()}
    return spans, tags[:n].tolist()


def test_viterbi_is_the_enumerations_best_derivation():
    terms, rules, roots = _grammar(4)
    labels, tags = viterbi(terms, rules, roots, SHORT)
    for b, n in enumerate(SHORT.tolist()):
        t, r, o = terms[b].tolist(), rules[b].tolist(), roots[b].tolist()
        inner, nts, best = max(derivations(n, NT, T), key=lambda d: derivation_score(*d, t, r, o))
        want = {(i, j, a) for (i, j), a in zip(inner, nts, strict=True)}
        assert _tree(labels[b], tags[b], n) == (want, list(best))


def _kims_order(terms, rules, roots, n: int) -> tuple:
    """The best derivation by a scalar CKY whose every choice keeps the first best in Kim et
    al.'s order (the root's nonterminal; at each span the split point, then the left and the
    right child's symbol, nonterminals first), each candidate summed as (left + right) +
    rule."""
    t, r, o = terms.tolist(), rules.tolist(), roots.tolist()
    symbols = range(NT + T)

    @functools.cache
    def best(i: int, j: int, a: int) -> tuple[float, tuple]:
        if j - i == 1:
            return (t[i][a - NT], ()) if a >= NT else (-math.inf, ())
        if a >= NT:
            return -math.inf, ()
        top, choice = -math.inf, ()
        for k, b, c in itertools.product(range(i + 1, j), symbols, symbols):
            score = (best(i, k, b)[0] + best(k, j, c)[0]) + r[a][b][c]
            if score > top:
                top, choice = score, (k, b, c)
        return top, choice

    root = max(range(NT), key=lambda a: (best(0, n, a)[0] + o[a], -a))
    spans, tags, todo = set(), [0] * n, [(0, n, root)]
    while todo:
        i, j, a = todo.pop()
        if j - i == 1:
            tags[i] = a - NT
            continue
        spans.add((i, j, a))
        k, b, c = best(i, j, a)[1]
        todo += [(i, k, b), (k, j, c)]
    return spans, tags


def test_viterbi_breaks_ties_as_kims_code():
    """Scores of whole numbers tie exactly and often: the trees are those of Kim et al.'s
    order, which the derivative of the max inside (child pair before split) does not give."""
    g = torch.Generator().manual_seed(5)
    terms, rules, roots = (
        torch.randint(-3, 0, shape, generator=g).double()
        for shape in ((5, 6, T), (5, NT, NT + T, NT + T), (5, NT))
    )
    labels, tags = viterbi(terms, rules, roots, LENGTHS)
    zeros = torch.zeros(5, 7, 7, NT, dtype=torch.float64)
    (other,) = derivative(lambda s: inside(terms, rules, roots, LENGTHS, MAX, s), zeros)
    differs = 0
    for b, n in enumerate(LENGTHS.tolist()):
        assert _tree(labels[b], tags[b], n) == _kims_order(terms[b], rules[b], roots[b], n)
        differs += {tuple(x) for x in other[b].nonzero().tolist()} != _tree(labels[b], tags[b], n)[
            0
        ]
    assert differs  # the tie order decides some of these trees


def test_viterbi_of_all_equal_scores_is_right_branching_with_the_first_symbols():
    n = 7
    terms = torch.full((1, n, T), -1.0)
    rules, roots = torch.full((1, NT, NT + T, NT + T), -1.0), torch.zeros(1, NT)
    labels, tags = viterbi(terms, rules, roots, torch.tensor([n]))
    assert _tree(labels[0], tags[0], n) == ({(i, n, 0) for i in range(n - 1)}, [0] * n)


def test_lengths_below_two_are_refused():
    terms, rules, roots = _grammar()
    with pytest.raises(ValueError, match="2 .. 6 words"):
        inside(terms, rules, roots, torch.tensor([6, 1, 2, 2, 2]))


def _saved(n: int, rank: int) -> dict[int, torch.Size]:
    """The tensors the low-rank inside keeps for its backward (by memory, not reference):
    their shapes."""
    g = torch.Generator().manual_seed(0)

    def logp(*shape: int) -> torch.Tensor:
        x = torch.randn(*shape, generator=g, dtype=torch.float64)
        return x.log_softmax(-1).requires_grad_(True)

    kept: dict[int, torch.Size] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        kept[t.untyped_storage().data_ptr()] = t.shape
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        inside_low_rank(
            logp(1, n, T), logp(1, NT), logp(1, NT, rank), logp(1, rank, NT + T),
            logp(1, rank, NT + T), torch.tensor([n]),
        )  # fmt: skip
    return kept


def test_the_low_rank_inside_keeps_its_rank_folds_once_whatever_the_length():
    # each width multiplies by the same two [r, r] folds: one exponential each is kept for
    # the backward, not one per width (64 MiB a fold at the SN-PCFG's 4,096 ranks); a rank
    # above n - 1, so that no chart slice [.., count or width, r] has the folds' shape
    def folds(n: int) -> int:
        return sum(shape[-2:] == (13, 13) for shape in _saved(n, 13).values())

    assert folds(4) == folds(12) <= 4


def test_the_low_rank_inside_keeps_memory_quadratic_in_the_length():
    # O(n^2 r) for the backward: the [count, w - 1, r] sums over split points of each width
    # (O(n^3 r) in all) are recomputed, not kept; doubling n must less than quadruple it
    def kept(n: int) -> int:
        return sum(shape.numel() for shape in _saved(n, 64).values())

    assert kept(32) < 4 * kept(16)


def test_low_rank_gradients_are_the_dense_insides_and_repeat_through_one_graph():
    # the rank chart's own backward (induce.structs.rank_chart) against autograd through
    # the dense inside of the same rules, and a second backward through the same graph
    terms, _, roots = _grammar(2)
    scores = [terms, roots, *_low_rank(2)]
    leaves = [x.clone().requires_grad_(True) for x in scores]
    terms, roots, head, left, right = leaves
    weights = torch.arange(1.0, 6.0, dtype=torch.float64)  # a different weight per sentence
    low = (inside_low_rank(terms, roots, head, left, right, LENGTHS) * weights).sum()
    first = torch.autograd.grad(low, leaves, retain_graph=True)
    again = torch.autograd.grad(low, leaves)
    dense = (inside(terms, dense_rules(head, left, right), roots, LENGTHS) * weights).sum()
    want = torch.autograd.grad(dense, leaves)
    for got, repeat, expected in zip(first, again, want, strict=True):
        torch.testing.assert_close(got, expected, atol=1e-10, rtol=0)
        assert torch.equal(got, repeat)


def test_a_low_rank_chart_is_freed_with_its_graph():
    """The autograd contexts kept the chart, which kept the last token, whose graph kept the
    contexts: a cycle through the C++ graph that Python's collector cannot break, so every
    training step's and every parse batch's chart stayed in memory (2 GB after 51,000
    parsed sentences)."""
    from induce.structs.rank_chart import RankChart, _Buffers

    def alive() -> int:
        gc.collect()
        return sum(type(o) in (RankChart, _Buffers) for o in gc.get_objects())

    before = alive()
    terms, _, roots = _grammar(2)
    for _ in range(3):
        leaves = [x.clone().requires_grad_(True) for x in (terms, roots, *_low_rank(2))]
        inside_low_rank(*leaves, LENGTHS).sum().backward()
        with torch.enable_grad():  # and a graph dropped without a backward (the parser's)
            inside_low_rank(*leaves, LENGTHS).sum()
    assert alive() == before
