"""``stream_trees``: the trees of ``read_trees`` as the text comes.  The oracle is the reader
of whole files: the same trees, lines and files, the same error, for every shape of file
(of brackets: where a file also holds an encoding fault, the stream names the first fault
by line, the whole-file reader the encoding)."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from induce.data.errors import InputError
from induce.data.ptb import read_trees, stream_trees

# pieces of a tree file: each is some whole lines (a tree over several lines, a blank line,
# a header) or a line's worth of trees (several on one line), and faults the readers refuse
PIECES = [
    "(S (NP (DT the) (NN dog)) (VP (VBD ran)))\n",
    "(S (NP (DT the) (NN dog))\n  (VP (VBD ran)))\n",  # a tree spanning lines
    "(\nS (NN a))\n",  # its label on the line after "("
    "( (S (NN b)) )\n",
    "(S ( c) (NN d))\n",  # "( c)": a word with the empty tag
    "(NN x) (NN y)\n",  # two trees on one line
    "\n",
    "   \n",
    "*x* a Treebank-2 header\n",
    "(S (NN e) f)\n",  # a misplaced word
    "(S (NN g)\n\n (NN h) i)\n",  # a misplaced word, lines after the tree opens
    "(S (NN z)\n",  # unbalanced
    "(NN w))\n",
]


def _both(path: str) -> tuple[list[tuple[str, int, object]], str | None, list, str | None]:
    """What the stream gave before its end or error, its error; read_trees' the same."""
    streamed: list[tuple[str, int, object]] = []
    stream_error = None
    try:
        for name, line, tree in stream_trees(path):
            streamed.append((name, line, None if tree is None else tree.to_string()))
    except InputError as err:
        stream_error = str(err)
    whole: list = []
    whole_error = None
    try:
        trees = read_trees(path)
        for k, tree in enumerate(trees.trees):
            whole.append((*trees.where(k), None if tree is None else tree.to_string()))
    except InputError as err:
        whole_error = str(err)
    return streamed, stream_error, whole, whole_error


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PIECES), max_size=9))
def test_the_stream_gives_what_the_whole_file_reader_gives(tmp_path, pieces):
    path = tmp_path / "t.mrg"
    path.write_text("".join(pieces))
    streamed, stream_error, whole, whole_error = _both(str(path))
    assert stream_error == whole_error
    if whole_error is None:
        assert streamed == whole
        return
    # what came before the error: the trees of the lines before its line, as the whole
    # file's reader reads those lines alone (a tree is given only once no later line can
    # change its meaning), when they read
    at = int(whole_error.split(":")[1])
    before = [item for item in streamed if item[1] < at]
    assert [line for _, line, _ in streamed] == sorted(line for _, line, _ in streamed)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[: at - 1]))
    _, _, prefix, prefix_error = _both(str(path))
    if prefix_error is None:
        assert before == prefix[: len(before)]


def test_a_directory_streams_its_files_in_turn(tmp_path):
    """In a folder (the LDC layout) blank lines separate, whatever a file's shape."""
    (tmp_path / "a.mrg").write_text("(S (NN a))\n\n(S (NN b))\n")
    (tmp_path / "b.mrg").write_text("\n(S (NN c)\n (NN d))\n")
    streamed, stream_error, whole, whole_error = _both(str(tmp_path))
    assert stream_error is None and whole_error is None
    assert streamed == whole and [line for _, line, _ in streamed] == [1, 3, 2]


def _fifo_writer(path: str, first: str, rest: str, reached: threading.Event) -> threading.Thread:
    """A thread that writes ``first`` into the FIFO, waits until the test has read a tree
    (at most 30 s), then writes ``rest`` and closes it."""

    def write() -> None:
        with open(path, "w") as fifo:
            fifo.write(first)
            fifo.flush()
            reached.wait(30)
            fifo.write(rest)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
@pytest.mark.parametrize(
    "first, rest, lines",
    [
        ("(S (NN a))\n(S (NN b))\n", "\n(S (NN c))\n", [1, 2, 3, 4]),  # one tree per line
        ("(S (NN a)\n  (NN b))\n\n", "(S (NN c))\n", [1, 4]),  # multi-line, blank between
    ],
)
def test_a_tree_comes_before_the_input_ends(tmp_path, first, rest, lines):
    """``read_trees`` read the whole input first: ``induce parse --trees -`` gave nothing
    until its input ended, although its help promises streaming."""
    path = str(tmp_path / "pipe")
    os.mkfifo(path)
    reached = threading.Event()
    thread = _fifo_writer(path, first, rest, reached)
    stream = stream_trees(path)
    _, line, tree = next(stream)  # would block for good without streaming (the writer waits)
    assert not reached.is_set() and line == 1 and tree is not None
    reached.set()
    assert [line] + [at for _, at, _ in stream] == lines
    thread.join(30)


def test_the_stream_keeps_no_lines_of_trees_it_gave(tmp_path, monkeypatch):
    """The reader drops the tokens of lines once no tree is open: memory stays flat."""
    from induce.data import ptb_reader

    kept: list[int] = []
    forget = ptb_reader.TreeReader.forget

    def watch(self: ptb_reader.TreeReader) -> None:
        forget(self)
        kept.append(len(self.token_lines))

    monkeypatch.setattr(ptb_reader.TreeReader, "forget", watch)
    (tmp_path / "t.mrg").write_text("(S (NN a)\n (NN b))\n" * 50)
    assert len(list(stream_trees(tmp_path / "t.mrg"))) == 50
    assert max(kept) == 1  # the first line of a tree, while it is open
    # a tree that opens on the line where the one before closes: no line was dropped until
    # a line ended with no bracket open, which here is the last
    kept.clear()
    (tmp_path / "t.mrg").write_text("(S (NN a)\n" + "(NN b)) (S (NN a)\n" * 200 + "(NN b))\n")
    assert len(list(stream_trees(tmp_path / "t.mrg"))) == 201
    assert max(kept) == 1
