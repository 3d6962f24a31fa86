"""The typed scores a parser returns, and their read-out into trees.

A model's ``structure()`` returns one of these for a batch; :meth:`sentence` cuts out one
sentence's scores (on the CPU, float32) and :meth:`read_out` turns them into a
:class:`~induce.decode.distances.SentenceParse` with the decoder named.  Each kind declares the
decoders it supports, the first being its default, so that nothing outside ``induce.models``
and ``induce.decode`` needs to know which architecture produced the scores.

Shapes: ``B`` batch, ``L`` padded length; a sentence's scores drop ``B`` and cut ``L`` to its
``n`` words.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, ClassVar, TypeVar

import numpy as np
import torch

from induce.data.errors import ConfigError, InputError
from induce.decode.dependencies import arc_scores, decode, decode_arcs
from induce.decode.distances import SentenceParse, decode_sentence
from induce.decode.eisner import eisner_batch
from induce.decode.merges import divergence_distances, merge_distances, soft_levels
from induce.structs.spans import cky
from induce.structure.chart import EMPTY, tree_from_spans
from induce.structure.subwords import word_distances, word_heights

S = TypeVar("S", bound="Scores")


class NaNScores(InputError):
    """A model's scores hold NaN (the reader names its weights)."""


def named_weights(
    found: Iterator[tuple[int, S]], weights: str | os.PathLike[str]
) -> Iterator[tuple[int, S]]:
    """``found``, whose scores of NaN become an error naming the ``weights`` that gave them."""
    try:
        yield from found
    except NaNScores as err:
        raise InputError(err.reason, str(weights)) from None


class Scores:
    """What every kind of scores offers."""

    decoders: ClassVar[tuple[str, ...]]
    has_heads: ClassVar[bool] = True  # whether the read-out gives dependencies

    def sentence(self, k: int, n: int) -> Scores:
        raise NotImplementedError

    def sentences(self, lengths: Sequence[int]) -> list[Scores]:
        """Every sentence's scores, sentence ``k`` of ``lengths[k]`` words; a kind whose
        read-out works best on the whole batch at once shares it between them."""
        host = self.on_host()
        return [host.sentence(k, n) for k, n in enumerate(lengths)]

    def on_host(self: S) -> S:
        """These scores with every tensor on the CPU (floating ones as float32), moved once
        for the whole batch: cutting sentences out on the GPU and moving each would wait
        for the device three times a sentence (on an H100, most of a parse's time)."""
        if not is_dataclass(self):
            return self
        moved = {
            f.name: _to_host(getattr(self, f.name))
            for f in fields(self)
            if isinstance(getattr(self, f.name), torch.Tensor)
        }
        if any(t.is_floating_point() and bool(t.isnan().any()) for t in moved.values()):
            # no read-out of NaN is a parse (Chu-Liu/Edmonds made every word a root)
            raise NaNScores(
                "the model's scores are not numbers (NaN): its weights are damaged, or its "
                "training diverged"
            )
        return replace(self, **moved) if moved else self

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        raise NotImplementedError

    def read_heads(self, words: Sequence[str], decoder: str | None = None) -> list[int] | None:
        """``read_out(words, decoder).heads`` for an output that shows no tree (CoNLL-U); a
        kind whose heads need no tree skips the constituency read-out."""
        return self.read_out(words, decoder).heads

    def read_out_subwords(self, words: Sequence[str], align: Sequence[int]) -> SentenceParse | None:
        """The word-level parse from the scores of subwords (``align[i]``: the word of subword
        ``i``), or ``None`` where these scores have no word-level read-out."""
        return None

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def check_decoder(cls, decoder: str | None) -> str:
        """``decoder``, or the default when ``None``; an unsupported one is an error."""
        if decoder is None:
            return cls.decoders[0]
        if decoder not in cls.decoders:
            raise ConfigError(f"must be one of {', '.join(cls.decoders)}", setting="decoder")
        return decoder


def _to_host(t: torch.Tensor) -> torch.Tensor:
    return (t.float() if t.is_floating_point() else t).cpu()


def _row(t: torch.Tensor, k: int, n: int) -> torch.Tensor:
    """Sentence ``k``'s first ``n`` rows (and columns), a float32 CPU tensor of its own (a
    copy, never a view of the batch)."""
    return _own(t[k, :n, :n] if t.dim() == 3 else t[k, :n])


