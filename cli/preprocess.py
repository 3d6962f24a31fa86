"""``induce preprocess``: corpora into dataset directories (no torch is imported)."""

from __future__ import annotations

from typing import TypeVar

import typer

from induce.cli.common import handle_errors
from induce.cli.preprocess_options import (
    FORCE,
    KEEP_DIGITS,
    MAX_VOCAB,
    MIN_FREQ,
    NO_LOWER,
    NUMBERS,
    OUT,
    SKIP_BAD,
    SPACE_FIRST,
    TOKENIZER,
    TOKENIZER_FILES,
    VOCAB,
    WORKERS,
    fixed_vocab,
    force_hint,
    normalization,
    show_summary,
    subword_tokenizer,
    write_dataset,
)

T = TypeVar("T")

app = typer.Typer(
    help="Turn treebanks and corpora into dataset directories for train, parse and evaluate.",
    no_args_is_help=True,
)


@app.command("ptb")
@handle_errors
@force_hint
def ptb(
    treebank: str = typer.Option(
        ...,
        "--treebank",
        "-t",
        help="LDC Penn Treebank 3 directory (parsed/mrg/wsj/NN/...), "
        "or a flat directory of wsj_NNxx.mrg or NN.mrg files.",
    ),
    out: str = OUT,
    preset: str = typer.Option(
        "parsing",
        "--preset",
        help="parsing (02-21/22/23), udgn (UDGN's code: 00-20/21-22/23-24, parsing on 23, "
        "words seen >= 5 times), structformer (its data_ptb.py: 01-21/22/23), mikolov "
        "(his 00-20/21-22/23-24 and text: $ and # kept, a number and % as N) or pcfg "
        "(Kim et al.'s: 02-21/22/23, a number as one N, the 10,000 most frequent words).",
    ),
    train: str | None = typer.Option(None, "--train", help="Training sections, e.g. 02-21."),
    valid: str | None = typer.Option(None, "--valid", help="Validation sections."),
    test: str | None = typer.Option(None, "--test", help="Test sections."),
    parse_test: str | None = typer.Option(
        None,
        "--parse-test",
        help="Sections of a separate parsing test split `parse` (parse.txt, parse.trees), "
        "when the perplexity test split differs.",
    ),
    deps: str | None = typer.Option(
        None,
        "--deps",
        help="Gold dependencies from an existing conversion, one file per tree file: `next` "
        "(beside the trees, e.g. wsj_2300.mrg.dep) or a folder; written as SPLIT.deps.conllu.",
    ),
    deps_file: list[str] = typer.Option(
        [],
        "--deps-file",
        help="SPLIT=FILE: one conversion file for a whole split (repeatable), e.g. "
        "test=test.stanford.",
    ),
    deps_scheme: str = typer.Option(
        "unknown",
        "--deps-scheme",
        help="The conversion's name, recorded in the manifest (stanford-basic, conll2007...).",
    ),
    tagset: str | None = typer.Option(
        None,
        "--tagset",
        help="Keep words with these tags (ptb_word_tags drops punctuation, $, # and traces; "
        "mikolov_word_tags keeps $ and #), or all [default: the preset's, or ptb_word_tags].",
    ),
    keep_case: bool = NO_LOWER,
    keep_digits: bool = KEEP_DIGITS,
    numbers: str | None = NUMBERS,
    min_freq: int | None = typer.Option(
        None,
        "--min-freq",
        min=1,
        help="Keep training words seen at least this many times [default: the preset's, or 1].",
    ),
    max_vocab: int | None = MAX_VOCAB,
    vocab: str | None = VOCAB,
    tokenizer: str = TOKENIZER,
    tokenizer_files: str | None = TOKENIZER_FILES,
    space_first_word: bool = SPACE_FIRST,
    skip_bad: bool = SKIP_BAD,
    workers: int = WORKERS,
    force: bool = FORCE,
) -> None:
    """Penn Treebank WSJ, prepared as the papers' code does (--preset: the StructFormer and
    UDGN code's, Kim et al.'s for the PCFGs)."""
    from induce.preprocess.golddeps import DepSource
    from induce.preprocess.ptb import PtbOptions, preprocess_ptb, preset_sections

    sections = preset_sections(preset)
    subwords = subword_tokenizer(tokenizer, tokenizer_files, space_first_word, not keep_case)
    fixed = fixed_vocab(vocab, min_freq, max_vocab, subwords)
    own = fixed is None and subwords is None  # a vocabulary of words built here
    # a value given, even empty, is the user's (an empty one is refused as such)
    options = PtbOptions(
        train=_given(train, sections["train"]),
        valid=_given(valid, sections["valid"]),
        test=_given(test, sections["test"]),
        normalization=normalization(
            _given(tagset, str(sections.get("tagset", "ptb_word_tags"))),
            keep_case,
            keep_digits,
            _given(numbers, str(sections.get("numbers", "runs"))),
        ),
        # the preset's vocabulary settings build words' vocabularies: not a given one's, nor
        # a subword tokenizer's (used whole)
        min_freq=_given(min_freq, int(sections.get("min_freq", 1)) if own else 1),
        max_vocab=_given(max_vocab, sections.get("max_vocab") if own else None),
        skip_bad=skip_bad,
        workers=workers,
        parse_test=_given(parse_test, sections.get("parse_test")),
        deps=DepSource(deps, _split_files(deps_file), deps_scheme),
        vocab=fixed,
    )
    write_dataset(
        out, lambda progress: preprocess_ptb(treebank, out, options, subwords, force, progress)
    )


