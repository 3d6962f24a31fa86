"""Writing output files atomically, and never over an input.

Every file a command writes goes through :func:`atomic_write` (or :func:`atomic_path`): the
content lands in a temporary file in the destination folder and is renamed over the target
only once it is complete, so an interrupted command never leaves a half-written output.

What may be replaced that way is a regular file or a new path.  A character device or a FIFO
(``/dev/null``, a named pipe) is written through, ``-`` is standard output, and a symbolic
link or a file this process has read as input (:func:`remember_input`) is refused: renaming
over them would replace the link by a plain file, or destroy the input.  Reading is
:mod:`induce.data.reading`'s.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from induce.data.errors import InputError

STDIN = "-"
TEMP_PREFIX, TEMP_SUFFIX = ".induce-", ".tmp"  # the temporary files of atomic writes

# (device, inode) -> (mtime_ns, size) of every file read as input since forget_inputs()
_INPUTS: dict[tuple[int, int], tuple[int, int]] = {}


def remember_input(name: str) -> None:
    """Record ``name`` as an input of the running command: no output may replace it."""
    with contextlib.suppress(OSError):
        st = os.stat(name)
        _INPUTS[(st.st_dev, st.st_ino)] = (st.st_mtime_ns, st.st_size)


def forget_inputs() -> None:
    """Start a new command: nothing has been read yet."""
    _INPUTS.clear()


def _is_input(st: os.stat_result) -> bool:
    return _INPUTS.get((st.st_dev, st.st_ino)) == (st.st_mtime_ns, st.st_size)


def check_outputs(outputs: Iterable[tuple[str, str]], inputs: Iterable[str]) -> None:
    """Before any work: no output may be one of the inputs, nor the file of another output.

    ``outputs``: ``(what, path)`` pairs, ``what`` naming the output in messages (a flag);
    ``inputs``: the paths the command reads.  Files are compared by identity (device and
    inode, through links and relative paths), paths that do not exist yet by their resolved
    name.  Standard output (``-``), character devices and FIFOs are written through and may
    repeat.  Raises :class:`InputError` naming the output's path."""
    read: dict[tuple[object, ...], str] = {}
    for name in inputs:
        key = _identity(name)
        if key is not None and key[0] == "file":
            read.setdefault(key, name)
    written: dict[tuple[object, ...], str] = {}
    for what, name in outputs:
        key = _identity(name)
        if key is None:
            continue
        if key in read:
            raise InputError(
                f"{what} would replace the input {read[key]}: write the output elsewhere", name
            )
        if key in written:
            raise InputError(
                f"{what} and {written[key]} name the same file: one would be lost", name
            )
        written[key] = what


def _identity(name: str) -> tuple[object, ...] | None:
    """What makes two names one file: ``("file", device, inode)`` for an existing file or
    folder, ``("new", resolved path)`` for a path that does not exist yet, ``None`` for what
    is written through (``-``, devices, FIFOs)."""
    if name == STDIN:
        return None
    try:
        st = os.stat(name)
    except OSError:
        return ("new", os.path.realpath(name))
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return None
    return ("file", st.st_dev, st.st_ino)


@contextlib.contextmanager
def open_output(path: str | os.PathLike[str], own: bool = False) -> Iterator[TextIO]:
    """A text handle for writing ``path`` as results come: standard output for ``-``, the
    device or FIFO itself, else a temporary file renamed over ``path`` when the block ends
    without an error (an interrupted command leaves no partial file).  ``own``: see
    :func:`_target`."""
    name = str(path)
    kind = _target(name, own)
    if kind in ("stdout", "stderr"):
        stream = _stream(kind)
        yield stream
        stream.flush()
        return
    if kind == "through":
        try:
            with open(name, "w", encoding="utf-8", newline="\n") as handle:
                yield handle
        except OSError as err:
            raise InputError(f"cannot write: {err.strerror}", name) from None
        return
    with _replacing(name) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        yield handle


def _target(name: str, own: bool = False) -> str:
    """How ``name`` may be written: ``"replace"`` (a regular file or a new path: temporary
    file and rename), ``"through"`` (a character device or FIFO, or a link to one), or
    ``"stdout"`` or ``"stderr"`` (``-``; ``/dev/stdout``...: see :func:`_through_link`).  ``own``:
    the file is state the command itself keeps (a run's metrics), which it may rewrite."""
    if name == STDIN:
        return "stdout"
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        if not os.path.isdir(os.path.dirname(os.path.abspath(name))):
            raise InputError("cannot write: the folder does not exist", name) from None
        return "replace"
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", name) from None
    if stat.S_ISLNK(st.st_mode):
        return _through_link(name)
    if stat.S_ISDIR(st.st_mode):
        raise InputError("cannot write: is a directory", name)
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return "through"
    if not stat.S_ISREG(st.st_mode):
        raise InputError("cannot write: not a regular file", name)
    if _is_input(st) and not own:
        raise InputError("will not overwrite a file this command reads", name)
    return "replace"