def _own(t: torch.Tensor) -> torch.Tensor:
    return t.to("cpu", torch.float32, copy=True)


@dataclass
class DistanceScores(Scores):
    """StructFormer's parser: ``distances [B, L]`` (entry i between words i and i+1; the last
    entry of a sentence is padding), ``heights [B, L]``, ``parents [B, L, L]`` (row i: the
    probability of each word being word i's parent).

    Decoders: ``argmax`` (Eq. 17: each word's most probable parent) and ``algorithm3``
    (dependencies from distances and heights); the tree is Algorithm 1 on the distances."""

    distances: torch.Tensor
    heights: torch.Tensor
    parents: torch.Tensor
    decoders: ClassVar[tuple[str, ...]] = ("argmax", "algorithm3")

    def sentence(self, k: int, n: int) -> DistanceScores:
        return DistanceScores(
            _row(self.distances, k, n), _row(self.heights, k, n), _row(self.parents, k, n)
        )

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        return decode_sentence(
            words,
            self.distances.tolist()[:-1],
            self.heights.tolist(),
            self.parents.numpy(),
            self.check_decoder(decoder),
        )

    def read_out_subwords(self, words: Sequence[str], align: Sequence[int]) -> SentenceParse:
        """Word distances and heights from the subwords', then Algorithm 3."""
        distances = word_distances(self.distances.tolist()[:-1], list(align))
        heights = word_heights(self.heights.tolist(), list(align))
        return decode_sentence(words, distances, heights, None, "algorithm3")

    def to_json(self) -> dict[str, Any]:
        return {
            "distances": self.distances.tolist()[:-1],
            "heights": self.heights.tolist(),
            "parents": self.parents.tolist(),
        }


@dataclass
class ArcScores(Scores):
    """A head-selection parser (UDGN): ``parents [B, L, L]`` (row i: the probability of each
    word being word i's head; diagonal 0) and ``roots [B, L]``.

    Decoders: ``mst`` (Chu-Liu/Edmonds with the model's root scores), ``argmax`` (each word's
    most probable head: the official training-time validation), ``eisner`` (the best
    projective tree), ``mst-uniform-root`` (the official UDGN test script: Chu-Liu/Edmonds per
    candidate root, all root scores equal); the constituency read-out is the binary tree the
    best projective (Eisner) tree projects to."""

    parents: torch.Tensor
    roots: torch.Tensor
    decoders: ClassVar[tuple[str, ...]] = ("mst", "argmax", "eisner", "mst-uniform-root")
    # the batch this sentence came from and its place there (set by ``sentences``)
    batch: _ArcBatch | None = field(default=None, repr=False, compare=False)
    row: int = field(default=0, repr=False, compare=False)

    def sentence(self, k: int, n: int) -> ArcScores:
        return ArcScores(_row(self.parents, k, n), _row(self.roots, k, n))

    def sentences(self, lengths: Sequence[int]) -> list[Scores]:
        """Every sentence's scores, sharing one :class:`_ArcBatch`: the first read-out runs
        Eisner over the whole batch at once."""
        host = self.on_host()
        rows = [host.sentence(k, n) for k, n in enumerate(lengths)]
        batch = _ArcBatch(rows)
        for k, row in enumerate(rows):
            row.batch, row.row = batch, k
        return list(rows)

    def arcs(self) -> np.ndarray:
        """``[n, n + 1]`` log-probability arc scores (:func:`arc_scores`)."""
        if self.batch is not None:
            return self.batch.arcs(self.row)
        return arc_scores(self.parents.numpy(), self.roots.numpy())

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        decoder = self.check_decoder(decoder)
        projective = None if self.batch is None else self.batch.eisner(self.row)
        return decode_arcs(words, self.arcs(), decoder, projective)

    def read_heads(self, words: Sequence[str], decoder: str | None = None) -> list[int] | None:
        """The heads alone: no Eisner for the constituency read-out (UDGN's own test loop
        makes no tree either), unless the decoder is Eisner's."""
        decoder = self.check_decoder(decoder)
        if decoder == "eisner":
            return self.read_out(words, decoder).heads
        return decode(self.arcs(), decoder)

    def to_json(self) -> dict[str, Any]:
        return {"parents": self.parents.tolist(), "roots": self.roots.tolist()}


