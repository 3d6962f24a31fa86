"""Combiner: inherited connections, the gate, the tree read-outs, gradients, variants."""

from __future__ import annotations

import pytest
import torch

from induce.data.errors import ConfigError
from induce.decode.merges import divergence_distances, merge_distances
from induce.models import model_config
from induce.models.combiner import CombinerLayer
from induce.models.combiner_support import adjacent_support, chain_minimum
from induce.runs.config import load_config
from tests.models.combiner_helpers import gradients_of, padded_batch, small_combiner

# the paper's hierarchy and read-out (the demo config names this project's constituent
# hierarchy and its levels read-out)
SMALL = [
    "model.d_model=32",
    "model.n_layers=3",
    "model.n_heads=4",
    "model.d_ff=64",
    "model.hierarchy=support",
    "train.valid_decoder=merge",
    "protocol.test_decoder=merge",
]
VARIANTS = [
    [],
    ["model.gate=row"],
    ["model.gate=head"],
    ["model.gate_layers=0"],
    ["model.gate_layers=3"],
    ["model.threshold=fixed", "model.fixed_tau=0.55"],
    ["model.threshold=topk", "model.top_k=3"],
    ["model.hierarchy=dense"],
    ["model.hierarchy=adjacent"],
    ["model.hierarchy=adjacent", "model.gate_bias=-1"],
    ["model.hierarchy=adjacent", "model.adjacent_gap=blocks", "model.gate=row"],
]
ADJACENT = [
    ["model.hierarchy=adjacent", "model.gate_bias=-1"],
    ["model.hierarchy=adjacent", "model.gate_bias=-1", "model.adjacent_gap=blocks"],
    ["model.hierarchy=adjacent", "model.gate_bias=-1", "model.adjacent_gap=peak"],
    ["model.hierarchy=adjacent", "model.gate_bias=-1", "model.gate=row"],
    ["model.hierarchy=adjacent", "model.gate_bias=-1", "model.gate=head"],
    ["model.hierarchy=adjacent", "model.threshold=fixed", "model.fixed_tau=0.3"],
]


def _model(extra=(), seed=0):
    return small_combiner(SMALL + list(extra), seed)


@pytest.mark.parametrize("extra", VARIANTS, ids=lambda v: ",".join(v) or "paper")
def test_connections_are_inherited_and_stay_inside_the_sentence(extra):
    model = _model(extra).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        _, tildes, supports = model.encode(ids, keep)
    for lower, upper in zip(supports, supports[1:]):
        assert bool((upper | ~lower).all())  # every connection is kept upward
    pair = keep[:, :, None] & keep[:, None, :]
    for tilde, support in zip(tildes, supports):
        assert not bool((support & ~pair).any())
        rows = tilde.sum(-1)
        assert torch.allclose(rows[keep], torch.ones_like(rows[keep]), atol=1e-5)
        assert float(tilde[~pair].abs().max()) == 0.0
        assert not bool((tilde > 0)[pair & ~support].any())  # M~ is zero off the support


def test_dense_hierarchy_connects_everything_at_once():
    model = _model(["model.hierarchy=dense"]).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        scores = model.structure(ids, keep).sentence(0, 11)
    assert bool(scores.supports.all())
    levels = [int(d) for d in merge_distances(scores.supports, scores.attention)]
    assert levels == [1] * 10  # no tree in the levels: only the tie-break orders the splits


