"""N-PCFG and C-PCFG (Kim et al. 2019): normalised distributions, the likelihood against
enumeration of every derivation, the KL, padding, decoders and gradients."""

from __future__ import annotations

import math

import pytest
import torch

from induce.data.errors import ConfigError
from induce.models import grammar
from induce.models.grammar import WordBatch
from induce.models.pcfg import CompoundPCFG, PCFGConfig
from tests.structs.oracles import derivation_score, derivations, reduce

VOCAB = 7


def _model(z_dim: int, nt: int = 2, t: int = 2) -> CompoundPCFG:
    torch.manual_seed(0)
    config = PCFGConfig(nt=nt, t=t, s_dim=8, z_dim=z_dim, h_dim=6, w_dim=5)
    return CompoundPCFG(config, VOCAB, 0).double().eval()


IDS = torch.tensor([[3, 4, 5, 6], [2, 5, 0, 0], [6, 6, 3, 0]])
LENGTHS = torch.tensor([4, 2, 3])


@pytest.mark.parametrize("z_dim", [0, 3])
def test_every_distribution_is_normalised(z_dim):
    model = _model(z_dim)
    z = None if z_dim == 0 else torch.randn(3, z_dim, dtype=torch.float64)
    g = model.grammar(IDS, z)
    ones = torch.ones(3, dtype=torch.float64)
    torch.testing.assert_close(g.roots.exp().sum(-1), ones)
    torch.testing.assert_close(g.rules.exp().flatten(2).sum(-1), torch.ones(3, 2).double())
    # the emissions of each preterminal over the vocabulary, read through every word id
    every = torch.arange(VOCAB)[None, :].expand(3, VOCAB)
    torch.testing.assert_close(
        model.grammar(every, z).terms.exp().sum(1), torch.ones(3, 2, dtype=torch.float64)
    )


@pytest.mark.parametrize("z_dim", [0, 3])
def test_the_likelihood_is_the_sum_over_every_derivation(z_dim):
    model = _model(z_dim)
    got = model.log_likelihood(IDS, LENGTHS).detach()
    z = None if z_dim == 0 else model.encode(IDS, LENGTHS)[0]
    g = model.grammar(IDS, z)
    for b, n in enumerate(LENGTHS.tolist()):
        terms, rules, roots = g.terms[b].tolist(), g.rules[b].tolist(), g.roots[b].tolist()
        every = [
            derivation_score(inner, labels, tags, terms, rules, roots)
            for inner, labels, tags in derivations(n, 2, 2)
        ]
        assert float(got[b]) == pytest.approx(reduce(every, "log"), abs=1e-10)


def test_the_kl_is_the_gaussians_and_the_loss_the_negative_elbo():
    model = _model(3)
    mean, logvar = model.encode(IDS, LENGTHS)
    q = torch.distributions.Normal(mean, (0.5 * logvar).exp())
    p = torch.distributions.Normal(torch.zeros_like(mean), torch.ones_like(mean))
    kl = torch.distributions.kl_divergence(q, p).sum(-1)
    torch.testing.assert_close(model.kl(mean, logvar), kl)
    loss = model.loss(WordBatch(IDS, LENGTHS))  # eval mode: z = mean
    nll = -model.log_likelihood(IDS, LENGTHS)
    torch.testing.assert_close(loss.value, (nll + kl).mean())
    torch.testing.assert_close(loss.figures["nll"], nll.mean())
    torch.testing.assert_close(loss.figures["kl"], kl.mean())


def test_a_sentence_scores_the_same_alone_and_padded_in_a_batch():
    model = _model(3)
    together = model.log_likelihood(IDS, LENGTHS).detach()
    for b, n in enumerate(LENGTHS.tolist()):
        alone = model.log_likelihood(IDS[b : b + 1, :n], LENGTHS[b : b + 1]).detach()
        assert float(alone[0]) == pytest.approx(float(together[b]), abs=1e-10)


