"""Literal-typed settings: one check for every option object, one message format."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import pytest

from induce.convert.trees import TreeOps
from induce.data.config import check_choices, choose, from_mapping, literal_values
from induce.data.errors import ConfigError
from induce.metrics.conventions import load_dep_convention, load_span_convention
from induce.structure.binarize import FACTORS
from induce.structure.distances import TIES


@dataclass(frozen=True)
class Options:
    mode: Literal["fast", "exact"] = "fast"
    side: Literal["left", "right"] | None = None
    name: str = "x"

    def __post_init__(self) -> None:
        check_choices(self)


def test_literal_fields_are_checked_by_name():
    assert Options(mode="exact", side="left").side == "left"
    with pytest.raises(ConfigError) as err:
        Options(mode="slow")  # type: ignore[arg-type]
    assert err.value.setting == "mode"
    assert str(err.value) == "mode must be one of exact, fast, got 'slow'"
    with pytest.raises(ConfigError, match="side must be one of left, right, got 'up'"):
        Options(side="up")  # type: ignore[arg-type]


def test_from_mapping_and_replace_apply_the_same_choices():
    assert from_mapping(Options, {"mode": "exact"}, "opts").mode == "exact"
    with pytest.raises(ConfigError, match="opts: mode: must be one of fast, exact"):
        from_mapping(Options, {"mode": "slow"}, "opts")
    with pytest.raises(ConfigError, match="mode must be one of"):
        dataclasses.replace(Options(), mode="slow")  # type: ignore[arg-type]


def test_literal_values():
    assert literal_values(Literal["a", "b"]) == ("a", "b")
    assert literal_values(Literal["a"] | None) == ("a", None)
    assert literal_values(str | None) is None


def test_option_objects_of_the_library():
    assert FACTORS == ("right", "left") and TIES == ("left", "right")
    assert TreeOps(binarize="left").binarize == "left"
    with pytest.raises(ConfigError, match="binarize must be one of left, right, got 'up'"):
        TreeOps(binarize="up")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="whole_sentence_span must be one of exclude, root-only"):
        dataclasses.replace(load_span_convention("cpcfg"), whole_sentence_span="all")
    with pytest.raises(ConfigError, match="arcs must be one of positions, word-strings"):
        load_dep_convention("position", arcs="heads")


def test_choose_narrows_a_plain_string():
    assert choose("left", TIES, "ties") == "left"
    with pytest.raises(ConfigError) as err:
        choose("middle", TIES, "ties")
    assert err.value.setting == "ties" and "got 'middle'" in str(err.value)
