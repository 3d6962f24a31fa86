"""What every corpus preprocessor shares: reading files in parallel and in order, writing the
splits of a dataset directory, the vocabulary and the manifest."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import induce
from induce.data.dataset import DatasetWriter
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization
from induce.data.vocab import UNK, Vocabulary, build_vocabulary
from induce.preprocess.subwords import SubwordTokenizer
from induce.preprocess.treetext import ReadStats, iter_trees

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class FileResult:
    """A file's sentences: ``(tree text or None, normalised words joined by spaces)``, and
    what reading met."""

    path: str
    sentences: list[tuple[str | None, str]]
    stats: ReadStats


def read_tree_file(
    path: str, normalization: Normalization, skip_bad: bool, strip_coref: bool = False
) -> FileResult:
    """One treebank file (run in worker processes: everything here is picklable)."""
    stats = ReadStats()
    line = normalization.line
    sentences: list[tuple[str | None, str]] = [
        (tree.text, line(tree.leaves)) for tree in iter_trees(path, stats, skip_bad, strip_coref)
    ]
    return FileResult(path, sentences, stats)


def map_files(
    function: Callable[..., FileResult], files: Sequence[str], args: tuple, workers: int = 1
) -> Iterator[FileResult]:
    """``function(file, *args)`` for every file, results in file order.  With several workers
    the files are read by a process pool (a bounded number in flight, so memory does not grow
    with the corpus)."""
    if workers <= 1 or len(files) <= 1:
        for path in files:
            yield function(path, *args)
        return
    import multiprocessing as mp
    from collections import deque

    context = mp.get_context("fork") if hasattr(os, "fork") else mp.get_context()
    call = _Call(function, args)
    window = 2 * workers  # results waiting in the parent: memory stays flat
    with context.Pool(workers, initializer=_ignore_interrupts) as pool:
        pending: deque[AsyncResult[FileResult]] = deque()
        for path in files:
            pending.append(pool.apply_async(call, (path,)))
            if len(pending) >= window:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _ignore_interrupts() -> None:
    """A worker leaves Ctrl-C to the main process (which ends the pool), and ends at once on
    the SIGTERM by which the pool ends it (the command's own handler would raise in it)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _Call:
    def __init__(self, function: Callable[..., FileResult], args: tuple) -> None:
        self.function, self.args = function, args

    def __call__(self, path: str) -> FileResult:
        return self.function(path, *self.args)


@dataclass
class SplitStats:
    sentences: int = 0
    words: int = 0
    tokens: int = 0
    dropped_without_words: int = 0
    skipped_bad_trees: int = 0
    files: int = 0
    counts: Counter[str] = field(default_factory=Counter)


def check_subword_vocabulary(
    tokenizer: SubwordTokenizer | None, min_freq: int, max_vocab: int | None
) -> None:
    """A subword tokenizer brings its whole vocabulary: a minimum frequency or a size, which
    build a vocabulary of words, would be ignored."""
    if tokenizer is None:
        return
    for setting, given in (("min_freq", min_freq != 1), ("max_vocab", max_vocab is not None)):
        if given:
            raise ConfigError(
                "builds a vocabulary of words: a subword tokenizer's is used whole",
                setting=setting,
            )


def _spaced(line: str) -> str:
    """``line`` with its words separated by one space each.  A word may hold another space
    (a CoNLL-U form such as ``10\u00a0000``), which the dataset's readers split at
    (``str.split``): written so, the counts and the vocabulary are of the words they read.
    A line already so is left as it is, checked at C speed (half the time of splitting it)."""
    if line.isascii() and line.isprintable() and "  " not in line and line[:1] != " " != line[-1:]:
        return line
    return " ".join(line.split())


class SplitWriter:
    """Writes the sentences of the splits into a :class:`DatasetWriter`, counting as it goes;
    with a subword tokenizer it writes subwords, words and alignments."""

    def __init__(
        self,
        writer: DatasetWriter,
        tokenizer: SubwordTokenizer | None = None,
        with_trees: bool = True,
        vocab: Vocabulary | None = None,
        normalize_on_read: Normalization | None = None,
    ) -> None:
        self.writer = writer
        # the text keeps the trees' words (cased, digits as written) and readers normalise it
        # with this; the vocabulary counts the normalised words
        self.normalize_on_read = normalize_on_read
        if normalize_on_read is not None and tokenizer is not None:
            raise ValueError("subword text is tokenized from normalised words")
        self.tokenizer = tokenizer
        self.with_trees = with_trees
        self.fixed = vocab  # a given vocabulary (a run's, the reference's) instead of counts
        self.splits: dict[str, SplitStats] = {}
        self.problems: list[str] = []

    def add(self, split: str, tree: str | None, words: list[str] | str) -> bool:
        """Write one sentence (words, or words joined by spaces); a sentence left without
        words is dropped (and counted)."""
        line = words if isinstance(words, str) else " ".join(words)
        return self._write(split, [(tree, line)]) == 1

    def add_file(self, split: str, result: FileResult, limit: int | None = None) -> int:
        """Write a file's sentences (at most ``limit``); how many were written."""
        stats = self.splits.setdefault(split, SplitStats())
        stats.files += 1
        stats.skipped_bad_trees += result.stats.skipped
        if result.stats.first_problem:
            self.problems.append(result.stats.first_problem)
        sentences = result.sentences
        if limit is not None:
            kept = [i for i, (_, line) in enumerate(sentences) if line][:limit]
            sentences = sentences[: kept[-1] + 1] if kept else []
        return self._write(split, sentences)

    def add_sentences(self, split: str, sentences: list[tuple[str | None, str]]) -> int:
        """Write ``(tree text or None, normalised line)`` pairs; how many had words."""
        return self._write(split, sentences)

    def _write(self, split: str, sentences: list[tuple[str | None, str]]) -> int:
        """Write a batch of sentences at once (one write per file, C-level counting)."""
        stats = self.splits.setdefault(split, SplitStats())
        sentences = [(tree, _spaced(line)) for tree, line in sentences]
        lines = [line for _, line in sentences if line]
        stats.dropped_without_words += len(sentences) - len(lines)
        if not lines:
            return 0
        w = self.writer
        words = " ".join(lines).split(" ")
        stats.sentences += len(lines)
        stats.words += len(words)
        if self.tokenizer is None:
            w.write_lines(f"{split}.txt", lines)
            stats.tokens += len(words)
            norm = self.normalize_on_read
            stats.counts.update(words if norm is None else norm.words(words))
        else:
            for line in lines:
                pieces, alignment = self.tokenizer.encode(line.split(" "))
                w.write_line(f"{split}.txt", " ".join(pieces))
                w.write_line(f"{split}.align", " ".join(map(str, alignment)))
                stats.tokens += len(pieces)
                stats.counts.update(pieces)
            w.write_lines(f"{split}.words", lines)
        if self.with_trees:
            trees = [tree for tree, line in sentences if line and tree is not None]
            w.write_lines(f"{split}.trees", trees)
        return len(lines)

    def check(
        self,
        required: Iterable[str],
        sources: Mapping[str, str | Sequence[str] | None] | None = None,
    ) -> None:
        """Every ``required`` split has a sentence with words; the error names the file(s)
        or folder a split was read from where ``sources`` gives them (split -> paths)."""
        for split in required:
            if not self.splits.get(split) or not self.splits[split].sentences:
                source = (sources or {}).get(split)
                if source is not None and not isinstance(source, str):
                    source = ", ".join(str(s) for s in source)
                raise InputError(
                    f"the {split} split is empty: no sentence with words (if "
                    "the files have sentences, the tag filter may have removed "
                    "every word: try the tag set 'all')",
                    source or None,
                )

    def vocabulary(self, min_freq: int, max_size: int | None) -> Vocabulary:
        if self.tokenizer is not None:
            return self.tokenizer.vocabulary()
        if self.fixed is not None:
            counts = self.splits["train"].counts
            fixed = self.fixed
            seen = {t: counts[t] for t in fixed.tokens if counts.get(t)}
            return Vocabulary(fixed.tokens, seen, fixed.specials, fixed.settings)
        return build_vocabulary(self.splits["train"].counts, min_freq, max_size)

    def split_report(self, vocab: Vocabulary) -> dict[str, Any]:
        """Counts per split, with the share of unknown tokens: outside the vocabulary, or
        the unknown word already in the text (Mikolov's files, a WordPiece ``[UNK]``)."""
        out = {}
        for split, s in self.splits.items():
            unknown = sum(c for t, c in s.counts.items() if t == UNK or t not in vocab)
            out[split] = {
                "sentences": s.sentences,
                "words": s.words,
                "tokens": s.tokens,
                "unknown_token_rate": round(unknown / s.tokens, 6) if s.tokens else 0,
                "dropped_without_words": s.dropped_without_words,
                "skipped_bad_trees": s.skipped_bad_trees,
                "source_files": s.files,
            }
        return out


def manifest(
    kind: str,
    sources: dict[str, Any],
    splits: dict[str, Any],
    normalization: Normalization | None,
    vocab: Vocabulary,
    split_writer: SplitWriter,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest of a dataset (DatasetWriter adds the format, time and files)."""
    out: dict[str, Any] = {
        "induce_version": induce.__version__,
        "kind": kind,
        "source": sources,
        "splits": splits,
        "normalization": None if normalization is None else normalization.to_dict(),
        "tokens": "words" if split_writer.tokenizer is None else split_writer.tokenizer.describe(),
        "vocabulary": {"size": len(vocab), **vocab.settings, "specials": list(vocab.specials)},
        "counts": split_writer.split_report(vocab),
        "first_problem": split_writer.problems[0] if split_writer.problems else None,
    }
    if split_writer.normalize_on_read is not None:
        out["text_normalized"] = False  # SPLIT.txt holds the trees' words; see Dataset.sentences
    if extra:
        out.update(extra)
    return out
