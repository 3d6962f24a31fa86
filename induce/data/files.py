"""Reading input text strictly and writing output files atomically.

Every file a command writes goes through :func:`atomic_write`: the content lands in a
temporary file in the destination folder and is renamed over the target only once it is
complete, so an interrupted command never leaves a half-written output.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from induce.data.errors import InputError

STDIN = "-"


def read_text(path: str | os.PathLike[str]) -> str:
    """Return the text of ``path`` (``-`` = standard input), decoded as strict UTF-8.

    A leading byte-order mark is dropped.  Undecodable bytes raise :class:`InputError` naming
    the line and byte.
    """
    name = str(path)
    try:
        if name == STDIN:
            data = sys.stdin.buffer.read()
        else:
            data = Path(name).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", name) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    return decode_utf8(data, name)


def decode_utf8(data: bytes, name: str) -> str:
    """Decode ``data`` as UTF-8; on failure raise an error that points at the bad line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{data[err.start]:02x} at column {column})", name, line
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


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


def atomic_write(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` all at once: temporary file, then rename."""
    name = str(path)
    folder = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(folder):
        raise InputError("cannot write: the folder does not exist", name)
    if os.path.isdir(name):
        raise InputError("cannot write: is a directory", name)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".induce-", suffix=".tmp", dir=folder)
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", name) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file private (0600); give it the usual umask-based mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, name)
    except BaseException as err:
        # Interrupted or failed: leave the target as it was and remove the partial file.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(err, OSError):
            raise InputError(f"cannot write: {err.strerror}", name) from None
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """``with atomic_path(p) as tmp: write(tmp)``: a temporary name beside ``p`` that is
    renamed to ``p`` when the block succeeds and removed when it fails (for writers that
    want a file name, such as safetensors and torch.save)."""
    name = str(path)
    folder = os.path.dirname(os.path.abspath(name))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".induce-", suffix=".tmp", dir=folder)
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", name) from None
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def cache_dir() -> Path:
    """The user cache folder of ``induce`` (the built-in dataset, the latest-run record):
    ``$INDUCE_CACHE_DIR``, else ``$XDG_CACHE_HOME/induce`` or ``~/.cache/induce`` on Linux,
    ``~/Library/Caches/induce`` on macOS, ``%LOCALAPPDATA%\\induce`` on Windows."""
    if os.environ.get("INDUCE_CACHE_DIR"):
        return Path(os.environ["INDUCE_CACHE_DIR"])
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "induce"
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "induce"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "induce"
