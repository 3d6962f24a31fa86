"""Combiner's ``hierarchy: constituent``: neighbour links checked against a loop oracle, the
constituent prior against products, and the model's blocks, merge levels and gradients."""

from __future__ import annotations

import math

import pytest
import torch

from induce.data.errors import ConfigError
from induce.decode.merges import merge_distances, soft_levels
from induce.models import combiner_support
from induce.models.combiner_support import NeighbourLinks, constituent_prior
from tests.models.combiner_helpers import gradients_of, padded_batch, small_combiner

SMALL = ["model.d_model=32", "model.n_layers=3", "model.n_heads=4", "model.d_ff=64"]
CONSTITUENT = [
    ["model.hierarchy=constituent"],
    ["model.hierarchy=constituent", "model.prior_attention=true"],
    ["model.hierarchy=constituent", "model.threshold=topk"],
]


def _oracle_links(q, k, n, below=None):
    """Loops over one sentence of ``n`` words: each word's softmax over its neighbours, then
    ``sqrt(p(g -> g+1) p(g+1 -> g))`` and the upward accumulation."""
    d = q.shape[-1]

    def score(i, j):
        return float(q[i] @ k[j]) / math.sqrt(d)

    def p(i, j):  # word i's preference for neighbour j
        options = [o for o in (i - 1, i + 1) if 0 <= o < n]
        total = sum(math.exp(score(i, o)) for o in options)
        return math.exp(score(i, j)) / total

    links = [math.sqrt(p(g, g + 1) * p(g + 1, g)) for g in range(n - 1)]
    if below is not None:
        links = [b + (1 - b) * a for a, b in zip(links, below)]
    return links


def test_neighbour_links_equal_the_loop_oracle_with_padding():
    torch.manual_seed(3)
    links = NeighbourLinks(6)
    x = torch.randn(2, 5, 6)
    keep = torch.tensor([[True] * 5, [True, True, True, False, False]])
    with torch.no_grad():
        out = links(x, keep, None)
        q, k = links.qk(x).chunk(2, -1)
    assert out.shape == (2, 4)
    assert out[0].tolist() == pytest.approx(_oracle_links(q[0], k[0], 5), abs=1e-6)
    # the last word of the short sentence has one neighbour: it prefers it with p = 1
    assert out[1, :2].tolist() == pytest.approx(_oracle_links(q[1], k[1], 3), abs=1e-6)
    assert out[1, 2:].tolist() == [0.0, 0.0]  # gaps that touch padding
    below = torch.tensor([[0.1, 0.9, 0.0, 0.5], [0.3, 0.2, 0.0, 0.0]])
    with torch.no_grad():
        up = links(x, keep, below)
    assert up[0].tolist() == pytest.approx(
        _oracle_links(q[0], k[0], 5, below[0].tolist()), abs=1e-6
    )
    assert bool((up >= below).all())  # links only grow upward


def test_a_word_cannot_bind_to_both_sides():
    """The competition: ``a(g - 1) ** 2 + a(g) ** 2 <= 1`` for the two gaps of a word
    (each is at most the word's preference for that side, and those sum to 1)."""
    torch.manual_seed(4)
    links = NeighbourLinks(8)
    with torch.no_grad():
        out = links(3 * torch.randn(4, 9, 8), torch.ones(4, 9, dtype=torch.bool), None)
    assert bool((out[:, :-1] ** 2 + out[:, 1:] ** 2 <= 1 + 1e-6).all())


def test_constituent_prior_is_the_product_of_the_links_between():
    links = torch.tensor([[0.5, 0.8, 0.1, 1.0]])
    pair = torch.ones(1, 5, 5, dtype=torch.bool)
    pair[0, 4, :] = pair[0, :, 4] = False
    prior = constituent_prior(links, pair)
    for i in range(5):
        for j in range(5):
            expected = math.prod(links[0, min(i, j) : max(i, j)].tolist())
            assert float(prior[0, i, j]) == pytest.approx(expected if i < 4 and j < 4 else 0.0)


def _model(extra, seed=0):
    return small_combiner(SMALL + list(extra), seed)


def _recorded_links(monkeypatch):
    seen: list[torch.Tensor] = []
    forward = combiner_support.NeighbourLinks.forward

    def record(self, x, keep, below):
        out = forward(self, x, keep, below)
        seen.append(out.detach())
        return out

    monkeypatch.setattr(combiner_support.NeighbourLinks, "forward", record)
    return seen


