"""``induce report``: runs (seeds) into the papers' "mean (std)" table
(:mod:`~induce.reporting.table`, each run's numbers read by
:mod:`~induce.reporting.results`), their training curves (:mod:`~induce.reporting.curves`),
and the validation table that ends a training run (:mod:`~induce.reporting.validation`).

:func:`report` is the Python entry point (``induce.report(runs)``): a pandas DataFrame.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from induce.reporting.results import RunResults, read_run, read_runs
from induce.reporting.table import (
    aggregate,
    cells,
    ordered,
    setting_labels,
    to_csv,
    to_latex,
    to_markdown,
)
from induce.reporting.validation import Row, baseline_rows, run_dataset, run_rows

if TYPE_CHECKING:
    import pandas as pd


def report(runs: list[str | Path] | str | Path) -> pd.DataFrame:
    """The table of ``induce report`` for run directories ``runs``: one row per setting
    (``model``, ``protocol``, ``gold``, ``runs``) and a ``(metric, "mean")`` and
    ``(metric, "std")`` column per number.  A run named twice is refused (it would count as
    two seeds)."""
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    return aggregate(read_runs(paths))


__all__ = [
    "Row",
    "RunResults",
    "aggregate",
    "baseline_rows",
    "cells",
    "ordered",
    "read_run",
    "read_runs",
    "report",
    "run_dataset",
    "run_rows",
    "setting_labels",
    "to_csv",
    "to_latex",
    "to_markdown",
]
