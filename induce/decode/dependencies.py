"""Dependency decoders over arc scores: argmax heads, Chu-Liu/Edmonds (the best spanning
arborescence with exactly one root word) and Eisner (the best projective tree, one root word).

Scores are ``[n, n + 1]`` (numpy or nested lists): row ``i`` holds the scores of word
``i + 1`` taking head ``0`` (the root) .. ``n``; use log-probabilities so that a tree's score
is the sum of its arcs.  Every decoder returns heads ``[n]`` (0 = root, 1-based).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from induce.data.types import Tree
from induce.decode.distances import SentenceParse
from induce.decode.eisner import eisner_batch
from induce.structure.heights import projective_tree

DECODERS = ("mst", "eisner", "argmax", "mst-uniform-root")


def arc_scores(parents: ArrayLike, roots: ArrayLike) -> np.ndarray:
    """``[n, n + 1]`` log-probability scores from ``parents [n, n]`` (row i: word i's head
    probabilities, diagonal unused) and ``roots [n]``."""
    p = np.asarray(parents)
    n = p.shape[0]
    out = np.empty((n, n + 1))
    with np.errstate(divide="ignore"):  # logarithms in float64, written in place
        np.log(np.asarray(roots), out=out[:, 0], dtype=np.float64)
        np.log(p, out=out[:, 1:], dtype=np.float64)
    out.flat[1 :: n + 2] = -np.inf  # (i, i + 1): word i + 1 as its own head
    return out


def decode_arcs(
    words: Sequence[str],
    scores: ArrayLike,
    decoder: str = "mst",
    projective: list[int] | None = None,
) -> SentenceParse:
    """Heads by ``decoder`` and, as a constituency read-out, the binary tree that the best
    projective tree (Eisner) projects to; ``projective``: that tree's heads when they are
    already known (from :func:`induce.decode.eisner.eisner_batch` over the sentence's batch),
    so that Eisner does not run again."""
    if projective is None:
        projective = eisner(scores)
    heads = list(projective) if decoder == "eisner" else decode(scores, decoder)
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
    than the official O(n^4)); trees of exactly equal score may differ in which is kept (as
    they may between :func:`mst`'s two implementations)."""
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
    difference, so the best tree with a single root arc wins (every tree has at least one).

    Solved by ``ufal.chu_liu_edmonds`` when that package is installed (the ``fast`` extra),
    else by :func:`_chu_liu_edmonds` (NumPy, O(n^3) with vectorised contractions).  Both find
    a best tree; where several trees have exactly the same score, they may keep different
    ones (never on continuous scores in the tests; see ``tests/decode``)."""
    s = _matrix(scores)
    n = s.shape[0]
    if n == 0:
        return []
    finite = s[np.isfinite(s)]
    spread = (finite.max() - finite.min()) if finite.size else 0.0
    lowered = (spread + 1.0) * (n + 1)
    heads = _compiled_chu_liu_edmonds(s, lowered)
    if heads is None:
        w = np.full((n + 1, n + 1), -np.inf)  # w[h, d]
        w[:, 1:] = s.T
        w[0, 1:] -= lowered
        np.fill_diagonal(w, -np.inf)
        heads = _chu_liu_edmonds(w).tolist()
    return heads[1:]


def _compiled_chu_liu_edmonds(s: np.ndarray, lowered: float) -> list[int] | None:
    """The best arborescence of the graph of :func:`mst` (``s [n, n + 1]``, root arcs
    ``lowered``) by ``ufal.chu_liu_edmonds`` (TurboParser's compiled Chu-Liu/Edmonds, about
    ten times faster here), or ``None`` when that package is not installed or finds no tree
    of finite score (then :func:`_chu_liu_edmonds` decides).  The same best tree; only
    between trees of exactly equal score may the two keep different ones."""
    solve = _ufal()
    if solve is None:
        return None
    n = s.shape[0]
    # m[d, h], the solver's layout, written once from s; an impossible arc is NaN: any
    # into the root, a word's own, and those of no finite score
    m = np.empty((n + 1, n + 1))
    m[0] = np.nan
    m[1:] = s
    m[1:, 0] -= lowered
    m[~np.isfinite(m)] = np.nan
    m.flat[:: n + 2] = np.nan
    heads, score = solve(m)
    if heads is None or not np.isfinite(score):
        return None
    return list(heads)  # Python ints; heads[0] (the root's) is -1


_UFAL: list[Callable[[np.ndarray], tuple[list[int] | None, float]] | None] = []


def _ufal() -> Callable[[np.ndarray], tuple[list[int] | None, float]] | None:
    """``ufal.chu_liu_edmonds.chu_liu_edmonds`` when it is installed (looked up once)."""
    if not _UFAL:
        try:
            from ufal.chu_liu_edmonds import chu_liu_edmonds
        except ImportError:
            chu_liu_edmonds = None
        _UFAL.append(chu_liu_edmonds)
    return _UFAL[0]


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
    dependent (the root word spans the sentence); :func:`induce.decode.eisner.eisner_batch`
    on a batch of one."""
    s = _matrix(scores)
    return eisner_batch(s[None], [s.shape[0]])[0]
