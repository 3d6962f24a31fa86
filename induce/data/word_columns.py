"""The columns of a dependency file's words that no :class:`~induce.data.types.DepTree`
holds as written: LEMMA, the coarse and the fine tag and FEATS.  ``induce convert deps``
carries them from CoNLL-U to CoNLL-X and back, mapped as the Universal Dependencies tools map
the two formats: CoNLL-X's CPOSTAG is CoNLL-U's UPOS, its POSTAG the XPOS, LEMMA and FEATS
stay.  What has no place in
the other format (CoNLL-U's DEPS and MISC, CoNLL-X's PHEAD and PDEPREL) is written ``_``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conllu.models import TokenList

# the 17 Universal POS tags: a CoNLL-X coarse tag becomes a UPOS only if it is one (files
# converted from PTB trees carry PTB tags in both tag columns, and no UPOS)
UPOS = frozenset(
    "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()
)


@dataclass(frozen=True)
class WordColumns:
    """One sentence's LEMMA, coarse tag (UPOS, CPOSTAG), fine tag (XPOS, POSTAG) and FEATS
    columns, a value per word, ``_`` where unknown.  The fine tag is the column as written
    (a tree's tag falls back on the coarse one where it is ``_``)."""

    lemmas: tuple[str, ...]
    coarse: tuple[str, ...]
    fine: tuple[str, ...]
    feats: tuple[str, ...]

    def __post_init__(self) -> None:
        if not len(self.lemmas) == len(self.coarse) == len(self.fine) == len(self.feats):
            raise ValueError("a column per word: the lemmas, tags and feats differ in length")

    def __len__(self) -> int:
        return len(self.lemmas)

    def subset(self, kept: Sequence[int]) -> WordColumns:
        """The columns of the words at 0-based positions ``kept``."""
        return WordColumns(*(tuple(column[i] for i in kept) for column in self._columns()))

    def _columns(self) -> tuple[tuple[str, ...], ...]:
        return self.lemmas, self.coarse, self.fine, self.feats

    def as_conllu(self, i: int) -> tuple[str, str, str, str]:
        """LEMMA, UPOS, XPOS and FEATS of word ``i`` (0-based) for CoNLL-U."""
        coarse = self.coarse[i]
        return self.lemmas[i], coarse if coarse in UPOS else "_", self.fine[i], self.feats[i]

    def as_conllx(self, i: int) -> tuple[str, str, str, str]:
        """LEMMA, CPOSTAG, POSTAG and FEATS of word ``i`` for CoNLL-X: without a coarse tag,
        CPOSTAG repeats the POSTAG, as a file written without these columns has it."""
        coarse, fine = self.coarse[i], self.fine[i]
        return self.lemmas[i], coarse if coarse != "_" else fine, fine, self.feats[i]

    def upos(self) -> tuple[str, ...] | None:
        """The coarse tags when every one is a UPOS name (else ``None``: CoNLL-X files
        converted from trees carry PTB tags there)."""
        return self.coarse if all(tag in UPOS for tag in self.coarse) else None


def conllu_columns(tokens: TokenList) -> WordColumns:
    """The columns of a CoNLL-U sentence's words (multiword tokens and empty nodes left
    out), as :func:`induce.data.conll.parse_conllu_block` read them."""
    words = [t for t in tokens if isinstance(t["id"], int)]
    return WordColumns(
        tuple(t["lemma"] or "_" for t in words),
        tuple(t["upos"] or "_" for t in words),
        tuple(t["xpos"] or "_" for t in words),
        tuple(t["feats"] or "_" for t in words),
    )
