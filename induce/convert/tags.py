"""The tag filters of ``induce convert deps`` and ``trees`` (``--remove-punct``,
``--keep-tags``) checked against the tags a file has: a filter that can match none of them
would write the input unchanged, or nothing at all, and say nothing."""

from __future__ import annotations

from collections.abc import Iterable

from induce.data.errors import InputError
from induce.data.normalize import load_tagset


def check_tag_filters(
    tags: Iterable[str], drop: frozenset[str], keep: frozenset[str] | None, path: str
) -> None:
    """Refuse ``keep`` when no tag of the file is in it (every sentence would go), and
    ``drop`` (the Penn Treebank's punctuation tags) when the file has no Penn Treebank tag
    at all (a Universal Dependencies file's PUNCT, or no tags: nothing would go)."""
    seen = set(tags)
    shown = ", ".join(sorted(seen)[:8]) + (", ..." if len(seen) > 8 else "")
    if keep is not None and not seen & keep:
        raise InputError(
            f"no word of the file has a tag to keep: every sentence would go (its tags: {shown})",
            path,
        )
    penn = (load_tagset("ptb_word_tags") or frozenset()) | drop
    if drop and not seen & penn:
        raise InputError(
            "punctuation is removed by its Penn Treebank tags (, . : `` '' -LRB- -RRB-), and "
            f"no word of the file has a Penn Treebank tag: nothing would go (its tags: {shown})",
            path,
        )
