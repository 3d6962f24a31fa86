"""Head tables as data: ``resources/headrules/<name>.yaml`` or a user's YAML file."""

from __future__ import annotations

import os
from typing import Any

from induce.data.config import load_resource_yaml, resource_names
from induce.data.errors import ConfigError
from induce.data.files import read_text
from induce.structure.headrules import DIRECTIONS, HeadRule, HeadTable, LabelRule, LabelScheme

_KEYS = {"name", "description", "punctuation", "coordination", "rules", "labels"}
_LABEL_KEYS = {"root", "punctuation", "rules", "default"}
_LABEL_RULE_KEYS = {"label", "function", "dependent", "phrase"}


def load_head_table(spec: str) -> HeadTable:
    """A shipped table by name (``penn2malt``, ``collins``) or the path of a YAML file."""
    if spec in resource_names("headrules"):
        return head_table(load_resource_yaml("headrules", f"{spec}.yaml"), f"{spec}.yaml")
    if os.path.isfile(spec):
        import yaml

        try:
            data = yaml.safe_load(read_text(spec))
        except yaml.YAMLError as err:
            raise ConfigError(f"{spec}: not valid YAML ({err.__class__.__name__})") from None
        return head_table(data, spec)
    raise ConfigError(f"unknown head table {spec!r}: give "
                      f"{' or '.join(resource_names('headrules'))}, or a YAML file")


def head_table(data: Any, source: str) -> HeadTable:
    """Build a :class:`HeadTable` from its YAML mapping, rejecting anything unknown."""
    mapping = _mapping(data, source, _KEYS)
    rules = {}
    for label, items in _mapping(mapping.get("rules"), f"{source}: rules").items():
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not items:
            raise ConfigError(f"{source}: rules for {label!r} must be a list of rules")
        rules[str(label)] = tuple(_rule(item, f"{source}: {label}") for item in items)
    labels = mapping.get("labels")
    return HeadTable(
        name=str(mapping.get("name", os.path.splitext(os.path.basename(source))[0])),
        rules=rules,
        punctuation=frozenset(_strings(mapping.get("punctuation", []), source, "punctuation")),
        coordination=frozenset(_strings(mapping.get("coordination", []), source,
                                        "coordination")),
        labels=None if labels is None else _labels(labels, f"{source}: labels"))


def _rule(item: Any, where: str) -> HeadRule:
    if not isinstance(item, str) or not item.split():
        raise ConfigError(f"{where}: a rule is 'DIRECTION [LABEL|LABEL ...] ...', "
                          f"got {item!r}")
    direction, *priorities = item.split()
    if direction not in DIRECTIONS:
        raise ConfigError(f"{where}: direction must be one of {', '.join(DIRECTIONS)}, "
                          f"got {direction!r}")
    return HeadRule(direction, tuple(frozenset(p.split("|")) for p in priorities))


def _labels(data: Any, where: str) -> LabelScheme:
    mapping = _mapping(data, where, _LABEL_KEYS)
    rules = []
    for item in mapping.get("rules", []):
        rule = _mapping(item, f"{where}: rules", _LABEL_RULE_KEYS)
        if "label" not in rule:
            raise ConfigError(f"{where}: every rule needs a label")
        rules.append(LabelRule(
            label=str(rule["label"]),
            **{key: frozenset(_strings(rule[key], where, key))
               for key in ("function", "dependent", "phrase") if key in rule}))
    return LabelScheme(root=str(mapping.get("root", "ROOT")),
                       punctuation=str(mapping.get("punctuation", "P")),
                       rules=tuple(rules), default=str(mapping.get("default", "DEP")))


def _mapping(data: Any, where: str, keys: set[str] | None = None) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    if keys is not None:
        unknown = sorted(set(map(str, data)) - keys)
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s) {', '.join(map(repr, unknown))} "
                              f"(known: {', '.join(sorted(keys))})")
    return data


def _strings(data: Any, where: str, key: str) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(x, (str, int)) for x in data):
        raise ConfigError(f"{where}: {key} must be a list of labels")
    return [str(x) for x in data]
