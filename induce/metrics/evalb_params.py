"""EVALB parameter files (``.prm``): the presets in ``resources/evalb/`` and users' own files.

The syntax is the C EVALB's: one ``KEYWORD value`` per line, ``#`` starts a comment line, lines
shorter than 3 characters are ignored.  Unlike the C program, which warns and goes on, an
unknown keyword or a malformed value is an error here: a misspelt keyword would silently change
the scores.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from induce.data.config import resource
from induce.data.errors import ConfigError, InputError
from induce.data.reading import read_text

PRESETS = ("collins", "unlabeled", "nk")


@dataclass(frozen=True)
class EvalbParams:
    """Settings of one EVALB run, with the C program's defaults."""

    name: str = "default"
    labeled: bool = True
    cutoff_len: int = 40
    max_error: int = 10
    delete_labels: tuple[str, ...] = ()
    delete_labels_for_length: tuple[str, ...] = ()
    quote_labels: tuple[str, ...] = ()
    eq_labels: tuple[tuple[str, str], ...] = ()
    eq_words: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("eq_labels", "eq_words"):
            out[key] = [list(pair) for pair in out[key]]
        for key in ("delete_labels", "delete_labels_for_length", "quote_labels"):
            out[key] = list(out[key])
        return out


_INT_KEYS = {
    "DEBUG": None,
    "MAX_ERROR": "max_error",
    "CUTOFF_LEN": "cutoff_len",
    "LABELED": "labeled",
}
_LIST_KEYS = {
    "DELETE_LABEL": "delete_labels",
    "DELETE_LABEL_FOR_LENGTH": "delete_labels_for_length",
    "QUOTE_LABEL": "quote_labels",
}
_PAIR_KEYS = {"EQ_LABEL": "eq_labels", "EQ_WORD": "eq_words"}


def parse_params(text: str, path: str = "<string>", name: str | None = None) -> EvalbParams:
    """Read the text of a ``.prm`` file."""
    values: dict = {"name": name or os.path.splitext(os.path.basename(path))[0]}
    lists: dict[str, list] = {field: [] for field in (*_LIST_KEYS.values(), *_PAIR_KEYS.values())}
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip()
        if line.startswith("#") or len(line) < 3:
            continue
        if line[0].isspace():
            # The C program reads no keyword here and ignores the line with a warning.
            raise InputError(
                "a keyword must start the line (EVALB ignores indented lines)", path, number
            )
        parts = line.split(None, 1)
        keyword, value = parts[0], (parts[1].strip() if len(parts) > 1 else "")
        if not value:
            raise InputError(f"{keyword} has no value", path, number)
        if keyword in _INT_KEYS:
            try:
                number_value = int(value)
            except ValueError:
                raise InputError(
                    f"{keyword} needs an integer, got {value!r}", path, number
                ) from None
            field = _INT_KEYS[keyword]
            if field == "labeled":
                values[field] = number_value != 0
            elif field is not None:
                values[field] = number_value
        elif keyword in _LIST_KEYS:
            lists[_LIST_KEYS[keyword]].append(value)
        elif keyword in _PAIR_KEYS:
            pair = value.split()
            if len(pair) != 2:
                raise InputError(f"{keyword} needs two values, got {value!r}", path, number)
            lists[_PAIR_KEYS[keyword]].append((pair[0], pair[1]))
        else:
            known = ", ".join([*_INT_KEYS, *_LIST_KEYS, *_PAIR_KEYS])
            raise InputError(f"unknown keyword {keyword!r} (known: {known})", path, number)
    values.update({key: tuple(items) for key, items in lists.items()})
    return EvalbParams(**values)


def load_params(spec: str) -> EvalbParams:
    """A preset name (``collins``, ``unlabeled``, ``nk``) or the path of a ``.prm`` file."""
    if spec in PRESETS:
        text = resource("evalb", f"{spec}.prm").read_text(encoding="utf-8")
        return parse_params(text, f"{spec}.prm", name=spec)
    if os.path.exists(spec):
        return parse_params(read_text(spec), spec)
    raise ConfigError(
        f"unknown EVALB parameters {spec!r}: give a preset ({', '.join(PRESETS)}) "
        "or the path of a .prm file"
    )
