"""Masked-LM architectures and the registry that maps an ``--arch`` name to its class.

Every class of ``MODELS`` implements :class:`induce.models.base.MaskedLM`; ``PARSERS`` holds
the supervised parsers, trained on gold trees (the chart parser).  Adding an architecture: one
model file here, its registry entry below, and its paper preset
``resources/configs/presets/<arch>-ptb-paper.yaml`` (see ``docs/architecture.md``).
"""

from __future__ import annotations

from typing import Any

from induce.data.config import from_mapping
from induce.data.errors import ConfigError
from induce.models.base import BackboneConfig, EncoderOutput, MaskedLM
from induce.models.chart import ChartConfig, ChartParser
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
PARSERS: dict[str, type[ChartParser]] = {"chart": ChartParser}

__all__ = [
    "MODELS",
    "PARSERS",
    "ChartParser",
    "EncoderOutput",
    "MaskedLM",
    "build_model",
    "build_parser",
    "decoders",
    "model_class",
    "model_config",
    "trains_on_trees",
]


def trains_on_trees(arch: str) -> bool:
    """Whether ``arch`` is a supervised parser (trained on gold trees, not a masked LM)."""
    return arch in PARSERS


def model_class(arch: str) -> type[MaskedLM]:
    if arch not in MODELS:
        known = ", ".join([*MODELS, *PARSERS])
        if arch in PARSERS:
            raise ConfigError(f"{arch} is a supervised parser, not a masked language model")
        raise ConfigError(f"unknown architecture {arch!r} (known: {known})")
    return MODELS[arch]


def decoders(arch: str) -> tuple[str, ...]:
    """The decoders the architecture's scores support (the first is the default)."""
    if arch in PARSERS:
        return ()
    scores = model_class(arch).scores_class
    return scores.decoders if scores is not None else ()


def model_config(arch: str, settings: dict[str, Any]) -> BackboneConfig | ChartConfig:
    """The architecture's frozen config from the ``model:`` settings (unknown keys refused)."""
    config: BackboneConfig | ChartConfig
    if arch in PARSERS:
        config = from_mapping(PARSERS[arch].config_class, settings, f"{arch} model")
    else:
        config = from_mapping(model_class(arch).config_class, settings, f"{arch} model")
    config.check()
    return config


def build_parser(arch: str, settings: dict[str, Any], vocab_size: int, pad_id: int) -> ChartParser:
    config = model_config(arch, settings)
    assert isinstance(config, ChartConfig)
    return PARSERS[arch](config, vocab_size, pad_id)


def build_model(arch: str, settings: dict[str, Any], vocab_size: int, pad_id: int) -> MaskedLM:
    config = model_config(arch, settings)
    assert isinstance(config, BackboneConfig)
    return model_class(arch)(config, vocab_size, pad_id)
