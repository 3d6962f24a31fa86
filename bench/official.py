"""The official StructFormer/UDGN code as the benchmarks run it: ``main.py``'s model and the
test loop's read-outs (``dms`` for UDGN's heads, the largest-distance split for
StructFormer's trees).

``path`` is a checkout of github.com/yikangshen/UDGN, which the measuring process imports
from where the user put it; nothing of it is copied or vendored.  ``bench/side_by_side.py``,
``bench/long_runs.py`` and ``bench/step_parity.py`` build their official side here.
"""

from __future__ import annotations

import sys
from typing import Any

PAPER = (512, 8, 8, 128)  # main.py: --nemb 512 --nlayers 8 --nheads 8 --head_size 128


def official_model(
    path: str,
    arch: str,
    vocab: int,
    pad: int,
    sizes: tuple[int, int, int, int] = PAPER,
    dropout: float = 0.2,
) -> Any:
    """The official model with ``main.py``'s defaults: ``sizes`` (embedding, layers, heads,
    UDGN's head size), ``--dropout 0.2`` (UDGN's parser dropout too) with ``--dropatt 0.1``
    (0 with ``dropout`` 0), ``--n_parser_layers 3``, no ``--pos_emb``."""
    sys.path.insert(0, path)
    import models  # type: ignore[import-not-found]  # the official models.py

    emb, layers, heads, head_size = sizes
    common = dict(emb_size=emb, nlayers=layers, ntokens=vocab, nhead=heads, dropout=dropout)
    common.update(dropatt=0.1 if dropout else 0.0, pos_emb=False, pad=pad, n_parser_layers=3)
    if arch == "udgn":
        return models.UDGN(head_size=head_size, parser_dropout=dropout, **common)
    return models.StructFormer(**common)


def dms(head: Any) -> list[int]:
    """The official UDGN test decoder on one sentence's head distribution ``head [n, n]``
    (float64): one Chu-Liu/Edmonds per candidate root, the best tree's heads (index 0 the
    root position, then 0 for the root word or a 1-based head).  Needs ``ufal.chu_liu_edmonds``
    (ImportError without it)."""
    import numpy
    from ufal.chu_liu_edmonds import chu_liu_edmonds  # type: ignore[import-not-found]

    weights = numpy.pad(numpy.log(head + 1e-9), ((1, 0), (1, 0)), mode="constant")
    best, heads = -numpy.inf, None
    for i in range(1, weights.shape[0]):
        w = weights.copy()
        w[:, 0] = numpy.nan
        w[i, 0] = 0.0
        found, score = chu_liu_edmonds(w)
        if score > best:
            best, heads = score, found
    return list(heads or [])


def split(distance: list[float], lo: int, hi: int) -> Any:
    """The official StructFormer read-out's recursion over words ``lo`` .. ``hi - 1``: split
    at the largest distance; a word is its index, a constituent a pair."""
    if hi - lo <= 1:
        return lo
    k = max(range(lo, hi - 1), key=lambda i: distance[i])
    return (split(distance, lo, k + 1), split(distance, k + 1, hi))