def test_a_hand_set_threshold_gives_the_groups_computed_by_hand(monkeypatch):
    """Two heads over four words, tau = 0.5: M = max over heads, M^ = relu(M - tau)."""
    config = model_config("combiner", {"d_model": 8, "n_heads": 2, "d_ff": 8, "n_layers": 1})
    layer = CombinerLayer(config)
    attn = torch.tensor(
        [
            [
                [0.2, 0.6, 0.1, 0.1],
                [0.7, 0.1, 0.1, 0.1],
                [0.1, 0.1, 0.2, 0.6],
                [0.1, 0.1, 0.1, 0.7],
            ],
            [
                [0.4, 0.3, 0.2, 0.1],
                [0.3, 0.3, 0.2, 0.2],
                [0.1, 0.2, 0.3, 0.4],
                [0.2, 0.2, 0.55, 0.05],
            ],
        ]
    )[None]
    keep = torch.ones(1, 4, dtype=torch.bool)
    monkeypatch.setattr(layer.gate, "forward", lambda m, keep: torch.full((1, 1, 1, 1), 0.5))
    gated, soft = layer._gated(attn, keep)
    expected = torch.relu(attn.amax(1) - 0.5)
    assert torch.equal(gated, expected)
    assert torch.allclose(soft, torch.sigmoid((attn.amax(1) - 0.5) / 0.05))
    # support of M^ plus the diagonal: {0,1} and {2,3} are the connected groups
    monkeypatch.setattr(layer, "_gated", lambda attn, keep: (expected, soft))
    _, _, support, _ = layer(torch.randn(1, 4, 8), keep, None)
    sym = support[0] | support[0].T
    assert sym.tolist() == [
        [True, True, False, False],
        [True, True, False, False],
        [False, False, True, True],
        [False, False, True, True],
    ]
    distances = merge_distances(support[None, 0], torch.full((1, 4, 4), 0.25))
    assert [int(d) for d in distances] == [1, 2, 1]  # joined in layer 1, never, layer 1


def test_merge_levels_and_ties_by_hand():
    s = torch.zeros(3, 4, 4, dtype=torch.bool)
    s[:, torch.arange(4), torch.arange(4)] = True
    s[0, 0, 1] = True  # layer 1: {0,1}
    s[1:, 0, 1] = s[1:, 2, 3] = True  # layer 2: {2,3}
    s[2, 1, 3] = True  # layer 3: everything, through 1-3
    a = torch.zeros(3, 4, 4)
    a[2, 1, 2] = a[2, 2, 1] = 0.5  # mutual attention of words 1 and 2 at their joining layer
    d = merge_distances(s, a)
    assert d == pytest.approx([1.5, 3.25, 2.5])
    assert merge_distances(s[:, :1, :1], a[:, :1, :1]) == []


def test_divergence_read_out():
    a = torch.tensor([[[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]])
    d = divergence_distances(a)
    assert d[0] == pytest.approx(0.0) and d[1] == pytest.approx(torch.log(torch.tensor(2.0)).item())


@pytest.mark.parametrize("decoder", ["merge", "divergence"])
def test_read_out_trees_are_binary_deterministic_and_cover_the_words(decoder):
    model = _model().eval()
    ids, keep = padded_batch()
    words = [f"w{i}" for i in range(11)]
    with torch.no_grad():
        first = model.structure(ids, keep)
        again = model.structure(ids, keep)
    for k, n in ((0, 11), (1, 6)):
        a = first.sentence(k, n).read_out(words[:n], decoder)
        b = again.sentence(k, n).read_out(words[:n], decoder)
        assert a.tree == b.tree and a.heads is None
        assert a.tree is not None and a.tree.words() == words[:n]
        assert all(len(node.children) in (1, 2) for node in a.tree.subtrees())
    one = first.sentence(0, 11)
    sub = one.read_out_subwords(words[:4], [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    assert sub.tree.words() == words[:4]


@pytest.mark.parametrize("extra", [[], ["model.gate=row"], ["model.gate=head"]])
def test_gradients_reach_the_gate(extra):
    model = _model(extra + ["model.gate_bias=-1.0"]).train()
    grads = gradients_of(model, *padded_batch(), ".gate.")
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(float(g.abs().sum()) > 0 for g in grads)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def _gate_gradient(extra):
    model = _model(extra).train()
    ids, keep = padded_batch()
    with torch.no_grad():
        _, _, supports = model.encode(ids, keep)
    pair = keep[:, :, None] & keep[:, None, :]
    full = bool(supports[0][pair].all())
    grads = gradients_of(model, ids, keep, ".gate.")
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)
    return full, max(float(g.abs().max()) for g in grads if g is not None)


@pytest.mark.parametrize("gate", ["matrix", "row"])
def test_the_straight_through_support_gives_the_gate_gradients_at_full_support(gate):
    """At the default start (tau ~ 0.02) every pair is connected: the paper's hard Boolean
    passes one tau per matrix or row ~1e-11 (rounding), the straight-through support ~1e-6."""
    full, hard = _gate_gradient([f"model.gate={gate}", "model.gate_gradient=none"])
    full_st, soft = _gate_gradient([f"model.gate={gate}"])
    assert full and full_st
    assert soft > 1e-8 and soft > 1e3 * hard


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["model.gate=head"],
        ["model.gate=row", "model.gate_bias=-1"],
        ["model.hierarchy=adjacent", "model.gate_bias=-1"],
    ],
)
def test_the_straight_through_support_leaves_the_forward_pass_unchanged(extra):
    ids, keep = padded_batch()
    runs = []
    for how in ("straight_through", "none"):
        model = _model(extra + [f"model.gate_gradient={how}"]).eval()
        with torch.no_grad():
            hidden = model(ids, keep).hidden
            scores = model.structure(ids, keep)
        runs.append((hidden, scores.supports, scores.attention))
    for a, b in zip(*runs):
        assert torch.equal(a, b)


