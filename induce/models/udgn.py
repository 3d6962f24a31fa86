"""UDGN (Shen et al., 2022): a head-selective BiLSTM parser whose dependency distribution
drives a Dependency Graph Network of gated, competing heads.

Equations are numbered as in the paper.  Details from the reference code: the parser has its
own embedding; ``p_ij`` is a softmax over ``j`` that includes ``j = i`` (choosing oneself is
choosing the root) and the diagonal is then dropped; the competitive controller multiplies
``m_ij`` by a softmax over heads (no normalisation over ``j``); a layer is a residual update
only (no feed-forward block, no per-layer LayerNorm); a final LayerNorm and a tied output
layer score the masked positions.  The paper's latent tag embeddings, removed from the final
reference code, are ``n_tags`` (default 0: off): as in the earlier reference code, each word
type has a learned distribution over ``n_tags`` tags plus a "no tag" slot (uniform at first),
and the mixture of tag vectors is added to the parser's word embedding (the paper's 6 outputs
are ``n_tags: 5`` plus that slot).

Ablation switches (paper Tables 4/8): ``gates`` (Eqs. 7-8), ``competition`` (Eqs. 9-11: off
gives each head an independent sigmoid), ``relative_bias`` (Eqs. 12-13), ``position:
absolute`` (a positional encoding instead), ``edge_marginals: kirchhoff`` (edge marginals of
the distribution over spanning trees, by the matrix-tree theorem, instead of Eq. 5's softmax).

Shapes: ``B`` batch, ``L`` length, ``D`` model width, ``H`` heads, ``d`` head size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, cast

import torch
from torch import nn

from induce.data.config import Rate, Size
from induce.decode.scores import ArcScores
from induce.models.bilstm import Precision, lstm_dtype, packed_bilstm, padded_bilstm
from induce.models.layers import Dropout, Recording, autocast_active, full_precision
from induce.models.masked_lm import BackboneConfig, EncoderOutput, MaskedLM


@dataclass(frozen=True)
class UDGNConfig(BackboneConfig):
    dropout: Rate = 0.2
    position: Literal["none", "absolute"] = "none"  # absolute: the positional ablation
    head_size: Size = 128
    n_parser_layers: Size = 3
    parser_dropout: Rate = 0.2
    gates: bool = True
    competition: bool = True
    relative_bias: bool = True
    edge_marginals: Literal["softmax", "kirchhoff"] = "softmax"  # Eq. 5 | matrix-tree
    n_tags: int = 0  # latent tag embeddings of the parser (0: off)
    # how the parser BiLSTM runs over padded sentences (same values to float rounding):
    # packed (pack_padded_sequence, as the reference; its lengths are read on the host, which
    # makes a GPU wait once per step), dense (one call per direction and layer, sentences
    # reversed within their length: oneDNN's fused kernel on CPU, cuDNN with no host read on
    # CUDA), auto (dense under bf16 autocast or on CUDA; packed for fp32 on CPU, whose
    # results it keeps bit for bit)
    lstm_kernel: Literal["auto", "packed", "dense"] = "auto"
    # the dtype the parser BiLSTM runs in under autocast (induce.models.bilstm.lstm_dtype):
    # auto (on CUDA under bf16: bf16 where cuDNN runs bf16 RNNs, else fp32, never the fp16
    # that PyTorch's autocast picks for cuDNN's RNNs; on a CPU as autocast runs it, bf16),
    # float32, or autocast (PyTorch's choice: fp16 on CUDA, what GPU runs did before)
    lstm_precision: Precision = "auto"


class DGNLayer(Recording):
    """One Dependency Graph Network layer (Eqs. 7-15): ``x + drop(out(drop(o)))`` with
    ``o_i = gate_i * sum_j a_ijh tanh(v_j)``."""

    def __init__(self, c: UDGNConfig) -> None:
        super().__init__()
        self.c = c
        parts = 4 if c.gates else 3
        self.proj = nn.Linear(c.d_model, parts * c.n_heads * c.head_size)
        self.out = nn.Linear(c.n_heads * c.head_size, c.d_model)
        self.direction_bias = (
            nn.Parameter(torch.empty(2, c.n_heads).uniform_(-0.1, 0.1)) if c.relative_bias else None
        )
        self.drop = Dropout(c.dropout)
        self.drop_weights = Dropout(c.attn_dropout)

    def reset_xavier(self) -> None:
        """The reference initialisation: the fused projection (one matrix in the reference
        too) and the output projection Xavier-uniform, biases 0."""
        for linear in (self.proj, self.out):
            nn.init.xavier_uniform_(linear.weight)
            nn.init.zeros_(linear.bias)

    def forward(self, x: torch.Tensor, keep: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """``x [B, L, D]``, ``keep [B, L]``, ``m [B, L, L]`` (Eq. 6)."""
        b, n, _ = x.shape
        c = self.c
        parts = self.proj(x).view(b, n, -1, c.n_heads, c.head_size).unbind(2)
        q, k, v = parts[:3]
        scores = torch.einsum("bihd,bjhd->bijh", q, k)  # [B, L, L, H]
        if self.direction_bias is not None:
            # Eqs. 12-13: one bias per head for "j before i" and one for "j after i"
            ones = torch.ones(n, n, device=x.device, dtype=scores.dtype)
            before, after = ones.tril(-1), ones.triu(1)
            scores = (
                scores
                + before[None, :, :, None] * self.direction_bias[0]
                + after[None, :, :, None] * self.direction_bias[1]
            )
        scores = scores / math.sqrt(c.head_size)
        if c.competition:
            # Eqs. 9-11: heads compete for each edge; the edge's probability scales them
            share = torch.softmax(scores.float(), dim=-1)  # statistics in fp32 (bf16 runs)
            weights = share * (m + 1e-6)[..., None]
        else:
            share = torch.sigmoid(scores)
            weights = share * m[..., None]
        if self.record:  # the competition probabilities (Eq. 10) as [B, H, L, L]
            self.recorded = share.permute(0, 3, 1, 2).detach()
        weights = weights.masked_fill(~keep[:, None, :, None], 0.0)
        weights = self.drop_weights(weights)
        o = torch.einsum("bijh,bjhd->bihd", weights, torch.tanh(v))  # Eq. 14
        if c.gates:
            o = o * torch.sigmoid(parts[3])  # Eqs. 7-8
        return x + self.drop(self.out(self.drop(o.reshape(b, n, -1))))  # Eq. 15


class UDGN(MaskedLM):
    config_class = UDGNConfig
    scores_class = ArcScores
    config: UDGNConfig
    parser_region = "structure"

    def __init__(self, config: UDGNConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c = config
        self.parser_embed = nn.Embedding(vocab_size, c.d_model, padding_idx=pad_id)
        self.parser_drop = Dropout(c.parser_dropout)
        self.tag_logits: nn.Embedding | None = None
        self.tag_embed: nn.Linear | None = None
        if c.n_tags:
            self.tag_logits = nn.Embedding(vocab_size, c.n_tags + 1)
            nn.init.zeros_(self.tag_logits.weight)
            self.tag_embed = nn.Linear(c.n_tags, c.d_model, bias=False)
            nn.init.uniform_(self.tag_embed.weight, -c.init_range, c.init_range)
        self.lstm = nn.LSTM(
            c.d_model,
            c.d_model,
            num_layers=c.n_parser_layers,
            dropout=c.parser_dropout if c.n_parser_layers > 1 else 0.0,
            bidirectional=True,
            batch_first=True,
        )
        self.parser_ff = nn.Linear(2 * c.d_model, 2 * c.d_model)
        self.layers = nn.ModuleList(DGNLayer(c) for _ in range(c.n_layers))
        self._add_output(vocab_size)
        self._init_tables(self.embed, self.parser_embed, self.positions)
        nn.init.xavier_uniform_(self.parser_ff.weight)
        nn.init.zeros_(self.parser_ff.bias)
        self._init_projections()

    def parse(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Eqs. 1-5: ``p [B, L, L]``, row i a distribution over the head j of word i, with
        ``p_ii`` the probability that i is the root."""
        h = self.parser_embed(ids)
        if self.tag_logits is not None and self.tag_embed is not None:  # slot 0: "no tag"
            tags = torch.softmax(self.tag_logits(ids), dim=-1)
            h = h + self.tag_embed(tags[..., 1:])
        h = self.parser_drop(h)
        dtype = lstm_dtype(self.config.lstm_precision, ids.device)
        if self._dense_lstm(ids.device):  # faster, other rounding
            h = padded_bilstm(self.lstm, h, keep, self.parser_drop, dtype)  # Eq. 1
        else:  # Eq. 1, as fp32 CPU runs always computed it
            h = packed_bilstm(self.lstm, h, keep, dtype)
        parent, child = self.parser_ff(self.parser_drop(h)).float().chunk(2, -1)  # Eqs. 2-3
        with full_precision(ids.device):  # arc scores in fp32 (bf16 runs)
            logits = torch.matmul(child, parent.transpose(1, 2)) / math.sqrt(parent.shape[-1])
        logits = logits.masked_fill(~keep[:, None, :], float("-inf"))  # Eq. 4
        if self.config.edge_marginals == "kirchhoff":
            return kirchhoff_marginals(logits, keep)
        return torch.softmax(logits, dim=-1).masked_fill(~keep[..., None], 0.0)  # Eq. 5

    def _dense_lstm(self, device: torch.device) -> bool:
        kernel = self.config.lstm_kernel
        if kernel == "auto":
            return device.type == "cuda" or autocast_active(device)
        return kernel == "dense"

    def structure(self, ids: torch.Tensor, keep: torch.Tensor) -> ArcScores:
        """The parser's edge distribution only (no DGN layers): ``parents`` without the
        diagonal, whose entries are the ``roots``."""
        p = self.parse(ids, keep)
        eye = torch.eye(ids.shape[1], dtype=torch.bool, device=ids.device)
        return ArcScores(p.masked_fill(eye, 0.0), torch.diagonal(p, dim1=1, dim2=2))

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        scores = self.structure(ids, keep)
        parents = scores.parents
        m = parents + parents.transpose(1, 2) - parents * parents.transpose(1, 2)  # Eq. 6
        h = self.drop(self.embed_tokens(ids))
        m = m.to(h.dtype)
        for layer in self.layers:
            h = layer(h, keep, m)
        return EncoderOutput(self.finish(h), scores)

    def record_attention(self, on: bool = True) -> None:
        for layer in self.layers:
            cast(DGNLayer, layer).record_weights(on)

    def attention(self) -> list[torch.Tensor]:
        """Per layer, the heads' competition probabilities ``[B, H, L, L]`` (Eq. 10; the
        edge i -> j for query i and key j, before the edge probability scales them)."""
        return [cast(DGNLayer, layer).weights() for layer in self.layers]


