"""JSON Lines: one JSON object per line, blank lines skipped."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from induce.data.errors import InputError
from induce.data.reading import read_text


def parse_jsonl(text: str, path: str = "<string>") -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(
                f"not valid JSON: {err.msg} (column {err.colno})", path, number
            ) from None
        except (ValueError, RecursionError) as err:  # huge integers, absurd nesting
            reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)
            raise InputError(f"not valid JSON: {reason}", path, number) from None
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {type(value).__name__}", path, number)
        out.append((number, value))
    return out


def read_jsonl(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    return parse_jsonl(read_text(path), str(path))


def format_jsonl(records: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records)
