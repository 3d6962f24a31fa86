"""The TN-PCFG of Yang, Zhao and Tu (NAACL 2021): a PCFG with many symbols whose binary
rules are a tensor decomposition of rank ``r``,

    p(A -> B C) = sum_r U[A, r] V[B, r] W[C, r]                               (Eq. 4)

``U = softmax_r(MLP_p(E_A))``, ``V = softmax_B(MLP_l(E_B))``, ``W = softmax_C(MLP_r(E_C))``
over shared symbol embeddings ``E`` (nonterminals first); the root and the emissions are Kim
et al.'s networks (a Linear, two residual layers, a Linear).  The inside algorithm runs in
rank space (:func:`induce.structs.pcfg.inside_low_rank`, O(n³r + n²r²), the rank-space
recursion of Yang et al. 2022 for the same model), so the N x S x S rule tensor is never
built for training or for the span marginals.

As the official ``parser/model/TN_PCFG.py`` (``sustcsonglin/TN-PCFG``), parameter for
parameter and in its order, so its state dict loads by name; PyTorch's initialisation (the
official class calls none; the symbol embeddings ``N(0, 1)``).  Departures: none in the
numbers; the decoders are MBR over span marginals (the repository's) and, for a grammar
small enough to expand its rules (``N * S^2 <= VITERBI_RULES``), the labelled Viterbi tree,
which the repository does not have (its issue #11).

Shapes: ``B`` sentences, ``n`` words, ``V`` vocabulary, ``N``/``T`` nonterminals and
preterminals, ``S = N + T`` symbols, ``r`` the rank.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Size
from induce.decode.span_scores import GrammarScores, RankScores
from induce.models.grammar import GrammarModel, draw_sentence, read_outs
from induce.structs import derivative
from induce.structs import pcfg as inside_algorithm
from induce.structs import spans as span_cky

VITERBI_RULES = 2_000_000  # the largest expanded rule tensor (N * S^2 entries) decoded by Viterbi


@dataclass(frozen=True)
class TNPCFGConfig:
    """The official ``config/tnpcfg_r500_nt250_t500_curriculum0.yaml``: 250 nonterminals,
    500 preterminals, rank 500, symbol embeddings 256."""

    nt: Size = 250
    t: Size = 500
    rank: Size = 500
    s_dim: Size = 256

    def check(self) -> None:
        """Nothing beyond the field types."""

    def decoder_problem(self, decoder: str) -> str | None:
        return viterbi_problem(self.nt, self.t) if decoder == "viterbi" else None


def viterbi_problem(nt: int, t: int) -> str | None:
    """Why a low-rank grammar of ``nt`` nonterminals and ``t`` preterminals cannot decode by
    Viterbi (its expanded rules are too large), or ``None``."""
    if nt * (nt + t) ** 2 > VITERBI_RULES:
        size = f"{nt} x {nt + t}^2 entries, over {VITERBI_RULES:,}"
        return f"viterbi expands the rules ({size}): use mbr"
    return None


class RuleSizes(Protocol):
    """What the shared code reads of a low-rank grammar's config."""

    @property
    def nt(self) -> int: ...

    @property
    def t(self) -> int: ...

    def decoder_problem(self, decoder: str) -> str | None: ...