def kirchhoff_marginals(logits: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Arc marginals of the distribution over single-root spanning trees whose weights are
    products of ``exp(logits[i, j])`` (word i's head j; ``j = i``: the root), by the
    matrix-tree theorem: ``d log Z / d logits`` with ``Z = det`` of the root-replaced
    Laplacian (Koo et al., 2007).  ``[B, L, L]`` in and out, float64 inside.  Under
    ``torch.inference_mode`` (parsing) the gradient is taken outside it, on copies."""
    if torch.is_inference_mode_enabled():
        with torch.inference_mode(False):
            return kirchhoff_marginals(logits.clone(), keep.clone())
    with torch.enable_grad():
        x = logits.double()
        if not x.requires_grad:
            x = x.detach().requires_grad_(True)
        b, n, _ = x.shape
        shift = x.masked_fill(~torch.isfinite(x), -1e300).amax((1, 2), keepdim=True).detach()
        w = torch.exp(x - shift).masked_fill(~(keep[:, :, None] & keep[:, None, :]), 0.0)
        eye = torch.eye(n, dtype=torch.bool, device=x.device)
        root = torch.diagonal(w, dim1=1, dim2=2)  # [B, L]
        arcs = w.masked_fill(eye, 0.0).transpose(1, 2)  # arcs[h, d]
        lap = torch.diag_embed(arcs.sum(1)) - arcs
        lap = lap + torch.diag_embed((~keep).double())  # padding: identity
        lap = torch.cat([root[:, None, :], lap[:, 1:, :]], 1)  # first row: roots
        log_z = torch.linalg.slogdet(lap).logabsdet
        grads = torch.autograd.grad(log_z.sum(), x, create_graph=logits.requires_grad)[0]
    return grads.to(logits.dtype).masked_fill(~keep[..., None], 0.0)
