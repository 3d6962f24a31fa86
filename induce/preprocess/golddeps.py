"""Gold dependencies from an existing conversion, aligned with the trees of a dataset.

The papers score DDA/UDA against dependency conversions made by other tools (UDGN reads a
``.dep`` file next to every ``.mrg``; StructFormer reads one Stanford and one CoNLL-style file
for section 23), not against head rules applied by the scorer.  ``preprocess ptb --deps``
takes such a conversion and writes ``{split}.deps.conllu``: the conversion's sentences, every
token kept (punctuation too, so ``evaluate deps`` applies its convention to them), in the
order of ``{split}.txt``.  Each sentence is checked against its tree: the conversion's words
whose tag is a word tag, normalised as the dataset, must be the tree's words.

Two layouts: per tree file (``--deps next`` looks beside each tree file, ``--deps DIR`` in a
folder, flat or with ``NN/`` section folders), names ``wsj_2300.mrg.dep``, ``wsj_2300.dep``,
``.dp``, ``.conll``, ``.conllx``, ``.conllu`` (any case); or one file per split
(``--deps-file test=FILE``) with one sentence per tree of the split, in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from induce.data.conll import DepFile
from induce.data.conll_write import format_deps
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization
from induce.data.types import DepTree

_SECTION = re.compile(r"wsj_(\d\d)\d\d\b", re.IGNORECASE)  # an LDC file's section: wsj_2300.mrg
_SUFFIXES = (".dep", ".dp", ".conll", ".conllx", ".conllu", ".stanford")
NEXT_TO_TREES = "next"


@dataclass(frozen=True)
class DepSource:
    """Where the gold conversion is: per tree file (``folder``: a path, or ``next`` for
    beside the trees) or one file per split (``files``); ``scheme`` names the conversion
    (recorded in the manifest: ``stanford-basic``, ``conll2007``, ...)."""

    folder: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    scheme: str = "unknown"

    def __post_init__(self) -> None:
        if self.folder is not None and self.files:
            raise InputError("give the conversion per tree file or per split, not both")
        if self.scheme != "unknown" and not self.active:
            raise ConfigError(
                "names the gold conversion, and none is given (--deps or --deps-file)",
                setting="deps_scheme",
            )

    @property
    def active(self) -> bool:
        return self.folder is not None or bool(self.files)

    def describe(self) -> dict[str, object]:
        where = (
            {"per_file": self.folder if self.folder == NEXT_TO_TREES else _full(self.folder)}
            if self.folder is not None
            else {"per_split": {s: _full(f) for s, f in sorted(self.files.items())}}
        )
        return {"scheme": self.scheme, **where}


def dep_file_for(
    tree_file: str | Path, source: DepSource, listings: dict[Path, dict[str, Path]] | None = None
) -> Path:
    """The conversion of one tree file: the first existing candidate name, else an error
    naming where it was looked for.  ``listings`` keeps each folder's listing between calls
    (a section folder is listed once, not once per tree file)."""
    tree = Path(tree_file)
    if source.folder == NEXT_TO_TREES:
        folders = [tree.parent]
    else:
        base = Path(str(source.folder))
        # a section's folder by the tree file's folder (LDC's NN/) or by its name (a flat
        # treebank's wsj_NNxx.mrg), else the folder itself
        section = _SECTION.match(tree.name)
        names = [tree.parent.name] + ([section.group(1)] if section else [])
        folders = list(dict.fromkeys([*(base / name for name in names), base]))
    names = [tree.name + s for s in _SUFFIXES] + [tree.stem + s for s in _SUFFIXES]
    listings = {} if listings is None else listings
    for folder in folders:
        if not folder.is_dir():
            continue
        if folder not in listings:
            listings[folder] = {p.name.lower(): p for p in folder.iterdir()}
        present = listings[folder]
        for name in names:
            found = present.get(name.lower())
            if found is not None and found.is_file():
                return found
    raise InputError(
        f"no dependency conversion of {tree.name} (looked for {tree.name}.dep, "
        f"{tree.stem}.dep/.dp/.conll/.conllu in {', '.join(str(f) for f in folders)})",
        str(tree),
    )


def aligned(
    deps: DepFile,
    start: int,
    lines: Sequence[str],
    normalization: Normalization,
    what: str,
) -> list[DepTree]:
    """The conversion's sentences ``start .. start + len(lines)`` matched to the trees'
    word lines (``""``: a tree without words, whose sentence is skipped too); a sentence
    whose kept words differ from its tree's is an error at the conversion's file and line."""
    if start + len(lines) > len(deps):
        raise InputError(
            f"the dependency conversion has {len(deps)} sentences, fewer than the "
            f"{start + len(lines)} trees of {what}",
            deps.path,
        )
    out = []
    for k, line in enumerate(lines):
        tree = deps.sentences[start + k]
        pairs = zip(tree.tags or ("",) * len(tree), tree.words)
        words = normalization.line(pairs)
        if words != line:
            path, at = deps.where(start + k)
            raise InputError(
                f"sentence {start + k + 1} does not match tree {k + 1} of {what}: "
                f"words {_show(words)} vs tree {_show(line)}",
                f"{path}:{at}",
            )
        if line:
            out.append(tree)
    return out


def conllu_lines(trees: Sequence[DepTree]) -> list[str]:
    """Lines of a CoNLL-U file (a blank line after each sentence)."""
    return format_deps(trees, "conllu").split("\n")[:-1]


def _full(path: str) -> str:
    return str(Path(path).resolve())


def _show(words: str, limit: int = 8) -> str:
    items = words.split()
    shown = " ".join(items[:limit]) + (" ..." if len(items) > limit else "")
    return f"[{shown}]"
