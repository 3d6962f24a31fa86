"""The Transformer masked-LM baseline of the StructFormer and UDGN papers.

A pre-LayerNorm encoder (T5-style, as the StructFormer paper states) over word embeddings,
with positions either as learned absolute embeddings added to the input (the reference code's
``--pos_emb``, used by its published training command: our default), a learned bias per layer,
head and distance (its ``--relative_bias``), or none.  A final LayerNorm, dropout and an
output layer tied to the input embeddings score the masked positions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import torch
from torch import nn

from induce.data.config import Rate, Size
from induce.data.errors import ConfigError
from induce.models.layers import Dropout, EncoderLayer
from induce.models.masked_lm import BackboneConfig, EncoderOutput, MaskedLM


@dataclass(frozen=True)
class TransformerConfig(BackboneConfig):
    d_ff: Size = 2048
    # absolute: a learned table (the reference's 500 rows); relative: a learned bias per head
    # and distance up to max_length; none
    position: Literal["absolute", "relative", "none"] = "absolute"
    # dropout on the encoder's input embeddings: 0 in the StructFormer repository, the model
    # dropout in the UDGN repository's Transformer and StructFormer
    embed_dropout: Rate = 0.0
    # the encoder layers' LayerNorms learn a scale and shift (the StructFormer repository's);
    # false: they only normalise (the UDGN repository's TransformerLayer)
    norm_affine: bool = True

    def check(self) -> None:
        super().check()
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"model.d_model ({self.d_model}) must be a multiple of "
                f"model.n_heads ({self.n_heads})"
            )


class TransformerMLM(MaskedLM):
    """``forward(ids [B, L], keep [B, L]) -> EncoderOutput``; ``logits(hidden [M, D]) ->
    [M, V]`` for the selected (masked) positions."""

    config_class = TransformerConfig
    config: TransformerConfig

    def __init__(self, config: TransformerConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__(config, vocab_size, pad_id)
        c = config
        relative = c.max_length if c.position == "relative" else 0
        self.layers = nn.ModuleList(
            EncoderLayer(
                c.d_model, c.n_heads, c.d_ff, c.dropout, c.attn_dropout, relative, c.norm_affine
            )
            for _ in range(c.n_layers)
        )
        self.embed_drop = Dropout(c.embed_dropout)
        self._add_output(vocab_size)
        self._init_tables(self.embed, self.positions)
        self._init_projections()

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        h = self.embed_drop(self.embed_tokens(ids))
        for layer in self.layers:
            h = layer(h, keep)
        return EncoderOutput(self.finish(h))

    def record_attention(self, on: bool = True) -> None:
        for layer in self.layers:
            cast(EncoderLayer, layer).attn.record_weights(on)

    def attention(self) -> list[torch.Tensor]:
        """Softmax attention for the Transformer, the gated sigmoid weights for StructFormer."""
        return [cast(EncoderLayer, layer).attn.weights() for layer in self.layers]