def test_the_sparsity_cost_pushes_tau_up_without_changing_the_loss():
    ids, keep = padded_batch()
    biases, losses = [], []
    for weight in (0.0, 1.0):
        model = _model([f"model.gate_sparsity={weight}"]).train()
        loss = model.logits(model(ids, keep).hidden[keep]).logsumexp(-1).mean()
        loss.backward()
        losses.append(loss.detach())
        biases.append(sum(float(layer.gate.linear.bias.grad) for layer in model.layers))
    assert torch.equal(losses[0], losses[1])
    assert biases[1] < biases[0]  # gradient descent raises tau


def test_settings_are_checked():
    with pytest.raises(ConfigError, match="gate: must be one of"):
        load_config("combiner", SMALL + ["model.gate=column"], preset="demo")
    with pytest.raises(ConfigError, match="model.d_model"):
        load_config("combiner", ["model.d_model=30", "model.n_heads=4"], preset="demo")
    with pytest.raises(ConfigError, match="gate_layers"):
        load_config("combiner", SMALL + ["model.gate_layers=9"], preset="demo")
    with pytest.raises(ConfigError, match="gate_temperature"):
        load_config("combiner", SMALL + ["model.gate_temperature=0"], preset="demo")
    with pytest.raises(ConfigError, match="gate_gradient: must be one of"):
        load_config("combiner", SMALL + ["model.gate_gradient=soft"], preset="demo")
    with pytest.raises(ConfigError, match="gate_sparsity"):
        load_config("combiner", SMALL + ["model.gate_sparsity=-1"], preset="demo")
    with pytest.raises(ConfigError, match="adjacent_gap: must be one of"):
        load_config("combiner", SMALL + ["model.adjacent_gap=all"], preset="demo")
    with pytest.raises(ConfigError, match="link_threshold"):
        load_config("combiner", SMALL + ["model.link_threshold=1.5"], preset="demo")


# hierarchy: adjacent (ours): contiguous blocks that only grow


def _blocks(support):
    """The blocks of a ``[n, n]`` support as lists of positions, in order."""
    out, seen = [], set()
    for i in range(support.shape[0]):
        if i not in seen:
            block = [j for j in range(support.shape[0]) if bool(support[i, j])]
            seen.update(block)
            out.append(block)
    return out


def _is_contiguous_partition(support):
    """Symmetric, reflexive, transitive, and every class a run of consecutive positions."""
    s = support.bool()
    if not (bool((s == s.T).all()) and bool(s.diagonal().all())):
        return False
    closure = (s.float() @ s.float()) > 0
    if not bool((closure == s).all()):
        return False
    return all(block == list(range(block[0], block[-1] + 1)) for block in _blocks(s))


def test_chain_minimum_by_hand_and_its_gradient_goes_to_the_weakest_gap():
    gaps = torch.tensor([[0.9, 0.2, 0.5, 0.7]], requires_grad=True)
    chain = chain_minimum(gaps)
    assert chain.shape == (1, 5, 5)
    expected = [
        [1.0, 0.9, 0.2, 0.2, 0.2],
        [0.9, 1.0, 0.2, 0.2, 0.2],
        [0.2, 0.2, 1.0, 0.5, 0.5],
        [0.2, 0.2, 0.5, 1.0, 0.7],
        [0.2, 0.2, 0.5, 0.7, 1.0],
    ]
    assert torch.allclose(chain[0], torch.tensor(expected))
    chain[0, 3, 4].backward(retain_graph=True)  # only the gap 3-4 lies between words 3 and 4
    assert gaps.grad.tolist() == [[0.0, 0.0, 0.0, 1.0]]
    gaps.grad = None
    chain[0, 0, 4].backward()  # the weakest gap of 0..3 is gap 1
    assert gaps.grad.tolist() == [[0.0, 1.0, 0.0, 0.0]]


