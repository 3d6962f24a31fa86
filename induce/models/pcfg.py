"""The neural and compound PCFGs of Kim, Dyer and Rush (ACL 2019): N-PCFG (``z_dim: 0``) and
C-PCFG, on the inside algorithm of :mod:`induce.structs.pcfg`.

A grammar of ``N`` nonterminals and ``T`` preterminals (symbols ``S = N + T``, nonterminals
first) with a root rule ``S -> A``, binary rules ``A -> B C`` and emissions ``T -> w``, each
distribution a network of learned symbol embeddings (the paper's neural PCFG):

- root: ``softmax`` over ``A`` of ``root_mlp([e_root; z])``, the MLP a Linear, two residual
  layers and a Linear to ``N`` (:class:`ResidualLayer`);
- rules: ``log_softmax`` over all ``(N + T)^2`` child pairs of ``Linear([e_A; z])``;
- emissions: ``softmax`` over the vocabulary of ``vocab_mlp([e_T; z])``, the root MLP's
  shape with a Linear to the vocabulary.

The compound PCFG draws a sentence-level ``z`` (64 dimensions) from a diagonal
Gaussian whose mean and log-variance come from a one-layer BiLSTM (512 per direction) over
the sentence's word embeddings (512), max-pooled over the words; training minimises
``-log p(x | z) + KL(q(z | x) || N(0, I))`` (the negative ELBO, one reparameterised sample,
the KL analytic); parsing and evaluation use ``z = mean`` (the official ``--use_mean``).

As the official code (``harvardnlp/compound-pcfg``, ``models.py``), parameter for parameter
and in its order, so its weights load by name.  Departures: the emissions are computed once
per sentence rather than once per word position (the same numbers), padded batches are read
by a packed BiLSTM and a masked max-pool (the official batches are of one length), and
``z_dim: 0`` runs on the CPU (the official N-PCFG path calls ``.cuda()``).

Shapes: ``B`` sentences, ``n`` words in the longest, ``V`` vocabulary, ``N``/``T``
nonterminals/preterminals, ``S = N + T``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from induce.data.config import Size
from induce.data.errors import ConfigError
from induce.decode.span_scores import GrammarScores
from induce.models.grammar import GrammarModel, draw_sentence, read_outs
from induce.structs import LOG
from induce.structs import pcfg as inside_algorithm


@dataclass(frozen=True)
class PCFGConfig:
    """Kim et al.'s defaults (``train.py``): 30 nonterminals, 60 preterminals, symbol
    embeddings 256, ``z`` 64 (0: N-PCFG), inference BiLSTM 512 over 512-dim words."""

    nt: Size = 30
    t: Size = 60
    s_dim: Size = 256
    z_dim: int = 64
    h_dim: Size = 512
    w_dim: Size = 512
    # xavier: every weight matrix Xavier-uniform, as the official train.py draws them after
    # building the model; pytorch: PyTorch's defaults (the symbol embeddings N(0, 1))
    init: Literal["xavier", "pytorch"] = "xavier"

    def check(self) -> None:
        if self.z_dim < 0:
            raise ConfigError(f"model.z_dim must be >= 0 (0: N-PCFG), got {self.z_dim}")

    def decoder_problem(self, decoder: str) -> str | None:
        return None


@dataclass(frozen=True)
class NeuralPCFGConfig(PCFGConfig):
    """The N-PCFG: no ``z`` (Kim et al.'s ``--z_dim 0``)."""

    z_dim: int = 0


class ResidualLayer(nn.Module):
    """``relu(lin2(relu(lin1(x)))) + x`` (the official ``ResidualLayer``)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.lin1 = nn.Linear(dim, dim)
        self.lin2 = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.lin2(F.relu(self.lin1(x)))) + x


def _mlp(d_in: int, dim: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d_in, dim), ResidualLayer(dim), ResidualLayer(dim), nn.Linear(dim, d_out)
    )


@dataclass
class Grammar:
    """One grammar per sentence: ``roots [B, N]``, ``rules [B, N, S, S]`` and ``terms [B, n,
    T]`` (``log p(word_i | T)``), all log-probabilities."""

    roots: torch.Tensor
    rules: torch.Tensor
    terms: torch.Tensor


class CompoundPCFG(GrammarModel):
    """The C-PCFG (and the N-PCFG with ``z_dim: 0``).  ``loss(batch)``: the batch mean of
    the negative ELBO, with its two parts to log (:class:`GrammarModel`);
    ``log_likelihood``, ``structure`` and ``parse``: with ``z`` at its mean."""

    config_class: ClassVar[type[PCFGConfig]] = PCFGConfig
    config: PCFGConfig

    def __init__(self, config: PCFGConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c = config
        s, z = c.s_dim, c.z_dim
        self.t_emb = nn.Parameter(torch.randn(c.t, s))
        self.nt_emb = nn.Parameter(torch.randn(c.nt, s))
        self.root_emb = nn.Parameter(torch.randn(1, s))
        self.rule_mlp = nn.Linear(s + z, (c.nt + c.t) ** 2)
        self.root_mlp = _mlp(s + z, s, c.nt)
        if z > 0:
            self.enc_emb = nn.Embedding(vocab_size, c.w_dim)
            self.enc_rnn = nn.LSTM(c.w_dim, c.h_dim, bidirectional=True, batch_first=True)
            self.enc_params = nn.Linear(2 * c.h_dim, 2 * z)
        self.vocab_mlp = _mlp(s + z, s, vocab_size)
        if c.init == "xavier":
            for param in self.parameters():  # in the official order of definition
                if param.dim() > 1:
                    nn.init.xavier_uniform_(param)

    # -- the inference network of the compound PCFG ----------------------------------------
    def encode(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``q(z | x)``: ``mean, logvar [B, z]`` (:func:`posterior`)."""
        return posterior(self.enc_emb, self.enc_rnn, self.enc_params, ids, lengths)

    @staticmethod
    def kl(mean: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
        """``[B]``: ``KL(N(mean, exp(logvar)) || N(0, I))``, summed over dimensions."""
        return (-0.5 * (logvar - mean.pow(2) - logvar.exp() + 1)).sum(-1)

    # -- the grammar: the neural PCFG's networks ------------------------------------------
    def grammar(self, ids: torch.Tensor, z: torch.Tensor | None) -> Grammar:
        """The rule log-probabilities of each sentence given its ``z [B, z_dim]`` (``None``:
        N-PCFG, one grammar for all)."""
        c = self.config
        batch = ids.shape[0]
        rows = batch if z is not None else 1

        def with_z(emb: torch.Tensor) -> torch.Tensor:  # [K, s] -> [rows, K, s + z]
            emb = emb[None].expand(rows, *emb.shape)
            if z is None:
                return emb
            return torch.cat([emb, z[:, None, :].expand(rows, emb.shape[1], z.shape[-1])], -1)

        roots = F.log_softmax(self.root_mlp(with_z(self.root_emb))[:, 0], -1)  # [rows, N]
        rules = F.log_softmax(self.rule_mlp(with_z(self.nt_emb)), -1)
        rules = rules.view(rows, c.nt, c.nt + c.t, c.nt + c.t)
        emissions = F.log_softmax(self.vocab_mlp(with_z(self.t_emb)), -1)  # [rows, T, V]
        index = ids[:, None, :].expand(batch, c.t, ids.shape[1])
        terms = emissions.expand(batch, -1, -1).gather(2, index).transpose(1, 2)  # [B, n, T]
        if z is None:
            # copies, not stride-0 views: the chart's batched products over a view repeated
            # along the batch summed their gradients in an order that varied from run to
            # run (1 run in 5 of 30 updates differed on one CPU); a copy's backward is one
            # fixed sum over the batch
            roots = roots.expand(batch, -1).contiguous()
            rules = rules.expand(batch, -1, -1, -1).contiguous()
        return Grammar(roots, rules, terms)

    def _z(self, ids: torch.Tensor, lengths: torch.Tensor, sample: bool) -> tuple:
        """``z`` (a reparameterised sample, or the mean) and the KL ``[B]``."""
        if self.config.z_dim == 0:
            return None, torch.zeros(ids.shape[0], device=ids.device)
        mean, logvar = self.encode(ids, lengths)
        z = mean + (0.5 * logvar).exp() * torch.randn_like(mean) if sample else mean
        return z, self.kl(mean, logvar)

    # -- objective and read-outs ----------------------------------------------------------
    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``nll, kl [B]``: ``-log p(x | z)`` and ``KL(q(z | x) || N(0, I))``, ``z`` one
        reparameterised sample in training mode, the mean otherwise (N-PCFG: ``kl = 0``).
        ``ids [B, n]``, ``lengths [B]`` (each at least 2)."""
        z, kl = self._z(ids, lengths, sample=self.training)
        g = self.grammar(ids, z)
        return -inside_algorithm.inside(g.terms, g.rules, g.roots, lengths), kl

    def drawer(
        self, rng: random.Random, generator: torch.Generator, max_words: int
    ) -> Callable[[], list[int] | None]:
        """Sentences drawn top-down from the root: a nonterminal rewrites to a child pair, a
        preterminal emits a word; the compound PCFG first draws ``z ~ N(0, I)`` per
        sentence."""
        c = self.config
        tables: tuple[list[float], list[list[float]], list[list[float]]] | None = None

        def draw() -> list[int] | None:
            nonlocal tables
            if tables is None or c.z_dim > 0:
                z = None
                if c.z_dim > 0:
                    z = torch.randn(1, c.z_dim, generator=generator).to(self.t_emb)
                g = self.grammar(torch.zeros(1, 1, dtype=torch.long, device=self.t_emb.device), z)
                tables = (
                    g.roots[0].exp().tolist(),
                    g.rules[0].flatten(1).exp().tolist(),
                    self._emissions(z)[0].exp().tolist(),
                )
            roots, rules, emissions = tables
            return draw_sentence(roots, emissions, _pair_drawer(rules, rng), c.nt, rng, max_words)

        return draw

    def _emissions(self, z: torch.Tensor | None) -> torch.Tensor:
        """``[rows, T, V]``: log p(word | T)."""
        emb = self.t_emb[None]
        if z is not None:
            emb = torch.cat([emb, z[:, None, :].expand(1, emb.shape[1], z.shape[-1])], -1)
        return F.log_softmax(self.vocab_mlp(emb), -1)

    def _analyses(self, ids: torch.Tensor, lengths: torch.Tensor) -> GrammarScores:
        """The read-outs by the dense inside algorithm under both semirings."""
        z, _ = self._z(ids, lengths.clamp(min=1), sample=False)
        g = self.grammar(ids, z)
        derivable = lengths.clamp(min=2)
        return read_outs(
            lambda s: inside_algorithm.inside(g.terms, g.rules, g.roots, derivable, LOG, s),
            lambda: inside_algorithm.viterbi(g.terms, g.rules, g.roots, derivable),
            g.terms,
            lengths,
        )


def posterior(
    embed: nn.Embedding, rnn: nn.LSTM, out: nn.Linear, ids: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """The compound PCFGs' inference network ``q(z | x)``: ``mean, logvar [B, z]`` from the
    BiLSTM states max-pooled over each sentence's words (``ids [B, n]``, ``lengths [B]``)."""
    packed = pack_padded_sequence(embed(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
    states, _ = pad_packed_sequence(rnn(packed)[0], batch_first=True, total_length=ids.shape[1])
    words = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
    pooled = states.masked_fill(~words[..., None], float("-inf")).max(1).values
    mean, logvar = out(pooled).chunk(2, -1)
    return mean, logvar


class NeuralPCFG(CompoundPCFG):
    """The N-PCFG (Kim et al. 2019, Section 2.1): the compound model's networks without
    ``z``, one grammar for every sentence."""

    config_class: ClassVar[type[PCFGConfig]] = NeuralPCFGConfig


def _pair_drawer(rules: list[list[float]], rng: random.Random) -> Callable[[int], tuple[int, int]]:
    """A nonterminal's children drawn as one of the ``S x S`` pairs of its rule row."""
    symbols = math.isqrt(len(rules[0]))

    def children(symbol: int) -> tuple[int, int]:
        (pair,) = rng.choices(range(symbols * symbols), rules[symbol])
        return pair // symbols, pair % symbols

    return children
