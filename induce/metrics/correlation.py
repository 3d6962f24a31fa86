"""Pearson correlation between attention heads and dependency labels (UDGN §4.3, Table 3).

Over the gold edges of a corpus, head ``h`` gives each edge a weight ``x_e`` and label ``l``
an indicator ``y_e = [label(e) = l]``; the score is Pearson's r between the two columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pearson_matrix(weights: np.ndarray, labels: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """``weights [edges, heads]`` and each edge's label -> (label names sorted by frequency,
    then name; ``r [heads, labels]``).  A constant column (a head that gives every edge the
    same weight, or a label on every edge) has no correlation: ``nan``."""
    x = np.asarray(weights, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(labels):
        raise ValueError("weights must be [edges, heads] with one label per edge")
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    names = sorted(counts, key=lambda name: (-counts[name], name))
    index = {name: k for k, name in enumerate(names)}
    y = np.zeros((len(labels), len(names)))
    y[np.arange(len(labels)), [index[label] for label in labels]] = 1.0
    xc = x - x.mean(0)
    yc = y - y.mean(0)
    cov = xc.T @ yc
    norm = np.sqrt((xc**2).sum(0))[:, None] * np.sqrt((yc**2).sum(0))[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(norm > 0, cov / np.where(norm > 0, norm, 1.0), np.nan)
    return names, r
