"""Combiner: sparse hierarchical attention whose growing connections are a tree (seed paper
004; no public code: this is our implementation, equation by equation).

Per layer ``l`` (post-LayerNorm, BERT style):

1. the multi-head attention ``A_h = softmax(Q_h K_h^T / sqrt(d))``, max-pooled over heads into
   one matrix ``M`` (the paper's appendix); padded keys and queries are 0;
2. the Sparse Attention Gate (Eqs. 3-4): ``tau = sigmoid(linear(maxpool(CNN(M))))``, the CNN a
   stack of 1-D convolutions run over each row of ``M`` as a one-channel signal over the key
   positions, max-pooled over keys and rows (``gate: matrix``; ``row`` keeps a tau per row,
   ``head`` gates each head's ``A_h`` before the max-pool); ``M^ = relu(M - tau)``.  The
   paper's Table 3 variants: a fixed ``tau`` (``threshold: fixed``), the top-k of each row
   (``threshold: topk``), and 0-3 CNN layers (0: a linear map of the max-pooled ``M``);
3. the Hierarchical Attention Block (Eq. 5): ``M~^l = softmax(M^^l + M~^{l-1})`` taken over the
   support only, ``supp(M^^l) | supp(M~^{l-1}) | diagonal``, zero outside, so a connection made
   in a layer is inherited by every layer above.  ``hierarchy: dense`` takes the softmax over
   every key, as a literal reading of Eq. 5 would: then every pair is connected from the first
   layer and no tree can be read from the connections, hence not the default.
   ``hierarchy: adjacent`` is this project's choice, not the paper's (a Tree-Transformer-like
   constraint, ``induce.models.combiner_support``): the support is a partition into
   contiguous blocks, singletons below the first layer; layer ``l`` closes a gap between
   blocks of layer ``l - 1`` where ``M^`` across it is positive (``adjacent_gap: pair``: the
   two adjacent words, ``max(M^[g, g+1], M^[g+1, g]) > 0``; ``blocks``: any pair of the two
   blocks; ``peak``: as ``pair``, at a local maximum of that value among the open gaps),
   closed gaps stay closed, and the support is every pair inside a block.
   ``hierarchy: constituent`` (ours, Tree Transformer's constituent attention, Wang et al.
   2019, in Combiner's frame; ``combiner_support.NeighbourLinks``): a dedicated score per
   gap decides the blocks instead of ``M^``.  Each word splits a unit of preference between
   its two neighbours, the link of a gap is the geometric mean of its two words' preferences
   for each other, and links only grow upward (``a^l = a^{l-1} + (1 - a^{l-1}) link^l``);
   the blocks are the runs of gaps whose link passes ``link_threshold`` (so the merge level
   of a gap is the first layer where it does), Eq. 5 stays inside them, and Eq. 7 averages
   ``H^`` with the constituent prior ``C[i, j]`` (the product of the links between ``i`` and
   ``j``) as the connection weights instead of ``Boolean(M~)``, which is what trains the
   links; ``prior_attention`` multiplies the heads' attention by ``C`` too, as Tree
   Transformer does;
4. Eq. 6 ``H^ = M~ V`` with one ``V`` shared by the heads; Eq. 7 averages ``H^`` over the
   tokens each token is connected to (the row-normalised ``Boolean(M~)``, or ``C`` above);
   then the output projection, residual, LayerNorm and the feed-forward block.

The gate's bias starts at ``gate_bias`` (-4: ``tau`` ~ 0.02), low enough that ``M^`` is not
all zero at the start: where ``M^`` is zero, ``relu`` passes ``tau`` no gradient.  Where every
entry of a row is above ``tau``, subtracting ``tau`` shifts that row's softmax scores uniformly
and leaves ``M~`` unchanged, and the paper's ``Boolean(M~)`` of Eq. 7 has no gradient at all:
read literally (``gate_gradient: none``), ``tau`` learns only through the entries it cuts to
zero (measured: gate gradients ~1e-11 at initialisation for one ``tau`` per matrix, ~1e-5 per
head), and stays where it starts.

Our choice (``gate_gradient: straight_through``, the default): Eq. 7's connection matrix keeps
the hard support's values in the forward pass (read-outs, parses and losses are bit-identical
to ``none``), but its backward pass sees the soft membership ``w = sigmoid((M - tau) / T)``
(``T = gate_temperature``; per head and max-pooled over heads for ``gate: head``, as ``M^``
is; the diagonal and the support inherited from the layer below stay 1, the OR of the forward
pass taken as an elementwise max), so the language-model loss says whether a connection is
worth making.  With ``hierarchy: adjacent`` a gap's soft closure is the soft membership of the
pairs that close it (1 if closed below) and a pair's the minimum over the gaps between them.
The fixed and top-k thresholds have no gate to train and stay hard.
``gate_sparsity`` (ours, 0 in the presets) adds ``gate_sparsity`` times the mean over layers
of the soft number of connections per token to the loss, through the backward pass only (the
logged loss is the language model's); a connection made in layer ``l`` of ``N`` counts in
the ``N - l`` layers that inherit it, so early connections cost more than late ones.

Shapes: ``B`` batch, ``L`` length, ``D`` width, ``H`` heads, ``N`` layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Positive, Size
from induce.data.errors import ConfigError
from induce.decode.scores import MergeScores
from induce.models.combiner_support import (
    GapRule,
    NeighbourLinks,
    adjacent_support,
    chain_minimum,
    constituent_prior,
)
from induce.models.layers import Dropout, Recording, conv_windows
from induce.models.masked_lm import BackboneConfig, EncoderOutput, MaskedLM, check_rate
from induce.models.pretrained import BertWeights, read_bert


@dataclass(frozen=True)
class CombinerConfig(BackboneConfig):
    d_ff: Size = 3072
    position: Literal["absolute", "none"] = "absolute"
    max_length: Size = 512
    gate: Literal["matrix", "row", "head"] = "matrix"  # one tau per sentence, row or head
    threshold: Literal["learned", "fixed", "topk"] = "learned"  # Table 3
    fixed_tau: float = 0.5  # threshold: fixed (the paper tries 0.50 and 0.55)
    top_k: Size = 2  # threshold: topk (2 or 3)
    gate_layers: int = 1  # CNN layers of the gate (0: linear on the max-pooled M)
    gate_channels: Size = 8
    gate_kernel: Size = 3
    gate_bias: float = -4.0  # initial bias of tau's linear map: tau starts ~ 0.02
    hierarchy: Literal["support", "dense", "adjacent", "constituent"] = "support"
    adjacent_gap: GapRule = "pair"  # hierarchy: adjacent: which pairs close a gap (ours)
    # how the learned gate's hard support passes gradients back (see the module docstring):
    # straight_through (ours), none (the paper's Boolean as written: tau gets almost none)
    gate_gradient: Literal["straight_through", "none"] = "straight_through"
    gate_temperature: Positive = 0.05  # T of the soft membership sigmoid((M - tau) / T)
    # weight of an auxiliary cost on the soft support (ours; 0: none; straight_through only)
    gate_sparsity: float = 0.0
    # hierarchy: constituent: multiply the heads' attention by the constituent prior too
    prior_attention: bool = False
    link_threshold: float = 0.5  # hierarchy: constituent: a gap closes once its link passes it

    def check(self) -> None:
        super().check()
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"model.d_model ({self.d_model}) must be a multiple of model.n_heads "
                f"({self.n_heads})"
            )
        if not 0 <= self.gate_layers <= 8:
            raise ConfigError(f"model.gate_layers must be in [0, 8], got {self.gate_layers}")
        check_rate("model.fixed_tau", self.fixed_tau)
        check_rate("model.link_threshold", self.link_threshold)
        if not self.gate_sparsity >= 0:
            raise ConfigError(f"model.gate_sparsity must be >= 0, got {self.gate_sparsity}")

    def decoder_problem(self, decoder: str) -> str | None:
        """``levels`` reads the neighbour links only ``hierarchy: constituent`` has."""
        if decoder == "levels" and self.hierarchy != "constituent":
            return (
                f"levels needs model.hierarchy: constituent, not {self.hierarchy} (read its "
                "trees by merge or divergence)"
            )
        return None


class SparseGate(nn.Module):
    """Eqs. 3-4: ``tau`` from an attention matrix.  ``m [B, R, L, L]`` (R matrices per
    sentence: 1, or H for the per-head gate), ``row_keep [B, L]`` -> ``tau [B, R, 1, 1]``, or
    ``[B, R, L, 1]`` per row."""

    def __init__(self, c: CombinerConfig) -> None:
        super().__init__()
        self.per_row = c.gate == "row"
        layers: list[nn.Module] = []
        channels = 1
        for _ in range(c.gate_layers):
            layers += [nn.Conv1d(channels, c.gate_channels, c.gate_kernel, padding="same")]
            layers += [nn.ReLU()]
            channels = c.gate_channels
        self.cnn = nn.Sequential(*layers)
        self.linear = nn.Linear(channels, 1)
        nn.init.constant_(self.linear.bias, c.gate_bias)

    def forward(self, m: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, r, n, _ = m.shape
        signal = self._cnn(m.reshape(b * r * n, n)).view(b, r, n, -1, n)  # [B, R, L, C, L]
        signal = signal.masked_fill(~keep[:, None, None, None, :], float("-inf"))
        pooled = signal.amax(-1)  # over keys: [B, R, L, C]
        if not self.per_row:
            rows = keep[:, None, :, None]
            pooled = pooled.masked_fill(~rows, float("-inf")).amax(2, keepdim=True)
        tau = torch.sigmoid(self.linear(pooled.clamp_min(-1e4)))  # [B, R, L or 1, 1]
        return tau

    def _cnn(self, rows: torch.Tensor) -> torch.Tensor:
        """The CNN over each row as a one-channel signal: ``rows [N, L] -> [N, C, L]``;
        under ``torch.compile`` as products over windows (one compilation for every
        length, :func:`~induce.models.layers.conv_windows`)."""
        if not torch.compiler.is_compiling():
            return self.cnn(rows[:, None, :])
        x = rows[..., None]  # [N, L, 1]: channels last
        for layer in self.cnn:  # Conv1d and ReLU: elementwise, indifferent to the layout
            x = conv_windows(x, layer) if isinstance(layer, nn.Conv1d) else layer(x)
        return x.transpose(1, 2)


class _AddGradient(torch.autograd.Function):
    """Identity whose backward adds ``extra`` to the incoming gradient: the gradient of
    ``(x * extra).sum()`` added to the loss without changing the reported loss."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        ctx.extra = extra
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad + ctx.extra, None


