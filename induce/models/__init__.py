"""Masked-LM architectures and the registry that maps an ``--arch`` name to its class.

Every class implements :class:`induce.models.base.MaskedLM`.  Adding an architecture: one
model file here, its registry entry below, and its paper preset
``resources/configs/presets/<arch>-ptb-paper.yaml`` (see ``docs/architecture.md``).
"""

from __future__ import annotations

from typing import Any

from induce.data.config import from_mapping
from induce.data.errors import ConfigError
from induce.models.base import BackboneConfig, EncoderOutput, MaskedLM
from induce.models.combiner import Combiner
from induce.models.structformer import StructFormer
from induce.models.transformer import TransformerMLM
from induce.models.udgn import UDGN

MODELS: dict[str, type[MaskedLM]] = {
    "transformer": TransformerMLM,
    "structformer": StructFormer,
    "udgn": UDGN,
    "combiner": Combiner,
}

__all__ = ["MODELS", "EncoderOutput", "MaskedLM", "build_model", "model_class", "model_config"]


def model_class(arch: str) -> type[MaskedLM]:
    if arch not in MODELS:
        raise ConfigError(f"unknown architecture {arch!r} (known: {', '.join(MODELS)})")
    return MODELS[arch]


def model_config(arch: str, settings: dict[str, Any]) -> BackboneConfig:
    """The architecture's frozen config from the ``model:`` settings (unknown keys refused)."""
    config = from_mapping(model_class(arch).config_class, settings, f"{arch} model")
    config.check()
    return config


def build_model(arch: str, settings: dict[str, Any], vocab_size: int, pad_id: int) -> MaskedLM:
    return model_class(arch)(model_config(arch, settings), vocab_size, pad_id)
