"""Strict settings: YAML mappings into frozen dataclasses that reject unknown keys.

Settings change numbers, so a misspelt key must be an error, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar

from induce.data.errors import ConfigError

T = TypeVar("T")


def load_resource_yaml(*parts: str) -> Any:
    """Parse a YAML file shipped in ``resources/`` (e.g. ``"conventions", "cpcfg.yaml"``)."""
    import yaml  # only where settings are read

    ref = resources.files("induce.resources").joinpath(*parts)
    if not ref.is_file():
        raise ConfigError(f"no shipped setting {'/'.join(parts)}")
    return yaml.safe_load(ref.read_text(encoding="utf-8"))


def resource_names(folder: str, suffix: str = ".yaml") -> list[str]:
    """Names (without suffix) of the files shipped in ``resources/<folder>/``."""
    ref = resources.files("induce.resources").joinpath(folder)
    return sorted(p.name[: -len(suffix)] for p in ref.iterdir() if p.name.endswith(suffix))


def from_mapping(cls: type[T], data: Any, source: str) -> T:
    """Build dataclass ``cls`` from ``data``; unknown or missing keys and wrong types raise
    :class:`ConfigError` naming ``source`` and the key."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of settings, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting(s) {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(fields)})"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, field in fields.items():
        if name not in data:
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):  # type: ignore[misc]
                raise ConfigError(f"{source}: missing setting {name!r}")
            continue
        values[name] = _coerce(data[name], hints[name], f"{source}: {name}")
    return cls(**values)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _coerce_union(value, typing.get_args(hint), where)
    if origin is typing.Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise ConfigError(
                f"{where}: must be one of {', '.join(map(str, choices))}, got {value!r}"
            )
        return value
    if origin in (tuple, list, frozenset):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(hint)
        items = [_coerce(v, args[0] if args else Any, where) for v in value]
        return frozenset(items) if origin is frozenset else tuple(items)
    if hint in _SCALARS:
        return _coerce_scalar(value, hint, where)
    if dataclasses.is_dataclass(hint):
        return from_mapping(hint, value, where)  # type: ignore[arg-type]
    return value


def _coerce_union(value: Any, args: tuple[Any, ...], where: str) -> Any:
    if value is None and type(None) in args:
        return None
    last: ConfigError | None = None
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _coerce(value, arg, where)
        except ConfigError as err:
            last = err
    raise last or ConfigError(f"{where}: invalid value {value!r}")


# scalar type -> (accepts, what the error calls it); bool is not an int here
_SCALARS: dict[Any, tuple[Callable[[Any], bool], str]] = {
    bool: (lambda v: isinstance(v, bool), "true or false"),
    float: (lambda v: not isinstance(v, bool) and isinstance(v, (int, float)), "a number"),
    int: (lambda v: not isinstance(v, bool) and isinstance(v, int), "an integer"),
    str: (lambda v: isinstance(v, str), "text"),
}


def _coerce_scalar(value: Any, hint: type, where: str) -> Any:
    accepts, name = _SCALARS[hint]
    if not accepts(value):
        raise ConfigError(f"{where}: expected {name}, got {value!r}")
    return float(value) if hint is float else value