def test_viterbi_is_the_best_derivation_and_mbr_a_binary_tree():
    model = _model(3)
    trees = model.parse(IDS, LENGTHS, "viterbi")
    z = model.encode(IDS, LENGTHS)[0]
    g = model.grammar(IDS, z)
    for b, n in enumerate(LENGTHS.tolist()):
        terms, rules, roots = g.terms[b].tolist(), g.rules[b].tolist(), g.roots[b].tolist()
        best = max(
            derivations(n, 2, 2),
            key=lambda d: derivation_score(*d, terms, rules, roots),
        )
        inner, labels, _ = best
        want = sorted(
            ((i, j, f"NT-{a + 1}") for (i, j), a in zip(inner, labels, strict=True)),
            key=lambda s: (s[0], -s[1]),
        )
        assert trees[b] == want
    for b, spans in enumerate(model.parse(IDS, LENGTHS, "mbr")):
        n = int(LENGTHS[b])
        assert len(spans) == n - 1 and spans[0][:2] == (0, n)


def test_training_reaches_every_parameter_and_lowers_the_loss():
    model = _model(3).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.75, 0.999))
    first = None
    for _ in range(30):
        torch.manual_seed(1)  # the same z draws every step: the loss is comparable
        loss = model.loss(WordBatch(IDS, LENGTHS)).value
        optimizer.zero_grad()
        loss.backward()
        if first is None:
            first = float(loss.detach())
            assert all(
                p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters()
            )
        optimizer.step()
    assert float(loss.detach()) < first and math.isfinite(float(loss.detach()))


@pytest.mark.parametrize("z_dim", [0, 2])
def test_sampling_gives_up_on_a_length_the_grammar_cannot_meet(z_dim, monkeypatch):
    """A root always rewrites to two children: no sentence has one word, and a sampler that
    drew again forever would hang (``induce sample --max-words 1``).  It counts the draws it
    rejects and stops with a settings error on ``max_words``."""
    monkeypatch.setattr(grammar, "MIN_REJECTIONS", 30)
    monkeypatch.setattr(grammar, "REJECTIONS_PER_SENTENCE", 5)
    with pytest.raises(ConfigError, match=r"^max_words 1 is too few words.*0 of 2 .* 41 draws"):
        _model(z_dim).sample(2, seed=0, max_words=1)


def test_draw_sentences_counts_only_rejected_draws():
    draws = iter([None, [1, 2], None, None, [3, 4]])
    assert grammar.draw_sentences(2, lambda: next(draws), 5) == [[1, 2], [3, 4]]


def test_draws_with_an_excluded_word_are_drawn_again(monkeypatch):
    """``induce sample`` drew <pad> and <mask>, whose emissions the grammar keeps (every
    vocabulary entry has a row): such draws are drawn again, and a grammar that draws one in
    nearly every sentence is a settings error, not a loop."""
    draws = iter([[0, 2], [1, 2], None, [3, 0, 4], [3, 4]])
    drawn = grammar.draw_sentences(2, lambda: next(draws), 5, frozenset({0}))
    assert drawn == [[1, 2], [3, 4]]
    monkeypatch.setattr(grammar, "MIN_REJECTIONS", 3)
    monkeypatch.setattr(grammar, "REJECTIONS_PER_SENTENCE", 5)
    with pytest.raises(ConfigError, match="leave out: 0 of 10000000 sentences kept, 6 draws"):
        grammar.draw_sentences(10**7, lambda: [0, 1], 5, frozenset({0}))  # not 10^7 x 2 draws
    # a rate: one sentence kept in four draws passes, one in eight does not (over 5 a kept)
    every = iter(range(10**6))
    drawn = grammar.draw_sentences(5, lambda: [0] if next(every) % 4 else [1], 5, frozenset({0}))
    assert drawn == [[1]] * 5
    every = iter(range(10**6))
    with pytest.raises(ConfigError, match="3 of 5 sentences kept, 21 draws held one"):
        grammar.draw_sentences(5, lambda: [0] if next(every) % 8 else [1], 5, frozenset({0}))


@pytest.mark.parametrize("z_dim, excluded", [(0, ()), (2, ()), (0, (0,))])
def test_sampled_sentences_follow_the_grammar(z_dim, excluded):
    """Two-word sentences drawn from the N-PCFG come in the proportions ``p(x)`` gives them
    (with words excluded: ``p(x)`` given that ``x`` holds none); the compound PCFG's draws
    are sentences of the vocabulary too."""
    model = _model(z_dim)
    total = 4000 if z_dim == 0 else 50
    drawn = model.sample(total, seed=0, max_words=12, excluded=frozenset(excluded))
    assert not any(set(s) & set(excluded) for s in drawn)
    assert len(drawn) == total and all(2 <= len(s) <= 12 for s in drawn)
    assert model.sample(3, seed=5) == model.sample(3, seed=5)
    assert all(0 <= w < VOCAB for s in drawn for w in s)
    if z_dim:
        return
    pairs = [(a, b) for a in range(VOCAB) for b in range(VOCAB) if {a, b}.isdisjoint(excluded)]
    ids = torch.tensor(pairs)
    with torch.no_grad():
        p = model.log_likelihood(ids, torch.full((len(pairs),), 2)).exp()
    counts = {pair: 0 for pair in pairs}
    for s in drawn:
        if len(s) == 2:
            counts[(s[0], s[1])] += 1
    two = sum(counts.values())
    assert two > 500
    for k, pair in enumerate(pairs):
        expected = two * float(p[k] / p.sum())
        assert abs(counts[pair] - expected) <= 4 * math.sqrt(expected) + 3, (pair, counts[pair])


