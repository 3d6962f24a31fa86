"""Locks on a run or a dataset folder: an exclusive lock file naming its process (pid, host
and start time), so that two commands never write one folder at once, and a lock left by a
killed process is taken over (with a warning) rather than blocking the folder for ever.  The
start time tells a killed holder from a later process given its pid; the host keeps a
machine sharing the folder from taking over a lock whose process it cannot see."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from induce.data.errors import InputError


class LockedError(InputError):
    """Another live process holds the lock."""


class FileLock:
    """An exclusive lock held by this process: a file naming it (``PID HOST START``),
    created with ``O_EXCL``.  A lock whose process is alive, or of another host, is refused
    (:class:`InputError` naming the pid); one whose process is gone (killed) is taken over
    with a warning.  A lock file of a pid alone (the earlier format) is this host's."""

    def __init__(self, path: str | os.PathLike[str], what: str) -> None:
        self.path = Path(path)
        self.what = what
        self.held = False

    def acquire(self) -> FileLock:
        for _ in range(3):
            try:
                self._create()
            except FileExistsError:
                self._refuse_a_folder()
                self._take_over_if_stale()
                continue
            except OSError as err:
                raise InputError(f"cannot lock: {err.strerror}", str(self.path)) from None
            self.held = True
            return self
        raise InputError(f"{self.what} is being locked by another process", str(self.path))

    def _create(self) -> None:
        """The lock file, with this process's pid in it from the moment it exists: written
        to a temporary file and hard-linked into place, which fails if the lock exists.
        Created empty and then written, another process could read it empty in between,
        take it for a stale lock and remove it (two holders; seen as a spurious warning in
        a race test).  Where hard links are not supported: created with ``O_EXCL``."""
        # not a TEMP_PREFIX name: the holder's clean-up of stale temporaries must not take it
        prefix, suffix = self._temporary
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(_own_line())
            os.chmod(tmp, 0o644)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                raise
            except OSError:  # no hard links on this file system
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                with os.fdopen(fd, "w") as handle:
                    handle.write(_own_line())
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _refuse_a_folder(self) -> None:
        """A folder where the lock file goes is no lock of a process: it is not taken over
        (removing it could lose what it holds) but refused."""
        if self.path.is_dir():
            raise InputError("cannot lock: is a directory", str(self.path))

    @property
    def _temporary(self) -> tuple[str, str]:
        """The prefix and suffix of the file ``_create`` links into place."""
        return f"{self.path.name}-", ".pid"

    def owns(self, entry: Path) -> bool:
        """Whether ``entry`` (a file beside the lock) is the lock or the temporary file of a
        process taking it at this instant (``_create``): what a folder holding its own lock
        may hold and still count as empty."""
        prefix, suffix = self._temporary
        name = entry.name
        return name == self.path.name or (name.startswith(prefix) and name.endswith(suffix))

    def _take_over_if_stale(self) -> None:
        holder = _lock_holder(self.path)
        mine = holder is not None and holder.is_this_process()
        if holder is not None and not mine and holder.holds():
            elsewhere = f" on {holder.host}" if holder.host != _HOST else ""
            remove = " (if that process is gone, remove this file)" if elsewhere else ""
            raise LockedError(
                f"{self.what} is in use by process {holder.pid}{elsewhere}{remove}",
                str(self.path),
            )
        if not mine:
            import warnings

            from induce.data.errors import InduceWarning

            what = (
                f"process {holder.pid}, which is gone"
                if holder
                else "no process (no pid in the file)"
            )
            warnings.warn(
                f"{self.path}: taking over the lock of {what}",
                InduceWarning,
                stacklevel=3,
            )
        if _lock_holder(self.path) == holder:  # still the stale holder's: remove it, retry
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass  # another process took it over first: the retry meets its lock
            except OSError as err:
                raise InputError(f"cannot lock: {err.strerror}", str(self.path)) from None

    def release(self) -> None:
        holder = _lock_holder(self.path)
        if self.held and holder is not None and holder.is_this_process():
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        self.held = False

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# above any process id a system hands out (Linux's limit is 2**22): a larger number in a
# lock file is garbage, and os.kill would overflow on it
_MAX_PID = 2**31 - 1


def live_holder(path: str | os.PathLike[str]) -> str | None:
    """Who holds the lock file ``path`` (``process 123``, ``process 123 on HOST`` for
    another host's) if that process still holds it, else ``None`` (no lock, or a stale one
    that the next taker takes over)."""
    holder = _lock_holder(Path(path))
    if holder is None or not holder.holds():
        return None
    return f"process {holder.pid}" + (f" on {holder.host}" if holder.host != _HOST else "")


_HOST = socket.gethostname()


@dataclass(frozen=True)
class _Holder:
    """Who a lock file names: a process id, and (written since they are) the host and the
    process's start time, which tell it from a later process given the same id, and a
    process of another machine sharing the folder from one of this machine."""

    pid: int
    host: str  # this host for a lock of the earlier format (a pid alone)
    started: str  # "-": not known

    def is_this_process(self) -> bool:
        return self.pid == os.getpid() and self.host == _HOST

    def holds(self) -> bool:
        """Whether its process still runs; another host's cannot be seen from here, so it
        is taken to (its lock is not taken over)."""
        if self.host != _HOST:
            return True
        if not _alive(self.pid):
            return False
        now = _started(self.pid)
        return "-" in (self.started, now) or now == self.started


def _own_line() -> str:
    """What this process writes in the lock file it takes: ``PID HOST START``."""
    return f"{os.getpid()} {_HOST} {_started(os.getpid())}\n"


def _started(pid: int) -> str:
    """When process ``pid`` started (Linux: the 22nd field of ``/proc/PID/stat``, clock
    ticks since boot); ``"-"`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        # the second field, the command's name in parentheses, may hold spaces
        return stat[stat.rindex(b")") + 2 :].split()[19].decode("ascii")
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return "-"


def _lock_holder(path: Path) -> _Holder | None:
    """Who a lock file names; ``None`` when it names no one (empty, garbage, a number no
    process can have, unreadable)."""
    try:
        fields = path.read_text(encoding="utf-8").split()
        pid = int(fields[0]) if fields else 0
    except (OSError, ValueError):
        return None
    if not 0 < pid <= _MAX_PID:
        return None
    host = fields[1] if len(fields) > 1 else _HOST
    return _Holder(pid, host, fields[2] if len(fields) > 2 else "-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
