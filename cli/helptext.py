"""Help that says what an option takes: metavars and defaults for every command.

Typer shows the Python type of an option or argument (``<str>``, ``<int>``, ``<bool>``)
where a user wants to read what to give (``PATH``, ``N``, ``RATE``), and Rich reads a help
text's ``[default: ...]`` as markup and drops it.  :func:`polish` walks the app once, before it
is turned into Click commands: a metavar from each option's type and name where none is
set (none at all for a flag), square brackets in help texts escaped, and each command's
paragraphs reflowed to the terminal's width.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

import typer
from typer.models import ArgumentInfo, OptionInfo

# option names (the Python parameter) that take a file or folder
_PATHS = re.compile(
    r"(^|_)(path|file|dir|output|out|input|gold|pred|data|treebank|root|json|html|plot|csv"
    r"|markdown|latex|vocab|grammar|dict|deps|resume|tokenizer_files|train|valid|test|trees"
    r"|pretrained|checkpoint|source)s?($|_)"
)
_RUNS = {"model", "run", "runs"}
_NAMED = {
    "set_": "KEY=VALUE",
    "fmt": "FORMAT",
    "to": "FORMAT",
    "text_format": "FORMAT",
    "init_from": "PATH",
    "dictionary": "PATH",
    "folder": "DIR",
}
_RATES = re.compile(r"(^|_)(rate|lr|fraction|share)($|_)")


def polish(app: typer.Typer) -> None:
    """Metavars and escaped help texts for every command of ``app`` and its groups; no
    type shown for flags (``--help`` and ``--version`` included)."""
    _no_type_for_flags()
    for callback in _callbacks(app):
        hints = typing.get_type_hints(callback)
        for name, parameter in inspect.signature(callback).parameters.items():
            info = parameter.default
            if not isinstance(info, (OptionInfo, ArgumentInfo)):
                continue
            if info.help:
                info.help = _escaped(info.help)
            if info.metavar is None and isinstance(info, OptionInfo):
                info.metavar = metavar(name, hints.get(name, str))
            elif info.metavar is None:  # an argument: named in capitals, as in the help texts
                info.metavar = _word(name)


def _callbacks(app: typer.Typer) -> Iterator[Callable[..., Any]]:
    """Every command's function, each command's help reflowed on the way (see ``reflow``)."""
    for command in app.registered_commands:
        if command.callback is not None:
            command.help = _escaped(reflow(command.help or inspect.getdoc(command.callback) or ""))
            yield command.callback
    for group in app.registered_groups:
        if group.typer_instance is not None:
            yield from _callbacks(group.typer_instance)


def _escaped(text: str) -> str:
    """``text`` with every ``[`` escaped: Rich reads ``[n numbers]`` as markup and drops it."""
    return re.sub(r"(?<!\\)\[", r"\\[", text)


def reflow(text: str) -> str:
    """``text`` with the lines of each paragraph joined: Rich keeps a docstring's line breaks,
    so a help text wrapped at 100 columns in the source shows ragged lines in a terminal of
    any other width.  Blank lines (paragraphs) stay, and so do lines that start indented or
    with a list marker (examples, lists)."""
    lines: list[str] = []
    for line in text.splitlines():
        joins = lines and lines[-1] and line and not line[0].isspace()
        joins = joins and not line.startswith(("- ", "* "))
        if joins and not lines[-1][0].isspace():
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n".join(lines)


def metavar(name: str, annotation: Any) -> str | None:
    """What an option named ``name`` of type ``annotation`` takes: nothing for a flag, its
    choices for a ``Literal`` (Typer's own), ``N``, ``RATE``, ``PATH``, ``RUN`` or the name."""
    kinds = {annotation}
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = {a for a in typing.get_args(annotation) if a is not type(None)}
    if any(
        typing.get_origin(k) is typing.Literal or isinstance(k, type) and issubclass(k, Enum)
        for k in kinds
    ):
        return None
    if any(typing.get_origin(k) is list for k in kinds):
        return _word(name.rstrip("s"))
    if bool in kinds:
        return ""
    if int in kinds:
        return "N"
    if float in kinds:
        return "RATE" if _RATES.search(name) else "X"
    if name in _NAMED:
        return _NAMED[name]
    if name in _RUNS:
        return "RUN"
    if _PATHS.search(name) and not name.endswith(("_format", "_scheme")):
        return "PATH"
    return _word(name)


def _word(name: str) -> str:
    return name.upper().replace("_", "-")


def _no_type_for_flags() -> None:
    """Typer shows ``<bool>`` beside every flag, even its own ``--help``, and ``<str>``
    beside every argument: a flag takes no value and an argument's name (``GOLD``) says what
    it takes, so show neither (the Click help formatter shows neither)."""
    from typer.core import TyperArgument, TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "induce", False):
        return  # a Typer without rich type display (before 0.16) shows no types to hide

    def option_type(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag and not self.metavar:
            return None
        return shown(self, ctx)

    def argument_type(self: TyperArgument, ctx: Any) -> str | None:
        return None

    option_type.induce = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = option_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign,assignment]
