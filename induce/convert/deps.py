"""``induce convert deps``: dependency files between formats, punctuation removal, heights."""

from __future__ import annotations

from induce.data.conll import DepFile, read_deps
from induce.data.errors import InputError
from induce.data.types import DepTree
from induce.structure.deps import restrict_heads
from induce.structure.heights import dependency_heights


def convert_deps(path: str, fmt: str | None = None, drop_tags: frozenset[str] = frozenset(),
                 keep_tags: frozenset[str] | None = None) -> tuple[DepFile, int]:
    """Read ``path``; with ``drop_tags`` / ``keep_tags``, remove those words the way the
    evaluators do (a removed word's dependents climb to its nearest kept ancestor).  When the
    root itself goes, the leftmost word attached to the root becomes the root and the others
    attached there depend on it, so that every sentence stays one tree.  Returns the file and
    how many sentences were left without a word (and dropped)."""
    deps = read_deps(path, fmt)
    if not len(deps):
        raise InputError("no sentences in the file", path)
    if not drop_tags and keep_tags is None:
        return deps, 0
    out: list[DepTree] = []
    lines: list[int] = []
    for k, tree in enumerate(deps.sentences):
        tags = tree.tags or ("_",) * len(tree)
        keep = [t not in drop_tags and (keep_tags is None or t in keep_tags) for t in tags]
        if not any(keep):
            continue
        heads = restrict_heads(tree.heads, keep)
        roots = [i for i, h in enumerate(heads, 1) if h == 0]
        for extra in roots[1:]:
            heads[extra - 1] = roots[0]
        kept = [i for i, k_ in enumerate(keep) if k_]
        labels = tree.labels
        out.append(DepTree(tuple(tree.words[i] for i in kept), tuple(heads),
                           tuple(tags[i] for i in kept),
                           None if labels is None else tuple(
                               "root" if heads[j] == 0 and labels[i] not in ("ROOT", "root")
                               else labels[i] for j, i in enumerate(kept))))
        lines.append(deps.lines[k])
    return DepFile(deps.path, deps.format, out, lines), len(deps) - len(out)


def height_records(deps: DepFile) -> list[dict]:
    """``{"words", "heads", "heights"}`` per sentence (Definition 3.2)."""
    return [{"words": list(t.words), "heads": list(t.heads),
             "heights": dependency_heights(t.heads)} for t in deps.sentences]