class CombinerLayer(Recording):
    """One layer: Eqs. 3-7, then the output projection, residual, LayerNorm and
    feed-forward (post-LN).  ``forward(x [B, L, D], keep [B, L], prev [B, L, L] or None,
    links [B, L - 1] or None)`` returns ``(x', M~ [B, L, L], support [B, L, L], links)``:
    ``prev`` and ``links`` are the layer below's ``M~`` and links (``hierarchy:
    constituent``; ``None`` otherwise)."""

    def __init__(self, c: CombinerConfig, index: int = 0) -> None:
        super().__init__()
        self.c = c
        # a connection made here stays in the support of this and every layer above
        self.lifetime = max(1, c.n_layers - index) / c.n_layers
        self.qk = nn.Linear(c.d_model, 2 * c.d_model)
        self.v = nn.Linear(c.d_model, c.d_model)  # Eq. 6: one V for all heads
        self.out = nn.Linear(c.d_model, c.d_model)
        self.gate = SparseGate(c) if c.threshold == "learned" else None
        self.links = NeighbourLinks(c.d_model) if c.hierarchy == "constituent" else None
        self.norm_attn = nn.LayerNorm(c.d_model)
        self.ff = nn.Sequential(
            nn.Linear(c.d_model, c.d_ff), nn.GELU(), nn.Linear(c.d_ff, c.d_model)
        )
        self.norm_ff = nn.LayerNorm(c.d_model)
        self.drop = Dropout(c.dropout)
        self.drop_weights = Dropout(c.attn_dropout)

    def reset_xavier(self) -> None:
        """Query/key (each its own matrix), value and output projections Xavier-uniform."""
        for part in self.qk.weight.data.chunk(2, dim=0):
            nn.init.xavier_uniform_(part)
        for linear in (self.v, self.out):
            nn.init.xavier_uniform_(linear.weight)
        for linear in (self.qk, self.v, self.out):
            nn.init.zeros_(linear.bias)

    def forward(
        self,
        x: torch.Tensor,
        keep: torch.Tensor,
        prev: torch.Tensor | None,
        links: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        c = self.c
        b, n, d = x.shape
        q, k = self.qk(x).view(b, n, 2, c.n_heads, d // c.n_heads).permute(2, 0, 3, 1, 4)
        logits = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // c.n_heads)
        pair = keep[:, :, None] & keep[:, None, :]  # [B, L, L]
        attn = torch.softmax(logits.masked_fill(~keep[:, None, None, :], float("-inf")), -1)
        attn = attn.masked_fill(~pair[:, None], 0.0)  # [B, H, L, L]
        eye = torch.eye(n, dtype=torch.bool, device=x.device)[None]
        prior = None
        if self.links is not None:  # constituent: blocks of the gaps whose links pass the threshold
            links = self.links(x, keep, links)
            closed = (links > c.link_threshold).to(links.dtype)
            constituent_support = ((chain_minimum(closed) > 0) & pair) | eye
            prior = constituent_prior(links, pair)
            if c.prior_attention:  # Tree Transformer: the heads see through the prior
                attn = attn * prior[:, None].to(attn.dtype)
        gated, soft = self._gated(attn, keep)  # M^ [B, L, L], its soft support or None
        if prior is not None:  # the links decide the blocks: the gate's soft support is unused
            support, soft = constituent_support, None
        elif c.hierarchy == "adjacent":  # contiguous blocks (combiner_support)
            below = None if prev is None else prev.diagonal(1, -2, -1) > 0
            support, soft = adjacent_support(gated, soft, below, keep, c.adjacent_gap)
        else:
            support = ((gated > 0) | eye) & pair
            if prev is not None:
                support = support | (prev > 0)
            if soft is not None:  # the OR of the hard support, as elementwise max
                soft = torch.maximum(soft, eye.to(soft.dtype)) * pair
                if prev is not None:
                    soft = torch.maximum(soft, (prev > 0).to(soft.dtype))
        if soft is not None and c.gate_sparsity > 0 and self.training and torch.is_grad_enabled():
            per_token = c.gate_sparsity * self.lifetime / keep.sum().clamp_min(1)
            soft = _AddGradient.apply(soft, per_token * pair.to(soft.dtype))
        scores = gated + (prev if prev is not None else 0.0)
        # the diagonal keeps a padded row's softmax finite (it is zeroed below)
        allowed = (pair if c.hierarchy == "dense" else support) | eye
        tilde = torch.softmax(scores.masked_fill(~allowed, float("-inf")), -1)  # Eq. 5
        tilde = tilde.masked_fill(~pair, 0.0)
        if self.record:
            self.recorded = tilde[:, None].detach()
        h_hat = torch.matmul(self.drop_weights(tilde), self.v(x))  # Eq. 6
        connected = allowed.to(h_hat.dtype) if prior is None else prior.to(h_hat.dtype)
        if soft is not None and c.hierarchy != "dense":
            # straight through: the hard support's values (+ exact zeros), the soft gradient
            connected = connected + (soft - soft.detach()).to(connected.dtype)
        h = torch.matmul(connected / connected.sum(-1, keepdim=True).clamp_min(1.0), h_hat)
        x = self.norm_attn(x + self.drop(self.out(h)))  # Eq. 7, projection, residual
        x = self.norm_ff(x + self.drop(self.ff(x)))
        return x, tilde, allowed & pair, links

    def _gated(
        self, attn: torch.Tensor, keep: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``M^ [B, L, L]`` from the heads' attention ``[B, H, L, L]`` (Eqs. 3-4), and for
        the learned gate with ``gate_gradient: straight_through`` the soft membership
        ``sigmoid((M - tau) / T) [B, L, L]`` (max over heads for the per-head gate, as
        ``M^`` is), else ``None``."""
        c = self.c
        if c.threshold == "topk":
            m = attn.amax(1)
            k = min(c.top_k, m.shape[-1])
            cut = m.topk(k, dim=-1).values[..., -1:]
            return torch.where(m >= cut, m, torch.zeros_like(m)), None
        if c.threshold == "fixed":
            return F.relu(attn.amax(1) - c.fixed_tau), None
        gate = cast(SparseGate, self.gate)
        if c.gate == "head":
            margin = attn - gate(attn, keep)  # [B, H, L, L]
        else:
            m = attn.amax(1)
            margin = (m - gate(m[:, None], keep)[:, 0])[:, None]  # [B, 1, L, L]
        gated = F.relu(margin).amax(1)
        if c.gate_gradient == "none":
            return gated, None
        return gated, torch.sigmoid(margin / c.gate_temperature).amax(1)


class Combiner(MaskedLM):
    """Word embeddings (+ learned positions) and their LayerNorm, ``n_layers`` Combiner
    layers, the tied output layer.  ``structure`` returns each layer's connections and
    attention, from which ``decode`` reads the tree."""

    config_class = CombinerConfig
    scores_class = MergeScores
    starts_from_bert = True
    config: CombinerConfig

    def __init__(self, config: CombinerConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        self.embed_norm = nn.LayerNorm(config.d_model)
        self.layers = nn.ModuleList(CombinerLayer(config, i) for i in range(config.n_layers))
        self._add_output(vocab_size)
        self._init_tables(self.embed, self.positions)
        self._init_projections()

    def encode(
        self, ids: torch.Tensor, keep: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """``hidden [B, L, D]``, and per layer ``M~ [B, L, L]`` and the support."""
        h, tildes, supports, _ = self._layers(ids, keep)
        return h, tildes, supports

    def _layers(
        self, ids: torch.Tensor, keep: torch.Tensor
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
        """``encode``'s, and per layer the neighbour links ``[B, L - 1]`` (``hierarchy:
        constituent``; none otherwise)."""
        h = self.drop(self.embed_norm(self.embed_tokens(ids)))
        prev: torch.Tensor | None = None
        links: torch.Tensor | None = None
        tildes, supports, all_links = [], [], []
        for layer in self.layers:
            h, prev, support, links = cast(CombinerLayer, layer)(h, keep, prev, links)
            tildes.append(prev)
            supports.append(support)
            if links is not None:
                all_links.append(links)
        return h, tildes, supports, all_links

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        h, _, _ = self.encode(ids, keep)
        return EncoderOutput(self.finish(h))

    def structure(self, ids: torch.Tensor, keep: torch.Tensor) -> MergeScores:
        _, tildes, supports, links = self._layers(ids, keep)
        return MergeScores(
            torch.stack(supports, 1),
            torch.stack(tildes, 1).float(),
            torch.stack(links, 1).float() if links else None,
        )

    @torch.no_grad()
    def load_pretrained(self, folder: str) -> None:
        """Start from a local BERT checkpoint (``train.init_from``): embeddings (segment 0's
        embedding folded into the positions), every layer's query/key/value/output, LayerNorms
        and feed-forward, and the MLM head's output bias and LayerNorm.  BERT's per-head values
        are Eq. 6's shared ``V`` as they are; the gates start fresh, and so does the MLM
        head's dense transform, which this model does not have."""
        bert = BertWeights(read_bert(folder), folder)
        bert.into(self.embed.weight, "embeddings.word_embeddings.weight")
        if self.positions is not None:
            segment = bert.take("embeddings.token_type_embeddings.weight")[0]
            bert.into(self.positions.weight, "embeddings.position_embeddings.weight", segment)
        bert.norm(self.embed_norm, "embeddings.LayerNorm")
        for i, module in enumerate(self.layers):
            layer = cast(CombinerLayer, module)
            p = f"encoder.layer.{i}."
            for part in ("weight", "bias"):
                q = bert.take(f"{p}attention.self.query.{part}")
                k = bert.take(f"{p}attention.self.key.{part}")
                bert.copy(getattr(layer.qk, part), torch.cat([q, k]), f"{p}attention.self.*")
            bert.linear(layer.v, f"{p}attention.self.value")
            bert.linear(layer.out, f"{p}attention.output.dense")
            bert.norm(layer.norm_attn, f"{p}attention.output.LayerNorm")
            bert.linear(cast(nn.Linear, layer.ff[0]), f"{p}intermediate.dense")
            bert.linear(cast(nn.Linear, layer.ff[2]), f"{p}output.dense")
            bert.norm(layer.norm_ff, f"{p}output.LayerNorm")
        if "cls.predictions.bias" in bert.tensors:
            bert.into(self.out_bias, "cls.predictions.bias")
        if bert.has_norm("cls.predictions.transform.LayerNorm"):
            bert.norm(self.norm, "cls.predictions.transform.LayerNorm")

    def record_attention(self, on: bool = True) -> None:
        for layer in self.layers:
            cast(CombinerLayer, layer).record_weights(on)

    def attention(self) -> list[torch.Tensor]:
        """``M~`` of each layer as one head ``[B, 1, L, L]``."""
        return [cast(CombinerLayer, layer).weights() for layer in self.layers]