# this process's standard streams by name: written through the stream itself (its
# descriptor and position: the shell's "> out.txt" or pipe), never opened again, which would
# write from another position over what the command prints
_STREAMS = {
    f"{base}{n}": stream
    for n, stream in ((1, "stdout"), (2, "stderr"))
    for base in ("/dev/fd/", "/proc/self/fd/")
} | {"/dev/stdout": "stdout", "/dev/stderr": "stderr"}
_STDIN = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _through_link(name: str) -> str:
    """How a symbolic link is written: ``/dev/stdout`` (``/dev/fd/1``...) and ``/dev/stderr``
    through the process's own stream (``"stdout"``, ``"stderr"``), a link to a device or
    FIFO through the device; any other link is refused, as replacing it would replace the
    link, not its target (and standard input is an input)."""
    path = os.path.abspath(name)
    if path in _STREAMS:
        return _STREAMS[path]
    if path in _STDIN:
        raise InputError("will not write to standard input", name)
    try:
        st = os.stat(name)
    except OSError:
        st = None  # a dangling link
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        return "through"
    raise InputError("will not replace a symbolic link: name its target instead", name)


def check_writable(paths: Iterable[str | os.PathLike[str] | None]) -> None:
    """Raise the error that writing each of ``paths`` (``None``: not asked for) would raise,
    before anything is written: a command that prints and then writes files checks them
    all first, so that a refused file does not come after the printed part."""
    for path in paths:
        if path is not None:
            _target(os.fspath(path))


def atomic_write(path: str | os.PathLike[str], text: str, own: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` all at once: temporary file, then rename (written
    through for a device or FIFO; ``-``: standard output).  ``own``: see :func:`_target`."""
    with open_output(path, own) as handle:
        handle.write(text)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], own: bool = False) -> Iterator[str]:
    """``with atomic_path(p) as tmp: write(tmp)``: a temporary name beside ``p`` that is
    renamed to ``p`` when the block succeeds and removed when it fails (for writers that
    want a file name, such as safetensors and torch.save).  A device or FIFO is given as
    itself (written through)."""
    name = str(path)
    kind = _target(name, own)
    if kind in ("stdout", "stderr") and name != STDIN:
        _stream_for_a_file_name(name, kind)
    if kind != "replace":  # "-" has no file name: callers handle it themselves
        yield name
        return
    with _replacing(name) as tmp:
        yield tmp


def _stream(kind: str) -> TextIO:
    """The process's stream of :func:`_target`'s ``"stdout"`` or ``"stderr"`` (looked up at
    each call: a caller may have replaced ``sys.stdout``)."""
    return sys.stdout if kind == "stdout" else sys.stderr


def _stream_for_a_file_name(name: str, kind: str) -> None:
    """A writer that wants a file name (a PNG, a checkpoint) given ``/dev/stdout``: it will
    open the name again, which is right for a pipe or a terminal once the stream is flushed,
    but onto a file would write over what the command printed: refused."""
    _stream(kind).flush()
    try:
        regular = stat.S_ISREG(os.stat(name).st_mode)
    except OSError:
        regular = False
    if regular:
        which = "output" if kind == "stdout" else "error"
        raise InputError(
            f"cannot write a whole file through standard {which} onto a file: name the file",
            name,
        )


@contextlib.contextmanager
def _replacing(name: str) -> Iterator[str]:
    """A temporary file beside ``name``, flushed to disk and renamed over it when the block
    succeeds, removed when it fails (``name`` already checked by :func:`_target`)."""
    folder = os.path.dirname(os.path.abspath(name))
    mode = _mode_for(name)
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=folder)
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", name) from None
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # mkstemp makes the file private
        os.replace(tmp, name)
    except BaseException as err:
        # Interrupted or failed: the target stays as it was and the partial file goes.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            raise InputError(f"cannot write: {err.strerror}", name) from None
        raise


def current_umask() -> int:
    """The process's umask (read by setting it, so set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode_for(name: str) -> int:
    """The permissions the new ``name`` gets: those of the file it replaces, which must be
    writable (a rename would otherwise replace a file its owner protected), else the usual
    ``0o666`` less the umask."""
    try:
        st = os.stat(name)
    except FileNotFoundError:
        return 0o666 & ~current_umask()
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror}", name) from None
    if not os.access(name, os.W_OK):
        raise InputError("cannot write: the file is read-only", name)
    return stat.S_IMODE(st.st_mode)


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> int:
    """Delete the temporary files that killed atomic writes left in ``folder`` (not in its
    subfolders); returns how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed += 1
    return removed


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
