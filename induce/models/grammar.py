"""What the PCFG family shares (:mod:`induce.models.pcfg`, :mod:`induce.models.tnpcfg`): the
batch of word ids, the objective (the negative ELBO, the negative log-likelihood of a model
without a latent), the read-outs of a batch (:class:`~induce.decode.span_scores.GrammarScores`)
and ``parse``.

A grammar implements ``forward(ids, lengths) -> (nll, kl)`` (``kl = 0`` without a latent)
and ``_analyses(ids, lengths)``, usually by :func:`read_outs` over its own inside algorithm.
Shapes: ``B`` sentences, ``n`` words in the longest, ``N`` nonterminals, ``T``
preterminals.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from induce.data.errors import ConfigError
from induce.decode.span_scores import BestDerivations, GrammarScores
from induce.models.base import Loss, Model
from induce.structs import derivative
from induce.structs import spans as span_cky


@dataclass
class WordBatch:
    """Sentences as word ids: ``ids [B, n]`` (padded), ``lengths [B]`` (each >= 2 in
    training: a PCFG derives no sentence of one word)."""

    ids: torch.Tensor
    lengths: torch.Tensor

    def to(self, device: torch.device) -> WordBatch:
        return replace(self, ids=self.ids.to(device), lengths=self.lengths.to(device))

    @property
    def words(self) -> int:
        return int(self.lengths.sum())


# a partition function of span potentials [B, n + 1, n + 1] (and, for the best derivation,
# labelled ones [B, n + 1, n + 1, N] and the preterminal scores [B, n, T])
Partition = Callable[..., torch.Tensor]


class GrammarModel(Model):
    """Base of the PCFG family: the objective and the read-outs, written once."""

    scores_class: ClassVar[type[GrammarScores]] = GrammarScores

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``nll, kl [B]``: ``-log p(x | z)`` and ``KL(q(z | x) || p(z))`` (0 without a
        latent), ``z`` sampled in training mode and at its mean otherwise."""
        raise NotImplementedError

    def loss(self, batch: WordBatch, net: nn.Module | None = None) -> Loss:
        """The batch mean of ``-log p(x | z) + KL`` (the negative ELBO; the negative
        log-likelihood without a latent), logged as its parts ``nll`` and ``kl`` (per
        sentence)."""
        nll, kl = (self if net is None else net)(batch.ids, batch.lengths)
        return Loss((nll + kl).mean(), {"nll": nll.detach().mean(), "kl": kl.detach().mean()})

    @torch.no_grad()
    def sample(
        self,
        count: int,
        seed: int = 0,
        max_words: int = 100,
        excluded: frozenset[int] = frozenset(),
    ) -> list[list[int]]:
        """``count`` sentences (word ids) drawn from the grammar top-down (:meth:`drawer`),
        the same for the same ``seed``.  A draw longer than ``max_words``, or holding a word
        of ``excluded``, is dropped and drawn again (a PCFG may put mass on unbounded
        derivations), so the sentences follow the grammar conditioned on both."""
        rng = random.Random(seed)
        generator = torch.Generator().manual_seed(seed)
        return draw_sentences(count, self.drawer(rng, generator, max_words), max_words, excluded)

    def drawer(
        self, rng: random.Random, generator: torch.Generator, max_words: int
    ) -> Callable[[], list[int] | None]:
        """A function that draws one sentence a call (:func:`draw_sentence`; ``None`` once
        it passes ``max_words``), its choices from ``rng`` and a latent's from
        ``generator``."""
        raise NotImplementedError

    def log_likelihood(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``[B]``: ``log p(x | z = mean)`` (without a latent: ``log p(x)``)."""
        training = self.training
        self.eval()
        try:
            nll, _ = self(ids, lengths)
        finally:
            self.train(training)
        return -nll

    def structure(self, ids: torch.Tensor, keep: torch.Tensor) -> GrammarScores:
        """The batch's span marginals, best derivation and MBR tree (``keep [B, n]``: True at
        the words; ``z`` at its mean).  A sentence of one word is given a second, padding
        word for the computation and its analyses are left empty.  Runs outside inference
        mode (the read-outs are derivatives of the inside algorithm), without gradients to
        the weights."""
        with torch.inference_mode(False), torch.no_grad():
            ids, keep = ids.clone(), keep.clone()
            lengths = keep.sum(1)
            if ids.shape[1] < 2:
                ids = F.pad(ids, (0, 2 - ids.shape[1]), value=self.pad_id)
            return self._analyses(ids, lengths)

    def _analyses(self, ids: torch.Tensor, lengths: torch.Tensor) -> GrammarScores:
        raise NotImplementedError

    def parse(
        self, ids: torch.Tensor, lengths: torch.Tensor, decoder: str = "viterbi"
    ) -> list[list[tuple[int, int, str]]]:
        """Each sentence's binary tree as labelled spans ``(i, j, label)`` of width >= 2
        (:meth:`GrammarScores.spans`): ``viterbi`` (the best derivation, Kim et al.'s
        decoder, ``NT-k``) or ``mbr`` (the tree of the highest summed span marginals, the
        TN-PCFG repository's, ``NT``)."""
        keep = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
        with torch.no_grad():
            rows = self.structure(ids, keep).sentences(lengths.tolist())
        return [row.spans(decoder) for row in rows]  # type: ignore[attr-defined]


def draw_sentence(
    roots: list[float],
    emissions: list[list[float]],
    children: Callable[[int], tuple[int, int]],
    nt: int,
    rng: random.Random,
    max_words: int,
) -> list[int] | None:
    """One sentence drawn top-down, leftmost first: the root's nonterminal from ``roots``, a
    nonterminal's two children from ``children(symbol)`` (the grammar's own way of drawing a
    rule), a preterminal's word from its row of ``emissions`` (preterminal ``t`` is symbol
    ``nt + t``); ``None`` once the draw would pass ``max_words`` words."""
    stack = rng.choices(range(nt), roots)
    words: list[int] = []
    vocabulary = range(len(emissions[0]))
    while stack:
        symbol = stack.pop()
        if symbol >= nt:  # a preterminal
            words += rng.choices(vocabulary, emissions[symbol - nt])
            continue
        if len(words) + len(stack) + 2 > max_words:
            return None
        left, right = children(symbol)
        stack += [right, left]  # the left child on top
    return words


# Draws too long for max_words that sampling accepts before it gives up, per sentence asked
# for and at least: a grammar that almost never derives a sentence that short would
# otherwise be drawn from forever.
REJECTIONS_PER_SENTENCE, MIN_REJECTIONS = 1_000, 10_000


def draw_sentences(
    count: int,
    draw: Callable[[], list[int] | None],
    max_words: int,
    excluded: frozenset[int] = frozenset(),
) -> list[list[int]]:
    """``count`` sentences of ``draw()`` (``None``: a draw longer than ``max_words`` words),
    a draw holding a word of ``excluded`` drawn again too: the grammar's sentences given
    that they hold none.  A :class:`ConfigError` once the draws too long pass
    ``MIN_REJECTIONS + REJECTIONS_PER_SENTENCE x count``, or those holding an excluded word
    pass ``MIN_REJECTIONS`` and ``REJECTIONS_PER_SENTENCE`` per sentence kept (a rate, so
    that a large count does not draw millions first)."""
    out: list[list[int]] = []
    allowed, too_long, holding = MIN_REJECTIONS + REJECTIONS_PER_SENTENCE * count, 0, 0
    while len(out) < count:
        words = draw()
        if words is not None and not (excluded and excluded.intersection(words)):
            out.append(words)
        elif words is None:
            too_long += 1
            if too_long > allowed:
                raise ConfigError(
                    f"{max_words} is too few words for this grammar: {len(out)} of {count} "
                    f"sentences drawn, {too_long:,} draws longer; allow more words",
                    setting="max_words",
                )
        else:
            holding += 1
            if holding > MIN_REJECTIONS and holding > REJECTIONS_PER_SENTENCE * (len(out) + 1):
                raise ConfigError(
                    "in nearly every sentence this grammar draws a word that samples leave "
                    f"out: {len(out)} of {count} sentences kept, {holding:,} draws held one"
                )
    return out


def read_outs(
    marginal: Partition,
    best: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    terms: torch.Tensor,
    lengths: torch.Tensor,
) -> GrammarScores:
    """:class:`GrammarScores` of a batch over the sentences' derivable lengths (``max(n,
    2)``): ``marginal(spans)``, the log-semiring inside whose derivative in the span
    potentials is the span marginals, and ``best()``, the best derivations ``(labels [B, n
    + 1, n + 1], tags [B, n])`` (:func:`induce.structs.pcfg.viterbi`), found at the first
    Viterbi read-out (:class:`BestDerivations`).  ``terms [B, n, T]``; sentences shorter
    than 2 words get empty analyses."""
    b, n = terms.shape[:2]
    derivable = lengths.clamp(min=2)
    (marginals,) = derivative(marginal, terms.new_zeros(b, n + 1, n + 1))
    mbr = span_cky.argmax(marginals, derivable)
    one = (lengths < 2)[:, None, None]

    def find() -> tuple[torch.Tensor, torch.Tensor]:  # at the first Viterbi read-out
        labels, tags = best()
        return labels.masked_fill(one, 0), tags

    return GrammarScores(
        marginals.masked_fill(one, 0.0),
        None,
        None,
        mbr.masked_fill(one, 0),
        best=BestDerivations(find),
    )
