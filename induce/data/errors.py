"""User-facing errors.

Every problem a user can fix (bad input, bad settings) is an :class:`InduceError` with a
one-line message; ``induce.cli`` prints it as ``error: ...`` and exits with code 2.  Anything
else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

from os import PathLike


class InduceError(Exception):
    """A problem the user can fix; ``str(err)`` is the complete one-line message."""


class InputError(InduceError):
    """Malformed or inconsistent input, located by file and (1-based) line where known."""

    def __init__(
        self, message: str, path: str | PathLike[str] | None = None, line: int | None = None
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(where + _one_line(message))


class ConfigError(InduceError):
    """Invalid settings: unknown keys, wrong types, unknown preset names.

    ``setting`` names the library argument at fault (``"decoder"``, ``"device"``) when there
    is one; the message then starts with it.  The library knows nothing of command-line
    flags: ``induce.cli`` shows the flag that sets that argument in its place.
    """

    def __init__(self, message: str, setting: str | None = None) -> None:
        self.setting = setting
        self.reason = message
        super().__init__(f"{setting} {message}" if setting else message)


class InduceWarning(UserWarning):
    """Something the user should know that does not stop the command (``induce.cli`` shows
    it as ``warning: ...``)."""


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text else text
