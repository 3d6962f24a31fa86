"""``induce convert deps``: dependency files between formats, punctuation removal, heights."""

from __future__ import annotations

from typing import TYPE_CHECKING

from induce.convert.tags import check_tag_filters
from induce.data.conll import DepFile, read_deps, with_upos
from induce.data.conll_write import subset_tokens
from induce.data.errors import InputError
from induce.data.normalize import is_upos_tagset
from induce.data.types import DepTree
from induce.data.word_columns import WordColumns
from induce.structure.deps import restrict_heads
from induce.structure.heights import dependency_heights

if TYPE_CHECKING:
    from conllu.models import TokenList


def convert_deps(
    path: str,
    fmt: str | None = None,
    drop_tags: frozenset[str] = frozenset(),
    keep_tags: frozenset[str] | None = None,
) -> tuple[DepFile, int]:
    """Read ``path``; with ``drop_tags`` / ``keep_tags``, remove those words.

    As in the evaluators, a removed word's dependents climb to its nearest kept ancestor.
    Unlike them, the output must stay one tree per sentence: when the root itself goes, the
    leftmost word left attached to the root becomes the root (with the old root's label) and
    the others attached there depend on it.  CoNLL-U input keeps its other columns and comments
    (multiword tokens and empty nodes go once words are removed, and so does ``# text``);
    CoNLL-X input its LEMMA, CPOSTAG and FEATS.
    Returns the file and how many sentences were left without a word (and dropped).
    """
    deps = read_deps(path, fmt)
    if not len(deps):
        raise InputError("no sentences in the file", path)
    if not drop_tags and keep_tags is None:
        return deps, 0
    # a tag set of UPOS names filters CoNLL-U by its UPOS column (the output keeps its tags)
    by = with_upos(deps) if keep_tags and is_upos_tagset(keep_tags) else deps
    seen = (t for tree in by.sentences for t in tree.tags or ())
    check_tag_filters(seen, drop_tags, keep_tags, path)
    out: list[DepTree] = []
    lines: list[int] = []
    source_raw, source_columns = deps.raw, deps.columns
    raw: list[TokenList] | None = [] if source_raw is not None else None
    columns: list[WordColumns] | None = [] if source_columns is not None else None
    for k, (tree, filtered) in enumerate(zip(deps.sentences, by.sentences, strict=True)):
        tags = tree.tags or ("_",) * len(tree)
        keys = filtered.tags or ("_",) * len(tree)
        keep = [t not in drop_tags and (keep_tags is None or t in keep_tags) for t in keys]
        if not any(keep):
            continue
        heads = restrict_heads(tree.heads, keep)
        roots = [i for i, h in enumerate(heads, 1) if h == 0]
        for extra in roots[1:]:
            heads[extra - 1] = roots[0]
        kept = [i for i, flag in enumerate(keep) if flag]
        labels = None
        if tree.labels is not None:
            root_label = tree.labels[tree.root - 1]
            labels = tuple(root_label if h == 0 else tree.labels[i] for i, h in zip(kept, heads))
        out.append(
            DepTree(
                tuple(tree.words[i] for i in kept),
                tuple(heads),
                tuple(tags[i] for i in kept),
                labels,
            )
        )
        lines.append(deps.lines[k])
        if raw is not None and source_raw is not None:
            raw.append(subset_tokens(source_raw[k], kept))
        if columns is not None and source_columns is not None:
            columns.append(source_columns[k].subset(kept))
    done = DepFile(deps.path, deps.format, out, lines, raw=raw, columns=columns)
    return done, len(deps) - len(out)


def height_records(deps: DepFile) -> list[dict]:
    """``{"words", "heads", "heights"}`` per sentence (Definition 3.2)."""
    return [
        {"words": list(t.words), "heads": list(t.heads), "heights": dependency_heights(t.heads)}
        for t in deps.sentences
    ]
