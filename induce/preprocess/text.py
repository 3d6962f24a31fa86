"""``induce preprocess mikolov`` and ``induce preprocess text``: datasets from plain corpora.

Training text may be whitespace-tokenised lines, CoNLL-U, or column files whose first column is
the word and, when there is one, the second its tag (the CoNLL-2000 chunking files); validation
and test sets may also be gold trees, whose words are read with the same normalisation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from induce.data.config import check_choice, check_choices
from induce.data.conll import parse_conllu_block
from induce.data.dataset import DatasetWriter
from induce.data.errors import InputError
from induce.data.normalize import Normalization, is_upos_tagset
from induce.data.vocab import Vocabulary
from induce.preprocess.common import (
    Progress,
    SplitWriter,
    check_subword_vocabulary,
    manifest,
    read_tree_file,
)
from induce.preprocess.subwords import SubwordTokenizer
from induce.preprocess.treetext import ReadStats, combined_digest, read_file

MIKOLOV_FILES = {"train": "ptb.train.txt", "valid": "ptb.valid.txt", "test": "ptb.test.txt"}


TextFormat = Literal["auto", "lines", "conllu", "columns"]
TEXT_FORMATS: tuple[TextFormat, ...] = get_args(TextFormat)
_LOWER = re.compile(r"[a-z]")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")  # a sentence break, also in a CRLF file
Token = tuple[str, str]  # (tag or "", word)


def detect_text_format(path: str, text: str) -> TextFormat:
    """The format of a text corpus file, from its name or its first 200 non-blank lines.

    * ``conllu`` (CoNLL-X reads alike): a ``.conllu`` file, or one with CoNLL rows (6 or
      more tab-separated fields, the first starting with a digit) that either starts like
      one (its first line a ``#`` comment or a CoNLL row) or has them for at least half of
      its lines that are not comments; also one whose first rows are CoNLL rows with spaces
      for tabs (numbered 1, 2, 3, six fields or more), so that the first is the error,
      not a sentence of ten words;
    * ``columns``: sentences separated by blank lines, and at least 90% of the lines 2-6
      fields with a tag second (no lower-case letter, as in the CoNLL-2000 files);
    * ``lines`` (one sentence a line) otherwise.

    A file that looks like CoNLL-U or columns is read as that even where a line does not
    fit, so that line is an error naming it rather than a reason to read every row as a
    sentence.  Naming the format overrides the guess."""
    if path.endswith(".conllu"):
        return "conllu"
    sample = [line for line in text.split("\n", 400)[:400] if line.strip()][:200]
    if not sample:
        return "lines"
    rows = [line for line in sample if not line.startswith("#")]
    conll = sum(1 for line in rows if _conll_row(line))
    if conll and (sample[0].startswith("#") or _conll_row(sample[0]) or 2 * conll >= len(rows)):
        return "conllu"
    if _spaced_conll(rows):  # read as CoNLL-U, its first row is the error (not 10 words)
        return "conllu"
    if _BLANK_LINE.search(text[:50000]):
        fitting = sum(1 for line in sample if _column_misfit(line.split()) is None)
        if 10 * fitting >= 9 * len(sample):
            return "columns"
    return "lines"


def _spaced_conll(rows: list[str]) -> bool:
    """CoNLL rows whose columns are spaces, not tabs (a copy through an editor or a web
    page): the first three rows at least six fields long, numbered 1, 2, 3."""
    fields = [row.split() for row in rows[:3]]
    return (
        len(fields) == 3
        and all(len(f) >= 6 for f in fields)
        and [f[0] for f in fields] == ["1", "2", "3"]
    )


def _conll_row(line: str) -> bool:
    """A token row of CoNLL-U or CoNLL-X, maybe short of a column or two."""
    return line[:1].isascii() and line[:1].isdigit() and line.count("\t") >= 5


def _column_misfit(fields: list[str]) -> str | None:
    """Why a line is not a row of a word-and-tag column file; ``None`` when it is one."""
    if not 2 <= len(fields) <= 6:
        return f"has {len(fields)} field{'s' if len(fields) != 1 else ''}, not 2 to 6"
    if _LOWER.search(fields[1]):
        return f"has a lower-case tag ({fields[1]!r})"
    return None


def read_sentences(
    path: str, stats: ReadStats, fmt: TextFormat = "auto", upos: bool = False
) -> Iterator[tuple[int, list[Token]]]:
    """``(line, [(tag or "", word)])`` for every sentence of a text corpus file.  CoNLL-U
    tags are the XPOS column, or UPOS where XPOS is ``_`` (``upos``: the UPOS column
    always)."""
    check_choice(fmt, TEXT_FORMATS, "fmt")
    text = read_file(path, stats)
    guessed = fmt == "auto"
    if guessed:
        fmt = detect_text_format(path, text)
    if fmt == "lines":
        for number, line in enumerate(text.split("\n"), 1):
            words = line.split()
            if words:
                yield number, [("", w) for w in words]
        return
    token: Callable[[str, str, int, int], Token | None] = (
        _conllu_upos_token if upos else _conllu_token
    )
    if fmt == "columns":
        # a guess holds every line to the shape that made it
        token = _guessed_column_token if guessed else _column_token
    yield from _blank_line_sentences(text, path, token)


def _blank_line_sentences(
    text: str, path: str, token: Callable[[str, str, int, int], Token | None]
) -> Iterator[tuple[int, list[Token]]]:
    """Sentences separated by blank lines, a token a line (``token(line, path, number,
    words so far in the sentence)`` reads it, ``None`` for a line that holds none)."""
    sentence: list[Token] = []
    start = 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            if sentence:
                yield start, sentence
                sentence = []
            continue
        pair = token(line, path, number, len(sentence))
        if pair is None:
            continue
        if not sentence:
            start = number
        sentence.append(pair)
    if sentence:
        yield start, sentence


def _conllu_token(line: str, path: str, number: int, before: int) -> Token | None:
    """The tag (XPOS, else UPOS) and word of a CoNLL-U line, the sentence's word ``before +
    1``; ``None`` for comments, multiword tokens (``1-2``) and empty nodes (``1.1``).  A line
    other than a plain word line (10 non-empty columns, a number for ID) goes through the
    dependency reader's :func:`~induce.data.conll.parse_conllu_block`, so a wrong one is the
    error ``convert`` and ``evaluate`` give for it, with the file and line; so is a word ID
    out of its place (0, a repeat, a gap: a damaged or shuffled file)."""
    if line.startswith("#"):
        return None
    cols = line.split("\t")
    ident = cols[0]  # a word's: 1, 2, ... in ASCII digits (str methods: faster than a regex)
    if (
        len(cols) != 10
        or "" in cols
        or not (ident.isdigit() and ident.isascii())
        or ident[0] == "0"
    ):
        token = parse_conllu_block([line.rstrip("\r")], number, path)[0]
        if not isinstance(token["id"], int):
            return None
    if int(ident) != before + 1:
        raise InputError(f"token IDs must run 1, 2, 3, ...; got {int(ident)}", path, number)
    return (cols[4] if cols[4] != "_" else cols[3]), cols[1]


def _conllu_upos_token(line: str, path: str, number: int, before: int) -> Token | None:
    """:func:`_conllu_token` with the UPOS column's tag."""
    token = _conllu_token(line, path, number, before)
    return None if token is None else (line.split("\t")[3], token[1])


def _column_token(line: str, path: str, number: int, before: int) -> Token:
    """Word first, then its tag when there is one (the CoNLL-2000 files)."""
    cols = line.split()
    return (cols[1] if len(cols) > 1 else ""), cols[0]


def _guessed_column_token(line: str, path: str, number: int, before: int) -> Token:
    """A row of a file guessed to be word-and-tag columns; one that is not is an error."""
    cols = line.split()
    problem = _column_misfit(cols)
    if problem is not None:
        raise InputError(
            f"the file looks like word-and-tag columns, but this line {problem}; "
            "name the text format if the file is something else",
            path,
            number,
        )
    return cols[1], cols[0]


@dataclass(frozen=True)
class TextOptions:
    normalization: Normalization = Normalization(word_tags=None)
    min_freq: int = 1
    max_vocab: int | None = None
    skip_bad: bool = False
    text_format: TextFormat = "auto"  # of the text files
    vocab: Vocabulary | None = None  # a given vocabulary instead of the training counts

    def __post_init__(self) -> None:
        check_choices(self)


def preprocess_text(
    train: list[str],
    out: str,
    options: TextOptions,
    valid: str | None = None,
    valid_trees: str | None = None,
    test: str | None = None,
    test_trees: str | None = None,
    tokenizer: SubwordTokenizer | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """A dataset from users' corpora (see the module docstring).  The tag filter applies
    where tags are known (CoNLL-U, column files, trees)."""
    check_subword_vocabulary(tokenizer, options.min_freq, options.max_vocab)
    if not train:
        raise InputError("give at least one training file")
    if valid and valid_trees or test and test_trees:
        raise InputError("give a split as text or as trees, not both")
    sources = {"train": list(train), "valid": valid or valid_trees, "test": test or test_trees}
    stats = ReadStats()
    norm = options.normalization
    # a tag set of Universal POS tags reads CoNLL-U's UPOS column, not its XPOS (PTB tags
    # in English treebanks, which no UPOS name matches: every word was dropped)
    upos = is_upos_tagset(norm.word_tags)
    with DatasetWriter(out, force) as writer:
        splits = SplitWriter(writer, tokenizer, vocab=options.vocab)
        for k, path in enumerate(train, 1):
            for _, pairs in read_sentences(path, stats, options.text_format, upos):
                splits.add("train", None, _normalise(norm, pairs))
            if progress:
                progress("reading training text", k, len(train))
        for split, text_path, tree_path in (
            ("valid", valid, valid_trees),
            ("test", test, test_trees),
        ):
            if text_path:
                for _, pairs in read_sentences(text_path, stats, options.text_format, upos):
                    splits.add(split, None, _normalise(norm, pairs))
            elif tree_path:
                result = read_tree_file(tree_path, norm, options.skip_bad)
                stats.checksums.extend(result.stats.checksums)
                splits.add_file(split, result)
        splits.check(["train"] + [s for s in ("valid", "test") if sources[s]], sources)
        vocab = splits.vocabulary(options.min_freq, options.max_vocab)
        if tokenizer is not None:
            tokenizer.save(writer)
        data = manifest(
            "text",
            {"files": sources, "sha256": combined_digest(stats.checksums)},
            {s: {"from": v} for s, v in sources.items() if v},
            norm,
            vocab,
            splits,
            {"text_format": options.text_format, "skip_bad": options.skip_bad},
        )
        writer.finish(data, vocab)
    return data


def _normalise(norm: Normalization, pairs: list[Token]) -> list[str]:
    # Untagged text keeps every word: the tag filter needs tags.
    if norm.word_tags is not None and pairs and pairs[0][0]:
        return norm.tagged(pairs)
    return norm.words([w for _, w in pairs])


def preprocess_mikolov(
    folder: str,
    out: str,
    min_freq: int = 1,
    max_vocab: int | None = None,
    force: bool = False,
    vocab: Vocabulary | None = None,
) -> dict[str, Any]:
    """Mikolov's ``ptb.{train,valid,test}.txt`` (already lower-cased, numbers as N, rare words
    as ``<unk>``): kept as they are; the vocabulary is every training word, or ``vocab``."""
    base = Path(folder)
    stats = ReadStats()
    paths = {split: base / name for split, name in MIKOLOV_FILES.items()}
    missing = [str(p.name) for p in paths.values() if not p.is_file()]
    if missing:
        raise InputError(f"missing {', '.join(missing)} (Mikolov's PTB text files)", folder)
    with DatasetWriter(out, force) as writer:
        splits = SplitWriter(writer, vocab=vocab)
        for split, path in paths.items():
            for _, pairs in read_sentences(str(path), stats, "lines"):
                splits.add(split, None, [w for _, w in pairs])
        splits.check(("train", "valid", "test"), {s: str(p) for s, p in paths.items()})
        vocab = splits.vocabulary(min_freq, max_vocab)
        data = manifest(
            "mikolov",
            {"folder": str(base.resolve()), "sha256": combined_digest(stats.checksums)},
            {s: {"from": str(p.name)} for s, p in paths.items()},
            Normalization(lowercase=False, digits=None),
            vocab,
            splits,
        )
        writer.finish(data, vocab)
    return data
