"""The scores over spans a parser returns, and their read-out into trees: a chart parser's
labelled span scores (:class:`SpanScores`) and a PCFG's analyses (:class:`GrammarScores`,
:class:`RankScores` for a low-rank grammar).  What every kind of scores offers is
:class:`induce.decode.scores.Scores`'.

Shapes: ``B`` batch; a sentence of ``n`` words has fenceposts ``0 .. n``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch

from induce.data.errors import ConfigError
from induce.decode.distances import SentenceParse
from induce.decode.scores import Scores, own_copy, to_host
from induce.structs.spans import cky
from induce.structure.chart import EMPTY, tree_from_spans


@dataclass
class SpanScores(Scores):
    """A chart parser's labelled span scores (Kitaev and Klein 2018, Section 2.2):
    ``scores [B, n + 1, n + 1, C]`` for span ``(i, j)`` (fenceposts, words ``i .. j - 1``)
    and label ``c``, label 0 the empty label (score 0); ``labels`` the ``C`` label names;
    ``tags``: a sentence's preterminal tags (``None``: ``XX``), which the run fills in from
    the input or the model's tagger.

    Decoder: ``cky``, the best binary tree with a real label at the root
    (:func:`induce.structs.spans.cky`), read as the n-ary tree of its labelled spans (empty
    labels dropped, chains expanded).  :meth:`sentences` decodes the whole batch at once and
    gives each sentence its tree (``best``).  No dependencies of its own: a run adds
    head-rule ones where they are asked for."""

    scores: torch.Tensor
    labels: tuple[str, ...] = (EMPTY,)
    tags: tuple[str, ...] | None = None
    best: list[tuple[int, int, int]] | None = None  # the CKY tree's spans (label ids)
    decoders: ClassVar[tuple[str, ...]] = ("cky",)
    has_heads: ClassVar[bool] = False

    def sentence(self, k: int, n: int) -> SpanScores:
        return SpanScores(own_copy(self.scores[k, : n + 1, : n + 1]), self.labels)

    def sentences(self, lengths: Sequence[int]) -> list[Scores]:
        """Each sentence's scores with its CKY tree, decoded for the batch at once."""
        host = self.on_host()
        trees, _ = cky(host.scores, lengths)
        return [
            SpanScores(own_copy(host.scores[k, : n + 1, : n + 1]), self.labels, best=trees[k])
            for k, n in enumerate(lengths)
        ]

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        self.check_decoder(decoder)
        if not words:
            return SentenceParse(None, None)
        spans = self.best
        if spans is None:
            (spans,), _ = cky(self.scores[None], [len(words)])
        named = [(i, j, self.labels[label]) for i, j, label in spans]
        tags = list(self.tags) if self.tags is not None else ["XX"] * len(words)
        return SentenceParse(tree_from_spans(list(words), tags, named), None)

    def to_json(self) -> dict[str, Any]:
        """Every span ``[i, j, label, score]`` with its best real label (the empty label
        scores 0: CKY leaves a span out of the tree's labels where that is below 0)."""
        best = self.scores[..., 1:].max(-1)
        values, labels = best.values.tolist(), best.indices.tolist()
        n = self.scores.shape[0] - 1
        return {
            "spans": [
                [i, j, self.labels[labels[i][j] + 1], values[i][j]]
                for i in range(n)
                for j in range(i + 1, n + 1)
            ]
        }


