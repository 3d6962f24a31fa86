"""``induce preprocess bllip``: the BLLIP 1987-89 WSJ corpus (LDC2000T43) into a dataset, with
the XS/SM/MD/LG training splits of Hu et al. (2020) and their shared dev and test sets."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from induce.data.config import check_choices, load_resource_yaml
from induce.data.dataset import DatasetWriter
from induce.data.errors import ConfigError, InputError
from induce.data.normalize import Normalization
from induce.data.vocab import Vocabulary, build_vocabulary
from induce.preprocess.common import (
    FileResult,
    Progress,
    SplitWriter,
    check_subword_vocabulary,
    manifest,
    map_files,
    read_tree_file,
)
from induce.preprocess.ptb import parse_sections
from induce.preprocess.subwords import SubwordTokenizer
from induce.preprocess.treetext import combined_digest

Split = Literal["xs", "sm", "md", "lg"]  # the training sets of Hu et al. (2020)
SPLITS: tuple[Split, ...] = get_args(Split)
YEARS = (1987, 1988, 1989)
# (dataset split, its files in reading order, sentences kept per year or None for all)
Plan = list[tuple[str, list[str], int | None]]
_SECTION = re.compile(r"^w(\d)_(\d{3})$", re.IGNORECASE)


def split_definition() -> dict[str, Any]:
    return load_resource_yaml("splits", "bllip.yaml")


def sections_of(spec: Any) -> tuple[int, ...]:
    return parse_sections(spec) if isinstance(spec, str) else tuple(int(s) for s in spec)


def find_sections(root: str | Path) -> dict[tuple[int, int], list[Path]]:
    """``(year, section) -> files`` under a BLLIP root (``1987/w7_001/...``, any case)."""
    base = Path(root)
    if not base.is_dir():
        raise InputError("no such BLLIP directory", str(base))
    found: dict[tuple[int, int], list[Path]] = {}
    for year_dir in sorted(base.iterdir()):
        if not (year_dir.is_dir() and year_dir.name.isdigit() and int(year_dir.name) in YEARS):
            continue
        for section in sorted(year_dir.iterdir()):
            match = _SECTION.match(section.name)
            if section.is_dir() and match:
                files = sorted(f for f in section.iterdir() if f.is_file())
                if files:
                    found[(int(year_dir.name), int(match.group(2)))] = files
    if not found:
        raise InputError(
            "no BLLIP sections found: expected 1987/w7_001/..., 1988/w8_001/..., 1989/w9_010/...",
            str(base),
        )
    return found


@dataclass(frozen=True)
class BllipOptions:
    split: Split = "xs"
    normalization: Normalization = Normalization()
    min_freq: int = 1
    max_vocab: int | None = None
    shared_vocab: bool = False
    skip_bad: bool = False
    workers: int = 1

    def __post_init__(self) -> None:
        check_choices(self)


def preprocess_bllip(
    root: str,
    out: str,
    options: BllipOptions,
    tokenizer: SubwordTokenizer | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write a dataset from a BLLIP release; memory does not grow with the corpus (files are
    streamed; only counts are kept).  Returns the manifest."""
    check_subword_vocabulary(tokenizer, options.min_freq, options.max_vocab)
    if options.shared_vocab and (
        tokenizer is not None or options.min_freq != 1 or options.max_vocab is not None
    ):
        raise ConfigError(
            "fixes the vocabulary (LG words seen more than 27 times): it does not combine "
            "with a minimum frequency, a vocabulary size or a subword tokenizer",
            setting="shared_vocab",
        )
    definition = split_definition()
    sections = find_sections(root)
    plan, missing = _plan(definition, options.split, sections, root)
    with DatasetWriter(out, force) as writer:
        shared = None
        if options.shared_vocab:  # after the writer has checked that ``out`` may be written
            shared = _shared_vocabulary(definition, sections, options, root, progress)
        splits = SplitWriter(writer, tokenizer)
        checksums = _read_plan(splits, plan, options, progress)
        splits.check(("train", "valid", "test"), dict.fromkeys(("train", "valid", "test"), root))
        vocab = (
            shared if shared is not None else splits.vocabulary(options.min_freq, options.max_vocab)
        )
        if tokenizer is not None:
            tokenizer.save(writer)
        source = {
            "root": str(Path(root).resolve()),
            "files": len(checksums),
            "sha256": combined_digest(checksums),
        }
        data = manifest(
            "bllip",
            source,
            _split_spec(definition, options.split, missing),
            options.normalization,
            vocab,
            splits,
            {"shared_vocab": options.shared_vocab, "skip_bad": options.skip_bad},
        )
        writer.finish(data, vocab)
    return data


