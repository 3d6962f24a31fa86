"""Scoring conventions as data: ``resources/conventions/*.yaml`` and ``resources/tagsets.yaml``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, TypeVar

from induce.data.config import check_choices, from_mapping, load_resource_yaml
from induce.data.errors import ConfigError
from induce.data.normalize import ALL_TAGS, load_tagset
from induce.structure.trees import WRAPPER_LABELS

SPAN_CONVENTIONS = ("structformer", "cpcfg", "tnpcfg")
DEP_CONVENTIONS = ("position", "structformer")

# exclude: no span may cover the whole sentence; root-only: only the root's own span goes.
WholeSentence = Literal["exclude", "root-only"]
# corpus F1 over each sentence's span set, or over its gold spans as a list (a span that a
# unary chain repeats is a false negative once per copy when it is missed: TN-PCFG's metric)
CorpusGold = Literal["set", "list"]
# Arcs compared by word positions, or as (word, head word) strings (StructFormer's quirk).
Arcs = Literal["positions", "word-strings"]
# the root labels dropped as a treebank's wrapper; the official readers (NLTK's) drop TOP and
# an unlabelled outer bracket only, and keep a ROOT or S1 root as a constituent
WRAPPERS = tuple(sorted(WRAPPER_LABELS - {""}))


def _tags_for_report(name: str) -> list[str] | str:
    tags = load_tagset(name)
    return ALL_TAGS if tags is None else sorted(tags)


@dataclass(frozen=True)
class SpanConvention:
    """How unsupervised constituency parses are scored (see the shipped YAML files)."""

    name: str
    description: str
    tagset: str
    whole_sentence_span: WholeSentence
    min_words: int
    max_words: int | None
    report_labels: tuple[str, ...]
    corpus_gold: CorpusGold = "set"
    # root labels dropped (with an unlabelled outer bracket) from gold and prediction
    wrappers: tuple[str, ...] = WRAPPERS

    def __post_init__(self) -> None:
        check_choices(self)  # also after ``replace``, which no reader checks

    def wrapper_labels(self) -> frozenset[str]:
        """The labels :func:`~induce.structure.trees.unwrap` drops: ``wrappers`` and the
        unlabelled outer bracket."""
        return frozenset(self.wrappers) | {""}

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["report_labels"] = list(self.report_labels)
        out["word_tags"] = _tags_for_report(self.tagset)
        if self.wrappers == WRAPPERS:  # said only when changed: earlier reports lack it
            del out["wrappers"]
        else:
            out["wrappers"] = list(self.wrappers)
        return out


@dataclass(frozen=True)
class DepConvention:
    """How dependency parses are scored (see the shipped YAML files)."""

    name: str
    description: str
    tagset: str
    arcs: Arcs

    def __post_init__(self) -> None:
        check_choices(self)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["word_tags"] = _tags_for_report(self.tagset)
        return out


Convention = TypeVar("Convention", SpanConvention, DepConvention)


def _load(
    cls: type[Convention],
    names: tuple[str, ...],
    file: str,
    name: str,
    overrides: dict[str, Any],
) -> Convention:
    if name not in names:
        raise ConfigError(f"unknown convention {name!r}; choose from {', '.join(names)}")
    conv = from_mapping(cls, load_resource_yaml("conventions", file), f"conventions/{file}")
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(conv, **given) if given else conv


def load_span_convention(name: str, **overrides: Any) -> SpanConvention:
    """A shipped span convention; keyword arguments that are not ``None`` override fields."""
    return _load(SpanConvention, SPAN_CONVENTIONS, f"{name}.yaml", name, overrides)


def load_dep_convention(name: str, **overrides: Any) -> DepConvention:
    """A shipped dependency convention; keyword arguments that are not ``None`` override."""
    return _load(DepConvention, DEP_CONVENTIONS, f"deps-{name}.yaml", name, overrides)
