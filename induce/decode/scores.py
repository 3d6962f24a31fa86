"""The typed scores a parser returns, and their read-out into trees.

A model's ``structure()`` returns one of these for a batch; :meth:`sentence` cuts out one
sentence's scores (on the CPU, float32) and :meth:`read_out` turns them into a
:class:`~induce.decode.distances.SentenceParse` with the decoder named.  Each kind declares the
decoders it supports, the first being its default, so that nothing outside ``induce.models``
and ``induce.decode`` needs to know which architecture produced the scores.  The kinds over
spans (a chart parser's, a grammar's) are :mod:`induce.decode.span_scores`'.

Shapes: ``B`` batch, ``L`` padded length; a sentence's scores drop ``B`` and cut ``L`` to its
``n`` words.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, ClassVar, TypeVar

import numpy as np
import torch

from induce.data.errors import ConfigError, InputError
from induce.decode.dependencies import arc_scores, decode, decode_arcs
from induce.decode.distances import SentenceParse, decode_sentence
from induce.decode.eisner import eisner_batch
from induce.decode.merges import divergence_distances, merge_distances, soft_levels
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
            f.name: to_host(getattr(self, f.name))
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


def to_host(t: torch.Tensor) -> torch.Tensor:
    """``t`` on the CPU, floating point as float32 (a view where it is there already)."""
    return (t.float() if t.is_floating_point() else t).cpu()


def _row(t: torch.Tensor, k: int, n: int) -> torch.Tensor:
    """Sentence ``k``'s first ``n`` rows (and columns), a float32 CPU tensor of its own (a
    copy, never a view of the batch)."""
    return own_copy(t[k, :n, :n] if t.dim() == 3 else t[k, :n])


def own_copy(t: torch.Tensor) -> torch.Tensor:
    """``t`` as a float32 CPU tensor of its own: a copy, never a view of the batch."""
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
        links = None if self.links is None else own_copy(self.links[k, :, : max(n - 1, 0)])
        return MergeScores(
            self.supports[k, :, :n, :n].to("cpu", copy=True),
            own_copy(self.attention[k, :, :n, :n]),
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