def _given(value: T | None, default: T) -> T:
    """The option's value where one is given, else the preset's ``default``."""
    return default if value is None else value


def _split_files(items: list[str]) -> dict[str, str]:
    from induce.data.errors import ConfigError

    out: dict[str, str] = {}
    for item in items:
        split, sep, path = item.partition("=")
        if not sep or not split or not path:
            raise ConfigError(f"expects SPLIT=FILE, got {item!r}", setting="deps_file")
        if split in out:  # the last would win in silence
            raise ConfigError(
                f"gives the {split} split two conversions ({out[split]}, {path})",
                setting="deps_file",
            )
        out[split] = path
    return out


@app.command("bllip")
@handle_errors
@force_hint
def bllip(
    root: str = typer.Option(
        ..., "--root", "-r", help="BLLIP 1987-89 release (LDC2000T43): 1987/w7_001/..."
    ),
    split: str = typer.Option(..., "--split", "-s", help="xs, sm, md or lg (Hu et al. 2020)."),
    out: str = OUT,
    shared_vocab: bool = typer.Option(
        False,
        "--shared-vocab",
        help="The vocabulary all splits share: LG words seen more than 27 times.",
    ),
    tagset: str = typer.Option(
        "bllip_word_tags", "--tagset", help="Keep words with these tags (with AUX, AUXG), or all."
    ),
    keep_case: bool = NO_LOWER,
    keep_digits: bool = KEEP_DIGITS,
    min_freq: int = MIN_FREQ,
    max_vocab: int | None = MAX_VOCAB,
    tokenizer: str = TOKENIZER,
    tokenizer_files: str | None = TOKENIZER_FILES,
    space_first_word: bool = SPACE_FIRST,
    skip_bad: bool = SKIP_BAD,
    workers: int = WORKERS,
    force: bool = FORCE,
) -> None:
    """BLLIP XS/SM/MD/LG with the shared dev and test sets, streamed."""
    from induce.data.config import choose
    from induce.preprocess.bllip import SPLITS, BllipOptions, preprocess_bllip

    options = BllipOptions(
        split=choose(split.lower(), SPLITS, "split"),
        normalization=normalization(tagset, keep_case, keep_digits),
        min_freq=min_freq,
        max_vocab=max_vocab,
        shared_vocab=shared_vocab,
        skip_bad=skip_bad,
        workers=workers,
    )
    subwords = subword_tokenizer(tokenizer, tokenizer_files, space_first_word, not keep_case)
    write_dataset(
        out, lambda progress: preprocess_bllip(root, out, options, subwords, force, progress)
    )