def test_the_scores_read_out_kims_labelled_tree_and_the_span_posteriors():
    """``structure()`` (read on the host, in float32): the Viterbi read-out is the best
    derivation with its nonterminals and
    preterminals (``NT-k``, ``T-k``); the marginals are each span's posterior over every
    derivation, and MBR's tree is a binary tree of them."""
    model = _model(3)
    keep = torch.arange(IDS.shape[1])[None, :] < LENGTHS[:, None]
    rows = model.structure(IDS, keep).sentences(LENGTHS.tolist())
    z = model.encode(IDS, LENGTHS)[0]
    g = model.grammar(IDS, z)
    for b, n in enumerate(LENGTHS.tolist()):
        terms, rules, roots = g.terms[b].tolist(), g.rules[b].tolist(), g.roots[b].tolist()
        every = list(derivations(n, 2, 2))
        scores = [derivation_score(*d, terms, rules, roots) for d in every]
        inner, _, tags = every[max(range(len(every)), key=scores.__getitem__)]
        words = [f"w{k}" for k in range(n)]
        tree = rows[b].read_out(words, "viterbi").tree
        assert tree is not None and tree.tags() == [f"T-{t + 1}" for t in tags]
        total = reduce(scores, "log")
        for i in range(n):
            for j in range(i + 2, n + 1):
                posterior = sum(
                    math.exp(s - total)
                    for (spans, _, _), s in zip(every, scores, strict=True)
                    if (i, j) in spans
                )
                assert float(rows[b].marginals[i, j]) == pytest.approx(posterior, abs=1e-6)
        mbr = rows[b].spans("mbr")
        assert len(mbr) == n - 1 and mbr[0][:2] == (0, n)
        assert sorted(s[:2] for s in rows[b].spans("viterbi")) == sorted(
            s for s in inner if s[1] - s[0] > 1
        )


def test_a_one_word_sentence_is_read_as_its_word_alone():
    """A PCFG derives no sentence of one word: its analyses are empty, the read-out gives
    ``(NT (T-k w))`` and the other sentences of the batch are unchanged."""
    model = _model(3)
    ids = torch.tensor([[3, 4, 5], [6, 0, 0]])
    keep = ids != 0
    rows = model.structure(ids, keep).sentences([3, 1])
    alone = model.structure(ids[:1], keep[:1]).sentences([3])
    assert torch.equal(rows[0].marginals, alone[0].marginals)  # type: ignore[attr-defined]
    tree = rows[1].read_out(["w"], "viterbi").tree
    assert tree is not None and tree.label == "NT" and tree.tags()[0].startswith("T-")
    assert rows[1].to_json() == {"spans": []}


def test_the_best_derivations_are_searched_once_a_batch_and_only_for_viterbi(monkeypatch):
    """The best derivation over the expanded rules (most of a validation's time) is found at
    the first Viterbi read-out of a batch, for all of it, and never for MBR read-outs."""
    import induce.structs.pcfg as structs

    calls = []
    found = structs.viterbi
    monkeypatch.setattr(structs, "viterbi", lambda *a: calls.append(1) or found(*a))
    model = _model(3)
    keep = torch.arange(IDS.shape[1])[None, :] < LENGTHS[:, None]
    rows = model.structure(IDS, keep).sentences(LENGTHS.tolist())
    words = [[f"w{k}" for k in range(n)] for n in LENGTHS.tolist()]
    for row, sentence in zip(rows, words, strict=True):
        row.read_out(sentence, "mbr")
    assert not calls
    trees = [row.read_out(sentence, "viterbi").tree for row, sentence in zip(rows, words)]
    assert len(calls) == 1 and all(tree is not None for tree in trees)
