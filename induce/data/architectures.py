"""Every architecture ``induce`` trains, described as data: its name, what it trains on,
where its class lives, the decoders of its scores and what else it can do.

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

Objective = Literal["masked-lm", "hinge", "likelihood"]


@dataclass(frozen=True)
class Architecture:
    """``trains_on``: ``text`` (an unsupervised model) or ``trees`` (a supervised parser
    trained on gold trees); it picks the way a run reads sentences.  ``objective``: how it
    learns, which picks the trainer: ``masked-lm`` (a masked language model whose parser is
    read out of it), ``hinge`` (the chart parser's structured hinge loss) or ``likelihood``
    (a grammar trained by the marginal likelihood of the text, or its ELBO).  ``decoders``:
    the read-outs of its parser scores, the default first (empty: no parser).
    ``perplexity``: the model has a masked-LM perplexity (``evaluate mlm``); ``attention``:
    it records attention weights (``evaluate pcc``); ``samples``: it is generative
    (``induce sample``)."""

    name: str
    title: str  # as its paper names it
    module: str
    cls: str
    trains_on: Literal["text", "trees"]
    objective: Objective
    decoders: tuple[str, ...] = ()
    note: str = ""  # a few words for help texts
    starts_from_bert: bool = False  # train.init_from: its weights can start from a BERT folder
    perplexity: bool = True
    attention: bool = True
    samples: bool = False  # ``induce sample``: sentences drawn from the model's grammar


def grammar_entry(
    name: str, title: str, module: str, cls: str, low_rank: bool = False
) -> Architecture:
    """A PCFG of the family: trained on text by its likelihood (or ELBO), parsed by Viterbi
    or MBR, sampled from; a low-rank one decodes by MBR first (the TN-PCFG repository's)
    and by Viterbi only where its expanded rules fit."""
    decoders, note = (
        (("mbr", "viterbi"), "viterbi: grammars small enough to expand their rules")
        if low_rank
        else (("viterbi", "mbr"), "mbr: the TN-PCFG repository's")
    )
    return Architecture(
        name, title, module, cls, "text", "likelihood", decoders, note,
        perplexity=False, attention=False, samples=True,
    )  # fmt: skip


ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture(
        "udgn",
        "UDGN",
        "induce.models.udgn",
        "UDGN",
        "text",
        "masked-lm",
        ("mst", "argmax", "eisner", "mst-uniform-root"),
        "mst-uniform-root: the official UDGN test decoder",
    ),
    Architecture(
        "structformer",
        "StructFormer",
        "induce.models.structformer",
        "StructFormer",
        "text",
        "masked-lm",
        ("argmax", "algorithm3"),
    ),
    Architecture(
        "transformer",
        "Transformer masked LM",
        "induce.models.transformer",
        "TransformerMLM",
        "text",
        "masked-lm",
    ),
    Architecture(
        "combiner",
        "Combiner",
        "induce.models.combiner",
        "Combiner",
        "text",
        "masked-lm",
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
        "hinge",
        ("cky",),
        "supervised, on the dataset's gold trees",
        perplexity=False,
        attention=False,
    ),
    grammar_entry("npcfg", "N-PCFG", "induce.models.pcfg", "NeuralPCFG"),
    grammar_entry("cpcfg", "C-PCFG", "induce.models.pcfg", "CompoundPCFG"),
    grammar_entry("tnpcfg", "TN-PCFG", "induce.models.tnpcfg", "TNPCFG", low_rank=True),
    grammar_entry(
        "simplepcfg",
        "Simple PCFG (SN-PCFG)",
        "induce.models.simplepcfg",
        "SimplePCFG",
        low_rank=True,
    ),
    grammar_entry(
        "scpcfg",
        "Simple compound PCFG (SC-PCFG)",
        "induce.models.simplepcfg",
        "CompoundSimplePCFG",
        low_rank=True,
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
            listed = "no parser"
        parts.append(f"{a.name}: {listed}" + (f" ({a.note})" if a.note else ""))
    return "; ".join(parts)