@app.command("mikolov")
@handle_errors
@force_hint
def mikolov(
    folder: str = typer.Option(
        ..., "--dir", "-d", help="Folder with ptb.train.txt, ptb.valid.txt, ptb.test.txt."
    ),
    out: str = OUT,
    min_freq: int = MIN_FREQ,
    max_vocab: int | None = MAX_VOCAB,
    vocab: str | None = VOCAB,
    force: bool = FORCE,
) -> None:
    """Mikolov's PTB language-modelling text (already normalised): no trees."""
    from induce.preprocess.text import preprocess_mikolov

    fixed = fixed_vocab(vocab, min_freq, max_vocab, None)
    data = preprocess_mikolov(folder, out, min_freq, max_vocab, force, fixed)
    show_summary(data, out)


@app.command("text")
@handle_errors
@force_hint
def text(
    train: list[str] = typer.Option(
        ...,
        "--train",
        help="Training corpus (repeatable): text lines, CoNLL-U or word/tag column files.",
    ),
    out: str = OUT,
    valid: str | None = typer.Option(None, "--valid", help="Validation text."),
    valid_trees: str | None = typer.Option(None, "--valid-trees", help="Validation gold trees."),
    test: str | None = typer.Option(None, "--test", help="Test text."),
    test_trees: str | None = typer.Option(None, "--test-trees", help="Test gold trees."),
    text_format: str = typer.Option(
        "auto",
        "--format",
        help="Format of the text files: auto, lines (one "
        "sentence a line), conllu, or columns (word first, "
        "then its tag; blank line between sentences).",
    ),
    tagset: str = typer.Option(
        "ptb_word_tags",
        "--tagset",
        help="Where tags are known, keep words with these tags "
        "(ud_word_tags for UPOS-only CoNLL-U); or all.",
    ),
    keep_case: bool = NO_LOWER,
    keep_digits: bool = KEEP_DIGITS,
    numbers: str | None = NUMBERS,
    min_freq: int = MIN_FREQ,
    max_vocab: int | None = MAX_VOCAB,
    vocab: str | None = VOCAB,
    tokenizer: str = TOKENIZER,
    tokenizer_files: str | None = TOKENIZER_FILES,
    space_first_word: bool = SPACE_FIRST,
    skip_bad: bool = SKIP_BAD,
    force: bool = FORCE,
) -> None:
    """Any corpus: training text, and validation/test text or gold trees."""
    from induce.data.config import choose
    from induce.preprocess.text import TEXT_FORMATS, TextOptions, preprocess_text

    subwords = subword_tokenizer(tokenizer, tokenizer_files, space_first_word, not keep_case)
    options = TextOptions(
        normalization=normalization(tagset, keep_case, keep_digits, _given(numbers, "runs")),
        min_freq=min_freq,
        max_vocab=max_vocab,
        skip_bad=skip_bad,
        text_format=choose(text_format, TEXT_FORMATS, "text_format"),
        vocab=fixed_vocab(vocab, min_freq, max_vocab, subwords),
    )
    write_dataset(
        out,
        lambda progress: preprocess_text(
            list(train),
            out,
            options,
            valid,
            valid_trees,
            test,
            test_trees,
            subwords,
            force,
            progress,
        ),
    )


@app.command("synthetic")
@handle_errors
@force_hint
def synthetic(
    out: str = OUT,
    sentences: int = typer.Option(20_000, "--sentences", "-n", help="Training sentences."),
    valid: int = typer.Option(1_000, "--valid", help="Validation sentences."),
    test: int = typer.Option(1_000, "--test", help="Test sentences."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same dataset)."),
    grammar: str = typer.Option(
        "english", "--grammar", help="A built-in grammar (english) or a .grammar file."
    ),
    max_words: int = typer.Option(40, "--max-words", help="Longest sentence drawn."),
    force: bool = FORCE,
) -> None:
    """Sentences sampled from a head-marked PCFG, with gold trees and dependencies."""
    from induce.preprocess.synthetic import SyntheticOptions, preprocess_synthetic

    options = SyntheticOptions(
        sentences=sentences,
        valid=valid,
        test=test,
        seed=seed,
        grammar=grammar,
        max_words=max_words,
        normalization=normalization("ptb_word_tags", False, False),
    )
    write_dataset(out, lambda progress: preprocess_synthetic(out, options, force, progress))
