"""What tells a run's dataset from another: the parts of its record (``dataset.yaml``) that
say what the data is - its normalisation, the digests of its sources and tokenizer, its whole
counts - and never where it lies (the same treebank at another path, on another machine, is
the same data).  ``report`` groups runs by it; a resume refuses a dataset whose identity is
not the run's."""

from __future__ import annotations

import re
from typing import Any

from induce.data.errors import InputError

# the record's parts that make the identity, in the order a difference is named
PARTS = ("normalization", "sources", "tokenizer", "counts")


def dataset_identity(record: dict[str, Any]) -> dict[str, Any]:
    """The identity of the dataset a record (:func:`induce.runs.directory.dataset_record`)
    describes: one entry per :data:`PARTS`."""
    return {
        "normalization": record.get("normalization"),
        "sources": _content(record.get("sources")),
        "tokenizer": _content(record.get("tokenizer")),
        "counts": _content(record.get("counts"), whole=True),
    }


def check_same_dataset(recorded: dict[str, Any], now: dict[str, Any], path: str) -> None:
    """Refuse to resume a run on the dataset ``now`` (its record; at ``path``) when its
    identity is not that of the run's ``recorded`` dataset.  A part the run's record lacks
    (written by an earlier version) is not compared."""
    before, after = dataset_identity(recorded), dataset_identity(now)
    for part in PARTS:
        if part in recorded and before[part] != after[part]:
            raise InputError(
                f"not the dataset the run was trained on: its {part} differs from the run's "
                "dataset.yaml; resume on that data (moved or copied, it is the same)",
                path,
            )


def _content(value: Any, whole: bool = False) -> Any:
    """What a record says of the data itself: its numbers, flags and digests (``sha256``),
    not its paths and other text (a treebank's folder, the files as typed); ``whole``: whole
    numbers only (counts, not derived rates, which a later version may reckon otherwise)."""
    if isinstance(value, dict):
        kept = {str(k): _content(v, whole) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None}
    if isinstance(value, int):  # bool too
        return value
    if isinstance(value, float) and not whole:
        return value
    if isinstance(value, str) and _SHA256.fullmatch(value):
        return value
    return None


_SHA256 = re.compile(r"[0-9a-f]{64}")
