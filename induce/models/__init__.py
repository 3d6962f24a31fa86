"""The model classes of every architecture, built from the one registry of architectures
(:mod:`induce.data.architectures`, which the command line reads without importing torch).

Every class of ``MODELS`` implements :class:`induce.models.base.Model`: it owns its objective
(``loss``) and names its scores; what it trains on and what it can do are its registry
entry's data.  Adding an architecture: one model file here, its entry in
``induce.data.architectures``, and its paper preset
``resources/configs/presets/<arch>-ptb-paper.yaml`` (see ``docs/architecture.md``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from induce.data.architectures import ARCHITECTURES, architecture
from induce.data.config import from_mapping
from induce.models.base import Loss, Model
from induce.models.masked_lm import BackboneConfig, EncoderOutput, MaskedLM

MODELS: dict[str, type[Model]] = {
    a.name: getattr(import_module(a.module), a.cls) for a in ARCHITECTURES
}

__all__ = [
    "MODELS",
    "BackboneConfig",
    "EncoderOutput",
    "Loss",
    "MaskedLM",
    "Model",
    "build_model",
    "decoders",
    "model_class",
    "model_config",
]


def model_class(arch: str) -> type[Model]:
    """The class of ``arch``; :class:`ConfigError` naming the known ones otherwise."""
    return MODELS[architecture(arch).name]


def decoders(arch: str) -> tuple[str, ...]:
    """The decoders the architecture's scores support (the first is the default)."""
    scores = model_class(arch).scores_class
    return scores.decoders if scores is not None else ()


def model_config(arch: str, settings: dict[str, Any]) -> Any:
    """The architecture's frozen config from the ``model:`` settings (unknown keys refused)."""
    config = from_mapping(model_class(arch).config_class, settings, f"{arch} model")
    config.check()
    return config


def build_model(arch: str, settings: dict[str, Any], vocab_size: int, pad_id: int) -> Model:
    """A freshly initialised model of ``arch`` (seeded by the caller)."""
    return model_class(arch)(model_config(arch, settings), vocab_size, pad_id)
