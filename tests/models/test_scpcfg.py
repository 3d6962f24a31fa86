"""The compound Simple PCFG (SC-PCFG, Liu et al. 2023): each sentence's grammar given its
latent, the rank-space likelihood against the expanded rules and every derivation, the
marginals and decoders against enumeration, the ELBO's parts, and the official parameters."""

from __future__ import annotations

import math

import pytest
import torch

from induce.models.grammar import WordBatch
from induce.models.pcfg import CompoundPCFG, posterior
from induce.models.simplepcfg import CompoundSimplePCFG, CompoundSimplePCFGConfig
from induce.structs import pcfg as inside_algorithm
from tests.structs.oracles import derivation_score, derivations, reduce

VOCAB = 7
IDS = torch.tensor([[3, 4, 5, 6], [2, 5, 0, 0], [6, 6, 3, 0]])
LENGTHS = torch.tensor([4, 2, 3])


def _model(**extra) -> CompoundSimplePCFG:
    torch.manual_seed(0)
    sizes = dict(nt=2, t=2, s_dim=8, z_dim=3, w_dim=6, h_dim=5) | extra
    return CompoundSimplePCFG(CompoundSimplePCFGConfig(**sizes), VOCAB, 0).double().eval()


def _at_mean(model: CompoundSimplePCFG):
    """Each sentence's grammar at ``z = mean`` and its expanded rules ``[B, N, S, S]``."""
    with torch.no_grad():
        g, _ = model.sentence_grammars(IDS, LENGTHS, sample=False)
    return g, model.rules(g)


def test_each_sentence_has_its_own_grammar_and_its_rules_factor():
    model = _model()
    g, rules = _at_mean(model)
    assert g.emissions.shape == (3, 2, VOCAB) and g.left.shape == (3, 2, 4)
    ones = torch.ones(3, 2, dtype=torch.float64)
    torch.testing.assert_close(g.emissions.exp().sum(-1), ones)
    torch.testing.assert_close(rules.exp().flatten(2).sum(-1), ones)
    left, right = g.left.exp(), g.right.exp()  # [B, N, S]: p(B | A, z)
    torch.testing.assert_close(rules.exp(), left[..., :, None] * right[..., None, :])
    assert not torch.allclose(g.left[0], g.left[1])  # z differs, so do the rules


def test_the_likelihood_at_the_mean_is_the_sum_over_every_derivation():
    model = _model()
    got = model.log_likelihood(IDS, LENGTHS).detach()
    g, rules = _at_mean(model)
    terms = g.terms(IDS)
    dense = inside_algorithm.inside(terms, rules, g.roots.expand(3, -1), LENGTHS)
    torch.testing.assert_close(got, dense, atol=1e-10, rtol=0)
    for b, n in enumerate(LENGTHS.tolist()):
        every = [
            derivation_score(*d, terms[b].tolist(), rules[b].tolist(), g.roots.tolist())
            for d in derivations(n, 2, 2)
        ]
        assert float(got[b]) == pytest.approx(reduce(every, "log"), abs=1e-10)


def test_marginals_mbr_and_viterbi_against_enumeration():
    model = _model()
    keep = torch.arange(IDS.shape[1])[None, :] < LENGTHS[:, None]
    rows = model.structure(IDS, keep).sentences(LENGTHS.tolist())
    g, rules = _at_mean(model)
    terms = g.terms(IDS)
    for b, n in enumerate(LENGTHS.tolist()):
        every = list(derivations(n, 2, 2))
        scores = [
            derivation_score(*d, terms[b].tolist(), rules[b].tolist(), g.roots.tolist())
            for d in every
        ]
        total = reduce(scores, "log")
        for i in range(n):
            for j in range(i + 2, n + 1):
                posterior_ij = sum(
                    math.exp(s - total)
                    for (spans, _, _), s in zip(every, scores, strict=True)
                    if (i, j) in spans
                )
                assert float(rows[b].marginals[i, j]) == pytest.approx(posterior_ij, abs=1e-6)
        inner, labels, tags = every[max(range(len(every)), key=scores.__getitem__)]
        want = sorted(
            ((i, j, f"NT-{a + 1}") for (i, j), a in zip(inner, labels, strict=True)),
            key=lambda s: (s[0], -s[1]),
        )
        assert rows[b].spans("viterbi") == want
        tree = rows[b].read_out([f"w{k}" for k in range(n)], "viterbi").tree
        assert tree is not None and tree.tags() == [f"T-{t + 1}" for t in tags]
        assert len(rows[b].spans()) == n - 1  # MBR, the default


def test_the_loss_is_the_negative_elbo_with_one_sample_of_z():
    model = _model()
    mean, logvar = posterior(model.enc_emb, model.enc_rnn, model.enc_out, IDS, LENGTHS)
    nll, kl = model(IDS, LENGTHS)  # evaluation mode: z at its mean
    torch.testing.assert_close(kl, CompoundPCFG.kl(mean, logvar))
    torch.testing.assert_close(-nll, model.log_likelihood(IDS, LENGTHS))
    model.train()
    torch.manual_seed(1)
    sampled, kl_again = model(IDS, LENGTHS)
    torch.testing.assert_close(kl_again, kl)
    assert not torch.allclose(sampled, nll)  # a reparameterised draw, not the mean
    loss = model.loss(WordBatch(IDS, LENGTHS))
    assert set(loss.figures) == {"nll", "kl"} and float(loss.value.detach()) > 0


def test_eval_z_sample_decodes_as_the_repository_does():
    """The repository's ``evaluate`` decodes with one draw of ``z``: an option, not ours."""
    model = _model(eval_z="sample")
    torch.manual_seed(2)
    first = model.log_likelihood(IDS, LENGTHS)
    assert not torch.allclose(first, model.log_likelihood(IDS, LENGTHS))
    steady = _model()
    torch.testing.assert_close(
        steady.log_likelihood(IDS, LENGTHS), steady.log_likelihood(IDS, LENGTHS)
    )


def test_training_reaches_every_parameter_and_sampling_repeats():
    model = _model().train()
    model.loss(WordBatch(IDS, LENGTHS)).value.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    model.eval()
    drawn = model.sample(20, seed=3, max_words=12)
    assert drawn == model.sample(20, seed=3, max_words=12) and all(drawn)
    assert all(0 <= w < VOCAB for s in drawn for w in s)


def test_the_parameters_are_the_official_modules():
    """``parser/model/SC_PCFG.py``'s ``Simple_C_PCFG``: its names in its order (a module
    lists its own parameters before its submodules')."""
    names = [name for name, _ in _model().named_parameters()]
    assert names[:2] == ["root_emb", "rule_state_emb"]
    groups = list(dict.fromkeys(n.split(".")[0] for n in names[2:]))
    assert groups == [
        "term_mlp", "left_mlp", "right_mlp", "parent_mlp1", "enc_emb", "enc_rnn", "enc_out"
    ]  # fmt: skip
    assert "term_mlp.3.weight" in names and "term_mlp.1.linear.2.weight" in names
