"""StructFormer (Shen et al., 2021): a parser of syntactic distances and heights whose
differentiable dependency distribution gates the attention of a pre-LN Transformer.

Equations are numbered as in the paper; details it leaves out follow the reference code
(3 convolutions of width 9 with non-affine LayerNorm and tanh; a width-2 convolution for
distances; Linear -> LayerNorm -> tanh -> Linear(1) heads; parent and dependent relations
mixed per head by a softmax).  Two departures, both deliberate:

* ``calibration: sentence`` (the default) calibrates distances against heights sentence by
  sentence; both reference repositories subtract one margin for the whole batch (``batch``,
  what the paper presets set), so that in training a sentence's distances depend on its
  batch-mates.  Parsing calibrates each sentence alone under both settings, as the
  references' test loops do (one sentence per forward);
* the parent distribution (Eqs. 6-12) is computed exactly in O(B L^3) time and O(B L^2)
  memory (see :func:`parent_distribution`) instead of the reference's O(B L^4) / O(B L^3)
  einsum over all spans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.config import Rate, Size
from induce.data.errors import ConfigError
from induce.decode.scores import DistanceScores
from induce.models.layers import Dropout, conv_windows, full_precision
from induce.models.masked_lm import EncoderOutput
from induce.models.transformer import TransformerConfig, TransformerMLM

_BIG = 1e9  # "no boundary" distance / "no word" height, as the reference masks them
Relation = Literal["parent", "dependent"]
RELATIONS: tuple[Relation, ...] = get_args(Relation)


@dataclass(frozen=True)
class StructFormerConfig(TransformerConfig):
    n_parser_layers: int = 3
    conv_size: Size = 9
    relations: tuple[Relation, ...] = RELATIONS
    relation_weight: Literal["softmax", "sigmoid"] = "softmax"  # over the relations of a head
    # dropout on the parser's embeddings and after each convolution layer: 0 in the
    # StructFormer repository, the model dropout in the UDGN repository's variant
    parser_dropout: Rate = 0.0
    # the distances' margin in the masked-LM forward: each sentence's own (ours), or the
    # largest over the batch (both references' parse(): margin.max()); parsing is per sentence
    calibration: Literal["sentence", "batch"] = "sentence"

    def check(self) -> None:
        super().check()
        if not self.relations:
            raise ConfigError(
                f"model.relations must be a non-empty subset of {list(RELATIONS)}, got []"
            )


class _Conv(nn.Module):
    """Convolution over positions: ``[B, L, D] -> [B, L, D]``.  An odd width is centred; an
    even width ``2k`` covers words ``i - k + 1 .. i + k`` (width 2: words i and i+1)."""

    def __init__(self, d: int, width: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(d, d, width, padding=width // 2)
        self.shift = width % 2 == 0

    def reset_xavier(self) -> None:
        """The reference's convolutions are Xavier-uniform with zero bias too."""
        nn.init.xavier_uniform_(self.conv.weight)
        if self.conv.bias is not None:
            nn.init.zeros_(self.conv.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():  # one compilation for every length
            y = conv_windows(x, self.conv)
        else:
            y = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return y[:, 1:] if self.shift else y


def _head(d: int, first: nn.Module) -> nn.Sequential:
    return nn.Sequential(
        first, nn.LayerNorm(d, elementwise_affine=False), nn.Tanh(), nn.Linear(d, 1)
    )


class StructFormer(TransformerMLM):
    config_class = StructFormerConfig
    scores_class = DistanceScores
    config: StructFormerConfig
    parser_region = "structure"

    def __init__(self, config: StructFormerConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        d = config.d_model
        self.parser = nn.ModuleList(
            nn.Sequential(
                _Conv(d, config.conv_size), nn.LayerNorm(d, elementwise_affine=False), nn.Tanh()
            )
            for _ in range(config.n_parser_layers)
        )
        self.distance_head = _head(d, _Conv(d, 2))
        self.height_head = _head(d, nn.Linear(d, d))
        self.relation_logits = nn.Parameter(
            torch.randn(config.n_layers, config.n_heads, len(config.relations)) * 0.1
        )
        self.log_temperature = nn.Parameter(torch.zeros(2))  # 1/mu_1, 1/mu_2 = exp(.)
        self.parser_drop = Dropout(config.parser_dropout)
        self._init_projections()  # again: the parser's convolutions came after the layers

    # -- the parser ------------------------------------------------------------------------
    def parse(
        self, ids: torch.Tensor, keep: torch.Tensor, per_batch: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Eqs. 1-3: ``s = conv(embed(ids))`` (Eq. 1), distances ``delta_i = f(s_i, s_i+1)``
        (Eq. 2), heights ``tau_i = g(s_i)`` (Eq. 3).  Returns ``distances [B, L]`` (entry i
        between words i and i+1; ``1e9`` after the last word and at padding) and ``heights
        [B, L]`` (``-1e9`` at padding), distances calibrated per sentence (``per_batch``: by
        the batch's largest margin)."""
        h = self.parser_drop(self.embed(ids))
        for layer in self.parser:
            h = self.parser_drop(layer(h.masked_fill(~keep[..., None], 0.0)))
        with full_precision(h.device):  # the heads in fp32: trees come from their order
            h = h.float()
            heights = self.height_head(h).squeeze(-1).masked_fill(~keep, -_BIG)
            has_next = F.pad(keep[:, 1:], (0, 1), value=False)
            distances = self.distance_head(h).squeeze(-1).masked_fill(~has_next, _BIG)
        return calibrate(distances, heights, keep, has_next, per_batch), heights

    def relation_weights(self) -> torch.Tensor:
        """Eq. 14's mixture weights ``[layers, heads, relations]``."""
        if self.config.relation_weight == "sigmoid":
            return torch.sigmoid(self.relation_logits)
        return torch.softmax(self.relation_logits, dim=-1)

    def structure(
        self, ids: torch.Tensor, keep: torch.Tensor, per_batch: bool = False
    ) -> DistanceScores:
        """The parser's scores only (no Transformer layers): all that parsing needs, at a
        fraction of a full forward pass.  Each sentence is calibrated alone unless
        ``per_batch`` (the masked-LM forward under ``calibration: batch``)."""
        distances, heights = self.parse(ids, keep, per_batch)
        temperature = self.log_temperature.exp()
        parents = parent_distribution(distances, heights, temperature[0], temperature[1])
        return DistanceScores(distances, heights, parents)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        scores = self.structure(ids, keep, self.config.calibration == "batch")
        parents = scores.parents
        relations = {"parent": parents, "dependent": parents.transpose(1, 2)}  # Eq. 13
        stack = torch.stack([relations[r] for r in self.config.relations], 1)  # [B, R, L, L]
        weights = self.relation_weights()
        h = self.embed_drop(self.embed_tokens(ids))
        for index, layer in enumerate(self.layers):
            # Eq. 14: each head's gate mixes the relations; one layer's gates at a time keep
            # the memory at O(B H L^2).
            gate = torch.einsum("hr,brij->bhij", weights[index].to(stack.dtype), stack)
            h = layer(h, keep, gate)
        return EncoderOutput(self.finish(h), scores)


def calibrate(
    distances: torch.Tensor,
    heights: torch.Tensor,
    keep: torch.Tensor,
    has_next: torch.Tensor,
    per_batch: bool = False,
) -> torch.Tensor:
    """Shift each sentence's distances so that no proper span of it has both of its boundary
    distances above every height inside it (the reference's calibration, per sentence;
    ``per_batch``: every sentence shifted by the largest margin of the batch, as the
    references' ``parse`` does).

    For span ``[i, j]`` with maximum height ``m``, the margin is ``min(relu(delta_{i-1} - m),
    relu(delta_j - m))`` (``delta_{-1}`` = +inf); the whole sentence and padding are excluded;
    the sentence's largest margin is subtracted from its distances.  ``[B, L]`` in and out;
    O(B L^2) memory.
    """
    b, n = heights.shape
    upper = torch.ones(n, n, dtype=torch.bool, device=heights.device).triu()
    span_max = torch.cummax(
        heights[:, None, :].expand(b, n, n).masked_fill(~upper, -_BIG), dim=-1
    ).values  # [B, i, j] max over i..j
    left = F.pad(distances[:, :-1], (1, 0), value=_BIG)  # delta_{i-1}
    margin = torch.minimum(
        torch.relu(left[:, :, None] - span_max), torch.relu(distances[:, None, :] - span_max)
    )
    # span [0, j] is proper only if word j+1 exists; [i>0, j] if word j exists
    valid = torch.cat([has_next[:, None, :], keep[:, None, :].expand(b, n - 1, n)], 1)
    margin = margin.masked_fill(~(valid & upper), 0.0)
    largest = margin.flatten(1).max(1).values[:, None]  # [B, 1]; >= 0 (rows padding a batch: 0)
    return distances - (largest.max() if per_batch else largest)


def boundary_probabilities(
    distances: torch.Tensor, heights: torch.Tensor, inv_mu1: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Eqs. 6-9: for word i, the probabilities ``left [B, i, l]`` and ``right [B, i, r]``
    that the smallest legal constituent containing it starts at l / ends at r.

    ``p(delta_k < tau_i) = sigmoid((tau_i - delta_k) / mu_1)`` (Eq. 6); the constituent
    extends left to l when every boundary between l and i is below the word's height, and
    right likewise (Eqs. 7-8; a soft "all" by a running minimum, as the reference); the
    exact ends are differences of those running minima (Eq. 9).
    """
    b, n = heights.shape
    inside = torch.sigmoid((heights[:, :, None] - distances[:, None, :]) * inv_mu1)
    ones = torch.ones_like(inside)
    lower = torch.ones(n, n, dtype=torch.bool, device=heights.device).tril(-1)
    # left: running minimum from the right over the boundaries k in [l, i-1]
    reach_left = torch.where(lower, inside, ones).flip(-1).cummin(-1).values.flip(-1)
    left = (reach_left - F.pad(reach_left[:, :, :-1], (1, 0), value=0.0)).tril()
    # right: exclusive running minimum over the boundaries k in [i, r-1]
    upper = ~lower
    reach_right = F.pad(torch.where(upper, inside, ones)[:, :, :-1], (1, 0), value=1.0)
    reach_right = reach_right.cummin(-1).values
    right = (reach_right - F.pad(reach_right[:, :, 1:], (0, 1), value=0.0)).triu()
    return left, right


def parent_distribution(
    distances: torch.Tensor, heights: torch.Tensor, inv_mu1: torch.Tensor, inv_mu2: torch.Tensor
) -> torch.Tensor:
    """Eqs. 6-12: ``p_D(j | i)``, the probability that word j is the parent of word i,
    ``[B, L, L]`` (diagonal and padding 0).

    ``p_D(j|i) = sum_{l<=i<=r} p(l|i) p(r|i) p_H(j|[l, r])`` with the span's head
    ``p_H(j|[l,r]) = exp(tau_j/mu_2) / Z(l, r)`` over ``j`` in ``[l, r]`` (Eqs. 10-12).

    Cost.  Summing over all spans, as the reference does, takes O(B L^4) time and O(B L^3)
    memory.  With ``e_j = exp(tau_j/mu_2)`` and ``W = 1/Z`` the sum factorises: for
    ``j < i`` only ``l <= j`` and ``r >= i`` contribute, so ``p_D(j|i) = e_j *
    cumsum_l(left * (right @ W^T))[i, j]``; for ``j > i``, ``p_D(j|i) = e_j *
    revcumsum_r(right * (left @ W))[i, j]``.  Two batched matrix products: O(B L^3) time,
    O(B L^2) memory.  It runs in float64 so that ``e_j`` of widely spread heights at a
    sharp temperature neither overflows nor underflows (a cost of O(B L^3), small beside
    the encoder layers).
    """
    dtype = distances.dtype
    d, t = distances.double(), heights.double()
    left, right = boundary_probabilities(d, t, inv_mu1.double())
    real = t > -_BIG / 2
    logits = (t * inv_mu2.double()).masked_fill(~real, float("-inf"))
    e = torch.exp(logits - logits.max(-1, keepdim=True).values.clamp_min(-1e300))  # [B, L]
    n = t.shape[1]
    upper = torch.ones(n, n, dtype=torch.bool, device=t.device).triu()
    z = torch.cumsum(e[:, None, :].expand(-1, n, n).masked_fill(~upper, 0.0), -1)  # Z(l, r)
    w = torch.where(upper & (z > 0), 1.0 / z.clamp_min(1e-300), torch.zeros_like(z))
    below = torch.cumsum(left * torch.bmm(right, w.transpose(1, 2)), -1)  # j < i
    above = torch.cumsum((right * torch.bmm(left, w)).flip(-1), -1).flip(-1)  # j > i
    eye = torch.eye(n, dtype=torch.bool, device=t.device)
    parents = torch.where(eye, 0.0, torch.where(torch.ones_like(eye).tril(-1), below, above))
    parents = parents * e[:, None, :]
    return parents.masked_fill(~(real[:, :, None] & real[:, None, :]), 0.0).to(dtype)