@pytest.mark.parametrize("extra", CONSTITUENT, ids=lambda v: ",".join(v[1:]) or "plain")
def test_blocks_are_the_gaps_whose_links_pass_one_half(extra, monkeypatch):
    model = _model(extra).eval()
    # links spread around 1/2 so that the gaps close over several layers
    for layer in model.layers:
        torch.nn.init.normal_(layer.links.qk.weight, std=1.0)
    seen = _recorded_links(monkeypatch)
    ids, keep = padded_batch()
    with torch.no_grad():
        scores = model.structure(ids, keep)
    links = torch.stack(seen, 1)  # [B, N, L - 1]
    for k, n in ((0, 11), (1, 6), (2, 11)):
        one = scores.sentence(k, n)
        for layer in range(len(model.layers)):
            closed = one.supports[layer].diagonal(1).tolist()
            assert closed == (links[k, layer, : n - 1] > 0.5).tolist()
            if layer:
                assert bool((one.supports[layer] | ~one.supports[layer - 1]).all())
        support = scores.supports[k, :, n:]
        assert not bool(support.any())  # padded words are in no block
        passed = links[k, :, : n - 1] > 0.5
        levels = torch.where(passed.any(0), passed.int().argmax(0) + 1, len(model.layers) + 1)
        distances = merge_distances(one.supports, one.attention)
        assert [int(d) for d in distances] == levels.tolist()
        tree = one.read_out([f"w{i}" for i in range(n)], "merge").tree
        assert tree is not None and len(tree.words()) == n
        assert all(len(node.children) in (1, 2) for node in tree.subtrees())
    assert (
        len(
            {
                int(d)
                for d in merge_distances(
                    scores.sentence(0, 11).supports, scores.sentence(0, 11).attention
                )
            }
        )
        > 1
    )


def test_a_one_word_sentence_is_its_own_block():
    model = _model(["model.hierarchy=constituent", "model.prior_attention=true"]).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        scores = model.structure(ids[:, :1], keep[:, :1])
        alone = model(ids[:1, :1], keep[:1, :1]).hidden
    assert scores.supports.shape == (3, 3, 1, 1) and bool(scores.supports.all())
    assert scores.links is not None and scores.links.shape == (3, 3, 0)
    assert torch.isfinite(alone).all()
    assert scores.sentence(0, 1).distances("levels") == []


def test_padding_changes_nothing():
    model = _model(["model.hierarchy=constituent", "model.prior_attention=true"]).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        alone = model(ids[1:2, :6], keep[1:2, :6]).hidden
        padded = model(ids[1:2], keep[1:2]).hidden[:, :6]
    assert torch.allclose(alone, padded, atol=1e-5)


@pytest.mark.parametrize("extra", CONSTITUENT[:2], ids=lambda v: ",".join(v[1:]) or "plain")
def test_gradients_reach_the_links(extra):
    model = _model(extra).train()
    grads = gradients_of(model, *padded_batch(), ".links.")
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)
    assert all(float(g.abs().max()) > 0 for g in grads)  # every layer's links learn
    assert any(float(g.abs().max()) > 1e-5 for g in grads)


def test_soft_levels_by_hand_and_as_a_decoder():
    links = torch.tensor([[0.2, 1.0, 0.0], [0.6, 1.0, 0.5]])
    assert soft_levels(links) == pytest.approx([2.2, 1.0, 2.5])
    # hard links give the merge levels: closed from layer 1, from layer 2, never (N + 1)
    assert soft_levels(torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])) == [1.0, 2.0, 3.0]
    model = _model(["model.hierarchy=constituent"]).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        scores = model.structure(ids, keep)
    assert scores.links is not None and scores.links.shape == (3, 3, 10)
    one = scores.sentence(1, 6)
    assert one.distances("levels") == pytest.approx(soft_levels(scores.links[1, :, :5]))
    assert set(one.to_json()) == {"distances", "divergences", "levels"}
    tree = one.read_out([f"w{i}" for i in range(6)], "levels").tree
    assert tree is not None and len(tree.words()) == 6
    paper = ["model.hierarchy=support", "train.valid_decoder=merge", "protocol.test_decoder=merge"]
    plain = _model(paper).eval()
    with torch.no_grad():
        other = plain.structure(ids, keep).sentence(0, 11)
    assert other.links is None and "levels" not in other.to_json()
    with pytest.raises(ConfigError, match="hierarchy: constituent"):
        other.distances("levels")
