"""Optional extras: checked before a command does its work, not after.

``induce evaluate pcc --plot`` and ``induce report --plot`` need matplotlib, which is not a
dependency of ``induce`` (``pip install 'induce[plot]'``): a command that would fail for its
want only after minutes of work checks first, with :func:`require`.
"""

from __future__ import annotations

import importlib.util

from induce.data.errors import ConfigError

EXTRAS = {"matplotlib": "plot", "playwright": "browser"}


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, setting: str) -> None:
    """Stop with a one-line :class:`ConfigError` naming the extra to install when ``module``
    is missing; ``setting``: the argument that wants it (``plot``)."""
    if not available(module):
        extra = EXTRAS.get(module)
        how = f"pip install 'induce[{extra}]'" if extra else f"pip install {module}"
        raise ConfigError(f"needs {module}, which is not installed: {how}", setting=setting)
