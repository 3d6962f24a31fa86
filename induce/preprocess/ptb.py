"""``induce preprocess ptb``: the WSJ Penn Treebank into a dataset, the way the StructFormer and
UDGN code prepares it (the 36 word tags, lower-case, digits as N; the sections and vocabulary
rule of each paper's data code as presets in ``resources/splits/ptb.yaml``), optionally with a
separate parsing test split and the gold dependencies of an existing conversion."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from induce.data.config import load_resource_yaml
from induce.data.conll import read_deps
from induce.data.dataset import SPLITS, DatasetWriter
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization
from induce.data.vocab import Vocabulary
from induce.preprocess.common import (
    FileResult,
    Progress,
    SplitWriter,
    check_subword_vocabulary,
    manifest,
    map_files,
    read_tree_file,
)
from induce.preprocess.golddeps import (
    DepSource,
    aligned,
    conllu_lines,
    dep_file_for,
)
from induce.preprocess.subwords import SubwordTokenizer
from induce.preprocess.treetext import combined_digest

_LDC_NAME = re.compile(r"^wsj_(\d\d)\d\d\.mrg$", re.IGNORECASE)
_SECTION_NAME = re.compile(r"^(\d\d)(\.[A-Za-z]+)?$")
TREE_SUFFIXES = (".mrg", ".trees", ".tree", ".txt", ".ptb")


def parse_sections(spec: str) -> tuple[int, ...]:
    """``"02-21"`` -> 2..21; ``"0-20,24"`` -> 0..20 and 24."""
    out: list[int] = []
    for part in str(spec).split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                out.extend(range(lo, hi + 1))
            elif part:
                out.append(int(part))
        except ValueError:
            raise ConfigError(f"sections must look like 02-21 or 0-20,24; got {spec!r}") from None
    if not out:  # "" or ",": a split of nothing
        raise ConfigError(f"sections must look like 02-21 or 0-20,24; got {spec!r}")
    twice = sorted({s for s in out if out.count(s) > 1})
    if twice:  # its sentences would be read twice, weighing twice in training
        named = ", ".join(f"{s:02d}" for s in twice)
        raise ConfigError(f"sections {spec!r} name section {named} more than once")
    return tuple(out)


def warn_overlaps(plan: dict[str, tuple[int, ...]]) -> None:
    """Say which sections two splits share (a test section in training, say): allowed, as a
    small sample may serve every split, but never silent.  ``parse`` may be a part of
    ``test`` (UDGN's section 23 of 23-24), by design."""
    import warnings

    from induce.data.errors import InduceWarning

    names = list(plan)
    for k, first in enumerate(names):
        for second in names[k + 1 :]:
            if {first, second} == {"test", "parse"}:
                continue
            shared = sorted(set(plan[first]) & set(plan[second]))
            if shared:
                warnings.warn(
                    f"the {first} and {second} splits share section"
                    f"{'s' if len(shared) > 1 else ''} "
                    f"{', '.join(f'{s:02d}' for s in shared)}: their sentences are in both",
                    InduceWarning,
                    stacklevel=3,
                )


def preset_sections(name: str) -> dict[str, Any]:
    """A preset of ``resources/splits/ptb.yaml``: ``train``/``valid``/``test`` sections, and
    optionally ``parse_test`` sections and ``min_freq``."""
    presets = load_resource_yaml("splits", "ptb.yaml")["presets"]
    if name not in presets:
        raise ConfigError(f"unknown preset {name!r}; choose from {', '.join(presets)}")
    return dict(presets[name])


def find_sections(root: str | Path) -> tuple[dict[int, list[Path]], str]:
    """The tree files of each WSJ section under ``root`` and the layout found: the LDC release
    (``parsed/mrg/wsj/NN/wsj_NNxx.mrg``, given at any level), or a flat directory of
    ``wsj_NNxx.mrg`` files or of section files (``NN.mrg``, ``22.trees``)."""
    base = Path(root)
    if not base.is_dir():
        raise InputError("no such treebank directory", str(base))
    for candidate in (base / "parsed" / "mrg" / "wsj", base / "mrg" / "wsj", base / "wsj", base):
        numbered = (
            [d for d in candidate.iterdir() if d.is_dir() and re.fullmatch(r"\d\d", d.name)]
            if candidate.is_dir()
            else []
        )
        if numbered:
            found = {
                int(d.name): sorted(
                    f for f in d.iterdir() if f.is_file() and f.suffix.lower() == ".mrg"
                )
                for d in sorted(numbered)
            }
            return {s: f for s, f in found.items() if f}, f"LDC directories under {candidate}"
    sections: dict[int, list[Path]] = {}
    for f in sorted(base.iterdir()):
        if not f.is_file():
            continue
        match = _LDC_NAME.match(f.name) or (
            _SECTION_NAME.match(f.name) if f.suffix.lower() in TREE_SUFFIXES + ("",) else None
        )
        if match:
            sections.setdefault(int(match.group(1)), []).append(f)
    if not sections:
        raise InputError(
            "no treebank files found: expected parsed/mrg/wsj/NN/wsj_NNxx.mrg, "
            "wsj_NNxx.mrg files or section files such as 22.mrg",
            str(base),
        )
    return sections, f"flat directory {base}"


@dataclass(frozen=True)
class PtbOptions:
    train: str = "02-21"
    valid: str = "22"
    test: str = "23"
    normalization: Normalization = Normalization()
    min_freq: int = 1
    max_vocab: int | None = None
    skip_bad: bool = False
    workers: int = 1
    # sections of a separate parsing test split ``parse`` (UDGN: perplexity on 23-24,
    # parsing on 23); None: parse the test split
    parse_test: str | None = None
    deps: DepSource = DepSource()  # gold dependencies from an existing conversion
    vocab: Vocabulary | None = None  # a given vocabulary instead of the training counts

    def splits(self) -> tuple[str, ...]:
        return SPLITS + (("parse",) if self.parse_test else ())

    def sections(self, split: str) -> str:
        return str(self.parse_test if split == "parse" else getattr(self, split))


def preprocess_ptb(
    treebank: str,
    out: str,
    options: PtbOptions,
    tokenizer: SubwordTokenizer | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write a dataset from a Penn Treebank directory; returns the manifest."""
    check_subword_vocabulary(tokenizer, options.min_freq, options.max_vocab)
    sections, layout = find_sections(treebank)
    if options.deps.active and options.skip_bad:
        raise ConfigError(
            "gold dependencies need every tree (skipped trees would misalign them)",
            setting="skip_bad",
        )
    for split in options.deps.files:
        if split not in options.splits():
            raise ConfigError(
                f"a conversion for the {split} split, which this dataset does not have",
                setting="deps_file",
            )
    plan = {split: parse_sections(options.sections(split)) for split in options.splits()}
    files = _split_files(plan, sections, options, treebank)
    with DatasetWriter(out, force) as writer:
        splits = SplitWriter(writer, tokenizer, vocab=options.vocab)
        checksums = _read_splits(splits, files, options, progress)
        # the file a split was read from, or the treebank when there are several
        splits.check(
            options.splits(), {s: f[0] if len(f) == 1 else treebank for s, f in files.items()}
        )
        warn_overlaps(plan)  # once every tree is read: a refusal comes alone
        vocab: Vocabulary = splits.vocabulary(options.min_freq, options.max_vocab)
        if tokenizer is not None:
            tokenizer.save(writer)
        source = {
            "treebank": str(Path(treebank).resolve()),
            "layout": layout,
            # the files read, a file of two splits (the udgn preset's parse split inside its
            # test split) twice, as the digest covers them: both are the dataset's identity
            # (induce.runs.identity), which counting once would change for every such dataset
            "files": len(checksums),
            "sha256": combined_digest(checksums),
        }
        split_spec = {
            split: {
                "sections": options.sections(split),
                "missing_sections": [f"{s:02d}" for s in wanted if s not in sections],
            }
            for split, wanted in plan.items()
        }
        data = manifest(
            "ptb",
            source,
            split_spec,
            options.normalization,
            vocab,
            splits,
            {
                "skip_bad": options.skip_bad,
                "dependencies": options.deps.describe() if options.deps.active else None,
            },
        )
        writer.finish(data, vocab)
    return data


def _split_files(
    plan: dict[str, tuple[int, ...]],
    sections: dict[int, list[Path]],
    options: PtbOptions,
    treebank: str,
) -> dict[str, list[str]]:
    """The files of each split's sections, in order; a split without any is an error."""
    files = {
        split: [str(f) for s in wanted for f in sections.get(s, [])]
        for split, wanted in plan.items()
    }
    for split, found in files.items():
        if not found:
            have = ", ".join(f"{s:02d}" for s in sorted(sections)) or "none"
            raise InputError(
                f"no files for the {split} split (sections "
                f"{options.sections(split)}; the treebank has {have})",
                treebank,
            )
    return files


def _read_splits(
    splits: SplitWriter,
    files: dict[str, list[str]],
    options: PtbOptions,
    progress: Progress | None,
) -> list[tuple[str, str]]:
    """Read every split's files (in worker processes with ``options.workers``) into
    ``splits``, with their gold dependencies when a conversion is given; the checksums of
    the files read, in order."""
    total = sum(len(f) for f in files.values())
    done = 0
    checksums: list[tuple[str, str]] = []
    for split, paths in files.items():
        gold = _SplitGold(split, options)
        for result in map_files(
            read_tree_file,
            paths,
            (options.normalization, options.skip_bad),
            options.workers,
        ):
            splits.add_file(split, result)
            gold.add(splits, result)
            checksums.extend(result.stats.checksums)
            done += 1
            if progress:
                progress("reading trees", done, total)
        gold.finish()
    return checksums


class _SplitGold:
    """The gold dependencies of one split, written as ``{split}.deps.conllu`` file by file."""

    def __init__(self, split: str, options: PtbOptions) -> None:
        self.split, self.options = split, options
        source = options.deps
        self.per_file = source.folder is not None
        single = source.files.get(split)
        self.single = read_deps(single) if single else None
        self.used = 0
        self.listings: dict[Path, dict[str, Path]] = {}  # folders searched for conversions

    def add(self, splits: SplitWriter, result: FileResult) -> None:
        lines = [line for _, line in result.sentences]
        if self.per_file:
            found = dep_file_for(result.path, self.options.deps, self.listings)
            conversion = read_deps(found)
            if len(conversion) != len(lines):
                raise InputError(
                    f"{len(conversion)} sentences, but {len(lines)} trees in {result.path}",
                    conversion.path,
                )
            trees = aligned(conversion, 0, lines, self.options.normalization, result.path)
        elif self.single is not None:
            trees = aligned(self.single, self.used, lines, self.options.normalization, self.split)
            self.used += len(lines)
        else:
            return
        splits.writer.write_lines(f"{self.split}.deps.conllu", conllu_lines(trees))

    def finish(self) -> None:
        if self.single is not None and self.used != len(self.single):
            raise InputError(
                f"{len(self.single)} sentences, but the {self.split} split has {self.used} "
                "trees: the conversion is not of this split",
                self.single.path,
            )
