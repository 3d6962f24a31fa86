"""The low-rank PCFGs, TN-PCFG (Yang et al. 2021) and Simple PCFG (Liu et al. 2023):
normalised factors, the rank-space likelihood against the expanded rules and against
enumeration of every derivation, marginals, both decoders, sampling and the official
parameter names."""

from __future__ import annotations

import math

import pytest
import torch

from induce.data.errors import ConfigError
from induce.models import grammar
from induce.models.grammar import WordBatch
from induce.models.simplepcfg import SimplePCFG, SimplePCFGConfig
from induce.models.tnpcfg import TNPCFG, LowRankPCFG, TNPCFGConfig
from induce.structs import pcfg as inside_algorithm
from tests.structs.oracles import derivation_score, derivations, reduce

VOCAB = 7
IDS = torch.tensor([[3, 4, 5, 6], [2, 5, 0, 0], [6, 6, 3, 0]])
LENGTHS = torch.tensor([4, 2, 3])


KINDS = ["tnpcfg", "simplepcfg"]


def _model(kind: str = "tnpcfg") -> LowRankPCFG:
    torch.manual_seed(0)
    if kind == "simplepcfg":
        return SimplePCFG(SimplePCFGConfig(nt=2, t=2, s_dim=8), VOCAB, 0).double().eval()
    return TNPCFG(TNPCFGConfig(nt=2, t=2, rank=3, s_dim=8), VOCAB, 0).double().eval()


@pytest.mark.parametrize("kind", KINDS)
def test_the_factors_and_the_rules_they_make_are_distributions(kind):
    model = _model(kind)
    g = model.grammar()
    torch.testing.assert_close(g.head.exp().sum(-1), torch.ones(2, dtype=torch.float64))
    rank = g.head.shape[-1]
    for side in (g.left, g.right):  # [r, S]: each rank a distribution over symbols
        torch.testing.assert_close(side.exp().sum(-1), torch.ones(rank, dtype=torch.float64))
    torch.testing.assert_close(
        model.rules(g).exp().flatten(1).sum(-1), torch.ones(2, dtype=torch.float64)
    )
    torch.testing.assert_close(g.emissions.exp().sum(-1), torch.ones(2, dtype=torch.float64))
    torch.testing.assert_close(g.roots.exp().sum(), torch.tensor(1.0, dtype=torch.float64))


@pytest.mark.parametrize("kind", KINDS)
def test_the_rank_space_likelihood_is_the_sum_over_every_derivation(kind):
    """Eq. 4's grammar: the rank-space inside equals the dense inside over the expanded rules
    and the brute-force sum over derivations (float64, n <= 4)."""
    model = _model(kind)
    got = model.log_likelihood(IDS, LENGTHS).detach()
    g = model.grammar()
    terms, rules = g.terms(IDS), model.rules(g)
    dense = inside_algorithm.inside(
        terms, rules.expand(3, -1, -1, -1), g.roots.expand(3, -1), LENGTHS
    )
    torch.testing.assert_close(got, dense, atol=1e-10, rtol=0)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [
            derivation_score(*d, terms[b].tolist(), rules.tolist(), g.roots.tolist())
            for d in derivations(n, 2, 2)
        ]
        assert float(got[b]) == pytest.approx(reduce(every, "log"), abs=1e-10)


@pytest.mark.parametrize("kind", KINDS)
def test_marginals_mbr_and_viterbi_against_enumeration(kind):
    model = _model(kind)
    keep = torch.arange(IDS.shape[1])[None, :] < LENGTHS[:, None]
    rows = model.structure(IDS, keep).sentences(LENGTHS.tolist())
    g = model.grammar()
    terms, rules = g.terms(IDS), model.rules(g)
    for b, n in enumerate(LENGTHS.tolist()):
        every = list(derivations(n, 2, 2))
        scores = [
            derivation_score(*d, terms[b].tolist(), rules.tolist(), g.roots.tolist()) for d in every
        ]
        total = reduce(scores, "log")
        row = rows[b]
        for i in range(n):
            for j in range(i + 2, n + 1):
                posterior = sum(
                    math.exp(s - total)
                    for (spans, _, _), s in zip(every, scores, strict=True)
                    if (i, j) in spans
                )
                assert float(row.marginals[i, j]) == pytest.approx(posterior, abs=1e-6)
        inner, labels, tags = every[max(range(len(every)), key=scores.__getitem__)]
        want = sorted(
            ((i, j, f"NT-{a + 1}") for (i, j), a in zip(inner, labels, strict=True)),
            key=lambda s: (s[0], -s[1]),
        )
        assert row.spans("viterbi") == want
        tree = row.read_out([f"w{k}" for k in range(n)], "viterbi").tree
        assert tree is not None and tree.tags() == [f"T-{t + 1}" for t in tags]
        mbr = row.spans()  # the default decoder: MBR, as the official repository
        assert len(mbr) == n - 1 and mbr[0][:2] == (0, n)


