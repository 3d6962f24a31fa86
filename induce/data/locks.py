"""Locks on a run or a dataset folder: an exclusive lock file holding its process's pid, so
that two commands never write one folder at once, and a lock left by a killed process is
taken over (with a warning) rather than blocking the folder for ever."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from induce.data.errors import InputError


class LockedError(InputError):
    """Another live process holds the lock."""


class FileLock:
    """An exclusive lock held by this process: a file holding its pid, created with
    ``O_EXCL``.  A lock whose process is alive is refused (:class:`InputError` naming the
    pid); one whose process is gone (killed) is taken over with a warning."""

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
                handle.write(f"{os.getpid()}\n")
            os.chmod(tmp, 0o644)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                raise
            except OSError:  # no hard links on this file system
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                with os.fdopen(fd, "w") as handle:
                    handle.write(f"{os.getpid()}\n")
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
        pid = _lock_pid(self.path)
        if pid is not None and pid != os.getpid() and _alive(pid):
            raise LockedError(f"{self.what} is in use by process {pid}", str(self.path))
        if pid != os.getpid():
            import warnings

            from induce.data.errors import InduceWarning

            holder = f"process {pid}, which is gone" if pid else "no process (no pid in the file)"
            warnings.warn(
                f"{self.path}: taking over the lock of {holder}",
                InduceWarning,
                stacklevel=3,
            )
        if _lock_pid(self.path) == pid:  # still the stale holder's: remove it, then retry
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass  # another process took it over first: the retry meets its lock
            except OSError as err:
                raise InputError(f"cannot lock: {err.strerror}", str(self.path)) from None

    def release(self) -> None:
        if self.held and _lock_pid(self.path) == os.getpid():
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


def live_holder(path: str | os.PathLike[str]) -> int | None:
    """The process id holding the lock file ``path`` if that process is alive, else
    ``None`` (no lock, or a stale one that the next taker takes over)."""
    pid = _lock_pid(Path(path))
    return pid if pid is not None and _alive(pid) else None


def _lock_pid(path: Path) -> int | None:
    """The process id a lock file holds; ``None`` when it holds none (empty, garbage, a
    number no process can have, unreadable)."""
    try:
        pid = int(path.read_text(encoding="utf-8").strip() or "0")
    except (OSError, ValueError):
        return None
    return pid if 0 < pid <= _MAX_PID else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
