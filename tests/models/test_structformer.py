"""StructFormer's parser and parent distribution against brute force and Algorithm 3."""

from __future__ import annotations

import random

import pytest
import torch

from induce.data.types import Tree
from induce.decode.distances import argmax_heads
from induce.models import build_model
from induce.models.structformer import boundary_probabilities, parent_distribution
from induce.structure.distances import tree_distances
from induce.structure.heights import parse_distances, projective_tree

F64 = torch.float64


def brute_force_parents(d, t, inv_mu1, inv_mu2):
    """The reference's construction: every span's probability times its head distribution,
    summed over all O(L^2) spans for every word (O(L^4))."""
    left, right = boundary_probabilities(d, t, inv_mu1)
    b, n = t.shape
    spans = left[:, :, :, None] * right[:, :, None, :]  # [B, i, l, r]
    k = torch.arange(n)
    inside = (k[:, None, None] <= k[None, None, :]) & (k[None, None, :] <= k[None, :, None])
    logits = (t * inv_mu2)[:, None, None, :].expand(b, n, n, n).masked_fill(~inside, -1e9)
    heads = torch.softmax(logits, -1)  # [B, l, r, j]
    parents = torch.einsum("bilr,blrj->bij", spans, heads)
    return parents.masked_fill(torch.eye(n, dtype=torch.bool), 0.0)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 9])
def test_parent_distribution_equals_the_sum_over_all_spans(n):
    torch.manual_seed(n)
    d, t = torch.randn(4, n, dtype=F64) * 2, torch.randn(4, n, dtype=F64) * 2
    d[:, -1] = 1e9
    mu1, mu2 = torch.tensor(1.7, dtype=F64), torch.tensor(0.6, dtype=F64)
    fast = parent_distribution(d, t, mu1, mu2)
    assert torch.allclose(fast, brute_force_parents(d, t, mu1, mu2), atol=1e-12)


def test_padding_does_not_change_a_sentence():
    torch.manual_seed(0)
    d, t = torch.randn(1, 4, dtype=F64), torch.randn(1, 4, dtype=F64)
    d[:, -1] = 1e9
    one = torch.tensor(1.0, dtype=F64)
    alone = parent_distribution(d, t, one, one)
    pad_d = torch.cat([d, torch.full((1, 3), 1e9, dtype=F64)], 1)
    pad_t = torch.cat([t, torch.full((1, 3), -1e9, dtype=F64)], 1)
    padded = parent_distribution(pad_d, pad_t, one, one)
    assert torch.allclose(padded[:, :4, :4], alone, atol=1e-12)
    assert padded[:, 4:].abs().sum() == 0 and padded[:, :, 4:].abs().sum() == 0


def _random_projective(n: int, rng: random.Random) -> list[int]:
    heads = [0] * n
    todo = [(0, n - 1, 0)]
    while todo:
        lo, hi, parent = todo.pop()
        if lo > hi:
            continue
        r = rng.randint(lo, hi)
        heads[r] = parent
        todo += [(lo, r - 1, r + 1), (r + 1, hi, r + 1)]
    return heads


def _consistent_scores(heads: list[int]) -> tuple[list[int], list[float]]:
    """Distances of the dependency tree's binary tree (Definition 3.1) and, per word, a
    height just above the split that attaches it to its parent (the root above all)."""
    leaves = [Tree("X", [f"w{i}"]) for i in range(len(heads))]
    d = tree_distances(projective_tree(leaves, heads))
    top = max(d, default=0) + 1.0
    tau = [
        top if h == 0 else max(d[min(i, h - 1) : max(i, h - 1)]) + 0.5 for i, h in enumerate(heads)
    ]
    return d, tau


def test_sharp_distributions_reproduce_algorithm_3():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(2, 12)
        heads = _random_projective(n, rng)
        d, tau = _consistent_scores(heads)
        leaves = [Tree("X", [f"w{i}"]) for i in range(n)]
        assert parse_distances(leaves, d, tau).heads == heads
        sharp = torch.tensor(50.0, dtype=F64)
        parents = parent_distribution(
            torch.tensor([d + [1e9]], dtype=F64), torch.tensor([tau], dtype=F64), sharp, sharp
        )
        assert argmax_heads(parents[0].tolist(), tau) == heads


def _model(**extra):
    settings = {
        "d_model": 32,
        "n_layers": 2,
        "n_heads": 4,
        "d_ff": 64,
        "n_parser_layers": 2,
        "conv_size": 3,
        **extra,
    }
    return build_model("structformer", settings, vocab_size=40, pad_id=1)


