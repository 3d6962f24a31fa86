"""Dependency decoders over arc scores: argmax heads, Chu-Liu/Edmonds (the best spanning
arborescence with exactly one root word) and Eisner (the best projective tree, one root word).

Scores are ``[n, n + 1]`` (numpy or nested lists): row ``i`` holds the scores of word
``i + 1`` taking head ``0`` (the root) .. ``n``; use log-probabilities so that a tree's score
is the sum of its arcs.  Every decoder returns heads ``[n]`` (0 = root, 1-based).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from induce.data.types import Tree
from induce.decode.distances import SentenceParse
from induce.structure.heights import projective_tree

DECODERS = ("mst", "eisner", "argmax", "mst-uniform-root")


def arc_scores(parents: ArrayLike, roots: ArrayLike) -> np.ndarray:
    """``[n, n + 1]`` log-probability scores from ``parents [n, n]`` (row i: word i's head
    probabilities, diagonal unused) and ``roots [n]``."""
    p = np.asarray(parents, dtype=np.float64)
    n = p.shape[0]
    out = np.empty((n, n + 1))
    with np.errstate(divide="ignore"):
        out[:, 0] = np.log(np.asarray(roots, dtype=np.float64))
        out[:, 1:] = np.log(p)
    out[np.arange(n), np.arange(n) + 1] = -np.inf
    return out


def decode_arcs(words: Sequence[str], scores: ArrayLike, decoder: str = "mst") -> SentenceParse:
    """Heads by ``decoder`` and, as a constituency read-out, the binary tree that the best
    projective tree (Eisner) projects to."""
    heads = decode(scores, decoder)
    projective = heads if decoder == "eisner" else eisner(scores)
    tree = projective_tree([Tree("X", [w]) for w in words], projective)
    return SentenceParse(tree, heads)


def _matrix(scores: ArrayLike) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[0]
    if s.ndim != 2 or s.shape[1] != n + 1:
        raise ValueError(f"scores must be [n, n + 1], got {list(s.shape)}")
    return s


def decode(scores: ArrayLike, decoder: str = "mst") -> list[int]:
    if decoder == "mst":
        return mst(scores)
    if decoder == "eisner":
        return eisner(scores)
    if decoder == "argmax":
        return argmax(scores)
    if decoder == "mst-uniform-root":
        return mst_uniform_root(scores)
    raise ValueError(f"decoder must be one of {DECODERS}, got {decoder!r}")


def mst_uniform_root(scores: ArrayLike) -> list[int]:
    """The official UDGN test decoder: Chu-Liu/Edmonds run with each word as the root in
    turn, every root arc scoring the same (zero), and the best tree kept - the model's own
    root scores are ignored.  The best tree over all roots is the best tree of the whole
    matrix with its root column set to zero, so one :func:`mst` call finds it (O(n^3) rather
    than the official O(n^4)); trees of exactly equal score may differ in which is kept."""
    s = _matrix(scores).copy()
    s[:, 0] = 0.0
    return mst(s)


def argmax(scores: ArrayLike) -> list[int]:
    """Each word's best head on its own (may be cyclic or have several roots)."""
    s = _matrix(scores).copy()
    n = s.shape[0]
    s[np.arange(n), np.arange(n) + 1] = -np.inf  # no self-loops
    return s.argmax(1).tolist()


def mst(scores: ArrayLike) -> list[int]:
    """Chu-Liu/Edmonds: the highest-scoring spanning arborescence rooted at 0 whose root has
    exactly one dependent.  Root arcs are lowered by a constant larger than any score
    difference, so the best tree with a single root arc wins (every tree has at least one);
    O(n^3) with vectorised contractions."""
    s = _matrix(scores)
    n = s.shape[0]
    if n == 0:
        return []
    w = np.full((n + 1, n + 1), -np.inf)  # w[h, d]
    w[:, 1:] = s.T
    finite = w[np.isfinite(w)]
    spread = (finite.max() - finite.min()) if finite.size else 0.0
    w[0, 1:] -= (spread + 1.0) * (n + 1)
    np.fill_diagonal(w, -np.inf)
    heads = _chu_liu_edmonds(w)
    return [int(h) for h in heads[1:]]


def _chu_liu_edmonds(w: np.ndarray) -> np.ndarray:
    """Best arborescence rooted at node 0 of the dense graph ``w[h, d]``; ``heads[0] = -1``.

    Iterative: cycles are contracted one after another (a long sentence can need as many
    contractions as it has words), then the contractions are undone in reverse order."""
    contractions: list[_Contraction] = []
    while True:
        heads = w.argmax(0)
        heads[0] = -1
        cycle = _find_cycle(heads)
        if cycle is None:
            break
        w, contraction = _contract(w, heads, cycle)
        contractions.append(contraction)
    for contraction in reversed(contractions):
        heads = contraction.expand(heads)
    return heads


