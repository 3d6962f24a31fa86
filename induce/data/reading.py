"""Reading input text strictly: UTF-8 without a fault, LF or CRLF line ends, no NUL byte,
every fault one :class:`InputError` naming its file and line.  Each file read is remembered
as an input of the running command (:func:`induce.data.files.remember_input`), so that no
output may replace it."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from induce.data.errors import InputError
from induce.data.files import STDIN, remember_input


def read_text(path: str | os.PathLike[str]) -> str:
    """Return the text of ``path`` (``-`` = standard input), decoded as strict UTF-8.

    A leading byte-order mark is dropped.  Undecodable bytes, a NUL byte and a carriage
    return outside a CRLF line end raise :class:`InputError` naming the line.
    """
    name = str(path)
    try:
        if name == STDIN:
            data = sys.stdin.buffer.read()
        else:
            data = Path(name).read_bytes()
            remember_input(name)
    except OSError as err:
        raise _read_error(err, name) from None
    return decode_utf8(data, name)


def _read_error(err: OSError, name: str) -> InputError:
    if isinstance(err, FileNotFoundError):
        return InputError("no such file", name)
    if isinstance(err, IsADirectoryError):
        return InputError("is a directory, expected a file", name)
    return InputError(f"cannot read: {err.strerror}", name)


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line number, line without its newline)`` of ``path`` (``-``: standard input), read
    as it comes: strict UTF-8 line by line, a leading byte-order mark dropped, LF and CRLF
    line ends alike (:func:`check_text` refuses a CR alone and a NUL byte)."""
    name = str(path)
    try:
        handle = sys.stdin.buffer if name == STDIN else open(name, "rb")
    except OSError as err:
        raise _read_error(err, name) from None
    if name != STDIN:
        remember_input(name)
    try:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise _bad_utf8(raw, err.start, name, number) from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            yield number, _line_body(line, name, number)
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def decode_utf8(data: bytes, name: str) -> str:
    """Decode ``data`` as UTF-8; on failure raise an error that points at the bad line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        begin = data.rfind(b"\n", 0, err.start) + 1
        line = data.count(b"\n", 0, err.start) + 1
        raise _bad_utf8(data[begin : err.start + 1], err.start - begin, name, line) from None
    check_text(text, name)
    return text[1:] if text.startswith("\ufeff") else text


def _bad_utf8(line: bytes, at: int, name: str, number: int) -> InputError:
    """The error for the undecodable byte ``line[at]``: its column counts characters, as an
    editor shows them (the bytes before it decode, as the first fault is at ``at``), the
    byte-order mark of a file's first line left out as the readers drop it."""
    before = line[:at].decode("utf-8").removeprefix("\ufeff" if number == 1 else "")
    return InputError(
        f"not valid UTF-8 (byte 0x{line[at]:02x} at column {len(before) + 1})", name, number
    )


# a carriage return that does not end a CRLF line: an old Mac line end, or a stray byte
_LONE_CR = re.compile(r"\r(?!\n)")
_NUL = "a NUL byte (a binary file?)"
_LONE_CR_MESSAGE = (
    "a carriage return inside a line (old Mac line ends?): convert the file to LF or CRLF line ends"
)


def check_text(text: str, name: str, line: int = 1) -> None:
    """Refuse text that is not lines of words: a carriage return that is not part of a CRLF
    pair (old Mac line ends would silently merge every line into one sentence) or a NUL
    byte (a binary file; it would pass as a word character).  Raises :class:`InputError`
    naming the line (``line``: the number of the text's first line).  Clean text costs two
    substring tests, which run at C speed; the line is looked for only once one fails."""
    if "\0" in text:
        where = text.index("\0")
        raise InputError(_NUL, name, line + text.count("\n", 0, where))
    if "\r" in text:
        found = _LONE_CR.search(text)
        if found is not None:
            raise InputError(_LONE_CR_MESSAGE, name, line + text.count("\n", 0, found.start()))


def _line_body(line: str, name: str, number: int) -> str:
    """Line ``number`` (as read, its newline included) without its LF or CRLF end, once
    :func:`check_text` has found nothing wrong in it."""
    if line.endswith("\r\n"):
        body = line[:-2]
    elif line.endswith("\n"):
        body = line[:-1]
    else:  # the last line, without a newline: a CR at its end is an old Mac line end
        body = line
    if "\r" in body or "\0" in body:  # the common case without a call: parse streams lines
        check_text(body, name, number)
    return body


def expand_inputs(path: str | os.PathLike[str], suffixes: Iterable[str]) -> list[str]:
    """A file stands for itself; a directory for its files with one of ``suffixes``, sorted."""
    name = str(path)
    if name == STDIN or not os.path.isdir(name):
        return [name]
    wanted = tuple(suffixes)
    files = sorted(
        os.path.join(name, entry)
        for entry in os.listdir(name)
        if entry.endswith(wanted) and os.path.isfile(os.path.join(name, entry))
    )
    if not files:
        raise InputError(f"directory holds no {'/'.join(wanted)} files", name)
    return files
