"""How attention heads track dependency labels (UDGN §4.3, Table 3).

Over the gold edges of a corpus, head ``h`` gives each edge a weight ``x_e`` and label ``l``
an indicator ``y_e = [label(e) = l]``.  Two statistics of the two columns:

- :func:`mean_matrix`: ``sum_e x_e y_e / sum_e y_e``, the head's mean weight on the edges of
  the label: what UDGN's official ``test_phrase_grammar.py`` saves (``cov_mat.pkl``);
- :func:`pearson_matrix`: Pearson's r, which also asks that the head give the *other*
  labels' edges less weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pearson_matrix(weights: np.ndarray, labels: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """``weights [edges, heads]`` and each edge's label -> (label names sorted by frequency,
    then name; ``r [heads, labels]``).  A constant column (a head that gives every edge the
    same weight, or a label on every edge) has no correlation: ``nan``."""
    x, names, y = _columns(weights, labels)
    xc = x - x.mean(0)
    yc = y - y.mean(0)
    cov = xc.T @ yc
    norm = np.sqrt((xc**2).sum(0))[:, None] * np.sqrt((yc**2).sum(0))[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(norm > 0, cov / np.where(norm > 0, norm, 1.0), np.nan)
    return names, r


def mean_matrix(weights: np.ndarray, labels: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """``weights [edges, heads]`` and each edge's label -> (label names as
    :func:`pearson_matrix` orders them; ``mean [heads, labels]``, each head's mean weight on
    the edges of each label)."""
    x, names, y = _columns(weights, labels)
    return names, (x.T @ y) / y.sum(0)[None, :]


def _columns(
    weights: np.ndarray, labels: Sequence[str]
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """``x [edges, heads]`` in float64, the label names (most frequent first, then by name)
    and their indicators ``y [edges, labels]``."""
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
    return x, names, y
