"""How a trained run reads sentences into parser scores: the one parse path's
objective-specific part (``induce parse`` and the Python API's ``Model.parse``).

A reader turns a sentence into the words its model reads (marking the tokens it leaves out)
and batches of those words into one :class:`~induce.decode.scores.Scores` per sentence; the
read-out into trees, punctuation and output formats are the same for every architecture
(:mod:`induce.parse`).  Each kind of training (the registry's ``trains_on``) has its reader
(:data:`READERS`), as it has its trainer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from induce.data.architectures import architecture
from induce.data.errors import ConfigError
from induce.data.normalize import is_punctuation
from induce.decode.scores import Scores, named_weights
from induce.models.base import Model
from induce.runs.chart import ChartReader
from induce.runs.device import inference_autocast
from induce.runs.directory import Run
from induce.runs.inference import sentence_scores


class Reader(Protocol):
    """``reads_punctuation``: every token goes to the model (else the punctuation it never
    saw is left out and attached back); ``heads_by_rules``: its trees get dependencies by
    head rules (its scores have none of their own)."""

    reads_punctuation: bool
    heads_by_rules: bool

    @property
    def model(self) -> Model: ...

    def words(self, sentence: Any) -> list[str]:
        """The words the model reads of ``sentence`` (its ``punct`` flags set: True where
        a token is left out)."""
        ...

    def scores(
        self, sentences: Sequence[Any], words: Sequence[Sequence[str]], batch_tokens: int
    ) -> Iterator[tuple[int, Scores]]:
        """``(index, scores)`` for every sentence (all with words), in any order."""
        ...


class TextReader:
    """The parser of a model trained on text (a masked language model, a grammar): words
    normalised as its dataset's were; a token of punctuation that is not in the vocabulary
    (the model never saw it) is left out.  A sentence of normalised text (``normalized``: a
    dataset's own ``SPLIT.txt``) is read as the dataset reads it: every token as it stands."""

    reads_punctuation = False
    heads_by_rules = False

    def __init__(
        self, run: Run, weights: str = "best", device: str = "auto", bf16: bool = False
    ) -> None:
        self.model = run.load_model(weights, device)
        self.weights_file = run.weights(weights)
        if type(self.model).scores_class is None:
            raise ConfigError(
                f"a {run.config.arch} model induces no structure: parse needs a run of a "
                "model with a parser"
            )
        self.bf16 = bf16
        self.norm = run.normalization
        self.vocab = run.vocab
        self.specials = run.specials
        self.device = next(self.model.parameters()).device

    def words(self, sentence: Any) -> list[str]:
        if sentence.normalized:
            sentence.punct = [False] * len(sentence.tokens)
            return list(sentence.tokens)
        flags = sentence.marked or [False] * len(sentence.tokens)
        normalised = self.norm.words(sentence.tokens) if sentence.tokens else []
        sentence.punct = [
            f or (is_punctuation(t) and w not in self.vocab)
            for f, t, w in zip(flags, sentence.tokens, normalised)
        ]
        return [w for w, p in zip(normalised, sentence.punct) if not p]

    def scores(
        self, sentences: Sequence[Any], words: Sequence[Sequence[str]], batch_tokens: int
    ) -> Iterator[tuple[int, Scores]]:
        found = sentence_scores(
            self.model,
            [self.vocab.ids(w) for w in words],
            self.specials,
            batch_tokens,
            self.device,
            lambda: inference_autocast(self.device, self.bf16),
        )
        return named_weights(found, self.weights_file)


READERS: dict[str, type[TextReader] | type[ChartReader]] = {
    "text": TextReader,
    "trees": ChartReader,
}


def open_reader(run: Run, weights: str, device: str, bf16: bool) -> Reader:
    """The reader of ``run``'s kind of training, with its ``weights`` on ``device``."""
    return READERS[architecture(run.config.arch).trains_on](run, weights, device, bf16)
