"""Tree read-outs of Combiner's layer-wise connections (this project's choice: the paper
leaves the read-out unspecified).

``merge``: for the gap between words ``i`` and ``i + 1``, the first layer (1-based) at which
the two are in one connected component of the symmetrised support (``N + 1`` if never),
plus ``0.5 * (1 - a)`` where ``a`` is the attention the two pay each other at that layer
(the last layer if never): pairs joined in the same layer are split first where they attend
least to each other.  ``divergence``: the mean over layers of the Jensen-Shannon divergence
between the attention rows of ``i`` and ``i + 1``.  ``levels`` (``hierarchy: constituent``
only): the soft merge level ``1 + sum_l (1 - a^l_g)`` of the gap's links ``a^l_g``; where the
links are 0 or 1 it is the ``merge`` level, else it keeps how far each link is from closing
its gap in every layer, where ``merge`` keeps only the first layer past the threshold.
The distances go to Algorithm 1.

Shapes: ``N`` layers, ``n`` words.
"""

from __future__ import annotations

import math

import torch


def merge_distances(supports: torch.Tensor, attention: torch.Tensor) -> list[float]:
    """``supports [N, n, n]`` (bool) and ``attention [N, n, n]`` -> ``n - 1`` distances."""
    layers, n = supports.shape[0], supports.shape[-1]
    if n < 2:
        return []
    reach = (supports | supports.transpose(-1, -2)).float()
    reach = reach + torch.eye(n)[None]
    for _ in range(max(1, math.ceil(math.log2(n)))):  # transitive closure by squaring
        reach = (torch.matmul(reach, reach) > 0).float()
    gap = torch.arange(n - 1)
    joined = reach[:, gap, gap + 1] > 0  # [N, n - 1]
    first = joined.int().argmax(0)  # connections are inherited: the first True
    level = torch.where(joined.any(0), first + 1, torch.full_like(first, layers + 1))
    layer = (level - 1).clamp(max=layers - 1)
    mass = (attention[layer, gap, gap + 1] + attention[layer, gap + 1, gap]) / 2
    return (level.double() + 0.5 * (1.0 - mass.double())).tolist()


def divergence_distances(attention: torch.Tensor) -> list[float]:
    """Mean over layers of ``JS(attention[l, i], attention[l, i + 1])`` for each gap."""
    n = attention.shape[-1]
    if n < 2:
        return []
    p = attention[:, :-1].double().clamp_min(0)
    q = attention[:, 1:].double().clamp_min(0)
    m = (p + q) / 2

    def kl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ratio = torch.where(a > 0, a / b.clamp_min(1e-300), torch.ones_like(a))
        return (a * ratio.log()).sum(-1)

    return ((kl(p, m) + kl(q, m)) / 2).mean(0).tolist()


def soft_levels(links: torch.Tensor) -> list[float]:
    """``links [N, n - 1]`` (each layer's links, growing upward) -> ``n - 1`` soft merge
    levels ``1 + sum_l (1 - links[l])``."""
    return (1.0 + (1.0 - links.double()).sum(0)).tolist()