def test_a_forward_on_a_hand_built_example_gives_algorithm_3s_tree(monkeypatch):
    heads = [2, 0, 4, 2, 4, 7, 5]  # "the dog saw a cat in parks"-like shape
    d, tau = _consistent_scores(heads)
    model = _model().eval()
    scores = (torch.tensor([d + [1e9]]), torch.tensor([tau]))
    monkeypatch.setattr(model, "parse", lambda ids, keep, per_batch=False: scores)
    with torch.no_grad():
        model.log_temperature.fill_(torch.log(torch.tensor(50.0)))
        out = model(torch.arange(3, 10)[None], torch.ones(1, 7, dtype=torch.bool))
    assert argmax_heads(out.scores.parents[0].tolist(), tau) == heads


def test_a_sentence_parses_the_same_whatever_its_batch():
    torch.manual_seed(3)
    model = _model().eval()
    sentence = torch.tensor([5, 9, 7, 11, 4])
    others = [torch.randint(3, 40, (k,)) for k in (9, 2, 7)]
    with torch.no_grad():
        alone = model(sentence[None], torch.ones(1, 5, dtype=torch.bool))
        batch = torch.full((4, 9), 1)
        keep = torch.zeros(4, 9, dtype=torch.bool)
        for row, s in enumerate([sentence] + others):
            batch[row, : len(s)] = s
            keep[row, : len(s)] = True
        mixed = model(batch, keep)
    assert torch.allclose(mixed.scores.distances[0, :4], alone.scores.distances[0, :4], atol=1e-5)
    assert torch.allclose(mixed.scores.heights[0, :5], alone.scores.heights[0, :5], atol=1e-5)
    assert torch.allclose(mixed.scores.parents[0, :5, :5], alone.scores.parents[0], atol=1e-5)
    assert torch.allclose(mixed.hidden[0, :5], alone.hidden[0], atol=1e-4)


def test_gradients_reach_every_parser_parameter():
    torch.manual_seed(0)
    model = _model().train()
    ids = torch.randint(3, 40, (3, 8))
    keep = torch.ones(3, 8, dtype=torch.bool)
    keep[1, 5:] = False
    out = model(ids, keep)
    model.logits(out.hidden[keep]).logsumexp(-1).sum().backward()
    for name, p in model.named_parameters():
        if name.startswith(
            ("parser", "distance_head", "height_head", "relation_logits", "log_temperature")
        ):
            assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_unknown_model_settings_are_refused():
    from induce.data.errors import ConfigError

    with pytest.raises(ConfigError, match="conv_sise"):
        _model(conv_sise=3)
    with pytest.raises(ConfigError, match="relations"):
        _model(relations=["sibling"])


def test_structure_gives_the_forward_passes_scores():
    model = _model().eval()
    ids, keep = torch.randint(3, 40, (2, 6)), torch.ones(2, 6, dtype=torch.bool)
    with torch.no_grad():
        full, parser = model(ids, keep), model.structure(ids, keep)
    for name in ("distances", "heights", "parents"):
        assert torch.equal(getattr(full.scores, name), getattr(parser, name))


def _mixed_batch(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    lengths = (9, 2, 7, 5)
    ids, keep = torch.full((4, 9), 1), torch.zeros(4, 9, dtype=torch.bool)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(3, 40, (n,), generator=gen)
        keep[row, :n] = True
    return ids, keep


def test_batch_calibration_shifts_every_sentence_by_the_batchs_largest_margin():
    from induce.models.structformer import calibrate

    torch.manual_seed(5)
    _, keep = _mixed_batch(5)
    has_next = torch.nn.functional.pad(keep[:, 1:], (0, 1), value=False)
    distances = torch.randn(4, 9).masked_fill(~has_next, 1e9)
    heights = torch.randn(4, 9).masked_fill(~keep, -1e9)
    own = calibrate(distances, heights, keep, has_next)
    margins = (distances - own)[:, 0]  # one shift per sentence, never negative
    assert (margins >= 0).all() and margins.max() > margins.min()
    shared = calibrate(distances, heights, keep, has_next, per_batch=True)
    assert torch.allclose(shared[has_next], (distances - margins.max())[has_next])


def test_batch_calibration_trains_by_the_batch_and_parses_each_sentence_alone():
    torch.manual_seed(6)
    model = _model(calibration="batch").eval()
    ids, keep = _mixed_batch(6)
    with torch.no_grad():
        mixed = model.structure(ids, keep)
        alone = model.structure(ids[:1, :9], keep[:1, :9])
        forward = model(ids, keep).scores
        per_batch = model.parse(ids, keep, per_batch=True)[0]
    assert torch.allclose(mixed.distances[0, :8], alone.distances[0, :8], atol=1e-6)
    assert torch.equal(forward.distances, per_batch)


def test_non_affine_norms_have_no_parameters():
    plain = {n for n, _ in _model(norm_affine=False).named_parameters()}
    assert not [n for n in plain if ".norm_" in n]
    assert {"layers.0.norm_attn.weight", "layers.0.norm_ff.bias"} <= {
        n for n, _ in _model().named_parameters()
    }
