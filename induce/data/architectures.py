"""Every architecture ``induce`` trains, described as data: its name, what it trains on,
where its class lives and the decoders of its scores.

This is the one registry: ``induce.models`` builds its classes from it, and the command line
reads its help and choices from it without importing torch (``induce --help`` stays fast).
Adding an architecture: one model file in ``induce/models/``, one entry below, and its paper
preset ``resources/configs/presets/<name>-ptb-paper.yaml``.  A test checks each entry against
its class (the decoders are those of the class's scores, the default first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from induce.data.errors import ConfigError


@dataclass(frozen=True)
class Architecture:
    """``trains_on``: ``text`` (a masked language model whose parser is read out of it) or
    ``trees`` (a supervised parser trained on gold trees).  ``decoders``: the read-outs of
    its parser scores, the default first (empty: the model decodes one way only)."""

    name: str
    title: str  # as its paper names it
    module: str
    cls: str
    trains_on: Literal["text", "trees"]
    decoders: tuple[str, ...] = ()
    note: str = ""  # a few words for help texts
    starts_from_bert: bool = False  # train.init_from: its weights can start from a BERT folder


ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture(
        "udgn",
        "UDGN",
        "induce.models.udgn",
        "UDGN",
        "text",
        ("mst", "argmax", "eisner", "mst-uniform-root"),
        "mst-uniform-root: the official UDGN test decoder",
    ),
    Architecture(
        "structformer",
        "StructFormer",
        "induce.models.structformer",
        "StructFormer",
        "text",
        ("argmax", "algorithm3"),
    ),
    Architecture(
        "transformer",
        "Transformer masked LM",
        "induce.models.transformer",
        "TransformerMLM",
        "text",
    ),
    Architecture(
        "combiner",
        "Combiner",
        "induce.models.combiner",
        "Combiner",
        "text",
        ("merge", "divergence", "levels"),
        "levels: with model.hierarchy constituent",
        starts_from_bert=True,
    ),
    Architecture(
        "chart",
        "self-attentive chart parser",
        "induce.models.chart",
        "ChartParser",
        "trees",
        (),
        "supervised, on the dataset's gold trees",
    ),
)
BY_NAME = {a.name: a for a in ARCHITECTURES}


def architecture(name: str) -> Architecture:
    """The entry of ``name``; :class:`ConfigError` naming the known ones otherwise."""
    if name not in BY_NAME:
        raise ConfigError(f"unknown architecture {name!r} (known: {', '.join(BY_NAME)})")
    return BY_NAME[name]


def names(trains_on: str | None = None) -> list[str]:
    """The architectures' names (those that train on ``trains_on``, when given)."""
    return [a.name for a in ARCHITECTURES if trains_on in (None, a.trains_on)]


def decoder_help() -> str:
    """Each architecture's decoders, the default marked, for a help text."""
    parts = []
    for a in ARCHITECTURES:
        if a.decoders:
            first, *rest = a.decoders
            listed = " | ".join([f"{first} (default)", *rest])
        else:
            listed = "CKY only" if a.trains_on == "trees" else "no parser"
        parts.append(f"{a.name}: {listed}" + (f" ({a.note})" if a.note else ""))
    return "; ".join(parts)
