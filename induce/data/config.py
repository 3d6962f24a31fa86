"""Strict settings: YAML mappings into frozen dataclasses that reject unknown keys.

Settings change numbers, so a misspelt key must be an error, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable, Collection
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from induce.data.errors import ConfigError, InputError

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from _typeshed import DataclassInstance

T = TypeVar("T")
C = TypeVar("C")


def resource(*parts: str) -> Traversable:
    """A file or folder shipped in ``resources/`` (e.g. ``"evalb", "collins.prm"``)."""
    ref = resources.files("induce.resources")
    for part in parts:
        ref = ref.joinpath(part)
    return ref


def load_resource_yaml(*parts: str) -> Any:
    """Parse a YAML file shipped in ``resources/`` (e.g. ``"conventions", "cpcfg.yaml"``)."""
    import yaml  # only where settings are read

    ref = resource(*parts)
    if not ref.is_file():
        raise ConfigError(f"no shipped setting {'/'.join(parts)}")
    return yaml.safe_load(ref.read_text(encoding="utf-8"))


def parse_yaml(text: str, path: str) -> Any:
    """The YAML ``text`` of the file ``path``; bad syntax is an :class:`InputError` of one
    line naming the file and the line of the problem (PyYAML's own message spans several)."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "bad syntax"
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"not valid YAML: {problem}", path, line) from None
    except (yaml.YAMLError, RecursionError) as err:  # nesting deeper than Python's stack
        raise InputError(f"not valid YAML ({err.__class__.__name__})", path) from None


def resource_names(*folder: str, suffix: str = ".yaml") -> list[str]:
    """Names (without suffix) of the files shipped in ``resources/<folder>/``."""
    ref = resource(*folder)
    return sorted(p.name[: -len(suffix)] for p in ref.iterdir() if p.name.endswith(suffix))


def check_choice(value: object, choices: Collection[object], setting: str) -> None:
    """:class:`ConfigError` naming ``setting`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        # Sorted: a Literal inside a union may come back in another order (typing caches
        # equal unions, and Literal["a", "b"] == Literal["b", "a"]).
        shown = ", ".join(sorted(str(c) for c in choices if c is not None))
        raise ConfigError(f"must be one of {shown}, got {value!r}", setting=setting)


def choose(value: object, choices: tuple[C, ...], setting: str) -> C:
    """``value``, typed as one of ``choices`` (a ``Literal``'s values), after
    :func:`check_choice`: for callers that hold a plain string, such as a command line."""
    check_choice(value, choices, setting)
    return choices[choices.index(value)]


def check_choices(obj: DataclassInstance) -> None:
    """Check every ``Literal``-typed field of the dataclass ``obj`` with :func:`check_choice`.

    For option objects built in Python, from their ``__post_init__``: :func:`from_mapping`
    checks settings read from files as it reads them, but a direct call or
    ``dataclasses.replace`` goes through no reader.
    """
    for name, choices in _literal_fields(type(obj)):
        check_choice(getattr(obj, name), choices, name)


@functools.cache
def _literal_fields(cls: type) -> tuple[tuple[str, tuple[object, ...]], ...]:
    """``(field, allowed values)`` of each field of ``cls`` typed ``Literal[...]`` (or
    ``Literal[...] | None``, where ``None`` is allowed too); read once per class."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        choices = literal_values(hints[f.name])
        if choices is not None:
            out.append((f.name, choices))
    return tuple(out)


def literal_values(hint: Any) -> tuple[object, ...] | None:
    """The values a ``Literal`` type allows (``None`` included for an optional one), or
    ``None`` when ``hint`` is no ``Literal``."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [literal_values(arg) for arg in typing.get_args(hint)]
        if any(p is not None for p in parts):
            none = (None,) if type(None) in typing.get_args(hint) else ()
            return tuple(v for p in parts if p is not None for v in p) + none
    return None


@dataclass(frozen=True)
class Bounds:
    """The range of a number setting, attached to its type with ``typing.Annotated`` and
    checked when settings are read (:func:`from_mapping`)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself is excluded
    high_open: bool = False

    def holds(self, value: float) -> bool:
        low_ok = self.low is None or (value > self.low if self.low_open else value >= self.low)
        high_ok = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return low_ok and high_ok

    def check(self, value: float, where: str) -> None:
        if not self.holds(value):
            raise ConfigError(f"{where}: must be {self.describe()}, got {value!r}")

    def describe(self) -> str:
        if self.high is None:
            return f"{'above' if self.low_open else 'at least'} {_number(self.low)}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"in {left}{_number(self.low)}, {_number(self.high)}{right}"


def _number(value: float | None) -> str:
    """A bound as written: an integer in full (a seed's 2**64 - 1), a float short."""
    return str(value) if isinstance(value, int) else f"{value:g}"


# The kinds of number settings.  A plain ``int`` setting is a count: 0 or more.
Size = Annotated[int, Bounds(1)]  # a width, a number of layers or heads, a token budget
Rate = Annotated[float, Bounds(0.0, 1.0, high_open=True)]  # a dropout or masking probability
Positive = Annotated[float, Bounds(0.0, low_open=True)]  # a scale that must not vanish
# a random seed: what torch.manual_seed takes (it refuses 2**64 and more), from 0
SEED = Bounds(0, 2**64 - 1)
Seed = Annotated[int, SEED]


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
    hints = typing.get_type_hints(cls, include_extras=True)
    values = {}
    for name, field in fields.items():
        if name not in data:
            if (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                raise ConfigError(f"{source}: missing setting {name!r}")
            continue
        values[name] = _coerce(data[name], hints[name], f"{source}: {name}")
    return cls(**values)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is Annotated:
        base, *extras = typing.get_args(hint)
        value = _coerce(value, base, where)
        for extra in extras:
            if isinstance(extra, Bounds):
                extra.check(value, where)
        return value
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
    # settings are finite: a NaN learning rate or an infinite rate is a typo, not a setting
    float: (
        lambda v: not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v),
        "a finite number",
    ),
    int: (lambda v: not isinstance(v, bool) and isinstance(v, int), "an integer"),
    str: (lambda v: isinstance(v, str), "text"),
}


def _coerce_scalar(value: Any, hint: type, where: str) -> Any:
    accepts, name = _SCALARS[hint]
    if not accepts(value):
        raise ConfigError(f"{where}: expected {name}, got {value!r}")
    if hint is int and value < 0:  # every integer setting counts something
        raise ConfigError(f"{where}: must be 0 or more, got {value!r}")
    return float(value) if hint is float else value
