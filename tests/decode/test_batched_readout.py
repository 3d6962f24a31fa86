"""Read-outs of a whole batch at once against the sentence-by-sentence ones they replace:
Eisner over a padded batch (``eisner_batch``), the vectorised Eq. 17 argmax, and
``Scores.sentences`` sharing a batch's work between its sentences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from induce.decode.dependencies import arc_scores, eisner
from induce.decode.distances import argmax_heads
from induce.decode.eisner import eisner_batch
from induce.decode.scores import ArcScores, DistanceScores


def _previous_eisner(s: np.ndarray) -> list[int]:
    """``eisner`` as it was before the batched version (gathers per width), the oracle of
    its tie-breaking."""
    n = s.shape[0]
    arc = s[:, 1:].T
    comp = np.full((n, n, 2), -np.inf)
    inc = np.full((n, n, 2), -np.inf)
    comp_bp = np.zeros((n, n, 2), dtype=np.int64)
    inc_bp = np.zeros((n, n, 2), dtype=np.int64)
    idx = np.arange(n)
    comp[idx, idx, :] = 0.0
    for width in range(1, n):
        i = np.arange(n - width)
        j = i + width
        rows = np.arange(len(i))
        ks = i[:, None] + np.arange(width)[None, :]
        both = comp[i[:, None], ks, 1] + comp[ks + 1, j[:, None], 0]
        k = both.argmax(1)
        best = both[rows, k]
        inc[i, j, 0] = best + arc[j, i]
        inc[i, j, 1] = best + arc[i, j]
        inc_bp[i, j, 0] = inc_bp[i, j, 1] = i + k
        left = comp[i[:, None], ks, 0] + inc[ks, j[:, None], 0]
        k = left.argmax(1)
        comp[i, j, 0], comp_bp[i, j, 0] = left[rows, k], i + k
        right = inc[i[:, None], ks + 1, 1] + comp[ks + 1, j[:, None], 1]
        k = right.argmax(1)
        comp[i, j, 1], comp_bp[i, j, 1] = right[rows, k], i + 1 + k
    root = int((comp[0, idx, 0] + comp[idx, n - 1, 1] + s[:, 0]).argmax())
    heads = [0] * n
    stack = [(0, root, 0, True), (root, n - 1, 1, True)]
    while stack:
        lo, hi, d, complete = stack.pop()
        if lo == hi:
            continue
        if complete:
            split = int(comp_bp[lo, hi, d])
            stack += (
                [(lo, split, 0, True), (split, hi, 0, False)]
                if d == 0
                else [(lo, split, 1, False), (split, hi, 1, True)]
            )
        else:
            split = int(inc_bp[lo, hi, d])
            if d == 0:
                heads[lo] = hi + 1
            else:
                heads[hi] = lo + 1
            stack += [(lo, split, 1, True), (split + 1, hi, 0, True)]
    heads[root] = 0
    return heads


def _scores(rng: np.random.Generator, n: int, kind: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=(n, n + 1)) * rng.choice([0.1, 1, 5])
    if kind == 1:  # many ties
        return rng.integers(0, 3, size=(n, n + 1)).astype(float)
    if kind == 2:  # log-probabilities with impossible arcs
        s = np.log(rng.dirichlet(np.ones(n + 1) * 0.3, size=n))
        s[rng.random((n, n + 1)) < 0.2] = -np.inf
        return s
    return np.zeros((n, n + 1))  # every tree ties


def test_eisner_equals_the_previous_implementation_ties_included():
    rng = np.random.default_rng(3)
    for trial in range(2000):
        s = _scores(rng, int(rng.integers(1, 14)), trial % 4)
        assert eisner(s) == _previous_eisner(s), (trial, s.tolist())


def test_a_padded_batch_gives_each_sentence_its_own_tree():
    """Whatever lies beyond a sentence's length (here random scores, not -inf) is never read
    into its tree."""
    rng = np.random.default_rng(4)
    for trial in range(300):
        lengths = rng.integers(1, 16, size=int(rng.integers(1, 7)))
        longest = int(lengths.max())
        batch = np.stack([_scores(rng, longest, trial % 4) for _ in lengths])
        got = eisner_batch(batch, lengths.tolist())
        for b, n in enumerate(lengths):
            assert got[b] == _previous_eisner(batch[b, :n, : n + 1]), trial
    assert eisner_batch(np.zeros((2, 0, 1)), [0, 0]) == [[], []]
    with pytest.raises(ValueError):
        eisner_batch(np.zeros((2, 3, 3)), [3, 3])


def _previous_argmax(parents: list[list[float]], heights: list[float]) -> list[int]:
    """Eq. 17's read-out as it was (Python ``max``: the first best wins)."""
    root = max(range(len(heights)), key=heights.__getitem__)
    heads = []
    for i, row in enumerate(parents):
        if i == root:
            heads.append(0)
            continue
        best = max((j for j in range(len(row)) if j != i), key=row.__getitem__, default=-1)
        heads.append(best + 1)
    return heads


def test_argmax_heads_equals_the_previous_read_out_ties_included():
    rng = np.random.default_rng(5)
    for trial in range(1000):
        n = int(rng.integers(1, 12))
        if trial % 2:
            parents = rng.integers(0, 3, size=(n, n)).astype(np.float32)
            heights = rng.integers(0, 3, size=n).astype(np.float32)
        else:
            parents = rng.dirichlet(np.ones(n), size=n).astype(np.float32)
            heights = rng.normal(size=n).astype(np.float32)
        expected = _previous_argmax(parents.tolist(), heights.tolist())
        assert argmax_heads(parents, heights) == expected
        assert argmax_heads(parents.tolist(), heights.tolist()) == expected
    assert argmax_heads([], []) == []