def _hand_gated(n=7):
    """``M^`` over ``n`` words: adjacent pairs 0-1 (from 1 to 0), 4-5, and 1-3, 2-5 across
    two words; the rest 0."""
    gated = torch.zeros(1, n, n)
    gated[0, 1, 0] = 0.1
    gated[0, 4, 5] = 0.3
    gated[0, 1, 3] = gated[0, 2, 5] = 0.2
    return gated


@pytest.mark.parametrize(
    "rule, below, expected",
    [
        ("pair", None, [[0, 1], [2], [3], [4, 5], [6]]),
        ("blocks", None, [[0, 1], [2], [3], [4, 5], [6]]),  # singletons: the same gaps
        # below: {0}, {1, 2}, {3}, {4, 5}, {6}; the pair 1-3 joins the blocks {1, 2} and {3},
        # 2-5 lies across three blocks
        ("pair", [False, True, False, False, True, False], [[0, 1, 2], [3], [4, 5], [6]]),
        ("blocks", [False, True, False, False, True, False], [[0, 1, 2, 3], [4, 5], [6]]),
    ],
)
def test_adjacent_blocks_from_a_hand_set_gated_attention(rule, below, expected):
    gated = _hand_gated()
    keep = torch.ones(1, 7, dtype=torch.bool)
    closed = None if below is None else torch.tensor([below])
    support, soft = adjacent_support(gated, None, closed, keep, rule)
    assert soft is None
    assert _is_contiguous_partition(support[0])
    assert _blocks(support[0]) == expected
    if closed is not None:  # monotone: every pair joined below stays joined
        lower, _ = adjacent_support(torch.zeros_like(gated), None, closed, keep, rule)
        assert bool((support | ~lower).all())


@pytest.mark.parametrize(
    "below, keep, expected",
    [
        # gaps 0 and 3 are local maxima, 5 too (after it: none); 2 ties 1 but not 3
        (None, 7, [[0, 1], [2], [3, 4], [5, 6]]),
        # open gaps 1, 2, 4, 5 (0.3, 0.3, 0.1, 0.2): 2 and 5 are the peaks
        ([True, False, False, True, False, False], 7, [[0, 1], [2, 3, 4], [5, 6]]),
        (None, 5, [[0, 1], [2], [3, 4], [5], [6]]),  # gap 3 has no open gap after it
    ],
)
def test_adjacent_peak_rule_closes_local_maxima_by_hand(below, keep, expected):
    gated = torch.zeros(1, 7, 7)
    for g, value in enumerate([0.5, 0.3, 0.3, 0.6, 0.1, 0.2]):
        gated[0, g + 1, g] = value
    mask = torch.arange(7)[None] < keep
    closed = None if below is None else torch.tensor([below])
    support, _ = adjacent_support(gated, None, closed, mask, "peak")
    assert _blocks(support[0]) == expected
    assert _blocks(adjacent_support(gated, None, closed, mask, "pair")[0][0])[:1] == [
        list(range(keep))
    ]  # the pair rule closes every gap with a positive value


def test_adjacent_soft_support_is_one_where_closed_and_a_chain_minimum_elsewhere():
    gated = _hand_gated()
    margin = gated - 0.05
    soft = torch.sigmoid(margin / 0.05)
    keep = torch.ones(1, 7, dtype=torch.bool)
    keep[0, 6] = False  # a padded word: never in a block, its gap never closes
    below = torch.tensor([[False, True, False, False, True, False]])
    support, chain = adjacent_support(gated, soft, below, keep, "pair")
    assert _blocks(support[0]) == [[0, 1, 2], [3], [4, 5], [6]]
    assert not bool(support[0, 6, :6].any() | support[0, :6, 6].any()) and bool(support[0, 6, 6])
    low = float(torch.sigmoid(torch.tensor(-1.0)))  # soft membership of an M^ of 0
    # gap 0 closed here (0.1 > tau): its soft value; gap 1 closed below: 1
    assert chain[0, 0, 1] == pytest.approx(float(soft[0, 1, 0]))
    assert chain[0, 0, 2] == pytest.approx(float(soft[0, 1, 0])) and chain[0, 1, 2] == 1.0
    assert chain[0, 4, 5] == pytest.approx(1.0)  # closed below
    assert chain[0, 2, 3] == pytest.approx(float(soft[0, 2, 3]))  # open: the pair's soft value
    assert chain[0, 0, 5] == pytest.approx(low)  # the weakest gap on the way
    assert float(chain[0, 5, 6]) == 0.0 and float(chain[0, 6, 6]) == 1.0
    assert bool(((chain > 0.5) == support)[0, :6, :6].all())  # hard = soft > 1/2 here


