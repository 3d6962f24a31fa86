"""The fast path of :mod:`induce.preprocess.treetext`: a whole clean file of trees at once.

Real treebank files are almost always clean: ASCII, balanced, only whitespace between trees,
every word alone under its tag.  For such a file the structure is checked once for the whole
file with vectorised bracket depths (numpy) and a few counts over the file's text, so each tree
costs one slice and one regular-expression scan.  Anything unusual - non-ASCII text, header
lines, a malformed tree, ``( word)`` empty tags, a label on the line after its bracket - makes
:func:`scan_clean_file` return ``None``, and the caller reads the file tree by tree with exact
error positions.  The property test of the tree reader covers both paths.
"""

from __future__ import annotations

import re

import numpy as np

# +1 for "(", -1 for ")", 0 for any other byte.
_STEP = np.zeros(256, dtype=np.int8)
_STEP[ord("(")], _STEP[ord(")")] = 1, -1
# Each byte of space-collapsed text as o (open), c (close), s (space) or t (token), for
# bytes.translate and bytes.count (treetext.py uses the same table).
CLASSES = bytes(
    ord("o")
    if c == ord("(")
    else ord("c")
    if c == ord(")")
    else ord("s")
    if c == ord(" ")
    else ord("t")
    for c in range(256)
)
_OPEN_NEWLINE = re.compile(r"\([^\S\n]*\n")  # a label on the line after its "("
_EMPTY_TAG = re.compile(r"\([^\S\n]+[^\s()]+\s*\)")  # "( word)", its ")" on any line


def scan_clean_file(
    text: str, pattern: re.Pattern
) -> list[tuple[int, str, list[tuple[str, str]]]] | None:
    """``(line, tree text on one line, pattern.findall(tree))`` for every tree of a clean
    file (see the module docstring), or ``None`` when the file needs the careful reader.

    Why the counts suffice: in space-collapsed text every token is a label (right after
    ``(``, maybe after one space) or a word, and every preterminal match holds one label and
    one word, so ``tokens - labels - matches >= 0`` for each tree, with equality exactly when
    every word sits alone under its tag; a sum of zero over the file means zero for each tree.
    """
    if not text.isascii() or _OPEN_NEWLINE.search(text) or _EMPTY_TAG.search(text):
        return None
    flat = " ".join(text.split())
    if not flat:
        return []
    data = flat.encode("ascii")
    codes = np.frombuffer(data, dtype=np.uint8)
    depth = np.cumsum(_STEP[codes], dtype=np.int32)
    if depth[-1] != 0 or depth.min() < 0:
        return None
    closes = codes == ord(")")
    ends = np.flatnonzero((depth == 0) & closes)
    starts = np.flatnonzero((depth == 1) & (codes == ord("(")))
    outside = depth == 0
    outside[ends] = False
    if np.any(codes[outside] != ord(" ")):
        return None  # text between trees: headers or junk
    classes = data.translate(CLASSES)
    ot = classes.count(b"ot")
    tokens = ot + classes.count(b"st") + classes.count(b"ct")
    labels = ot + classes.count(b"ost")
    findall = pattern.findall
    trees = [
        (flat[s : e + 1], findall(flat, s, e + 1)) for s, e in zip(starts.tolist(), ends.tolist())
    ]
    if tokens != labels + sum(len(leaves) for _, leaves in trees):
        return None
    return [
        (line, part, leaves) for line, (part, leaves) in zip(_start_lines(text, len(trees)), trees)
    ]


def _start_lines(text: str, count: int) -> list[int]:
    """The 1-based line where each of the ``count`` top-level trees of ``text`` opens."""
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    depth = np.cumsum(_STEP[codes], dtype=np.int32)
    starts = np.flatnonzero((depth == 1) & (codes == ord("(")))
    newlines = np.flatnonzero(codes == ord("\n"))
    lines = np.searchsorted(newlines, starts) + 1
    assert len(lines) == count
    return lines.tolist()