@dataclass(frozen=True)
class _Contraction:
    """One cycle contracted into a single node: what is needed to undo it."""

    heads: np.ndarray  # the greedy heads of the graph before contraction
    rest: np.ndarray  # the nodes outside the cycle (the root first); node k of the new graph
    cycle: np.ndarray  # the cycle's nodes; they are node ``len(rest)`` of the new graph
    best_h: np.ndarray  # [rest]: the cycle node that best heads each outside node
    best_d: np.ndarray  # [rest]: the cycle node best entered from each outside node

    def expand(self, inner: np.ndarray) -> np.ndarray:
        """The heads of the graph before contraction from ``inner``, the heads of the graph
        after it."""
        rest, cyc = self.rest, self.cycle
        c = len(rest)
        out = self.heads.copy()
        h = inner[1:c]  # heads of the outside nodes but the root
        out[rest[1:]] = np.where(h == c, cyc[self.best_h[1:]], rest[np.minimum(h, c - 1)])
        entry_from = inner[c]
        out[cyc[self.best_d[entry_from]]] = rest[entry_from]
        return out


def _contract(
    w: np.ndarray, heads: np.ndarray, cycle: list[int]
) -> tuple[np.ndarray, _Contraction]:
    """The graph with ``cycle`` contracted into one node (the last), and how to undo it."""
    m = w.shape[0]
    in_cycle = np.zeros(m, dtype=bool)
    in_cycle[cycle] = True
    rest = np.flatnonzero(~in_cycle)  # includes the root (node 0)
    c = len(rest)  # index of the contracted node
    cyc = np.array(cycle)
    sub = np.full((c + 1, c + 1), -np.inf)
    sub[:c, :c] = w[rest[:, None], rest]
    # into the cycle: entering d (in the cycle) from h replaces d's cycle arc
    enter = w[rest[:, None], cyc] - w[heads[cyc], cyc][None, :]  # [rest, cycle]
    best_d = enter.argmax(1)
    sub[:c, c] = enter[np.arange(c), best_d]
    # out of the cycle: the best cycle node as head of each outside node
    leave = w[cyc[:, None], rest]  # [cycle, rest]
    best_h = leave.argmax(0)
    sub[c, :c] = leave[best_h, np.arange(c)]
    sub[c, 0] = -np.inf  # nothing heads 0
    np.fill_diagonal(sub, -np.inf)
    return sub, _Contraction(heads, rest, cyc, best_h, best_d)


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    m = len(heads)
    state = np.zeros(m, dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    state[0] = 2
    for start in range(1, m):
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = heads[node]
        if state[node] == 1:  # closed a loop on this path
            return path[path.index(node) :]
        for p in path:
            state[p] = 2
    return None


def eisner(scores: ArrayLike) -> list[int]:
    """Eisner's O(n^3) algorithm: the best projective tree whose root has exactly one
    dependent (the root word spans the sentence)."""
    s = _matrix(scores)
    n = s.shape[0]
    if n == 0:
        return []
    arc = s[:, 1:].T  # arc[h, d] over words 0..n-1 (h != d)
    neg = -np.inf
    # complete[i, j, dir] / incomplete[i, j, dir]: span i..j, dir 1 = head at i (rightward),
    # dir 0 = head at j (leftward); back pointers hold split points.
    comp = np.full((n, n, 2), neg)
    inc = np.full((n, n, 2), neg)
    comp_bp = np.zeros((n, n, 2), dtype=np.int64)
    inc_bp = np.zeros((n, n, 2), dtype=np.int64)
    idx = np.arange(n)
    comp[idx, idx, :] = 0.0
    # one vectorised step per span width: every span i..i+width at once
    for width in range(1, n):
        i = np.arange(n - width)
        j = i + width
        rows = np.arange(len(i))
        ks = i[:, None] + np.arange(width)[None, :]  # [spans, width]: i..j-1
        both = comp[i[:, None], ks, 1] + comp[ks + 1, j[:, None], 0]
        k = both.argmax(1)
        best = both[rows, k]
        inc[i, j, 0] = best + arc[j, i]  # j heads i
        inc[i, j, 1] = best + arc[i, j]  # i heads j
        inc_bp[i, j, 0] = inc_bp[i, j, 1] = i + k
        left = comp[i[:, None], ks, 0] + inc[ks, j[:, None], 0]  # head j, complete left
        k = left.argmax(1)
        comp[i, j, 0], comp_bp[i, j, 0] = left[rows, k], i + k
        right = inc[i[:, None], ks + 1, 1] + comp[ks + 1, j[:, None], 1]
        k = right.argmax(1)
        comp[i, j, 1], comp_bp[i, j, 1] = right[rows, k], i + 1 + k
    root_scores = comp[0, idx, 0] + comp[idx, n - 1, 1] + s[:, 0]
    root = int(root_scores.argmax())
    heads = [0] * n
    # back-tracking: (start, end, direction, complete?) of the spans still to read
    stack: list[tuple[int, int, int, bool]] = [(0, root, 0, True), (root, n - 1, 1, True)]
    while stack:
        lo, hi, d, complete = stack.pop()
        if lo == hi:
            continue
        if complete:
            split = int(comp_bp[lo, hi, d])
            if d == 0:
                stack += [(lo, split, 0, True), (split, hi, 0, False)]
            else:
                stack += [(lo, split, 1, False), (split, hi, 1, True)]
        else:
            split = int(inc_bp[lo, hi, d])
            if d == 0:
                heads[lo] = hi + 1
            else:
                heads[hi] = lo + 1
            stack += [(lo, split, 1, True), (split + 1, hi, 0, True)]
    heads[root] = 0
    return heads
