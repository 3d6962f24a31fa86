"""Masked-LM architectures, keyed by the ``--arch`` name.

A model maps ``ids [B, L]`` and ``keep [B, L]`` to an :class:`EncoderOutput` (hidden states
and, for parsers, their scores); ``induce.decode`` turns scores into trees.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from induce.data.config import from_mapping
from induce.models.structformer import StructFormer
from induce.models.transformer import EncoderOutput, TransformerMLM
from induce.models.udgn import UDGN

MODELS: dict[str, type] = {
    "transformer": TransformerMLM,
    "structformer": StructFormer,
    "udgn": UDGN,
}

__all__ = ["MODELS", "EncoderOutput", "build_model", "model_config"]


def model_config(arch: str, settings: dict[str, Any]):
    """The architecture's frozen config from the ``model:`` settings (unknown keys refused)."""
    from induce.data.errors import ConfigError

    if arch not in MODELS:
        raise ConfigError(f"unknown architecture {arch!r} (known: {', '.join(MODELS)})")
    config = from_mapping(MODELS[arch].config_class, settings, f"{arch} model")
    config.check()
    return config


def build_model(arch: str, settings: dict[str, Any], vocab_size: int, pad_id: int) -> nn.Module:
    return MODELS[arch](model_config(arch, settings), vocab_size, pad_id)
