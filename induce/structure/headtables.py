"""Head tables as data: ``resources/headrules/<name>.yaml`` or a user's YAML file."""

from __future__ import annotations

import os
from typing import Any

from induce.data.config import load_resource_yaml, parse_yaml, resource_names
from induce.data.errors import ConfigError
from induce.data.reading import read_text
from induce.structure.headrules import DIRECTIONS, HeadRule, HeadTable, LabelRule, LabelScheme

_KEYS = {"name", "description", "punctuation", "coordination", "rules", "labels"}
_LABEL_KEYS = {"root", "punctuation", "rules", "default"}
_LABEL_RULE_KEYS = {"label", "function", "dependent", "phrase"}


def load_head_table(spec: str) -> HeadTable:
    """A shipped table by name (``penn2malt``, ``collins``) or the path of a YAML file."""
    if spec in resource_names("headrules"):
        return head_table(load_resource_yaml("headrules", f"{spec}.yaml"), f"{spec}.yaml")
    if os.path.isfile(spec):
        return head_table(parse_yaml(read_text(spec), spec), spec)
    raise ConfigError(
        f"unknown head table {spec!r}: give "
        f"{' or '.join(resource_names('headrules'))}, or a YAML file"
    )


def head_table(data: Any, source: str) -> HeadTable:
    """Build a :class:`HeadTable` from its YAML mapping, rejecting anything unknown."""
    mapping = _mapping(data, source, _KEYS)
    rules = {}
    for label, items in _mapping(mapping.get("rules"), f"{source}: rules").items():
        if not isinstance(label, str):
            raise ConfigError(
                f"{source}: rules: the label {label!r} is not text (quote it: "
                "YAML reads ON, NO, 1 ... as other types)"
            )
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not items:
            raise ConfigError(f"{source}: rules for {label!r} must be a list of rules")
        rules[label] = tuple(_rule(item, f"{source}: {label}") for item in items)
    labels = mapping.get("labels")
    return HeadTable(
        name=_text(
            mapping.get("name", os.path.splitext(os.path.basename(source))[0]), source, "name"
        ),
        rules=rules,
        punctuation=_tags(mapping.get("punctuation", []), source, "punctuation"),
        coordination=_tags(mapping.get("coordination", []), source, "coordination"),
        labels=None if labels is None else _labels(labels, f"{source}: labels"),
    )


def _rule(item: Any, where: str) -> HeadRule:
    if not isinstance(item, str) or not item.split():
        raise ConfigError(f"{where}: a rule is 'DIRECTION [LABEL|LABEL ...] ...', got {item!r}")
    direction, *priorities = item.split()
    if direction not in DIRECTIONS:
        raise ConfigError(
            f"{where}: direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}"
        )
    return HeadRule(direction, tuple(frozenset(p.split("|")) for p in priorities))


def _labels(data: Any, where: str) -> LabelScheme:
    mapping = _mapping(data, where, _LABEL_KEYS)
    items = mapping.get("rules", [])
    if not isinstance(items, list):
        raise ConfigError(f"{where}: rules must be a list of label rules")
    rules = []
    for item in items:
        rule = _mapping(item, f"{where}: rules", _LABEL_RULE_KEYS)
        if "label" not in rule:
            raise ConfigError(f"{where}: every rule needs a label")
        conditions = {}
        for key in ("function", "dependent", "phrase"):
            if key in rule:
                values = _strings(rule[key], where, key)
                if not values:
                    raise ConfigError(f"{where}: {key} is empty, so the rule never applies")
                conditions[key] = frozenset(values)
        rules.append(LabelRule(label=_text(rule["label"], where, "label"), **conditions))
    return LabelScheme(
        root=_text(mapping.get("root", "ROOT"), where, "root"),
        punctuation=_text(mapping.get("punctuation", "P"), where, "punctuation"),
        rules=tuple(rules),
        default=_text(mapping.get("default", "DEP"), where, "default"),
    )


def _mapping(data: Any, where: str, keys: set[str] | None = None) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    if keys is not None:
        unknown = sorted(set(map(str, data)) - keys)
        if unknown:
            raise ConfigError(
                f"{where}: unknown setting(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(keys))})"
            )
    return data


def _strings(data: Any, where: str, key: str) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
        raise ConfigError(
            f"{where}: {key} must be a list of labels (quote labels YAML would "
            "read as numbers or booleans)"
        )
    return data


def _text(data: Any, where: str, key: str) -> str:
    if not isinstance(data, str) or not data:
        raise ConfigError(f"{where}: {key} must be text, got {data!r}")
    return data


def _tags(data: Any, where: str, key: str) -> frozenset[str]:
    """A list of tags, or the name of a tag set of ``resources/tagsets.yaml``."""
    if isinstance(data, str):
        from induce.data.normalize import load_tagset

        try:
            tags = load_tagset(data)
        except ConfigError as err:  # the table's fault: say where it names the set
            raise ConfigError(f"{where}: {key}: {err.reason}") from None
        if tags is None:
            raise ConfigError(f"{where}: {key} must name a tag set, not {data!r}")
        return tags
    return frozenset(_strings(data, where, key))