class _ArcBatch:
    """The sentences of one batch, decoded together where that pays: arc scores once per
    sentence, Eisner over the whole batch (:func:`eisner_batch`) when a first sentence needs
    it.  The results are exactly the sentence-by-sentence ones."""

    def __init__(self, rows: Sequence[ArcScores]) -> None:
        # the sentences' tensors, not the sentences: no reference cycle to wait for the GC
        self.parents = [row.parents for row in rows]
        self.roots = [row.roots for row in rows]
        self._arcs: list[np.ndarray | None] = [None] * len(rows)
        self._eisner: list[list[int]] | None = None

    def arcs(self, k: int) -> np.ndarray:
        found = self._arcs[k]
        if found is None:
            found = self._arcs[k] = arc_scores(self.parents[k].numpy(), self.roots[k].numpy())
        return found

    def eisner(self, k: int) -> list[int]:
        if self._eisner is None:
            lengths = [len(roots) for roots in self.roots]
            longest = max(lengths)
            padded = np.full((len(lengths), longest, longest + 1), -np.inf)
            for b, n in enumerate(lengths):
                padded[b, :n, : n + 1] = self.arcs(b)
            self._eisner = eisner_batch(padded, lengths)
        return self._eisner[k]


@dataclass
class MergeScores(Scores):
    """Combiner's connections: ``supports [B, N, L, L]`` (bool: which tokens each token is
    connected to after each layer) and ``attention [B, N, L, L]`` (each layer's ``M~``).

    Decoders (``induce.decode.merges``): ``merge`` (the layer at which adjacent words join,
    ties by their mutual attention), ``divergence`` (Jensen-Shannon divergence of adjacent
    attention rows) and, where the model has neighbour links (``links [B, N, L - 1]``,
    ``hierarchy: constituent``), ``levels`` (soft merge levels); the tree is Algorithm 1 on
    those distances, with no dependencies."""

    supports: torch.Tensor
    attention: torch.Tensor
    links: torch.Tensor | None = None
    decoders: ClassVar[tuple[str, ...]] = ("merge", "divergence", "levels")
    has_heads: ClassVar[bool] = False

    def sentence(self, k: int, n: int) -> MergeScores:
        links = None if self.links is None else _own(self.links[k, :, : max(n - 1, 0)])
        return MergeScores(
            self.supports[k, :, :n, :n].to("cpu", copy=True),
            _own(self.attention[k, :, :n, :n]),
            links,
        )

    def distances(self, decoder: str | None = None) -> list[float]:
        chosen = self.check_decoder(decoder)
        if chosen == "divergence":
            return divergence_distances(self.attention)
        if chosen == "levels":
            if self.links is None:
                raise ConfigError(
                    "levels needs a Combiner with hierarchy: constituent (neighbour links)",
                    setting="decoder",
                )
            return soft_levels(self.links)
        return merge_distances(self.supports, self.attention)

    def read_out(self, words: Sequence[str], decoder: str | None = None) -> SentenceParse:
        return decode_sentence(words, self.distances(decoder), None)

    def read_out_subwords(self, words: Sequence[str], align: Sequence[int]) -> SentenceParse:
        """Subword distances contracted to words (the split after a word's last piece)."""
        return decode_sentence(words, word_distances(self.distances(), list(align)), None)

    def to_json(self) -> dict[str, Any]:
        out = {
            "distances": self.distances("merge"),
            "divergences": self.distances("divergence"),
        }
        if self.links is not None:
            out["levels"] = self.distances("levels")
        return out


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
        return SpanScores(_own(self.scores[k, : n + 1, : n + 1]), self.labels)

    def sentences(self, lengths: Sequence[int]) -> list[Scores]:
        """Each sentence's scores with its CKY tree, decoded for the batch at once."""
        host = self.on_host()
        trees, _ = cky(host.scores, lengths)
        return [
            SpanScores(_own(host.scores[k, : n + 1, : n + 1]), self.labels, best=trees[k])
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
            self._found = (_to_host(viterbi), _to_host(tags))
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
            marginals=_own(self.marginals[k, : n + 1, : n + 1]),
            viterbi=None if self.viterbi is None else _own(self.viterbi[k, : n + 1, : n + 1]),
            tags=None if self.tags is None else _own(self.tags[k, :n]),
            mbr=_own(self.mbr[k, : n + 1, : n + 1]),
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
            self.viterbi, self.tags = _own(viterbi), _own(tags)
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
