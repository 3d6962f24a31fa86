"""Vocabularies from elsewhere: a ``vocab.json`` (a run's or a dataset's), the reference
code's pickled ``Dictionary`` (StructFormer's ``dict.pkl``, UDGN's ``ptb-dict.pkl``: read by an
unpickler that admits that class alone, so no code runs), or a word list in id order."""

from __future__ import annotations

import copyreg
import io
import os
import pickle
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from induce.data.errors import InputError
from induce.data.reading import decode_utf8, read_text
from induce.data.vocab import MASK, PAD, UNK, Vocabulary


def load_vocabulary(path: str | os.PathLike[str]) -> Vocabulary:
    """A fixed vocabulary for a new dataset: ``vocab.json``, a reference dictionary pickle or
    a word list (``<unk>``, ``<pad>`` and ``<mask>`` among them)."""
    file = Path(path)
    if file.is_dir():
        file = file / "vocab.json"  # a run or dataset directory
    if file.suffix == ".json":
        vocab = Vocabulary.from_json(read_text(file), str(file))
        return Vocabulary(vocab.tokens, {}, vocab.specials, {"source": str(file.resolve())})
    words = read_dictionary(file)
    return Vocabulary(words, {}, (UNK, PAD, MASK), {"source": str(file.resolve())})


# -- the dictionary ------------------------------------------------------------------------


class _Dictionary:
    """Stands in for the reference ``Dictionary`` when unpickling: attributes only."""

    idx2word: Any
    word2idx: Any


# What the unpickler admits: the reference Dictionary (pickled from data_penn.py in
# StructFormer, data_dep.py in UDGN; the module name depends on how the script was started),
# mapped to the stand-in, and what protocols 0-1 need to rebuild a plain object.
_ADMITTED: dict[tuple[str, str], Any] = {
    **{
        (module, "Dictionary"): _Dictionary
        for module in ("structformer.data_penn", "data_penn", "structformer.data_ptb", "data_ptb")
    },
    ("data_dep", "Dictionary"): _Dictionary,
    ("copyreg", "_reconstructor"): copyreg.__dict__["_reconstructor"],  # not in the stubs
    ("builtins", "object"): object,
}


class _DictionaryUnpickler(pickle.Unpickler):
    """Admits the reference Dictionary and nothing that runs code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ADMITTED:
            return _ADMITTED[module, name]
        raise pickle.UnpicklingError(f"refused to load {module}.{name}")


def read_dictionary(path: str | os.PathLike[str]) -> list[str]:
    """The words in id order, from a pickled reference ``Dictionary`` or a word list (one
    word per line)."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(file)) from None
    pickled = data[:1] == b"\x80"  # a pickle of protocol 2 or later
    if pickled:
        try:
            obj = _DictionaryUnpickler(io.BytesIO(data)).load()
        except Exception as err:  # refused, torn or foreign: pickles fail in many ways
            why = err if isinstance(err, pickle.UnpicklingError) else err.__class__.__name__
            raise InputError(f"not a reference dictionary pickle: {why}", str(file)) from None
        words = _words_of(obj, str(file))
        if words is None:
            raise InputError("the pickle holds no idx2word list of words", str(file))
    else:
        words = word_lines(data, str(file))
        for number, word in enumerate(words, 1):
            if not word.strip() or word != word.strip() or " " in word:
                raise InputError("expected one word per line, without spaces", str(file), number)
    # a pickle's list has no lines: its position is said in the message instead
    refuse_repeat(words, "the dictionary lists {} twice", file, "idx2word" if pickled else None)
    missing = [t for t in (UNK, PAD, MASK) if t not in words]
    if missing:
        raise InputError(f"the dictionary has no {missing[0]} token", str(file))
    return words


def refuse_repeat(
    items: Sequence[Hashable], message: str, file: Path, unnumbered: str | None = None
) -> None:
    """An :class:`InputError` naming the first item listed before (``message.format`` of its
    repr): at its line, one item per line, or for the list ``unnumbered`` (no lines: a
    pickle's) by its position in it."""
    seen: set[Hashable] = set()
    for k, item in enumerate(items):
        if item in seen:
            where = f" (item {k + 1} of {unnumbered})" if unnumbered else ""
            line = None if unnumbered else k + 1
            raise InputError(message.format(repr(item)) + where, str(file), line)
        seen.add(item)


def word_lines(data: bytes, name: str) -> list[str]:
    """The lines of a word list as written: strict UTF-8 (a byte-order mark dropped), LF or
    CRLF line ends, the last newline optional.  A NUL byte (a binary file) or a carriage
    return alone is refused at its line, as every text reader does: a word list read any
    looser would shift every id after the bad line."""
    text = decode_utf8(data, name)
    return text.replace("\r\n", "\n").removesuffix("\n").split("\n")


def _words_of(obj: Any, file: str) -> list[str] | None:
    """The words in id order of a pickled dictionary: its ``idx2word`` (checked against its
    ``word2idx`` where it has one), or a bare ``word2idx``, whose ids must run 0, 1, 2, ...
    (a gap or a repeat would give every later word another word's embedding row)."""
    index = getattr(obj, "word2idx", obj if isinstance(obj, dict) else None)
    words = getattr(obj, "idx2word", obj)
    if isinstance(words, dict):  # a bare word2idx
        words = [w for w, _ in sorted(words.items(), key=lambda item: item[1])]
    if not (isinstance(words, list) and all(isinstance(w, str) for w in words)):
        return None
    if isinstance(index, dict):
        for k, word in enumerate(words):
            if index.get(word) != k:
                raise InputError(
                    f"word2idx gives {word!r} the id {index.get(word)!r}, where its place in "
                    f"the dictionary is {k}: ids must run 0, 1, 2, ... without a gap or a "
                    "repeat",
                    file,
                )
    return words
