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
``_initialize`` does, so its state dict loads by name.  The compound SC-PCFG is not built.
Decoders as the TN-PCFG's: MBR (the default, the repository's) and, for a grammar small
enough to expand its rules, Viterbi.

Shapes: ``N``/``T`` nonterminals and preterminals, ``S = N + T``, ``V`` vocabulary,
``s`` the embedding width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Size
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