def _read_plan(
    splits: SplitWriter, plan: Plan, options: BllipOptions, progress: Progress | None
) -> list[tuple[str, str]]:
    """Read the files of every split into ``splits``, at most the split's sentences per
    year; the checksums of the files kept, in order."""
    total = sum(len(files) for _, files, _ in plan)
    done = 0
    checksums: list[tuple[str, str]] = []
    for split, files, per_year in plan:
        budget = per_year
        year = None
        for result in _read(files, options):
            done += 1
            if progress:
                progress(f"reading {split}", done, total)
            this_year = _year_of(result.path)
            if this_year != year:
                year, budget = this_year, per_year
            if budget is not None and budget <= 0:
                continue
            written = splits.add_file(split, result, budget)
            checksums.extend(result.stats.checksums)
            if budget is not None:
                budget -= written
    return checksums


def _read(files: list[str], options: BllipOptions) -> Iterator[FileResult]:
    """The files' trees in order (``#N`` co-indexation cut from the labels)."""
    return map_files(
        read_tree_file, files, (options.normalization, options.skip_bad, True), options.workers
    )


def _plan(
    definition: dict[str, Any],
    split: Split,
    sections: dict[tuple[int, int], list[Path]],
    root: str,
) -> tuple[Plan, dict[str, list[str]]]:
    """``(dataset split, files in reading order, sentences per year or None)`` for each split,
    and the wanted sections the release lacks (``1987/w7_071``) per split."""
    out: Plan = []
    missing: dict[str, list[str]] = {}
    for name in ("train", "valid", "test"):
        spec = definition["train"][split] if name == "train" else definition[name]["sections"]
        wanted = [(year, s) for year in YEARS for s in sections_of(spec.get(year, []))]
        missing[name] = [
            f"{year}/w{year % 10}_{s:03d}" for year, s in wanted if (year, s) not in sections
        ]
        files = [str(f) for key in wanted for f in sections.get(key, [])]
        if not files:
            raise InputError(
                f"no files for the {name} split of BLLIP-{split.upper()} "
                f"(none of its {len(wanted)} sections is in the release)",
                root,
            )
        per_year = None if name == "train" else int(definition[name]["sentences_per_year"])
        out.append((name, files, per_year))
    return out, missing


def _year_of(path: str) -> int:
    return int(Path(path).parent.parent.name)


def _split_spec(
    definition: dict[str, Any], split: Split, missing: dict[str, list[str]]
) -> dict[str, dict[str, Any]]:
    """What the manifest records of the splits: their definition and the sections the
    release lacks."""
    spec = {
        "train": {"split": split, "sections": _describe(definition["train"][split])},
        "valid": dict(definition["valid"]),
        "test": dict(definition["test"]),
    }
    for name, absent in missing.items():
        spec[name]["missing_sections"] = absent
    return spec


def _describe(spec: dict[Any, Any]) -> dict[int, Any]:
    return {
        int(year): (sections if isinstance(sections, str) else list(sections))
        for year, sections in spec.items()
    }


def _shared_vocabulary(
    definition: dict[str, Any],
    sections: dict[tuple[int, int], list[Path]],
    options: BllipOptions,
    root: str,
    progress: Progress | None,
) -> Vocabulary:
    """The vocabulary every BLLIP split shares: LG words seen more than N times."""
    from collections import Counter

    rule = definition["shared_vocab"]
    spec = definition["train"][rule["split"]]
    files = [
        str(f)
        for year in YEARS
        for s in sections_of(spec.get(year, []))
        for f in sections.get((year, s), [])
    ]
    if not files:
        raise InputError("no LG files for the shared vocabulary", root)
    counts: Counter[str] = Counter()
    for done, result in enumerate(_read(files, options), 1):
        counts.update(" ".join(line for _, line in result.sentences if line).split())
        if progress:
            progress("counting LG words", done, len(files))
    vocab = build_vocabulary(counts, int(rule["min_count_exclusive"]) + 1)
    vocab.settings["shared_vocab"] = (
        f"{rule['split']} words seen more than {rule['min_count_exclusive']} times"
    )
    return vocab
