"""Subwords with word alignment, through the ``tokenizers`` library (offline: the tokenizer
files are given, nothing is downloaded): GPT-2 byte-level BPE, or BERT's WordPiece (for a
model that starts from a BERT checkpoint, whose embedding rows follow BERT's vocabulary).

Each sentence is encoded as pre-tokenised words - with GPT-2's spacing convention, a space
before every word but the first, as in running text - so every subword belongs to one word.
The dataset keeps, for each subword, the index of its word (``{split}.align``); word-level
structures are recovered from subword ones with
:func:`~induce.structure.subwords.word_distances` and
:func:`~induce.structure.subwords.word_heights`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from induce.data.errors import ConfigError, InputError
from induce.data.vocab import MASK, PAD, UNK, Vocabulary

if TYPE_CHECKING:
    from induce.data.dataset import DatasetWriter


# BERT's special tokens and ours: the vocabulary keeps BERT's ids under our names
_BERT_SPECIALS = {"[UNK]": UNK, "[PAD]": PAD, "[MASK]": MASK}


def _every_word_a_piece(
    pieces: list[str], word_ids: list[int], n_words: int
) -> tuple[list[str], list[int]]:
    """``pieces`` and their words' indices, with :data:`UNK` for a word that got no piece:
    BERT's normaliser deletes some characters (U+FFFD, zero-width ones), so a word of only
    those vanished and left the words after it misaligned (training then stopped on the
    alignment); it reads as the unknown word, as BERT reads a word it cannot split."""
    if len(set(word_ids)) == n_words:
        return pieces, word_ids
    of_word: list[list[str]] = [[] for _ in range(n_words)]
    for piece, word in zip(pieces, word_ids):
        of_word[word].append(piece)
    out: list[str] = []
    ids: list[int] = []
    for word, own in enumerate(of_word):
        own = own or [UNK]
        out.extend(own)
        ids.extend([word] * len(own))
    return out, ids


class SubwordTokenizer:
    """``kind="gpt2"``: a byte-level BPE tokenizer read from ``tokenizer.json`` or
    ``vocab.json`` + ``merges.txt`` (``space_first``: also put a space before the first
    word).  ``kind="wordpiece"``: BERT's WordPiece from ``tokenizer.json`` or ``vocab.txt``
    (``lowercase`` as an uncased BERT)."""

    def __init__(
        self,
        folder: str | Path,
        space_first: bool = False,
        kind: str = "gpt2",
        lowercase: bool = True,
    ) -> None:
        self.kind = kind
        if kind == "wordpiece":
            if space_first:  # WordPiece's pieces carry no space: it would do nothing
                raise ConfigError("is for GPT-2 subwords, not WordPiece", setting="space_first")
            self._wordpiece(Path(folder), lowercase)
            self.folder, self.space_first = Path(folder), False
            self._check_ids()
            return
        try:
            from tokenizers import Tokenizer, decoders, pre_tokenizers
            from tokenizers.models import BPE
        except ImportError:  # pragma: no cover - a dependency of induce
            raise InputError("the tokenizers library is not installed") from None
        base = Path(folder)
        if not base.is_dir():
            raise InputError("no such tokenizer directory", str(base))
        whole = base / "tokenizer.json"
        vocab, merges = base / "vocab.json", base / "merges.txt"
        try:
            if whole.is_file():
                self._tok = Tokenizer.from_file(str(whole))
                self.source = [whole]
            elif vocab.is_file() and merges.is_file():
                self._tok = Tokenizer(BPE.from_file(str(vocab), str(merges)))
                self._tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
                self._tok.decoder = decoders.ByteLevel()
                self.source = [vocab, merges]
            else:
                raise InputError(
                    "needs tokenizer.json, or vocab.json and merges.txt (GPT-2 "
                    "byte-level BPE files)",
                    str(base),
                )
        except InputError:
            raise
        except Exception as err:  # the library's own errors are not ours to name
            raise InputError(f"cannot read the tokenizer: {err}", str(base)) from None
        self.folder = base
        self.space_first = space_first
        self._check_ids()

    def _check_ids(self) -> None:
        """The tokenizer's ids run 0, 1, 2, ...: they are the vocabulary's rows, which
        :meth:`vocabulary` lists in id order.  Checked as it is read, before any corpus is."""
        ids = sorted(self._tok.get_vocab(with_added_tokens=True).values())
        if ids != list(range(len(ids))):
            raise InputError(
                "the tokenizer's ids do not run 0, 1, 2, ... (a token listed twice?): the "
                "vocabulary would not keep them",
                str(self.source[0]),
            )

    def _wordpiece(self, base: Path, lowercase: bool) -> None:
        from tokenizers import Tokenizer, normalizers, pre_tokenizers
        from tokenizers.models import WordPiece

        whole, vocab = base / "tokenizer.json", base / "vocab.txt"
        try:
            if whole.is_file():
                self._tok = Tokenizer.from_file(str(whole))
                self.source = [whole]
            elif vocab.is_file():
                _refuse_repeated_lines(vocab)
                self._tok = Tokenizer(WordPiece.from_file(str(vocab), unk_token="[UNK]"))
                self._tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
                self._tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
                self.source = [vocab]
            else:
                raise InputError("needs tokenizer.json or vocab.txt (BERT WordPiece)", str(base))
        except InputError:
            raise
        except Exception as err:
            raise InputError(f"cannot read the tokenizer: {err}", str(base)) from None
        missing = [t for t in _BERT_SPECIALS if self._tok.token_to_id(t) is None]
        if missing:
            raise InputError(f"the WordPiece vocabulary has no {missing[0]}", str(base))

    def encode(self, words: Sequence[str]) -> tuple[list[str], list[int]]:
        """Subword strings and, for each, the 0-based index of its word."""
        if self.kind == "wordpiece":
            encoding = self._tok.encode(list(words), is_pretokenized=True, add_special_tokens=False)
            pieces = [_BERT_SPECIALS.get(t, t) for t in encoding.tokens]
        else:
            spaced = [
                w if i == 0 and not self.space_first else " " + w for i, w in enumerate(words)
            ]
            encoding = self._tok.encode(spaced, is_pretokenized=True, add_special_tokens=False)
            pieces = list(encoding.tokens)
        ids = [int(i) for i in encoding.word_ids]  # type: ignore[arg-type]
        return _every_word_a_piece(pieces, ids, len(words))

    def vocabulary(self) -> Vocabulary:
        """The tokenizer's tokens in id order (BERT's specials under our names), then the
        specials a masked LM needs that it lacks."""
        vocab = self._tok.get_vocab(with_added_tokens=True)
        tokens = [t for t, _ in sorted(vocab.items(), key=lambda item: item[1])]
        if self.kind == "wordpiece":
            tokens = [_BERT_SPECIALS.get(t, t) for t in tokens]
        extra = [s for s in (UNK, PAD, MASK) if s not in tokens]
        settings = {"subwords": self.kind, "subword_vocabulary": len(tokens)}
        return Vocabulary(tokens + extra, {}, (UNK, PAD, MASK), settings)

    def describe(self) -> dict[str, Any]:
        digest = hashlib.sha256()
        for path in self.source:
            digest.update(path.read_bytes())
        return {
            "kind": "gpt2-bpe" if self.kind == "gpt2" else "bert-wordpiece",
            "files": [str(p) for p in self.source],
            "sha256": digest.hexdigest(),
            "space_before_first_word": self.space_first,
        }

    def save(self, writer: DatasetWriter) -> None:
        """Store the tokenizer in the dataset as ``tokenizer.json``."""
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "tokenizer.json"
            self._tok.save(str(target))
            writer.copy_file(target, "tokenizer.json")


def _refuse_repeated_lines(vocab: Path) -> None:
    """A token listed twice in BERT's ``vocab.txt`` (one per line, its id the line's number
    from 0, as the tokenizers library reads it, trailing blanks dropped) takes the later id
    and leaves a gap: every later token's id would differ from its place in the list."""
    from induce.data.dictionaries import refuse_repeat, word_lines

    lines = [line.rstrip() for line in word_lines(vocab.read_bytes(), str(vocab))]
    refuse_repeat(lines, "the WordPiece vocabulary lists {} twice", vocab)
