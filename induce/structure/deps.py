"""Operations on dependency heads (0 = root, 1-based positions)."""

from __future__ import annotations

from collections.abc import Sequence


def restrict_heads(heads: Sequence[int], keep: Sequence[bool]) -> list[int]:
    """Heads of the kept words only, renumbered among them.

    A head that is not kept is replaced by its nearest kept ancestor, or 0 (the root) when
    there is none: dropping punctuation this way keeps a tree a tree, though it can leave
    several roots when the root itself is dropped.  For a head assignment that is not a tree
    (argmax decoding), a climb that goes round a cycle of dropped words ends at the root.
    """
    new_index = [0] * (len(heads) + 1)
    count = 0
    for i, kept in enumerate(keep, 1):
        if kept:
            count += 1
            new_index[i] = count
    out = []
    for i, kept in enumerate(keep, 1):
        if not kept:
            continue
        head = heads[i - 1]
        steps = 0
        while head != 0 and not keep[head - 1]:
            head = heads[head - 1]
            steps += 1
            if steps > len(heads):  # round a cycle of dropped words
                head = 0
        out.append(new_index[head])
    return out
