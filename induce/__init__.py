"""induce: unsupervised grammar induction and its evaluation.

The package imports nothing heavy at start-up: ``induce evaluate`` and ``induce convert`` must
start fast and run without torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from induce.api import LoadedRun

__version__ = "0.1.0"


def load(run_dir: str | None = None, weights: str = "best", device: str = "auto") -> LoadedRun:
    """A trained run, ready to parse: ``induce.load(RUN).parse([["A", "sentence"]])``
    (see :mod:`induce.api`; no ``run_dir``: the most recent run of ``induce train``); torch
    is imported here, not with the package."""
    import importlib

    # imported by name: the package root stays free of the layers below (the import contract)
    api = importlib.import_module("induce.api")
    loaded: LoadedRun = api.load(run_dir, weights, device)
    return loaded


def report(runs: list[str | Path] | str | Path) -> pd.DataFrame:
    """The table of ``induce report`` for the run directories ``runs`` as a pandas DataFrame:
    a row per setting, ``(metric, "mean")`` and ``(metric, "std")`` columns (see
    :func:`induce.reporting.report`)."""
    import importlib

    reporting = importlib.import_module("induce.reporting")
    table: pd.DataFrame = reporting.report(runs)
    return table


def __getattr__(name: str) -> Any:
    """``induce.evaluate`` (scoring structures in memory) without importing it up front."""
    if name == "evaluate":
        import importlib

        return importlib.import_module("induce.evaluate")
    raise AttributeError(f"module 'induce' has no attribute {name!r}")


__all__ = ["__version__", "evaluate", "load", "report"]
