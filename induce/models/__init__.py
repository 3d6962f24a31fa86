"""The model classes of every architecture, built from the one registry of architectures
(:mod:`induce.data.architectures`, which the command line reads without importing torch).

Every class of ``MODELS`` implements :class:`induce.models.base.MaskedLM`; ``PARSERS`` holds
the supervised parsers, trained on gold trees (the chart parser).  Adding an architecture: one
model file here, its entry in ``induce.data.architectures``, and its paper preset
``resources/configs/presets/<arch>-ptb-paper.yaml`` (see ``docs/architecture.md``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from induce.data.architectures import ARCHITECTURES, BY_NAME
from induce.data.config import from_mapping
from induce.data.errors import ConfigError
from induce.models.base import BackboneConfig, EncoderOutput, MaskedLM
from induce.models.chart import ChartConfig, ChartParser


def _classes(trains_on: str) -> dict[str, Any]:
    return {
        a.name: getattr(import_module(a.module), a.cls)
        for a in ARCHITECTURES
        if a.trains_on == trains_on
    }


MODELS: dict[str, type[MaskedLM]] = _classes("text")
PARSERS: dict[str, type[ChartParser]] = _classes("trees")

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
        if arch in PARSERS:
            raise ConfigError(f"{arch} is a supervised parser, not a masked language model")
        known = ", ".join(BY_NAME)
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