class ResLayer(nn.Module):
    """``relu(W2 relu(W1 x)) + x`` as the official ``parser/modules/res.py`` names it."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) + x


def _deep(dim: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(dim, dim), ResLayer(dim), ResLayer(dim), nn.Linear(dim, out))


def _shallow(dim: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, out))


@dataclass
class LowRankGrammar:
    """The grammar's log-probabilities: ``roots [N]``, ``emissions [T, V]``, ``head [N, r]``
    (``log U``), ``left``/``right [r, S]`` (``log V``, ``log W`` transposed)."""

    roots: torch.Tensor
    emissions: torch.Tensor
    head: torch.Tensor
    left: torch.Tensor
    right: torch.Tensor

    def terms(self, ids: torch.Tensor) -> torch.Tensor:
        """``[B, n, T]``: ``log p(word | T)`` of each word (``emissions [B, T, V]``: each
        sentence's own, for a compound grammar)."""
        if self.emissions.dim() == 3:
            index = ids[:, None, :].expand(-1, self.emissions.shape[1], -1)
            return self.emissions.gather(2, index).transpose(1, 2)
        # an embedding lookup, not ``emissions.t()[ids]``: the backward of advanced indexing
        # adds into the rows with atomics on a CPU with 2+ threads (an order that changes
        # from run to run), the embedding's backward gives each thread its own rows
        return F.embedding(ids, self.emissions.t())


class LowRankPCFG(GrammarModel):
    """A grammar whose rules factor through ranks (TN-PCFG, Simple PCFG): the likelihood,
    marginals, decoders and sampling over a :class:`LowRankGrammar`.  Subclasses build
    their networks and :meth:`grammar`; a compound one (a grammar per sentence, given its
    latent) overrides :meth:`sentence_grammars` and :meth:`prior_grammar` instead."""

    scores_class: ClassVar[type[GrammarScores]] = RankScores
    config: RuleSizes
    compound: ClassVar[bool] = False  # a grammar per sentence: sampling draws one each time

    def grammar(self) -> LowRankGrammar:
        raise NotImplementedError

    def sentence_grammars(
        self, ids: torch.Tensor, lengths: torch.Tensor, sample: bool
    ) -> tuple[LowRankGrammar, torch.Tensor]:
        """The grammar of the batch's sentences and ``KL(q(z | x) || p(z)) [B]``; here one
        grammar for all, no latent (``kl = 0``)."""
        return self.grammar(), torch.zeros(ids.shape[0], device=ids.device)

    def prior_grammar(self, generator: torch.Generator) -> LowRankGrammar:
        """The grammar a sentence is drawn from (a compound grammar: given ``z ~ p(z)``)."""
        return self.grammar()

    def _inside(
        self,
        g: LowRankGrammar,
        terms: torch.Tensor,
        lengths: torch.Tensor,
        spans: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``[B]``: ``log p(x)`` by the rank-space inside algorithm."""
        b = terms.shape[0]
        return inside_algorithm.inside_low_rank(
            terms,
            g.roots.expand(b, -1),
            g.head.expand(b, -1, -1),
            g.left.expand(b, -1, -1),
            g.right.expand(b, -1, -1),
            lengths,
            spans,
        )

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``nll [B]`` (the negative log-likelihood, Eq. 4's grammar) and ``kl [B]`` (0
        without a latent; a compound grammar's ``z`` sampled in training mode)."""
        g, kl = self.sentence_grammars(ids, lengths, self.training)
        return -self._inside(g, g.terms(ids), lengths), kl

    def rules(self, g: LowRankGrammar) -> torch.Tensor:
        """``[N, S, S]`` (``[B, N, S, S]`` for a grammar per sentence): the expanded ``log
        p(A -> B C)`` (Viterbi and tests only)."""
        if g.left.dim() == 3:
            head = g.head.expand(g.left.shape[0], -1, -1)
            return inside_algorithm.dense_rules(head, g.left, g.right)
        return inside_algorithm.dense_rules(g.head[None], g.left[None], g.right[None])[0]

    def _analyses(self, ids: torch.Tensor, lengths: torch.Tensor) -> GrammarScores:
        """Span marginals and MBR in rank space; the best derivation over the expanded rules
        where ``decoder_problem`` allows it."""
        g, _ = self.sentence_grammars(ids, lengths.clamp(min=1), sample=False)
        terms = g.terms(ids)
        derivable = lengths.clamp(min=2)
        if self.config.decoder_problem("viterbi") is None:
            rules = self.rules(g)
            b = terms.shape[0]
            found = read_outs(
                lambda s: self._inside(g, terms, derivable, s),
                lambda: inside_algorithm.viterbi(
                    terms, rules.expand(b, -1, -1, -1), g.roots.expand(b, -1), derivable
                ),
                terms,
                lengths,
            )
            return RankScores(found.marginals, None, None, found.mbr, best=found.best)
        b, n = ids.shape
        (marginals,) = derivative(
            lambda s: self._inside(g, terms, derivable, s), terms.new_zeros(b, n + 1, n + 1)
        )
        one = (lengths < 2)[:, None, None]
        mbr = span_cky.argmax(marginals, derivable)
        return RankScores(marginals.masked_fill(one, 0.0), None, None, mbr.masked_fill(one, 0))

    def drawer(
        self, rng: random.Random, generator: torch.Generator, max_words: int
    ) -> Callable[[], list[int] | None]:
        """Sentences drawn top-down: a nonterminal draws a rank ``r ~ U[A]``, then its
        children ``B ~ V[:, r]`` and ``C ~ W[:, r]`` (Eq. 4 read generatively); a
        preterminal emits a word (a compound grammar: a new ``z`` for each sentence)."""
        tables: list[list] = []

        def children(symbol: int) -> tuple[int, int]:  # a rank, then each child given it
            _, head, left, right, _ = tables
            (r,) = rng.choices(range(len(head[0])), head[symbol])
            (b,) = rng.choices(range(len(left[0])), left[r])
            (c,) = rng.choices(range(len(left[0])), right[r])
            return b, c

        def draw() -> list[int] | None:
            if not tables or self.compound:  # a compound grammar: a new z for each draw
                g = self.prior_grammar(generator)
                parts = (g.roots, g.head, g.left, g.right, g.emissions)
                tables[:] = [t.exp().tolist() for t in parts]
            roots, emissions = tables[0], tables[4]
            return draw_sentence(roots, emissions, children, self.config.nt, rng, max_words)

        return draw


class TNPCFG(LowRankPCFG):
    """The TN-PCFG (Yang et al. 2021, Eq. 4)."""

    config_class: ClassVar[type[TNPCFGConfig]] = TNPCFGConfig
    config: TNPCFGConfig

    def __init__(self, config: TNPCFGConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c, s = config, config.s_dim
        self.root_emb = nn.Parameter(torch.randn(1, s))
        self.root_mlp = _deep(s, c.nt)
        self.term_emb = nn.Parameter(torch.randn(c.t, s))
        self.term_mlp = _deep(s, vocab_size)
        self.rule_state_emb = nn.Parameter(torch.randn(c.nt + c.t, s))
        self.parent_mlp = _shallow(s, c.rank)
        self.left_mlp = _shallow(s, c.rank)
        self.right_mlp = _shallow(s, c.rank)

    def grammar(self) -> LowRankGrammar:
        nonterminals = self.rule_state_emb[: self.config.nt]
        return LowRankGrammar(
            F.log_softmax(self.root_mlp(self.root_emb), -1)[0],
            F.log_softmax(self.term_mlp(self.term_emb), -1),
            F.log_softmax(self.parent_mlp(nonterminals), -1),
            F.log_softmax(self.left_mlp(self.rule_state_emb), 0).t(),
            F.log_softmax(self.right_mlp(self.rule_state_emb), 0).t(),
        )