class BestDerivations:
    """A batch's best derivations, found at the first Viterbi read-out of any of its
    sentences and kept for the others: the MBR decoder and the span marginals never need
    them, and over a grammar's expanded rules they cost ``O(n³ N S²)`` a sentence, most of a
    validation's time.  ``find() -> (viterbi [B, n + 1, n + 1], tags [B, n])`` as
    :class:`GrammarScores`' fields."""

    def __init__(self, find: Callable[[], tuple[torch.Tensor, torch.Tensor]]) -> None:
        self._find = find
        self._found: tuple[torch.Tensor, torch.Tensor] | None = None

    def get(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self._found is None:
            viterbi, tags = self._find()
            self._found = (to_host(viterbi), to_host(tags))
        return self._found


@dataclass
class GrammarScores(Scores):
    """A PCFG's analyses of a batch (Kim et al. 2019; ``z`` at its mean for a compound
    PCFG), for sentences of ``n`` words over fenceposts ``0 .. n``:

    - ``marginals [B, n + 1, n + 1]``: the posterior probability of each span of two words or
      more (``∂ log Z / ∂`` a span potential);
    - ``viterbi [B, n + 1, n + 1]``: ``1 + k`` for the spans of the best derivation,
      nonterminal ``k`` (0 elsewhere; ties as Kim et al.'s code breaks them,
      :func:`induce.structs.pcfg.viterbi`), and ``tags [B, n]`` its preterminal of each word
      (``None``: not found yet, see ``best``, or a grammar too large for the best
      derivation, see :class:`RankScores`);
    - ``mbr [B, n + 1, n + 1]``: 1 for the spans of the binary tree of the highest summed
      marginals.

    Decoders: ``viterbi`` (Kim et al.'s: labels ``NT-k`` and ``T-k``, ``k`` 1-based as the
    official trees) and ``mbr`` (the TN-PCFG repository's default; labels ``NT`` and ``T``).
    A sentence of one word, which a PCFG cannot derive, is read as ``(NT (T w))``."""

    marginals: torch.Tensor
    viterbi: torch.Tensor | None
    tags: torch.Tensor | None
    mbr: torch.Tensor
    # the batch's best derivations when they are found on demand (viterbi, tags None), and
    # which of them is this sentence's: (k, n), None for the whole batch
    best: BestDerivations | None = None
    row: tuple[int, int] | None = None
    decoders: ClassVar[tuple[str, ...]] = ("viterbi", "mbr")
    has_heads: ClassVar[bool] = False

    def sentence(self, k: int, n: int) -> GrammarScores:
        return replace(
            self,
            marginals=own_copy(self.marginals[k, : n + 1, : n + 1]),
            viterbi=None if self.viterbi is None else own_copy(self.viterbi[k, : n + 1, : n + 1]),
            tags=None if self.tags is None else own_copy(self.tags[k, :n]),
            mbr=own_copy(self.mbr[k, : n + 1, : n + 1]),
            row=(k, n),
        )

    def spans(self, decoder: str | None = None) -> list[tuple[int, int, str]]:
        """The tree's labelled spans of two words or more, outermost first."""
        decoder = self.check_decoder(decoder)
        if decoder == "viterbi":
            best = self._best()
            found = [(i, j, f"NT-{int(best[i, j])}") for i, j in best.nonzero().tolist()]
        else:
            found = [(i, j, "NT") for i, j in self.mbr.nonzero().tolist()]
        return sorted(((i, j, s) for i, j, s in found if j - i > 1), key=lambda s: (s[0], -s[1]))

    def _best(self) -> torch.Tensor:
        if self.viterbi is None and self.best is not None:
            viterbi, tags = self.best.get()
            if self.row is not None:
                k, n = self.row
                viterbi, tags = viterbi[k, : n + 1, : n + 1], tags[k, :n]
            self.viterbi, self.tags = own_copy(viterbi), own_copy(tags)
        if self.viterbi is None:
            raise ConfigError(
                "viterbi needs the grammar's dense rules, too large for this model: use mbr",
                setting="decoder",
            )
        return self.viterbi

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        decoder = self.check_decoder(decoder)
        n = len(words)
        if not n:
            return SentenceParse(None, None)
        tags = ["T"] * n
        if decoder == "viterbi":
            self._best()
            assert self.tags is not None  # with the best derivation
            tags = [f"T-{int(t) + 1}" for t in self.tags[:n]]
        spans = self.spans(decoder) if n > 1 else [(0, 1, "NT")]
        return SentenceParse(tree_from_spans(list(words), tags, spans), None)

    def to_json(self) -> dict[str, Any]:
        """Every span of two words or more ``[i, j, marginal]``."""
        n = self.marginals.shape[0] - 1
        values = self.marginals.tolist()
        return {"spans": [[i, j, values[i][j]] for i in range(n) for j in range(i + 2, n + 1)]}


@dataclass
class RankScores(GrammarScores):
    """A low-rank grammar's analyses (TN-PCFG, Yang et al. 2021): MBR first, as the TN-PCFG
    repository decodes; the best derivation only where the grammar is small enough to
    expand its rules (:class:`GrammarScores`' ``viterbi`` is ``None`` otherwise)."""

    decoders: ClassVar[tuple[str, ...]] = ("mbr", "viterbi")