def test_a_grammar_too_large_to_expand_decodes_by_mbr_only():
    config = TNPCFGConfig(nt=250, t=500, rank=8, s_dim=8)
    assert "use mbr" in (config.decoder_problem("viterbi") or "")
    torch.manual_seed(0)
    model = TNPCFG(config, VOCAB, 0).eval()
    rows = model.structure(IDS, IDS != 0).sentences(LENGTHS.tolist())
    assert len(rows[0].spans("mbr")) == 3
    with pytest.raises(ConfigError, match="use mbr"):
        rows[0].read_out(["a", "b", "c", "d"], "viterbi")


@pytest.mark.parametrize("kind", KINDS)
def test_training_reaches_every_parameter_and_lowers_the_loss(kind):
    model = _model(kind).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.75, 0.999))
    first = None
    for _ in range(20):
        loss = model.loss(WordBatch(IDS, LENGTHS)).value
        optimizer.zero_grad()
        loss.backward()
        if first is None:
            first = float(loss.detach())
            assert all(
                p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters()
            )
        optimizer.step()
    assert float(loss.detach()) < first


def test_gradients_are_the_same_bits_run_after_run_on_two_threads():
    # Many sentences repeating a few hundred words: the emissions' gradient adds into the
    # same rows from many positions, which indexing's backward did with atomics on 2+
    # threads (a different sum on most runs of this batch before the embedding lookup; the
    # TN-PCFG reads its emissions the same way, through LowRankGrammar.terms).
    torch.manual_seed(0)
    model = SimplePCFG(SimplePCFGConfig(nt=16, t=32, s_dim=64), 500, 0)
    ids = torch.randint(2, 500, (64, 19))
    lengths = torch.randint(2, 20, (64,))
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runs = []
        for _ in range(3):
            model.zero_grad()
            model.loss(WordBatch(ids, lengths)).value.backward()
            runs.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(runs[0], other) for other in runs[1:])


@pytest.mark.parametrize("kind", KINDS)
def test_sampling_gives_up_on_a_length_the_grammar_cannot_meet(kind, monkeypatch):
    """No sentence has one word: the sampler stops with a settings error, not a hang."""
    monkeypatch.setattr(grammar, "MIN_REJECTIONS", 30)
    monkeypatch.setattr(grammar, "REJECTIONS_PER_SENTENCE", 5)
    with pytest.raises(ConfigError, match=r"^max_words 1 is too few words"):
        _model(kind).sample(2, seed=0, max_words=1)


@pytest.mark.parametrize("kind", KINDS)
def test_two_word_sentences_are_drawn_as_often_as_the_grammar_says(kind):
    model = _model(kind)
    drawn = model.sample(4000, seed=0, max_words=12)
    assert model.sample(3, seed=5) == model.sample(3, seed=5)
    pairs = [(a, b) for a in range(VOCAB) for b in range(VOCAB)]
    p = model.log_likelihood(torch.tensor(pairs), torch.full((len(pairs),), 2)).detach().exp()
    two = [tuple(s) for s in drawn if len(s) == 2]
    assert len(two) > 500
    for k, pair in enumerate(pairs):
        expected = len(two) * float(p[k] / p.sum())
        assert abs(two.count(pair) - expected) <= 4 * math.sqrt(expected) + 3, pair


def test_the_parameters_are_the_official_modules():
    """``parser/model/TN_PCFG.py``'s names, in its order (its state dict loads by name; a
    module lists its own parameters before its submodules')."""
    names = [name for name, _ in _model("tnpcfg").named_parameters()]
    assert names[:3] == ["root_emb", "term_emb", "rule_state_emb"]
    assert "root_mlp.1.linear.0.weight" in names and "root_mlp.1.linear.2.bias" in names
    groups = list(dict.fromkeys(n.split(".")[0] for n in names[3:]))
    assert groups == ["root_mlp", "term_mlp", "parent_mlp", "left_mlp", "right_mlp"]
    assert "parent_mlp.2.weight" in names  # Linear, ReLU, Linear


def test_the_simple_pcfg_chooses_its_children_independently():
    """Liu et al.'s rules: ``p(A -> B C) = p_L(B | A) p_R(C | A)``, the rank of ``A`` being
    ``A`` itself; the official ``Simple_N_PCFG``'s parameters, in its order."""
    model = _model("simplepcfg")
    g = model.grammar()
    rules = model.rules(g).exp()  # [N, S, S]
    left, right = g.left.exp(), g.right.exp()  # [N, S]: row A, p(B | A)
    torch.testing.assert_close(rules, left[:, :, None] * right[:, None, :])
    names = [name for name, _ in model.named_parameters()]
    assert names[:3] == ["root_emb", "vocab_emb", "rule_state_emb"]
    groups = list(dict.fromkeys(n.split(".")[0] for n in names[3:]))
    assert groups == ["term_mlp", "left_mlp", "right_mlp", "parent_mlp1"]
    assert "term_mlp.3.linear.2.weight" in names  # a Linear and three residual layers
