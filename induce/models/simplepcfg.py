"""The Simple PCFG of Liu et al. (Findings of EMNLP 2023): binary rules that
choose the two children independently given the parent,

    p(A -> B C) = p_L(B | A) p_R(C | A)

``p_L(B | A) = softmax_B((MLP_l(E_B) + E_B) . (MLP_p(E_A) + E_A))`` (``p_R`` with ``MLP_r``)
over shared symbol embeddings ``E`` (nonterminals first); the root is ``softmax_A(e_root .
E_A)`` and the emissions ``softmax_w((MLP(E_T) + E_T) . W_w)``.  It is a low-rank PCFG whose
ranks are the nonterminals themselves (``U`` the identity), so it runs on the TN-PCFG's
rank-space inside algorithm (:class:`induce.models.tnpcfg.LowRankPCFG`), O(n³N + n²N²),
which lets it have thousands of symbols (SN-PCFG: NT 4096, T 8192).

As the official ``parser/model/SN_PCFG.py`` (``Simple_N_PCFG`` in ``sustcsonglin/TN-PCFG``),
parameter for parameter, created in its order and drawn Xavier-uniform as its
``_initialize`` does, so its state dict loads by name.  The compound SC-PCFG
(:class:`CompoundSimplePCFG`, ``parser/model/SC_PCFG.py``'s ``Simple_C_PCFG``) conditions
the emissions and the parents' embeddings on a sentence's latent ``z`` (Kim et al.'s
inference network and KL).  Decoders as the TN-PCFG's: MBR (the default, the repository's)
and, for a grammar small enough to expand its rules, Viterbi.

Shapes: ``N``/``T`` nonterminals and preterminals, ``S = N + T``, ``V`` vocabulary,
``s`` the embedding width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Size
from induce.models.pcfg import CompoundPCFG, posterior
from induce.models.tnpcfg import LowRankGrammar, LowRankPCFG, ResLayer, viterbi_problem


@dataclass(frozen=True)
class SimplePCFGConfig:
    """The official ``config/simplepcfg/simple_npcfg_nt4096_t8192_curriculum0.yaml``: 4,096
    nonterminals, 8,192 preterminals, embeddings 512."""

    nt: Size = 4096
    t: Size = 8192
    s_dim: Size = 512

    def check(self) -> None:
        """Nothing beyond the field types."""

    def decoder_problem(self, decoder: str) -> str | None:
        return viterbi_problem(self.nt, self.t) if decoder == "viterbi" else None


class SimplePCFG(LowRankPCFG):
    """The SN-PCFG; no latent (``kl = 0``)."""

    config_class: ClassVar[type[SimplePCFGConfig]] = SimplePCFGConfig
    config: SimplePCFGConfig

    def __init__(self, config: SimplePCFGConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c, s = config, config.s_dim
        self.root_emb = nn.Parameter(torch.randn(1, s))
        self.term_mlp = nn.Sequential(nn.Linear(s, s), ResLayer(s), ResLayer(s), ResLayer(s))
        self.vocab_emb = nn.Parameter(torch.randn(s, vocab_size))
        self.rule_state_emb = nn.Parameter(torch.randn(c.nt + c.t, s))
        self.left_mlp = nn.Sequential(nn.Linear(s, s), nn.ReLU())
        self.right_mlp = nn.Sequential(nn.Linear(s, s), nn.ReLU())
        self.parent_mlp1 = nn.Sequential(nn.Linear(s, s), nn.ReLU())
        for param in self.parameters():  # the official _initialize, in its order
            if param.dim() > 1:
                nn.init.xavier_uniform_(param)

    def grammar(self) -> LowRankGrammar:
        nt = self.config.nt
        symbols = self.rule_state_emb
        nonterminals, preterminals = symbols[:nt], symbols[nt:]
        parents = self.parent_mlp1(nonterminals) + nonterminals  # [N, s]
        left = (self.left_mlp(symbols) + symbols) @ parents.t()  # [S, N]: column A
        right = (self.right_mlp(symbols) + symbols) @ parents.t()
        words = (self.term_mlp(preterminals) + preterminals) @ self.vocab_emb  # [T, V]
        identity = torch.full((nt, nt), float("-inf"), device=symbols.device)
        return LowRankGrammar(
            F.log_softmax(self.root_emb @ nonterminals.t(), -1)[0],
            F.log_softmax(words, -1),
            identity.fill_diagonal_(0.0).to(symbols.dtype),  # the rank of A is A itself
            F.log_softmax(left, 0).t(),
            F.log_softmax(right, 0).t(),
        )


@dataclass(frozen=True)
class CompoundSimplePCFGConfig(SimplePCFGConfig):
    """The official ``config/simplepcfg/simple_cpcfg_nt2048_t4096_curriculum1.yaml``: 2,048
    nonterminals, 4,096 preterminals, embeddings 512, ``z`` of 64 from a BiLSTM of 512 over
    word embeddings of 512."""

    nt: Size = 2048
    t: Size = 4096
    z_dim: Size = 64
    w_dim: Size = 512
    h_dim: Size = 512
    # z when parsing and in log_likelihood: its mean (Kim et al.'s, deterministic) or one
    # draw from q(z | x) (the repository's evaluate() calls forward in its sampling mode)
    eval_z: Literal["mean", "sample"] = "mean"


class CompoundSimplePCFG(LowRankPCFG):
    """The SC-PCFG: :class:`SimplePCFG`'s rules with a latent ``z`` per sentence,

        p_L(B | A, z) = softmax_B((MLP_l(E_B) + E_B) . (MLP_p([E_A; z]) + E_A))

    (``p_R`` alike), emissions ``softmax_w(MLP([E_T; z]))`` (a Linear, two residual layers, a
    Linear to the vocabulary), the root ``softmax_A(e_root . E_A)`` without ``z``; trained
    on the negative ELBO ``-log p(x | z) + KL(q(z | x) || N(0, I))`` with one
    reparameterised sample.  Memory: the emissions are ``[B, T, V]`` per batch, as the
    official code's."""

    config_class: ClassVar[type[CompoundSimplePCFGConfig]] = CompoundSimplePCFGConfig
    config: CompoundSimplePCFGConfig
    compound: ClassVar[bool] = True

    def __init__(self, config: CompoundSimplePCFGConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c, s, z = config, config.s_dim, config.z_dim
        self.root_emb = nn.Parameter(torch.randn(1, s))
        self.term_mlp = nn.Sequential(
            nn.Linear(s + z, s), ResLayer(s), ResLayer(s), nn.Linear(s, vocab_size)
        )
        self.rule_state_emb = nn.Parameter(torch.randn(c.nt + c.t, s))
        self.left_mlp = nn.Sequential(nn.Linear(s, s), nn.ReLU())
        self.right_mlp = nn.Sequential(nn.Linear(s, s), nn.ReLU())
        self.parent_mlp1 = nn.Sequential(nn.Linear(s + z, s), nn.ReLU())
        self.enc_emb = nn.Embedding(vocab_size, c.w_dim)
        self.enc_rnn = nn.LSTM(c.w_dim, c.h_dim, bidirectional=True, batch_first=True)
        self.enc_out = nn.Linear(2 * c.h_dim, 2 * z)
        for param in self.parameters():  # the official _initialize, in its order
            if param.dim() > 1:
                nn.init.xavier_uniform_(param)

    def grammar_given(self, z: torch.Tensor) -> LowRankGrammar:
        """Each sentence's grammar given its ``z [B, z_dim]``: ``emissions [B, T, V]``,
        ``left``/``right [B, N, S]``; the root and the (identity) ranks are shared."""
        nt = self.config.nt
        symbols = self.rule_state_emb
        nonterminals, preterminals = symbols[:nt], symbols[nt:]

        def with_z(emb: torch.Tensor) -> torch.Tensor:  # [K, s] -> [B, K, s + z]
            rows = emb[None].expand(z.shape[0], -1, -1)
            return torch.cat([rows, z[:, None, :].expand(-1, emb.shape[0], -1)], -1)

        parents = self.parent_mlp1(with_z(nonterminals)) + nonterminals  # [B, N, s]
        left = parents @ (self.left_mlp(symbols) + symbols).t()  # [B, N, S]: row A
        right = parents @ (self.right_mlp(symbols) + symbols).t()
        identity = torch.full((nt, nt), float("-inf"), device=symbols.device)
        return LowRankGrammar(
            F.log_softmax(self.root_emb @ nonterminals.t(), -1)[0],
            F.log_softmax(self.term_mlp(with_z(preterminals)), -1),
            identity.fill_diagonal_(0.0).to(symbols.dtype),
            F.log_softmax(left, -1),
            F.log_softmax(right, -1),
        )

    def sentence_grammars(
        self, ids: torch.Tensor, lengths: torch.Tensor, sample: bool
    ) -> tuple[LowRankGrammar, torch.Tensor]:
        """``z`` from ``q(z | x)``: one reparameterised draw when ``sample`` (training) or
        under ``eval_z: sample``, its mean otherwise; and the KL ``[B]``."""
        mean, logvar = posterior(self.enc_emb, self.enc_rnn, self.enc_out, ids, lengths)
        z = mean
        if sample or self.config.eval_z == "sample":
            z = mean + (0.5 * logvar).exp() * torch.randn_like(mean)
        return self.grammar_given(z), CompoundPCFG.kl(mean, logvar)

    def prior_grammar(self, generator: torch.Generator) -> LowRankGrammar:
        z = torch.randn(1, self.config.z_dim, generator=generator).to(self.rule_state_emb)
        g = self.grammar_given(z)
        return LowRankGrammar(g.roots, g.emissions[0], g.head, g.left[0], g.right[0])
