"""The Transformer masked-LM baseline of the StructFormer and UDGN papers.

A pre-LayerNorm encoder (T5-style, as the StructFormer paper states) over word embeddings,
with positions either as learned absolute embeddings added to the input (the reference code's
``--pos_emb``, used by its published training command: our default), a learned bias per layer,
head and distance (its ``--relative_bias``), or none.  A final LayerNorm, dropout and an
output layer tied to the input embeddings score the masked positions only.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from induce.models.layers import Dropout, EncoderLayer

POSITIONS = ("absolute", "relative", "none")


@dataclass(frozen=True)
class TransformerConfig:
    d_model: int = 512
    n_layers: int = 8
    n_heads: int = 8
    d_ff: int = 2048
    dropout: float = 0.1
    attn_dropout: float = 0.1
    position: str = "absolute"  # absolute | relative | none
    max_length: int = 500  # absolute positions (the reference's 500) / distances
    init_range: float = 0.1  # embeddings ~ U(-r, r), as the reference initialises them

    def check(self) -> None:
        from induce.data.errors import ConfigError

        if self.position not in POSITIONS:
            raise ConfigError(
                f"model.position must be one of {', '.join(POSITIONS)}, got {self.position!r}"
            )
        if self.d_model % self.n_heads:
            raise ConfigError(
                f"model.d_model ({self.d_model}) must be a multiple of "
                f"model.n_heads ({self.n_heads})"
            )
        if min(self.d_model, self.n_layers, self.n_heads, self.d_ff, self.max_length) < 1:
            raise ConfigError("model sizes must be positive")


@dataclass
class EncoderOutput:
    """``hidden [B, L, D]`` after the final LayerNorm; parsers add their scores:
    ``distances [B, L]`` (entry i between words i and i+1), ``heights [B, L]``,
    ``parents [B, L, L]`` (row i: the probability of each word being word i's parent;
    diagonal 0), ``roots [B, L]`` (the probability of each word being the root, for parsers
    that give it)."""

    hidden: torch.Tensor
    distances: torch.Tensor | None = None
    heights: torch.Tensor | None = None
    parents: torch.Tensor | None = None
    roots: torch.Tensor | None = None


class TransformerMLM(nn.Module):
    """``forward(ids [B, L], keep [B, L]) -> EncoderOutput``; ``logits(hidden [M, D]) ->
    [M, V]`` for the selected (masked) positions."""

    config_class = TransformerConfig

    def __init__(self, config: TransformerConfig, vocab_size: int, pad_id: int) -> None:
        super().__init__()
        self.config = config
        self.pad_id = pad_id
        c = config
        self.embed = nn.Embedding(vocab_size, c.d_model, padding_idx=pad_id)
        self.positions = nn.Embedding(c.max_length, c.d_model) if c.position == "absolute" else None
        relative = c.max_length if c.position == "relative" else 0
        self.drop = Dropout(c.dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.attn_dropout, relative)
            for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model)
        self.out_bias = nn.Parameter(torch.zeros(vocab_size))
        nn.init.uniform_(self.embed.weight, -c.init_range, c.init_range)
        if self.positions is not None:
            nn.init.uniform_(self.positions.weight, -c.init_range, c.init_range)

    def check_length(self, length: int) -> None:
        if self.config.position == "absolute" and length > self.config.max_length:
            from induce.data.errors import InputError

            raise InputError(
                f"a sentence of {length} tokens is longer than the model's "
                f"max_length {self.config.max_length}"
            )

    def embed_tokens(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        if self.positions is not None:
            self.check_length(ids.shape[1])
            h = h + self.positions(torch.arange(ids.shape[1], device=ids.device))[None]
        return h  # no embedding dropout, as the reference

    def finish(self, h: torch.Tensor) -> torch.Tensor:
        return self.drop(self.norm(h))

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> EncoderOutput:
        h = self.embed_tokens(ids)
        for layer in self.layers:
            h = layer(h, keep)
        return EncoderOutput(self.finish(h))

    def record_attention(self, on: bool = True) -> None:
        """Keep every layer's attention weights of the next forward passes."""
        for layer in self.layers:
            layer.attn.record, layer.attn.recorded = on, None

    def attention(self) -> list[torch.Tensor]:
        """Per layer, the recorded weights ``[B, H, L, L]`` (query i, key j): softmax
        attention for the Transformer, the gated sigmoid weights for StructFormer."""
        return [layer.attn.recorded for layer in self.layers]

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Tied output layer: ``hidden [M, D] -> [M, V]``."""
        return nn.functional.linear(hidden, self.embed.weight, self.out_bias)
