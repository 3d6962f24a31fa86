"""Writing dependency trees: CoNLL-U, CoNLL-X and Malt-TAB (:func:`format_deps`), or CoNLL-U
that keeps every column of the file it was read from (:func:`format_conllu_like`)."""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from induce.data.conll import FORMATS, DepFile
from induce.data.errors import InputError
from induce.data.files import atomic_write
from induce.data.types import DepTree
from induce.data.word_columns import WordColumns

if TYPE_CHECKING:
    from conllu.models import TokenList


def format_deps(
    sentences: Iterable[DepTree], fmt: str, columns: Iterable[WordColumns] | None = None
) -> str:
    """Dependency trees as text in ``fmt``; unknown columns are written as ``_``.
    ``columns``: each sentence's columns as read (:meth:`DepFile.word_columns`), one per tree,
    for CoNLL-U and CoNLL-X; without them a tree's tag is an XPOS with no UPOS, or CoNLL-X's
    CPOSTAG and POSTAG both."""
    if fmt not in FORMATS:
        raise InputError(f"unknown dependency format {fmt!r}")
    out: list[str] = []
    paired: Iterable[tuple[DepTree, WordColumns | None]] = (
        zip(sentences, itertools.repeat(None))
        if columns is None
        else zip(sentences, columns, strict=True)  # a sentence without its columns: a bug
    )
    for tree, other in paired:
        n = len(tree)
        if other is not None and len(other) != n:
            raise ValueError(f"{n} words in the tree, {len(other)} in its columns")
        tags = tree.tags or ("_",) * n
        labels = tree.labels or ("_",) * n
        for i in range(n):
            word, tag, head, label = tree.words[i], tags[i], tree.heads[i], labels[i]
            if fmt == "malt":
                out.append(f"{word}\t{tag}\t{head}\t{label}\n")
            elif fmt == "conllu":
                lemma, upos, xpos, feats = other.as_conllu(i) if other else ("_", "_", tag, "_")
                out.append(
                    f"{i + 1}\t{word}\t{lemma}\t{upos}\t{xpos}\t{feats}\t{head}\t{label}\t_\t_\n"
                )
            else:
                lemma, coarse, fine, feats = other.as_conllx(i) if other else ("_", tag, tag, "_")
                out.append(
                    f"{i + 1}\t{word}\t{lemma}\t{coarse}\t{fine}\t{feats}\t{head}\t{label}\t_\t_\n"
                )
        out.append("\n")
    return "".join(out)


def format_conllu_like(source: DepFile, sentences: Iterable[DepTree]) -> str:
    """CoNLL-U that keeps everything of ``source`` (comments, multiword tokens, empty nodes,
    every column) but HEAD and DEPREL, taken from ``sentences`` (one per source sentence)."""
    if source.raw is None:
        raise InputError("only a CoNLL-U source can be written back with its columns", source.path)
    out = []
    for original, tree in zip(source.raw, sentences, strict=True):
        tokens = copy.deepcopy(original)  # the source stays as it was read
        words = [t for t in tokens if isinstance(t["id"], int)]
        if len(words) != len(tree):
            raise ValueError(f"{len(words)} words in the source, {len(tree)} in the tree")
        labels = tree.labels or ("_",) * len(tree)
        for token, head, label in zip(words, tree.heads, labels):
            token["head"] = head
            token["deprel"] = label
        out.append(tokens.serialize())
    return "".join(out)


def subset_tokens(tokens: TokenList, kept: list[int]) -> TokenList:
    """A CoNLL-U sentence reduced to the words at 0-based positions ``kept`` (renumbered;
    HEAD and DEPREL are set when written).  What no longer matches goes: multiword tokens,
    empty nodes, the enhanced DEPS column and the ``# text`` comment; other comments stay."""
    from conllu.models import Metadata, TokenList

    words = [t for t in tokens if isinstance(t["id"], int)]
    chosen = []
    for new_id, i in enumerate(kept, 1):
        token = copy.deepcopy(words[i])
        token["id"] = new_id
        token["deps"] = "_"  # enhanced dependencies point at the old numbering
        chosen.append(token)
    metadata = Metadata({key: value for key, value in tokens.metadata.items() if key != "text"})
    return TokenList(chosen, metadata=metadata)


def write_deps(path: str | os.PathLike[str], sentences: Iterable[DepTree], fmt: str) -> None:
    atomic_write(path, format_deps(sentences, fmt))