def test_a_hand_set_threshold_gives_adjacent_blocks_through_the_layer(monkeypatch):
    """The layer builds the block support from ``M^``, takes Eq. 5 over it and hands the
    closed gaps up through ``M~``; the merge levels are the layers closing each gap."""
    config = model_config(
        "combiner",
        {"d_model": 8, "n_heads": 2, "d_ff": 8, "n_layers": 2, "hierarchy": "adjacent"},
    )
    layer = CombinerLayer(config)
    keep = torch.ones(1, 7, dtype=torch.bool)
    first = _hand_gated()
    monkeypatch.setattr(layer, "_gated", lambda attn, keep: (first, None))
    _, tilde, support, _ = layer(torch.randn(1, 7, 8), keep, None)
    assert _blocks(support[0]) == [[0, 1], [2], [3], [4, 5], [6]]
    assert bool(((tilde > 0) == support).all())  # M~ is positive exactly on the blocks
    second = torch.zeros(1, 7, 7)
    second[0, 3, 2] = 0.4  # layer 2 closes gap 2-3 only
    monkeypatch.setattr(layer, "_gated", lambda attn, keep: (second, None))
    _, tilde2, support2, _ = layer(torch.randn(1, 7, 8), keep, tilde)
    assert _blocks(support2[0]) == [[0, 1], [2, 3], [4, 5], [6]]
    supports = torch.cat([support, support2])
    distances = merge_distances(supports, torch.cat([tilde, tilde2]))
    assert [int(d) for d in distances] == [1, 3, 2, 3, 1, 3]


@pytest.mark.parametrize("extra", ADJACENT, ids=lambda v: ",".join(v[1:]))
def test_adjacent_supports_are_growing_contiguous_blocks(extra):
    model = _model(extra).eval()
    ids, keep = padded_batch()
    with torch.no_grad():
        _, tildes, supports = model.encode(ids, keep)
    for k, n in ((0, 11), (1, 6), (2, 11)):
        for layer, support in enumerate(supports):
            s = support[k]
            assert _is_contiguous_partition(s[:n, :n])
            assert not bool(s[n:].any() | s[:, n:].any())  # padded words are out
            if layer:
                assert bool((s | ~supports[layer - 1][k]).all())


@pytest.mark.parametrize("extra", ADJACENT[:4], ids=lambda v: ",".join(v[1:]))
def test_adjacent_read_out_gives_valid_trees_with_levels_from_the_blocks(extra):
    model = _model(extra).eval()
    ids, keep = padded_batch()
    words = [f"w{i}" for i in range(11)]
    with torch.no_grad():
        scores = model.structure(ids, keep)
    for k, n in ((0, 11), (1, 6)):
        one = scores.sentence(k, n)
        closed = one.supports.diagonal(1, -2, -1)  # [N, n - 1]: gap closed after layer l
        levels = torch.where(closed.any(0), closed.int().argmax(0) + 1, len(closed) + 1)
        assert [int(d) for d in one.distances("merge")] == levels.tolist()
        for decoder in ("merge", "divergence"):
            tree = one.read_out(words[:n], decoder).tree
            assert tree is not None and tree.words() == words[:n]
            assert all(len(node.children) in (1, 2) for node in tree.subtrees())


@pytest.mark.parametrize("extra", ADJACENT[:4], ids=lambda v: ",".join(v[1:]))
def test_gradients_reach_the_gate_with_adjacent_blocks(extra):
    model = _model(extra).train()
    ids, keep = padded_batch()
    grads = gradients_of(model, ids, keep, ".gate.")
    assert grads and all(g is not None and torch.isfinite(g).all() for g in grads)
    assert any(float(g.abs().max()) > 1e-6 for g in grads)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
