"""Vocabularies: token <-> id, built from training counts, stored as ``vocab.json``."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from induce.data.errors import InputError

UNK, PAD, MASK = "<unk>", "<pad>", "<mask>"
SPECIALS = (UNK, PAD, MASK)  # ids 0, 1, 2, as in the StructFormer/UDGN dictionaries


@dataclass
class Vocabulary:
    """Tokens in id order, specials first; ``counts`` are the training counts."""

    tokens: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    specials: tuple[str, ...] = SPECIALS
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index = {token: i for i, token in enumerate(self.tokens)}
        if len(self._index) != len(self.tokens):
            raise ValueError("the vocabulary lists a token twice")

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self._index

    def id(self, token: str) -> int:
        """The token's id; ``<unk>``'s for unknown tokens."""
        found = self._index.get(token)
        return found if found is not None else self._index[UNK]

    def ids(self, tokens: Iterable[str]) -> list[int]:
        index, unk = self._index, self._index.get(UNK, 0)
        return [index.get(t, unk) for t in tokens]

    def digest(self) -> str:
        """The SHA-256 of the tokens in id order: what a model's embedding rows mean (the
        counts and settings do not change them).  Saved with a run's weights, so that a
        ``vocab.json`` edited, reordered or copied from another run is refused, not read."""
        text = json.dumps(self.tokens, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def to_json(self) -> str:
        return (
            json.dumps(
                {
                    "tokens": self.tokens,
                    "specials": list(self.specials),
                    "settings": self.settings,
                    "counts": self.counts,
                },
                ensure_ascii=False,
                indent=0,
            )
            + "\n"
        )

    @classmethod
    def from_json(cls, text: str, path: str = "vocab.json") -> Vocabulary:
        """A vocabulary as :meth:`to_json` writes it, checked: its tokens are distinct
        strings, among them ``<unk>`` (every unknown word's id) and each of its
        ``specials`` (``<unk> <pad> <mask>`` where the file names none).  A problem is one
        line naming ``path`` (:class:`InputError`)."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise InputError(f"not a vocabulary file ({err.__class__.__name__})", path) from None
        if not isinstance(data, dict) or "tokens" not in data:
            raise InputError('not a vocabulary file: expected an object with "tokens"', path)
        tokens = data["tokens"]
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise InputError('not a vocabulary file: "tokens" must be a list of strings', path)
        specials = data.get("specials", list(SPECIALS))
        if not isinstance(specials, list) or not all(isinstance(t, str) for t in specials):
            raise InputError('not a vocabulary file: "specials" must be a list of strings', path)
        counts, settings = data.get("counts", {}), data.get("settings", {})
        for key, value in (("counts", counts), ("settings", settings)):
            if not isinstance(value, dict):
                raise InputError(f'not a vocabulary file: "{key}" must be an object', path)
        seen: set[str] = set()
        for token in tokens:
            if token in seen:
                raise InputError(f"the vocabulary lists the token {token!r} twice", path)
            seen.add(token)
        missing = [t for t in (UNK, *specials) if t not in seen]
        if missing:
            raise InputError(f"the vocabulary has no {missing[0]} token", path)
        return cls(tokens, dict(counts), tuple(specials), dict(settings))


def build_vocabulary(
    counts: Counter,
    min_freq: int = 1,
    max_size: int | None = None,
    specials: tuple[str, ...] = SPECIALS,
) -> Vocabulary:
    """Specials, then training tokens seen at least ``min_freq`` times, most frequent first
    (ties by token, so the order is reproducible), cut to ``max_size`` entries in all."""
    if min_freq < 1:
        raise ValueError(f"min_freq must be at least 1, got {min_freq}")
    kept = sorted(
        (t for t, c in counts.items() if c >= min_freq and t not in specials),
        key=lambda t: (-counts[t], t),
    )
    if max_size is not None:
        if max_size < len(specials):
            raise ValueError(
                f"max_size {max_size} leaves no room beside {len(specials)} special tokens"
            )
        kept = kept[: max_size - len(specials)]
    settings = {
        "min_freq": min_freq,
        "max_size": max_size,
        "training_types": len(counts),
        "training_tokens": sum(counts.values()),
    }
    return Vocabulary(list(specials) + kept, {t: counts[t] for t in kept}, specials, settings)
