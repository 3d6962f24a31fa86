"""Progress of long jobs, reported to whoever listens: the library calls :func:`advance`
as it works and never prints; a command that wants a progress bar listens with
:func:`listening` (``induce.cli`` shows a bar on a terminal and nothing elsewhere).
Without a listener :func:`advance` costs one context-variable lookup."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

Listener = Callable[[str, int, int], None]  # (stage, done, total)

_LISTENER: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "induce_progress", default=None
)
EVERY = 500  # sentences between reports in the scoring loops


def advance(stage: str, done: int, total: int) -> None:
    """``done`` of ``total`` items of ``stage`` are finished."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(stage, done, total)


def every(stage: str, done: int, total: int) -> None:
    """:func:`advance` at every :data:`EVERY`-th item and at the last."""
    if done % EVERY == 0 or done == total:
        advance(stage, done, total)


@contextlib.contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send the progress of everything done in the block to ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
