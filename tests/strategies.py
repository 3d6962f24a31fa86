"""Hypothesis strategies shared by the tests: random trees over given leaves."""

from __future__ import annotations

from hypothesis import strategies as st

from induce.data.types import Tree

LABELS = ["S", "NP", "VP", "PP", "NP-SBJ", "ADVP", "PRT", "SBAR=2", "X"]


@st.composite
def tree_over(draw, leaves: list[Tree], labels=LABELS, unary: bool = True) -> Tree:
    """A random tree whose preterminals are ``leaves`` (in order); n-ary nodes, optional
    unary chains."""
    if len(leaves) == 1 and not (unary and draw(st.booleans())):
        return leaves[0]
    if len(leaves) == 1:
        return Tree(draw(st.sampled_from(labels)), [draw(tree_over(leaves, labels, unary))])
    k = draw(st.integers(1 if unary else 2, min(4, len(leaves))))
    cuts = (
        sorted(draw(st.sets(st.integers(1, len(leaves) - 1), min_size=k - 1, max_size=k - 1)))
        if k > 1
        else []
    )
    parts, previous = [], 0
    for cut in cuts + [len(leaves)]:
        parts.append(draw(tree_over(leaves[previous:cut], labels, unary)))
        previous = cut
    return Tree(draw(st.sampled_from(labels)), parts)


@st.composite
def sentence(draw, tags=("NN", "DT", "VB", ",", ".", "-NONE-"), max_words: int = 8):
    """A list of preterminals with random words and tags."""
    n = draw(st.integers(1, max_words))
    return [Tree(draw(st.sampled_from(tags)), [draw(st.sampled_from("abcde"))]) for _ in range(n)]
