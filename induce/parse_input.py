"""Reading ``induce parse``'s input: raw text (nltk's rule-based Penn Treebank tokenizer,
which needs no downloaded data), pre-tokenised text, normalised text (a dataset's own
``SPLIT.txt``: model tokens, read as they stand), CoNLL-U (every column and comment kept,
HEAD/DEPREL to be filled in) or treebank trees (their words and tags)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from induce.data.errors import ConfigError, InputError
from induce.data.reading import iter_lines

if TYPE_CHECKING:
    import queue
    import threading

InputKind = Literal["text", "pretokenized", "normalized", "conllu", "trees"]
INPUTS: tuple[InputKind, ...] = get_args(InputKind)


@dataclass
class Sentence:
    tokens: list[str]
    line: int
    text: str = ""
    conllu: Any = None  # the conllu TokenList (CoNLL-U input)
    punct: list[bool] = field(default_factory=list)  # the tokens the model does not read
    # the input's own punctuation (CoNLL-U UPOS PUNCT/SYM): kept apart from ``punct``, which
    # each run's reader decides anew, so that one sentence can go to two runs
    marked: list[bool] = field(default_factory=list)
    tags: list[str] | None = None  # the input's tags (trees, CoNLL-U XPOS), for chart models
    # model tokens already (normalised text): a text model reads them as they stand, since
    # normalising again is not the identity (lower-casing turns the numbers' N into n)
    normalized: bool = False


def read_sentences(path: str, kind: InputKind) -> list[Sentence]:
    """All sentences of ``path`` (``-``: standard input) at once."""
    return list(iter_sentences(path, kind))


def iter_sentences(path: str, kind: InputKind, sniff: bool = False) -> Iterator[Sentence]:
    """The sentences of ``path`` (``-``: standard input) as they are read.  ``sniff``: read
    text as CoNLL-U when its first line that is neither blank nor a comment (``#``) is a
    10-column token line (for standard input, which has no ``.conllu`` name to go by)."""
    if kind not in INPUTS:
        raise ConfigError(f"must be one of {', '.join(INPUTS)}", setting="input_kind")
    name = "<stdin>" if path == "-" else path
    if kind == "trees":
        yield from _tree_sentences(path)
        return
    lines = _named_lines(iter_lines(path), name)
    if sniff or kind == "conllu":
        conllu, lines = _sniff(lines, kind == "conllu")
        if conllu:
            yield from _conllu_sentences(lines, name)
            return
    tokenize = str.split
    if kind == "text":
        from nltk.tokenize import TreebankWordTokenizer

        tokenize = TreebankWordTokenizer().tokenize
    normalized = kind == "normalized"
    for number, line in lines:
        yield Sentence(tokenize(line), number, line.strip(), normalized=normalized)


def _sniff(
    lines: Iterator[tuple[int, str]], conllu: bool
) -> tuple[bool, Iterator[tuple[int, str]]]:
    """Whether the input is CoNLL-U (``conllu``: it is), and its lines from the first.

    Text is told at its first line where it can be: a blank line (an empty sentence: no
    CoNLL-U begins so) or a ``#`` before a word (``#metoo is trending``; CoNLL-U's comments
    are ``# ...``, or metadata such as ``#sent_id=1`` and ``#newdoc``), so that a coprocess's
    first line is answered before it writes a second.  Comments may begin either, and the
    first line after them tells."""
    head = list(itertools.islice(lines, 1))
    first = head[0][1] if head else ""
    blank = bool(head) and not first.strip()
    hashtag = first[:1] == "#" and first[1:2].strip() and not _METADATA.match(first)
    if not conllu and (blank or not head or hashtag):
        return False, itertools.chain(head, lines)
    if blank:  # CoNLL-U named, after blank lines: up to its first line of text
        head += _through_first_text(lines)
    while head and head[-1][1].startswith("#") and (more := list(_through_first_text(lines))):
        head += more
    found = conllu or _looks_like_conllu(head[-1][1] if head else "")
    return found, itertools.chain(head, lines)


# a CoNLL-U comment that holds metadata, even without a space after its "#"
_METADATA = re.compile(r"#\s*(?:newdoc|newpar)\b|#\s*[\w.:-]+\s*=")


def _through_first_text(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines up to and with the first that is not blank (all of them if none is)."""
    for item in lines:
        yield item
        if item[1].strip():
            return


def _named_lines(lines: Iterator[tuple[int, str]], name: str) -> Iterator[tuple[int, str]]:
    """Lines whose errors name ``<stdin>`` rather than ``-``."""
    try:
        yield from lines
    except InputError as err:
        if err.path == "-":
            raise InputError(err.reason, name, err.line) from None
        raise


def _looks_like_conllu(line: str) -> bool:
    """Whether ``line``, the first that is neither blank nor a comment, is a CoNLL-U token
    line (10 tab-separated columns, an id first)."""
    cols = line.split("\t")
    return len(cols) == 10 and cols[0].replace("-", "").replace(".", "").isdigit()


def _conllu_sentences(lines: Iterable[tuple[int, str]], path: str) -> Iterator[Sentence]:
    from induce.data.conll import conllu_words, parse_conllu_block

    block: list[str] = []
    start = 0
    for number, line in itertools.chain(lines, [(0, "")]):
        if line.strip():
            if not block:
                start = number
            block.append(line)
            continue
        if not block:
            continue
        tokens = parse_conllu_block(block, start, path)
        words = [t for t, _ in conllu_words(tokens, block, start, path)]
        block = []
        sentence = Sentence([t["form"] for t in words], start, conllu=tokens)
        sentence.marked = [t["upos"] in ("PUNCT", "SYM") for t in words]
        xpos = [t["xpos"] for t in words]
        sentence.tags = xpos if all(tag not in (None, "_") for tag in xpos) else None
        yield sentence


def _tree_sentences(path: str) -> Iterator[Sentence]:
    """The words and tags of each tree of a treebank file (empty elements left out), as the
    file is read."""
    from induce.data.ptb import stream_trees
    from induce.structure.trees import strip_empty

    try:
        for _, line, tree in stream_trees(path):
            clean = strip_empty(tree) if tree is not None else None
            words, tags = (clean.words(), clean.tags()) if clean is not None else ([], [])
            yield Sentence(words, line, " ".join(words), tags=tags)
    except InputError as err:
        if err.path == "-":  # errors name standard input as the other readers' do
            raise InputError(err.reason, "<stdin>", err.line) from None
        raise


class Prefetched:
    """``sentences`` read ahead by a thread, for input that comes as someone types it or as
    another program writes it: :meth:`pending` says whether the next sentence is already
    here, so that a parser gives its trees for what came instead of waiting for a whole
    batch (``induce parse -`` in a terminal, or as a coprocess).  At most ``ahead`` (1 or
    more) sentences wait; an error of the reading comes in its place in the input's order.

    One pass, as any iterator: when it ends, is left early (``break``, an error in the
    consumer), is closed (:meth:`close`, ``with``) or is dropped unread, the reading stops
    at the next sentence and the source is closed (its file with it)."""

    _END = object()

    def __init__(self, sentences: Iterable[Sentence], ahead: int = 4096) -> None:
        import queue
        import threading
        import weakref

        if ahead < 1:
            raise ConfigError(f"must be 1 or more, got {ahead}", setting="ahead")
        self._queue: queue.Queue[object] = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        # The thread holds the queue and the event, never this object: one that nobody
        # iterates or closes can then be collected, and its collection stops the reading.
        weakref.finalize(self, self._stop.set)
        # a daemon: a reader blocked on a terminal must not keep the process alive
        threading.Thread(
            target=_read_ahead,
            args=(sentences, self._queue, self._stop, self._END),
            name="induce-input",
            daemon=True,
        ).start()

    def pending(self) -> bool:
        """Whether the next sentence (or the end of the input) has been read already."""
        return not self._queue.empty()

    def close(self) -> None:
        """Stop reading; what was read ahead is dropped."""
        self._stop.set()
        with self._queue.mutex:
            self._queue.queue.clear()
            self._queue.not_full.notify_all()

    def __enter__(self) -> Prefetched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Sentence]:
        try:
            while not self._stop.is_set():
                item = self._queue.get()
                if item is self._END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item  # type: ignore[misc]
        finally:
            self.close()


def _read_ahead(
    source: Iterable[Sentence], into: queue.Queue[object], stop: threading.Event, end: object
) -> None:
    """:class:`Prefetched`'s thread: ``source`` into the queue ``into`` until it ends
    (then ``end``), raises (then the error) or ``stop`` is set; the source is closed."""
    try:
        for sentence in source:
            if not _offer(into, stop, sentence):
                return
        _offer(into, stop, end)
    except BaseException as err:  # handed to the parsing thread, which raises it
        _offer(into, stop, err)
    finally:
        close = getattr(source, "close", None)
        if callable(close):  # a generator's clean-up (its open file) runs here
            close()


def _offer(into: queue.Queue[object], stop: threading.Event, item: object) -> bool:
    """Queue ``item`` unless the consumer has gone (``stop``); whether it was queued."""
    import queue

    while not stop.is_set():
        try:
            into.put(item, timeout=0.1)
            return True
        except queue.Full:
            continue
    return False
