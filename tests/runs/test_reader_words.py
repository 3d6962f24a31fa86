"""What a run's reader takes of a sentence depends on that run only: the same sentences
given to two runs are read by each as if fresh."""

from __future__ import annotations

from induce.data.normalize import Normalization
from induce.parse import Sentence
from induce.runs.readers import TextReader


def _reader(vocabulary: set[str]) -> TextReader:
    reader = TextReader.__new__(TextReader)  # the words are all this test reads of a run
    reader.norm = Normalization(lowercase=True)
    reader.vocab = vocabulary  # type: ignore[assignment]
    return reader


def test_one_sentence_read_by_two_runs():
    """The first run's punctuation (tokens not in its vocabulary) stayed in the sentence:
    a second run whose vocabulary has ',' was given the words without it."""
    sentence = Sentence(["a", ",", "b"], 1)
    assert _reader({"a", "b"}).words(sentence) == ["a", "b"]
    assert _reader({"a", ",", "b"}).words(sentence) == ["a", ",", "b"]
    conllu = Sentence(["a", "!", "b"], 1, marked=[False, True, False])  # UPOS PUNCT
    assert _reader({"a", "!", "b"}).words(conllu) == ["a", "b"]  # the input's own word