def _arc_batch(rng: np.random.Generator, lengths: list[int]) -> ArcScores:
    longest = max(lengths)
    parents = torch.zeros(len(lengths), longest, longest)
    roots = torch.zeros(len(lengths), longest)
    for b, n in enumerate(lengths):
        p = torch.as_tensor(rng.dirichlet(np.ones(n + 1) * 0.5, size=n), dtype=torch.float32)
        roots[b, :n] = p[:, 0]
        parents[b, :n, :n] = p[:, 1:].masked_fill(torch.eye(n, dtype=torch.bool), 0.0)
    return ArcScores(parents, roots)


@pytest.mark.parametrize("decoder", ArcScores.decoders)
def test_a_batch_read_out_equals_the_sentence_by_sentence_one(decoder):
    rng = np.random.default_rng(6)
    for _ in range(20):
        lengths = rng.integers(1, 20, size=int(rng.integers(1, 9))).tolist()
        scores = _arc_batch(rng, lengths)
        shared = scores.sentences(lengths)
        for k, n in enumerate(lengths):
            words = [f"w{i}" for i in range(n)]
            alone = scores.sentence(k, n).read_out(words, decoder)
            together = shared[k].read_out(words, decoder)
            assert together.heads == alone.heads
            assert together.tree is not None and alone.tree is not None
            assert together.tree.to_string() == alone.tree.to_string()
            expected = arc_scores(scores.parents[k, :n, :n].numpy(), scores.roots[k, :n].numpy())
            assert np.array_equal(shared[k].arcs(), expected)
            assert shared[k].to_json() == scores.sentence(k, n).to_json()


@pytest.mark.parametrize("decoder", ArcScores.decoders)
def test_the_heads_alone_are_the_read_outs_and_run_no_eisner_they_do_not_need(decoder, monkeypatch):
    """``read_heads`` (a CoNLL-U output: no tree shown) gives ``read_out``'s heads; only the
    Eisner decoder runs Eisner, since the constituency read-out is skipped."""
    import induce.decode.scores as scores_module

    rng = np.random.default_rng(9)
    lengths = [6, 1, 11, 4]
    scores = _arc_batch(rng, lengths)
    words = [[f"w{i}" for i in range(n)] for n in lengths]
    expected = [row.read_out(w, decoder).heads for row, w in zip(scores.sentences(lengths), words)]
    calls = []

    def counted(*args):
        calls.append(1)
        return eisner_batch(*args)

    monkeypatch.setattr(scores_module, "eisner_batch", counted)
    got = [row.read_heads(w, decoder) for row, w in zip(scores.sentences(lengths), words)]
    assert got == expected
    assert len(calls) == (1 if decoder == "eisner" else 0)  # once for the whole batch
    distances = DistanceScores(torch.randn(2, 5), torch.randn(2, 5), torch.rand(2, 5, 5))
    for row in distances.sentences([5, 3]):  # the default: the read-out's heads
        n = len(row.heights)
        assert row.read_heads(words[0][:n]) == row.read_out(words[0][:n]).heads


@pytest.mark.parametrize("decoder", DistanceScores.decoders)
def test_distance_scores_in_a_batch(decoder):
    rng = np.random.default_rng(8)
    lengths = [5, 3, 1, 7]
    longest = max(lengths)
    distances = torch.as_tensor(rng.normal(size=(4, longest)), dtype=torch.float32)
    heights = torch.as_tensor(rng.normal(size=(4, longest)), dtype=torch.float32)
    parents = torch.as_tensor(rng.random((4, longest, longest)), dtype=torch.float32)
    scores = DistanceScores(distances, heights, parents)
    for k, (row, n) in enumerate(zip(scores.sentences(lengths), lengths)):
        words = [f"w{i}" for i in range(n)]
        got = row.read_out(words, decoder)
        alone = scores.sentence(k, n)
        assert got.heads == alone.read_out(words, decoder).heads
        assert got.tree is not None
        if decoder == "argmax":
            assert got.heads == _previous_argmax(alone.parents.tolist(), alone.heights.tolist())


def test_a_batch_moves_to_the_host_once_and_each_sentence_owns_its_tensors():
    """``sentences`` moves the batch's tensors once (floating ones to float32, the others
    as they are); each sentence's tensors are copies, so that changing one leaves the batch
    and its other sentences as they were."""
    from induce.decode.scores import MergeScores

    lengths = [3, 2]
    parents = torch.rand(2, 3, 3, dtype=torch.bfloat16)
    scores = ArcScores(parents, torch.rand(2, 3, dtype=torch.bfloat16))
    host = scores.on_host()
    assert host.parents.dtype == host.roots.dtype == torch.float32
    assert torch.equal(host.parents, parents.float())
    rows = scores.sentences(lengths)
    rows[0].parents.fill_(7.0)  # type: ignore[attr-defined]
    assert torch.equal(rows[1].parents, parents[1, :2, :2].float())  # type: ignore[attr-defined]
    assert torch.equal(scores.parents, parents)
    merges = MergeScores(torch.ones(2, 1, 3, 3, dtype=torch.bool), torch.rand(2, 1, 3, 3))
    moved = merges.on_host()
    assert moved.supports.dtype == torch.bool and moved.attention.dtype == torch.float32
    row = merges.sentences(lengths)[1]
    row.supports.fill_(False)  # type: ignore[attr-defined]
    assert merges.supports.all()
